"""Tenant secrets' request and response models (svc_core/domain/models says why they live apart)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from svc_core.domain.fields.secrets import MAX_DESCRIPTION, MAX_VALUE_CHARS, NAME_PATTERN
from svc_core.domain.models.request_body import BLANK, DocumentedPattern, PatchBody, RequestBody, description_text, unicode_text

# A value needs one character that is neither whitespace nor NUL: an empty, blank or zeroed value is
# a mistake (an unfilled template, a zeroed buffer), never a secret worth sealing. A search, as
# JSON Schema's `pattern` is; the document carries this very pattern.
VALUE_PATTERN = f"[^{BLANK}]"
_FILLED = re.compile(VALUE_PATTERN)


def _value(text: str) -> str:
    unicode_text(text)
    if not _FILLED.search(text):
        raise ValueError("is blank: it needs a character other than whitespace and NUL")
    return text


Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
Value = Annotated[str, StringConstraints(min_length=1, max_length=MAX_VALUE_CHARS), AfterValidator(_value),
                  DocumentedPattern(VALUE_PATTERN)]
Description = description_text(MAX_DESCRIPTION)

NAME_HELP = "1-128 characters: a letter or _, then letters, digits, _ . -; unique in the tenant, whatever the case"
VALUE_HELP = (f"1 to {MAX_VALUE_CHARS:,} characters (Unicode code points), at least one of them neither "
              "whitespace nor NUL; never answered")
DESCRIPTION_HELP = "at most 500 characters"


class SecretCreate(RequestBody):
    name: Name = Field(description=NAME_HELP, examples=["OPENAI_API_KEY"])
    value: Value = Field(description=VALUE_HELP)
    description: Description | None = Field(None, description=DESCRIPTION_HELP)


class SecretUpdate(PatchBody):
    """A new value makes a new version; description may be set to null. The name does not change."""
    value: Value = Field(None, description=VALUE_HELP)  # may be left out, not set to null  # type: ignore[assignment]
    description: Description | None = Field(None, description=DESCRIPTION_HELP, examples=["The model provider's key"])



class Secret(BaseModel):
    id: str = Field(examples=["sec_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    name: str
    description: str | None
    version: int = Field(description="1 at creation; each new value adds 1")
    created_at: str = Field(description="ISO 8601 UTC")
    updated_at: str = Field(description="ISO 8601 UTC")


class SecretPage(BaseModel):
    items: list[Secret]
    nextCursor: str | None


class SecretDeleted(BaseModel):
    id: str
    deleted: bool
