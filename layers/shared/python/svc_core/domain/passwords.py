"""Password hashes: argon2id with the library's current recommended parameters.

argon2 (and its cffi bindings) is imported on first use: most requests of the functions that
hold passwords (GET /auth/me, the tenants API) never hash one.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def _hasher() -> Any:
    from argon2 import PasswordHasher
    return PasswordHasher()


def hash_password(password: str) -> str:
    return _hasher().hash(password)


def matches(stored_hash: str, password: str) -> bool:
    """Whether the password is the one hashed (False for a hash that is not argon2's too)."""
    from argon2.exceptions import InvalidHashError, VerificationError
    try:
        return _hasher().verify(stored_hash, password)
    except (VerificationError, InvalidHashError):
        return False
