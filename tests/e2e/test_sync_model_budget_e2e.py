"""A synchronous agent run is answered by the service, not by API Gateway's 504, whatever the model
does: on the local stack (whose gateway gives up after API Gateway's 29 s, as the deployed API does),
with the deployment's real budgets (ModelTimeoutSeconds' default of 30 s, a fallback model configured),
against a model server that accepts every connection and never answers. The run is answered 201 with
`status: failed` and the model's timeout, both models having been asked (svc_core/platform/deadline.py).

Chat does not call a model within a request: a message is answered 202 and its turn runs in the chat
turn worker (functions/chat_turns), streamed by a route of its own, so only runs are crossed here."""

from __future__ import annotations

import httpx

from devstack.bootstrap import bootstrap
from devstack.gateway import INTEGRATION_TIMEOUT_SECONDS
from devstack.stack import LocalStack
from tests.support.model_api_server import Reply, serving

PRIMARY = "llama3.1"                        # the deployment's default provider's (openai)
FALLBACK = "anthropic:claude-haiku-4-5"


def test_a_run_against_a_model_that_never_answers_is_the_service_s_201_failed_not_a_504(tmp_path):
    never = [Reply(hang_before=120) for _ in range(8)]   # accepts, reads the request, says nothing
    with serving(never) as model:
        stack = LocalStack(port=0, log=lambda _m: None, containers=1, parameters={
            "LogLevel": "ERROR", "ModelProvider": "openai", "ModelId": PRIMARY, "ModelAllowedIds": "",
            "ModelFallbackId": FALLBACK, "OpenAIBaseUrl": model.url + "/v1", "AnthropicBaseUrl": model.url},
            model_api_keys={"openai": "sk-local", "anthropic": "sk-ant-local"})
        try:
            stack.start()
            assert stack.gateway.integration_timeout == INTEGRATION_TIMEOUT_SECONDS == 29   # API Gateway's
            assert "ModelTimeoutSeconds" not in stack.parameters   # the template's default: 30 s per call
            credentials = bootstrap(stack.base_url, tmp_path / "dev-credentials.json")
            with httpx.Client(base_url=stack.base_url, timeout=120,
                              headers={"Authorization": f"Bearer {credentials['apiKey']}"}) as http:
                project = http.post("/api/v1/projects", json={"name": "hung model"}).json()["data"]["id"]
                agent = http.post("/api/v1/agents", json={"name": "Waits", "systemPrompt": "You help.",
                                                          "config": {"autonomyLevel": "autonomous"}})
                assert agent.status_code == 201, agent.text
                done = http.post(f"/api/v1/agents/{agent.json()['data']['id']}/execute",
                                 json={"goal": "Say hello.", "projectId": project})
                run_id = (done.json().get("data") or {}).get("id")   # none in the gateway's 504
                stored = http.get(f"/api/v1/agents/{agent.json()['data']['id']}/runs/{run_id}") if run_id else None
        finally:
            stack.stop()
        asked = [received.path for received in model.received]
    assert done.status_code == 201, done.text   # the service's answer, not the gateway's 504
    run = done.json()["data"]
    assert run["status"] == "failed" and run["error"]["code"] == "MODEL_UNAVAILABLE", run
    assert run["error"]["message"] == "The model took too long to answer.", run["error"]
    assert asked == ["/v1/chat/completions", "/v1/messages"], asked   # the first model, then the fallback
    assert stored is not None and stored.status_code == 200 and stored.json()["data"]["status"] == "failed"
