"""An e-mail in the operator's brand (svc_core/contracts/brand.py), text and HTML: the invitation's and
the password reset's. The brand's name is the caller's to put in the subject and the text; its logo
goes in the HTML only when it is an https address (a mail client loads nothing else), and a link is
drawn in its accent colour."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from svc_core.adapters import email

if TYPE_CHECKING:
    from svc_core.contracts.brand import Brand


def current_brand() -> Brand:
    from svc_core.contracts import brand as brand_rules  # when an e-mail is written, not at start
    return brand_rules.current()


def link(href: str, label: str, brand: Brand) -> str:
    """An HTML link in the brand's accent colour (both escaped)."""
    return f'<a href="{html.escape(href)}" style="color: {brand.color}">{html.escape(label)}</a>'


def message(to: str, subject: str, text: str, body_html: str, brand: Brand) -> email.Message:
    """The message, its HTML body (already escaped by the caller) under the brand's logo."""
    e = html.escape
    logo = (f'<p><img src="{e(brand.logo_url)}" alt="{e(brand.name)}" height="40"></p>'
            if brand.logo_url and brand.logo_url.startswith("https://") else "")
    return email.Message(to=to, subject=subject, text=text,
                         html=f"<!doctype html><html><body>{logo}{body_html}</body></html>")
