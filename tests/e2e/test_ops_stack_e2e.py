"""`python -m ops --stack NAME` against the local stack's resources, found through CloudFormation.

The local stack is no CloudFormation stack, so the test makes one on the same AWS emulator (moto's
CloudFormation) whose outputs are template.yaml's Outputs with the values the local stack provisioned
(its tables' names, its queues' URLs). `ops` then does what it does against AWS: DescribeStacks,
outputs to variables, and the command, with none of the functions' variables given to it. What it
did is checked through the local stack's API: the new owner signs in, redeems the gift card, and is
refused once disabled."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import boto3
import httpx
import pytest

from devstack.template import ROOT, load

pytestmark = pytest.mark.long_running   # minutes long: its test process starts with it (tests/conftest.py)

STACK_NAME = "svc-ops-e2e"


def _stack_outputs(local_stack) -> dict[str, str]:
    """template.yaml's Outputs that name a resource of the functions' environment (each named by the
    resource's logical id, some through a condition: the directory, the shared secrets), with the values
    the local stack gave those variables."""
    from ops.residency import resource_variables
    template = load()
    by_resource = resource_variables(template)
    return {key: local_stack.environment[by_resource[key]] for key in template["Outputs"] if key in by_resource}


def _aws_environment(local_stack) -> dict[str, str]:
    """The emulator's endpoints and credentials, and none of the functions' variables."""
    environment = {k: v for k, v in os.environ.items() if k not in local_stack.environment}
    environment.update({k: v for k, v in local_stack.environment.items() if k.startswith("AWS_")})
    environment.update(AWS_ENDPOINT_URL=local_stack.emulator_endpoint, AWS_DEFAULT_REGION="us-east-1",
                       AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local")
    if local_stack.dynamodb_endpoint:
        environment["AWS_ENDPOINT_URL_DYNAMODB"] = local_stack.dynamodb_endpoint
    return environment


def ops(local_stack, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ops", "--stack", STACK_NAME, *args], cwd=ROOT, text=True,
                          capture_output=True, timeout=120, env=_aws_environment(local_stack))


def test_ops_by_stack_name_creates_the_first_admin_a_gift_card_and_disables_a_user(local_stack):
    outputs = _stack_outputs(local_stack)
    assert {"UsersTable", "TenantsTable", "BillingTable", "SessionsTable", "ApiKeysTable", "DirectoryTable",
            "KeyPepperSecret", "SigningKeysSecret"} <= set(outputs)
    cloudformation = boto3.client("cloudformation", endpoint_url=local_stack.emulator_endpoint, region_name="us-east-1",
                                  aws_access_key_id="local", aws_secret_access_key="local")
    cloudformation.create_stack(StackName=STACK_NAME, TemplateBody=json.dumps({
        "Resources": {"Placeholder": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
        "Outputs": {key: {"Value": value} for key, value in outputs.items()}}))

    created = ops(local_stack, "tenants", "create", "Fresh Deployment", "--owner-email", "first-admin@example.com")
    assert created.returncode == 0, created.stderr
    made = json.loads(created.stdout)
    owner = made["owner"]
    base = local_stack.base_url + "/api/v1"
    signed_in = httpx.post(f"{base}/auth/login", json={"email": owner["email"], "password": owner["password"]})
    assert signed_in.status_code == 200, signed_in.text
    token = signed_in.json()["data"]["accessToken"]
    me = httpx.get(f"{base}/auth/me", headers={"Authorization": f"Bearer {token}"}).json()["data"]
    assert [(t["id"], t["role"]) for t in me["tenants"]] == [(made["tenant"]["id"], "owner")]

    issued = ops(local_stack, "gift-cards", "issue", "--credits", "5")
    assert issued.returncode == 0, issued.stderr
    [card] = json.loads(issued.stdout)
    assert card["credits"] == 5
    redeemed = httpx.post(f"{base}/billing/gift-cards/redeem", headers={"Authorization": f"Bearer {token}"},
                          json={"code": card["code"]})
    assert redeemed.status_code == 200, redeemed.text

    disabled = ops(local_stack, "users", "disable", owner["email"])
    assert disabled.returncode == 0, disabled.stderr
    refused = httpx.post(f"{base}/auth/login", json={"email": owner["email"], "password": owner["password"]})
    assert refused.status_code == 403, refused.text

    again = ops(local_stack, "tenants", "create", "Twice", "--owner-email", "first-admin@example.com")
    assert again.returncode == 1 and "already exists" in again.stderr


def test_ops_names_a_stack_that_does_not_exist(local_stack):
    done = subprocess.run([sys.executable, "-m", "ops", "--stack", "no-such-stack", "users", "disable", "x@example.com"],
                          cwd=ROOT, text=True, capture_output=True, timeout=120, env=_aws_environment(local_stack))
    assert done.returncode == 2 and "cannot read the stack no-such-stack" in done.stderr
