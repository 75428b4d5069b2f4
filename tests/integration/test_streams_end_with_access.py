"""A removed or demoted person's open streams end with their access: the event log stream and the
chat stream, served streamed through the local gateway (as in AWS), end within a second of the
change with an `error` event, code UNAUTHORIZED and no id (what the clients take as the stream's end:
they reconnect and are answered 401). The buffered answers stop waiting the same way."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from devstack.gateway import Gateway, Router
from devstack.runtime import load_functions
from devstack.template import Resolver
from svc_core.auth import rate_limit
from tests.integration.test_chat_stream import set_turn
from tests.integration.test_members import change, org, remove
from tests.support.stack import DEFAULT_PARAMETERS

# The limit the issue sets is a second; the stream looks every stream_credential_check_seconds (0.5 s).
# On this loaded two-core machine the bound asserted is generous; the time taken is in the message.
BOUND_SECONDS = 2.5


@pytest.fixture
def gateway(stack):
    resolver = Resolver(DEFAULT_PARAMETERS)
    functions = load_functions(resolver, containers=2)
    router = Router(resolver.api_routes(), resolver.streaming_routes())
    streamed = Gateway(router, functions, port=0, log=lambda line: None).start()
    buffered = Gateway(router, functions, port=0, log=lambda line: None, streaming=False).start()
    stack.forget_caches()
    yield {"streamed": f"http://127.0.0.1:{streamed.port}", "buffered": f"http://127.0.0.1:{buffered.port}"}
    streamed.stop()
    buffered.stop()


def blocks_until_end(response: httpx.Response, change_access) -> tuple[list[str], float]:
    """The stream's event blocks after its first line, the access changed once the stream is open;
    and the seconds from the change to the stream's end."""
    lines = response.iter_lines()
    first = next(lines)
    assert first.startswith("retry:"), first
    change_access()
    changed = time.monotonic()
    raw = "\n".join(lines)
    return [b.strip() for b in raw.split("\n\n") if b.strip() and not b.strip().startswith(":")], \
        time.monotonic() - changed


def assert_ended_for_credential(blocks: list[str], seconds: float) -> None:
    assert blocks, "the stream ended without an event"
    last = blocks[-1]
    assert last.startswith("event: error\ndata: ") and "id:" not in last, blocks
    assert json.loads(last.split("data: ", 1)[1])["code"] == rate_limit.CREDENTIAL_ENDED_CODE
    assert seconds < BOUND_SECONDS, f"the stream ended {seconds:.2f} s after the change"


@pytest.mark.parametrize("how", ["removed", "demoted"])
def test_the_event_stream_of_a_removed_or_demoted_person_ends_at_once(stack, gateway, how):
    tenant_id, owner, (admin,) = org("admin")
    token = admin.token(tenant_id)
    owners = owner.token(tenant_id)

    def change_access():
        reply = remove(owners, admin.id) if how == "removed" else change(owners, admin.id, "member")
        assert reply.status == 200, reply

    with httpx.Client(base_url=gateway["streamed"], timeout=httpx.Timeout(10.0)) as http, \
            http.stream("GET", "/api/v1/events/stream", headers={"Authorization": f"Bearer {token}"}) as response:
        assert response.status_code == 200, response.read()
        blocks, seconds = blocks_until_end(response, change_access)
    assert_ended_for_credential(blocks, seconds)
    with httpx.Client(base_url=gateway["streamed"], timeout=10.0) as http:  # and a reconnection is 401
        again = http.get("/api/v1/events/stream", headers={"Authorization": f"Bearer {token}"})
    assert again.status_code == 401


@pytest.mark.parametrize("credential", ["header", "stream_token"])
def test_the_chat_stream_of_a_removed_member_ends_at_once(stack, gateway, credential):
    tenant_id, owner, (member,) = org("member")
    token = member.token(tenant_id)
    with httpx.Client(base_url=gateway["streamed"], timeout=httpx.Timeout(10.0)) as http:
        made = http.post("/api/v1/chat/sessions", json={"title": "Open"}, headers={"Authorization": f"Bearer {token}"})
        assert made.status_code == 201, made.text
        session_id = made.json()["data"]["id"]
        set_turn(tenant_id, session_id, first=1, active=True, last_event_id=0)  # a turn under way: it waits
        url, headers = f"/api/v1/chat/sessions/{session_id}/stream", {"Authorization": f"Bearer {token}"}
        if credential == "stream_token":  # what a browser's EventSource opens
            issued = http.post(f"/api/v1/chat/sessions/{session_id}/stream-token", headers=headers)
            assert issued.status_code == 201, issued.text
            url, headers = f"{url}?token={issued.json()['data']['token']}", {}

        def change_access():
            assert remove(owner.token(tenant_id), member.id).status == 200

        with http.stream("GET", url, headers=headers) as response:
            assert response.status_code == 200, response.read()
            blocks, seconds = blocks_until_end(response, change_access)
    assert_ended_for_credential(blocks, seconds)


def test_the_buffered_event_stream_stops_waiting_for_a_removed_member(stack, gateway):
    import threading
    tenant_id, owner, (member,) = org("member")
    token = member.token(tenant_id)
    owners = owner.token(tenant_id)
    timer = threading.Timer(1.0, lambda: remove(owners, member.id))
    timer.start()
    started = time.monotonic()
    with httpx.Client(base_url=gateway["buffered"], timeout=30.0) as http:
        answer = http.get("/api/v1/events/stream", headers={"Authorization": f"Bearer {token}"})
    timer.join()
    assert answer.status_code == 200
    assert answer.text.rstrip().splitlines()[-1].startswith("data: {\"code\": \"UNAUTHORIZED\"")
    assert time.monotonic() - started < 1.0 + BOUND_SECONDS  # not the 20 s wait of a buffered answer
