"""The command-line device login's request and response models (svc_core/domain/models says why
they live apart)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints

from svc_core.domain.fields.device_login import LOGIN_ID_EXAMPLE, LOGIN_ID_PATTERN
from svc_core.domain.models.request_body import RequestBody

LoginId = Annotated[str, StringConstraints(pattern=LOGIN_ID_PATTERN), Field(examples=[LOGIN_ID_EXAMPLE])]
_STATE_EXAMPLE = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
State = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class StartBody(RequestBody):
    state: State = Field(description="32 random bytes, hex", examples=[_STATE_EXAMPLE])
    codeChallenge: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{43}$")] = Field(
        description="BASE64URL(SHA256(codeVerifier)), no padding",
        examples=["E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"])  # RFC 7636's example
    codeChallengeMethod: Literal["S256"]
    cliVersion: Annotated[str, StringConstraints(min_length=1, max_length=32, pattern=r"^[0-9A-Za-z.+_-]+$")] = Field(
        examples=["1.0.0"])
    platform: Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[0-9A-Za-z._ /()-]+$")] = Field(
        examples=["linux x86_64"])


class DecisionBody(RequestBody):
    loginId: LoginId
    state: State = Field(examples=[_STATE_EXAMPLE])


class TokenBody(RequestBody):
    loginId: LoginId
    codeVerifier: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._~-]{43,128}$")] = Field(
        description="The PKCE verifier (RFC 7636: 43 to 128 characters)",
        examples=["dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"])  # RFC 7636's example


class Started(BaseModel):
    loginId: str
    authUrl: str
    verificationCode: str = Field(description="XXXX-XXXX; the user compares it with the browser's")
    expiresIn: int
    interval: int = Field(description="seconds between status polls")


class Status(BaseModel):
    loginId: str
    status: Literal["pending", "approved", "expired", "consumed"] = Field(
        description="the spec's values; a denied login reads expired, with reason denied")
    reason: Literal["timed_out", "denied"] | None = Field(
        None, description="with status expired only: the 10 minutes passed (timed_out) or the user denied it")


class LoginInfo(BaseModel):
    loginId: str
    verificationCode: str
    cliVersion: str
    platform: str
    status: str = Field(description="pending, approved, expired or consumed")
    reason: Literal["timed_out", "denied"] | None = Field(None, description="with status expired only")
    created_at: str
    expires_at: str


class CliToken(BaseModel):
    token: str = Field(description="A new svc_cli_ API key for the user and tenant (shown once)")
    keyId: str
    user: dict[str, Any]
    tenant: dict[str, Any]
