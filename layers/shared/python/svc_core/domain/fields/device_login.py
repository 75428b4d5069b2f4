"""Device login's fields: the login id's pattern and an example of it."""

from __future__ import annotations

# A login id (secrets.token_urlsafe(32)): the status and info routes take it as a query parameter.
LOGIN_ID_PATTERN = r"^[A-Za-z0-9_-]{43}$"
LOGIN_ID_EXAMPLE = "x4Qy0oR3c8mVvT2bZL9aK1nE5wJ7hU6sD0fG3pM8qYk"
