"""template.yaml's function environment and the settings table (svc_core/platform/config.py) agree:
every variable the template sets is read by a setting or by the named library that reads it; every
setting has its default in the table; every value the template can give parses as its setting's type."""

from __future__ import annotations

import dataclasses

import pytest

from devstack.template import load
from svc_core.platform import config

# Variables the template sets that other code reads, not the settings.
READ_ELSEWHERE = {
    "LOG_LEVEL": "Powertools Logger (its older name of POWERTOOLS_LOG_LEVEL)",
    "POWERTOOLS_LOG_LEVEL": "Powertools Logger",
    "POWERTOOLS_SERVICE_NAME": "Powertools Logger, Tracer and Metrics",
    "POWERTOOLS_METRICS_NAMESPACE": "Powertools Metrics",
    "POWERTOOLS_DEV": "Powertools",
    "AWS_LAMBDA_EXEC_WRAPPER": "the Lambda runtime (starts the Lambda Web Adapter of the chat stream)",
    "AWS_LWA_INVOKE_MODE": "the Lambda Web Adapter",
    "AWS_LWA_PORT": "the Lambda Web Adapter",
    "AWS_LWA_READINESS_CHECK_PROTOCOL": "the Lambda Web Adapter",
    "AWS_ENDPOINT_URL": "botocore (empty in AWS; the local stack's emulator under sam local --env-vars)",
    "AWS_ENDPOINT_URL_DYNAMODB": "botocore (empty in AWS; DynamoDB Local under sam local --env-vars)",
    "AWS_ENDPOINT_URL_DYNAMODB_STREAMS": "botocore (empty in AWS; DynamoDB Local under sam local --env-vars)",
    "PYDANTIC_DISABLE_PLUGINS": "pydantic (no plugin lookup in the installed packages' metadata)",
}


def _template_environment() -> dict[str, list]:
    """Each variable the template sets on a function, and every value it is given."""
    template = load()
    blocks = [template["Globals"]["Function"].get("Environment", {})]
    blocks += [resource["Properties"].get("Environment", {}) for resource in template["Resources"].values()
               if resource["Type"] == "AWS::Serverless::Function"]
    found: dict[str, list] = {}
    for block in blocks:
        for name, value in (block.get("Variables") or {}).items():
            found.setdefault(name, []).append(value)
    return found


def _setting_of() -> dict[str, dataclasses.Field]:
    return {variable: f for f in dataclasses.fields(config.Settings) for variable in config.variables(f.name)}


def test_every_variable_the_template_sets_is_read():
    read = _setting_of()
    unread = sorted(set(_template_environment()) - set(read) - set(READ_ELSEWHERE))
    assert unread == [], f"template.yaml sets variables no setting reads (add them to config.Settings): {unread}"
    stale = sorted(set(READ_ELSEWHERE) - set(_template_environment()))
    assert stale == [], f"READ_ELSEWHERE names variables the template no longer sets: {stale}"
    assert not set(READ_ELSEWHERE) & set(read)


def test_every_setting_has_its_default_in_the_table():
    missing = [f.name for f in dataclasses.fields(config.Settings) if f.default is dataclasses.MISSING]
    assert missing == []


@pytest.mark.parametrize("variable", sorted(set(_template_environment()) - set(READ_ELSEWHERE)))
def test_what_the_template_gives_parses_as_the_settings_type(variable, monkeypatch):
    """A literal, or a parameter's default (and each of its allowed values): read into the setting."""
    template, field = load(), _setting_of()[variable]
    monkeypatch.setenv("ALLOW_TEST_PROVIDERS", "true")  # STAGE=prod with the defaults: test_prod_providers.py
    monkeypatch.delenv("PASSWORD_HASHING")  # the suite's light hashes, which STAGE=prod refuses
    texts = []
    for value in _template_environment()[variable]:
        if isinstance(value, dict) and set(value) == {"Ref"} and value["Ref"] in template.get("Parameters", {}):
            parameter = template["Parameters"][value["Ref"]]
            texts += [str(parameter.get("Default", ""))] + [str(v) for v in parameter.get("AllowedValues", [])]
        elif not isinstance(value, dict):
            texts.append(str(value))
    for text in texts:
        monkeypatch.setenv(variable, text)
        config.settings.cache_clear()
        try:
            value = getattr(config.settings(), field.name)
        finally:
            config.settings.cache_clear()
        assert type(value).__name__ == field.type, (variable, text)


def test_a_setting_is_read_from_its_variable_and_left_at_its_default_otherwise(monkeypatch):
    monkeypatch.setenv("API_KEY_CACHE_SECONDS", "7")
    monkeypatch.setenv("CHAT_STREAM_MAX_SECONDS", "12.5")
    monkeypatch.setenv("ALLOW_LOOPBACK_ENDPOINTS", " True ")
    monkeypatch.setenv("MODEL_PROVIDER", "")        # blank: the default
    monkeypatch.setenv("MODEL_ALLOWED_IDS", "")     # blank: blank
    monkeypatch.delenv("USAGE_TABLE", raising=False)
    monkeypatch.setenv("AWS_REGION", "")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    config.settings.cache_clear()
    try:
        s = config.settings()
    finally:
        config.settings.cache_clear()
    assert (s.key_cache_seconds, s.chat_stream_max_seconds, s.allow_loopback_endpoints) == (7, 12.5, True)
    assert (s.model_provider, s.model_allowed_ids, s.usage_table, s.aws_region) == ("offline", "", "usage", "eu-west-1")


def test_one_condition_attaches_the_secrets_extension_and_tells_the_functions():
    """The extension's layer goes on every function (Globals) and SECRETS_EXTENSION_ATTACHED says so, under
    one condition: the setting without the layer would only try localhost and fall back to the SDK."""
    from devstack.template import Resolver
    layers = load()["Globals"]["Function"]["Layers"]
    assert {"Fn::If": ["HasSecretsExtension", {"Ref": "SecretsExtensionLayerArn"}, {"Ref": "AWS::NoValue"}]} in layers
    arn = "arn:aws:lambda:us-east-1:177933569100:layer:AWS-Parameters-and-Secrets-Lambda-Extension-Arm64:12"
    for given, attached in (("", "false"), (arn, "true")):
        environment = Resolver({"SecretsExtensionLayerArn": given}).function_environment("ProjectsFunction")
        assert environment["SECRETS_EXTENSION_ATTACHED"] == attached


def test_every_resource_the_functions_name_is_an_output_of_the_stack():
    """`python -m ops --stack NAME` sets the functions' environment from the stack's outputs, one per
    resource the Globals name: a resource without its output leaves ops writing to a default name
    (the audit log's table was missed so, and the operator's tenant creation failed)."""
    template = load()
    variables = template["Globals"]["Function"]["Environment"]["Variables"]
    named = {value["Ref"] for value in variables.values()
             if isinstance(value, dict) and set(value) == {"Ref"} and value["Ref"] in template["Resources"]}
    missing = sorted(named - set(template.get("Outputs") or {}))
    assert missing == [], f"template.yaml's Outputs lack these resources the functions name: {missing}"
