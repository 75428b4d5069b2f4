"""Webhooks' fields: what "*" subscribes to, the description's length, a rotation's overlap,
and the secret's rule (WHSEC_PATTERN and PLAIN_SECRET_PATTERN: the document's anyOf and the API's
check alike; secret_problem says why a text breaks it)."""

from __future__ import annotations

import base64
import binascii
import re

ALL_EVENTS = "*"
SECRET_PREFIX = "whsec_"
SECRET_MIN_BYTES, SECRET_MAX_BYTES = 24, 64
PLAIN_SECRET_MIN, PLAIN_SECRET_MAX = 32, 256     # characters of a caller's plain (non-whsec_) secret
MAX_DESCRIPTION = 500
DEFAULT_OVERLAP_SECONDS = 86400
MAX_OVERLAP_SECONDS = 7 * 86400
_BASE64 = "[A-Za-z0-9+/]"


def _base64_of(min_bytes: int, max_bytes: int) -> str:
    """Standard base64, padded, of min_bytes to max_bytes: 4 characters per 3 bytes, and the last
    1 or 2 bytes as 2 characters and "==" or 3 and "="."""
    forms = []
    for rest, tail in ((0, ""), (1, f"{_BASE64}{{2}}=="), (2, f"{_BASE64}{{3}}=")):
        groups = [n // 3 for n in range(min_bytes, max_bytes + 1) if n % 3 == rest]
        forms.append(f"(?:{_BASE64}{{4}}){{{min(groups)},{max(groups)}}}{tail}")
    return "(?:" + "|".join(forms) + ")"


def _printable_but(chars: str) -> str:
    """A class of printable ASCII (! to ~) without these characters, in \\x escapes (the same in
    ECMA-262 and Python)."""
    ranges, start = [], 0x21
    for code in sorted({ord(c) for c in chars}) + [0x7F]:
        if start < code:
            ranges.append(f"\\x{start:02x}" if start == code - 1 else f"\\x{start:02x}-\\x{code - 1:02x}")
        start = code + 1
    return "[" + "".join(ranges) + "]"


def _not_starting_with(prefix: str) -> str:
    """Printable ASCII that does not start with the prefix in any case: the prefix's first i
    characters, then one that is not its next (no lookahead needed)."""
    def one(c: str) -> str:
        return f"[\\x{ord(c.upper()):02x}\\x{ord(c.lower()):02x}]" if c.isalpha() else f"\\x{ord(c):02x}"
    forms = ["".join(map(one, prefix[:i])) + _printable_but(prefix[i].upper() + prefix[i].lower())
             for i in range(len(prefix))]
    return "^(?:" + "|".join(forms) + ")[!-~]*$"


WHSEC_PATTERN = f"^{SECRET_PREFIX}{_base64_of(SECRET_MIN_BYTES, SECRET_MAX_BYTES)}$"
PLAIN_SECRET_PATTERN = _not_starting_with(SECRET_PREFIX)   # with 32 to 256 characters
_WHSEC, _PLAIN = re.compile(WHSEC_PATTERN), re.compile(PLAIN_SECRET_PATTERN)


def is_secret(text: str) -> bool:
    """The rule, as the document's anyOf says it (fullmatch: no newline after the end)."""
    return _WHSEC.fullmatch(text) is not None or (
        PLAIN_SECRET_MIN <= len(text) <= PLAIN_SECRET_MAX and _PLAIN.fullmatch(text) is not None)


def secret_problem(text: str) -> str | None:
    """Why this is neither a Standard Webhooks secret of 24 to 64 bytes nor a plain secret of 32 to
    256 printable ASCII characters without whitespace, or None. is_secret() decides; the rest
    says why."""
    if is_secret(text):
        return None
    return _why_not_a_secret(text) or (f"must be {SECRET_PREFIX} followed by standard base64 (A-Z a-z 0-9 + /, "
                                       "= padding)")


def _why_not_a_secret(text: str) -> str | None:
    if text[:len(SECRET_PREFIX)].lower() == SECRET_PREFIX and not text.startswith(SECRET_PREFIX):
        return f"must start with {SECRET_PREFIX} in lower case"
    if not text.startswith(SECRET_PREFIX):
        if not PLAIN_SECRET_MIN <= len(text) <= PLAIN_SECRET_MAX:
            return (f"must be {PLAIN_SECRET_MIN} to {PLAIN_SECRET_MAX} characters (it has {len(text)}), "
                    f"or {SECRET_PREFIX} + standard base64 of {SECRET_MIN_BYTES} to {SECRET_MAX_BYTES} bytes")
        if not re.fullmatch("[!-~]+", text):
            return "must be printable ASCII characters without spaces or other whitespace"
        return None
    try:
        raw = base64.b64decode(text[len(SECRET_PREFIX):], validate=True)
    except (binascii.Error, ValueError):
        return f"must be {SECRET_PREFIX} followed by standard base64 (A-Z a-z 0-9 + /, = padding)"
    if not SECRET_MIN_BYTES <= len(raw) <= SECRET_MAX_BYTES:
        return (f"must encode {SECRET_MIN_BYTES} to {SECRET_MAX_BYTES} bytes after {SECRET_PREFIX} "
                f"(it encodes {len(raw)})")
    return None
