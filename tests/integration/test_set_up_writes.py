"""The tests' set-up writes cannot be failed by a busy machine (tests/support/stack.py set_up_writes).

The moto server keeps no ClientRequestToken: a TransactWriteItems answered later than the client's read
timeout is sent again and fails its own "must not exist" condition there (DynamoDB would answer the
first attempt's success). Here a relay holds the first transaction's answer, once it is committed,
longer than the layer's read timeout: the layer's own client meets its own condition, the set-up
(new_tenant, new_key) waits for its one answer and succeeds."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest

from svc_core.data.common import ConditionFailed
from tests.support.relay_proxy import RelayProxy


class HoldsTheFirstTransaction(RelayProxy):
    """Relays everything; the answer of each first TransactWriteItems is held (after the server applied it)."""

    def __init__(self, upstream: str, hold: float) -> None:
        super().__init__(upstream)
        self.hold, self.held = hold, set()
        self.done = threading.Event()

    def handle(self, handler, body):
        target = handler.headers.get("X-Amz-Target", "")
        token = body  # one transaction's bytes, its token included: a retry sends them again
        if target.endswith("TransactWriteItems") and token not in self.held:
            self.held.add(token)
            request = self.http.build_request("POST", self.upstream + handler.path, content=body,
                                              headers=self.upstream_headers(handler))
            answer = self.http.send(request)          # applied on the server
            self.done.wait(self.hold)                 # ... and answered late
            try:
                handler.send_response(answer.status_code)
                for name, value in answer.headers.items():
                    if name.lower() not in {"connection", "content-length", "transfer-encoding"}:
                        handler.send_header(name, value)
                handler.send_header("content-length", str(len(answer.content)))
                handler.end_headers()
                handler.wfile.write(answer.content)
            except OSError:
                pass   # the client gave up waiting
            return
        self.relay(handler, body)


@pytest.fixture
def slow_answers(stack, monkeypatch):
    from svc_core.adapters import aws
    proxy = HoldsTheFirstTransaction(stack.endpoint, hold=3).start()
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", proxy.url)
    monkeypatch.setitem(aws.PROFILES, "dynamodb", replace(aws.PROFILES["dynamodb"], read_timeout=1, max_attempts=3))
    stack.forget_caches()
    yield proxy
    proxy.done.set()
    proxy.stop()
    stack.forget_caches()


def test_a_create_answered_late_fails_its_own_condition_on_moto_through_the_layer_s_client(stack, slow_answers):
    from svc_core.data import tenants_table
    from svc_core.data.common import transact
    with pytest.raises(ConditionFailed):   # the hazard the set-up is immune to
        transact([tenants_table.put_new({"id": "ten_late", "name": "Late", "plan": "free", "status": "active",
                                         "created_at": "2026-01-01T00:00:00Z"})])


def test_the_set_up_s_tenant_and_key_wait_for_their_answer_and_are_made(stack, slow_answers):
    tenant_id = stack.new_tenant("Slow")
    key = stack.new_key(tenant_id)
    assert key["key"] and len(slow_answers.held) == 2   # both writes were held, neither was sent twice
    from svc_core.data import tenants_table
    assert tenants_table.get(tenant_id)["name"] == "Slow"
