"""HTML pages the service serves itself (the command-line login's approval page, the API reference);
not to be confused with a list's pages (svc_core/domain/paging.py).

A page is one HTML file with its style and script inlined at import. Its Content-Security-Policy
allows exactly those two by their SHA-256 hashes and nothing else but calls to this origin: no
other script, style, frame, form target or base URL, and no site may frame it (clickjacking).
"""

from __future__ import annotations

import base64
import hashlib
import html
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from svc_core.contracts.brand import Brand


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


def _origin(url: str | None) -> str | None:
    return "/".join(url.split("/")[:3]) if url else None


@dataclass(frozen=True)
class BrandedPage:
    """page.html with {{STYLE}} and {{SCRIPT}} replaced by page.css and page.js, and the operator's brand
    (svc_core.contracts.brand, every value checked there and escaped here): {{NAME}}, {{BRAND}} (logo and
    name), {{FAVICON}}; the accent as --accent and --accent-ink before page.css. Images may come from this
    origin and the logo's and favicon's."""
    html: str
    style: str
    script: str

    def page(self, brand: Brand | None = None) -> Page:
        from svc_core.contracts import brand as brand_rules  # on the first page drawn, not at start
        return _render(self, brand or brand_rules.current())


@lru_cache(maxsize=8)
def _render(template: BrandedPage, brand: Brand) -> Page:
    e = html.escape
    style = f":root {{ --accent: {brand.color}; --accent-ink: {brand.on_color}; }}\n{template.style}"
    logo = f'<img src="{e(brand.logo_url)}" alt="" width="32" height="32">' if brand.logo_url else ""
    favicon = e(brand.favicon_url or "data:,")   # no address: an empty icon, not a 404 for /favicon.ico
    page = (template.html.replace("{{STYLE}}", style).replace("{{SCRIPT}}", template.script)
            .replace("{{NAME}}", e(brand.name)).replace("{{FAVICON}}", f'<link rel="icon" href="{favicon}">')
            .replace("{{BRAND}}", f'<p class="brand">{logo}<span>{e(brand.name)}</span></p>'))
    icon_source = _origin(brand.favicon_url) or "data:"
    images = " ".join(dict.fromkeys(o for o in ("'self'", _origin(brand.logo_url), icon_source) if o))
    return Page(html=page, headers=_headers(script_src=_csp_hash(template.script), style_src=_csp_hash(style),
                                            img_src=images))


def load_page(directory: Path) -> BrandedPage:
    """The page of a directory (page.html, page.css, page.js), read once; .page() draws it with the brand."""
    return BrandedPage(html=(directory / "page.html").read_text(), style=(directory / "page.css").read_text(),
                       script=(directory / "page.js").read_text())


def renderer_page(html_file: Path) -> Page:
    """A page drawn by a script the service serves from its own origin (the API reference's Redoc).
    Such a renderer writes its styles at run time (CSS-in-JS: style elements and attributes no hash
    can name), builds its search worker from a blob and draws icons as data: images, so those are
    allowed; scripts still come from this origin alone, and the page is public and acts for no one."""
    return Page(html=html_file.read_text(), headers=_headers(
        script_src="'self'", style_src="'self' 'unsafe-inline'", worker_src="blob:",
        img_src="'self' data:") | {"Cache-Control": "public, max-age=300"})
