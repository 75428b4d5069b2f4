"""Who is calling: built only from verified JWT claims, or from an API key's own record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Principal:
    subject: str              # key_... for API keys, usr_... for users
    tenant_id: str
    scopes: frozenset[str]
    credential: str           # "api_key" or "user"
    token_id: str             # the JWT's jti (an API key: its key id)
    claims: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @property
    def session_id(self) -> str | None:
        return self.claims.get("sid")

    @property
    def key_generation(self) -> int | None:
        """An API key's value: which of the key's values it is (1, then one more per rotation)."""
        return self.claims.get("gen") if self.credential == "api_key" else None

    @property
    def rate_limit_key(self) -> str:
        """Requests are counted per credential: one API key, or one sign-in session of a user
        (whose revocation mark on that counter ends the session's access tokens at once)."""
        return self.session_id or self.subject

    @classmethod
    def from_claims(cls, claims: dict[str, Any]) -> Principal:
        return cls(
            subject=claims["sub"],
            tenant_id=claims["tid"],
            scopes=frozenset(claims["scopes"]),
            credential=claims.get("cred", "user"),
            token_id=claims["jti"],
            claims=claims,
        )
