"""The base of every request body model: unknown fields are errors, and nothing is coerced
(false is not 0, "5" is not 5), so what the OpenAPI schema refuses, the API refuses too."""

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator


# Whitespace as every engine involved agrees on it: ECMA's \s (OpenAPI's patterns), the Rust
# regex behind pydantic, and Python's str.strip (strip_whitespace). \s alone differs between them
# on U+0085, U+FEFF and U+001C-U+001F, which is what a fuzzer finds.
SPACE = r"\s\x1c-\x1f\x85\ufeff"
VISIBLE = f"[^{SPACE}]"  # as a pattern: at least one character that is not whitespace
EMAIL = f"^[^@{SPACE}]+@[^@{SPACE}]+\\.[^@{SPACE}]+$"


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


def unicode_text(text: str) -> str:
    """A field validator: JSON can carry a lone surrogate (\\ud800), which no UTF-8 text can hold."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be Unicode text (it holds a lone surrogate)") from None
    return text
