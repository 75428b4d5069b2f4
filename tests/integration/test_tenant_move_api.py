"""POST and GET /regions/migrations/{tenantId} on one stack, and the admission of a moving tenant's
requests: a single cell has nothing to move to; in a deployment of cells a move is recorded, queued
and answered, one at a time; a frozen tenant's writes are 503 tenant_moving while it reads on, and a
tenant the directory homes elsewhere is 421 to that cell."""

from __future__ import annotations

import json

import pytest

from svc_core.auth import tenant_policy
from svc_core.data import cell_queues, directory_table
from svc_core.platform.config import settings
from tests.support.projects import assert_error
from tests.support.regions import MISSING_TENANT, get_prefs, patch_prefs, regions_api
from tests.support.stack import provisioned_stack

CELLS = {"us-east-1": "https://us.example.test", "eu-central-1": "https://eu.example.test"}


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


def start(key: str, tenant_id: str, body) -> object:
    return regions_api("StartMigration", key, path_params={"tenantId": tenant_id}, body=body)


def get(key: str, tenant_id: str) -> object:
    return regions_api("GetMigration", key, path_params={"tenantId": tenant_id})


def test_a_single_cell_has_nowhere_to_move_and_no_move_to_show(stack):
    tenant, key = stack.tenant_with_key()
    assert_error(start(key, tenant, {"toRegion": "eu-central-1"}), 409, "CONFLICT")
    assert start(key, tenant, {"toRegion": "eu-central-1"}).error["details"]["reason"] == "single_cell"
    assert_error(get(key, tenant), 404, "RESOURCE_NOT_FOUND")
    assert_error(start(key, MISSING_TENANT, {"toRegion": "eu-central-1"}), 404, "RESOURCE_NOT_FOUND")
    _, reader = stack.tenant_with_key(["tenants:read"])
    assert_error(start(reader, tenant, {"toRegion": "eu-central-1"}), 403, "FORBIDDEN")


def test_a_move_is_recorded_queued_and_answered_once_at_a_time(stack, setting):
    setting("CELLS", json.dumps(CELLS))
    tenant, key = stack.tenant_with_key()
    assert start(key, tenant, {"toRegion": "us-east-1"}).error["details"]["reason"] == "same_region"
    assert start(key, tenant, {"toRegion": "eu-central-1"}).error["details"]["reason"] == "cell_unknown"
    assert_error(start(key, tenant, {"toRegion": "eu-west-1"}), 400, "VALIDATION_ERROR")   # no cell there
    published = {"tables": {"TenantsTable": "t"}, "bucket": "b", "dataKey": "alias/k"}
    directory_table.put_cell_resources("eu-central-1", published)   # as a cell deployed before its queues were
    assert start(key, tenant, {"toRegion": "eu-central-1"}).error["details"]["reason"] == "cell_unknown"
    directory_table.put_cell_resources("eu-central-1", {**published, "queues": {
        q: f"https://sqs.eu-central-1.amazonaws.com/123456789012/{q}" for q in cell_queues.WEBHOOK_QUEUES}})
    reply = start(key, tenant, {"toRegion": "eu-central-1"})
    assert reply.status == 202, reply
    assert (reply.data["status"], reply.data["fromRegion"], reply.data["toRegion"]) == ("pending", "us-east-1",
                                                                                        "eu-central-1")
    assert get(key, tenant).data == reply.data
    again = start(key, tenant, {"toRegion": "eu-central-1"})
    assert again.status == 409 and again.error["details"]["reason"] == "move_under_way"
    sqs = stack.client("sqs")
    messages = sqs.receive_message(QueueUrl=settings().tenant_move_queue_url, MaxNumberOfMessages=10)["Messages"]
    assert [json.loads(m["Body"]) for m in messages] == [{"tenantId": tenant}]


def test_a_frozen_tenant_reads_on_its_writes_are_503_and_once_homed_elsewhere_it_is_421(stack, setting):
    setting("CELLS", json.dumps(CELLS))
    tenant, key = stack.tenant_with_key()
    stack.client("dynamodb").update_item(
        TableName=settings().tenants_table, Key={"id": {"S": tenant}}, UpdateExpression="SET #m = :m",
        ExpressionAttributeNames={"#m": "move"},
        ExpressionAttributeValues={":m": {"M": {"phase": {"S": "frozen"}, "toRegion": {"S": "eu-central-1"}}}})
    tenant_policy.forget()
    assert get_prefs(key, tenant).status == 200
    refused = patch_prefs(key, tenant, {"complianceLevel": "standard"})
    assert_error(refused, 503, "SERVICE_UNAVAILABLE")
    assert refused.error["details"]["reason"] == "tenant_moving" and refused.headers["retry-after"] == "2"

    stack.client("dynamodb").put_item(TableName=settings().directory_table, Item={
        "pk": {"S": f"TENANT#{tenant}"}, "sk": {"S": "HOME"}, "homeRegion": {"S": "eu-central-1"},
        "status": {"S": "active"}, "updatedAt": {"S": "2026-11-26T00:00:00.000Z"}, "writtenIn": {"S": "us-east-1"}})
    for reply in (get_prefs(key, tenant), patch_prefs(key, tenant, {"complianceLevel": "standard"})):
        assert_error(reply, 421, "WRONG_REGION")
        assert reply.error["details"]["baseUrl"] == CELLS["eu-central-1"]


def _queued_for(stack, tenant: str) -> list[dict]:
    """The messages of TenantMoveQueue for the tenant (taken off the queue)."""
    sqs, found = stack.client("sqs"), []
    for _ in range(5):
        answer = sqs.receive_message(QueueUrl=settings().tenant_move_queue_url, MaxNumberOfMessages=10,
                                     VisibilityTimeout=0 if not found else 30)
        for message in answer.get("Messages", []):
            body = json.loads(message["Body"])
            if body["tenantId"] == tenant:
                found.append(body)
                sqs.delete_message(QueueUrl=settings().tenant_move_queue_url, ReceiptHandle=message["ReceiptHandle"])
        if found:
            return found
    return found


def test_naming_a_secondary_region_puts_it_in_the_directory_and_queues_its_seed_and_removing_it_its_drop(
        stack, setting):
    setting("CELLS", json.dumps(CELLS))
    tenant = stack.new_tenant(plan="growth")
    key = stack.new_key(tenant)["key"]
    assert patch_prefs(key, tenant, {"secondaryRegion": "eu-central-1"}).status == 200
    assert directory_table.tenant_home(tenant)["secondaryRegion"] == "eu-central-1"
    assert directory_table.tenant_home(tenant)["homeRegion"] == "us-east-1"
    assert _queued_for(stack, tenant) == [{"tenantId": tenant, "job": "replica"}]
    assert patch_prefs(key, tenant, {"complianceLevel": "standard"}).status == 200   # the secondary unchanged
    assert _queued_for(stack, tenant) == []
    assert patch_prefs(key, tenant, {"secondaryRegion": None}).status == 200
    assert directory_table.tenant_home(tenant).get("secondaryRegion") is None
    assert _queued_for(stack, tenant) == [{"tenantId": tenant, "job": "replica", "dropRegion": "eu-central-1"}]


def test_a_single_cell_keeps_the_secondary_region_a_preference_with_no_directory_entry_or_seed(stack):
    tenant = stack.new_tenant(plan="growth")
    key = stack.new_key(tenant)["key"]
    assert patch_prefs(key, tenant, {"secondaryRegion": "eu-central-1"}).status == 200
    assert directory_table.tenant_home(tenant) is None
    assert _queued_for(stack, tenant) == []


def _home_in_directory(stack, tenant: str, region: str) -> None:
    stack.client("dynamodb").put_item(TableName=settings().directory_table, Item={
        "pk": {"S": f"TENANT#{tenant}"}, "sk": {"S": "HOME"}, "homeRegion": {"S": region},
        "status": {"S": "active"}, "updatedAt": {"S": "2026-11-27T00:00:00.000Z"}, "writtenIn": {"S": region}})


def test_a_copy_the_directory_homes_elsewhere_is_421_to_it_and_served_once_the_directory_homes_it_here(
        stack, setting):
    setting("CELLS", json.dumps(CELLS))
    tenant, key = stack.tenant_with_key()
    # An unmarked copy (its cell was away when the tenant failed over): 421 once its policy is read again.
    _home_in_directory(stack, tenant, "eu-central-1")
    tenant_policy.forget()
    reply = get_prefs(key, tenant)
    assert_error(reply, 421, "WRONG_REGION")
    assert reply.error["details"]["baseUrl"] == CELLS["eu-central-1"]
    # The secondary's copy, marked: 421 to its home until the directory homes it here (a failover).
    stack.client("dynamodb").update_item(
        TableName=settings().tenants_table, Key={"id": {"S": tenant}}, UpdateExpression="SET #m = :m",
        ExpressionAttributeNames={"#m": "move"},
        ExpressionAttributeValues={":m": {"M": {"phase": {"S": "replica"}, "homeRegion": {"S": "eu-central-1"}}}})
    tenant_policy.forget()
    assert_error(patch_prefs(key, tenant, {"complianceLevel": "standard"}), 421, "WRONG_REGION")
    _home_in_directory(stack, tenant, "us-east-1")
    assert get_prefs(key, tenant).status == 200
    assert patch_prefs(key, tenant, {"complianceLevel": "standard"}).status == 200


def test_in_a_single_cell_the_directory_is_not_read_for_a_tenant_served_here(stack):
    tenant, key = stack.tenant_with_key()
    _home_in_directory(stack, tenant, "eu-central-1")   # whatever it says, one cell serves every tenant
    tenant_policy.forget()
    assert get_prefs(key, tenant).status == 200


@pytest.mark.parametrize(("ends_in", "status"), [(None, 421), (3600, 421), (-60, 401)])
def test_a_key_of_a_tenant_homed_elsewhere_is_421_while_live_and_401_once_past_its_end(stack, setting, ends_in,
                                                                                       status):
    """A value another cell issued (this cell's table does not hold it): the directory says whose it is.
    One past its end is refused here as its own cell would, without telling where its tenant lives."""
    import time

    from svc_core.auth import key_format
    from svc_core.auth.authenticate import hash_key
    setting("CELLS", json.dumps(CELLS))
    tenant = f"ten_elsewhere{ends_in}"
    value = key_format.generate("sdk")
    _home_in_directory(stack, tenant, "eu-central-1")
    item = {"pk": {"S": f"KEY#{hash_key(value)}"}, "sk": {"S": "KEY"}, "tenantId": {"S": tenant},
            "keyId": {"S": "key_1"}, "updatedAt": {"S": "2026-11-27T00:00:00.000Z"}, "writtenIn": {"S": "eu-central-1"}}
    if ends_in is not None:
        item["notAfter"] = {"N": str(int(time.time()) + ends_in)}
    stack.client("dynamodb").put_item(TableName=settings().directory_table, Item=item)
    reply = get_prefs(value, tenant)
    assert reply.status == status, reply
    if status == 421:
        assert reply.error["details"]["baseUrl"] == CELLS["eu-central-1"]
    else:
        assert "eu-central-1" not in json.dumps(reply.json)


def test_a_tenant_is_not_moved_onto_its_own_secondary_copy(stack, setting):
    setting("CELLS", json.dumps(CELLS))
    tenant = stack.new_tenant(plan="growth")
    key = stack.new_key(tenant)["key"]
    directory_table.put_cell_resources("eu-central-1", {"tables": {"TenantsTable": "t"}, "bucket": "b",
                                                        "dataKey": "alias/k"})
    assert patch_prefs(key, tenant, {"secondaryRegion": "eu-central-1"}).status == 200
    refused = start(key, tenant, {"toRegion": "eu-central-1"})
    assert_error(refused, 409, "CONFLICT")
    assert refused.error["details"]["reason"] == "secondary_region"
    assert get(key, tenant).status == 404   # nothing recorded
    _queued_for(stack, tenant)   # the seed's message, taken off the queue
