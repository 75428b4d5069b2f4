"""The audit log on the local stack over real HTTP: an owner signs up and in from an address of its
own, makes an API key from another, and reads both in the log with those addresses; the export's
link downloads the same entries from the platform's storage."""

from __future__ import annotations

import json

import httpx

from tests.support.tenants_http import new_key, new_owner


def test_an_owner_reads_what_they_did_from_where_and_downloads_the_export(local_stack):
    from svc_core.domain import tenants
    owner = new_owner(local_stack.base_url, "127.0.0.41")
    with httpx.Client(base_url=local_stack.base_url + "/api/v1", timeout=30, headers=owner,
                      transport=httpx.HTTPTransport(local_address="127.0.0.42")) as http:
        me = http.get("/auth/me").json()["data"]
        tenant_id, user_id = me["tenant"]["id"], me["user"]["id"]
        key = new_key(local_stack.base_url, owner, "audited")   # from the default address, 127.0.0.1
        listed = http.get("/audit-log").json()["data"]["items"]
        assert [(e["action"], e["actor"]["id"], e["sourceIp"]) for e in listed] == [
            ("api_key.created", user_id, "127.0.0.1"),
            ("user.signed_in", user_id, "127.0.0.41"),
            ("tenant.created", user_id, "127.0.0.41"),
        ]
        refused = http.post("/audit-log/export")
        assert refused.status_code == 403 and refused.json()["error"]["details"]["feature"] == "audit_log_export"
        tenants.set_plan(tenant_id, "enterprise")
        exported = http.post("/audit-log/export", params={"action": "api_key.created"})
        assert exported.status_code == 200, exported.text
        download = httpx.get(exported.json()["data"]["url"], timeout=30)
        assert download.status_code == 200
        assert [json.loads(line) for line in download.text.splitlines()] == listed[:1]
    assert httpx.get(local_stack.base_url + "/api/v1/audit-log", timeout=30,
                     headers={"Authorization": f"Bearer {key}"}).status_code == 200
