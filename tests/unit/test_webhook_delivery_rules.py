"""The rules of webhook delivery: schedule, jitter, Retry-After, signatures, and that the
template's queue and mappings agree with them."""

from __future__ import annotations

import base64
import os
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
from standardwebhooks import Webhook

from devstack.pollers import QueuePoller
from devstack.template import Resolver, load
from svc_core.adapters.endpoint_guard import EndpointRefused
from svc_core.domain import webhook_delivery as wd
from svc_core.platform.config import settings

DEFAULT = wd.parse_schedule(settings().webhook_retry_schedule)


def test_the_default_schedule_is_eight_attempts_over_more_than_a_day():
    assert DEFAULT == (5, 300, 1800, 7200, 18000, 36000, 36000)
    assert wd.max_attempts(DEFAULT) == 8
    assert sum(DEFAULT) > 86400   # jitter only adds
    assert max(DEFAULT) * (1 + wd.JITTER) <= wd.MAX_DELAY_SECONDS


def test_the_template_agrees_with_the_schedule():
    template = load()
    default = template["Parameters"]["WebhookRetrySchedule"]["Default"]
    assert default == settings().webhook_retry_schedule
    queue = template["Resources"]["WebhookDeliveryQueue"]["Properties"]
    assert queue["RedrivePolicy"]["maxReceiveCount"] == wd.max_attempts(wd.parse_schedule(default))
    function = template["Resources"]["WebhookDeliveryFunction"]["Properties"]
    assert function["Timeout"] <= queue["VisibilityTimeout"]           # Lambda refuses a mapping otherwise
    assert function["Timeout"] > settings().webhook_timeout_seconds
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    assert env["WEBHOOK_RETRY_SCHEDULE"] == {"Ref": "WebhookRetrySchedule"}


def test_every_webhook_queue_has_its_mapping_with_partial_batch_failures():
    mappings = {queue: (function, props) for queue, function, props in Resolver({}).queue_subscriptions()}
    assert mappings["WebhookQueue"][0] == "WebhookFanoutFunction"
    assert mappings["WebhookDeliveryQueue"][0] == "WebhookDeliveryFunction"
    for _function, props in mappings.values():
        assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_the_local_stack_runs_as_many_pollers_as_the_mapping_allows():
    props = {"BatchSize": 10, "ScalingConfig": {"MaximumConcurrency": 50}}
    assert len(QueuePoller({"sqs": None}, "url", "arn:aws:sqs:r:1:q", lambda e: None, props)._threads) == 4
    two = {"BatchSize": 10, "ScalingConfig": {"MaximumConcurrency": 2}}
    assert len(QueuePoller({"sqs": None}, "url", "arn:aws:sqs:r:1:q", lambda e: None, two, max_pollers=8)._threads) == 2


def test_a_mapping_without_a_maximum_concurrency_polls_several_batches_at_once_as_lambda_starts():
    # Lambda starts a standard queue's mapping with 5 concurrent batches (the fan-out's has no
    # ScalingConfig): one batch at a time held every event of a burst behind the one before it.
    assert len(QueuePoller({"sqs": None}, "url", "arn:aws:sqs:r:1:q", lambda e: None, {}, max_pollers=8)._threads) == 5
    assert len(QueuePoller({"sqs": None}, "url", "arn:aws:sqs:r:1:q", lambda e: None, {})._threads) == 4


@pytest.mark.parametrize("text", ["", "5,,6", "a", "5,-1"])
def test_a_bad_schedule_is_refused(text):
    with pytest.raises(ValueError):
        wd.parse_schedule(text)


def test_delays_follow_the_schedule_plus_up_to_twenty_percent_jitter():
    for attempt, base in enumerate(DEFAULT, start=1):
        low = wd.retry_delay(attempt, DEFAULT, rand=lambda: 0.0)
        high = wd.retry_delay(attempt, DEFAULT, rand=lambda: 1.0)
        assert low == base and high == round(base * 1.2)
    assert wd.retry_delay(8, DEFAULT) is None          # the eighth attempt was the last
    assert wd.retry_delay(9, DEFAULT) is None


def test_no_delay_exceeds_twelve_hours():
    assert wd.retry_delay(1, (50000,), rand=lambda: 1.0) == 43200
    assert wd.retry_delay(1, (5,), retry_after=10 ** 9) == 43200


def test_retry_after_lengthens_but_never_shortens_the_delay():
    assert wd.retry_delay(1, DEFAULT, retry_after=120, rand=lambda: 0.5) == 120
    assert wd.retry_delay(2, DEFAULT, retry_after=1, rand=lambda: 0.0) == 300


def test_retry_after_is_read_as_seconds_or_an_http_date():
    now = 1_800_000_000.0
    assert wd.parse_retry_after("120", now) == 120
    date = format_datetime(datetime.fromtimestamp(now + 90, UTC), usegmt=True)
    assert wd.parse_retry_after(date, now) == pytest.approx(90)
    past = format_datetime(datetime.fromtimestamp(now - 90, UTC), usegmt=True)
    assert wd.parse_retry_after(past, now) == 0
    assert wd.parse_retry_after("soon", now) is None and wd.parse_retry_after(None, now) is None


def test_only_2xx_is_success():
    assert [s for s in (199, 200, 204, 299, 300, 301, 304, 410, 500) if wd.is_success(s)] == [200, 204, 299]
    assert not wd.is_success(None)


def test_the_signature_is_what_the_reference_library_computes():
    secret = "whsec_" + base64.b64encode(os.urandom(24)).decode()
    other = "whsec_" + base64.b64encode(os.urandom(24)).decode()
    body = b'{"id":"evt_1","type":"project.created"}'
    timestamp = 1_800_000_000
    ours = wd.sign([wd.secret_key(secret)], "evt_1", timestamp, body)
    reference = Webhook(secret).sign("evt_1", datetime.fromtimestamp(timestamp, UTC), body.decode())
    assert ours == reference
    both = wd.sign([wd.secret_key(secret), wd.secret_key(other)], "evt_1", timestamp, body)
    assert both.split(" ") == [reference, Webhook(other).sign("evt_1", datetime.fromtimestamp(timestamp, UTC),
                                                              body.decode())]


def test_only_refusals_that_came_from_dns_are_retried():
    assert wd.retried_after_refusal(EndpointRefused("loopback", resolved=True))
    assert wd.retried_after_refusal(EndpointRefused("does_not_resolve"))
    assert not wd.retried_after_refusal(EndpointRefused("loopback"))
    assert not wd.retried_after_refusal(EndpointRefused("private"))
    assert not wd.retried_after_refusal(EndpointRefused("malformed"))
    assert not wd.retried_after_refusal(EndpointRefused("scheme"))
