"""The base of every request body model: unknown fields are errors, and nothing is coerced
(false is not 0, "5" is not 5), so what the OpenAPI schema refuses, the API refuses too."""

from pydantic import BaseModel, ConfigDict


class RequestBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
