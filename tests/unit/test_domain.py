"""Domain rules of projects and API keys, over in-memory tables."""

import hashlib

import pytest
from pydantic import ValidationError

from svc_core.auth import authenticate
from svc_core.auth.context import TenantContext
from svc_core.auth.principal import Principal
from svc_core.domain import api_keys, projects, tenant_access
from svc_core.domain.models.api_keys import ApiKeyCreate, ApiKeyRotate
from svc_core.domain.models.projects import ProjectCreate, ProjectUpdate
from svc_core.platform import timeutil
from svc_core.platform.errors import Conflict, Forbidden, NotFound, ValidationFailed
from tests.unit.fakes import MemoryKeys, MemoryProjects


def ctx(tenant="ten_A", scopes=("projects:read", "projects:write", "keys:read", "keys:write")):
    principal = Principal(subject="key_creator", tenant_id=tenant, scopes=frozenset(scopes),
                          credential="api_key", token_id="jti")
    return TenantContext(tenant_id=tenant, principal=principal, request_id="req")


@pytest.fixture(autouse=True)
def local_hash(monkeypatch):
    monkeypatch.setattr(authenticate, "hash_key", lambda v: hashlib.sha256(v.encode()).hexdigest())


@pytest.fixture(autouse=True)
def unlimited_plan(monkeypatch):
    """The tenant's plan without its table (the quota itself is tested on the tables: test_projects.py)."""
    monkeypatch.setattr(tenant_access, "cached_plan", lambda tenant_id: "enterprise")


def test_project_lifecycle_emits_one_event_per_change():
    store = MemoryProjects()
    created = projects.create_project(ctx(), ProjectCreate(name="  Apollo  ", language="python"), store)
    assert created["name"] == "Apollo" and created["description"] is None
    updated = projects.update_project(ctx(), created["id"], ProjectUpdate(description="d"), store)
    assert updated["name"] == "Apollo" and updated["description"] == "d"
    assert updated["updated_at"] > created["updated_at"] and updated["created_at"] == created["created_at"]
    projects.delete_project(ctx(), created["id"], store)
    assert [e.type for e in store.events] == ["project.created", "project.updated", "project.deleted"]
    assert all(e.tenantId == "ten_A" and e.id.startswith("evt_") for e in store.events)
    assert store.events[1].data["changes"] == ["description"]


def test_another_tenants_project_is_not_found_like_a_missing_one():
    store = MemoryProjects()
    created = projects.create_project(ctx("ten_A"), ProjectCreate(name="a"), store)
    with pytest.raises(NotFound) as other:
        projects.get_project(ctx("ten_B"), created["id"], store)
    with pytest.raises(NotFound) as missing:
        projects.get_project(ctx("ten_B"), "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA", store)
    assert other.value.details["id"] == created["id"]
    assert other.value.message == missing.value.message and other.value.code == missing.value.code


def test_update_losing_a_race_is_a_conflict_and_changes_nothing(monkeypatch):
    store = MemoryProjects()
    created = projects.create_project(ctx(), ProjectCreate(name="a"), store)
    real_replace = store.replace

    def concurrent_writer_first(tenant_id, project, seen, event, now):
        store.rows[(tenant_id, project["id"])]["updated_at"] = "9999"
        return real_replace(tenant_id, project, seen, event, now)

    monkeypatch.setattr(store, "replace", concurrent_writer_first)
    with pytest.raises(Conflict):
        projects.update_project(ctx(), created["id"], ProjectUpdate(name="b"), store)
    assert store.rows[("ten_A", created["id"])]["name"] == "a"
    assert [e.type for e in store.events] == ["project.created"]


@pytest.mark.parametrize("body", [{}, {"name": None}, {"name": ""}, {"name": "x" * 201}, {"colour": "red"},
                                  {"language": "py<script>"}])
def test_invalid_updates_are_refused_by_the_model(body):
    with pytest.raises(ValidationError):
        ProjectUpdate(**body)


def test_paging_walks_every_project_once_newest_first():
    store = MemoryProjects()
    made = [projects.create_project(ctx(), ProjectCreate(name=f"p{i}"), store)["id"] for i in range(7)]
    seen, cursor = [], None
    while True:
        page = projects.list_projects(ctx(), 3, cursor, store)
        seen += [p["id"] for p in page["items"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen == sorted(made, reverse=True)


def test_a_cursor_off_the_pattern_is_a_validation_error_naming_it():
    for cursor in ("eyJhZnRlciI6Ii4uLyJ9", "", "A" * 21 + "B", "A" * 22 + "\n"):
        with pytest.raises(ValidationFailed) as refused:
            projects.list_projects(ctx(), 3, cursor, MemoryProjects())
        assert [f["field"] for f in refused.value.details["fields"]] == ["cursor"]


def test_keys_cannot_hold_scopes_their_creator_lacks():
    store = MemoryKeys()
    body = ApiKeyCreate(name="k", type="sdk", environment="Production", scopes=["billing:write"])
    with pytest.raises(Forbidden) as refused:
        api_keys.create_key(ctx(), body, store)
    assert refused.value.details["scopes"] == ["billing:write"]
    assert store.keys == {}


def test_omitted_scopes_mean_the_creators_scopes():
    store = MemoryKeys()
    made = api_keys.create_key(ctx(scopes=("keys:write", "projects:read")),
                               ApiKeyCreate(name="k", type="ci", environment="Staging"), store)
    assert made["scopes"] == ["keys:write", "projects:read"]
    assert made["key"].startswith("svc_ci_") and made["status"] == "active"


def test_unknown_scopes_are_invalid():
    with pytest.raises(ValidationError):
        ApiKeyCreate(name="k", type="sdk", environment="Production", scopes=["projects:admin"])


def test_rotation_overlap_is_capped_by_the_keys_own_expiry(monkeypatch):
    store = MemoryKeys()
    monkeypatch.setattr(timeutil, "now", lambda: 1_000_000.0)
    made = api_keys.create_key(ctx(), ApiKeyCreate(name="k", type="sdk", environment="Production",
                                                   expiresInDays=1), store)
    rotated = api_keys.rotate_key(ctx(), made["id"], ApiKeyRotate(overlapSeconds=7 * 86400), store)
    record = store.keys[made["id"]]
    assert rotated["key"] != made["key"]
    assert record["secrets"][1]["notAfter"] == 1_000_000 + 86400  # not 7 days: the key ends sooner


def test_only_active_keys_rotate():
    store = MemoryKeys()
    made = api_keys.create_key(ctx(), ApiKeyCreate(name="k", type="sdk", environment="Production"), store)
    api_keys.revoke_key(ctx(), made["id"], store)
    with pytest.raises(Conflict):
        api_keys.rotate_key(ctx(), made["id"], ApiKeyRotate(), store)
    assert api_keys.get_key(ctx(), made["id"], store)["status"] == "revoked"


@pytest.mark.parametrize("value, accepted", [(3600, True), (3600.0, True), (36.5, False), (True, False),
                                             ("3600", False), (-1, False), (604801, False)])
def test_whole_numbers_follow_json_schema_not_python_coercion(value, accepted):
    if accepted:
        assert ApiKeyRotate(overlapSeconds=value).overlapSeconds == 3600
    else:
        with pytest.raises(ValidationError):
            ApiKeyRotate(overlapSeconds=value)
