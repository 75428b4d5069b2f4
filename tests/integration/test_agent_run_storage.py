"""The agent's file tools in the tenant's own storage (BYOS): an S3 bucket on moto's S3 server with
request authentication on (its own keys, not the emulator's), and an Azure container on Azurite.
The handlers run on the session's emulator; the platform bucket ProjectFilesBucket lives there.

A BYOS tenant's files are written, read and listed in its bucket under the platform's key layout,
never in the platform bucket; storage that refuses the keys is an error toolResult (the run goes
on), not a fallback to the platform bucket.
"""

from __future__ import annotations

import json

import pytest

from svc_core.adapters.models.registry import scripted
from svc_core.adapters.models.scripted import ScriptedProvider, text_answer, tool_answer
from tests.integration.test_agent_runs import HAIKU, execute, file_in_bucket, new_agent
from tests.support import projects as project_api
from tests.support.regions import put_storage, tenant_on
from tests.support.stack import provisioned_stack


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


def byos_tenant(stack, storage: dict) -> tuple[str, str, str, str]:
    tenant, key = tenant_on(stack, "growth")  # the plan that includes BYOS
    reply = put_storage(key, tenant, storage)
    assert reply.status == 200 and reply.data["storageMode"] == "byos", reply
    project = project_api.create(key, name="Docs")
    return tenant, key, project["id"], new_agent(key)["id"]


SCRIPT = [tool_answer("write_file", {"path": "docs/notes.md", "content": "kept at home"}),
          tool_answer("read_file", {"path": "docs/notes.md"}, tool_use_id="t2"),
          tool_answer("list_files", {"prefix": "docs/"}, tool_use_id="t3"),
          text_answer("Done.")]


def run_script(key: str, agent_id: str, project_id: str) -> tuple[dict, ScriptedProvider]:
    provider = ScriptedProvider(list(SCRIPT), model_id=HAIKU)
    with scripted(provider):
        reply = execute(key, agent_id, project_id)
    assert reply.status == 201 and reply.data["status"] == "completed", reply
    return reply.data, provider


def results_seen(provider: ScriptedProvider) -> list[dict]:
    return [r["messages"][-1]["content"][0]["toolResult"] for r in provider.requests[1:]]


def test_a_byos_s3_tenants_files_go_to_its_own_bucket(stack, s3):
    bucket = s3.new_bucket()
    tenant, key, project_id, agent_id = byos_tenant(stack, {
        "storageMode": "byos", "byosProvider": "s3", "byosEndpoint": s3.endpoint, "byosBucket": bucket,
        "byosRegion": "us-east-1", "byosAccessKey": s3.admin.access_key, "byosSecretKey": s3.admin.secret_key})
    run, provider = run_script(key, agent_id, project_id)
    where = f"tenants/{tenant}/projects/{project_id}/files/docs/notes.md"
    assert s3.keys_in(bucket) == [where]
    assert s3.s3().get_object(Bucket=bucket, Key=where)["Body"].read() == b"kept at home"
    assert file_in_bucket(tenant, project_id, "docs/notes.md") is None  # not in the platform bucket
    wrote, read, listed = results_seen(provider)[:3]
    assert [r["status"] for r in (wrote, read, listed)] == ["success"] * 3
    assert read["content"][0]["text"] == "kept at home"
    assert json.loads(listed["content"][0]["text"]) == {"files": [{"path": "docs/notes.md", "size": 12}],
                                                        "truncated": False}
    assert s3.admin.secret_key not in json.dumps(run)


def test_a_byos_azure_tenants_files_go_to_its_own_container(stack, azurite):
    container = azurite.new_container()
    tenant, key, project_id, agent_id = byos_tenant(stack, {
        "storageMode": "byos", "byosProvider": "azure", "byosEndpoint": azurite.endpoint, "byosBucket": container,
        "byosAccessKey": azurite.account, "byosSecretKey": azurite.key})
    run, provider = run_script(key, agent_id, project_id)
    assert azurite.blobs_in(container) == [f"tenants/{tenant}/projects/{project_id}/files/docs/notes.md"]
    assert file_in_bucket(tenant, project_id, "docs/notes.md") is None
    wrote, read, listed = results_seen(provider)[:3]
    assert read["content"][0]["text"] == "kept at home" and listed["status"] == "success"
    assert json.loads(listed["content"][0]["text"])["files"] == [{"path": "docs/notes.md", "size": 12}]
    # a file the container does not have is the tool's "no file", as on the platform
    provider = ScriptedProvider([tool_answer("read_file", {"path": "nope.md"}), text_answer("ok")], model_id=HAIKU)
    with scripted(provider):
        execute(key, agent_id, project_id)
    assert "no file 'nope.md'" in results_seen(provider)[0]["content"][0]["text"]


def test_byos_storage_that_refuses_the_keys_is_a_tool_error_never_the_platform_bucket(stack, s3):
    bucket = s3.new_bucket()
    tenant, key, project_id, agent_id = byos_tenant(stack, {
        "storageMode": "byos", "byosProvider": "s3", "byosEndpoint": s3.endpoint, "byosBucket": bucket,
        "byosRegion": "us-east-1", "byosAccessKey": s3.nobody.access_key, "byosSecretKey": s3.nobody.secret_key})
    provider = ScriptedProvider([SCRIPT[0], text_answer("Could not write.")], model_id=HAIKU)
    with scripted(provider):
        reply = execute(key, agent_id, project_id)
    run = reply.data
    assert reply.status == 201 and run["status"] == "completed", reply
    told = results_seen(provider)[0]
    assert told["status"] == "error" and "AccessDenied" in told["content"][0]["text"]
    assert run["steps"][1]["status"] == "error"
    assert s3.keys_in(bucket) == [] and file_in_bucket(tenant, project_id, "docs/notes.md") is None
    assert s3.nobody.secret_key not in reply.text and s3.nobody.access_key not in reply.text


def test_the_ssrf_rules_are_applied_again_when_the_files_are_opened(stack, s3, setting):
    bucket = s3.new_bucket()
    tenant, key, project_id, agent_id = byos_tenant(stack, {
        "storageMode": "byos", "byosProvider": "s3", "byosEndpoint": s3.endpoint, "byosBucket": bucket,
        "byosRegion": "us-east-1", "byosAccessKey": s3.admin.access_key, "byosSecretKey": s3.admin.secret_key})
    setting("ALLOW_LOOPBACK_ENDPOINTS", "false")  # as in a deployed stack: loopback is refused
    provider = ScriptedProvider([SCRIPT[0], text_answer("Could not write.")], model_id=HAIKU)
    with scripted(provider):
        reply = execute(key, agent_id, project_id)
    told = results_seen(provider)[0]
    assert reply.status == 201 and told["status"] == "error", reply
    assert "loopback" in told["content"][0]["text"]
    assert s3.keys_in(bucket) == [] and file_in_bucket(tenant, project_id, "docs/notes.md") is None


# ---- a deleted project's files -------------------------------------------------------------

def _removal_of(project_id: str) -> dict:
    """The event ProjectCleanupFunction gets for this project's removal (the template's mapping:
    the projects table's stream, REMOVE records only)."""
    from devstack.template import Resolver
    from svc_core.platform.config import settings
    from tests.support.streams import removal_event
    ((function, props),) = [(f, p) for t, f, p in Resolver({}).stream_subscriptions() if t == "ProjectsTable"]
    assert function == "ProjectCleanupFunction"
    (names,) = [json.loads(f["Pattern"])["eventName"] for f in props["FilterCriteria"]["Filters"]]
    assert names == ["REMOVE"]
    return removal_event(settings().projects_table, "id", project_id, names)


def _delete_and_clean_up(key: str, project_id: str) -> None:
    from tests.support.functions import load_function
    assert project_api.delete(key, project_id).status == 200
    handler = load_function("project_cleanup").lambda_handler
    assert handler(_removal_of(project_id), None) == {"batchItemFailures": []}
    assert handler(_removal_of(project_id), None) == {"batchItemFailures": []}  # again: nothing left, no harm


def test_a_deleted_projects_files_are_deleted_from_the_platform_bucket_and_only_they(stack):
    tenant, key = stack.tenant_with_key()
    agent_id = new_agent(key)["id"]
    gone, kept = project_api.create(key, name="Gone")["id"], project_api.create(key, name="Kept")["id"]
    for project_id in (gone, kept):
        run_script(key, agent_id, project_id)
        assert file_in_bucket(tenant, project_id, "docs/notes.md") == "kept at home"
    _delete_and_clean_up(key, gone)
    assert file_in_bucket(tenant, gone, "docs/notes.md") is None
    assert file_in_bucket(tenant, kept, "docs/notes.md") == "kept at home"


def _versions_under(prefix: str) -> list[str]:
    """Every version and delete marker in the platform bucket under the prefix, as 'key version' lines."""
    from svc_core.adapters import aws
    from svc_core.platform.config import settings
    answer = aws.client("s3").list_object_versions(Bucket=settings().project_files_bucket, Prefix=prefix)
    return sorted(f"{v['Key']} {v['VersionId']}" for v in [*answer.get("Versions", []), *answer.get("DeleteMarkers", [])])


def test_a_deleted_projects_files_leave_no_version_behind_in_the_versioned_platform_bucket(stack):
    """The bucket keeps versions: a file overwritten, and one deleted before the project (its delete marker
    and the content behind it), are gone with the project; the kept project's versions stay."""
    from svc_core.adapters import aws
    from svc_core.platform.config import settings
    s3, bucket = aws.client("s3"), settings().project_files_bucket
    tenant, key = stack.tenant_with_key()
    agent_id = new_agent(key)["id"]
    gone, kept = project_api.create(key, name="Gone")["id"], project_api.create(key, name="Kept")["id"]
    for project_id in (gone, kept):
        run_script(key, agent_id, project_id)
        files = f"tenants/{tenant}/projects/{project_id}/files/"
        s3.put_object(Bucket=bucket, Key=files + "docs/notes.md", Body=b"second version")
        s3.put_object(Bucket=bucket, Key=files + "old.md", Body=b"deleted before")
        s3.delete_object(Bucket=bucket, Key=files + "old.md")
        assert len(_versions_under(files)) == 4   # notes.md twice, old.md and its delete marker
    kept_before = _versions_under(f"tenants/{tenant}/projects/{kept}/")
    _delete_and_clean_up(key, gone)
    assert _versions_under(f"tenants/{tenant}/projects/{gone}/") == []
    assert _versions_under(f"tenants/{tenant}/projects/{kept}/") == kept_before


def test_a_deleted_projects_files_are_deleted_from_the_tenants_own_s3_bucket(stack, s3):
    bucket = s3.new_bucket()
    tenant, key, project_id, agent_id = byos_tenant(stack, {
        "storageMode": "byos", "byosProvider": "s3", "byosEndpoint": s3.endpoint, "byosBucket": bucket,
        "byosRegion": "us-east-1", "byosAccessKey": s3.admin.access_key, "byosSecretKey": s3.admin.secret_key})
    kept = project_api.create(key, name="Kept")["id"]
    for project in (project_id, kept):
        run_script(key, agent_id, project)
    _delete_and_clean_up(key, project_id)
    assert s3.keys_in(bucket) == [f"tenants/{tenant}/projects/{kept}/files/docs/notes.md"]


def test_a_deleted_projects_files_are_deleted_from_the_tenants_own_azure_container(stack, azurite):
    container = azurite.new_container()
    tenant, key, project_id, agent_id = byos_tenant(stack, {
        "storageMode": "byos", "byosProvider": "azure", "byosEndpoint": azurite.endpoint, "byosBucket": container,
        "byosAccessKey": azurite.account, "byosSecretKey": azurite.key})
    kept = project_api.create(key, name="Kept")["id"]
    for project in (project_id, kept):
        run_script(key, agent_id, project)
    _delete_and_clean_up(key, project_id)
    assert azurite.blobs_in(container) == [f"tenants/{tenant}/projects/{kept}/files/docs/notes.md"]
