"""Password hashes: argon2id with RFC 9106's low-memory parameters (the library's default), or,
for the test suite only, light ones: 1 MiB, one pass (Settings.password_hashing; a prod stage
refuses them). A hash
carries its parameters, so either verifies the other's.

argon2 (and its cffi bindings) is imported on first use: most requests of the functions that
hold passwords (GET /auth/me, the tenants API) never hash one.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from svc_core.platform.config import settings


def _hasher() -> Any:
    return _hasher_for(settings().password_hashing)


@lru_cache(maxsize=2)
def _hasher_for(profile: str) -> Any:
    from argon2 import PasswordHasher
    # Light: a hash and salt of full length, a thousandth of the work (about 2 ms, against 0.2 s).
    return PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1) if profile == "light" else PasswordHasher()


def hash_password(password: str) -> str:
    return _hasher().hash(password)


def matches(stored_hash: str, password: str) -> bool:
    """Whether the password is the one hashed (False for a hash that is not argon2's too)."""
    from argon2.exceptions import InvalidHashError, VerificationError
    try:
        return _hasher().verify(stored_hash, password)
    except (VerificationError, InvalidHashError):
        return False
