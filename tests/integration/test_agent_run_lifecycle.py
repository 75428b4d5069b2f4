"""Agent runs that pause, go on later, run in the background and are cancelled: the agents handler
fed real API Gateway events and the worker fed by AgentRunQueue through the local stack's
QueuePoller (template.yaml's own mapping), on the moto server, with a scripted model.

Approve runs the held call and goes on; reject tells the model; a decision on a run that is not
awaiting approval is 409 (and of two concurrent approvals exactly one wins, on DynamoDB Local);
the conversation a waiting run keeps is sealed (no secret in the raw item); async runs and runs
over the time budget are finished by the worker; a request that dies mid-run is finished by the
worker from its checkpoint (the watchdog message); a message delivered again does nothing; cancel
in each state; other tenants get 404.
"""

from __future__ import annotations

import json
import threading

import pytest

from devstack.pollers import QueuePoller
from devstack.template import Resolver
from svc_core.adapters import sealing
from svc_core.adapters.models.registry import scripted
from svc_core.adapters.models.scripted import ScriptedProvider, text_answer, tool_answer
from tests.integration.test_agent_runs import (
    HAIKU,
    MISSING_RUN,
    WRITE,
    api,
    execute,
    file_in_bucket,
    run_events,
    setup,
    stored_runs,
)
from tests.support.functions import load_function
from tests.support.projects import assert_error, outbox_events
from tests.support.stack import provisioned_stack


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


class Worker:
    """AgentRunQueue and its mapping to AgentRunWorkerFunction, as template.yaml declares them."""

    def __init__(self, stack) -> None:
        self.sqs = stack.client("sqs")
        [(function, props)] = [(f, p) for q, f, p in Resolver({}).queue_subscriptions() if q == "AgentRunQueue"]
        assert function == "AgentRunWorkerFunction" and props["BatchSize"] == 1
        self.url = self.sqs.get_queue_url(QueueName="AgentRunQueue")["QueueUrl"]
        handler = load_function("agent_runs").lambda_handler
        self.poller = QueuePoller({"sqs": self.sqs}, self.url, Resolver({}).arn("AgentRunQueue"),
                                  lambda event: handler(event, None), props, log=lambda _m: None)

    def pump(self) -> int:
        """Run the worker until the queue has no visible message; how many it took."""
        total = 0
        while moved := self.poller.poll_once(wait_seconds=0):
            total += moved
        return total


@pytest.fixture
def worker(stack):
    return Worker(stack)


def path(agent_id: str, run_id: str) -> dict:
    return {"id": agent_id, "run_id": run_id}


def approve(key: str, agent_id: str, run_id: str, body=None):
    return api("ApproveRun", key, path_params=path(agent_id, run_id), body=body)


def reject(key: str, agent_id: str, run_id: str, body=None):
    return api("RejectRun", key, path_params=path(agent_id, run_id), body=body)


def cancel(key: str, agent_id: str, run_id: str):
    return api("CancelRun", key, path_params=path(agent_id, run_id))


def get_run(key: str, agent_id: str, run_id: str) -> dict:
    reply = api("GetRun", key, path_params=path(agent_id, run_id))
    assert reply.status == 200, reply
    return reply.data


def execute_async(key: str, agent_id: str, project_id: str, goal: str = "Write the notes."):
    return api("ExecuteAgent", key, path_params={"id": agent_id},
               body={"goal": goal, "projectId": project_id, "async": True})


def raw_item(tenant: str, run_id: str) -> dict:
    [item] = [i for i in stored_runs(tenant) if i["id"]["S"] == run_id]
    return item


def two_writes() -> dict:
    """One model answer asking for two writes."""
    uses = [{"toolUse": {"toolUseId": f"t{n}", "name": "write_file", "input": {"path": f"{n}.md", "content": str(n)}}}
            for n in (1, 2)]
    return {"output": {"message": {"role": "assistant", "content": uses}}, "stopReason": "tool_use",
            "usage": {"inputTokens": 10, "outputTokens": 5}}


def last_tool_result(request: dict) -> dict:
    return request["messages"][-1]["content"][-1]["toolResult"]


# ---- approve and reject ----------------------------------------------------------------------

def test_approve_runs_the_held_call_and_the_run_goes_on(stack):
    tenant, key, project_id, agent_id = setup(stack, "supervised")
    provider = ScriptedProvider([WRITE, text_answer("Done.")], model_id=HAIKU)
    with scripted(provider):
        paused = execute(key, agent_id, project_id)
        assert paused.status == 201 and paused.data["status"] == "awaiting_approval", paused
        assert file_in_bucket(tenant, project_id, "docs/notes.md") is None
        reply = approve(key, agent_id, paused.data["id"])
    run = reply.data
    assert reply.status == 200 and run["status"] == "completed" and run["output"] == "Done.", reply
    assert file_in_bucket(tenant, project_id, "docs/notes.md") == "hello"
    tool = run["steps"][1]
    assert (tool["status"], tool["result"]) == ("success", "wrote docs/notes.md (5 bytes)")
    # the approval names the credential that gave it, and when
    assert tool["approval"]["decision"] == "approved" and tool["approval"]["by"].startswith("key_")
    assert tool["approval"]["at"] >= paused.data["steps"][1]["at"] and tool["approval"]["reason"] is None
    assert last_tool_result(provider.requests[1])["status"] == "success"
    assert run_events(run["id"]) == ["agent.started", "agent.completed"]
    assert "conversation" not in raw_item(tenant, run["id"])  # dropped once the run ended
    assert run["usage"]["inputTokens"] == 20


def test_reject_tells_the_model_and_writes_nothing(stack):
    tenant, key, project_id, agent_id = setup(stack, "supervised")
    provider = ScriptedProvider([WRITE, text_answer("Understood, nothing written.")], model_id=HAIKU)
    with scripted(provider):
        paused = execute(key, agent_id, project_id).data
        reply = reject(key, agent_id, paused["id"], {"reason": "not in docs/"})
    run = reply.data
    assert reply.status == 200 and run["status"] == "completed", reply
    assert file_in_bucket(tenant, project_id, "docs/notes.md") is None
    told = last_tool_result(provider.requests[1])
    assert told["status"] == "error" and told["content"][0]["text"] == "rejected by the user: not in docs/"
    tool = run["steps"][1]
    assert (tool["status"], tool["result"]) == ("rejected", "rejected by the user: not in docs/")
    assert tool["approval"]["decision"] == "rejected" and tool["approval"]["reason"] == "not in docs/"


def test_each_change_of_one_answer_is_held_in_turn(stack):
    tenant, key, project_id, agent_id = setup(stack, "supervised")
    provider = ScriptedProvider([two_writes(), text_answer("Both done.")], model_id=HAIKU)
    with scripted(provider):
        run_id = execute(key, agent_id, project_id).data["id"]
        first = approve(key, agent_id, run_id)
        assert first.status == 200 and first.data["status"] == "awaiting_approval", first
        assert file_in_bucket(tenant, project_id, "1.md") == "1" and file_in_bucket(tenant, project_id, "2.md") is None
        assert len(provider.requests) == 1  # the model is asked again only when every call is settled
        second = reject(key, agent_id, run_id)
    assert second.status == 200 and second.data["status"] == "completed", second
    assert file_in_bucket(tenant, project_id, "2.md") is None
    results = [c["toolResult"] for c in provider.requests[1]["messages"][-1]["content"]]
    assert [(r["toolUseId"], r["status"]) for r in results] == [("t1", "success"), ("t2", "error")]
    assert results[1]["content"][0]["text"] == "rejected by the user"
    assert [s.get("status") for s in second.data["steps"]] == [None, "success", "rejected", None]


def test_a_decision_on_a_run_not_awaiting_approval_is_409(stack):
    tenant, key, project_id, agent_id = setup(stack, "supervised")
    with scripted(ScriptedProvider([WRITE, text_answer("Done.")], model_id=HAIKU)):
        run_id = execute(key, agent_id, project_id).data["id"]
        assert approve(key, agent_id, run_id).status == 200
    for decide in (approve, reject):
        details = assert_error(decide(key, agent_id, run_id), 409, "CONFLICT")
        assert details == {"id": run_id, "resource": "run", "status": "completed"}
    assert run_events(run_id) == ["agent.started", "agent.completed"]


def test_a_decision_when_the_credit_is_used_up_is_402_and_the_run_keeps_waiting(stack):
    from svc_core.domain import billing, billing_ledger
    tenant, key, project_id, agent_id = setup(stack, "supervised")
    with scripted(ScriptedProvider([WRITE, text_answer("Done.")], model_id=HAIKU)) as provider:
        run_id = execute(key, agent_id, project_id).data["id"]
        billing.adjust(tenant, -billing_ledger.balance_of(tenant), "used up", "test")
        for decide in (approve, reject):
            assert assert_error(decide(key, agent_id, run_id), 402, "PAYMENT_REQUIRED")["balanceMicroCredits"] <= 0
        assert provider.remaining == 1  # the model was not asked again
    run = get_run(key, agent_id, run_id)
    assert run["status"] == "awaiting_approval" and run["steps"][-1]["status"] == "awaiting_approval"
    assert file_in_bucket(tenant, project_id, "docs/notes.md") is None


def test_of_concurrent_approvals_exactly_one_wins(stack, atomic_stack):
    tenant, key, project_id, agent_id = setup(stack, "supervised")
    provider = ScriptedProvider([WRITE, text_answer("Done.")], model_id=HAIKU)
    with scripted(provider):
        run_id = execute(key, agent_id, project_id).data["id"]
        barrier, replies = threading.Barrier(6), []

        def one() -> None:
            barrier.wait()
            replies.append(approve(key, agent_id, run_id))

        threads = [threading.Thread(target=one) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(r.status for r in replies) == [200] + [409] * 5, replies
    assert provider.remaining == 0 and len(provider.requests) == 2  # the model was asked on once
    run = get_run(key, agent_id, run_id)
    assert run["status"] == "completed" and [s.get("status") for s in run["steps"]].count("success") == 1


# ---- the stored conversation ------------------------------------------------------------------

def test_the_waiting_conversation_is_sealed_and_holds_no_secret_in_the_clear(stack):
    tenant, key, project_id, agent_id = setup(stack, "supervised")
    value = "pr1vate-Value-77e1"
    from tests.support.functions import call
    assert call("secrets", "Secrets-CreateSecret", token=key, body={"name": "API_TOKEN", "value": value}).status == 201
    script = [tool_answer("read_secret", {"name": "API_TOKEN"}),
              tool_answer("write_file", {"path": "cfg.txt", "content": f"token={value}"}, tool_use_id="t2"),
              text_answer(f"Stored {value}.")]
    provider = ScriptedProvider(script, model_id=HAIKU)
    with scripted(provider):
        paused = execute(key, agent_id, project_id).data
        assert paused["status"] == "awaiting_approval"
        item = raw_item(tenant, paused["id"])
        sealed = item["conversation"]["M"]
        assert set(sealed) == {"alg", "encryptedKey", "nonce", "ciphertext"}
        assert value not in json.dumps(item) and value not in json.dumps(paused)
        # it is the conversation, sealed to this run of this tenant
        import zlib

        from svc_core.adapters.dynamo import from_item
        conversation = from_item(item)["conversation"]
        opened = zlib.decompress(sealing.unseal(conversation, {"tenantId": tenant, "runId": paused["id"]}))
        assert value in opened.decode()
        with pytest.raises(sealing.Unsealable):
            sealing.unseal(conversation, {"tenantId": tenant, "runId": MISSING_RUN})
        done = approve(key, agent_id, paused["id"])
    assert done.status == 200 and done.data["status"] == "completed", done
    # after the pause the model still had the secret, and the answer still hides it
    assert last_tool_result(provider.requests[1])["content"][0]["text"] == value
    assert file_in_bucket(tenant, project_id, "cfg.txt") == f"token={value}"
    assert done.data["output"] == "Stored [secret API_TOKEN]."
    assert done.data["steps"][3]["input"]["content"] == "token=[secret API_TOKEN]"
    assert value not in json.dumps(stored_runs(tenant)) and value not in done.text


# ---- background runs ----------------------------------------------------------------------------

def test_an_async_run_is_queued_and_the_worker_completes_it(stack, worker):
    tenant, key, project_id, agent_id = setup(stack)
    provider = ScriptedProvider([WRITE, text_answer("Done in the background.")], model_id=HAIKU)
    with scripted(provider):
        reply = execute_async(key, agent_id, project_id)
        queued = reply.data
        assert reply.status == 202 and queued["status"] == "queued" and queued["background"] is True, reply
        assert queued["steps"] == [] and provider.requests == []
        assert worker.pump() >= 1
    run = get_run(key, agent_id, queued["id"])
    assert run["status"] == "completed" and run["output"] == "Done in the background.", run
    assert file_in_bucket(tenant, project_id, "docs/notes.md") == "hello"
    started = [e for e in outbox_events() if e["data"].get("runId") == run["id"]]
    assert [(e["type"], e["data"]["status"]) for e in started] == [("agent.started", "queued"),
                                                                  ("agent.completed", "completed")]


def test_a_background_run_is_approved_in_the_background(stack, worker):
    tenant, key, project_id, agent_id = setup(stack, "supervised")
    with scripted(ScriptedProvider([WRITE, text_answer("Done.")], model_id=HAIKU)):
        run_id = execute_async(key, agent_id, project_id).data["id"]
        worker.pump()
        assert get_run(key, agent_id, run_id)["status"] == "awaiting_approval"
        reply = approve(key, agent_id, run_id, {"reason": "looks right"})
        assert reply.status == 202 and reply.data["status"] == "queued", reply
        assert reply.data["steps"][1]["status"] == "approved"
        assert file_in_bucket(tenant, project_id, "docs/notes.md") is None
        worker.pump()
    run = get_run(key, agent_id, run_id)
    assert run["status"] == "completed" and file_in_bucket(tenant, project_id, "docs/notes.md") == "hello"
    assert run["steps"][1]["status"] == "success" and run["steps"][1]["approval"]["reason"] == "looks right"


def test_a_synchronous_run_over_its_time_budget_is_handed_to_the_worker(stack, worker, setting):
    tenant, key, project_id, agent_id = setup(stack)
    setting("AGENT_RUN_SYNC_BUDGET_SECONDS", "0")
    script = [tool_answer("list_files", {}), WRITE, text_answer("Finished by the worker.")]
    provider = ScriptedProvider(script, model_id=HAIKU)
    with scripted(provider):
        reply = execute(key, agent_id, project_id)
        run = reply.data
        # one model call and its tools per segment, then the rest goes to the worker
        assert reply.status == 202 and run["status"] == "running" and run["background"] is True, reply
        assert [s["type"] for s in run["steps"]] == ["model", "tool"] and len(provider.requests) == 1
        assert raw_item(tenant, run["id"])["leaseUntil"] == {"N": "0"}  # nobody holds it
        worker.pump()
    done = get_run(key, agent_id, run["id"])
    assert done["status"] == "completed" and done["output"] == "Finished by the worker.", done
    assert provider.remaining == 0 and file_in_bucket(tenant, project_id, "docs/notes.md") == "hello"
    assert [s["type"] for s in done["steps"]] == ["model", "tool", "model", "tool", "model"]
    assert run_events(run["id"]) == ["agent.started", "agent.completed"]


def test_a_message_delivered_again_does_nothing(stack, worker):
    from svc_core.data import agent_run_queue
    tenant, key, project_id, agent_id = setup(stack, "supervised")
    with scripted(ScriptedProvider([WRITE], model_id=HAIKU)):  # a second model call would exhaust the script
        run_id = execute_async(key, agent_id, project_id).data["id"]
        worker.pump()
        waiting = raw_item(tenant, run_id)
        agent_run_queue.send(tenant, run_id)  # again, for a run that now waits for approval
        agent_run_queue.send(tenant, run_id)
        assert worker.pump() >= 2
    assert raw_item(tenant, run_id) == waiting
    attributes = worker.sqs.get_queue_attributes(QueueUrl=worker.url, AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessages"] == "0" == attributes["ApproximateNumberOfMessagesNotVisible"]


class Crash(BaseException):
    """The request's process dies mid-run (API Gateway's 29 s, out of memory): nothing is caught."""


def test_a_request_that_dies_mid_run_is_finished_by_the_worker_from_its_checkpoint(stack, worker, monkeypatch):
    from svc_core.data import agent_run_queue
    from svc_core.platform import timeutil
    real_now = timeutil.now
    tenant, key, project_id, agent_id = setup(stack)
    sent: list[tuple] = []
    real_send = agent_run_queue.send
    monkeypatch.setattr(agent_run_queue, "send", lambda *args, **kw: (sent.append((args, kw)), real_send(*args, **kw)))
    with scripted(ScriptedProvider([tool_answer("list_files", {}), Crash()], model_id=HAIKU)):
        with pytest.raises(Crash):
            execute(key, agent_id, project_id)
    [run_id] = [i["id"]["S"] for i in stored_runs(tenant)]
    item = raw_item(tenant, run_id)
    assert item["status"]["S"] == "running" and "conversation" in item  # the checkpoint before the 2nd call
    lease = int(item["leaseUntil"]["N"])
    [(args, kw)] = sent  # the watchdog, due after the request's lease
    assert args == (tenant, run_id) and kw["delay_seconds"] > lease - int(real_now())
    worker.pump()  # nothing of this run is due yet
    assert raw_item(tenant, run_id) == item
    # the lease has passed: the watchdog comes due (sent again here, not waited for)
    monkeypatch.setattr(timeutil, "now", lambda: real_now() + 40)
    agent_run_queue.send(tenant, run_id)
    provider = ScriptedProvider([WRITE, text_answer("Recovered.")], model_id=HAIKU)
    with scripted(provider):
        assert worker.pump() >= 1
    run = get_run(key, agent_id, run_id)
    assert run["status"] == "completed" and run["output"] == "Recovered." and run["background"] is True, run
    assert [s["type"] for s in run["steps"]] == ["model", "tool", "model", "tool", "model"]
    # the worker went on from the checkpoint: the model saw the list_files result of the dead request
    assert last_tool_result(provider.requests[0])["content"][0]["text"] == '{"files": [], "truncated": false}'
    assert file_in_bucket(tenant, project_id, "docs/notes.md") == "hello"
    assert run_events(run_id) == ["agent.started", "agent.completed"]


def test_a_run_another_holder_has_is_left_alone(stack):
    from svc_core.domain import agent_runs
    tenant, key, project_id, agent_id = setup(stack, "supervised")
    with scripted(ScriptedProvider([WRITE], model_id=HAIKU)):
        run_id = execute(key, agent_id, project_id).data["id"]
    from svc_core.data import runs_table
    record = runs_table.get(tenant, run_id)
    held = {**record, "status": "running", "leaseUntil": 4_102_444_800, "version": record["version"] + 1}
    runs_table.write(tenant, held, record["version"], None, 0)
    assert agent_runs.continue_run(tenant, run_id) is None
    assert runs_table.get(tenant, run_id) == held


# ---- cancel ---------------------------------------------------------------------------------------

def test_cancel_a_queued_run_ends_it_at_once_and_the_worker_then_does_nothing(stack, worker):
    tenant, key, project_id, agent_id = setup(stack)
    with scripted(ScriptedProvider([], model_id=HAIKU)):
        run_id = execute_async(key, agent_id, project_id).data["id"]
        reply = cancel(key, agent_id, run_id)
        run = reply.data
        assert reply.status == 200 and run["status"] == "cancelled" and run["completed_at"], reply
        assert run["error"]["code"] == "CANCELLED" and run["cancelRequested"] is True
        worker.pump()
    assert get_run(key, agent_id, run_id) == run
    failed = [e for e in outbox_events() if e["data"].get("runId") == run_id]
    assert [(e["type"], e["data"]["status"]) for e in failed] == [("agent.started", "queued"),
                                                                 ("agent.failed", "cancelled")]
    assert failed[1]["data"]["error"]["code"] == "CANCELLED"
    assert "conversation" not in raw_item(tenant, run_id)


def test_cancel_a_run_awaiting_approval(stack):
    tenant, key, project_id, agent_id = setup(stack, "supervised")
    with scripted(ScriptedProvider([WRITE], model_id=HAIKU)):
        run_id = execute(key, agent_id, project_id).data["id"]
    reply = cancel(key, agent_id, run_id)
    assert reply.status == 200 and reply.data["status"] == "cancelled", reply
    assert assert_error(approve(key, agent_id, run_id), 409, "CONFLICT")["status"] == "cancelled"
    assert file_in_bucket(tenant, project_id, "docs/notes.md") is None


class CancelDuringCall(ScriptedProvider):
    """A model that, while it answers, has the user cancel the run (as a second request would)."""

    def __init__(self, script, tenant: str, key: str, agent_id: str) -> None:
        super().__init__(script, model_id=HAIKU)
        self.tenant, self.key, self.agent_id, self.cancel_reply = tenant, key, agent_id, None

    def converse(self, request):
        from svc_core.data import runs_table  # the run being served is the newest of its agent
        run_id = runs_table.list_for_agent(self.tenant, self.agent_id, 1, None)[0][0]["id"]
        self.cancel_reply = cancel(self.key, self.agent_id, run_id)
        return super().converse(request)


def test_cancel_a_running_run_stops_it_before_its_next_tool(stack):
    tenant, key, project_id, agent_id = setup(stack)
    provider = CancelDuringCall([WRITE, text_answer("never asked")], tenant, key, agent_id)
    with scripted(provider):
        reply = execute(key, agent_id, project_id)
    asked = provider.cancel_reply
    assert asked.status == 202 and asked.data["status"] == "running" and asked.data["cancelRequested"] is True, asked
    run = reply.data
    assert reply.status == 201 and run["status"] == "cancelled" and run["error"]["code"] == "CANCELLED", reply
    assert [s["type"] for s in run["steps"]] == ["model"] and provider.remaining == 1
    assert file_in_bucket(tenant, project_id, "docs/notes.md") is None
    assert run_events(run["id"]) == ["agent.started", "agent.failed"]
    assert assert_error(cancel(key, agent_id, run["id"]), 409, "CONFLICT")["status"] == "cancelled"


def test_a_cancel_during_a_tool_ends_the_run_at_the_checkpoint_before_the_next_model_call(stack, monkeypatch):
    from svc_core.adapters import project_files_bucket
    from svc_core.data import runs_table
    tenant, key, project_id, agent_id = setup(stack)
    replies, real_put = [], project_files_bucket.put

    def put_while_cancelled(*args):
        run_id = runs_table.list_for_agent(tenant, agent_id, 1, None)[0][0]["id"]
        replies.append(cancel(key, agent_id, run_id))
        real_put(*args)

    monkeypatch.setattr(project_files_bucket, "put", put_while_cancelled)
    provider = ScriptedProvider([WRITE, text_answer("never asked")], model_id=HAIKU)
    with scripted(provider):
        reply = execute(key, agent_id, project_id)
    run = reply.data
    assert replies[0].status == 202 and replies[0].data["cancelRequested"] is True, replies
    assert reply.status == 201 and run["status"] == "cancelled" and provider.remaining == 1, reply
    assert [(s["type"], s.get("status")) for s in run["steps"]] == [("model", None), ("tool", "success")]
    assert file_in_bucket(tenant, project_id, "docs/notes.md") == "hello"  # the tool under way finished
    assert run_events(run["id"]) == ["agent.started", "agent.failed"]


def test_cancel_a_handed_off_run_nobody_holds_and_of_an_ended_run(stack, worker, setting):
    tenant, key, project_id, agent_id = setup(stack)
    setting("AGENT_RUN_SYNC_BUDGET_SECONDS", "0")
    with scripted(ScriptedProvider([tool_answer("list_files", {})], model_id=HAIKU)):
        run_id = execute(key, agent_id, project_id).data["id"]
        reply = cancel(key, agent_id, run_id)
        assert reply.status == 200 and reply.data["status"] == "cancelled", reply
        worker.pump()  # its message finds it ended: nothing happens, the script is not asked
    assert get_run(key, agent_id, run_id)["status"] == "cancelled"
    setting("AGENT_RUN_SYNC_BUDGET_SECONDS", "20")
    with scripted(ScriptedProvider([text_answer("ok")], model_id=HAIKU)):
        done = execute(key, agent_id, project_id).data
    assert assert_error(cancel(key, agent_id, done["id"]), 409, "CONFLICT") == {
        "id": done["id"], "resource": "run", "status": "completed"}


# ---- bad input, scopes, tenants ---------------------------------------------------------------------

def test_the_new_endpoints_answer_404_for_other_tenants_and_unknown_runs(stack):
    tenant_a, key_a, project_a, agent_a = setup(stack, "supervised")
    tenant_b, key_b, project_b, agent_b = setup(stack, "supervised")
    with scripted(ScriptedProvider([WRITE], model_id=HAIKU)):
        run_a = execute(key_a, agent_a, project_a).data["id"]
    for action in (approve, reject, cancel):
        assert assert_error(action(key_b, agent_a, run_a), 404, "RESOURCE_NOT_FOUND")["resource"] == "agent"
        assert assert_error(action(key_b, agent_b, run_a), 404, "RESOURCE_NOT_FOUND")["resource"] == "run"
        assert assert_error(action(key_a, agent_a, MISSING_RUN), 404, "RESOURCE_NOT_FOUND")["resource"] == "run"
        assert assert_error(action(key_a, agent_a, "not-a-run"), 404, "RESOURCE_NOT_FOUND")["resource"] == "run"
    assert get_run(key_a, agent_a, run_a)["status"] == "awaiting_approval"


def test_bad_reasons_bodies_and_scopes(stack):
    tenant, key, project_id, agent_id = setup(stack, "supervised")
    with scripted(ScriptedProvider([WRITE], model_id=HAIKU)):
        run_id = execute(key, agent_id, project_id).data["id"]
    for body in ({"reason": ""}, {"reason": "   "}, {"reason": "x" * 1001}, {"reason": 3}, {"why": "x"}):
        assert assert_error(reject(key, agent_id, run_id, body), 400, "VALIDATION_ERROR"), body
    reply = api("ExecuteAgent", key, path_params={"id": agent_id},
                body={"goal": "g", "projectId": project_id, "async": "yes"})
    assert [f["field"] for f in assert_error(reply, 400, "VALIDATION_ERROR")["fields"]] == ["async"]
    reader = stack.new_key(tenant, ["agents:read"])["key"]
    for action in (approve, reject, cancel):
        assert assert_error(action(reader, agent_id, run_id), 403, "FORBIDDEN")["requiredScope"] == "agents:write"
    reply = api("CancelRun", key, path_params=path(agent_id, run_id), method="GET")
    assert assert_error(reply, 405, "METHOD_NOT_ALLOWED")["allowed"] == ["POST"]
    assert get_run(key, agent_id, run_id)["status"] == "awaiting_approval"
