"""What the IaC scanners' configurations (.cfnlintrc, .checkov.yaml) take on trust, checked on template.yaml
as the local stack reads it (devstack/template.py):

- an SQS queue that feeds a function hides a received message at least as long as the function may run
  (AWS refuses the event source mapping otherwise, and a shorter timeout would hand a message still being
  worked on to a second worker); a function without Timeout has Globals.Function.Timeout;
- every queue is encrypted (checkov's CKV_AWS_27 is left out: it reads KmsMasterKeyId only, and the queues
  use SqsManagedSseEnabled).

Each check is a function of a template, so a modified copy shows that it fails.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from devstack.template import Resolver


def _resolver(template: dict[str, Any] | None = None) -> Resolver:
    resolver = Resolver({})
    if template is not None:
        resolver.template = template
    return resolver


def _queue_of(resolver: Resolver, queue_arn: Any) -> str | None:
    """The logical id of the queue an event's Queue names (!GetAtt Q.Arn), or None for another queue."""
    if isinstance(queue_arn, dict) and "Fn::GetAtt" in queue_arn:
        logical_id, attribute = queue_arn["Fn::GetAtt"]
        if attribute == "Arn" and resolver.resources.get(logical_id, {}).get("Type") == "AWS::SQS::Queue":
            return logical_id
    return None


def queue_timeout_problems(resolver: Resolver) -> list[str]:
    """Each (queue, function) whose queue's VisibilityTimeout is shorter than the function's Timeout."""
    template = resolver.template
    default_timeout = int(resolver.resolve(template["Globals"]["Function"].get("Timeout", 3)))
    problems = []
    checked = 0
    for name, function in resolver.of_type("AWS::Serverless::Function").items():
        props = function["Properties"]
        timeout = int(resolver.resolve(props.get("Timeout", default_timeout)))
        for event_name, event in (props.get("Events") or {}).items():
            if event["Type"] != "SQS":
                continue
            queue = _queue_of(resolver, event["Properties"]["Queue"])
            assert queue, f"{name}.{event_name}: its Queue is not a queue of this template"
            checked += 1
            # SQS's own default is 30 s when the property is left out.
            visibility = int(resolver.resolve(resolver.resources[queue]["Properties"].get("VisibilityTimeout", 30)))
            if visibility < timeout:
                problems.append(f"{queue} (VisibilityTimeout {visibility}) feeds {name} (Timeout {timeout})")
    assert checked, "no SQS event source found: the check reads the wrong shape"
    return problems


def unencrypted_queues(resolver: Resolver) -> list[str]:
    return [name for name, queue in resolver.resources.items() if queue["Type"] == "AWS::SQS::Queue"
            and resolver.resolve(queue.get("Properties", {}).get("SqsManagedSseEnabled")) is not True
            and not queue.get("Properties", {}).get("KmsMasterKeyId")]


def test_every_queue_that_feeds_a_function_outlasts_its_timeout():
    assert queue_timeout_problems(_resolver()) == []


def test_every_queue_is_encrypted():
    assert unencrypted_queues(_resolver()) == []


def _shorten_agent_run_queue(template: dict[str, Any]) -> str:
    template["Resources"]["AgentRunQueue"]["Properties"]["VisibilityTimeout"] = 899
    return "AgentRunQueue (VisibilityTimeout 899) feeds AgentRunWorkerFunction (Timeout 900)"


def _drop_webhook_queue_timeout(template: dict[str, Any]) -> str:
    # SQS's default (30 s) against WebhookFanoutFunction's Globals timeout raised to 45.
    del template["Resources"]["WebhookQueue"]["Properties"]["VisibilityTimeout"]
    template["Globals"]["Function"]["Timeout"] = 45
    return "WebhookQueue (VisibilityTimeout 30) feeds WebhookFanoutFunction (Timeout 45)"


def _lengthen_chat_turn_function(template: dict[str, Any]) -> str:
    template["Resources"]["ChatTurnFunction"]["Properties"]["Timeout"] = 400
    return "ChatTurnQueue (VisibilityTimeout 360) feeds ChatTurnFunction (Timeout 400)"


@pytest.mark.parametrize("change", [_shorten_agent_run_queue, _drop_webhook_queue_timeout,
                                    _lengthen_chat_turn_function])
def test_a_queue_shorter_than_its_function_is_found(change):
    resolver = _resolver()
    template = copy.deepcopy(resolver.template)
    expected = change(template)
    assert expected in queue_timeout_problems(_resolver(template))


def test_a_queue_without_encryption_is_found():
    template = copy.deepcopy(_resolver().template)
    del template["Resources"]["ChatTurnQueue"]["Properties"]["SqsManagedSseEnabled"]
    assert unencrypted_queues(_resolver(template)) == ["ChatTurnQueue"]
