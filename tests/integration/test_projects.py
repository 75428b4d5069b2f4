"""Projects end to end: each handler fed real API Gateway events, on the emulator.

CRUD and paging, bad input (refused with the right code and nothing stored), tenant
isolation on every endpoint, scopes, and failures (a cancelled transaction, an unexpected
exception) that leave nothing half-written and say nothing of their cause.
"""

from __future__ import annotations

import base64
import json
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from botocore.exceptions import ClientError

from svc_core.auth import tenant_policy
from svc_core.contracts.cursors import id_cursor
from svc_core.data import projects_table
from svc_core.platform import ids
from svc_core.platform.config import settings
from tests.support.projects import (
    CREATE,
    ISO_UTC,
    PROJECT_FIELDS,
    PROJECT_ID,
    api,
    as_stored,
    assert_envelope,
    assert_error,
    bad_fields,
    create,
    delete,
    get,
    list_all,
    list_page,
    outbox_events,
    patch,
    snapshot,
    stored_projects,
)
from tests.support.regions import set_plan, tenant_item, tenant_on

MISSING_ID = "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA"


def old_form(position) -> str:
    """A cursor as this service once made them (base64url of JSON): no longer of the pattern."""
    return base64.urlsafe_b64encode(json.dumps(position).encode()).rstrip(b"=").decode()


# ---- create, read, list ------------------------------------------------------------------

def test_create_answers_201_with_every_field_and_stores_it(stack):
    tenant, key = stack.tenant_with_key()
    reply = api(CREATE, key, body={"name": "  Apollo  ", "description": "Moon", "language": "python"})
    assert reply.status == 201, reply
    assert_envelope(reply)
    project = reply.data
    assert set(project) == PROJECT_FIELDS
    assert PROJECT_ID.match(project["id"])
    assert (project["name"], project["description"], project["language"]) == ("Apollo", "Moon", "python")
    assert ISO_UTC.match(project["created_at"]) and project["updated_at"] == project["created_at"]
    [stored] = stored_projects(tenant)
    assert stored == as_stored(project, tenant)
    again = get(key, project["id"])
    assert again.status == 200 and again.data == project


def test_create_with_name_only_and_a_name_of_200_characters(stack):
    _, key = stack.tenant_with_key()
    project = create(key, name="n" * 200)
    assert project["name"] == "n" * 200
    assert project["description"] is None and project["language"] is None


def test_a_missing_project_is_404_with_its_id(stack):
    _, key = stack.tenant_with_key()
    assert assert_error(get(key, MISSING_ID), 404, "RESOURCE_NOT_FOUND")["id"] == MISSING_ID


def test_list_pages_newest_first_without_gaps_or_duplicates(stack):
    _, key = tenant_on(stack, "starter")  # 25 projects: more than the free plan's
    created = [create(key, name=f"p{i:02}")["id"] for i in range(25)]
    newest_first = list(reversed(created))

    first = list_page(key)  # the default limit is 20
    assert first.status == 200 and len(first.data["items"]) == 20
    assert [p["id"] for p in first.data["items"]] == newest_first[:20]

    pages, cursor = [], None
    while True:
        reply = list_page(key, limit=10, **({"cursor": cursor} if cursor else {}))
        assert reply.status == 200, reply
        assert set(reply.data) == {"items", "nextCursor"}
        assert all(set(p) == PROJECT_FIELDS for p in reply.data["items"])
        pages.append([p["id"] for p in reply.data["items"]])
        cursor = reply.data["nextCursor"]
        if cursor is None:
            break
        assert isinstance(cursor, str) and not any(i in cursor for i in created)  # opaque
    assert [len(p) for p in pages] == [10, 10, 5]
    assert sum(pages, []) == newest_first

    walked = list_all(key, limit=5)  # a limit that divides the total
    assert [p["id"] for p in walked] == newest_first


def test_list_of_a_tenant_without_projects_is_empty(stack):
    _, key = stack.tenant_with_key()
    reply = list_page(key, limit=1)
    assert reply.status == 200 and reply.data == {"items": [], "nextCursor": None}


# ---- the plan's project quota ------------------------------------------------------------

FREE_PROJECTS = 10   # contracts/plans.LIMITS["free"].projects


def project_count(tenant_id: str):
    return tenant_item(tenant_id).get("projectCount")


def test_the_project_past_the_plans_limit_is_403_and_nothing_is_stored(stack):
    tenant, key = stack.tenant_with_key()
    made = [create(key, name=f"p{i}")["id"] for i in range(FREE_PROJECTS)]
    assert project_count(tenant) == FREE_PROJECTS
    before = snapshot()
    details = assert_error(api(CREATE, key, body={"name": "One too many"}), 403, "FORBIDDEN")
    assert details == {"feature": "projects", "limit": FREE_PROJECTS, "currentPlan": "free", "requiredPlan": "starter"}
    assert snapshot() == before   # no project, no event
    assert project_count(tenant) == FREE_PROJECTS

    # A delete gives its place back: the next create is made, and the one after it refused again.
    assert delete(key, made[0]).status == 200
    assert project_count(tenant) == FREE_PROJECTS - 1
    create(key, name="In its place")
    assert project_count(tenant) == FREE_PROJECTS
    assert_error(api(CREATE, key, body={"name": "Still too many"}), 403, "FORBIDDEN")
    assert len(list_all(key)) == FREE_PROJECTS


def test_the_highest_plans_refusal_names_no_plan_to_move_to_and_enterprise_has_no_limit(stack):
    tenant, key = tenant_on(stack, "growth")
    stack.client("dynamodb").update_item(TableName=settings().tenants_table, Key={"id": {"S": tenant}},
                                         UpdateExpression="SET projectCount = :n", ExpressionAttributeValues={
                                             ":n": {"N": "1000"}})   # growth's 1,000, reached
    details = assert_error(api(CREATE, key, body={"name": "Too many"}), 403, "FORBIDDEN")
    assert (details["limit"], details["currentPlan"], details["requiredPlan"]) == (1000, "growth", "enterprise")
    set_plan(tenant, "enterprise")
    tenant_policy.forget(tenant)
    create(key, name="Unlimited")
    assert project_count(tenant) == 1001


def cached_plan(tenant: str) -> str:
    """The plan the projects function's container holds for the tenant (its own cache, as on AWS)."""
    from devstack import iam
    with iam.acting_as("ProjectsFunction"):
        return tenant_policy.policy_of(tenant).plan


def test_a_plan_changed_since_this_container_read_it_applies_at_once(stack):
    tenant, key = stack.tenant_with_key()
    for i in range(FREE_PROJECTS):
        create(key, name=f"p{i}")
    # Moved to starter elsewhere (another container, the billing webhook): this container's policy
    # still says free; the create's condition names the plan, so it reads the tenant again.
    set_plan(tenant, "starter")
    assert cached_plan(tenant) == "free"
    create(key, name="Allowed by starter")
    assert project_count(tenant) == FREE_PROJECTS + 1
    # And back to free (a cancelled subscription): refused at once, though the cache said starter.
    assert cached_plan(tenant) == "starter"
    set_plan(tenant, "free")
    details = assert_error(api(CREATE, key, body={"name": "Past free"}), 403, "FORBIDDEN")
    assert (details["currentPlan"], details["limit"]) == ("free", FREE_PROJECTS)
    assert len(stored_projects(tenant)) == FREE_PROJECTS + 1


def test_projects_made_before_they_were_counted_can_be_deleted_and_the_count_stays_at_zero(stack):
    tenant, key = stack.tenant_with_key()
    old = create(key, name="From before")
    stack.client("dynamodb").update_item(TableName=settings().tenants_table, Key={"id": {"S": tenant}},
                                         UpdateExpression="REMOVE projectCount")   # a tenant from before
    assert delete(key, old["id"]).status == 200
    assert stored_projects(tenant) == [] and project_count(tenant) is None
    create(key, name="Counted")
    assert project_count(tenant) == 1


def test_concurrent_creates_at_the_limit_never_pass_it(atomic_stack):
    """Six creates at once in a tenant with two places left (DynamoDB Local): two are made, four
    refused 403, whatever the interleaving. A client sends a 409 (the tenant was busy) again."""
    stack = atomic_stack.stack
    tenant, key = stack.tenant_with_key()
    for i in range(FREE_PROJECTS - 2):
        create(key, name=f"p{i}")
    start = threading.Barrier(6)

    def attempt(n: int) -> int:
        start.wait()
        for _ in range(10):
            reply = api(CREATE, key, body={"name": f"racer {n}"})
            if reply.status != 409:
                return reply.status
        return 409

    with ThreadPoolExecutor(max_workers=6) as pool:
        statuses = sorted(pool.map(attempt, range(6)))
    assert statuses == [201, 201, 403, 403, 403, 403]
    assert len(stored_projects(tenant)) == FREE_PROJECTS == project_count(tenant)
    made = [e for e in outbox_events() if e["type"] == "project.created" and e["data"]["name"].startswith("racer")]
    assert len(made) == 2


# ---- update and delete -------------------------------------------------------------------

def test_patch_changes_only_the_fields_sent(stack):
    tenant, key = stack.tenant_with_key()
    project = create(key, name="Apollo", description="Moon", language="python")

    renamed = patch(key, project["id"], {"name": "Artemis"})
    assert renamed.status == 200, renamed
    assert set(renamed.data) == PROJECT_FIELDS
    assert renamed.data == {**project, "name": "Artemis", "updated_at": renamed.data["updated_at"]}
    assert renamed.data["updated_at"] > project["updated_at"]

    cleared = patch(key, project["id"], {"description": None, "language": "go"})
    assert cleared.status == 200, cleared
    assert cleared.data == {**renamed.data, "description": None, "language": "go",
                            "updated_at": cleared.data["updated_at"]}
    assert cleared.data["updated_at"] > renamed.data["updated_at"]
    assert cleared.data["created_at"] == project["created_at"]
    assert get(key, project["id"]).data == cleared.data
    [stored] = stored_projects(tenant)
    assert "description" not in stored and stored["name"] == "Artemis"


@pytest.mark.parametrize("body, field", [
    ({"name": None}, "name"), ({}, "body"), ({"name": ""}, "name"), ({"name": "x" * 201}, "name"),
    ({"name": "ok", "owner": "me"}, "owner"), ({"description": 7}, "description"),
    ({"language": ["py"]}, "language"), ([{"name": "x"}], "body"),
])
def test_bad_patch_bodies_are_400_and_change_nothing(stack, body, field):
    _, key = stack.tenant_with_key()
    project = create(key, name="Apollo", description="Moon")
    before = snapshot()
    assert field in bad_fields(patch(key, project["id"], body))
    assert snapshot() == before
    assert get(key, project["id"]).data == project


def test_delete_answers_in_the_envelope_then_the_project_is_gone(stack):
    _, key = stack.tenant_with_key()
    keep, project = create(key, name="keep"), create(key, name="Apollo")
    reply = delete(key, project["id"])
    assert reply.status == 200, reply
    assert_envelope(reply)
    assert reply.data == {"id": project["id"], "deleted": True}
    for answer in (get(key, project["id"]), patch(key, project["id"], {"name": "x"}), delete(key, project["id"])):
        assert assert_error(answer, 404, "RESOURCE_NOT_FOUND")["id"] == project["id"]
    assert [p["id"] for p in list_all(key)] == [keep["id"]]


# ---- bad input: refused, nothing stored --------------------------------------------------

@pytest.mark.parametrize("body, field", [
    ({"name": ""}, "name"), ({"name": "   "}, "name"), ({"name": "x" * 201}, "name"),
    ({"description": "no name"}, "name"), ({"name": "ok", "colour": "red"}, "colour"),
    ({"name": 123}, "name"), ({"name": True}, "name"), ({"name": "ok", "description": 5}, "description"),
    ({"name": "ok", "language": ["py"]}, "language"), ({"name": "ok", "language": "py; rm -rf"}, "language"),
    ({"name": "ok", "description": "d" * 2001}, "description"), (["name"], "body"), ("Apollo", "body"),
    ({"name": "Apo\x00llo"}, "name"), ({"name": "\u202eollopA"}, "name"), ({"name": "Apollo\x9b"}, "name"),
    ({"name": "ok", "description": "moon\x00shot"}, "description"),
    ({"name": "ok", "description": "txt.\u2066exe"}, "description"),
])
def test_bad_create_bodies_are_400_naming_the_field(stack, body, field):
    tenant, key = stack.tenant_with_key()
    before = snapshot()
    assert field in bad_fields(api(CREATE, key, body=body))
    assert snapshot() == before and stored_projects(tenant) == []


def test_control_and_bidi_characters_are_refused_naming_the_field_but_lines_and_tabs_describe(stack):
    _, key = stack.tenant_with_key()
    for body, field, code in [({"name": "Apo\x07llo"}, "name", "U+0007"), ({"name": "Apo\x00llo"}, "name", "NUL"),
                              ({"name": "gpj.\u202eexe"}, "name", "U+202E"),
                              ({"name": "ok", "description": "a\u2067b"}, "description", "U+2067")]:
        reply = api(CREATE, key, body=body)
        assert reply.status == 400 and reply.error["code"] == "VALIDATION_ERROR", reply
        [problem] = reply.error["details"]["fields"]
        assert problem["field"] == field and code in problem["reason"]
    made = create(key, name=" Apollo\n", description="Moon shot:\n\tstage one")
    assert made["name"] == "Apollo" and made["description"] == "Moon shot:\n\tstage one"
    project = create(key, name="Apollo")
    assert "name" in bad_fields(patch(key, project["id"], {"name": "A\u202ex"}))
    assert get(key, project["id"]).data == project


@pytest.mark.parametrize("raw", ['{"name": "Apollo"', "name=Apollo", "", "{'name': 'x'}"])
def test_malformed_or_missing_json_is_400_on_the_body(stack, raw):
    _, key = stack.tenant_with_key()
    before = snapshot()
    assert "body" in bad_fields(api(CREATE, key, raw_body=raw))
    assert "body" in bad_fields(api(CREATE, key))  # no body at all
    assert snapshot() == before


@pytest.mark.parametrize("limit", ["0", "101", "-1", "abc", "1.5", ""])
def test_a_limit_outside_1_to_100_is_400(stack, limit):
    _, key = stack.tenant_with_key()
    create(key, name="Apollo")
    assert "limit" in bad_fields(api("Projects-ListProjects", key, query={"limit": limit}))


@pytest.mark.parametrize("cursor", [
    "not-a-cursor!", old_form({"after": "../../etc"}), old_form({"after": 5}), old_form(["x"]),
    old_form({"after": "key_01JD2Q7ZB6V8S3K4X9W2M5N7PA"}), "x" * 600, "A" * 21 + "B", "A" * 22 + "=",
])
def test_a_cursor_off_the_pattern_is_400(stack, cursor):
    _, key = stack.tenant_with_key()
    create(key, name="Apollo")
    assert "cursor" in bad_fields(list_page(key, cursor=cursor))


@pytest.mark.parametrize("bad_id", ["not-an-id", "proj_123", "proj_01jd2q7zb6v8s3k4x9w2m5n7pa", "key_01JD2Q7ZB6V8S3K4X9W2M5N7PA",
                                    "%2e%2e", "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA'--"])
def test_a_malformed_id_is_404_with_that_id_on_every_endpoint(stack, bad_id):
    _, key = stack.tenant_with_key()
    create(key, name="Apollo")
    before = snapshot()
    for reply in (get(key, bad_id), patch(key, bad_id, {"name": "x"}), delete(key, bad_id)):
        assert assert_error(reply, 404, "RESOURCE_NOT_FOUND")["id"] == bad_id
    assert snapshot() == before


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "application/xml"])
def test_a_body_that_is_not_json_is_415(stack, content_type):
    _, key = stack.tenant_with_key()
    project = create(key, name="Apollo")
    before = snapshot()
    headers = {"Content-Type": content_type}
    assert_error(api(CREATE, key, raw_body='{"name": "x"}', headers=headers), 415, "UNSUPPORTED_MEDIA_TYPE")
    assert_error(patch(key, project["id"], raw_body='{"name": "x"}', headers=headers), 415, "UNSUPPORTED_MEDIA_TYPE")
    assert snapshot() == before


def test_a_body_over_256_kib_is_413(stack):
    _, key = stack.tenant_with_key()
    project = create(key, name="Apollo")
    before = snapshot()
    big = {"name": "x", "description": "d" * (256 * 1024)}
    assert assert_error(api(CREATE, key, body=big), 413, "PAYLOAD_TOO_LARGE")["limitBytes"] == 256 * 1024
    assert_error(api(CREATE, key, raw_body=json.dumps(big)), 413, "PAYLOAD_TOO_LARGE")
    assert_error(patch(key, project["id"], big), 413, "PAYLOAD_TOO_LARGE")
    assert snapshot() == before


# ---- tenants -----------------------------------------------------------------------------

def test_another_tenants_project_is_exactly_a_missing_one_on_every_endpoint(stack):
    tenant_a, key_a = stack.tenant_with_key()
    _, key_b = stack.tenant_with_key()
    theirs = create(key_a, name="A's project", description="private")
    create(key_b, name="B's project")
    before = snapshot()
    for call_with in (lambda pid: get(key_b, pid), lambda pid: patch(key_b, pid, {"name": "hijacked"}),
                      lambda pid: delete(key_b, pid)):
        foreign, missing = call_with(theirs["id"]), call_with(MISSING_ID)
        assert assert_error(foreign, 404, "RESOURCE_NOT_FOUND")["id"] == theirs["id"]
        assert_error(missing, 404, "RESOURCE_NOT_FOUND")
        swap = json.dumps(missing.error).replace(MISSING_ID, theirs["id"])
        assert json.loads(swap) == foreign.error
        assert "A's project" not in foreign.text and "private" not in foreign.text
    assert snapshot() == before
    assert get(key_a, theirs["id"]).data == theirs
    assert [p["name"] for p in list_all(key_b)] == ["B's project"]
    # Cursors made by B, one from A's project, are positions in B's projects only.
    reply = list_page(key_b, cursor=id_cursor("proj_7" + "Z" * 25))
    assert [p["name"] for p in reply.data["items"]] == ["B's project"]
    reply = list_page(key_b, cursor=id_cursor(theirs["id"]))
    assert reply.status == 200 and "A's project" not in reply.text
    assert stored_projects(tenant_a) == [as_stored(theirs, tenant_a)]


@pytest.mark.parametrize("header", ["X-Tenant-Id", "x-tenant-id", "X-Tenant", "Tenant-Id", "X-Tenant-ID"])
def test_a_tenant_header_does_not_switch_tenants(stack, header):
    tenant_a, key_a = stack.tenant_with_key()
    tenant_b, key_b = stack.tenant_with_key()
    theirs = create(key_a, name="A's project")
    spoof = {header: tenant_a}
    assert_error(api("Projects-GetProject", key_b, path_params={"id": theirs["id"]}, headers=spoof),
                 404, "RESOURCE_NOT_FOUND")
    assert_error(patch(key_b, theirs["id"], {"name": "hijacked"}, headers=spoof), 404, "RESOURCE_NOT_FOUND")
    assert_error(delete(key_b, theirs["id"], headers=spoof), 404, "RESOURCE_NOT_FOUND")
    listed = api("Projects-ListProjects", key_b, headers=spoof)
    assert listed.status == 200 and listed.data["items"] == []
    made = api(CREATE, key_b, body={"name": "B's own"}, headers=spoof)
    assert made.status == 201, made
    assert [p["id"] for p in stored_projects(tenant_b)] == [made.data["id"]]
    assert stored_projects(tenant_a) == [as_stored(theirs, tenant_a)]


# ---- scopes ------------------------------------------------------------------------------

def test_a_read_only_key_cannot_write(stack):
    tenant, key = stack.tenant_with_key()
    project = create(key, name="Apollo")
    reader = stack.new_key(tenant, ["projects:read"])["key"]
    before = snapshot()
    for reply in (api(CREATE, reader, body={"name": "x"}), patch(reader, project["id"], {"name": "x"}),
                  delete(reader, project["id"])):
        assert assert_error(reply, 403, "FORBIDDEN")["requiredScope"] == "projects:write"
    assert snapshot() == before
    assert get(reader, project["id"]).data == project and list_page(reader).status == 200


def test_a_write_only_key_cannot_read(stack):
    tenant, key = stack.tenant_with_key()
    project = create(key, name="Apollo")
    writer = stack.new_key(tenant, ["projects:write"])["key"]
    for reply in (get(writer, project["id"]), get(writer, MISSING_ID), list_page(writer)):
        assert assert_error(reply, 403, "FORBIDDEN")["requiredScope"] == "projects:read"
    assert patch(writer, project["id"], {"name": "renamed"}).status == 200


# ---- failures ----------------------------------------------------------------------------

@pytest.mark.parametrize("operation", ["create", "update", "delete"])
def test_a_cancelled_transaction_stores_neither_the_change_nor_its_event(stack, monkeypatch, operation):
    # The event's id is already taken in the outbox, so the outbox put cancels the transaction
    # after the project write in it was applied.
    tenant, key = stack.tenant_with_key()
    project = create(key, name="Apollo") if operation != "create" else None
    taken = ids.new_id("evt")
    stack.client("dynamodb").put_item(TableName=settings().outbox_table,
                                      Item={"id": {"S": taken}, "type": {"S": "sentinel"}})
    before = snapshot()
    real_new_id = ids.new_id
    monkeypatch.setattr("svc_core.contracts.events.new_id", lambda p: taken if p == "evt" else real_new_id(p))
    if operation == "create":
        # Nothing was written: a collision the client may send again.
        assert_error(api(CREATE, key, body={"name": "Gemini"}), 409, "CONFLICT")
    else:
        reply = patch(key, project["id"], {"name": "Gemini"}) if operation == "update" else delete(key, project["id"])
        # The cancellation names a failed condition, which the domain reads as a concurrent change.
        assert reply.status in (409, 500), reply
        assert_error(reply, reply.status, "CONFLICT" if reply.status == 409 else "INTERNAL_ERROR")
    assert snapshot() == before
    assert [p["name"] for p in stored_projects(tenant)] == ([] if project is None else ["Apollo"])
    assert [e["id"] for e in outbox_events() if e["type"] != "project.created"] == [taken]


def test_a_lost_update_is_refused_and_leaves_the_concurrent_version_and_no_event(stack, monkeypatch):
    tenant, key = stack.tenant_with_key()
    project = create(key, name="Apollo")
    real_replace = projects_table.replace

    def concurrent_writer_first(tenant_id, updated, seen, event, now):
        # Another request commits its version between this one's read and its write.
        stack.client("dynamodb").update_item(
            TableName=settings().projects_table, Key={"tenantId": {"S": tenant_id}, "id": {"S": project["id"]}},
            UpdateExpression="SET #n = :n, updated_at = :u", ExpressionAttributeNames={"#n": "name"},
            ExpressionAttributeValues={":n": {"S": "Other"}, ":u": {"S": "2999-01-01T00:00:00.000Z"}})
        return real_replace(tenant_id, updated, seen, event, now)

    monkeypatch.setattr(projects_table, "replace", concurrent_writer_first)
    events_before = outbox_events()
    details = assert_error(patch(key, project["id"], {"name": "Mine"}), 409, "CONFLICT")
    assert details["id"] == project["id"]
    [stored] = stored_projects(tenant)
    assert stored["name"] == "Other"
    assert outbox_events() == events_before


def test_an_unexpected_error_is_a_bare_500_and_the_next_request_succeeds(stack, monkeypatch):
    _, key = stack.tenant_with_key()
    project = create(key, name="Apollo")
    failures = {"left": 2}
    real_get, real_list = projects_table.get, projects_table.list_for_tenant

    def once(real, exc):
        def fake(*args, **kwargs):
            if failures["left"]:
                failures["left"] -= 1
                raise exc
            return real(*args, **kwargs)
        return fake

    monkeypatch.setattr(projects_table, "get", once(real_get, RuntimeError("secret detail")))
    monkeypatch.setattr(projects_table, "list_for_tenant", once(real_list, ClientError(
        {"Error": {"Code": "AccessDeniedException",
                   "Message": "User: arn:aws:sts::123456789012:assumed-role/x is not authorized"}}, "Query")))
    for reply in (get(key, project["id"]), list_page(key)):
        assert_error(reply, 500, "INTERNAL_ERROR")
        for text in ("secret detail", "AccessDenied", "123456789012", "Query", "Exception"):
            assert text not in reply.text, reply
    assert get(key, project["id"]).data == project
    assert list_page(key).data["items"] == [project]
