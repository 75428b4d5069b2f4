"""template.yaml watches what it runs: an alarm on every dead-letter queue and failure destination,
an error alarm and a log group with retention for every function, the webhook queue's age, the
API's 5xx rate and access log, and every alarm notifying the optional topic."""

from __future__ import annotations

import json
import re

from devstack.template import load

ACTIONS = {"Fn::If": ["HasAlarmTopic", [{"Ref": "AlarmTopicArn"}], {"Ref": "AWS::NoValue"}]}


def _of_type(template: dict, kind: str) -> dict[str, dict]:
    return {name: r for name, r in template["Resources"].items() if r["Type"] == kind}


def _dead_letter_and_failure_queues(template: dict) -> set[str]:
    """Queues named as a RedrivePolicy's target or an event source's OnFailure destination."""
    found = set()
    for queue in _of_type(template, "AWS::SQS::Queue").values():
        target = (queue["Properties"].get("RedrivePolicy") or {}).get("deadLetterTargetArn")
        if target:
            found.add(target["Fn::GetAtt"][0])
    for function in _of_type(template, "AWS::Serverless::Function").values():
        for event in (function["Properties"].get("Events") or {}).values():
            on_failure = ((event["Properties"].get("DestinationConfig") or {}).get("OnFailure") or {})
            if on_failure.get("Type") == "SQS":
                found.add(on_failure["Destination"]["Fn::GetAtt"][0])
    return found


def _queue_alarms(template: dict, metric: str) -> dict[str, dict]:
    """The alarms on an SQS metric, by the queue they watch."""
    watched = {}
    for alarm in _of_type(template, "AWS::CloudWatch::Alarm").values():
        props = alarm["Properties"]
        if props.get("Namespace") == "AWS/SQS" and props.get("MetricName") == metric:
            (dimension,) = props["Dimensions"]
            assert dimension["Name"] == "QueueName"
            watched[dimension["Value"]["Fn::GetAtt"][0]] = props
    return watched


def _alarm_dimensions(props: dict, metric: str) -> list:
    return [m["MetricStat"]["Metric"]["Dimensions"] for m in props.get("Metrics", [])
            if "MetricStat" in m and m["MetricStat"]["Metric"]["MetricName"] == metric]


def test_every_dead_letter_queue_and_failure_destination_has_an_alarm_on_its_messages():
    template = load()
    queues = _dead_letter_and_failure_queues(template)
    assert {"WebhookDeadLetterQueue", "WebhookDeliveryDeadLetterQueue", "ChatTurnDeadLetterQueue",
            "AgentRunDeadLetterQueue", "OutboxFailureQueue"} <= queues
    alarms = _queue_alarms(template, "ApproximateNumberOfMessagesVisible")
    missing = queues - set(alarms)
    assert not missing, f"no alarm on the messages of {sorted(missing)}"
    for queue in queues:  # one message is one too many
        assert alarms[queue]["Threshold"] == 0 and alarms[queue]["ComparisonOperator"] == "GreaterThanThreshold"


def test_the_webhook_queue_has_an_age_alarm():
    assert "WebhookQueue" in _queue_alarms(load(), "ApproximateAgeOfOldestMessage")


def test_every_function_has_a_log_group_with_the_retention_parameter():
    template = load()
    groups = _of_type(template, "AWS::Logs::LogGroup")
    for name, function in _of_type(template, "AWS::Serverless::Function").items():
        config = function["Properties"].get("LoggingConfig") or {}
        group = config.get("LogGroup", {}).get("Ref")
        assert group in groups, f"{name} logs to no log group of the template"
        assert groups[group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}, name


def test_every_function_has_an_error_rate_alarm_on_what_it_runs():
    template = load()
    alarms = _of_type(template, "AWS::CloudWatch::Alarm").values()
    for name, function in _of_type(template, "AWS::Serverless::Function").items():
        wanted = [{"Name": "FunctionName", "Value": {"Ref": name}}]
        alias = function["Properties"].get("AutoPublishAlias")
        if alias:  # what API Gateway invokes, and what a canary rollout is judged by
            wanted.append({"Name": "Resource", "Value": {"Fn::Sub": f"${{{name}}}:{alias}"}})
        matching = [a for a in alarms if _alarm_dimensions(a["Properties"], "Errors") == [wanted]
                    and _alarm_dimensions(a["Properties"], "Invocations") == [wanted]]
        assert len(matching) == 1, f"{name}: {len(matching)} error-rate alarms"


def test_api_5xx_and_throttle_alarms_and_every_alarm_notifies_the_optional_topic():
    template = load()
    alarms = _of_type(template, "AWS::CloudWatch::Alarm")
    metrics = {(a["Properties"].get("Namespace"), a["Properties"].get("MetricName")) for a in alarms.values()}
    assert {("AWS/ApiGateway", "5XXError"), ("AWS/Lambda", "Throttles")} <= metrics
    for name, alarm in alarms.items():
        assert alarm["Properties"]["AlarmActions"] == ACTIONS and alarm["Properties"]["OKActions"] == ACTIONS, name
    assert template["Conditions"]["HasAlarmTopic"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "AlarmTopicArn"}, ""]}]}
    assert template["Parameters"]["AlarmTopicArn"]["Default"] == ""


def test_the_api_writes_a_json_access_log_with_retention():
    template = load()
    setting = template["Resources"]["Api"]["Properties"]["AccessLogSetting"]
    group = setting["DestinationArn"]["Fn::GetAtt"][0]
    assert template["Resources"][group]["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
    # Each $context variable is a string or (messageString) an already quoted one: the line is JSON.
    line = re.sub(r"\$context\.[A-Za-z.]+", lambda m: '"x"' if m.group(0).endswith("messageString") else "x",
                  setting["Format"])
    record = json.loads(line)
    assert {"requestId", "status", "path", "latencyMs"} <= set(record)
    assert not re.search(r"authorization|header|body", setting["Format"], re.I)  # no credential, no body


def test_every_aliased_function_rolls_out_through_codedeploy_rolled_back_by_its_alarms():
    import tomllib

    from devstack.template import ROOT
    template = load()
    aliased = {n: f for n, f in _of_type(template, "AWS::Serverless::Function").items()
               if f["Properties"].get("AutoPublishAlias")}
    assert len(aliased) >= 13
    for name, function in aliased.items():
        preference = function["Properties"]["DeploymentPreference"]
        assert preference["Type"] == {"Ref": "DeploymentType"}, name
        assert {"Ref": f"{name}ErrorsAlarm"} in preference["Alarms"], name
        assert {"Ref": "ApiServerErrorsAlarm"} in preference["Alarms"], name
    assert template["Parameters"]["DeploymentType"]["Default"] == "AllAtOnce"
    environments = tomllib.loads((ROOT / "samconfig.toml").read_text())
    overrides = {env: dict(p.split("=", 1) for p in c["deploy"]["parameters"]["parameter_overrides"].split())
                 for env, c in environments.items() if isinstance(c, dict) and "deploy" in c}
    assert overrides["prod"]["DeploymentType"].startswith("Canary")
    assert overrides["dev"].get("DeploymentType", "AllAtOnce") == "AllAtOnce"
