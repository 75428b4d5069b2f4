"""The functions' roles as `sam deploy` makes them (devstack/iam.py), and what each AWS call asks of them."""

from __future__ import annotations

import pytest

from devstack import iam
from devstack.template import Resolver

REGION, ACCOUNT = "us-east-1", "123456789012"


def table(name: str) -> str:
    return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{name}"


@pytest.fixture(scope="module")
def roles():
    return iam.roles(iam.REPORT_PARAMETERS)


def allowed(role, action, resource, context=None) -> bool:
    from devstack.iam_policy import Request, evaluate
    return evaluate(role.statements, Request.of(action, resource, context))[0] == "allow"


def test_every_function_of_the_template_has_a_role(roles):
    functions = Resolver({}).of_type("AWS::Serverless::Function")
    assert set(functions) <= set(roles)
    assert all(role.statements for role in roles.values())


def test_a_sam_policy_template_grants_what_the_translator_says_and_no_more(roles):
    # ChatTurnFunction holds the usage table through DynamoDBWritePolicy: put, update, batch write only,
    # and a query of one index by a statement of its own.
    turns = roles["ChatTurnFunction"]
    for action in ("PutItem", "UpdateItem", "BatchWriteItem"):
        assert allowed(turns, f"dynamodb:{action}", table("UsageTable"))
    for action in ("GetItem", "DeleteItem", "ConditionCheckItem", "Query", "Scan"):
        assert not allowed(turns, f"dynamodb:{action}", table("UsageTable"))
    assert allowed(turns, "dynamodb:Query", table("UsageTable") + "/index/bySource")
    assert not allowed(turns, "dynamodb:Query", table("UsageTable") + "/index/other")
    # The outbox: events put, and read back after a cancelled transaction; nothing else.
    projects = roles["ProjectsFunction"]
    assert allowed(projects, "dynamodb:PutItem", table("OutboxTable"))
    assert allowed(projects, "dynamodb:GetItem", table("OutboxTable"))
    assert not allowed(projects, "dynamodb:UpdateItem", table("OutboxTable"))
    assert not allowed(projects, "dynamodb:ConditionCheckItem", table("OutboxTable"))
    # Its own table through DynamoDBCrudPolicy, indexes included; another function's table not at all.
    assert allowed(projects, "dynamodb:Query", table("ProjectsTable") + "/index/any")
    assert not allowed(projects, "dynamodb:GetItem", table("AgentsTable"))


def test_the_directory_is_named_as_it_is_deployed(roles):
    directory = table("svc-directory-dev")
    assert allowed(roles["ProjectsFunction"], "dynamodb:GetItem", directory)
    names = iam.Names(Resolver({}), {})
    assert names.table("DirectoryTable", REGION) == directory   # the local stack's name for it


def test_a_transaction_asks_for_each_item_as_its_own_action_on_its_own_table():
    names = iam.Names(Resolver({}), {})
    asked = iam.asks("dynamodb", "TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": "ProjectsTable"}}, {"Update": {"TableName": "TenantsTable"}},
        {"Delete": {"TableName": "OutboxTable"}}, {"ConditionCheck": {"TableName": "ApiKeysTable"}}]},
        REGION, names)
    assert [(a.action, a.resource) for a in asked] == [
        ("dynamodb:PutItem", table("ProjectsTable")), ("dynamodb:UpdateItem", table("TenantsTable")),
        ("dynamodb:DeleteItem", table("OutboxTable")), ("dynamodb:ConditionCheckItem", table("ApiKeysTable"))]


def test_other_services_ask_for_their_resources():
    pepper = "arn:aws:secretsmanager:us-east-1:1:secret:KeyPepperSecret-Ab12Cd"
    names = iam.Names(Resolver({}), {"secret:KeyPepperSecret": pepper})
    ask = lambda service, operation, params: [(a.action, a.resource) for a in  # noqa: E731
                                              iam.asks(service, operation, params, REGION, names)]
    assert ask("sqs", "SendMessage", {"QueueUrl": "http://127.0.0.1:5000/123456789012/ChatTurnQueue"}) == [
        ("sqs:SendMessage", f"arn:aws:sqs:{REGION}:{ACCOUNT}:ChatTurnQueue")]
    assert ask("sqs", "DeleteMessageBatch", {"QueueUrl": "http://h/123456789012/Q"}) == [
        ("sqs:DeleteMessage", f"arn:aws:sqs:{REGION}:{ACCOUNT}:Q")]
    assert ask("secretsmanager", "GetSecretValue", {"SecretId": "KeyPepperSecret"}) == [
        ("secretsmanager:GetSecretValue", pepper)]
    assert ask("events", "PutEvents", {"Entries": [{"EventBusName": "svc-events"}, {}]}) == [
        ("events:PutEvents", f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/default"),
        ("events:PutEvents", f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/svc-events")]
    assert ask("bedrock-runtime", "ConverseStream", {"modelId": "us.anthropic.claude"}) == [
        ("bedrock:InvokeModelWithResponseStream", f"arn:aws:bedrock:{REGION}:{ACCOUNT}:inference-profile/us.anthropic.claude")]
    assert ask("s3", "HeadObject", {"Bucket": "b", "Key": "tenants/t/x"}) == [("s3:GetObject", "arn:aws:s3:::b/tenants/t/x")]
    assert ask("s3", "ListObjectsV2", {"Bucket": "b", "Prefix": "x"}) == [("s3:ListBucket", "arn:aws:s3:::b")]
    assert ask("sts", "GetCallerIdentity", {}) == []   # needs no permission


def test_the_sender_condition_of_the_invitations_mail(roles):
    members = [r for r in roles.values() if any("ses:SendEmail" in str(s.get("Action")) for s in r.statements)]
    assert members, "some function sends e-mail"
    names = iam.Names(Resolver({}), {})
    for role in members:
        for ask in iam.asks("sesv2", "SendEmail", {"FromEmailAddress": "Svc <invitations@svc.localhost>"}, REGION, names):
            assert allowed(role, ask.action, ask.resource, dict(ask.context))
        for ask in iam.asks("sesv2", "SendEmail", {"FromEmailAddress": "someone@else.test"}, REGION, names):
            assert not allowed(role, ask.action, ask.resource, dict(ask.context))


def test_the_report_says_what_was_used_what_is_kept_and_why_and_what_was_denied():
    records = [
        {"function": "ProjectsFunction", "action": "dynamodb:GetItem", "resource": table("ProjectsTable"),
         "decision": "allow"},
        {"function": "ProjectsFunction", "action": "dynamodb:GetItem", "resource": table("AgentsTable"),
         "decision": "implicit-deny"},
    ]
    rules = [{"function": "Projects*", "source": "DynamoDBCrudPolicy", "action": "dynamodb:scan",
              "resource": "*/ProjectsTable", "name": "test-rule", "why": "a test reason"}]
    found = iam.report(records, rules=rules)["ProjectsFunction"]
    grants = {(g["action"], g["resource"].rsplit(":", 1)[-1], g["source"]): g for g in found["grants"]}
    get = grants[("dynamodb:GetItem", "table/ProjectsTable", "DynamoDBCrudPolicy")]
    assert get["used"] == [table("ProjectsTable")] and get["kept"] is None
    scan = grants[("dynamodb:Scan", "table/ProjectsTable", "DynamoDBCrudPolicy")]
    assert scan["used"] == [] and scan["kept"] == "test-rule"
    delete = grants[("dynamodb:DeleteItem", "table/ProjectsTable", "DynamoDBCrudPolicy")]
    assert delete["used"] == [] and delete["kept"] is None          # no rule covers it
    assert found["denied"] == [["dynamodb:GetItem", table("AgentsTable")]]
    assert {"managed AWSLambdaBasicExecutionRole", "inline"} <= {g["source"] for g in found["grants"]}


def test_every_kept_reason_names_a_reason_and_matches_some_grant():
    rules = iam.kept_reasons()
    assert rules, "iam-kept.yaml lists why unused permissions are kept"
    found = iam.report([], rules=[])
    every = [(f, g) for f, entry in found.items() for g in entry["grants"]]
    assert len({rule["name"] for rule in rules}) == len(rules), "each rule has a name of its own"
    for rule in rules:
        assert len(rule.get("why", "")) > 20, rule
        assert any(iam.reason_kept(g, f, [rule]) for f, g in every), f"{rule} matches no grant of any role"
