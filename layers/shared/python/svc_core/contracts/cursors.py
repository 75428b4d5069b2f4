"""List cursors: where the previous page ended, and nothing else.

A cursor is a fixed number of base64url digits (A-Z a-z 0-9 - _, most significant first) holding a
position in a list's sort order. It never holds the tenant: a list always reads the caller's own
partition (the tenant comes from the credential), so any position, issued or forged, only moves
within the caller's data. Every string of the documented pattern is therefore a position the list
can continue after (one that names no item reads on from where it would be); anything else is 400
VALIDATION_ERROR naming `cursor`.

- Lists sorted by id (`<prefix>_<ULID>`, newest first): the ULID's 128 bits in 22 digits (the last
  digit's 4 low bits are zero, as in unpadded base64url of 16 bytes).
- Webhook delivery attempts, sorted by "<attempted at, ms>#<event id>#<attempt>": 7 digits for the
  time (42 bits: until the year 2109), the event id's 22 digits as above, 1 digit for the attempt
  number (0 to 63).

The patterns below are what the query parameters document (IdCursor, AttemptCursor in
svc_core/http/params.py) and what decoding checks.
"""

from __future__ import annotations

import re
import string
from typing import NamedTuple

from svc_core.platform import ids
from svc_core.platform.errors import ValidationFailed

_ALPHABET = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"   # base64url's order
_DIGIT = "[A-Za-z0-9_-]"
_ID_DIGITS = 22
_ID_PADDING_BITS = 6 * _ID_DIGITS - ids.ULID_BITS
_ID_PART = f"{_DIGIT}{{{_ID_DIGITS - 1}}}[AQgw]"   # the last digit's low 4 bits zero: A=0, Q=16, g=32, w=48
_TIME_DIGITS = 7

ID_CURSOR = f"^{_ID_PART}$"
ATTEMPT_CURSOR = f"^{_DIGIT}{{{_TIME_DIGITS}}}{_ID_PART}{_DIGIT}$"   # the attempt number: one digit


class AttemptPosition(NamedTuple):
    """Where a webhook delivery attempt sorts: its time, its event, its number."""
    attempted_at_ms: int
    event_id: str
    attempt: int


def id_cursor(item_id: str) -> str:
    """The cursor whose page continues after the item with this id (`<prefix>_<ULID>`)."""
    return _digits(ids.ulid_value(item_id.rsplit("_", 1)[-1]) << _ID_PADDING_BITS, _ID_DIGITS)


def id_after(cursor: str | None, prefix: str) -> str | None:
    """The id (`<prefix>_<ULID>`) a cursor continues after; None for the first page."""
    if cursor is None:
        return None
    _check(cursor, ID_CURSOR)
    return f"{prefix}_{ids.ulid_text(_value(cursor) >> _ID_PADDING_BITS)}"


def attempt_cursor(position: AttemptPosition) -> str:
    return (_digits(position.attempted_at_ms, _TIME_DIGITS) + id_cursor(position.event_id)
            + _digits(position.attempt, 1))


def attempt_after(cursor: str | None, event_prefix: str) -> AttemptPosition | None:
    """The delivery attempt position a cursor continues after; None for the first page."""
    if cursor is None:
        return None
    _check(cursor, ATTEMPT_CURSOR)
    time_part, rest = cursor[:_TIME_DIGITS], cursor[_TIME_DIGITS:]
    event_part, attempt_part = rest[:_ID_DIGITS], rest[_ID_DIGITS:]
    return AttemptPosition(_value(time_part), id_after(event_part, event_prefix), _value(attempt_part))


def _check(cursor: str, pattern: str) -> None:
    # The route's query validation applies the same pattern first; this keeps the rule for every caller.
    if not re.fullmatch(pattern, cursor):
        raise ValidationFailed("The cursor is not valid.", {"fields": [
            {"field": "cursor", "in": "query", "reason": f"String should match pattern '{pattern}'"}]})


def _digits(value: int, width: int) -> str:
    if not 0 <= value < 64 ** width:
        raise ValueError(f"{value} does not fit in {width} cursor digits")
    return "".join(_ALPHABET[(value >> 6 * (width - 1 - i)) & 63] for i in range(width))


def _value(digits: str) -> int:
    value = 0
    for char in digits:
        value = value * 64 + _ALPHABET.index(char)
    return value
