"""The soak's own instruments (devstack/soak.py), on the moto server: the bus capture reads while
the session runs, and the set-up and the final sign-ins ask all at once (a stub gateway that
answers only when every tenant's request is in at the same time)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import botocore.session
import pytest

from devstack import soak
from devstack.template import REGION

TENANTS = 4


def _client(emulator, service):
    return botocore.session.get_session().create_client(
        service, region_name=REGION, endpoint_url=emulator.endpoint,
        aws_access_key_id="local", aws_secret_access_key="local")


@pytest.fixture
def bus(emulator):
    name = f"soak-parts-{time.monotonic_ns()}"
    _client(emulator, "events").create_event_bus(Name=name)
    return name


def _put(emulator, bus, ids):
    events = _client(emulator, "events")
    for start in range(0, len(ids), 10):  # PutEvents takes 10 entries at most
        events.put_events(Entries=[
            {"EventBusName": bus, "Source": "svc.api", "DetailType": "project.created",
             "Detail": json.dumps({"id": event_id, "tenantId": "ten_1"})} for event_id in ids[start:start + 10]])


def _wait_for(condition, seconds=60.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.1)
    return condition()


def test_the_bus_capture_reads_while_the_session_runs_and_counts_each_event_once(emulator, bus):
    capture = soak.BusCapture(SimpleNamespace(emulator_endpoint=emulator.endpoint,
                                              environment={"EVENT_BUS_NAME": bus, "EVENT_SOURCE": "svc.api"}))
    try:
        _put(emulator, bus, [f"evt_{n}" for n in range(25)])
        # Read before anyone asks: the count at the end is left only what came last.
        assert _wait_for(lambda: len(capture.seen) == 25), len(capture.seen)
        _put(emulator, bus, ["evt_late"])
        seen = capture.drain()
    finally:
        capture.stop()
    assert sorted(e["id"] for e in seen) == sorted([f"evt_{n}" for n in range(25)] + ["evt_late"])


class _StubGateway:
    """Answers the set-up's and the count's requests; a register or a sign-in is answered only once
    TENANTS of them are waiting at once (else 500, after the barrier's timeout)."""

    def __init__(self) -> None:
        barriers = {"/api/v1/auth/register": threading.Barrier(TENANTS, timeout=20),
                    "/api/v1/auth/login": threading.Barrier(TENANTS, timeout=20)}
        answers = {
            "/api/v1/auth/register": lambda body: (201, {}),
            "/api/v1/auth/login": lambda body: (200, {"accessToken": "token",
                                                      "tenant": {"id": "ten_" + body["email"].split("@")[0]}}),
            "/api/v1/api-keys": lambda body: (201, {"key": "key"}),
            "/api/v1/webhooks": lambda body: (201, {}),
        }

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                try:
                    if self.path in barriers:
                        barriers[self.path].wait()
                    status, data = answers[self.path](body)
                except threading.BrokenBarrierError:
                    status, data = 500, {}
                payload = json.dumps({"data": data, "meta": {}}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.server.server_port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_the_set_up_and_the_final_sign_ins_ask_for_every_tenant_at_once(emulator, bus, monkeypatch):
    gateway = _StubGateway()
    lifted = []
    monkeypatch.setattr(soak.Session, "lift_project_quota", staticmethod(lifted.append))  # the stub has no tables
    stack = SimpleNamespace(base_url=gateway.base_url, emulator_endpoint=emulator.endpoint,
                            environment={"EVENT_BUS_NAME": bus})
    session = soak.Session(stack, calls=0, clients=1, tenants=TENANTS, seed=7, log=lambda _m: None)
    try:
        session.set_up()
        assert sorted(session.keys) == sorted(session.tenant_ids) == list(range(TENANTS))
        # The seeded picks read the registered addresses: in tenant order, whichever answered first.
        assert session.registered == [f"soak-owner-7-{t}-{session.registered[0].split('-')[-1]}"
                                      for t in range(TENANTS)]
        report = soak.Report()
        changes = soak._committed_changes(session, {}, report)
    finally:
        session.receiver.stop()
        session.capture.stop()
        gateway.stop()
    assert report.notes == []
    assert sorted(lifted) == sorted(session.tenant_ids.values())
    assert [c["type"] for c in changes] == ["tenant.created", "user.created"] * TENANTS
    assert [c["object"] for c in changes[::2]] == ["ten_" + email.split("@")[0] for email in session.registered]
