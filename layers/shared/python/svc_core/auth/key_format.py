"""The API key format: svc_<type>_ + 32 base62 random characters + a 6-character checksum.

As GitHub's tokens do, the checksum (CRC32 of everything before it, in base62) lets the
service refuse a mistyped or made-up key without reading the database, and lets secret
scanners recognise a real key.
"""

from __future__ import annotations

import re
import secrets
import zlib

KEY_TYPES = ("sdk", "cli", "ci", "int", "mkt")
RANDOM_LENGTH = 32
CHECKSUM_LENGTH = 6
_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_KEY_RE = re.compile(r"svc_(sdk|cli|ci|int|mkt)_([0-9A-Za-z]{%d})([0-9A-Za-z]{%d})"
                     % (RANDOM_LENGTH, CHECKSUM_LENGTH))


def _base62(number: int, width: int) -> str:
    chars = []
    for _ in range(width):
        number, rest = divmod(number, 62)
        chars.append(_BASE62[rest])
    return "".join(reversed(chars))


def _checksum(body: str) -> str:
    return _base62(zlib.crc32(body.encode()), CHECKSUM_LENGTH)


def generate(key_type: str) -> str:
    if key_type not in KEY_TYPES:
        raise ValueError(f"unknown key type {key_type!r}")
    random_part = "".join(secrets.choice(_BASE62) for _ in range(RANDOM_LENGTH))
    body = f"svc_{key_type}_{random_part}"
    return body + _checksum(body)


def parse_type(value: str) -> str | None:
    """The key's type when the value is well formed and its checksum holds, else None."""
    match = _KEY_RE.fullmatch(value)
    if not match:
        return None
    body = value[: -CHECKSUM_LENGTH]
    if not secrets.compare_digest(_checksum(body), match.group(3)):
        return None
    return match.group(1)


def display_hint(value: str) -> str:
    """What a list may show of a key: its prefix and last four characters."""
    prefix = value[: value.index("_", 4) + 1]
    return f"{prefix}...{value[-4:]}"
