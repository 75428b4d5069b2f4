"""Agents end to end: the handler fed real API Gateway events, on the moto server.

Create (defaults filled in, every field), list (newest first, paged), read, change (only the
fields sent; config merged, null resetting a config field to its default), delete; bad input
refused naming the field with nothing stored; scopes; other methods; another tenant's ids and
credentials answered as missing on every endpoint, with nothing changed.
"""

from __future__ import annotations

import base64
import json
import re

import pytest

from svc_core.contracts.cursors import id_cursor
from svc_core.domain import agent_tools
from tests.support.functions import call
from tests.support.projects import assert_envelope, assert_error
from tests.support.stack import provisioned_stack

AGENT_ID = re.compile(r"^agt_[0-9A-HJKMNP-TV-Z]{26}$")
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
FIELDS = {"id", "name", "systemPrompt", "config", "created_at", "updated_at"}
CONFIG_FIELDS = {"autonomyLevel", "model", "stepLimit", "tools"}
ALL_TOOLS = ["read_project", "list_files", "read_file", "write_file", "read_secret"]
MISSING_ID = "agt_01JD2Q7ZB6V8S3K4X9W2M5N7PA"
SONNET = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"  # in the template's default ModelAllowedIds
PROMPT = "You write release notes from the project's changes."


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


# ---- calling the service -----------------------------------------------------------------

def api(event: str, token: str, **kwargs):
    return call("agents", f"Agents-{event}", token=token, **kwargs)


def body_of(**fields) -> dict:
    return {"name": "Writer", "systemPrompt": PROMPT, "config": {"autonomyLevel": "suggest"}, **fields}


def create(token, body):
    return api("CreateAgent", token, body=body)


def made(token, **fields) -> dict:
    reply = create(token, body_of(**fields))
    assert reply.status == 201, reply
    return reply.data


def get(token, agent_id):
    return api("GetAgent", token, path_params={"id": agent_id})


def patch(token, agent_id, body=None, **kwargs):
    return api("UpdateAgent", token, path_params={"id": agent_id}, body=body, **kwargs)


def delete(token, agent_id):
    return api("DeleteAgent", token, path_params={"id": agent_id})


def listed(token, **query):
    return api("ListAgents", token, query={k: str(v) for k, v in query.items()} or None)


def fields_of(reply) -> list[str]:
    return [f["field"] for f in assert_error(reply, 400, "VALIDATION_ERROR")["fields"]]


def items(*tenant_ids: str) -> list[dict]:
    """Every item of these tenants in the agents table, as stored (attribute-value JSON)."""
    from svc_core.adapters import aws
    from svc_core.platform.config import settings
    found = []
    for tenant_id in tenant_ids:
        pages = aws.client("dynamodb").get_paginator("query").paginate(
            TableName=settings().agents_table, ConsistentRead=True, KeyConditionExpression="tenantId = :t",
            ExpressionAttributeValues={":t": {"S": tenant_id}})
        found += [i for page in pages for i in page["Items"]]
    return found


def snapshot(*tenant_ids: str) -> list[str]:
    return sorted(json.dumps(i, sort_keys=True) for i in items(*tenant_ids))


def old_form(position) -> str:
    """A cursor as this service once made them (base64url of JSON): no longer of the pattern."""
    return base64.urlsafe_b64encode(json.dumps(position).encode()).rstrip(b"=").decode()


# ---- create and read ---------------------------------------------------------------------

def test_create_fills_in_the_config_defaults_and_stores_the_agent(stack):
    from svc_core.adapters.dynamo import from_item
    tenant, key = stack.tenant_with_key()
    reply = create(key, body_of(name="  Writer  "))
    assert reply.status == 201, reply
    assert_envelope(reply)
    agent = reply.data
    assert set(agent) == FIELDS and AGENT_ID.match(agent["id"])
    assert (agent["name"], agent["systemPrompt"]) == ("Writer", PROMPT)
    assert agent["config"] == {"autonomyLevel": "suggest", "model": None, "stepLimit": 8, "tools": ALL_TOOLS}
    assert ISO_UTC.match(agent["created_at"]) and agent["updated_at"] == agent["created_at"]
    [stored] = [from_item(i) for i in items(tenant)]
    assert stored == {"tenantId": tenant, "id": agent["id"], "name": "Writer", "systemPrompt": PROMPT,
                      "config": {"autonomyLevel": "suggest", "stepLimit": 8, "tools": ALL_TOOLS},
                      "created_at": agent["created_at"], "updated_at": agent["updated_at"]}
    again = get(key, agent["id"])
    assert again.status == 200 and again.data == agent
    assert list(agent_tools.TOOL_NAMES) == ALL_TOOLS


def test_create_with_every_field_at_its_limits(stack):
    _, key = stack.tenant_with_key()
    prompt = "  Keep the leading spaces.\n" + "p" * (20_000 - 27)
    agent = made(key, name="n" * 200, systemPrompt=prompt,
                 config={"autonomyLevel": "supervised", "model": SONNET, "stepLimit": 25,
                         "tools": ["write_file", "read_project"]})
    assert agent["name"] == "n" * 200 and agent["systemPrompt"] == prompt and len(prompt) == 20_000
    # tools are answered in the catalogue's order
    assert agent["config"] == {"autonomyLevel": "supervised", "model": SONNET, "stepLimit": 25,
                               "tools": ["read_project", "write_file"]}
    assert get(key, agent["id"]).data == agent
    other = made(key, config={"autonomyLevel": "autonomous", "model": None, "stepLimit": 1, "tools": []})
    assert other["config"] == {"autonomyLevel": "autonomous", "model": None, "stepLimit": 1, "tools": []}
    default_model = stack.environment["MODEL_ID"]
    assert made(key, config={"autonomyLevel": "suggest", "model": default_model, "stepLimit": 3.0}
                )["config"]["model"] == default_model


def test_a_missing_agent_is_404_with_its_id(stack):
    _, key = stack.tenant_with_key()
    assert assert_error(get(key, MISSING_ID), 404, "RESOURCE_NOT_FOUND") == {"id": MISSING_ID, "resource": "agent"}


# ---- lists -------------------------------------------------------------------------------

def test_the_list_pages_newest_first_and_refuses_cursors_off_the_pattern(stack):
    _, key = stack.tenant_with_key()
    assert listed(key).data == {"items": [], "nextCursor": None}
    created = [made(key, name=f"a{i}") for i in range(5)]
    newest_first = [a["id"] for a in reversed(created)]
    assert listed(key).data == {"items": list(reversed(created)), "nextCursor": None}
    pages, cursor = [], None
    while True:
        reply = listed(key, limit=2, **({"cursor": cursor} if cursor else {}))
        assert reply.status == 200, reply
        assert all(set(a) == FIELDS and set(a["config"]) == CONFIG_FIELDS for a in reply.data["items"])
        pages.append([a["id"] for a in reply.data["items"]])
        cursor = reply.data["nextCursor"]
        if cursor is None:
            break
        assert not any(i in cursor for i in newest_first)  # opaque
    assert [len(p) for p in pages] == [2, 2, 1] and [i for p in pages for i in p] == newest_first
    for bad in ("bm90LWEtY3Vyc29y", old_form({"after": "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA"}), old_form(["x"])):
        assert fields_of(listed(key, cursor=bad)) == ["cursor"]
    for limit in (0, 101, "x"):
        assert fields_of(listed(key, limit=limit)) == ["limit"]


# ---- change and delete -------------------------------------------------------------------

def test_patch_changes_only_the_fields_sent_and_merges_the_config(stack):
    tenant, key = stack.tenant_with_key()
    agent = made(key, config={"autonomyLevel": "supervised", "model": SONNET, "stepLimit": 12,
                              "tools": ["read_file", "write_file"]})

    renamed = patch(key, agent["id"], {"name": "Reviewer"})
    assert renamed.status == 200, renamed
    assert renamed.data == {**agent, "name": "Reviewer", "updated_at": renamed.data["updated_at"]}
    assert renamed.data["updated_at"] > agent["updated_at"]

    # config is merged: only autonomyLevel changes, the model, step limit and tools stay
    merged = patch(key, agent["id"], {"systemPrompt": "Review.", "config": {"autonomyLevel": "autonomous"}})
    assert merged.status == 200, merged
    assert merged.data == {**renamed.data, "systemPrompt": "Review.", "updated_at": merged.data["updated_at"],
                           "config": {**agent["config"], "autonomyLevel": "autonomous"}}
    assert merged.data["updated_at"] > renamed.data["updated_at"]

    # in config, null resets a field to its default
    reset = patch(key, agent["id"], {"config": {"model": None, "stepLimit": None, "tools": None}})
    assert reset.status == 200, reset
    assert reset.data["config"] == {"autonomyLevel": "autonomous", "model": None, "stepLimit": 8,
                                    "tools": ALL_TOOLS}
    changed = patch(key, agent["id"], {"config": {"tools": ["read_secret", "list_files"], "stepLimit": 2,
                                                  "model": SONNET}})
    assert changed.data["config"] == {"autonomyLevel": "autonomous", "model": SONNET, "stepLimit": 2,
                                      "tools": ["list_files", "read_secret"]}
    assert changed.data["created_at"] == agent["created_at"] and changed.data["name"] == "Reviewer"
    assert get(key, agent["id"]).data == changed.data
    assert listed(key).data["items"] == [changed.data]
    assert len(items(tenant)) == 1


BAD_PATCHES = [
    ({}, "body"), ({"name": None}, "name"), ({"systemPrompt": None}, "systemPrompt"), ({"config": None}, "config"),
    ({"config": {}}, "config"), ({"config": {"autonomyLevel": "Suggest"}}, "config.autonomyLevel"),
    ({"config": {"autonomyLevel": "reckless"}}, "config.autonomyLevel"), ({"name": " "}, "name"),
    ({"config": {"tools": ["rm_rf"]}}, "config.tools.0"), ({"config": {"stepLimit": 26}}, "config.stepLimit"),
    ({"config": {"model": "gpt-4o"}}, "config.model"), ({"systemPrompt": "s" * 20_001}, "systemPrompt"),
    ({"config": {"temperature": 0.2}}, "config.temperature"), ({"owner": "me"}, "owner"), (["name"], "body"),
]


def test_bad_patch_bodies_are_400_naming_the_field_and_change_nothing(stack):
    # One tenant for every case (a tenant and key per case would cost more than the cases).
    tenant, key = stack.tenant_with_key()
    agent = made(key, config={"autonomyLevel": "supervised", "stepLimit": 4})
    before = snapshot(tenant)
    for body, field in BAD_PATCHES:
        assert field in fields_of(patch(key, agent["id"], body)), (body, field)
        assert snapshot(tenant) == before, body
    assert get(key, agent["id"]).data == agent


def test_delete_answers_in_the_envelope_then_the_agent_is_gone(stack):
    tenant, key = stack.tenant_with_key()
    keep, agent = made(key, name="keep"), made(key, name="gone")
    reply = delete(key, agent["id"])
    assert reply.status == 200, reply
    assert_envelope(reply)
    assert reply.data == {"id": agent["id"], "deleted": True}
    for answer in (get(key, agent["id"]), patch(key, agent["id"], {"name": "x"}), delete(key, agent["id"])):
        assert assert_error(answer, 404, "RESOURCE_NOT_FOUND") == {"id": agent["id"], "resource": "agent"}
    assert listed(key).data["items"] == [keep]
    assert len(items(tenant)) == 1


def test_a_lost_update_is_409_and_leaves_the_concurrent_version(stack, monkeypatch):
    from svc_core.data import agents_table
    from svc_core.platform.config import settings
    tenant, key = stack.tenant_with_key()
    agent = made(key)
    real_replace = agents_table.replace

    def concurrent_writer_first(tenant_id, updated, seen):
        # Another request commits its version between this one's read and its write.
        stack.client("dynamodb").update_item(
            TableName=settings().agents_table, Key={"tenantId": {"S": tenant_id}, "id": {"S": agent["id"]}},
            UpdateExpression="SET #n = :n, updated_at = :u", ExpressionAttributeNames={"#n": "name"},
            ExpressionAttributeValues={":n": {"S": "Other"}, ":u": {"S": "2999-01-01T00:00:00.000Z"}})
        return real_replace(tenant_id, updated, seen)

    monkeypatch.setattr(agents_table, "replace", concurrent_writer_first)
    assert assert_error(patch(key, agent["id"], {"name": "Mine"}), 409, "CONFLICT") == {"id": agent["id"]}
    assert get(key, agent["id"]).data["name"] == "Other"

    real_delete = agents_table.delete

    def concurrent_change_first(tenant_id, agent_id, seen):
        stack.client("dynamodb").update_item(
            TableName=settings().agents_table, Key={"tenantId": {"S": tenant_id}, "id": {"S": agent_id}},
            UpdateExpression="SET updated_at = :u", ExpressionAttributeValues={":u": {"S": "2999-01-02T00:00:00.000Z"}})
        return real_delete(tenant_id, agent_id, seen)

    monkeypatch.setattr(agents_table, "delete", concurrent_change_first)
    assert assert_error(delete(key, agent["id"]), 409, "CONFLICT") == {"id": agent["id"]}
    assert len(items(tenant)) == 1


# ---- bad input: refused naming the field, nothing stored ---------------------------------

BAD_CREATES = [
    (body_of(config={"autonomyLevel": "reckless"}), "config.autonomyLevel"),
    (body_of(config={"autonomyLevel": "Suggest"}), "config.autonomyLevel"),
    (body_of(config=None), "config"),
    (body_of(config={"autonomyLevel": "suggest", "tools": ["read_file", "rm_rf"]}), "config.tools.1"),
    (body_of(config={"autonomyLevel": "suggest", "tools": ["read_file", "read_file"]}), "config.tools"),
    (body_of(config={"autonomyLevel": "suggest", "tools": "read_file"}), "config.tools"),
    (body_of(config={"autonomyLevel": "suggest", "stepLimit": 0}), "config.stepLimit"),
    (body_of(config={"autonomyLevel": "suggest", "stepLimit": 26}), "config.stepLimit"),
    (body_of(config={"autonomyLevel": "suggest", "stepLimit": "8"}), "config.stepLimit"),
    (body_of(config={"autonomyLevel": "suggest", "stepLimit": True}), "config.stepLimit"),
    (body_of(config={"autonomyLevel": "suggest", "stepLimit": 2.5}), "config.stepLimit"),
    (body_of(config={"autonomyLevel": "suggest", "model": "gpt-4o"}), "config.model"),
    (body_of(config={"autonomyLevel": "suggest", "model": ""}), "config.model"),
    (body_of(config={"autonomyLevel": "suggest", "temperature": 0.2}), "config.temperature"),
    (body_of(config="suggest"), "config"),
    (body_of(name=""), "name"), (body_of(name="   "), "name"), (body_of(name="x" * 201), "name"),
    (body_of(name=7), "name"), ({"systemPrompt": PROMPT, "config": {"autonomyLevel": "suggest"}}, "name"),
    (body_of(systemPrompt="s" * 20_001), "systemPrompt"), (body_of(systemPrompt=""), "systemPrompt"),
    (body_of(systemPrompt="\n\t "), "systemPrompt"), ({"name": "Writer", "config": {"autonomyLevel": "suggest"}},
                                                      "systemPrompt"),
    (body_of(owner="me"), "owner"), (["name"], "body"),
    (body_of(name="Wri\x00ter"), "name"), (body_of(name="\u202eretirW"), "name"), (body_of(name="W\u2066x"), "name"),
]


@pytest.mark.parametrize("config", [None, {}, {"autonomyLevel": None, "stepLimit": None, "tools": None}],
                         ids=["left-out", "empty", "nulls"])
def test_config_fields_left_out_take_their_documented_defaults(stack, config):
    tenant, key = stack.tenant_with_key()
    body = {"name": "Writer", "systemPrompt": PROMPT, **({} if config is None else {"config": config})}
    reply = create(key, body)
    assert reply.status == 201, reply
    assert reply.data["config"] == {"autonomyLevel": "suggest", "model": None, "stepLimit": 8,
                                    "tools": ["read_project", "list_files", "read_file", "write_file", "read_secret"]}
    assert get(key, reply.data["id"]).data == reply.data


def test_bad_create_bodies_are_400_naming_the_field_and_store_nothing(stack):
    tenant, key = stack.tenant_with_key()
    for body, field in BAD_CREATES:
        assert field in fields_of(create(key, body)), (body, field)
        assert items(tenant) == [], body


def test_an_unknown_model_names_config_model_and_the_allowed_ones(stack):
    tenant, key = stack.tenant_with_key()
    [problem] = assert_error(create(key, body_of(config={"autonomyLevel": "suggest", "model": "gpt-4o"})),
                             400, "VALIDATION_ERROR")["fields"]
    assert problem["field"] == "config.model" and problem["in"] == "body"
    assert stack.environment["MODEL_ID"] in problem["reason"] and SONNET in problem["reason"]
    assert items(tenant) == []


def test_text_that_is_not_unicode_is_400_not_a_server_error(stack):
    tenant, key = stack.tenant_with_key()
    raw = '{"name": "W", "systemPrompt": "bad \\ud800 half", "config": {"autonomyLevel": "suggest"}}'
    assert fields_of(api("CreateAgent", key, raw_body=raw)) == ["systemPrompt"]
    assert items(tenant) == []


@pytest.mark.parametrize("bad_id", ["agt_123", "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA", "..%2F..",
                                    "AGT_01JD2Q7ZB6V8S3K4X9W2M5N7PA", "agt_01jd2q7zb6v8s3k4x9w2m5n7pa"])
def test_a_malformed_id_is_404_with_that_id(stack, bad_id):
    tenant, key = stack.tenant_with_key()
    made(key)
    before = snapshot(tenant)
    for reply in (get(key, bad_id), patch(key, bad_id, {"name": "x"}), delete(key, bad_id)):
        assert assert_error(reply, 404, "RESOURCE_NOT_FOUND")["id"] == bad_id
    assert snapshot(tenant) == before


# ---- tenants, scopes, methods ------------------------------------------------------------

def test_another_tenants_agent_is_exactly_a_missing_one_on_every_endpoint(stack):
    tenant_a, key_a = stack.tenant_with_key()
    tenant_b, key_b = stack.tenant_with_key()
    theirs = made(key_a, name="A's agent", systemPrompt="private prompt")
    mine = made(key_b, name="B's agent")
    before = snapshot(tenant_a, tenant_b)
    attempts = (lambda aid: get(key_b, aid), lambda aid: patch(key_b, aid, {"name": "hijacked"}),
                lambda aid: patch(key_b, aid, {"config": {"autonomyLevel": "autonomous"}}),
                lambda aid: delete(key_b, aid))
    for attempt in attempts:
        foreign, missing = attempt(theirs["id"]), attempt(MISSING_ID)
        assert assert_error(foreign, 404, "RESOURCE_NOT_FOUND") == {"id": theirs["id"], "resource": "agent"}
        assert json.loads(json.dumps(missing.error).replace(MISSING_ID, theirs["id"])) == foreign.error
        assert "A's agent" not in foreign.text and "private prompt" not in foreign.text
    assert snapshot(tenant_a, tenant_b) == before
    assert listed(key_b).data == {"items": [mine], "nextCursor": None}
    # Cursors made by B, one from A's agent, are positions in B's agents only.
    for position in ("agt_7" + "Z" * 25, theirs["id"]):
        reply = listed(key_b, cursor=id_cursor(position))
        assert reply.status == 200 and "A's agent" not in reply.text
    assert listed(key_b, cursor=id_cursor("agt_7" + "Z" * 25)).data["items"] == [mine]
    # A tenant header does not switch tenants either.
    spoof = {"X-Tenant-Id": tenant_a}
    assert_error(api("GetAgent", key_b, path_params={"id": theirs["id"]}, headers=spoof), 404, "RESOURCE_NOT_FOUND")
    assert api("ListAgents", key_b, headers=spoof).data["items"] == [mine]
    assert get(key_a, theirs["id"]).data == theirs
    assert listed(key_a).data["items"] == [theirs]


def test_scopes_read_and_write(stack):
    tenant, key = stack.tenant_with_key()
    agent = made(key)
    reader = stack.new_key(tenant, ["agents:read"])["key"]
    writer = stack.new_key(tenant, ["agents:write"])["key"]
    before = snapshot(tenant)
    for reply in (create(reader, body_of()), patch(reader, agent["id"], {"name": "x"}), delete(reader, agent["id"])):
        assert assert_error(reply, 403, "FORBIDDEN")["requiredScope"] == "agents:write"
    assert snapshot(tenant) == before
    assert get(reader, agent["id"]).data == agent and listed(reader).data["items"] == [agent]
    for reply in (get(writer, agent["id"]), get(writer, MISSING_ID), listed(writer)):
        assert assert_error(reply, 403, "FORBIDDEN")["requiredScope"] == "agents:read"
    assert patch(writer, agent["id"], {"name": "by the writer"}).status == 200
    projects_only = stack.new_key(tenant, ["projects:read", "projects:write"])["key"]
    assert_error(listed(projects_only), 403, "FORBIDDEN")
    assert_error(create(projects_only, body_of()), 403, "FORBIDDEN")
    assert_error(listed("svc_sdk_notakey"), 401, "UNAUTHORIZED")


def test_other_methods_are_405(stack):
    tenant, key = stack.tenant_with_key()
    agent = made(key)
    before = snapshot(tenant)
    for method in ("PUT", "POST"):
        reply = api("GetAgent", key, path_params={"id": agent["id"]}, method=method, body={"name": "x"})
        assert assert_error(reply, 405, "METHOD_NOT_ALLOWED")["allowed"] == ["DELETE", "GET", "PATCH"]
    for method in ("DELETE", "PUT", "PATCH"):
        reply = api("ListAgents", key, method=method)
        assert assert_error(reply, 405, "METHOD_NOT_ALLOWED")["allowed"] == ["GET", "POST"]
        assert reply.headers["allow"] == "GET, POST"
    assert snapshot(tenant) == before
