"""What an operator uses on the local stack: the health answer (with the pollers), over real HTTP."""

from __future__ import annotations

import httpx


def test_health_answers_without_a_credential_and_reports_the_pollers(local_stack):
    answer = httpx.get(local_stack.base_url + "/api/v1/health", timeout=10)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert answer.headers["x-request-id"] == body["meta"]["request_id"]
    assert "x-ratelimit-limit" not in answer.headers
    health = body["data"]
    assert {k: health[k] for k in ("status", "service", "stage")} == {"status": "ok", "service": "svc-api",
                                                                     "stage": "dev"}
    local = health["local"]
    assert local["engine"] == local_stack.engine
    status = httpx.get(local_stack.base_url + "/_local/status", timeout=10).json()
    # The same pollers as /_local/status: every stream and queue subscription of the template.
    assert [(p["source"], p["function"]) for p in local["pollers"]] == \
        [(p["source"], p["function"]) for p in status["pollers"]]
    functions = {p["function"] for p in local["pollers"]}
    assert {"OutboxPublisherFunction", "WebhookFanoutFunction", "WebhookDeliveryFunction"} <= functions


def test_health_with_a_wrong_credential_still_answers(local_stack):
    answer = httpx.get(local_stack.base_url + "/api/v1/health", headers={"Authorization": "Bearer nope"}, timeout=10)
    assert answer.status_code == 200 and answer.json()["data"]["status"] == "ok"
