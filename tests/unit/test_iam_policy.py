"""IAM's evaluation of identity policies (devstack/iam_policy.py), case by case as AWS documents it."""

from __future__ import annotations

import pytest

from devstack.iam_policy import Request, evaluate, matches

TABLE = "arn:aws:dynamodb:us-east-1:123456789012:table/ProjectsTable"


def decide(statements, action="dynamodb:GetItem", resource=TABLE, context=None):
    return evaluate(statements, Request.of(action, resource, context))[0]


def allow(action="dynamodb:GetItem", resource=TABLE, **more):
    return {"Effect": "Allow", "Action": action, "Resource": resource, **more}


def test_nothing_allowed_is_an_implicit_deny():
    assert decide([]) == "implicit-deny"
    assert decide([allow("dynamodb:PutItem")]) == "implicit-deny"


def test_an_explicit_deny_wins_over_any_allow_in_any_order():
    deny = {"Effect": "Deny", "Action": "dynamodb:*", "Resource": "*"}
    assert decide([allow(), deny]) == "explicit-deny"
    assert decide([deny, allow()]) == "explicit-deny"


def test_actions_match_without_case_and_with_wildcards_resources_with_case():
    assert decide([allow("DynamoDB:getitem")]) == "allow"
    assert decide([allow("dynamodb:Get*")]) == "allow"
    assert decide([allow("dynamodb:?etItem")]) == "allow"
    assert decide([allow("dynamodb:Get")]) == "implicit-deny"     # a prefix is not a match
    assert decide([allow(resource=TABLE.lower())]) == "implicit-deny"
    assert decide([allow(resource="arn:aws:dynamodb:*:123456789012:table/*")]) == "allow"


def test_an_index_is_not_its_table():
    index = f"{TABLE}/index/byName"
    assert decide([allow(resource=TABLE)], resource=index) == "implicit-deny"
    assert decide([allow(resource=[TABLE, f"{TABLE}/index/*"])], resource=index) == "allow"


def test_not_action_and_not_resource():
    everything_but_delete = {"Effect": "Allow", "NotAction": "dynamodb:DeleteItem", "Resource": TABLE}
    assert decide([everything_but_delete]) == "allow"
    assert decide([everything_but_delete], action="dynamodb:DeleteItem") == "implicit-deny"
    not_there = {"Effect": "Allow", "Action": "dynamodb:GetItem", "NotResource": TABLE}
    assert decide([not_there]) == "implicit-deny"
    assert decide([not_there], resource=TABLE + "2") == "allow"


def test_string_conditions_and_a_missing_key():
    only_sender = allow("ses:SendEmail", "*", Condition={"StringEquals": {"ses:FromAddress": "a@x.test"}})
    assert decide([only_sender], "ses:SendEmail", "*", {"ses:FromAddress": ["a@x.test"]}) == "allow"
    assert decide([only_sender], "ses:SendEmail", "*", {"SES:FROMADDRESS": ["a@x.test"]}) == "allow"  # keys: any case
    assert decide([only_sender], "ses:SendEmail", "*", {"ses:FromAddress": ["b@x.test"]}) == "implicit-deny"
    assert decide([only_sender], "ses:SendEmail", "*") == "implicit-deny"        # the key absent: false
    if_exists = allow("ses:SendEmail", "*", Condition={"StringEqualsIfExists": {"ses:FromAddress": "a@x.test"}})
    assert decide([if_exists], "ses:SendEmail", "*") == "allow"                 # ...but IfExists: true
    like = allow("ses:SendEmail", "*", Condition={"StringLike": {"ses:FromAddress": "*@x.test"}})
    assert decide([like], "ses:SendEmail", "*", {"ses:FromAddress": ["c@x.test"]}) == "allow"
    not_equals = allow("ses:SendEmail", "*", Condition={"StringNotEquals": {"ses:FromAddress": ["a@x.test", "b@x.test"]}})
    assert decide([not_equals], "ses:SendEmail", "*", {"ses:FromAddress": ["b@x.test"]}) == "implicit-deny"
    assert decide([not_equals], "ses:SendEmail", "*", {"ses:FromAddress": ["c@x.test"]}) == "allow"


def test_a_denying_condition_only_denies_when_it_holds():
    insecure = {"Effect": "Deny", "Action": "*", "Resource": "*", "Condition": {"Bool": {"aws:SecureTransport": "false"}}}
    assert decide([allow(), insecure], context={"aws:SecureTransport": ["true"]}) == "allow"
    assert decide([allow(), insecure], context={"aws:SecureTransport": ["false"]}) == "explicit-deny"


def test_set_qualifiers():
    all_of = allow(Condition={"ForAllValues:StringEquals": {"dynamodb:Attributes": ["pk", "name"]}})
    assert decide([all_of], context={"dynamodb:Attributes": ["pk"]}) == "allow"
    assert decide([all_of], context={"dynamodb:Attributes": ["pk", "secret"]}) == "implicit-deny"
    any_of = allow(Condition={"ForAnyValue:StringEquals": {"dynamodb:Attributes": ["secret"]}})
    assert decide([any_of], context={"dynamodb:Attributes": ["pk", "secret"]}) == "allow"
    assert decide([any_of], context={"dynamodb:Attributes": ["pk"]}) == "implicit-deny"


def test_an_operator_not_evaluated_here_is_refused_rather_than_read_leniently():
    dated = allow(Condition={"DateGreaterThan": {"aws:CurrentTime": "2020-01-01T00:00:00Z"}})
    with pytest.raises(ValueError, match="DateGreaterThan"):
        decide([dated])


def test_the_allowing_statements_are_named():
    decision, allowed = evaluate([allow("dynamodb:PutItem"), allow(), allow("dynamodb:*")],
                                 Request.of("dynamodb:GetItem", TABLE))
    assert (decision, allowed) == ("allow", [1, 2])


@pytest.mark.parametrize(("pattern", "value", "expected"), [
    ("a*c", "abbbc", True), ("a*c", "ab/b:c", True), ("a?c", "abc", True), ("a?c", "abbc", False),
    ("a.c", "abc", False), ("a+c", "a+c", True), ("*", "", True),
])
def test_wildcards_are_iams_only_special_characters(pattern, value, expected):
    assert matches(pattern, value) is expected
