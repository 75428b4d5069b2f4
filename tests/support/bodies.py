"""Request bodies that have broken JSON parsers (or the functions behind them), with the answer the
API gives each: the integration tests hand them to a handler, the end-to-end tests send them over
HTTP. None may ever be answered with a 5xx."""

from __future__ import annotations

import codecs
from typing import NamedTuple

ONE_PROJECT = '{"name": "Apollo", "description": "Moon shot"}'


class Body(NamedTuple):
    id: str
    raw: bytes
    status: int
    code: str
    reason: str  # a part of details.fields[0].reason
    field: str = "body"  # details.fields[0].field


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


PATHOLOGICAL = [
    Body("deep-arrays", _utf8("[" * 10_000 + "]" * 10_000), 400, "VALIDATION_ERROR", "more than 64 deep"),
    Body("deep-objects", _utf8('{"a":' * 10_000 + "1" + "}" * 10_000), 400, "VALIDATION_ERROR", "more than 64 deep"),
    Body("deep-in-a-field", _utf8('{"name": ' + "[" * 10_000 + "]" * 10_000 + "}"), 400, "VALIDATION_ERROR",
         "more than 64 deep"),
    Body("deep-unclosed", _utf8("{" * 100_000), 400, "VALIDATION_ERROR", "more than 64 deep"),
    Body("65-deep", _utf8('{"name": "A", "x": ' + "[" * 64 + "]" * 64 + "}"), 400, "VALIDATION_ERROR",
         "more than 64 deep"),
    Body("1e400", _utf8('{"name": "A", "x": 1e400}'), 400, "VALIDATION_ERROR", "must be finite"),
    Body("minus-1e400", _utf8('{"name": "A", "x": -1e400}'), 400, "VALIDATION_ERROR", "must be finite"),
    Body("nan", _utf8('{"name": "A", "x": NaN}'), 400, "VALIDATION_ERROR", "not a JSON number"),
    Body("infinity", _utf8('{"name": "A", "x": -Infinity}'), 400, "VALIDATION_ERROR", "not a JSON number"),
    Body("huge-integer", _utf8('{"name": "A", "x": ' + "9" * 5_000 + "}"), 400, "VALIDATION_ERROR", "64 bits"),
    Body("integer-2-63", _utf8('{"name": "A", "x": %d}' % 2 ** 63), 400, "VALIDATION_ERROR", "64 bits"),
    Body("duplicate-key", _utf8('{"name": "A", "name": "B"}'), 400, "VALIDATION_ERROR", 'the key "name"'),
    Body("nested-duplicate-key", _utf8('{"name": "A", "x": {"k": 1, "k": 1}}'), 400, "VALIDATION_ERROR",
         'the key "k"'),
    Body("escaped-lone-surrogate", _utf8('{"name": "\\ud800"}'), 400, "VALIDATION_ERROR", "lone surrogate", "name"),
    Body("escaped-low-surrogate-first", _utf8('{"name": "A", "x": [{"y": "\\udc00\\ud800"}]}'), 400,
         "VALIDATION_ERROR", "lone surrogate", "x.0.y"),
    Body("escaped-surrogate-in-a-key", _utf8('{"name": "A", "x": {"\\ud800": 1}}'), 400, "VALIDATION_ERROR",
         "a key must be Unicode text", "x"),
    Body("surrogate-bytes", b'{"name": "\xed\xa0\x80"}', 400, "VALIDATION_ERROR", "must be UTF-8"),
    Body("invalid-utf8", b'{"name": "\xff\xfe\xc3"}', 400, "VALIDATION_ERROR", "must be UTF-8"),
    Body("latin-1", '{"name": "Café"}'.encode("latin-1"), 400, "VALIDATION_ERROR", "must be UTF-8"),
    Body("escaped-nul", _utf8('{"name": "A\\u0000B"}'), 400, "VALIDATION_ERROR", "NUL", "name"),
    Body("escaped-nul-in-a-key", _utf8('{"name": "A", "x\\u0000": 1}'), 400, "VALIDATION_ERROR", "a key must not",
         "body"),
    Body("raw-nul", b'{"name": "A\x00B"}', 400, "VALIDATION_ERROR", "not valid JSON"),
    Body("utf16-le-bom", codecs.BOM_UTF16_LE + ONE_PROJECT.encode("utf-16-le"), 400, "VALIDATION_ERROR",
         "must be UTF-8"),
    Body("utf16-be-bom", codecs.BOM_UTF16_BE + ONE_PROJECT.encode("utf-16-be"), 400, "VALIDATION_ERROR",
         "must be UTF-8"),
    Body("utf16-le", ONE_PROJECT.encode("utf-16-le"), 400, "VALIDATION_ERROR", "must be UTF-8"),
    Body("utf16-be", ONE_PROJECT.encode("utf-16-be"), 400, "VALIDATION_ERROR", "must be UTF-8"),
    Body("utf32-bom", ONE_PROJECT.encode("utf-32"), 400, "VALIDATION_ERROR", "must be UTF-8"),
    Body("utf32-be", ONE_PROJECT.encode("utf-32-be"), 400, "VALIDATION_ERROR", "must be UTF-8"),
    Body("empty", b"", 400, "VALIDATION_ERROR", "a JSON body is required"),
    Body("whitespace", b"  \r\n\t ", 400, "VALIDATION_ERROR", "not valid JSON"),
    Body("null", b"null", 400, "VALIDATION_ERROR", "a JSON body is required"),  # null is no body
    Body("array", b'[{"name": "A"}]', 400, "VALIDATION_ERROR", "must be a JSON object"),
    Body("string", b'"Apollo"', 400, "VALIDATION_ERROR", "must be a JSON object"),
    Body("number", b"42", 400, "VALIDATION_ERROR", "must be a JSON object"),
    Body("true", b"true", 400, "VALIDATION_ERROR", "must be a JSON object"),
    Body("trailing-data", b'{"name": "A"} {"name": "B"}', 400, "VALIDATION_ERROR", "not valid JSON"),
    Body("quote-storm", _utf8('"\\"' * 50_000), 400, "VALIDATION_ERROR", "not valid JSON"),
    Body("over-the-size-limit", _utf8('{"name": "A", "x": "' + "x" * 300_000 + '"}'), 413, "PAYLOAD_TOO_LARGE", ""),
]

# Accepted: a UTF-8 byte order mark is ignored (RFC 8259 lets a parser do so).
UTF8_BOM = codecs.BOM_UTF8 + _utf8(ONE_PROJECT)
