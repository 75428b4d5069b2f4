"""Pages the service serves itself (the command-line login's approval page).

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


def load_page(directory: Path) -> Page:
    """page.html with {{STYLE}} and {{SCRIPT}} replaced by page.css and page.js."""
    style = (directory / "page.css").read_text()
    script = (directory / "page.js").read_text()
    html = (directory / "page.html").read_text().replace("{{STYLE}}", style).replace("{{SCRIPT}}", script)
    policy = "; ".join([
        "default-src 'none'",
        f"script-src {_csp_hash(script)}",
        f"style-src {_csp_hash(style)}",
        "connect-src 'self'",
        "img-src 'self'",
        "form-action 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ])
    return Page(html=html, headers={
        "Content-Security-Policy": policy,
        "X-Frame-Options": "DENY",            # for browsers that predate frame-ancestors
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    })
