"""Within a request, an AWS call is retried only while the request's deadline leaves room for the
backoff and one more whole attempt (adapters/aws.py): a request meeting a stalled datastore answers
503 before Lambda's Timeout would end it (a 502 from API Gateway). Outside a request, botocore's own
three attempts. Counted as attempts reaching a server that accepts and never answers."""

from __future__ import annotations

import pytest
from botocore.exceptions import ReadTimeoutError

from svc_core.adapters import aws
from svc_core.platform import deadline
from tests.support.storage_servers import SilentServer


@pytest.fixture
def stalled_dynamodb(monkeypatch):
    server = SilentServer()
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", server.endpoint)
    for name, value in (("AWS_ACCESS_KEY_ID", "local"), ("AWS_SECRET_ACCESS_KEY", "local"), ("AWS_REGION", "us-east-1")):
        monkeypatch.setenv(name, value)
    from svc_core.platform import config
    config.settings.cache_clear()
    aws.reset_clients()
    yield server
    server.stop()
    aws.reset_clients()
    config.settings.cache_clear()


def get_item():
    aws.client("dynamodb").get_item(TableName="ProjectsTable", Key={"tenantId": {"S": "t"}, "id": {"S": "p"}})


def test_outside_a_request_a_stalled_call_is_tried_three_times(stalled_dynamodb):
    with pytest.raises(ReadTimeoutError):
        get_item()
    assert len(stalled_dynamodb.held) == 3


def test_late_in_a_request_a_stalled_call_is_not_tried_again(stalled_dynamodb):
    # One second of the deadline left: less than a backoff and a whole attempt (2 + 1 + 2 s).
    with deadline.request(remaining_seconds=deadline.RESERVE_SECONDS + 1), pytest.raises(ReadTimeoutError) as raised:
        get_item()
    assert len(stalled_dynamodb.held) == 1
    assert aws.is_unavailable(raised.value)   # answered 503, as any datastore out of reach


def test_early_in_a_request_it_is_retried_as_usual(stalled_dynamodb):
    with deadline.request(remaining_seconds=29), pytest.raises(ReadTimeoutError):
        get_item()
    assert len(stalled_dynamodb.held) >= 2
