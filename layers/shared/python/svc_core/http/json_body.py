"""The rules a JSON request body meets before any handler (or Powertools) reads it.

A body is UTF-8 (RFC 8259): a UTF-8 byte order mark is ignored (as the RFC allows), UTF-16 and
UTF-32 (with or without a BOM), bytes that are not UTF-8 and a base64 body that is not base64
are refused. Objects and arrays nest at most MAX_DEPTH deep, which is checked before the
(recursive) parser runs. Numbers are finite (1e400, NaN and Infinity are refused) and integers fit
64 bits; an object names each key once (parsers disagree on which of two wins, so neither does);
strings hold Unicode text: no unpaired surrogate (\\ud800) and no NUL (\\u0000), whatever field
they are in (the refusal names it). Every refusal is 400 VALIDATION_ERROR, never a failure of the
function.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import itertools
import json
import math
import re
from typing import Any

from svc_core.platform.errors import ValidationFailed

MAX_DEPTH = 64
_INT_LIMIT = 2 ** 63

# A JSON string, or an unterminated one running to the end (the text is then invalid anyway, and
# matching it in one pass keeps the scan linear: no quote is tried as a start more than once).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_SURROGATE = re.compile("[\ud800-\udfff]")


def refuse(reason: str, field: str = "body") -> ValidationFailed:
    return ValidationFailed("The request is not valid.", {"fields": [{"field": field, "in": "body",
                                                                       "reason": reason}]})


def text_of(body: str, base64_encoded: bool) -> str:
    """The body's text, from the proxy event's body (base64 when API Gateway took it for binary)."""
    if base64_encoded:
        try:
            raw = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            raise refuse("the body is marked base64-encoded but is not valid base64") from None
    else:
        try:
            raw = body.encode("utf-8")
        except UnicodeEncodeError:  # a str holding an unpaired surrogate: never UTF-8 on the wire
            raise refuse("the body must be UTF-8 (RFC 8259)") from None
    encoding = json.detect_encoding(raw)
    if encoding not in ("utf-8", "utf-8-sig"):
        raise refuse(f"the body must be UTF-8 (RFC 8259), not {encoding.upper()}")
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8):]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise refuse(f"the body must be UTF-8 (RFC 8259); byte {exc.start} is not") from None


def depth_of(text: str) -> int:
    """How deep the text's arrays and objects nest, without parsing it (no recursion)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)


def parse(text: str) -> Any:
    """The JSON value of the text, under the rules above."""
    if depth_of(text) > MAX_DEPTH:
        raise refuse(f"the body nests arrays and objects more than {MAX_DEPTH} deep")
    try:
        value = json.loads(text, object_pairs_hook=_object, parse_float=_float, parse_int=_int,
                           parse_constant=_constant)
    except RecursionError:  # depth_of prevents it; kept so that no body can ever fail the function
        raise refuse(f"the body nests arrays and objects more than {MAX_DEPTH} deep") from None
    except ValueError:
        raise refuse("the body is not valid JSON") from None
    if "\\u" in text:  # only an escape can put a surrogate or a NUL in a string of valid UTF-8 text
        _check_strings(value)
    return value


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        duplicate = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise refuse(f"the key {json.dumps(duplicate[:64])} appears more than once in an object")
    return value


def _float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise refuse(f"the number {token[:40]} is out of range (numbers must be finite)")
    return value


def _int(token: str) -> int:
    # Checked by length first: converting thousands of digits is slow (and refused by Python itself).
    if len(token.lstrip("-")) > 19 or not -_INT_LIMIT <= int(token) < _INT_LIMIT:
        raise refuse(f"the integer {token[:40]} is out of range (integers must fit in 64 bits)")
    return int(token)


def _constant(token: str) -> Any:
    raise refuse(f"{token} is not a JSON number")


def _check_strings(value: Any) -> None:
    """Refuses a string (or key) that holds a NUL or an unpaired surrogate, naming its field as
    validation errors do (config.model, scopes.0; a bad key names the object it is in)."""
    pending: list[tuple[str, Any]] = [("body", value)]
    while pending:  # a loop, not a recursion (the depth is bounded anyway)
        path, item = pending.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                _check_string(key, path, "a key ")
                pending.append((key if path == "body" else f"{path}.{key}", child))
        elif isinstance(item, list):
            pending.extend((str(index) if path == "body" else f"{path}.{index}", child)
                           for index, child in enumerate(item))
        elif isinstance(item, str):
            _check_string(item, path)


def _check_string(text: str, field: str, what: str = "") -> None:
    if "\x00" in text:
        raise refuse(f"{what}must not hold a NUL character (\\u0000)", field)
    if _SURROGATE.search(text):
        raise refuse(f"{what}must be Unicode text (it holds a lone surrogate, such as \\ud800)", field)
