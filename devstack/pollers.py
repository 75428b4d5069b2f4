"""Event source mappings of template.yaml, played on the emulator.

- DynamoDB streams: records are read from every shard in order, filtered by the mapping's
  FilterCriteria, and handed to the function in batches of BatchSize. With
  ReportBatchItemFailures, the batch is retried from the first failed record (later records
  of the shard wait, as on AWS); a raised error retries the whole batch. Retries back off.
- SQS: messages are received in batches of BatchSize; the ones the function reports as
  failures (or all, when it raises) are not deleted, so they come back once their visibility
  timeout ends and move to the dead-letter queue after the redrive policy's maxReceiveCount.
"""

from __future__ import annotations

import json
import threading
import time
import traceback
from datetime import datetime
from typing import Any, Callable

from devstack.template import REGION


SHARD_REFRESH_SECONDS = 1.0
IDLE_POLL_SECONDS = 0.25


def matches(pattern: Any, value: Any) -> bool:
    """EventBridge-style pattern match, as Lambda's FilterCriteria use (exact values, nested)."""
    if isinstance(pattern, dict):
        return isinstance(value, dict) and all(k in value and matches(p, value[k]) for k, p in pattern.items())
    if isinstance(pattern, list):
        return value in pattern
    return pattern == value


def lambda_stream_record(record: dict[str, Any], stream_arn: str) -> dict[str, Any]:
    """A DynamoDB Streams GetRecords record in the shape Lambda delivers it."""
    dynamodb = dict(record["dynamodb"])
    created = dynamodb.get("ApproximateCreationDateTime")
    if isinstance(created, datetime):
        dynamodb["ApproximateCreationDateTime"] = int(created.timestamp())
    return {"eventID": record["eventID"], "eventName": record["eventName"], "eventVersion": "1.1",
            "eventSource": "aws:dynamodb", "awsRegion": REGION, "dynamodb": dynamodb,
            "eventSourceARN": stream_arn}


def _failed_ids(response: Any) -> set[str] | None:
    """The item identifiers a partial-batch response names; None means 'all failed'."""
    if not isinstance(response, dict):
        return set()
    return {f["itemIdentifier"] for f in response.get("batchItemFailures") or []}


class _Poller:
    """A background thread running _run until stop()."""
    _stop: threading.Event
    _thread: threading.Thread

    def start(self):
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


class StreamPoller(_Poller):
    def __init__(self, clients: dict[str, Any], table: str, invoke: Callable[[dict], Any], props: dict[str, Any],
                 log=print, interval: float = 0.05) -> None:
        self.ddb, self.streams = clients["dynamodb"], clients["dynamodbstreams"]
        self.table, self.invoke, self.log, self.interval = table, invoke, log, interval
        self.batch_size = int(props.get("BatchSize", 100))
        self.partial = "ReportBatchItemFailures" in (props.get("FunctionResponseTypes") or [])
        patterns = (props.get("FilterCriteria") or {}).get("Filters") or []
        self.filters = [json.loads(f["Pattern"]) for f in patterns]
        self.stream_arn = self.ddb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
        self.iterators: dict[str, str | None] = {}
        self.pending: dict[str, list[dict[str, Any]]] = {}
        self.failures = 0
        self.records_read = 0          # by the last poll_once
        self._shards_seen_at = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"stream-{table}", daemon=True)

    def _refresh_shards(self) -> None:
        shards = self.streams.describe_stream(StreamArn=self.stream_arn)["StreamDescription"]["Shards"]
        for shard in shards:
            if shard["ShardId"] not in self.iterators:
                self.iterators[shard["ShardId"]] = self.streams.get_shard_iterator(
                    StreamArn=self.stream_arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON",
                )["ShardIterator"]
                self.pending[shard["ShardId"]] = []

    def poll_once(self) -> int:
        """Read new records and deliver what is pending; returns how many records were delivered."""
        # New shards appear rarely (a shard closes after hours on AWS): look for them once a second,
        # or when one has closed, not on every poll.
        now = time.monotonic()
        if now - self._shards_seen_at >= SHARD_REFRESH_SECONDS or not all(self.iterators.values()):
            self._refresh_shards()
            self._shards_seen_at = now
        delivered, self.records_read = 0, 0
        for shard_id, iterator in list(self.iterators.items()):
            if iterator:
                answer = self.streams.get_records(ShardIterator=iterator, Limit=1000)
                self.iterators[shard_id] = answer.get("NextShardIterator")
                self.records_read += len(answer.get("Records", []))
                for record in answer.get("Records", []):
                    shaped = lambda_stream_record(record, self.stream_arn)
                    if not self.filters or any(matches(f, shaped) for f in self.filters):
                        self.pending[shard_id].append(shaped)
            delivered += self._deliver(shard_id)
        return delivered

    def _deliver(self, shard_id: str) -> int:
        queue = self.pending[shard_id]
        delivered = 0
        while queue:
            batch = queue[: self.batch_size]
            try:
                failed = _failed_ids(self.invoke({"Records": batch})) if self.partial else set()
            except Exception as exc:  # the whole batch comes back
                self.log(f"stream {self.table}: function raised {type(exc).__name__}; batch will be retried\n"
                         + traceback.format_exc())
                failed = {batch[0]["dynamodb"]["SequenceNumber"]}
            if failed:
                first = next((i for i, r in enumerate(batch) if r["dynamodb"]["SequenceNumber"] in failed), 0)
                delivered += first
                del queue[:first]  # records before the first failure are done; retry from it
                self.failures += 1
                return delivered
            self.failures = 0
            delivered += len(batch)
            del queue[: len(batch)]
        return delivered

    def _run(self) -> None:
        idle_wait = self.interval
        while not self._stop.is_set():
            try:
                self.poll_once()
            except Exception as exc:
                self.log(f"stream {self.table}: poll failed: {type(exc).__name__}")
            # Busy: poll again soon. Idle: slow down to Lambda's own pace (about 4 polls a second per
            # shard), so idle streams do not load the emulator that every request also needs.
            idle_wait = self.interval if self.records_read else min(IDLE_POLL_SECONDS, idle_wait * 2)
            backoff = min(5.0, 0.1 * 2 ** min(self.failures, 6)) if self.failures else idle_wait
            self._stop.wait(backoff)


class QueuePoller(_Poller):
    def __init__(self, clients: dict[str, Any], queue_url: str, queue_arn: str, invoke: Callable[[dict], Any],
                 props: dict[str, Any], log=print, max_pollers: int = 4) -> None:
        self.sqs, self.url, self.arn, self.invoke, self.log = clients["sqs"], queue_url, queue_arn, invoke, log
        self.batch_size = min(10, int(props.get("BatchSize", 10)))
        self.partial = "ReportBatchItemFailures" in (props.get("FunctionResponseTypes") or [])
        self._stop = threading.Event()
        # ScalingConfig.MaximumConcurrency: that many batches in flight at once (as many pollers,
        # at most max_pollers here), so one slow batch does not hold back the queue. Else one.
        concurrency = int((props.get("ScalingConfig") or {}).get("MaximumConcurrency", 1))
        name = f"sqs-{queue_arn.rsplit(':', 1)[-1]}"
        self._threads = [threading.Thread(target=self._run, name=f"{name}-{i}", daemon=True)
                         for i in range(max(1, min(concurrency, max_pollers)))]
        self._thread = self._threads[0]

    def start(self):
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)

    def poll_once(self, wait_seconds: int = 1) -> int:
        answer = self.sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=self.batch_size,
                                          WaitTimeSeconds=wait_seconds, AttributeNames=["All"],
                                          MessageAttributeNames=["All"])
        messages = answer.get("Messages", [])
        if not messages:
            return 0
        records = [{"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
                    "attributes": m.get("Attributes", {}), "messageAttributes": m.get("MessageAttributes", {}),
                    "md5OfBody": m.get("MD5OfBody"), "eventSource": "aws:sqs", "eventSourceARN": self.arn,
                    "awsRegion": REGION} for m in messages]
        try:
            failed = _failed_ids(self.invoke({"Records": records})) if self.partial else set()
        except Exception as exc:
            self.log(f"queue {self.arn}: function raised {type(exc).__name__}; messages return after their timeout")
            return 0
        done = [r for r in records if r["messageId"] not in failed]
        for start in range(0, len(done), 10):
            self.sqs.delete_message_batch(QueueUrl=self.url, Entries=[
                {"Id": str(i), "ReceiptHandle": r["receiptHandle"]} for i, r in enumerate(done[start:start + 10])])
        return len(done)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll_once()
            except Exception as exc:
                self.log(f"queue {self.arn}: poll failed: {type(exc).__name__}")
                self._stop.wait(1)
