from tests.support.functions import call


def test_create_and_read_project(stack):
    tenant, key = stack.tenant_with_key()
    created = call("projects", "Projects-CreateProject", token=key, body={"name": "Apollo", "language": "python"})
    assert created.status == 201, created
    got = call("projects", "Projects-GetProject", token=key, path_params={"id": created.data["id"]})
    assert got.status == 200, got
    assert got.data["name"] == "Apollo"
