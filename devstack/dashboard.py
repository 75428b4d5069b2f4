"""The dashboard (dashboard/, a Vite + Preact app) as the local stack serves it: built when its
sources changed, its files served from 127.0.0.1 with the headers CloudFront gives them in a
deployment (template.yaml's DashboardHeadersPolicy: the same Content-Security-Policy, HSTS, ...),
and `config.json` naming this stack's API and the brand (template.yaml's Brand* parameters, given to
`python -m devstack` as --brand-name, --brand-logo, --brand-favicon and --brand-color).

The page on http://127.0.0.1:PORT and the API on http://127.0.0.1:3000 are one site (the port does
not count), so the refresh cookie (SameSite=Strict) survives a reload, as it does on a deployment
whose API has a custom domain on the dashboard's site.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import mimetypes
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from devstack.loopback_server import LoopbackHTTPServer

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "layers" / "shared" / "python") not in sys.path:  # the brand's rule is the layer's (ops/ imports this)
    sys.path.insert(0, str(ROOT / "layers" / "shared" / "python"))
from svc_core.contracts import brand  # noqa: E402

APP = ROOT / "dashboard"
DIST = APP / "dist"
DEFAULT_PORT = 5173
_STAMP = ".sources.sha256"
# What the build reads: a change in any of these makes a new build.
_SOURCES = (APP / "src", APP / "public", APP / "index.html", APP / "vite.config.ts", APP / "package-lock.json",
            ROOT / "clients" / "typescript" / "src")


def content_security_policy(api_origin: str, logo_source: str = "'self'") -> str:
    """The page's policy: its own scripts and styles only (the build has no inline ones), images from
    itself and the logo's host, and calls to the API's origin. The template's CloudFront policy is this
    one with the deployment's API origin and BrandLogo's source (svc_core.contracts.brand.image_source)."""
    return "; ".join((
        "default-src 'self'", "script-src 'self'", "style-src 'self'", f"img-src 'self' data: {logo_source}",
        f"connect-src 'self' {api_origin}", "font-src 'self'", "object-src 'none'", "base-uri 'none'",
        "form-action 'self'", "frame-ancestors 'none'",
    ))


SECURITY_HEADERS = {
    "Strict-Transport-Security": "max-age=63072000; includeSubDomains",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}


def brand_config(name: str | None = None, logo: str | None = None, favicon: str | None = None,
                 color: str | None = None) -> dict[str, str]:
    """config.json's brand, as ops/dashboard.py writes it from the stack's parameters: each value as
    given (the page checks them again), the template's default where none is given. A value the template's
    pattern would refuse is refused here too (ValueError), as a deploy would refuse it."""
    checks = {"name": (name, brand.name, brand.DEFAULT_NAME), "logo": (logo, brand.image, brand.DEFAULT_LOGO),
              "favicon": (favicon, lambda v: brand.image(v, urls=False), brand.DEFAULT_FAVICON),
              "color": (color, brand.color, brand.DEFAULT_COLOR)}
    config = {}
    for key, (given, check, default) in checks.items():
        if given is not None and check(given) is None:
            raise ValueError(f"the brand's {key} {given!r} is refused: see docs/dashboard.md (Brand)")
        config[key] = default if given is None else given
    return config


def sources_digest() -> str:
    digest = hashlib.sha256()
    for source in _SOURCES:
        files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
        for path in files:
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def build(log=print) -> Path:
    """dashboard/dist, built (`npm run build`: type check, then Vite) unless it is of these sources
    already; one build at a time (test processes may ask together). Needs dashboard/node_modules
    (`npm ci` in dashboard/, done by scripts/bootstrap_node.sh)."""
    if not (APP / "node_modules" / ".bin" / "vite").exists():
        raise RuntimeError("dashboard/node_modules is missing: run scripts/bootstrap_node.sh (npm ci in dashboard/)")
    with open(APP / "node_modules" / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        want = sources_digest()
        stamp = DIST / _STAMP
        if stamp.exists() and stamp.read_text() == want and (DIST / "index.html").exists():
            return DIST
        log("building the dashboard (npm run build in dashboard/)")
        done = subprocess.run(["npm", "run", "--silent", "build"], cwd=APP, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the dashboard's build failed:\n{done.stdout}\n{done.stderr}")
        stamp.write_text(want)
    return DIST


class DashboardServer:
    """The built files on http://127.0.0.1:PORT (0: any free port), `config.json` pointing at the API.
    The port is taken at once (so the API can allow the origin before it starts); `start` serves."""

    def __init__(self, port: int = DEFAULT_PORT, root: Path = DIST, host: str = "127.0.0.1",
                 brand: dict[str, str] | None = None):
        self.root = root.resolve()
        self.api_base_url = ""
        self.brand = brand_config(**(brand or {}))
        dashboard = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                self._answer(body=True)

            def do_HEAD(self) -> None:
                self._answer(body=False)

            def _answer(self, body: bool) -> None:
                path = self.path.split("?", 1)[0].split("#", 1)[0]
                if path == "/config.json":
                    config = json.dumps({"apiBaseUrl": dashboard.api_base_url, "brand": dashboard.brand}).encode()
                    return self._send(200, config, "application/json", "no-store", body)
                served = dashboard.root
                target = (served / path.lstrip("/")).resolve() if path != "/" else served / "index.html"
                if not target.is_relative_to(served) or not target.is_file():
                    return self._send(404, b"not found", "text/plain; charset=utf-8", "no-store", body)
                kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
                if kind.startswith("text/") or kind == "application/javascript":
                    kind += "; charset=utf-8"
                # The hashed assets never change; index.html is asked again each time (it names them).
                cache = "public, max-age=31536000, immutable" if "/assets/" in path else "no-cache"
                self._send(200, target.read_bytes(), kind, cache, body)

            def _send(self, status: int, data: bytes, kind: str, cache: str, body: bool) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", cache)
                for name, value in dashboard.headers().items():
                    self.send_header(name, value)
                self.end_headers()
                if body:
                    self.wfile.write(data)

        self.server = LoopbackHTTPServer((host, port), Handler)
        self.host = host
        self._serving = False
        self.port = self.server.server_address[1]

    def headers(self) -> dict[str, str]:
        logo_source = brand.image_source(self.brand["logo"])
        return {**SECURITY_HEADERS, "Content-Security-Policy": content_security_policy(self.api_base_url, logo_source)}

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, api_base_url: str) -> DashboardServer:
        self.api_base_url = api_base_url
        self._serving = True
        threading.Thread(target=self.server.serve_forever, daemon=True, name="dashboard").start()
        return self

    def stop(self) -> None:
        if self._serving:  # shutdown() waits for serve_forever, forever if it never ran
            self.server.shutdown()
        self.server.server_close()
