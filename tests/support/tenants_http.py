"""New tenants and their API keys on a running stack, made over HTTP as a user would."""

from __future__ import annotations

import secrets

import httpx

PASSWORD = "a long enough test password"


def new_owner(base_url: str, address: str) -> dict[str, str]:
    """A new tenant through registration from `address` (a loopback address of its own, so the
    per-address limits of the sign-in routes are its own); its owner's Authorization header."""
    email = f"owner-{secrets.token_hex(5)}@example.com"
    with httpx.Client(base_url=base_url + "/api/v1", timeout=30,
                      transport=httpx.HTTPTransport(local_address=address)) as http:
        registered = http.post("/auth/register", json={"email": email, "password": PASSWORD, "name": "Owner"})
        assert registered.status_code == 201, registered.text
        login = http.post("/auth/login", json={"email": email, "password": PASSWORD})
    assert login.status_code == 200, login.text
    return {"Authorization": f"Bearer {login.json()['data']['accessToken']}"}


def new_key(base_url: str, owner: dict[str, str], name: str = "test") -> str:
    """An API key of the owner's tenant with every scope of its owner."""
    made = httpx.post(base_url + "/api/v1/api-keys", headers=owner, timeout=30,
                      json={"name": name, "type": "sdk", "environment": "Development"})
    assert made.status_code == 201, made.text
    return made.json()["data"]["key"]
