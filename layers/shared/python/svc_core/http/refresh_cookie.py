"""The refresh_token cookie: what a browser keeps of a sign-in (login, refresh, an accepted invitation)."""

from __future__ import annotations

NAME = "refresh_token"


def set_cookie(token: str, max_age: int) -> str:
    """The Set-Cookie value. HttpOnly: no script reads it; SameSite=Strict: no other site sends it;
    scoped to /api/v1/auth, where refresh and logout read it."""
    return f"{NAME}={token}; Max-Age={max_age}; Path=/api/v1/auth; HttpOnly; Secure; SameSite=Strict"
