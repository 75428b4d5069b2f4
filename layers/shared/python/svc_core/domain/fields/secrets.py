"""Tenant secrets' fields: the name's pattern, the value's and the description's lengths."""

from __future__ import annotations

NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$"
# Characters (code points, as the schema's maxLength counts them): at most 64 KiB of UTF-8 sealed,
# and even written all in \uXXXX\uXXXX escapes (12 bytes a character) a body stays under 256 KiB.
MAX_VALUE_CHARS = 16384
MAX_DESCRIPTION = 500
