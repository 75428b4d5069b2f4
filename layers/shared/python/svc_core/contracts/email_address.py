"""E-mail addresses: the ones the service registers, and how it compares them.

Registration takes what the HTML Living Standard calls a valid e-mail address (what a browser's
<input type="email"> accepts): an ASCII local part, @, and domain labels of letters, digits and
hyphens (1 to 63 characters, no hyphen first or last); an internationalised domain is written in
its A-label form (xn--…). At most 254 characters in all (RFC 5321's path limit, less the brackets).
VALID and MAX_LENGTH are both the OpenAPI schema's pattern and maxLength and the server's check,
so the document and the API cannot disagree. Being ASCII, such an address cannot mix scripts (a
Cyrillic "о" among Latin letters: a look-alike of another address).

Two spellings are one address when their normalised forms are equal: Unicode NFKC (full-width
and other compatibility forms become the plain letters), case-folded (which also folds ß to ss,
beyond lower-casing), trimmed. The form the user typed is kept for display; only the normalised
form names the account (the users table's e-mail claim, the sign-in throttles). Sign-in takes any
text, so accounts registered before the HTML rule, with addresses it refuses, still sign in.
"""

from __future__ import annotations

import unicodedata

_LABEL = "[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
# The HTML Living Standard's expression, anchored; the same in ECMA-262 (the document's patterns),
# Rust's regex (pydantic's) and Python's re: ASCII classes, no set operations, no look-around.
VALID = f"^[a-zA-Z0-9.!#$%&'*+/=?^_`{{|}}~-]+@{_LABEL}(?:\\.{_LABEL})*$"
MAX_LENGTH = 254


def normalise(address: str) -> str:
    """The form addresses are compared in: NFKC, case-folded, trimmed."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", address).casefold()).strip()
