"""Regions: the catalogue, regional preferences (defaults, partial updates judged as a whole, the
plan's gates), feature checks, routing info, and tenant isolation on every regions and storage
endpoint. Handlers fed real API Gateway events, on the emulator."""

from __future__ import annotations

import json

import pytest

from svc_core.contracts import plans, regions
from tests.support.fake_keys import access_key_id
from tests.support.functions import Reply, api_event, load_function
from tests.support.projects import assert_envelope, assert_error, bad_fields
from tests.support.regions import (
    MISSING_TENANT,
    check_feature,
    get_prefs,
    get_storage,
    patch_prefs,
    put_storage,
    regions_api,
    routing_info,
    set_plan,
    tenant_item,
    tenant_on,
    validate,
)
from tests.support.stack import provisioned_stack


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


DEFAULTS = {"primaryRegion": "us-east-1", "secondaryRegion": None, "dataResidencyRequired": False,
            "dataResidencyRegion": None, "complianceLevel": "standard"}


# ---- the catalogue -------------------------------------------------------------------------

def test_the_catalogue_is_listed_to_any_credential(stack):
    _, key = stack.tenant_with_key(["projects:read"])  # no tenants scope: any credential will do
    reply = regions_api("ListRegions", key)
    assert reply.status == 200, reply
    assert_envelope(reply)
    data = reply.data
    assert [r["id"] for r in data["items"]] == list(regions.REGIONS)
    assert data["nextCursor"] is None and data["defaultRegion"] == regions.DEFAULT_REGION
    assert set(data["jurisdictions"]) == {"us", "ca", "eu", "uk", "apac"}
    tokyo = next(r for r in data["items"] if r["id"] == "ap-northeast-1")
    assert tokyo == {"id": "ap-northeast-1", "name": "Asia Pacific (Tokyo)", "jurisdiction": "apac",
                     "complianceLevels": ["standard"], "available": False}
    assert_error(regions_api("ListRegions", None), 401, "UNAUTHORIZED")


def test_other_methods_are_405_on_every_path(stack):
    tenant, key = stack.tenant_with_key()
    cases = [("Regions-ListRegions", {}, "POST"), ("Regions-GetPreferences", {"tenantId": tenant}, "DELETE"),
             ("Regions-GetStorage", {"tenantId": tenant}, "PATCH"),
             ("Regions-ValidateStorage", {"tenantId": tenant}, "GET"),
             ("Regions-CheckFeature", {"tenantId": tenant, "featureKey": "byos"}, "POST"),
             ("Regions-RoutingInfo", {}, "PUT")]
    for event, params, method in cases:
        reply = Reply(load_function("regions").lambda_handler(
            api_event(event, token=key, path_params=params or None, method=method), None))
        assert_error(reply, 405, "METHOD_NOT_ALLOWED")


# ---- preferences ---------------------------------------------------------------------------

def test_a_tenant_that_never_set_preferences_reads_the_defaults(stack):
    tenant, key = stack.tenant_with_key(["tenants:read"])
    reply = get_prefs(key, tenant)
    assert reply.status == 200, reply
    assert reply.data == {"tenantId": tenant, **DEFAULTS, "isDefault": True, "updated_at": None}


def test_patch_changes_only_the_fields_sent_and_stores_the_whole(stack):
    tenant, key = tenant_on(stack, "growth")
    reply = patch_prefs(key, tenant, {"primaryRegion": "eu-west-1"})
    assert reply.status == 200, reply
    assert reply.data["primaryRegion"] == "eu-west-1" and reply.data["isDefault"] is False
    assert {k: reply.data[k] for k in DEFAULTS if k != "primaryRegion"} == \
           {k: v for k, v in DEFAULTS.items() if k != "primaryRegion"}
    reply = patch_prefs(key, tenant, {"secondaryRegion": "eu-central-1", "complianceLevel": "soc2"})
    assert reply.status == 200, reply
    again = get_prefs(key, tenant).data
    assert again == reply.data
    assert (again["primaryRegion"], again["secondaryRegion"], again["complianceLevel"]) == \
           ("eu-west-1", "eu-central-1", "soc2")
    stored = tenant_item(tenant)["regionPreferences"]
    assert {k: stored.get(k) for k in DEFAULTS} == {k: again[k] for k in DEFAULTS}
    assert stored["updated_at"] == again["updated_at"]
    # null removes the secondary region
    assert patch_prefs(key, tenant, {"secondaryRegion": None}).data["secondaryRegion"] is None


@pytest.mark.parametrize("plan, body, fields", [
    ("growth", {"primaryRegion": "mars-1"}, {"primaryRegion"}),
    ("growth", {"primaryRegion": "ap-northeast-1"}, {"primaryRegion"}),           # not available
    ("growth", {"primaryRegion": "us-east-1", "secondaryRegion": "us-east-1"}, {"secondaryRegion"}),  # the same
    ("growth", {"secondaryRegion": "nowhere-9"}, {"secondaryRegion"}),
    ("starter", {"dataResidencyRequired": True, "dataResidencyRegion": None}, {"dataResidencyRegion"}),
    ("starter", {"dataResidencyRequired": True, "dataResidencyRegion": "atlantis"}, {"dataResidencyRegion"}),
    ("starter", {"primaryRegion": "us-east-1", "dataResidencyRequired": True, "dataResidencyRegion": "eu"},
     {"primaryRegion"}),
    ("growth", {"primaryRegion": "eu-west-1", "secondaryRegion": "us-west-2", "dataResidencyRequired": True,
                "dataResidencyRegion": "eu"}, {"secondaryRegion"}),
    ("starter", {"primaryRegion": "us-east-1", "complianceLevel": "gdpr"}, {"primaryRegion"}),  # no gdpr there
    ("enterprise", {"primaryRegion": "eu-north-1", "complianceLevel": "hipaa"}, {"primaryRegion"}),
    ("enterprise", {"primaryRegion": "eu-west-1", "secondaryRegion": "eu-north-1", "complianceLevel": "hipaa"},
     {"secondaryRegion"}),
    ("free", {"complianceLevel": "GDPR"}, {"complianceLevel"}),                     # the open list is lowercase
    ("free", {"complianceLevel": "a" * 33}, {"complianceLevel"}),
    ("free", {"primaryRegion": None}, {"primaryRegion"}),
    ("free", {"dataResidencyRequired": "yes"}, {"dataResidencyRequired"}),
    ("free", {"region": "eu-west-1"}, {"region"}),
    ("free", {}, {"body"}),
])
def test_bad_preferences_are_400_naming_the_field_and_change_nothing(stack, plan, body, fields):
    tenant, key = tenant_on(stack, plan)
    before = tenant_item(tenant)
    reply = patch_prefs(key, tenant, body)
    assert fields <= bad_fields(reply), reply
    assert tenant_item(tenant) == before


@pytest.mark.parametrize("plan, body, problems, current", [
    # each body is valid alone, not with the defaults stored (us-east-1, no residency region)
    ("growth", {"secondaryRegion": "us-east-1"}, {"secondaryRegion"}, {"primaryRegion": "us-east-1"}),
    ("starter", {"dataResidencyRequired": True}, {"dataResidencyRegion"}, {"dataResidencyRegion": None}),
    ("starter", {"dataResidencyRequired": True, "dataResidencyRegion": "eu"}, {"primaryRegion"},
     {"primaryRegion": "us-east-1"}),
    ("starter", {"dataResidencyRegion": "eu", "complianceLevel": "gdpr"},  # the fuzzer's find
     {"primaryRegion"}, {"primaryRegion": "us-east-1"}),
])
def test_a_patch_that_conflicts_with_the_stored_preferences_is_409_naming_them(stack, plan, body, problems, current):
    tenant, key = tenant_on(stack, plan)
    before = tenant_item(tenant)
    details = assert_error(patch_prefs(key, tenant, body), 409, "CONFLICT")
    assert details["resource"] == "regionPreferences" and details["current"] == current
    assert {p["field"] for p in details["fields"]} == problems
    assert tenant_item(tenant) == before


@pytest.mark.parametrize("plan, body, feature", [
    ("starter", {"secondaryRegion": "us-west-2"}, "secondary_region"),
    ("free", {"primaryRegion": "eu-west-1", "dataResidencyRequired": True, "dataResidencyRegion": "eu"},
     "data_residency"),
    ("free", {"primaryRegion": "eu-west-1", "complianceLevel": "gdpr"}, "gdpr"),
    ("growth", {"complianceLevel": "hipaa"}, "hipaa"),
])
def test_what_the_plan_lacks_is_403_with_the_plan_that_has_it(stack, plan, body, feature):
    tenant, key = tenant_on(stack, plan)
    before = tenant_item(tenant)
    details = assert_error(patch_prefs(key, tenant, body), 403, "FORBIDDEN")
    assert details == {"feature": feature, "requiredPlan": plans.required_plan(feature), "currentPlan": plan}
    assert tenant_item(tenant) == before


def test_the_rules_that_pass(stack):
    tenant, key = tenant_on(stack, "enterprise")
    good = [{"primaryRegion": "eu-central-1", "secondaryRegion": "eu-west-1", "dataResidencyRequired": True,
             "dataResidencyRegion": "eu", "complianceLevel": "gdpr"},
            {"complianceLevel": "hipaa"},                       # both eu regions list hipaa
            {"primaryRegion": "us-east-1", "secondaryRegion": "us-west-2", "dataResidencyRequired": False,
             "complianceLevel": "hipaa"},
            {"complianceLevel": "iso-27001"}]                   # an open level without rules
    for body in good:
        reply = patch_prefs(key, tenant, body)
        assert reply.status == 200, (body, reply)
        assert {k: reply.data[k] for k in body} == body


def test_a_patch_is_judged_with_what_is_stored(stack):
    tenant, key = tenant_on(stack, "starter")
    assert patch_prefs(key, tenant, {"primaryRegion": "eu-central-1", "dataResidencyRequired": True,
                                     "dataResidencyRegion": "eu"}).status == 200
    before = tenant_item(tenant)
    reply = patch_prefs(key, tenant, {"primaryRegion": "us-east-1"})  # alone fine, not with eu residency
    details = assert_error(reply, 409, "CONFLICT")
    assert {p["field"] for p in details["fields"]} == {"primaryRegion"}
    assert details["current"] == {"dataResidencyRequired": True, "dataResidencyRegion": "eu"}
    assert tenant_item(tenant) == before
    # A downgraded tenant keeps its stored secondary region, but any change must drop it first.
    set_plan(tenant, "growth")
    assert patch_prefs(key, tenant, {"secondaryRegion": "eu-west-1"}).status == 200
    set_plan(tenant, "starter")
    assert assert_error(patch_prefs(key, tenant, {"complianceLevel": "soc2"}), 403, "FORBIDDEN")["feature"] == \
        "secondary_region"
    assert patch_prefs(key, tenant, {"complianceLevel": "soc2", "secondaryRegion": None}).status == 200


def test_residency_may_not_exclude_the_stored_platform_region(stack):
    tenant, key = tenant_on(stack, "starter")
    assert put_storage(key, tenant, {"storageMode": "platform", "platformRegion": "us-west-2"}).status == 200
    before = tenant_item(tenant)
    reply = patch_prefs(key, tenant, {"primaryRegion": "eu-west-1", "dataResidencyRequired": True,
                                      "dataResidencyRegion": "eu"})
    assert assert_error(reply, 409, "CONFLICT") == {"resource": "storage", "platformRegion": "us-west-2"}
    assert tenant_item(tenant) == before


def test_scopes(stack):
    tenant = stack.new_tenant()
    reader = stack.new_key(tenant, ["tenants:read"])["key"]
    nobody = stack.new_key(tenant, ["projects:read"])["key"]
    assert assert_error(patch_prefs(reader, tenant, {"complianceLevel": "soc2"}), 403, "FORBIDDEN") == \
        {"requiredScope": "tenants:write"}
    assert assert_error(put_storage(reader, tenant, {"storageMode": "platform"}), 403, "FORBIDDEN") == \
        {"requiredScope": "tenants:write"}
    assert assert_error(validate(reader, tenant), 403, "FORBIDDEN") == {"requiredScope": "tenants:write"}
    for reply in (get_prefs(nobody, tenant), get_storage(nobody, tenant), check_feature(nobody, tenant, "byos")):
        assert assert_error(reply, 403, "FORBIDDEN") == {"requiredScope": "tenants:read"}
    assert routing_info(nobody).status == 200


# ---- feature check -------------------------------------------------------------------------

@pytest.mark.parametrize("plan", plans.PLANS)
def test_feature_check_follows_the_plans_table(stack, plan):
    tenant, key = tenant_on(stack, plan, ["tenants:read"])
    for feature in ("byos", "secondary_region", "hipaa", "gdpr", "projects"):
        reply = check_feature(key, tenant, feature)
        assert reply.status == 200, reply
        assert reply.data == {"featureKey": feature, "enabled": plans.has_feature(plan, feature),
                              "currentPlan": plan, "requiredPlan": plans.FEATURES[feature].from_plan,
                              "description": plans.FEATURES[feature].description}


def test_an_unknown_feature_is_404(stack):
    tenant, key = stack.tenant_with_key(["tenants:read"])
    details = assert_error(check_feature(key, tenant, "teleportation"), 404, "RESOURCE_NOT_FOUND")
    assert details["id"] == "teleportation" and details["resource"] == "feature"
    assert set(details["features"]) == set(plans.FEATURES)


# ---- routing info --------------------------------------------------------------------------

def test_routing_info_shows_what_serves_the_caller(stack, monkeypatch):
    tenant, key = tenant_on(stack, "growth")
    reply = routing_info(key)
    assert reply.status == 200, reply
    assert reply.data == {
        "requestId": reply.headers["x-request-id"], "servingRegion": "us-east-1", "stage": "dev",
        "homeRegion": "us-east-1", "homeBaseUrl": None,   # a single cell: here, at the URL called
        "apiVersion": "v1", "tenantId": tenant, "plan": "growth", "primaryRegion": "us-east-1",
        "secondaryRegion": None, "dataResidency": {"required": False, "region": None},
        "storage": {"mode": "platform", "region": "us-east-1", "provider": None}}
    assert patch_prefs(key, tenant, {"primaryRegion": "eu-central-1", "secondaryRegion": "eu-west-1",
                                     "dataResidencyRequired": True, "dataResidencyRegion": "eu"}).status == 200
    data = routing_info(key).data
    assert (data["primaryRegion"], data["secondaryRegion"]) == ("eu-central-1", "eu-west-1")
    assert data["dataResidency"] == {"required": True, "region": "eu"}
    assert data["storage"] == {"mode": "platform", "region": "eu-central-1", "provider": None}
    assert put_storage(key, tenant, {"storageMode": "byos", "byosProvider": "s3", "byosBucket": "acme-data",
                                     "byosRegion": "eu-west-1", "byosAccessKey": access_key_id(),
                                     "byosSecretKey": "not-a-real-secret-0123456789"}).status == 200
    assert routing_info(key).data["storage"] == {"mode": "byos", "region": "eu-west-1", "provider": "s3"}


# ---- tenants -------------------------------------------------------------------------------

def _every_call(key: str, tenant_id: str) -> list[Reply]:
    return [get_prefs(key, tenant_id), patch_prefs(key, tenant_id, {"complianceLevel": "hijacked"}),
            get_storage(key, tenant_id), put_storage(key, tenant_id, {"storageMode": "platform"}),
            validate(key, tenant_id), check_feature(key, tenant_id, "byos"),
            check_feature(key, tenant_id, "no_such_feature")]


def test_another_tenants_id_is_exactly_a_missing_one_on_every_endpoint(stack):
    tenant_a, key_a = tenant_on(stack, "enterprise")
    tenant_b, key_b = tenant_on(stack, "enterprise")
    assert patch_prefs(key_a, tenant_a, {"primaryRegion": "eu-west-1", "complianceLevel": "gdpr"}).status == 200
    assert put_storage(key_a, tenant_a, {"storageMode": "byos", "byosProvider": "s3", "byosBucket": "a-private",
                                         "byosRegion": "eu-west-1", "byosAccessKey": access_key_id(),
                                         "byosSecretKey": "a-secret-of-tenant-a"}).status == 200
    before_a, before_b = tenant_item(tenant_a), tenant_item(tenant_b)
    # B's credential on A's id (and A's on B's) answers as an id that exists nowhere.
    for key, foreign in ((key_b, tenant_a), (key_a, tenant_b)):
        for foreign_reply, missing_reply in zip(_every_call(key, foreign), _every_call(key, MISSING_TENANT), strict=False):
            details = assert_error(foreign_reply, 404, "RESOURCE_NOT_FOUND")
            assert details == {"id": foreign, "resource": "tenant"}, foreign_reply
            assert_error(missing_reply, 404, "RESOURCE_NOT_FOUND")
            swapped = json.loads(json.dumps(missing_reply.error).replace(MISSING_TENANT, foreign))
            assert swapped == foreign_reply.error
            for private in ("eu-west-1", "a-private", "gdpr", "AKIA"):
                assert private not in foreign_reply.text
    assert tenant_item(tenant_a) == before_a and tenant_item(tenant_b) == before_b
    # Each credential's own view stays its own.
    assert routing_info(key_b).data["tenantId"] == tenant_b
    assert routing_info(key_b).data["primaryRegion"] == "us-east-1"
    assert get_prefs(key_a, tenant_a).data["complianceLevel"] == "gdpr"


@pytest.mark.parametrize("header", ["X-Tenant-Id", "x-tenant-id", "Tenant-Id"])
def test_a_tenant_header_does_not_switch_tenants(stack, header):
    tenant_a, key_a = tenant_on(stack, "growth")
    tenant_b, key_b = tenant_on(stack, "growth")
    spoof = {header: tenant_a}
    before_a = tenant_item(tenant_a)
    assert_error(get_prefs(key_b, tenant_a, headers=spoof), 404, "RESOURCE_NOT_FOUND")
    assert_error(patch_prefs(key_b, tenant_a, {"complianceLevel": "soc2"}, headers=spoof), 404, "RESOURCE_NOT_FOUND")
    assert routing_info(key_b, headers=spoof).data["tenantId"] == tenant_b
    assert tenant_item(tenant_a) == before_a
