"""The receiver example of docs/webhooks.md (docs/examples/flask_receiver.py), run as a real
server on loopback against the local stack: deliveries of a project's life verify and are applied
once; a redelivery and a replay of the same events change nothing; a forged or stale request is
refused with nothing done."""

from __future__ import annotations

import importlib.util
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from standardwebhooks import Webhook
from werkzeug.serving import make_server

from tests.support.waiting import waited
from tests.support.webhook_receiver import new_secret

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "flask_receiver.py"


@pytest.fixture
def receiver(tmp_path):
    spec = importlib.util.spec_from_file_location("flask_receiver", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    secret, database = new_secret(), tmp_path / "receiver.sqlite3"
    server = make_server("127.0.0.1", 0, module.create_app(secret, str(database)), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield {"url": f"http://127.0.0.1:{server.server_port}/webhook", "secret": secret, "db": database}
    server.shutdown()


def rows(database: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(database) as db:
        return db.execute(sql).fetchall()



def test_the_example_receiver_applies_each_event_once(account, receiver):
    http = httpx.Client(base_url=account["baseUrl"], timeout=10, headers={"Authorization": f"Bearer {account['key']}"})
    try:
        webhook = http.post("/api/v1/webhooks", json={"url": receiver["url"], "events": ["*"],
                                                      "secret": receiver["secret"]}).json()["data"]
        since = datetime.now(UTC).isoformat(timespec="milliseconds")   # after the tenant's own events
        kept = http.post("/api/v1/projects", json={"name": "Apollo"}).json()["data"]
        http.patch(f"/api/v1/projects/{kept['id']}", json={"name": "Apollo 11"})
        gone = http.post("/api/v1/projects", json={"name": "Gemini"}).json()["data"]
        http.delete(f"/api/v1/projects/{gone['id']}")
        # (the tenant's own tenant.created and user.created may come too: the webhook wants "*")
        mine = "SELECT webhook_id FROM processed WHERE type LIKE 'project.%'"
        processed = waited(lambda: rows(receiver["db"], mine), lambda r: len(r) == 4)
        assert len(processed) == 4
        assert sorted(rows(receiver["db"], "SELECT id, name, deleted FROM projects")) == sorted(
            [(kept["id"], "Apollo 11", 0), (gone["id"], "Gemini", 1)])
        hook = f"/api/v1/webhooks/{webhook['id']}"

        # The same events again: a redelivery and a replay; each is answered 2xx and changes nothing.
        first = http.get("/api/v1/events", params={"objectId": kept["id"], "type": "project.created"}).json()
        assert http.post(f"{hook}/deliveries/{first['data']['items'][0]['id']}/redeliver").status_code == 202
        replay = http.post(f"{hook}/replay", json={"since": since}).json()["data"]
        progress = waited(lambda: http.get(f"{hook}/replays/{replay['id']}").json()["data"],
                          lambda p: p["status"] == "completed" and p["delivered"] + p["failed"] == p["queued"])
        assert progress["queued"] == 4 and progress["delivered"] == 4
        resent = waited(lambda: [a for a in http.get(f"{hook}/deliveries", params={"limit": 100}).json()["data"]["items"]
                                 if a["resentBy"] and a["resentBy"].startswith("rdl_")], lambda a: len(a) == 1)
        assert [(a["outcome"], a["statusCode"]) for a in resent] == [("delivered", 200)]
        assert rows(receiver["db"], mine) == processed
        assert sorted(rows(receiver["db"], "SELECT id, name, deleted FROM projects")) == sorted(
            [(kept["id"], "Apollo 11", 0), (gone["id"], "Gemini", 1)])
    finally:
        http.close()


def test_the_example_receiver_refuses_a_forged_or_stale_delivery(receiver):
    body = '{"id":"evt_01JD2Q7ZB6V8S3K4X9W2M5N7PA","type":"project.created","timestamp":"2026-11-25T00:00:00.000Z",' \
           '"tenantId":"ten_x","data":{"id":"proj_forged","name":"Forged","created_at":"2026-11-25T00:00:00.000Z"}}'
    now = datetime.now(UTC)
    stale = datetime.fromtimestamp(now.timestamp() - 600, UTC)
    for key, moment in ((new_secret(), now), (receiver["secret"], stale)):
        headers = {"webhook-id": "evt_01JD2Q7ZB6V8S3K4X9W2M5N7PA", "webhook-timestamp": str(int(moment.timestamp())),
                   "webhook-signature": Webhook(key).sign("evt_01JD2Q7ZB6V8S3K4X9W2M5N7PA", moment, body),
                   "content-type": "application/json"}
        assert httpx.post(receiver["url"], content=body, headers=headers).status_code == 400
    assert rows(receiver["db"], "SELECT * FROM processed") == [] and rows(receiver["db"], "SELECT * FROM projects") == []
