"""The local stack with real model providers (issue 33's "done when"): one stack offering a model of
each provider, each served by an independent server that speaks its API (llm-katan with its echo
backend; tests/support/model_proxy.py records what it reported, frames Bedrock's stream as AWS does,
and lets a model that has its tool's result answer). For each: an agent run calls a tool and completes, a chat answer streams, and
what the service metered is what the provider reported, token for token. Then the failures: a key
the provider refuses, a model that hangs (given up within the budget), a server that is not there,
and a start with an unpriced model (refused before anything runs)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from devstack.bootstrap import bootstrap
from devstack.stack import LocalStack
from tests.support.model_proxy import ModelProxy

pytestmark = pytest.mark.long_running   # three servers and a stack: its test process starts with it

OPENAI_MODEL = "llama3.1"                                              # bare: the default provider's
ANTHROPIC_MODEL = "anthropic:claude-haiku-4-5"
BEDROCK_MODEL = "bedrock:anthropic.claude-haiku-4-5-20251001-v1:0"
KATAN = Path(sys.executable).parent / "llm-katan"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_katan(tmp: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen(
        [str(KATAN), "--model", "echo", "--served-model-name", OPENAI_MODEL, "--backend", "echo",
         "--providers", "openai,anthropic,bedrock", "--host", "127.0.0.1", "--port", str(port),
         "--stats-file", str(tmp / f"stats-{port}.json"), "--log-level", "WARNING", *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(url + "/health", timeout=1)
            return process, url
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("llm-katan did not start")


@pytest.fixture(scope="module")
def providers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("katan")
    katan, url = start_katan(tmp)
    proxy = ModelProxy(url).start()
    stack = LocalStack(port=0, log=lambda _m: None, containers=2, parameters={
        "LogLevel": "ERROR", "ModelProvider": "openai", "ModelId": OPENAI_MODEL,
        "ModelAllowedIds": f"{ANTHROPIC_MODEL},{BEDROCK_MODEL}", "ModelTimeoutSeconds": "5",
        "OpenAIBaseUrl": proxy.url + "/v1", "AnthropicBaseUrl": proxy.url, "BedrockEndpointUrl": proxy.url},
        model_api_keys={"openai": "sk-local-openai", "anthropic": "sk-ant-local"})
    stack.start()
    stack.credentials = bootstrap(stack.base_url, tmp / "dev-credentials.json")
    yield stack, proxy
    stack.stop()
    proxy.stop()
    katan.kill()
    katan.wait()


def client(stack) -> httpx.Client:
    return httpx.Client(base_url=stack.base_url, timeout=30,
                        headers={"Authorization": f"Bearer {stack.credentials['apiKey']}"})


def new_agent(http: httpx.Client, model: str, **config) -> str:
    reply = http.post("/api/v1/agents", json={"name": f"On {model}", "systemPrompt": "You help.",
                                               "config": {"model": model, "autonomyLevel": "autonomous", **config}})
    assert reply.status_code == 201, reply.text
    return reply.json()["data"]["id"]


def streamed_answer(http: httpx.Client, session_id: str) -> tuple[str, list[str]]:
    """The text of the turn's stream, and its event names, read until the turn ends."""
    text, names = "", []
    with http.stream("GET", f"/api/v1/chat/sessions/{session_id}/stream", timeout=60) as stream:
        name = None
        for line in stream.iter_lines():
            if line.startswith("event:"):
                name = line[6:].strip()
                names.append(name)
            elif line.startswith("data:") and name == "content_delta":
                text += json.loads(line[5:]).get("text", "")
            if name == "done" and line == "":   # the turn's last event
                break
    return text, names


@pytest.mark.parametrize("model, api, shown", [
    (OPENAI_MODEL, "openai", f"openai:{OPENAI_MODEL}"),
    (ANTHROPIC_MODEL, "anthropic", ANTHROPIC_MODEL),
    (BEDROCK_MODEL, "bedrock", BEDROCK_MODEL.removeprefix("bedrock:")),
])
def test_a_run_calls_a_tool_and_a_chat_answer_streams_metered_as_the_provider_reported(providers, model, api,
                                                                                       shown):
    stack, proxy = providers
    with client(stack) as http:
        project = http.post("/api/v1/projects", json={"name": f"{api} project"}).json()["data"]["id"]
        agent = new_agent(http, model, tools=["list_files"], stepLimit=4)
        done = http.post(f"/api/v1/agents/{agent}/execute", json={"goal": "List the files.", "projectId": project})
        run = done.json()["data"]
        assert done.status_code == 201 and run["status"] == "completed", done.text
        assert run["model"] == shown
        tools = [step for step in run["steps"] if step["type"] == "tool"]
        assert [step["name"] for step in tools] == ["list_files"] and tools[0]["status"] == "success", run["steps"]
        assert "[echo]" in run["output"]   # the independent server's answer, after the tool's result

        chatty = new_agent(http, model)
        session = http.post("/api/v1/chat/sessions", json={"agentId": chatty}).json()["data"]["id"]
        sent = http.post(f"/api/v1/chat/sessions/{session}/messages", json={"content": "Say something."})
        assert sent.status_code == 202, sent.text
        text, names = streamed_answer(http, session)
        assert "[echo]" in text and names.count("content_delta") > 1 and "error" not in names, names
        message = http.get(f"/api/v1/chat/sessions/{session}").json()["data"]["messages"][-1]
        assert message["status"] == "completed" and message["model"] == shown, message

    reported = proxy.usage_of(api, model.split(":", 1)[1] if ":" in model else model)
    metered = (run["usage"]["inputTokens"] + message["usage"]["inputTokens"],
               run["usage"]["outputTokens"] + message["usage"]["outputTokens"])
    assert metered == reported and reported[0] > 0, (metered, reported)
    assert not run["usage"].get("estimated") and not message["usage"]["estimated"]   # measured, not estimated


@pytest.mark.parametrize("model, api, shown", [
    (OPENAI_MODEL, "openai", f"openai:{OPENAI_MODEL}"),
    (ANTHROPIC_MODEL, "anthropic", ANTHROPIC_MODEL),
    (BEDROCK_MODEL, "bedrock", BEDROCK_MODEL.removeprefix("bedrock:")),
])
def test_tokens_of_an_answer_that_breaks_after_the_provider_counted_them_are_billed(providers, model, api, shown):
    """A stream cut after its usage was sent, and one followed by something of another shape: each chat
    turn fails, and the ledger (the usage records, every one marked failed) holds what the provider
    counted, token for token."""
    from svc_core.data import usage_table
    stack, proxy = providers
    name = model.split(":", 1)[1] if ":" in model else model
    before = proxy.usage_of(api, name)
    messages = []
    with client(stack) as http:
        agent = new_agent(http, model)
        for how in ("cut", "shape"):
            session = http.post("/api/v1/chat/sessions", json={"agentId": agent}).json()["data"]["id"]
            proxy.break_next(api, how)
            sent = http.post(f"/api/v1/chat/sessions/{session}/messages", json={"content": f"Say more ({how})."})
            assert sent.status_code == 202, sent.text
            _, names = streamed_answer(http, session)
            assert "error" in names, (how, names)
            message = http.get(f"/api/v1/chat/sessions/{session}").json()["data"]["messages"][-1]
            assert message["status"] == "failed" and message["model"] == shown, message
            messages.append(message)
    after = proxy.usage_of(api, name)
    reported = (after[0] - before[0], after[1] - before[1])
    records = [r for m in messages for r in usage_table.records_for(stack.credentials["tenantId"], m["id"])]
    ledger = (sum(r["inputTokens"] for r in records), sum(r["outputTokens"] for r in records))
    shown_usage = (sum(m["usage"]["inputTokens"] for m in messages), sum(m["usage"]["outputTokens"] for m in messages))
    print(f"{api}: provider counted {reported}, ledger {ledger} in {len(records)} failed calls")
    assert ledger == reported == shown_usage and reported[0] > 0 and reported[1] > 0, (ledger, reported, shown_usage)
    assert len(records) == 2 and all(r["failed"] and not r["estimated"] and r["model"] == shown for r in records)
    assert all(r["microCredits"] > 0 for r in records)


def test_the_tenants_whole_ledger_is_what_the_provider_counted_failed_calls_included(providers):
    """Every call this stack made went through the recording proxy: the tenant's usage records (the
    ledger the billing debits) hold, token for token, what llm-katan counted, whichever tests ran
    before (answers, tool calls, streams broken after their usage)."""
    from svc_core.data import usage_table
    stack, proxy = providers
    with client(stack) as http:   # at least one call of each provider, one of them broken
        for model, api in ((OPENAI_MODEL, "openai"), (ANTHROPIC_MODEL, "anthropic"), (BEDROCK_MODEL, "bedrock")):
            session = http.post("/api/v1/chat/sessions", json={"agentId": new_agent(http, model)}).json()["data"]
            if api == "anthropic":
                proxy.break_next(api, "shape")
            assert http.post(f"/api/v1/chat/sessions/{session['id']}/messages",
                             json={"content": "One more."}).status_code == 202
            streamed_answer(http, session["id"])
    records = usage_table.records_between(stack.credentials["tenantId"], "2000-01-01T00:00:00.000Z", "9999-12-31~")
    with proxy.lock:
        counted = (sum(c.input_tokens for c in proxy.calls), sum(c.output_tokens for c in proxy.calls), len(proxy.calls))
    ledger = (sum(r["inputTokens"] for r in records), sum(r["outputTokens"] for r in records), len(records))
    print(f"whole ledger {ledger} (in, out, calls), provider counted {counted};"
          f" failed calls billed: {sum(1 for r in records if r['failed'])}")
    assert ledger == counted and any(r["failed"] for r in records), (ledger, counted)


def run_on_a_katan(tmp_path: Path, katan_options: tuple[str, ...], key: str, **parameters: str) -> httpx.Response:
    """One run of an agent with a tool on a stack whose only model is an llm-katan's, started with these options."""
    katan, url = start_katan(tmp_path, *katan_options)
    stack = LocalStack(port=0, log=lambda _m: None, containers=1, parameters={
        "LogLevel": "ERROR", "ModelProvider": "openai", "ModelId": OPENAI_MODEL, "ModelAllowedIds": "",
        "OpenAIBaseUrl": url + "/v1", **parameters}, model_api_keys={"openai": key})
    try:
        stack.start()
        stack.credentials = bootstrap(stack.base_url, tmp_path / "dev-credentials.json")
        with client(stack) as http:
            project = http.post("/api/v1/projects", json={"name": "one run"}).json()["data"]["id"]
            agent = new_agent(http, OPENAI_MODEL, tools=["list_files"])
            return http.post(f"/api/v1/agents/{agent}/execute", json={"goal": "Go.", "projectId": project})
    finally:
        stack.stop()
        katan.kill()


def test_a_key_the_provider_refuses_is_said_as_such(tmp_path):
    done = run_on_a_katan(tmp_path, ("--validate-keys", "--api-keys", "openai=the-right-key"), "a-wrong-key")
    run = done.json()["data"]
    assert done.status_code == 201 and run["status"] == "failed", done.text
    assert run["error"]["code"] == "MODEL_UNAVAILABLE" and "credentials" in run["error"]["message"], run["error"]
    assert "a-wrong-key" not in done.text and "the-right-key" not in done.text   # the server's text quotes them


def test_a_model_that_hangs_is_given_up_within_the_budget(tmp_path):
    done = run_on_a_katan(tmp_path, ("--ttft-ms", "60000", "--latency-ms", "60000"), "k", ModelTimeoutSeconds="3")
    run = done.json()["data"]
    # the server stays silent for a minute: only the 3 s budget ends the call with this reason
    assert done.status_code == 201 and run["status"] == "failed" and run["error"]["code"] == "MODEL_UNAVAILABLE"
    assert run["error"]["message"] == "The model took too long to answer.", run["error"]


def test_a_start_with_an_unpriced_model_is_refused_before_anything_runs(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "devstack", "--port", "0", "--emulator", "moto", "--quiet",
         "--credentials", str(tmp_path / "c.json"), "--model-provider", "openai", "--model-id", "my-finetune",
         "--model-base-url", "http://127.0.0.1:9/v1"],
        capture_output=True, text=True, timeout=180, env={**os.environ})
    assert result.returncode == 2, result.stderr[-2000:]
    assert "openai:my-finetune" in result.stderr and "price" in result.stderr
    assert not (tmp_path / "c.json").exists()   # no development tenant was made


@pytest.mark.parametrize("options", [
    ("--model-provider", "bedrock", "--model-base-url", "http://127.0.0.1:9",
     "--model-id", "us.anthropic.claude-haiku-4-5-20251001-v1:0", "--model-allowed-ids", "us.offline"),
    ("--model-allowed-ids", "us.offline"),    # the offline model would answer it: still no model of any provider
])
def test_a_start_offering_an_id_under_an_unknown_prefix_is_refused(tmp_path, options):
    """`us.offline` once started and was billed at the offline model's price: only Bedrock's inference
    profiles of a priced foundation model take that model's price, anything else has none."""
    result = subprocess.run(
        [sys.executable, "-m", "devstack", "--port", "0", "--emulator", "moto", "--quiet",
         "--credentials", str(tmp_path / "c.json"), *options],
        capture_output=True, text=True, timeout=180, env={**os.environ})
    assert result.returncode == 2, result.stderr[-2000:]
    assert "us.offline" in result.stderr and "price" in result.stderr
    assert not (tmp_path / "c.json").exists()
