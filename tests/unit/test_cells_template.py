"""template.yaml deploys a cell: the first cell's stack owns the directory's global table and the shared
secrets and replicates them to the other cells' regions; the others reference them. A single-cell stack
(the defaults) is what it was: one replica, no secret replicas, its own secrets."""

from __future__ import annotations

import json
import re
import shlex
import tomllib

import pytest

from devstack.template import ROOT, Resolver, load
from ops.residency import resource_variables

DIRECTORY_NAME = {"Fn::Sub": "svc-directory-${Stage}"}


def _with(**parameters: str) -> Resolver:
    return Resolver(parameters)


def _functions(template: dict) -> dict[str, dict]:
    return {k: v for k, v in template["Resources"].items() if v["Type"] == "AWS::Serverless::Function"}


@pytest.mark.parametrize("given, regions", [
    ({}, ["us-east-1"]),
    ({"ReplicaRegion1": "eu-central-1"}, ["us-east-1", "eu-central-1"]),
    ({"ReplicaRegion1": "eu-central-1", "ReplicaRegion2": "eu-west-2"}, ["us-east-1", "eu-central-1", "eu-west-2"]),
])
def test_the_directory_is_replicated_to_the_replica_regions_given(given, regions):
    props = _with(**given).resolve(load()["Resources"]["DirectoryTable"]["Properties"])
    assert [r["Region"] for r in props["Replicas"]] == regions
    assert all(r["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True} for r in props["Replicas"])
    assert props["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}  # a global table needs it


def test_the_secrets_are_replicated_under_the_same_conditions_as_the_directory():
    template = load()
    expected = {"Fn::If": ["HasReplicaRegion2",
                           [{"Region": {"Ref": "ReplicaRegion1"}}, {"Region": {"Ref": "ReplicaRegion2"}}],
                           {"Fn::If": ["HasReplicaRegion1", [{"Region": {"Ref": "ReplicaRegion1"}}],
                                       {"Ref": "AWS::NoValue"}]}]}
    for name in ("SigningKeysSecret", "KeyPepperSecret"):
        secret = template["Resources"][name]
        assert secret["Properties"]["ReplicaRegions"] == expected, name
        assert secret["Condition"] == "OwnsDirectory", name
    conditions = template["Conditions"]
    assert conditions["HasReplicaRegion1"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "ReplicaRegion1"}, ""]}]}
    assert conditions["HasReplicaRegion2"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "ReplicaRegion2"}, ""]}]}


def test_only_the_owner_creates_the_directory_and_every_cell_names_it_alike():
    template = load()
    table = template["Resources"]["DirectoryTable"]
    assert table["Condition"] == "OwnsDirectory"
    assert table["Properties"]["TableName"] == DIRECTORY_NAME  # fixed per stage: the other cells' stacks name it
    assert template["Resources"]["SigningKeysInit"]["Condition"] == "OwnsDirectory"
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    assert variables["DIRECTORY_TABLE"] == {"Fn::If": ["OwnsDirectory", {"Ref": "DirectoryTable"}, DIRECTORY_NAME]}
    assert template["Outputs"]["DirectoryTable"]["Value"] == variables["DIRECTORY_TABLE"]
    for variable, secret, parameter in (("SIGNING_KEYS_SECRET_ID", "SigningKeysSecret", "SigningKeysSecretArn"),
                                        ("KEY_PEPPER_SECRET_ID", "KeyPepperSecret", "KeyPepperSecretArn")):
        owned, replica = variables[variable]["Fn::If"][1:]
        assert owned == {"Ref": secret}
        assert parameter in json.dumps(replica) and "${AWS::Region}" in json.dumps(replica)  # this region's replica
        assert template["Outputs"][secret]["Value"] == variables[variable]


def test_single_cell_defaults_are_unchanged():
    template = load()
    parameters = template["Parameters"]
    assert parameters["DirectoryOwner"]["Default"] == "true"
    assert all(parameters[p]["Default"] == "" for p in ("ReplicaRegion1", "ReplicaRegion2", "SigningKeysSecretArn",
                                                         "KeyPepperSecretArn", "Cells"))
    environment = Resolver({}).function_environment("AuthFunction")
    assert (environment["DIRECTORY_TABLE"], environment["SIGNING_KEYS_SECRET_ID"],
            environment["KEY_PEPPER_SECRET_ID"]) == ("DirectoryTable", "SigningKeysSecret", "KeyPepperSecret")


def test_a_cell_that_does_not_own_the_directory_must_name_the_owners_secrets_and_no_replicas():
    rules = load()["Rules"]
    other = rules["OtherCellsUseTheOwnersReplicas"]
    assert other["RuleCondition"] == {"Fn::Equals": [{"Ref": "DirectoryOwner"}, "false"]}
    asserted = json.dumps(other["Assertions"])
    for parameter in ("ReplicaRegion1", "ReplicaRegion2", "SigningKeysSecretArn", "KeyPepperSecretArn"):
        assert parameter in asserted


def test_every_function_with_the_tenants_users_or_keys_table_may_use_the_directory():
    """Authentication reads the directory, and writes of users, tenants, memberships and keys add its entries in
    the same transaction: a function missing the policy would fail only in AWS (the local stack has no IAM)."""
    template = load()
    missing = []
    for name, function in _functions(template).items():
        policies = json.dumps(function["Properties"].get("Policies", []))
        touches = any(f'"{table}"' in policies for table in ("TenantsTable", "UsersTable", "ApiKeysTable"))
        statements = [s for p in function["Properties"].get("Policies", []) if isinstance(p, dict)
                      for s in p.get("Statement", [])]
        directory = [s for s in statements if "svc-directory-${Stage}" in json.dumps(s.get("Resource"))]
        if touches and not any({"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:ConditionCheckItem",
                                "dynamodb:DeleteItem"} <= set(s["Action"]) for s in directory):
            missing.append(name)
    assert missing == []


def test_ops_finds_every_resource_of_the_environment_among_the_outputs():
    """ops --stack sets the functions' environment from the outputs: a resource named through a condition
    (the directory, the shared secrets) is found too."""
    template = load()
    named = resource_variables(template)
    assert {"DirectoryTable", "SigningKeysSecret", "KeyPepperSecret", "UsersTable"} <= set(named)
    assert sorted(set(named) - set(template["Outputs"])) == []


def _overrides(environment: dict) -> dict[str, str]:
    return dict(p.split("=", 1) for p in shlex.split(environment["deploy"]["parameters"]["parameter_overrides"]))


def test_samconfigs_two_regions_are_an_owner_and_a_cell_that_references_it():
    template = load()
    environments = tomllib.loads((ROOT / "samconfig.toml").read_text())
    owner, other = environments["prod-us"], environments["prod-eu"]
    given = {name: _overrides(env) for name, env in (("owner", owner), ("other", other))}
    for values in given.values():
        assert sorted(set(values) - set(template["Parameters"])) == []  # no misspelt parameter
        for name, value in values.items():
            allowed = template["Parameters"][name].get("AllowedValues")
            assert allowed is None or value in [str(v) for v in allowed], (name, value)
    us, eu = owner["deploy"]["parameters"]["region"], other["deploy"]["parameters"]["region"]
    assert (given["owner"]["DirectoryOwner"], given["owner"]["ReplicaRegion1"]) == ("true", eu)
    assert given["other"]["DirectoryOwner"] == "false" and "ReplicaRegion1" not in given["other"]
    assert given["owner"]["Stage"] == given["other"]["Stage"]  # the directory's name is per stage
    cells = json.loads(given["owner"]["Cells"])
    assert json.loads(given["other"]["Cells"]) == cells
    assert cells == {us: given["owner"]["PublicBaseUrl"], eu: given["other"]["PublicBaseUrl"]}
    assert given["other"]["ModelId"].startswith("eu.")  # an EU cell's model calls stay in the EU
    # Until the owner's ARNs are filled in, the other cell's deploy is refused by the parameter's pattern.
    pattern = template["Parameters"]["SigningKeysSecretArn"]["AllowedPattern"]
    assert not re.fullmatch(pattern, given["other"]["SigningKeysSecretArn"])
    assert re.fullmatch(pattern, f"arn:aws:secretsmanager:{us}:123456789012:secret:SigningKeysSecret-Ab12-XyZ123")


def test_ops_stack_sets_the_directory_and_the_secrets_of_a_cell_from_its_outputs(monkeypatch):
    """A cell that does not own the directory names it and the secrets' replicas through a condition: ops --stack
    still sets them (left unset, ops would write the directory entries of a new tenant to a table named
    'directory')."""
    import boto3

    from ops.__main__ import stack_environment

    outputs = {name: f"value-of-{name}" for name in load()["Outputs"]}
    outputs["DirectoryTable"] = "svc-directory-prod"

    class CloudFormation:
        def describe_stacks(self, StackName):
            return {"Stacks": [{"Outputs": [{"OutputKey": k, "OutputValue": v} for k, v in outputs.items()]}]}

    monkeypatch.setattr(boto3, "client", lambda service, region_name=None: CloudFormation())
    environment = stack_environment("svc-api-prod-eu", "eu-central-1")
    assert environment["DIRECTORY_TABLE"] == "svc-directory-prod"
    assert environment["SIGNING_KEYS_SECRET_ID"] == "value-of-SigningKeysSecret"
    assert environment["KEY_PEPPER_SECRET_ID"] == "value-of-KeyPepperSecret"
    assert (environment["USERS_TABLE"], environment["AWS_REGION"]) == ("value-of-UsersTable", "eu-central-1")
