"""Identifiers: a short type prefix and a ULID (time-sortable, 80 random bits).

Sorting ids sorts by creation time, so "newest first" is a reverse key order in DynamoDB.
"""

from __future__ import annotations

import os
import re
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_DIGIT = "[0-9A-HJKMNP-TV-Z]"
# 26 digits are 130 bits: a ULID's first is at most 7. The one form of a ULID, for the document's
# patterns and the server's checks alike (a schema-valid id is never refused as "not a ULID").
ULID_PATTERN = f"[0-7]{_DIGIT}{{25}}"
_ULID_RE = re.compile(ULID_PATTERN)
ULID_BITS = 128


def new_ulid(now_ms: int | None = None) -> str:
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    return ulid_text((ms << 80) | int.from_bytes(os.urandom(10), "big"))


def ulid_text(value: int) -> str:
    """A 128-bit number as a ULID: 26 Crockford base-32 digits, most significant first."""
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def ulid_value(text: str) -> int:
    """The 128-bit number a ULID (26 upper-case Crockford digits, the first 0 to 7) stands for."""
    if not _ULID_RE.fullmatch(text):
        raise ValueError(f"not a ULID: {text!r}")
    value = 0
    for char in text:
        value = value * 32 + _CROCKFORD.index(char)
    return value


def new_id(prefix: str) -> str:
    return f"{prefix}_{new_ulid()}"


def pattern(prefix: str) -> str:
    """The id of one kind of record, as a regular expression (a schema's pattern)."""
    return f"^{prefix}_{ULID_PATTERN}$"


def is_id(value: str, prefix: str) -> bool:
    return re.fullmatch(pattern(prefix), value) is not None
