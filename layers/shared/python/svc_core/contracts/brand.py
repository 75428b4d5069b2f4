"""The operator's brand: product name, logo, favicon and accent colour (template.yaml's Brand*
parameters), as the API's own pages and the invitation e-mail show them.

Each value is checked here before it is used: a colour is hex and nothing else, a logo an https URL
or the path of a file shipped with the dashboard, a name plain text of at most 60 characters; a value
that fails is replaced by the default, so no setting can carry CSS or HTML into a page. The accent is
made readable on the page's background (WCAG AA, 4.5:1) by the same rule as the dashboard's
dashboard/src/brand.ts: both are tested on the same cases (dashboard/test/brand-cases.json).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

DEFAULT_NAME = "svc"
DEFAULT_LOGO = "brand/logo.svg"
DEFAULT_FAVICON = "brand/favicon.svg"
DEFAULT_COLOR = "#0b5cad"
BACKGROUND = "#ffffff"
AA = 4.5
NAME_MAX = 60

_COLOR = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
# A file of the dashboard's build (dashboard/public/): no scheme, no leading slash, no `..`.
_FILE = re.compile(r"(?:[A-Za-z0-9_-][A-Za-z0-9._-]*/)*[A-Za-z0-9_-][A-Za-z0-9._-]*\.(?:svg|png|webp|jpe?g|gif|ico)")
# A file's address: no quote, bracket, space or backslash, no empty path segment (template.yaml finds
# the host between the first "//" and the next "/").
_URL = re.compile(r"https://[A-Za-z0-9.-]+(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~%+-]+)+(?:\?[A-Za-z0-9._~%+=&-]*)?")


def color(value: str | None) -> str | None:
    """#rgb or #rrggbb as #rrggbb in lower case; None for anything else."""
    if not value or not _COLOR.fullmatch(value):
        return None
    digits = value[1:].lower()
    return "#" + ("".join(c * 2 for c in digits) if len(digits) == 3 else digits)


def is_url(value: str) -> bool:
    return bool(_URL.fullmatch(value))


def is_file(value: str) -> bool:
    return bool(_FILE.fullmatch(value))


def image(value: str | None, urls: bool = True) -> str | None:
    """An https URL (when urls) or a shipped file's path, as given; None for anything else."""
    if value and ((urls and is_url(value)) or is_file(value)):
        return value
    return None


def name(value: str | None) -> str | None:
    """Plain text: trimmed, 1 to 60 characters, no control character and no angle bracket."""
    text = (value or "").strip()
    if not 0 < len(text) <= NAME_MAX or any(c in "<>" or unicodedata.category(c).startswith("C") for c in text):
        return None
    return text


def image_source(logo: str) -> str:
    """What the dashboard's img-src must allow for the logo: its host for a URL, else 'self'. The
    template computes the same from BrandLogo (a host without a scheme matches https on an https page)."""
    return logo.split("//")[1].split("/")[0] if is_url(logo) else "'self'"


# ---- contrast (WCAG 2) -----------------------------------------------------------------------------

def _channels(hex_color: str) -> tuple[int, int, int]:
    return int(hex_color[1:3], 16), int(hex_color[3:5], 16), int(hex_color[5:7], 16)


def _hex(channels: tuple[int, int, int]) -> str:
    return "#" + "".join(f"{c:02x}" for c in channels)


def luminance(hex_color: str) -> float:
    def linear(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4
    r, g, b = _channels(hex_color)
    return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def on_accent(accent: str) -> str:
    """Black or white, whichever reads better on the accent."""
    return "#000000" if contrast(accent, "#000000") > contrast(accent, "#ffffff") else "#ffffff"


def readable_accent(accent: str, background: str = BACKGROUND) -> str:
    """The accent, darkened (on a light background) or lightened (on a dark one) a twentieth of the
    way at a time until it stands 4.5:1 against the background. Integer steps, as brand.ts takes them."""
    toward_black = contrast(background, "#000000") >= contrast(background, "#ffffff")
    r, g, b = _channels(accent)
    while contrast(_hex((r, g, b)), background) < AA:
        r, g, b = (c * 19 // 20 if toward_black else 255 - (255 - c) * 19 // 20 for c in (r, g, b))
    return _hex((r, g, b))


# ---- the configured brand ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Brand:
    name: str
    color: str            # readable on BACKGROUND
    on_color: str         # text on the colour
    logo_url: str | None  # absolute, or None where there is no address to give
    favicon_url: str | None


def resolve(name_value: str | None, logo: str | None, favicon: str | None, color_value: str | None,
            files_url: str = "") -> Brand:
    """The brand from the settings' raw values; a shipped file's address is files_url (where the
    dashboard is served) and its path."""
    files = files_url.rstrip("/") if re.fullmatch(r"https?://[A-Za-z0-9.:\[\]-]+(?:/[A-Za-z0-9._~%+/-]*)?",
                                                  files_url or "") else ""

    def address(value: str | None) -> str | None:
        if value and is_url(value):
            return value
        return f"{files}/{value}" if value and files else None

    accent = readable_accent(color(color_value) or DEFAULT_COLOR)
    return Brand(name=name(name_value) or DEFAULT_NAME, color=accent, on_color=on_accent(accent),
                 logo_url=address(image(logo) or DEFAULT_LOGO),
                 favicon_url=address(image(favicon, urls=False) or DEFAULT_FAVICON))


def current() -> Brand:
    from svc_core.platform.config import settings
    s = settings()
    return resolve(s.brand_name, s.brand_logo, s.brand_favicon, s.brand_color, s.brand_files_url)
