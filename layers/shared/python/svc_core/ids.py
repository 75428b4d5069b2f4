"""Identifiers: a short type prefix and a ULID (time-sortable, 80 random bits).

Sorting ids sorts by creation time, so "newest first" is a reverse key order in DynamoDB.
"""

from __future__ import annotations

import os
import re
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_ULID_RE = r"[0-9A-HJKMNP-TV-Z]{26}"


def new_ulid(now_ms: int | None = None) -> str:
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    value = (ms << 80) | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        chars.append(_CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_id(prefix: str) -> str:
    return f"{prefix}_{new_ulid()}"


def pattern(prefix: str) -> str:
    """The id of one kind of record, as a regular expression (a schema's pattern)."""
    return f"^{prefix}_{_ULID_RE}$"


def is_id(value: str, prefix: str) -> bool:
    return re.fullmatch(pattern(prefix), value) is not None
