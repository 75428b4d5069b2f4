"""The base of every request body model: unknown fields are errors, and nothing is coerced
(false is not 0, "5" is not 5), so what the OpenAPI schema refuses, the API refuses too."""

import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, model_validator

from svc_core.platform import ids

# Whitespace as every engine involved agrees on it: ECMA's \s (OpenAPI's patterns), the Rust
# regex behind pydantic, and Python's str.strip (strip_whitespace). \s alone differs between them
# on U+0085, U+FEFF and U+001C-U+001F, which is what a fuzzer finds.
SPACE = r"\s\x1c-\x1f\x85\ufeff"
VISIBLE = f"[^{SPACE}]"  # as a pattern: at least one character that is not whitespace
EMAIL = f"^[^@{SPACE}]+@[^@{SPACE}]+\\.[^@{SPACE}]+$"
# C0 and C1 control characters (DEL among them), and the bidirectional marks, embeddings,
# overrides and isolates that make a name read otherwise than it is stored ("Trojan Source").
CONTROLS = r"\x00-\x1f\x7f-\x9f"
BIDI = r"\u200e\u200f\u202a-\u202e\u2066-\u2069"
# What pydantic's strip_whitespace removes (Unicode White_Space; not U+001C-U+001F, unlike str.strip).
STRIPPED = r"\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# Blank: NUL and every character some engine counts as whitespace, spelled out (not \s), so that
# a class of it means the same to ECMA-262 (the document), Python's re and hypothesis.
BLANK = STRIPPED + r"\x00\x1c-\x1f\ufeff"


class RequestBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class PatchBody(RequestBody):
    """A partial update: only the fields sent change, and at least one must be sent."""
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"minProperties": 1})

    @model_validator(mode="after")
    def _at_least_one_field(self) -> "PatchBody":
        if not self.model_fields_set:
            raise ValueError("send at least one of " + ", ".join(type(self).model_fields))
        return self


def _whole_float_to_int(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def whole_number(minimum: int, maximum: int) -> Any:
    """An integer in [minimum, maximum]. JSON Schema counts 238.0 as an integer, so the API does
    too (but still not true or "238"). The bounds come before the validator, or pydantic could
    not put them in the JSON schema."""
    return Annotated[int, Field(ge=minimum, le=maximum), BeforeValidator(_whole_float_to_int)]


def unicode_text(text: str, refused: re.Pattern[str] | None = None) -> str:
    """A field validator: JSON can carry a lone surrogate (\\ud800), which no UTF-8 text can hold;
    with `refused`, the characters it matches are refused too (name_text, description_text)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be Unicode text (it holds a lone surrogate)") from None
    found = refused.search(text) if refused else None
    if found:
        raise ValueError(f"must not hold control or bidirectional formatting characters "
                         f"(U+{ord(found.group()):04X} at position {found.start()})")
    return text


@dataclass(frozen=True)
class _DocumentedPattern:
    """A pattern for the JSON schema alone: the validator that checks the same gives a readable reason."""
    pattern: str

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> dict[str, Any]:
        schema = handler(core_schema)
        schema["pattern"] = self.pattern
        return schema


DocumentedPattern = _DocumentedPattern


_IN_NAMES = f"{CONTROLS}{BIDI}"
_IN_DESCRIPTIONS = r"\x00-\x08\x0b-\x1f\x7f-\x9f" + BIDI  # tab and line feed allowed
_NOT_IN_NAMES = re.compile(f"[{_IN_NAMES}]")
_NOT_IN_DESCRIPTIONS = re.compile(f"[{_IN_DESCRIPTIONS}]")
_VISIBLE = re.compile(VISIBLE)


def _name(text: str) -> str:
    if not _VISIBLE.search(text):
        raise ValueError("must hold at least one visible character")
    return unicode_text(text, _NOT_IN_NAMES)


def _at_most(max_length: int):
    """The length as sent, before any stripping: the schema's maxLength counts the raw string."""
    def check(value: Any) -> Any:
        if isinstance(value, str) and len(value) > max_length:
            raise ValueError(f"must be at most {max_length} characters as sent (surrounding whitespace counts)")
        return value
    return BeforeValidator(check)


def name_text(max_length: int) -> Any:
    """A name or title: at most max_length characters as sent; surrounding whitespace stripped, then at
    least one character, one visible, no control character and no bidirectional formatting
    character. The pattern says the same to OpenAPI clients (whitespace the strip removes is allowed
    around it)."""
    return Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=max_length),
                     AfterValidator(_name), _at_most(max_length), _DocumentedPattern(
                         f"^[{STRIPPED}]*[^{_IN_NAMES}]*[^{SPACE}{_IN_NAMES}][^{_IN_NAMES}]*[{STRIPPED}]*$")]


def description_text(max_length: int) -> Any:
    """A description: at most max_length characters, tab and line feed allowed but no other
    control character and no bidirectional formatting character."""
    return Annotated[str, StringConstraints(max_length=max_length),
                     AfterValidator(lambda text: unicode_text(text, _NOT_IN_DESCRIPTIONS)),
                     _DocumentedPattern(f"^[^{_IN_DESCRIPTIONS}]*$")]


def id_of(prefix: str) -> Any:
    """A body's reference to a record of one kind: its id's form is in the schema (a malformed one
    is a 400); a well-formed id naming nothing in the caller's tenant is a 404 naming the field."""
    return Annotated[str, StringConstraints(pattern=ids.pattern(prefix))]
