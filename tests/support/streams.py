"""Read a DynamoDB table's stream from the emulator and turn its records into the event Lambda
gives a function mapped to that stream (as template.yaml maps the outbox publisher).

The emulator keeps the stream but runs no event source mapping, so tests (and the local
stack) play the mapping's part: read the shards from TRIM_HORIZON, keep the records the
mapping's filter lets through, and invoke the handler with {"Records": [...]}.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from devstack.pollers import lambda_stream_record
from svc_core.adapters import aws


def stream_arn(table_name: str) -> str:
    table = aws.client("dynamodb").describe_table(TableName=table_name)["Table"]
    arn = table.get("LatestStreamArn")
    if not arn:
        raise AssertionError(f"table {table_name} has no stream")
    return arn


def read_records(arn: str, after_sequence: str | None = None) -> list[dict[str, Any]]:
    """Every record of every shard of the stream, oldest first, as the stream API returns them.
    after_sequence: only records after this sequence number (what a mapping has already read)."""
    streams = aws.client("dynamodbstreams")
    description = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    records: list[dict[str, Any]] = []
    for shard in description["Shards"]:
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while iterator:
            answer = streams.get_records(ShardIterator=iterator, Limit=1000)
            batch = answer.get("Records", [])
            records.extend(batch)
            if not batch:  # an open shard always hands back a next iterator; empty means caught up
                break
            iterator = answer.get("NextShardIterator")
    records.sort(key=lambda r: int(r["dynamodb"]["SequenceNumber"]))
    if after_sequence is not None:
        records = [r for r in records if int(r["dynamodb"]["SequenceNumber"]) > int(after_sequence)]
    return records


def to_lambda_record(record: dict[str, Any], arn: str) -> dict[str, Any]:
    """One stream record as Lambda delivers it (the local stack's poller shapes it): plain JSON."""
    return json.loads(json.dumps(lambda_stream_record(record, arn)))


def lambda_event(records: Iterable[dict[str, Any]], arn: str,
                 event_names: Iterable[str] | None = ("INSERT",)) -> dict[str, Any]:
    """The invocation event for these stream records. event_names is the mapping's filter
    (template.yaml lets only INSERT through); None lets every record through."""
    allowed = None if event_names is None else set(event_names)
    return {"Records": [to_lambda_record(r, arn) for r in records
                        if allowed is None or r["eventName"] in allowed]}


def table_stream_event(table_name: str, after_sequence: str | None = None,
                       event_names: Iterable[str] | None = ("INSERT",)) -> dict[str, Any]:
    """Read the table's stream and build the event its mapped function would get."""
    arn = stream_arn(table_name)
    return lambda_event(read_records(arn, after_sequence), arn, event_names)


def last_sequence(event: dict[str, Any]) -> str | None:
    """The sequence number of the last record in an event (for after_sequence)."""
    records = event.get("Records") or []
    return records[-1]["dynamodb"]["SequenceNumber"] if records else None


def removal_event(table_name: str, key_name: str, key_value: str, event_names: Iterable[str],
                  limit_seconds: float = 15) -> dict[str, Any]:
    """The invocation event holding the one stream record whose key `key_name` is `key_value`.
    DynamoDB Local adds records to its stream a moment after the write: read until it is there
    (a generous deadline, not a timing assertion)."""
    import time
    deadline = time.monotonic() + limit_seconds
    while True:
        event = table_stream_event(table_name, event_names=event_names)
        records = [r for r in event["Records"] if r["dynamodb"]["Keys"][key_name]["S"] == key_value]
        if records or time.monotonic() > deadline:
            assert len(records) == 1, records
            return {"Records": records}
        time.sleep(0.1)
