"""common.read_items when DynamoDB leaves keys unprocessed (throttling, which the emulators never
do): the keys left are asked again, and a key still left after every round raises rather than
reading as an absent item. botocore's Stubber answers the client (each request is checked against
DynamoDB's model), so nothing leaves the process."""

from __future__ import annotations

import pytest
from botocore.stub import Stubber

from svc_core.adapters import aws
from svc_core.data import common
from svc_core.data.common import ItemRead, read_items

KEY_A, KEY_B = {"pk": {"S": "a"}}, {"pk": {"S": "b"}}
ITEM_A, ITEM_B = {"pk": {"S": "a"}, "n": {"N": "1"}}, {"pk": {"S": "b"}, "n": {"N": "2"}}


def plain(item):
    return {name: next(iter(value.values())) for name, value in item.items()}


@pytest.fixture
def dynamodb(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "unit")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "unit")
    aws.reset_clients()
    slept = []
    monkeypatch.setattr(common.time, "sleep", slept.append)
    client = aws.client("dynamodb")
    with Stubber(client) as stub:
        yield stub, slept
        stub.assert_no_pending_responses()
    aws.reset_clients()


def asked(*keys):
    return {"RequestItems": {"t": {"Keys": list(keys), "ConsistentRead": True}}}


def test_keys_left_unprocessed_are_asked_again(dynamodb):
    stub, slept = dynamodb
    stub.add_response("batch_get_item", {"Responses": {"t": [ITEM_B]},
                                         "UnprocessedKeys": {"t": {"Keys": [KEY_A], "ConsistentRead": True}}},
                      asked(KEY_A, KEY_B, {"pk": {"S": "c"}}))
    stub.add_response("batch_get_item", {"Responses": {"t": [ITEM_A]}, "UnprocessedKeys": {}}, asked(KEY_A))
    found = read_items([ItemRead("t", KEY_A, plain), ItemRead("t", KEY_B, plain), ItemRead("t", {"pk": {"S": "c"}}, plain)])
    assert found == [{"pk": "a", "n": "1"}, {"pk": "b", "n": "2"}, None]
    assert len(slept) == 1


def test_a_key_left_after_every_round_raises_instead_of_reading_as_absent(dynamodb):
    stub, slept = dynamodb
    for _ in range(common.BATCH_GET_ATTEMPTS):
        stub.add_response("batch_get_item", {"Responses": {"t": []},
                                             "UnprocessedKeys": {"t": {"Keys": [KEY_A], "ConsistentRead": True}}},
                          asked(KEY_A))
    with pytest.raises(RuntimeError, match="unprocessed"):
        read_items([ItemRead("t", KEY_A, plain)])
    assert len(slept) == common.BATCH_GET_ATTEMPTS - 1 and max(slept) <= 1.5  # the pause grows to at most 1 s, jittered


def test_nothing_or_more_than_a_batch_is_refused_before_any_call(dynamodb):
    with pytest.raises(ValueError):
        read_items([])
    with pytest.raises(ValueError):
        read_items([ItemRead("t", {"pk": {"S": str(i)}}, plain) for i in range(common.BATCH_GET_LIMIT + 1)])
