"""The event log, redelivery and replay on the local stack, over real HTTP: projects created while
a receiver is down past its retries are in the event log, and a replay since the outage delivers
each of them once, signed (checked with the Standard Webhooks reference library); a second replay
delivers nothing more; a redelivery sends one again with the same webhook-id."""

from __future__ import annotations

import secrets
from typing import Any

import httpx
import pytest

from svc_core.platform import timeutil
from svc_core.platform.config import settings
from tests.support.waiting import waited
from tests.support.webhook_receiver import Receiver, new_secret

ZEROS = "0,0,0,0,0,0,0"   # 8 attempts with no wait between them


@pytest.fixture
def tenant(local_stack) -> dict[str, Any]:
    """A tenant of its own (the event log and the replays read only its events), with an all-scopes key."""
    from svc_core.auth.scopes import ALL_SCOPES
    from svc_core.domain.api_keys import issue_key
    from svc_core.domain.tenants import create_tenant_with_owner
    made = create_tenant_with_owner(tenant_name="Replays", email=f"replay-{secrets.token_hex(4)}@example.com",
                                    password=secrets.token_urlsafe(18), user_name="Replay Tester")
    key = issue_key(tenant_id=made["tenant"]["id"], created_by=made["user"]["id"], name="replays",
                    key_type="sdk", environment="Development", scopes=sorted(ALL_SCOPES))
    return {"id": made["tenant"]["id"], "key": key["key"]}


@pytest.fixture
def compressed_retries(monkeypatch):
    monkeypatch.setenv("WEBHOOK_RETRY_SCHEDULE", ZEROS)  # what the WebhookRetrySchedule parameter sets
    settings.cache_clear()
    yield
    monkeypatch.undo()
    settings.cache_clear()



def test_a_replay_since_an_outage_delivers_every_missed_event_once(local_stack, tenant, compressed_retries):
    up = {"value": True}
    receiver = Receiver(new_secret(), lambda n, d: (204, {}) if up["value"] else (503, {}))
    http = httpx.Client(base_url=local_stack.base_url, timeout=10, headers={"Authorization": f"Bearer {tenant['key']}"})
    try:
        webhook = http.post("/api/v1/webhooks", json={"url": receiver.url, "events": ["project.created"],
                                                      "secret": receiver.secret}).json()["data"]
        hook = f"/api/v1/webhooks/{webhook['id']}"

        up["value"] = False
        outage = timeutil.iso(timeutil.now())
        projects = [http.post("/api/v1/projects", json={"name": f"During the outage {i}", "language": "python"}
                              ).json()["data"] for i in range(3)]
        # Every attempt spent: each event's last attempt is in the deliveries as failed.
        failed = waited(lambda: [a for a in http.get(f"{hook}/deliveries", params={"limit": 100}).json()["data"]["items"]
                                 if a["outcome"] == "failed"], lambda items: len(items) == 3)
        assert len(failed) == 3 and all(a["attempt"] == 8 for a in failed)
        assert all(d.verify_error is None for d in receiver.deliveries)   # signed, though refused

        # The event log has them, filtered and paged.
        logged = http.get("/api/v1/events", params={"type": "project.created", "since": outage}).json()["data"]
        assert [e["data"]["id"] for e in logged["items"]] == [p["id"] for p in reversed(projects)]
        first_page = http.get("/api/v1/events", params={"since": outage, "limit": 2}).json()["data"]
        second_page = http.get("/api/v1/events", params={"since": outage, "limit": 2,
                                                         "cursor": first_page["nextCursor"]}).json()["data"]
        assert first_page["items"] + second_page["items"] == logged["items"] and second_page["nextCursor"] is None
        by_object = http.get("/api/v1/events", params={"objectId": projects[1]["id"]}).json()["data"]["items"]
        assert [e["type"] for e in by_object] == ["project.created"]
        assert http.get(f"/api/v1/events/{by_object[0]['id']}").json()["data"] == by_object[0]
        assert {e["type"] for e in http.get("/api/v1/events").json()["data"]["items"]} >= {
            "tenant.created", "user.created", "project.created"}

        up["value"] = True
        receiver.deliveries.clear()
        replay = http.post(f"{hook}/replay", json={"since": outage})
        assert replay.status_code == 202, replay.text
        progress = waited(lambda: http.get(f"{hook}/replays/{replay.json()['data']['id']}").json()["data"],
                          lambda p: p["status"] == "completed" and p["delivered"] + p["failed"] == p["queued"])
        assert (progress["matched"], progress["queued"], progress["delivered"], progress["failed"]) == (3, 3, 3, 0)
        assert all(d.verify_error is None for d in receiver.deliveries)
        assert sorted(d.headers["webhook-id"] for d in receiver.deliveries) == sorted(e["id"] for e in logged["items"])
        assert {d.payload["id"]: d.payload for d in receiver.deliveries} == {e["id"]: e for e in logged["items"]}

        # Replayed again: everything was sent by the first replay, nothing is queued twice.
        again = http.post(f"{hook}/replay", json={"since": outage}).json()["data"]
        again = waited(lambda: http.get(f"{hook}/replays/{again['id']}").json()["data"],
                       lambda p: p["status"] == "completed")
        assert (again["matched"], again["queued"], again["skipped"]) == (3, 0, 3)
        assert len(receiver.deliveries) == 3

        # One event sent again on request: a new attempt with the same webhook-id.
        resent = http.post(f"{hook}/deliveries/{logged['items'][0]['id']}/redeliver")
        assert resent.status_code == 202, resent.text
        [*_, last] = receiver.wait_for(4, timeout=15)
        assert last.verify_error is None and last.headers["webhook-id"] == logged["items"][0]["id"]
    finally:
        http.close()
        receiver.stop()
