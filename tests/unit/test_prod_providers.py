"""A prod stage refuses the test payment provider and the offline model unless AllowTestProviders says
so: at deploy (template.yaml's Rules) and at start (the settings)."""

from __future__ import annotations

import itertools

import pytest

from devstack.template import load
from svc_core.platform import config


def _evaluate(node, parameters: dict[str, str]):
    """The rule functions the template's Rules use (Ref, Equals, Not, Or, And)."""
    if not isinstance(node, dict):
        return node
    (name, value), = node.items()
    if name == "Ref":
        return parameters[value]
    args = [_evaluate(v, parameters) for v in value]
    return {"Fn::Equals": lambda: args[0] == args[1], "Fn::Not": lambda: not args[0],
            "Fn::Or": lambda: any(args), "Fn::And": lambda: all(args)}[name]()


def _deploy_refused(**given: str) -> list[str]:
    """The assertions a deploy with these parameters (over the defaults) fails, as CloudFormation checks them."""
    template = load()
    parameters = {k: str(v.get("Default", "")) for k, v in template["Parameters"].items()} | given
    failed = []
    for rule in template["Rules"].values():
        if _evaluate(rule.get("RuleCondition", True), parameters):
            failed += [a["AssertDescription"] for a in rule["Assertions"] if not _evaluate(a["Assert"], parameters)]
    return failed


def test_the_template_refuses_a_prod_stack_with_test_providers_unless_allowed():
    assert _deploy_refused() == []  # dev, test payments, Bedrock: the defaults deploy
    assert _deploy_refused(Stage="prod") == ["Stage=prod needs PaymentProvider=stripe (or AllowTestProviders=true)."]
    assert len(_deploy_refused(Stage="prod", ModelProvider="offline")) == 2
    assert _deploy_refused(Stage="prod", ModelProvider="offline", AllowTestProviders="true") == []
    assert _deploy_refused(Stage="prod", PaymentProvider="stripe") == []
    assert _deploy_refused(Stage="dev", PaymentProvider="test", ModelProvider="offline") == []


@pytest.fixture(autouse=True)
def standard_password_hashing(monkeypatch):
    """The suite hashes passwords lightly (tests/conftest.py), which STAGE=prod refuses too."""
    monkeypatch.delenv("PASSWORD_HASHING")


@pytest.mark.parametrize("payment, model", itertools.product(["test", "stripe"], ["offline", "bedrock"]))
def test_the_settings_refuse_the_same_at_start(monkeypatch, payment, model):
    monkeypatch.setenv("PAYMENT_PROVIDER", payment)
    monkeypatch.setenv("MODEL_PROVIDER", model)
    for stage in ("dev", "prod"):
        monkeypatch.setenv("STAGE", stage)
        for allowed in ("false", "true"):
            monkeypatch.setenv("ALLOW_TEST_PROVIDERS", allowed)
            config.settings.cache_clear()
            if stage == "prod" and allowed == "false" and (payment == "test" or model == "offline"):
                with pytest.raises(config.UnsafeSettings) as refused:
                    config.settings()
                assert ("PAYMENT_PROVIDER=test" in str(refused.value)) == (payment == "test")
                assert ("MODEL_PROVIDER=offline" in str(refused.value)) == (model == "offline")
            else:
                assert config.settings().stage == stage


def test_a_prod_function_fails_at_start_not_on_a_request(monkeypatch):
    """SnapStart's before-snapshot hook reads the settings at init: a refused prod version never publishes."""
    from svc_core.http.api import Api
    monkeypatch.setenv("STAGE", "prod")
    monkeypatch.setattr("svc_core.adapters.aws.warm_models", lambda services: None)
    config.settings.cache_clear()
    with pytest.raises(config.UnsafeSettings):
        Api().prepare_snapshot()
