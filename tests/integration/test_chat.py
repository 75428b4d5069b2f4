"""Chat end to end on the moto server: the chat handler fed real API Gateway events, and the chat
turn worker fed from ChatTurnQueue by the local stack's QueuePoller with template.yaml's own
mapping properties (as the local stack runs it). The model is the local stack's offline one, or a
scripted one (the registry's test hook) to drive tool calls and failures.

Sessions (create, list, read, delete), a session's messages page by page, validation, one turn at
a time (409), a turn's stored events and its final message, metering per call, agent sessions' tools
(run when autonomous, proposed otherwise), model failures (before and mid-stream), redelivery and
crash recovery, a turn that cannot be queued, and other tenants' sessions (404 everywhere).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from devstack.pollers import QueuePoller
from devstack.template import Resolver
from svc_core.adapters.models.base import events_of
from svc_core.adapters.models.registry import scripted
from svc_core.adapters.models.scripted import ScriptedProvider, text_answer, tool_answer
from svc_core.platform import timeutil
from svc_core.platform.errors import ModelThrottled, ModelUnavailable
from tests.support import projects as project_api
from tests.support.functions import call, load_function
from tests.support.projects import assert_envelope, assert_error
from tests.support.queues import take_messages
from tests.support.stack import provisioned_stack

SESSION_ID = re.compile(r"^chs_[0-9A-HJKMNP-TV-Z]{26}$")
MESSAGE_ID = re.compile(r"^msg_[0-9A-HJKMNP-TV-Z]{26}$")
HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
MISSING_SESSION = "chs_01JD2Q7ZB6V8S3K4X9W2M5N7PA"
MISSING_PROJECT = "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA"
MISSING_AGENT = "agt_01JD2Q7ZB6V8S3K4X9W2M5N7PA"
SESSION_FIELDS = {"id", "title", "projectId", "agentId", "lastEventId", "activeTurn", "latestTurn", "created_at",
                  "updated_at"}
MESSAGE_FIELDS = {"id", "role", "content", "status", "projectId", "userMessageId", "model", "usage", "error",
                  "firstEventId", "lastEventId", "created_at", "completed_at"}
USAGE_FIELDS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "microCredits")


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


class Turns:
    """ChatTurnQueue and its mapping to ChatTurnFunction, as template.yaml declares them."""

    def __init__(self, stack) -> None:
        self.sqs = stack.client("sqs")
        resolver = Resolver({})
        ((function, props),) = [(f, p) for q, f, p in resolver.queue_subscriptions() if q == "ChatTurnQueue"]
        assert function == "ChatTurnFunction"
        self.url = self.sqs.get_queue_url(QueueName="ChatTurnQueue")["QueueUrl"]
        self.arn = resolver.arn("ChatTurnQueue")
        self.handler = load_function("chat_turns").lambda_handler
        self.poller = QueuePoller({"sqs": self.sqs}, self.url, self.arn, lambda event: self.handler(event, None),
                                  props, log=lambda _m: None)

    def run(self) -> int:
        """Answer every queued turn; how many were answered."""
        done = 0
        while moved := self.poller.poll_once(wait_seconds=0):
            done += moved
        return done

    def take(self) -> list[dict[str, Any]]:
        """The queued turn messages, removed from the queue (not answered)."""
        return take_messages(self.sqs, self.url)

    def deliver(self, body: dict[str, Any], receive_count: int = 2) -> dict[str, Any]:
        """The SQS event the poller would build for a (re)delivered message, handed to the worker."""
        record = {"messageId": "redelivered-1", "receiptHandle": "rh-1", "body": json.dumps(body),
                  "attributes": {"ApproximateReceiveCount": str(receive_count), "SentTimestamp": "1",
                                 "SenderId": "local", "ApproximateFirstReceiveTimestamp": "1"},
                  "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs", "eventSourceARN": self.arn,
                  "awsRegion": "us-east-1"}
        return self.handler({"Records": [record]}, None)


@pytest.fixture
def turns(stack):
    made = Turns(stack)
    yield made
    made.take()   # nothing left for the next test


# ---- calling the service -----------------------------------------------------------------

def api(event: str, key: str, **kwargs):
    return call("chat", f"Chat-{event}", token=key, **kwargs)


def new_session(key: str, **body) -> dict:
    reply = api("CreateChatSession", key, body=body)
    assert reply.status == 201, reply
    return reply.data


def send(key: str, session_id: str, content: str = "Hello there, model.", **body):
    return api("SendChatMessage", key, path_params={"id": session_id}, body={"content": content, **body})


def read(key: str, session_id: str) -> dict:
    reply = api("GetChatSession", key, path_params={"id": session_id})
    assert reply.status == 200, reply
    return reply.data


def stored_events(tenant: str, session_id: str, after: int = 0) -> list[dict]:
    from svc_core.data import chat_events_table
    return chat_events_table.after(tenant, session_id, after)


def names(events: list[dict]) -> list[str]:
    return [e["event"] for e in events]


def new_agent(key: str, level: str, **config) -> dict:
    reply = call("agents", "Agents-CreateAgent", token=key, body={
        "name": "Notes", "systemPrompt": "You keep the project's notes.", "config": {"autonomyLevel": level, **config}})
    assert reply.status == 201, reply
    return reply.data


def file_in_bucket(tenant: str, project_id: str, path: str) -> str | None:
    from svc_core.adapters import project_files_bucket
    content = project_files_bucket.get(tenant, project_id, path)
    return None if content is None else content.decode()


def usage_records(tenant: str, message_id: str) -> list[dict]:
    from svc_core.data import usage_table
    return usage_table.records_for(tenant, message_id)


def assert_metered(tenant: str, message: dict, calls: int) -> None:
    """The message's usage is the sum of its usage records, one per model call."""
    records = usage_records(tenant, message["id"])
    assert len(records) == calls and {r["source"] for r in records} == {"message"}
    for name in USAGE_FIELDS:
        assert message["usage"][name] == sum(r[name] for r in records), name


# ---- sessions ------------------------------------------------------------------------------

def test_sessions_are_created_listed_newest_first_read_and_deleted(stack):
    _, key = stack.tenant_with_key()
    project = project_api.create(key, name="Docs")
    agent = new_agent(key, "suggest")
    plain = new_session(key)
    assert set(plain) == SESSION_FIELDS and SESSION_ID.match(plain["id"])
    assert (plain["title"], plain["projectId"], plain["agentId"], plain["lastEventId"], plain["activeTurn"],
            plain["latestTurn"]) == (None, None, None, 0, None, None)
    full = new_session(key, title="  Release notes  ", projectId=project["id"], agentId=agent["id"])
    assert (full["title"], full["projectId"], full["agentId"]) == ("Release notes", project["id"], agent["id"])

    page = api("ListChatSessions", key, query={"limit": "1"})
    assert page.status == 200, page
    assert_envelope(page)
    assert [s["id"] for s in page.data["items"]] == [full["id"]] and page.data["nextCursor"]
    rest = api("ListChatSessions", key, query={"limit": "1", "cursor": page.data["nextCursor"]})
    assert [s["id"] for s in rest.data["items"]] == [plain["id"]]
    bad_cursor = api("ListChatSessions", key, query={"cursor": "not-a-cursor"})
    assert assert_error(bad_cursor, 400, "VALIDATION_ERROR")["fields"][0]["field"] == "cursor"

    detail = read(key, full["id"])
    assert {k: detail[k] for k in SESSION_FIELDS} == full
    assert (detail["messages"], detail["messagesTruncated"]) == ([], False)

    gone = api("DeleteChatSession", key, path_params={"id": plain["id"]})
    assert gone.status == 200 and gone.data == {"id": plain["id"], "deleted": True}, gone
    assert_error(api("GetChatSession", key, path_params={"id": plain["id"]}), 404, "RESOURCE_NOT_FOUND")
    assert [s["id"] for s in api("ListChatSessions", key).data["items"]] == [full["id"]]


def messages(key: str, session_id: str, **query):
    return api("ListChatMessages", key, path_params={"id": session_id}, query=query or None)


def test_a_sessions_messages_are_listed_oldest_first_page_by_page(stack, turns):
    _, key = stack.tenant_with_key()
    session, elsewhere = new_session(key), new_session(key)
    for n in range(3):
        assert send(key, session["id"], f"Message {n}").status == 202
        assert turns.run() == 1
    assert send(key, elsewhere["id"], "Not in the first session").status == 202   # its turn left pending
    stored = read(key, session["id"])["messages"]
    assert [m["role"] for m in stored] == ["user", "assistant"] * 3

    first = messages(key, session["id"], limit="4")
    assert first.status == 200, first
    assert_envelope(first)
    assert first.data["items"] == stored[:4] and first.data["nextCursor"]
    assert all(set(m) == MESSAGE_FIELDS for m in first.data["items"])
    rest = messages(key, session["id"], limit="4", cursor=first.data["nextCursor"])
    assert rest.data == {"items": stored[4:], "nextCursor": None}
    # Pages of two: every message once, oldest first, the user's before the answer to it.
    listed, cursor = [], None
    while True:
        page = messages(key, session["id"], limit="2", **({"cursor": cursor} if cursor else {}))
        assert page.status == 200 and len(page.data["items"]) <= 2, page
        listed += page.data["items"]
        if not (cursor := page.data["nextCursor"]):
            break
    assert [m["id"] for m in listed] == [m["id"] for m in stored] == sorted(m["id"] for m in stored)
    assert [m["content"] for m in listed[::2]] == ["Message 0", "Message 1", "Message 2"]
    assert all(answer["userMessageId"] == asked["id"] for asked, answer in zip(listed[::2], listed[1::2], strict=True))
    assert messages(key, new_session(key)["id"]).data == {"items": [], "nextCursor": None}

    for query, field in (({"cursor": "not-a-cursor"}, "cursor"), ({"limit": "0"}, "limit"),
                         ({"limit": "101"}, "limit")):
        refused = messages(key, session["id"], **query)
        assert assert_error(refused, 400, "VALIDATION_ERROR")["fields"][0]["field"] == field, query


@pytest.mark.parametrize("body, field, status", [
    ({"projectId": MISSING_PROJECT}, "projectId", 409),  # well formed, names nothing: a conflict, not the path's 404
    ({"projectId": "not-an-id"}, "projectId", 400),
    ({"projectId": MISSING_AGENT}, "projectId", 400),    # an agent's id where a project's belongs
    ({"agentId": MISSING_AGENT}, "agentId", 409),
    ({"agentId": "agt_nope"}, "agentId", 400),
    ({"title": "   "}, "title", 400),
    ({"title": "x" * 201}, "title", 400),
    ({"colour": "red"}, "colour", 400),
])
def test_a_session_with_bad_input_is_refused_naming_the_field(stack, body, field, status):
    tenant, key = stack.tenant_with_key()
    reply = api("CreateChatSession", key, body=body)
    details = assert_error(reply, status, "VALIDATION_ERROR" if status == 400 else "CONFLICT")
    assert [f["field"] for f in details["fields"]] == [field], reply
    assert api("ListChatSessions", key).data["items"] == []


def test_unknown_and_malformed_session_ids_are_404_on_every_endpoint(stack):
    _, key = stack.tenant_with_key()
    for session_id in (MISSING_SESSION, "chs_nope", "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA"):
        for reply in (api("GetChatSession", key, path_params={"id": session_id}),
                      messages(key, session_id),
                      api("DeleteChatSession", key, path_params={"id": session_id}),
                      send(key, session_id)):
            assert assert_error(reply, 404, "RESOURCE_NOT_FOUND")["resource"] == "chat_session"


@pytest.mark.parametrize("content", ["", "   \n\t", "x" * 20_001])
def test_an_empty_blank_or_too_long_message_is_refused_and_nothing_is_stored(stack, turns, content):
    _, key = stack.tenant_with_key()
    session = new_session(key)
    reply = send(key, session["id"], content)
    assert assert_error(reply, 400, "VALIDATION_ERROR")["fields"][0]["field"] == "content"
    assert read(key, session["id"])["messages"] == [] and turns.take() == []


def test_a_message_naming_an_unknown_project_is_409_naming_it_and_a_malformed_id_400(stack, turns):
    _, key = stack.tenant_with_key()
    session = new_session(key)
    reply = send(key, session["id"], projectId=MISSING_PROJECT)
    details = assert_error(reply, 409, "CONFLICT")
    assert (details["id"], details["resource"]) == (MISSING_PROJECT, "project")
    assert details["fields"] == [{"field": "projectId", "in": "body", "reason": "names no project of this tenant"}]
    malformed = send(key, session["id"], projectId="proj_nope")
    assert assert_error(malformed, 400, "VALIDATION_ERROR")["fields"][0]["field"] == "projectId"
    assert read(key, session["id"])["messages"] == [] and turns.take() == []


def test_no_turn_starts_when_the_credit_balance_is_used_up(stack, turns):
    from svc_core.domain import billing, billing_ledger
    tenant, key = stack.tenant_with_key()
    session = new_session(key)
    billing.adjust(tenant, -billing_ledger.balance_of(tenant), "used up", "test")
    reply = send(key, session["id"])
    assert assert_error(reply, 402, "PAYMENT_REQUIRED")["balanceMicroCredits"] == 0
    state = read(key, session["id"])
    assert (state["messages"], state["activeTurn"]) == ([], None) and turns.take() == []


def test_the_longest_message_is_accepted(stack, turns):
    _, key = stack.tenant_with_key()
    session = new_session(key)
    reply = send(key, session["id"], "y" * 20_000)
    assert reply.status == 202, reply
    assert reply.data["userMessage"]["content"] == "y" * 20_000


# ---- a turn --------------------------------------------------------------------------------

def test_a_turn_streams_the_offline_answer_into_stored_events_and_the_message(stack, turns):
    tenant, key = stack.tenant_with_key()
    session = new_session(key, title="First")
    reply = send(key, session["id"], "Tell me something about chat sessions.")
    assert reply.status == 202, reply
    assert_envelope(reply)
    user, assistant = reply.data["userMessage"], reply.data["assistantMessage"]
    assert reply.data["streamUrl"] == f"/api/v1/chat/sessions/{session['id']}/stream"
    assert set(user) == MESSAGE_FIELDS and set(assistant) == MESSAGE_FIELDS
    assert MESSAGE_ID.match(user["id"]) and MESSAGE_ID.match(assistant["id"]) and user["id"] < assistant["id"]
    assert (user["role"], user["status"], user["content"]) == ("user", "completed",
                                                               "Tell me something about chat sessions.")
    assert (assistant["role"], assistant["status"], assistant["userMessageId"], assistant["firstEventId"]) == (
        "assistant", "pending", user["id"], 1)
    turn = {"messageId": assistant["id"], "firstEventId": 1}
    before = read(key, session["id"])
    assert (before["activeTurn"], before["latestTurn"], before["lastEventId"]) == (turn, turn, 0)
    assert [m["id"] for m in before["messages"]] == [user["id"], assistant["id"]]

    assert turns.run() == 1
    events = stored_events(tenant, session["id"])
    kinds = names(events)
    assert kinds[0] == "message_start" and kinds[-3:] == ["usage", "message_stop", "done"]
    assert set(kinds[1:-3]) == {"content_delta"} and len(kinds) > 4
    assert [e["id"] for e in events] == list(range(1, len(events) + 1))
    assert all(e["data"]["messageId"] == assistant["id"] for e in events)
    assert events[0]["data"] == {"messageId": assistant["id"], "role": "assistant", "model": "offline",
                                 "userMessageId": user["id"], "offline": True}
    assert events[-2]["data"]["stopReason"] == "end_turn" and events[-1]["data"]["status"] == "completed"

    after = read(key, session["id"])
    answer = after["messages"][-1]
    text = "".join(e["data"]["text"] for e in events if e["event"] == "content_delta")
    assert answer["content"] == text and text.startswith("[offline model]")
    assert (answer["status"], answer["model"], answer["error"], answer["lastEventId"]) == (
        "completed", "offline", None, len(events))
    assert answer["completed_at"] >= answer["created_at"]
    assert answer["usage"] == {k: v for k, v in events[-3]["data"].items() if k != "messageId"}
    assert answer["usage"]["estimated"] is True and answer["usage"]["microCredits"] > 0
    assert_metered(tenant, answer, calls=1)
    assert (after["activeTurn"], after["latestTurn"], after["lastEventId"]) == (None, turn, len(events))


def test_the_next_turn_continues_the_event_ids_and_sends_the_conversation(stack, turns):
    tenant, key = stack.tenant_with_key()
    session = new_session(key)
    first = send(key, session["id"], "One").data
    provider = ScriptedProvider([text_answer("First answer."), text_answer("Second answer.")], model_id=HAIKU)
    with scripted(provider):
        turns.run()
        last = read(key, session["id"])["lastEventId"]
        second = send(key, session["id"], "Two")
        assert second.status == 202, second
        assert second.data["assistantMessage"]["firstEventId"] == last + 1
        turns.run()
    assert provider.requests[1]["messages"] == [
        {"role": "user", "content": [{"text": "One"}]},
        {"role": "assistant", "content": [{"text": "First answer."}]},
        {"role": "user", "content": [{"text": "Two"}]}]
    assert "system" not in provider.requests[1] and "toolConfig" not in provider.requests[1]
    events = stored_events(tenant, session["id"])
    assert [e["id"] for e in events] == list(range(1, len(events) + 1))
    assert names(events).count("done") == 2
    messages = read(key, session["id"])["messages"]
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "One"), ("assistant", "First answer."), ("user", "Two"), ("assistant", "Second answer.")]
    assert messages[1]["id"] == first["assistantMessage"]["id"] and messages[3]["model"] == HAIKU


def test_a_second_message_while_a_turn_is_active_is_409_and_stores_nothing(stack, turns):
    _, key = stack.tenant_with_key()
    session = new_session(key)
    assert send(key, session["id"], "First").status == 202
    again = send(key, session["id"], "Second")
    assert assert_error(again, 409, "CONFLICT")["id"] == session["id"]
    assert len(read(key, session["id"])["messages"]) == 2
    assert len(turns.take()) == 1  # only the first turn was queued
    # a session with a turn in progress is not deleted either
    assert_error(api("DeleteChatSession", key, path_params={"id": session["id"]}), 409, "CONFLICT")


def test_after_the_turn_ends_the_next_message_is_accepted(stack, turns):
    _, key = stack.tenant_with_key()
    session = new_session(key)
    assert send(key, session["id"], "First").status == 202
    assert_error(send(key, session["id"], "Second"), 409, "CONFLICT")
    turns.run()
    assert send(key, session["id"], "Second").status == 202
    turns.run()
    assert [m["status"] for m in read(key, session["id"])["messages"]] == ["completed"] * 4


def test_a_message_may_name_the_project_of_its_turn(stack, turns):
    _, key = stack.tenant_with_key()
    project = project_api.create(key, name="Docs")
    session = new_session(key)
    reply = send(key, session["id"], projectId=project["id"])
    assert reply.status == 202, reply
    assert reply.data["userMessage"]["projectId"] == project["id"]
    assert reply.data["assistantMessage"]["projectId"] == project["id"]
    assert read(key, session["id"])["projectId"] is None   # the session keeps its own


# ---- agent sessions ------------------------------------------------------------------------

WRITE = tool_answer("write_file", {"path": "docs/notes.md", "content": "hello"})


def agent_session(stack, level: str):
    tenant, key = stack.tenant_with_key()
    project = project_api.create(key, name="Docs")
    agent = new_agent(key, level)
    session = new_session(key, projectId=project["id"], agentId=agent["id"])
    return tenant, key, project["id"], session


def test_an_autonomous_agent_session_runs_the_tool_and_streams_its_use(stack, turns):
    tenant, key, project_id, session = agent_session(stack, "autonomous")
    provider = ScriptedProvider([WRITE, text_answer("Wrote the notes.", 20, 7)], model_id=HAIKU)
    assert send(key, session["id"], "Write the notes.").status == 202
    with scripted(provider):
        turns.run()
    events = stored_events(tenant, session["id"])
    assert names(events)[0] == "message_start" and names(events)[-3:] == ["usage", "message_stop", "done"]
    tool_use = next(e["data"] for e in events if e["event"] == "tool_use")
    tool_result = next(e["data"] for e in events if e["event"] == "tool_result")
    assert names(events).index("tool_use") < names(events).index("tool_result")
    assert {k: tool_use[k] for k in ("toolUseId", "name", "input")} == {
        "toolUseId": "tooluse_1", "name": "write_file", "input": {"path": "docs/notes.md", "content": "hello"}}
    assert (tool_result["name"], tool_result["status"], tool_result["result"]) == (
        "write_file", "success", "wrote docs/notes.md (5 bytes)")
    assert file_in_bucket(tenant, project_id, "docs/notes.md") == "hello"
    first, second = provider.requests
    assert "You keep the project's notes." in first["system"][0]["text"]
    assert "write_file" in [t["toolSpec"]["name"] for t in first["toolConfig"]["tools"]]
    assert second["messages"][-1]["content"][0]["toolResult"]["status"] == "success"
    answer = read(key, session["id"])["messages"][-1]
    assert answer["status"] == "completed" and answer["content"].endswith("Wrote the notes.")
    assert_metered(tenant, answer, calls=2)
    assert (answer["usage"]["inputTokens"], answer["usage"]["outputTokens"]) == (30, 12)


@pytest.mark.parametrize("level", ["suggest", "supervised"])
def test_a_non_autonomous_agent_session_proposes_the_change_and_writes_nothing(stack, turns, level):
    tenant, key, project_id, session = agent_session(stack, level)
    provider = ScriptedProvider([WRITE, text_answer("I proposed the notes.")], model_id=HAIKU)
    send(key, session["id"], "Write the notes.")
    with scripted(provider):
        turns.run()
    events = stored_events(tenant, session["id"])
    result = next(e["data"] for e in events if e["event"] == "tool_result")
    assert (result["status"], result["result"]) == ("proposed", "write_file docs/notes.md (5 bytes)")
    assert file_in_bucket(tenant, project_id, "docs/notes.md") is None
    told = provider.requests[1]["messages"][-1]["content"][0]["toolResult"]["content"][0]["text"]
    assert told.startswith("Not applied")
    assert read(key, session["id"])["messages"][-1]["status"] == "completed"


def test_tools_that_only_read_run_for_a_suggest_agent(stack, turns):
    tenant, key, project_id, session = agent_session(stack, "suggest")
    provider = ScriptedProvider([tool_answer("read_project", {}), text_answer("It is Docs.")], model_id=HAIKU)
    send(key, session["id"], "What project is this?")
    with scripted(provider):
        turns.run()
    result = next(e["data"] for e in stored_events(tenant, session["id"]) if e["event"] == "tool_result")
    assert result["status"] == "success" and json.loads(result["result"])["id"] == project_id


def test_the_agents_step_limit_ends_the_turn(stack, turns):
    tenant, key = stack.tenant_with_key()
    project = project_api.create(key, name="Docs")
    agent = new_agent(key, "autonomous", stepLimit=2)
    session = new_session(key, projectId=project["id"], agentId=agent["id"])
    provider = ScriptedProvider([tool_answer("list_files", {}), tool_answer("list_files", {}, "tooluse_2")],
                                model_id=HAIKU)
    send(key, session["id"], "List forever.")
    with scripted(provider):
        turns.run()
    events = stored_events(tenant, session["id"])
    assert provider.remaining == 0 and names(events).count("tool_use") == 1
    assert events[-2]["data"]["stopReason"] == "step_limit" and events[-1]["data"]["status"] == "completed"
    assert_metered(tenant, read(key, session["id"])["messages"][-1], calls=2)


def test_an_agent_session_with_the_offline_model_writes_a_file(stack, turns):
    tenant, key, project_id, session = agent_session(stack, "autonomous")
    send(key, session["id"], "Please write the file notes.md")
    turns.run()
    kinds = names(stored_events(tenant, session["id"]))
    assert "tool_use" in kinds and "tool_result" in kinds and kinds[-1] == "done"
    assert file_in_bucket(tenant, project_id, "notes.md") is not None


# ---- failures ------------------------------------------------------------------------------

def test_a_model_failure_mid_turn_ends_it_failed_with_the_usage_so_far(stack, turns):
    tenant, key, _, session = agent_session(stack, "autonomous")
    provider = ScriptedProvider([WRITE, ModelThrottled()], model_id=HAIKU)
    send(key, session["id"], "Write the notes.")
    with scripted(provider):
        turns.run()
    events = stored_events(tenant, session["id"])
    assert names(events)[-3:] == ["usage", "error", "done"] and "message_stop" not in names(events)
    assert events[-2]["data"]["code"] == "MODEL_THROTTLED" and events[-1]["data"]["status"] == "failed"
    assert events[-2]["data"]["retryAfterSeconds"] == 10   # the provider's wait (it said none here)
    answer = read(key, session["id"])["messages"][-1]
    assert answer["status"] == "failed" and answer["error"]["code"] == "MODEL_THROTTLED"
    assert answer["error"]["retryAfterSeconds"] == 10
    assert answer["usage"]["inputTokens"] == 10 and answer["usage"]["microCredits"] > 0
    assert_metered(tenant, answer, calls=1)
    # the session is free again
    assert read(key, session["id"])["activeTurn"] is None
    assert send(key, session["id"], "Again").status == 202


class BreaksMidStream:
    """A provider whose stream sends some text, then fails as Bedrock's stream can."""
    name, model_id = "scripted", HAIKU

    def converse_stream(self, request):
        result = ScriptedProvider([text_answer("Partial answer that stops")], HAIKU).converse(request)
        for event in events_of(result, 6):
            if "messageStop" in event:
                raise ModelUnavailable()
            yield event


def test_a_stream_that_breaks_keeps_the_text_so_far_and_fails_the_message(stack, turns):
    tenant, key = stack.tenant_with_key()
    session = new_session(key)
    send(key, session["id"])
    with scripted(BreaksMidStream()):
        turns.run()
    events = stored_events(tenant, session["id"])
    assert names(events)[-2:] == ["error", "done"] and "content_delta" in names(events)
    answer = read(key, session["id"])["messages"][-1]
    assert (answer["status"], answer["error"]["code"], answer["content"]) == (
        "failed", "MODEL_UNAVAILABLE", "Partial answer that stops")
    assert usage_records(tenant, answer["id"]) == []   # the call never reported its usage


def test_a_turn_that_cannot_be_queued_is_taken_back_whole(stack, turns, monkeypatch):
    from svc_core.data import chat_turn_queue
    _, key = stack.tenant_with_key()
    session = new_session(key)
    assert send(key, session["id"], "First").status == 202
    turns.run()
    before = read(key, session["id"])

    def refuse(*_args):
        raise RuntimeError("queue down")
    monkeypatch.setattr(chat_turn_queue, "send", refuse)
    reply = send(key, session["id"], "Second")
    assert_error(reply, 500, "INTERNAL_ERROR")
    assert "queue down" not in reply.text
    assert read(key, session["id"]) == before
    monkeypatch.undo()
    assert send(key, session["id"], "Second").status == 202


# ---- redelivery and crashes ----------------------------------------------------------------

def test_a_redelivered_finished_turn_does_nothing(stack, turns):
    tenant, key = stack.tenant_with_key()
    session = new_session(key)
    started = send(key, session["id"]).data
    body = {"tenantId": tenant, "sessionId": session["id"], "messageId": started["assistantMessage"]["id"]}
    turns.run()
    events, state = stored_events(tenant, session["id"]), read(key, session["id"])
    assert turns.deliver(body) == {"batchItemFailures": []}
    assert stored_events(tenant, session["id"]) == events and read(key, session["id"]) == state
    assert len(usage_records(tenant, body["messageId"])) == 1


def crash_mid_turn(tenant: str, key: str, turns, started_seconds_ago: float):
    """A turn a worker took and streamed part of, then vanished: the message `streaming`, two events stored."""
    from svc_core.data import chat_events_table, chat_messages_table
    session = new_session(key)
    started = send(key, session["id"]).data
    turns.take()
    message_id = started["assistantMessage"]["id"]
    chat_messages_table.start(tenant, session["id"], message_id,
                              timeutil.iso(timeutil.now() - started_seconds_ago), "offline")
    chat_events_table.append(tenant, session["id"], [
        {"id": 1, "event": "message_start", "data": {"messageId": message_id, "role": "assistant", "model": "offline",
                                                     "userMessageId": started["userMessage"]["id"], "offline": True}},
        {"id": 2, "event": "content_delta", "data": {"messageId": message_id, "text": "Half an "}}])
    return session, {"tenantId": tenant, "sessionId": session["id"], "messageId": message_id}


def test_a_turn_abandoned_by_a_crashed_worker_is_finished_failed(stack, turns):
    tenant, key = stack.tenant_with_key()
    session, body = crash_mid_turn(tenant, key, turns, started_seconds_ago=400)
    assert turns.deliver(body) == {"batchItemFailures": []}
    events = stored_events(tenant, session["id"])
    assert names(events) == ["message_start", "content_delta", "usage", "error", "done"]
    assert [e["id"] for e in events] == [1, 2, 3, 4, 5]
    assert events[3]["data"]["code"] == "INTERNAL_ERROR" and events[4]["data"]["status"] == "failed"
    state = read(key, session["id"])
    answer = state["messages"][-1]
    assert (answer["status"], answer["content"], answer["lastEventId"]) == ("failed", "Half an ", 5)
    assert (state["activeTurn"], state["lastEventId"]) == (None, 5)


def test_a_turn_another_worker_holds_is_left_to_it_and_retried_later(stack, turns):
    tenant, key = stack.tenant_with_key()
    session, body = crash_mid_turn(tenant, key, turns, started_seconds_ago=1)
    answer = turns.deliver(body)
    assert answer == {"batchItemFailures": [{"itemIdentifier": "redelivered-1"}]}
    assert len(stored_events(tenant, session["id"])) == 2
    assert read(key, session["id"])["messages"][-1]["status"] == "streaming"


def test_a_turn_still_pending_on_its_last_delivery_is_finished_failed(stack, turns):
    tenant, key = stack.tenant_with_key()
    session = new_session(key)
    started = send(key, session["id"]).data
    turns.take()
    body = {"tenantId": tenant, "sessionId": session["id"], "messageId": started["assistantMessage"]["id"]}
    assert turns.deliver(body, receive_count=3) == {"batchItemFailures": []}
    assert names(stored_events(tenant, session["id"])) == ["message_start", "usage", "error", "done"]
    state = read(key, session["id"])
    assert state["messages"][-1]["status"] == "failed" and state["activeTurn"] is None


# ---- tenants and scopes --------------------------------------------------------------------

def test_another_tenants_session_is_404_on_every_endpoint(stack, turns):
    _, key = stack.tenant_with_key()
    _, other = stack.tenant_with_key()
    project = project_api.create(key, name="Mine")
    agent = new_agent(key, "suggest")
    session = new_session(key, projectId=project["id"], agentId=agent["id"])
    assert send(key, session["id"]).status == 202   # a message the other tenant must not see
    for reply in (api("GetChatSession", other, path_params={"id": session["id"]}),
                  messages(other, session["id"]),
                  api("DeleteChatSession", other, path_params={"id": session["id"]}),
                  send(other, session["id"])):
        assert assert_error(reply, 404, "RESOURCE_NOT_FOUND") == {"id": session["id"], "resource": "chat_session"}
    assert api("ListChatSessions", other).data["items"] == []
    # nor may the other tenant name this tenant's project or agent (answered as one that never was)
    for body, field in (({"projectId": project["id"]}, "projectId"), ({"agentId": agent["id"]}, "agentId")):
        refused = api("CreateChatSession", other, body=body)
        assert assert_error(refused, 409, "CONFLICT")["fields"][0]["field"] == field
    mine = new_session(other)
    refused = send(other, mine["id"], projectId=project["id"])
    assert assert_error(refused, 409, "CONFLICT")["fields"][0]["field"] == "projectId"
    assert len(read(key, session["id"])["messages"]) == 2 and len(turns.take()) == 1


def test_reading_needs_chat_read_and_writing_chat_write(stack):
    tenant, _ = stack.tenant_with_key()
    reader = stack.new_key(tenant, ["chat:read"])["key"]
    writer = stack.new_key(tenant, ["chat:write"])["key"]
    session = new_session(writer)
    assert api("GetChatSession", reader, path_params={"id": session["id"]}).status == 200
    assert messages(reader, session["id"]).status == 200
    assert_error(api("CreateChatSession", reader, body={}), 403, "FORBIDDEN")
    assert_error(send(reader, session["id"]), 403, "FORBIDDEN")
    assert_error(api("ListChatSessions", writer), 403, "FORBIDDEN")
    assert assert_error(messages(writer, session["id"]), 403, "FORBIDDEN")["requiredScope"] == "chat:read"


# ---- on DynamoDB Local (AWS's own engine: expressions, transactions, conditions) ----------------

def test_on_dynamodb_local_one_of_concurrent_messages_wins_and_its_turn_completes(stack, atomic_stack, turns):
    from concurrent.futures import ThreadPoolExecutor
    tenant, key = stack.tenant_with_key()
    session = new_session(key)
    with ThreadPoolExecutor(max_workers=8) as pool:
        replies = list(pool.map(lambda i: send(key, session["id"], f"Message {i}"), range(8)))
    assert sorted(r.status for r in replies) == [202] + [409] * 7, replies
    assert len(read(key, session["id"])["messages"]) == 2
    assert turns.run() == 1
    state = read(key, session["id"])
    events = stored_events(tenant, session["id"])
    assert names(events)[-1] == "done" and state["lastEventId"] == len(events) and state["activeTurn"] is None
    assert state["messages"][1]["status"] == "completed"
    assert_metered(tenant, state["messages"][1], calls=1)
    assert send(key, session["id"], "Next").status == 202


def test_a_deleted_sessions_messages_and_events_are_deleted_by_the_cleanup_its_stream_drives(stack, turns):
    from svc_core.data import chat_events_table, chat_messages_table
    from svc_core.platform.config import settings
    from tests.support.streams import removal_event
    ((function, props),) = [(f, p) for t, f, p in Resolver({}).stream_subscriptions() if t == "ChatSessionsTable"]
    assert function == "ChatCleanupFunction"
    filtered = [json.loads(f["Pattern"])["eventName"] for f in props["FilterCriteria"]["Filters"]]
    assert filtered == [["REMOVE"]]
    tenant, key = stack.tenant_with_key()
    gone, kept = new_session(key), new_session(key)
    for session in (gone, kept):
        assert send(key, session["id"]).status == 202
    assert turns.run() == 2
    # More events than one batch of deletes (25) and one page of the stream's reads.
    chat_events_table.append(tenant, gone["id"], [
        {"id": 1000 + i, "event": "content_delta", "data": {"messageId": "msg_x", "text": str(i)}} for i in range(60)])
    assert api("DeleteChatSession", key, path_params={"id": gone["id"]}).status == 200
    assert stored_events(tenant, gone["id"]) != []   # the request removed the session item only

    event = removal_event(settings().chat_sessions_table, "id", gone["id"], filtered[0])
    handler = load_function("chat_cleanup").lambda_handler
    assert handler(event, None) == {"batchItemFailures": []}
    assert stored_events(tenant, gone["id"]) == []
    assert chat_messages_table.newest(tenant, gone["id"], 100) == ([], False)
    # The other session is untouched, and a record handed over again does no harm.
    assert [m["role"] for m in read(key, kept["id"])["messages"]] == ["user", "assistant"]
    assert names(stored_events(tenant, kept["id"]))[-1] == "done"
    assert handler(event, None) == {"batchItemFailures": []}


def test_after_a_fallback_the_stream_the_message_and_the_usage_name_the_model_that_answered(stack, turns):
    from svc_core.adapters.models.registry import WithFallback
    tenant, key = stack.tenant_with_key()
    session = new_session(key)
    send(key, session["id"])
    fallback_model = "anthropic.claude-sonnet-4-5-20250929-v1:0"
    provider = WithFallback(ScriptedProvider([ModelUnavailable(details={"reason": "service_error"})], HAIKU),
                            ScriptedProvider([text_answer("From the fallback.")], fallback_model))
    with scripted(provider):
        turns.run()
    events = stored_events(tenant, session["id"])
    assert events[0]["event"] == "message_start" and events[0]["data"]["model"] == fallback_model, events[0]
    answer = read(key, session["id"])["messages"][-1]
    assert (answer["status"], answer["model"]) == ("completed", fallback_model)
    assert [r["model"] for r in usage_records(tenant, answer["id"])] == [fallback_model]
