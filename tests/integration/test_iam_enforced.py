"""Each function holds only its role's permissions (devstack/iam.py), on both DynamoDB engines: the
same request that succeeds under the template's role fails, as on AWS, when one statement of that
role is taken out of a copy of the template."""

from __future__ import annotations

import copy

import pytest
from botocore.exceptions import ClientError

from devstack import iam
from devstack.provision import assigned_names
from devstack.template import load
from tests.support.functions import call

TENANTS_UPDATE = {"Effect": "Allow", "Action": "dynamodb:UpdateItem", "Resource": {"Fn::GetAtt": ["TenantsTable", "Arn"]}}


def without_statement(function: str, statement: dict) -> dict:
    """A copy of template.yaml whose function lacks this one statement."""
    template = copy.deepcopy(load())
    policies = template["Resources"][function]["Properties"]["Policies"]
    for policy in policies:
        if isinstance(policy, dict) and "Statement" in policy:
            kept = [s for s in policy["Statement"] if {k: v for k, v in s.items() if k != "Sid"} != statement]
            if len(kept) != len(policy["Statement"]):
                policy["Statement"] = kept
                return template
    raise AssertionError(f"{function} has no such statement: the test no longer removes anything")


@pytest.fixture
def roles_of(data_backend, monkeypatch):
    """Install the roles of a template for this test; the template.yaml's again afterwards."""
    def install(template=None):
        return iam.install(DEFAULT, assigned_names(data_backend.stack.endpoint), template)
    from tests.support.stack import DEFAULT_PARAMETERS as DEFAULT
    yield install
    install()


def create_project(token: str):
    return call("projects", "Projects-CreateProject", token=token, body={"name": "Apollo", "language": "python"})


def test_the_templates_role_lets_a_create_through(data_backend, roles_of):
    roles_of()
    _, key = data_backend.stack.tenant_with_key()
    reply = create_project(key)
    assert reply.status == 201, reply
    assert data_backend.items("ProjectsTable")


def test_without_its_statement_the_projects_quota_update_is_denied_as_aws_denies_it(data_backend, roles_of):
    enforcer = roles_of(without_statement("ProjectsFunction", TENANTS_UPDATE))
    _, key = data_backend.stack.tenant_with_key()

    reply = create_project(key)  # the create's transaction updates the tenant's project count

    assert reply.status == 500 and reply.error["code"] == "INTERNAL_ERROR", reply
    assert "AccessDenied" not in reply.text and "TenantsTable" not in reply.text  # nothing of AWS said
    denied = [(f, a.action, a.resource.rsplit("/", 1)[-1]) for f, a in enforcer.denied]
    assert ("ProjectsFunction", "dynamodb:UpdateItem", "TenantsTable") in denied
    assert data_backend.items("ProjectsTable") == []  # the whole transaction was refused

    # The same call, made as the function, is answered as AWS answers it.
    from svc_core.adapters import aws
    with iam.acting_as("ProjectsFunction"), pytest.raises(ClientError) as raised:
        aws.client("dynamodb").update_item(TableName="TenantsTable", Key={"id": {"S": "ten_x"}},
                                           UpdateExpression="SET n = :n", ExpressionAttributeValues={":n": {"N": "1"}})
    error = raised.value.response["Error"]
    assert error["Code"] == "AccessDeniedException"
    assert raised.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert error["Message"] == (
        "User: arn:aws:sts::123456789012:assumed-role/svc-local-ProjectsFunctionRole/ProjectsFunction is not "
        "authorized to perform: dynamodb:UpdateItem on resource: arn:aws:dynamodb:us-east-1:123456789012:"
        "table/TenantsTable because no identity-based policy allows the dynamodb:UpdateItem action")


def test_calls_outside_any_function_are_the_operators(data_backend, roles_of):
    roles_of(without_statement("ProjectsFunction", TENANTS_UPDATE))
    from svc_core.adapters import aws
    tenant_id = data_backend.stack.new_tenant()   # a transaction with TenantsTable's update, not refused
    assert aws.client("dynamodb").scan(TableName="TenantsTable")["Count"] >= 1
    assert tenant_id
