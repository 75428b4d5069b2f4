"""AWS's size limits, each crossed through the shared layer's clients: on DynamoDB, on both engines
(moto and DynamoDB Local refuse what DynamoDB refuses, measured here); on SQS and EventBridge, which
the moto server accepts past AWS's limits, through devstack/limits.py (installed for every
moto-backed fixture and the local stack), which answers as AWS does."""

from __future__ import annotations

import json

import botocore.exceptions
import pytest

from devstack import limits

KB = 1024


def _table(client) -> str:
    name = "aws-limits"
    try:
        client.create_table(
            TableName=name, BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                  {"AttributeName": "sk", "AttributeType": "S"}])
    except botocore.exceptions.ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceInUseException":
            raise
    return name


def _item(sk: str, total: int) -> dict:
    """An item of exactly `total` bytes as DynamoDB counts them (each name's and string value's UTF-8 bytes)."""
    fixed = len("pk") + len("p") + len("sk") + len(sk) + len("v")
    return {"pk": {"S": "p"}, "sk": {"S": sk}, "v": {"S": "x" * (total - fixed)}}


def _refused(call) -> dict:
    with pytest.raises(botocore.exceptions.ClientError) as refused:
        call()
    return refused.value.response


def test_an_item_over_400_kb_is_refused_on_every_write_and_one_of_400_kb_is_stored(data_backend):
    from svc_core.adapters import aws
    client = aws.client("dynamodb")
    table = _table(client)
    if data_backend.name == "dynamodb-local":   # 409,600 bytes: DynamoDB takes it (moto, stricter, does not)
        client.put_item(TableName=table, Item=_item("at-limit", 400 * KB))
    over = _item("over", 400 * KB + 1)
    for call in (lambda: client.put_item(TableName=table, Item=over),
                 lambda: client.transact_write_items(TransactItems=[{"Put": {"TableName": table, "Item": over}}]),
                 lambda: client.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": over}}]}),
                 lambda: client.update_item(TableName=table, Key={"pk": over["pk"], "sk": over["sk"]},
                                            UpdateExpression="SET v = :v", ExpressionAttributeValues={":v": over["v"]})):
        error = _refused(call)["Error"]
        assert error["Code"] == "ValidationException" and "exceeded the maximum allowed size" in error["Message"], (
            data_backend.name, error)
    left = data_backend.item(table, {"pk": "p", "sk": "over"})
    # Measured: moto's refused UpdateItem leaves the item's key behind (DynamoDB writes nothing). Nothing of
    # the service relies on it (a refused update is an error either way); this says so if moto changes.
    assert left == ({"pk": "p", "sk": "over"} if data_backend.name == "moto" else None)


def test_a_transaction_of_101_actions_is_refused_and_one_of_100_commits(data_backend):
    from svc_core.adapters import aws
    client = aws.client("dynamodb")
    table = _table(client)
    puts = lambda prefix, n: [{"Put": {"TableName": table, "Item": {"pk": {"S": prefix}, "sk": {"S": f"{i:03}"}}}}  # noqa: E731
                              for i in range(n)]
    error = _refused(lambda: client.transact_write_items(TransactItems=puts("tx101", 101)))["Error"]
    assert error["Code"] == "ValidationException" and "less than or equal to 100" in error["Message"], error
    client.transact_write_items(TransactItems=puts("tx100", 100))
    stored = client.query(TableName=table, KeyConditionExpression="pk = :p", Select="COUNT",
                          ExpressionAttributeValues={":p": {"S": "tx100"}})
    assert stored["Count"] == 100
    assert client.query(TableName=table, KeyConditionExpression="pk = :p",
                        ExpressionAttributeValues={":p": {"S": "tx101"}})["Count"] == 0


def test_a_query_or_scan_page_stops_at_1_mb_and_says_where_to_go_on(data_backend):
    from svc_core.adapters import aws
    client = aws.client("dynamodb")
    table = _table(client)
    for i in range(30):   # 3 MB in one partition
        client.put_item(TableName=table, Item=_item(f"page-{i:03}", 100 * KB) | {"pk": {"S": "page"}})
    query = {"TableName": table, "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "page"}}}
    first = client.query(**query)
    assert 0 < first["Count"] < 30 and "LastEvaluatedKey" in first, (data_backend.name, first["Count"])
    seen, page = first["Count"], first
    while "LastEvaluatedKey" in page:
        page = client.query(**query, ExclusiveStartKey=page["LastEvaluatedKey"])
        assert page["Count"] <= 11
        seen += page["Count"]
    assert seen == 30
    scanned = client.scan(TableName=table)
    assert scanned["Count"] < 30 and "LastEvaluatedKey" in scanned


def test_an_sqs_message_over_256_kb_is_refused_as_sqs_refuses_it(stack):
    sqs = stack.client("sqs")
    url = sqs.create_queue(QueueName="aws-limits")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="x" * limits.SQS_MESSAGE_BYTES)   # at the limit: taken
    error = _refused(lambda: sqs.send_message(QueueUrl=url, MessageBody="x" * (limits.SQS_MESSAGE_BYTES + 1)))
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert error["Error"]["Code"] == "InvalidParameterValue" and "262144 bytes" in error["Error"]["Message"]
    # The attributes count: a body at the limit with one attribute is over it.
    _refused(lambda: sqs.send_message(QueueUrl=url, MessageBody="x" * limits.SQS_MESSAGE_BYTES,
                                      MessageAttributes={"a": {"DataType": "String", "StringValue": "b"}}))
    # A batch whose messages are each within the limit but together over it.
    error = _refused(lambda: sqs.send_message_batch(QueueUrl=url, Entries=[
        {"Id": str(i), "MessageBody": "x" * 100 * KB} for i in range(3)]))["Error"]
    assert error["Code"] == "AWS.SimpleQueueService.BatchRequestTooLong", error
    received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"]).get("Messages", [])
    assert [len(m["Body"]) for m in received] == [limits.SQS_MESSAGE_BYTES]   # only the one within the limit


def _detail(length: int) -> str:
    return json.dumps({"v": "x" * length}, separators=(",", ":"))


def test_put_events_over_256_kb_is_refused_as_eventbridge_refuses_it(stack):
    events = stack.client("events")
    entry = {"Source": "svc.limits", "DetailType": "t", "EventBusName": "default"}
    room = limits.EVENTS_REQUEST_BYTES - len("svc.limits") - len("t") - len('{"v":""}')
    taken = events.put_events(Entries=[{**entry, "Detail": _detail(room)}])
    assert taken["FailedEntryCount"] == 0
    error = _refused(lambda: events.put_events(Entries=[{**entry, "Detail": _detail(room + 1)}]))
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert error["Error"] == {"Code": "ValidationException",
                              "Message": "Total size of the entries in the request is over the limit."}
    # Two entries each within the limit, together over it: the request is refused whole.
    half = _detail(room // 2 + 10)
    _refused(lambda: events.put_events(Entries=[{**entry, "Detail": half}, {**entry, "Detail": half}]))
