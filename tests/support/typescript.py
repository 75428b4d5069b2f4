"""The TypeScript client's package, for the tests that run its tools (its own node_modules: `npm ci` in
clients/typescript, done by scripts/bootstrap_node.sh)."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler
from pathlib import Path

from devstack.loopback_server import LoopbackHTTPServer

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clients" / "typescript"


def npx(tool: str, *args: str) -> list[str]:
    """The command line of one of the package's own tools (never a download)."""
    return [str(PACKAGE / "node_modules" / ".bin" / tool), *args]


@contextmanager
def bundle_site(root: Path, page: str, host: str) -> Iterator[str]:
    """A page and the package's bundle (built by its own esbuild, `client.js` beside the page), served
    from http://HOST:PORT; yields the site's address. Which host decides whether the page is on the
    API's site (127.0.0.1, as the local stack is) or on another (localhost)."""
    subprocess.run(npx("esbuild", "src/index.ts", "--bundle", "--format=esm", "--platform=browser",
                       "--target=es2022", f"--outfile={root / 'client.js'}"), cwd=PACKAGE, check=True,
                   capture_output=True)
    (root / "index.html").write_text(page)
    handler = partial(SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None
    server = LoopbackHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://{host}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
