"""HTML pages the service serves itself (the command-line login's approval page, the API reference);
not to be confused with a list's pages (svc_core/domain/paging.py).

A page is one HTML file with its style and script inlined at import. Its Content-Security-Policy
allows exactly those two by their SHA-256 hashes and nothing else but calls to this origin: no
other script, style, frame, form target or base URL, and no site may frame it (clickjacking).
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@dataclass(frozen=True)
class Page:
    html: str
    headers: dict[str, str]


def _headers(**sources: str) -> dict[str, str]:
    """The page's headers: its sources (script_src="'self'"...) over a policy that allows nothing else."""
    directives = {"default-src": "'none'", "connect-src": "'self'", "img-src": "'self'", "form-action": "'none'",
                  "base-uri": "'none'", "frame-ancestors": "'none'"}
    directives |= {name.replace("_", "-"): value for name, value in sources.items()}
    return {
        "Content-Security-Policy": "; ".join(f"{name} {value}" for name, value in directives.items()),
        "X-Frame-Options": "DENY",            # for browsers that predate frame-ancestors
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }


def load_page(directory: Path) -> Page:
    """page.html with {{STYLE}} and {{SCRIPT}} replaced by page.css and page.js."""
    style = (directory / "page.css").read_text()
    script = (directory / "page.js").read_text()
    html = (directory / "page.html").read_text().replace("{{STYLE}}", style).replace("{{SCRIPT}}", script)
    return Page(html=html, headers=_headers(script_src=_csp_hash(script), style_src=_csp_hash(style)))


def renderer_page(html_file: Path) -> Page:
    """A page drawn by a script the service serves from its own origin (the API reference's Redoc).
    Such a renderer writes its styles at run time (CSS-in-JS: style elements and attributes no hash
    can name), builds its search worker from a blob and draws icons as data: images, so those are
    allowed; scripts still come from this origin alone, and the page is public and acts for no one."""
    return Page(html=html_file.read_text(), headers=_headers(
        script_src="'self'", style_src="'self' 'unsafe-inline'", worker_src="blob:",
        img_src="'self' data:") | {"Cache-Control": "public, max-age=300"})
