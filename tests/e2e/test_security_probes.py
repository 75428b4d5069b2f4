"""The attacker's probes, replayed against the local stack over real HTTP, so they stay fixed:
escalation through key management, an emergency key rotation, the lowest events cursor, token
forgery (alg none, HS256 keyed with the public key, the high-s twin of a real signature, a swapped
payload), cross-tenant reads, account enumeration through registration, the tenant-wide rate
ceiling, and input the service must refuse (control and bidi characters in names, blank secret
values, webhook ports out of range). The sign-in throttles and the per-address limits have their own
file (test_sign_in_throttles_e2e.py)."""

from __future__ import annotations

import base64
import os
import secrets

import httpx
import pytest

from tests.support.auth_helpers import active_public_pem, high_s, hs256, payload_of, unsigned, with_payload

PASSWORD = "a long enough probe password"


def _client(stack) -> httpx.Client:
    return httpx.Client(base_url=stack.base_url + "/api/v1", timeout=30)


def _owner(http: httpx.Client, stack) -> tuple[dict[str, str], str]:
    """A new tenant through registration (from an address of its own), its owner's token."""
    email = f"probe-{secrets.token_hex(5)}@example.com"
    address = f"127.0.{secrets.randbelow(200)}.{secrets.randbelow(200) + 20}"
    with httpx.Client(base_url=stack.base_url + "/api/v1", timeout=30,
                      transport=httpx.HTTPTransport(local_address=address)) as own:
        assert own.post("/auth/register", json={"email": email, "password": PASSWORD, "name": "P"}).status_code == 201
        login = own.post("/auth/login", json={"email": email, "password": PASSWORD})
    assert login.status_code == 200, login.text
    data = login.json()["data"]
    return {"Authorization": f"Bearer {data['accessToken']}"}, data["tenant"]["id"]


def _key(http: httpx.Client, auth: dict[str, str], scopes: list[str] | None = None, key_type: str = "sdk") -> dict:
    body = {"name": "probe", "type": key_type, "environment": "Development"}
    if scopes is not None:
        body["scopes"] = scopes
    made = http.post("/api-keys", headers=auth, json=body)
    assert made.status_code == 201, made.text
    return made.json()["data"]


def _bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


@pytest.mark.parametrize("operation", ["rotate", "revoke"])
def test_a_keys_write_only_key_can_neither_take_nor_revoke_a_stronger_key(local_stack, operation):
    with _client(local_stack) as http:
        owner, _ = _owner(http, local_stack)
        strong = _key(http, owner)                       # every scope of the owner
        weak = _key(http, owner, ["keys:write"])
        target = f"/api-keys/{strong['id']}"
        answer = (http.post(f"{target}/rotate", headers=_bearer(weak["key"]), json={"overlapSeconds": 0})
                  if operation == "rotate" else http.delete(target, headers=_bearer(weak["key"])))
        assert answer.status_code == 403, answer.text
        assert "secrets:write" in answer.json()["error"]["details"]["scopes"]
        assert "data" not in answer.json()  # no new value handed out
        # The stronger key is untouched: it still works, with every scope.
        still = http.get("/secrets", headers=_bearer(strong["key"]))
        assert still.status_code == 200
        assert http.get(target, headers=owner).json()["data"]["status"] == "active"


def test_an_emergency_rotation_ends_every_earlier_value_of_the_key(local_stack):
    # Two rotations with an hour of overlap, then one with none: values 1 to 3 are refused at once
    # (each was used before, so the functions that served it had it cached).
    with _client(local_stack) as http:
        owner, _ = _owner(http, local_stack)
        key = _key(http, owner, ["projects:read"])
        chain = [key["key"]]
        for overlap in (3600, 3600, 0):
            assert [http.get("/projects", headers=_bearer(v)).status_code for v in chain] == [200] * len(chain)
            rotated = http.post(f"/api-keys/{key['id']}/rotate", headers=owner, json={"overlapSeconds": overlap})
            assert rotated.status_code == 200, rotated.text
            chain.append(rotated.json()["data"]["key"])
        assert [http.get("/projects", headers=_bearer(v)).status_code for v in chain] == [401, 401, 401, 200]


def test_the_lowest_events_cursor_is_a_position_not_a_server_error(local_stack):
    with _client(local_stack) as http:
        owner, _ = _owner(http, local_stack)
        for query in ({}, {"since": "2026-01-01T00:00:00Z"}):
            answer = http.get("/events", headers=owner, params={"cursor": "A" * 22, **query})
            assert answer.status_code == 200, answer.text
            assert answer.json()["data"] == {"items": [], "nextCursor": None}


def test_forged_and_malleated_tokens_are_refused(local_stack):
    with _client(local_stack) as http:
        owner, tenant_id = _owner(http, local_stack)
        token = owner["Authorization"].split()[1]
        assert http.get("/projects", headers=owner).status_code == 200
        claims = payload_of(token)
        other_tenant = {**claims, "tid": "ten_01J00000000000000000000000", "scopes": ["projects:read"]}
        forgeries = {
            "alg none": unsigned({"alg": "none", "typ": "at+jwt"}, claims),
            "HS256 keyed with the public key": hs256({"alg": "HS256", "typ": "at+jwt"}, claims, active_public_pem()),
            "high-s twin": high_s(token),
            "payload swapped": with_payload(token, other_tenant),
        }
        for name, forged in forgeries.items():
            answer = http.get("/projects", headers=_bearer(forged))
            assert answer.status_code == 401, (name, answer.text)
            assert answer.json()["error"]["code"] == "UNAUTHORIZED"


def test_another_tenants_objects_answer_as_missing(local_stack):
    with _client(local_stack) as http:
        mine, _ = _owner(http, local_stack)
        theirs, _ = _owner(http, local_stack)
        project = http.post("/projects", headers=theirs, json={"name": "Theirs", "language": "python"}).json()["data"]
        key = _key(http, theirs)
        for method, path in [("GET", f"/projects/{project['id']}"), ("PATCH", f"/projects/{project['id']}"),
                             ("DELETE", f"/projects/{project['id']}"), ("GET", f"/api-keys/{key['id']}"),
                             ("POST", f"/api-keys/{key['id']}/rotate"), ("DELETE", f"/api-keys/{key['id']}")]:
            body = {"description": "mine now"} if method == "PATCH" else ({} if method == "POST" else None)
            answer = http.request(method, path, headers=mine, json=body)
            assert answer.status_code == 404, (method, path, answer.text)
        assert http.get(f"/projects/{project['id']}", headers=theirs).status_code == 200
        assert http.get(f"/api-keys/{key['id']}", headers=theirs).json()["data"]["status"] == "active"


def test_registration_answers_the_same_for_a_known_and_an_unknown_address(local_stack):
    email = f"known-{secrets.token_hex(5)}@example.com"
    with httpx.Client(base_url=local_stack.base_url + "/api/v1", timeout=30,
                      transport=httpx.HTTPTransport(local_address="127.0.9.9")) as http:
        first = http.post("/auth/register", json={"email": email, "password": PASSWORD, "name": "A"})
        again = http.post("/auth/register", json={"email": email.upper(), "password": "another password 123",
                                                  "name": "B"})
        fresh = http.post("/auth/register", json={"email": "fresh-" + email, "password": PASSWORD, "name": "C"})
    assert first.status_code == again.status_code == fresh.status_code == 201
    shape = lambda r: sorted(r.json()["data"]) if isinstance(r.json()["data"], dict) else r.json()["data"]  # noqa: E731
    assert shape(again) == shape(fresh)
    # The look-alike address (a Cyrillic "о") is refused, not made a second account: registration
    # takes only HTML's valid e-mail addresses, which are ASCII.
    with httpx.Client(base_url=local_stack.base_url + "/api/v1", timeout=30,
                      transport=httpx.HTTPTransport(local_address="127.0.9.10")) as http:
        twin = http.post("/auth/register", json={"email": email.replace("o", "\u043e", 1), "password": PASSWORD,
                                                 "name": "Twin"})
    assert twin.status_code == 400 and twin.json()["error"]["code"] == "VALIDATION_ERROR"


def test_the_tenant_ceiling_binds_across_its_keys_and_spares_other_tenants(local_stack, monkeypatch):
    import time
    left = 60 - time.time() % 60
    if left < 20:  # the counts below must all fall in one 60 s window
        time.sleep(left + 0.5)
    with _client(local_stack) as http:
        owner, _ = _owner(http, local_stack)
        other, _ = _owner(http, local_stack)
        keys = [_key(http, owner, ["projects:read"])["key"] for _ in range(6)]  # 6 requests of the tenant
        # Now a small per-key limit: 4, so the tenant's ceiling is 5 x 4 = 20, of which 6 are used.
        monkeypatch.setenv("RATE_LIMIT_PER_WINDOW", "4")
        local_stack._forget_caches()
        try:
            answers = [http.get("/projects", headers=_bearer(key)) for key in keys for _ in range(4)]
            other_answer = http.get("/projects", headers=other)
        finally:
            monkeypatch.delenv("RATE_LIMIT_PER_WINDOW")
            local_stack._forget_caches()
    passed = [a for a in answers if a.status_code == 200]
    refused = [a for a in answers if a.status_code == 429]
    assert len(passed) == 14 and len(refused) == 10
    assert {a.json()["error"]["details"]["counter"] for a in refused} == {"tenant"}
    assert refused[0].headers["X-RateLimit-Limit"] == "20" and "Retry-After" in refused[0].headers
    assert other_answer.status_code == 200


def test_names_secrets_and_webhook_ports_an_attacker_would_abuse_are_refused(local_stack):
    with _client(local_stack) as http:
        owner, _ = _owner(http, local_stack)
        for name in ("invoice\u202efdp.exe", "nul\x00name", "bell\x07"):
            answer = http.post("/projects", headers=owner, json={"name": name, "language": "python"})
            assert answer.status_code == 400 and answer.json()["error"]["code"] == "VALIDATION_ERROR", name
        blank_secret = http.post("/secrets", headers=owner, json={"name": "EMPTYISH", "value": " \t\u3000\n" * 8})
        assert blank_secret.status_code == 400
        secret = "whsec_" + base64.b64encode(os.urandom(24)).decode()
        for url in ("https://example.com:0/hook", "https://example.com:70000/hook"):
            answer = http.post("/webhooks", headers=owner, json={"url": url, "events": ["project.created"],
                                                                 "secret": secret})
            assert answer.status_code == 400, (url, answer.text)
        assert http.get("/projects", headers=owner).json()["data"]["items"] == []
