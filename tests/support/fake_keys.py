"""Credential-shaped values made at run time, so no key-looking string is committed."""

from __future__ import annotations

import secrets
import string


def access_key_id() -> str:
    """An AWS-access-key-shaped id (AKIA + 16 upper-case letters and digits) that no account has."""
    return "AKIA" + "".join(secrets.choice(string.ascii_uppercase + string.digits) for _ in range(16))
