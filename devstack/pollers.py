"""Event source mappings of template.yaml, played on the local stack as Lambda plays them.

- DynamoDB streams: records are read from every shard in order, filtered by the mapping's
  FilterCriteria, and handed to the function in batches of BatchSize. With
  ReportBatchItemFailures, the batch is retried from the first failed record (later records of
  the shard wait, as on AWS). A raised error retries the batch; with BisectBatchOnFunctionError
  the batch is halved first, down to the one record at fault. A record that has failed more than
  MaximumRetryAttempts times (-1: no limit), or is older than MaximumRecordAgeInSeconds, goes to
  the OnFailure destination (a Lambda-shaped invocation record on its SQS queue; dropped with an
  ERROR line where there is none) and the shard moves on. An iterator that expires or meets
  trimmed data is reopened at the shard's horizon and the records already read are skipped, so
  nothing is skipped or read twice.
- SQS: messages are received in batches of BatchSize; the ones the function reports as
  failures (or all, when it raises) are not deleted, so they come back once their visibility
  timeout ends and move to the dead-letter queue after the redrive policy's maxReceiveCount.

No poller stops or fails silently: every failure is logged at ERROR with its source and reason,
and `status()` gives what `GET /_local/status` shows: records processed, failures, the last
error, and the age of the oldest record not yet processed.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from devstack.template import REGION

SHARD_REFRESH_SECONDS = 1.0
IDLE_POLL_SECONDS = 0.25
# A stream that has had no record for QUIET_AFTER_SECONDS is polled once a second until one comes:
# a stack of several cells plays a mapping per table (the secondary region's), 38 pollers that at
# Lambda's 4 polls a second kept two thirds of a core busy while idle. The first change after a
# quiet spell waits up to a second more; a busy stream is polled as Lambda polls it.
QUIET_AFTER_SECONDS = 5.0
QUIET_POLL_SECONDS = 1.0
# A queue poller's receive waits this long for a message (long polling, as Lambda's pollers do with
# 20 s): a message wakes it at once, and an idle stack's 13 pollers ask the emulator a few times
# a second, not 13 times (an idle stack used a quarter of a core, most of it in these receives).
QUEUE_WAIT_SECONDS = 5
# Lambda's SQS event source mapping polls a standard queue with 5 batches at once to begin with
# and scales up from there (up to MaximumConcurrency when the mapping sets one).
SQS_STARTING_CONCURRENCY = 5
REOPEN_ON = ("TrimmedDataAccessException", "ExpiredIteratorException")


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


def _failed_ids(response: Any) -> set[str]:
    """The item identifiers a partial-batch response names."""
    if not isinstance(response, dict):
        return set()
    return {f["itemIdentifier"] for f in response.get("batchItemFailures") or []}


def _error_code(exc: Exception) -> str | None:
    return (getattr(exc, "response", None) or {}).get("Error", {}).get("Code")


def log_error(message: str) -> None:
    print(f"ERROR {message}", file=sys.stderr, flush=True)


@dataclass
class PollerStatus:
    """What a poller has done, for GET /_local/status."""
    source: str
    function: str
    processed: int = 0
    failures: int = 0
    sent_to_failure_destination: int = 0
    discarded: int = 0
    last_error: str | None = None
    last_error_at: str | None = None
    # Time spent in the function and the records handed to it (every attempt's): a function's
    # time per record under load is invoked_seconds / invoked_records.
    invocations: int = 0
    invoked_records: int = 0
    invoked_seconds: float = 0.0
    oldest_unprocessed_at: float | None = field(default=None, repr=False)

    def view(self) -> dict[str, Any]:
        age = None if self.oldest_unprocessed_at is None else round(max(0.0, time.time() - self.oldest_unprocessed_at), 3)
        return {"source": self.source, "function": self.function, "processed": self.processed,
                "failures": self.failures, "sentToFailureDestination": self.sent_to_failure_destination,
                "discarded": self.discarded, "lastError": self.last_error, "lastErrorAt": self.last_error_at,
                "invocations": self.invocations, "invokedRecords": self.invoked_records,
                "invokedSeconds": round(self.invoked_seconds, 3),
                "oldestUnprocessedAgeSeconds": age}


class _Poller:
    """A background thread running _run until stop(); failures are counted and logged at ERROR."""
    _stop: threading.Event
    _threads: list[threading.Thread]
    state: PollerStatus
    errors: Callable[[str], None]

    def start(self):
        for thread in self._threads:
            thread.start()
        return self

    def ask_to_stop(self) -> None:
        """Stop after the current poll (stop() waits for it); a stack asks all its pollers first."""
        self._stop.set()

    def stop(self) -> None:
        self.ask_to_stop()
        for thread in self._threads:
            if thread.is_alive():
                thread.join(timeout=5)

    def status(self) -> dict[str, Any]:
        return self.state.view()

    def _failed(self, reason: str) -> None:
        self.state.failures += 1
        self.state.last_error = reason
        self.state.last_error_at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        self.errors(f"{self.state.source} -> {self.state.function}: {reason}")


@dataclass
class _Shard:
    iterator: str | None
    last_read: int | None = None        # the sequence number of the last record read from the stream
    last_read_text: str = ""            # the same, as the stream wrote it
    pending: list[dict[str, Any]] = field(default_factory=list)
    attempts: int = 0                   # failed invocations of the batch at the head
    limit: int = 0                      # the batch size now (halved while bisecting)


class StreamPoller(_Poller):
    def __init__(self, clients: dict[str, Any], table: str, invoke: Callable[[dict], Any], props: dict[str, Any],
                 log=print, interval: float = 0.05, *, function: str = "function",
                 on_failure: Callable[[dict[str, Any]], None] | None = None,
                 skip_insert: Callable[[dict[str, Any]], bool] | None = None,
                 errors: Callable[[str], None] = log_error) -> None:
        self.ddb, self.streams = clients["dynamodb"], clients["dynamodbstreams"]
        self.table, self.invoke, self.log, self.interval = table, invoke, log, interval
        self.errors = errors
        self.batch_size = int(props.get("BatchSize", 100))
        self.partial = "ReportBatchItemFailures" in (props.get("FunctionResponseTypes") or [])
        self.bisect = bool(props.get("BisectBatchOnFunctionError", False))
        self.max_retries = int(props.get("MaximumRetryAttempts", -1))
        self.max_age = int(props.get("MaximumRecordAgeInSeconds", -1))
        self.on_failure = on_failure
        self.skip_insert = skip_insert  # the moto engine's phantom records (see stack.py)
        patterns = (props.get("FilterCriteria") or {}).get("Filters") or []
        self.filters = [json.loads(f["Pattern"]) for f in patterns]
        self.stream_arn = self.ddb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
        self.shards: dict[str, _Shard] = {}
        self.failures = 0               # consecutive failed polls or invocations (the back-off)
        self.records_read = 0           # by the last poll_once
        self._shards_seen_at = 0.0
        self.state = PollerStatus(source=f"stream {table}", function=function)
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, name=f"stream-{table}", daemon=True)]

    # -- reading ------------------------------------------------------------------------------
    def _iterator(self, shard_id: str) -> str:
        return self.streams.get_shard_iterator(StreamArn=self.stream_arn, ShardId=shard_id,
                                               ShardIteratorType="TRIM_HORIZON")["ShardIterator"]

    def _refresh_shards(self) -> None:
        shards = self.streams.describe_stream(StreamArn=self.stream_arn)["StreamDescription"]["Shards"]
        for shard in shards:
            if shard["ShardId"] not in self.shards:
                self.shards[shard["ShardId"]] = _Shard(self._iterator(shard["ShardId"]), limit=self.batch_size)

    def _read(self, shard_id: str, shard: _Shard) -> None:
        if self.skip_insert:
            # moto: a cancelled transaction swaps the table (and its stream) for a copy taken before
            # it, and an iterator keeps reading the discarded one; a fresh one each poll reads the live one.
            shard.iterator = self._iterator(shard_id) if shard.last_read is None else \
                self.streams.get_shard_iterator(StreamArn=self.stream_arn, ShardId=shard_id,
                                                ShardIteratorType="AFTER_SEQUENCE_NUMBER",
                                                SequenceNumber=shard.last_read_text)["ShardIterator"]
        try:
            answer = self.streams.get_records(ShardIterator=shard.iterator, Limit=1000)
        except Exception as exc:
            if _error_code(exc) not in REOPEN_ON:
                raise
            # Reopened at the horizon; the records up to last_read are skipped below, so none is
            # read twice, and none is skipped: what lies before the horizon no longer exists.
            # DynamoDB Local answers this to the first read of a shard whose first records were
            # never written (a cancelled transaction, the stream's own start): nothing was read
            # yet, so nothing can be lost, and it is no failure.
            message = f"{_error_code(exc)} on shard {shard_id}: reopened after sequence number {shard.last_read}"
            if shard.last_read is None:
                self.log(f"{self.state.source}: {message}")
            else:
                self._failed(message)
            shard.iterator = self._iterator(shard_id)
            return
        shard.iterator = answer.get("NextShardIterator")
        for record in answer.get("Records", []):
            sequence = int(record["dynamodb"]["SequenceNumber"])
            if shard.last_read is not None and sequence <= shard.last_read:
                continue
            self.records_read += 1
            shaped = lambda_stream_record(record, self.stream_arn)
            wanted = not self.filters or any(matches(f, shaped) for f in self.filters)
            if wanted and self.skip_insert and shaped["eventName"] == "INSERT" and self.skip_insert(shaped):
                break  # read mid-transaction, then rolled back: its sequence number will be used again
            shard.last_read, shard.last_read_text = sequence, record["dynamodb"]["SequenceNumber"]
            if wanted:
                shard.pending.append(shaped)
            else:
                self.state.processed += 1  # filtered out: done, as Lambda counts it

    def poll_once(self) -> int:
        """Read new records and deliver what is pending; returns how many records were delivered."""
        # New shards appear rarely (a shard closes after hours on AWS): look for them once a second,
        # or when one has closed, not on every poll.
        now = time.monotonic()
        if now - self._shards_seen_at >= SHARD_REFRESH_SECONDS or not all(s.iterator for s in self.shards.values()):
            self._refresh_shards()
            self._shards_seen_at = now
        delivered, self.records_read = 0, 0
        for shard_id, shard in list(self.shards.items()):
            if shard.iterator:
                self._read(shard_id, shard)
            delivered += self._deliver(shard_id, shard)
        self.state.oldest_unprocessed_at = min(
            (float(s.pending[0]["dynamodb"].get("ApproximateCreationDateTime") or time.time())
             for s in self.shards.values() if s.pending), default=None)
        return delivered

    # -- delivering ---------------------------------------------------------------------------
    def _deliver(self, shard_id: str, shard: _Shard) -> int:
        """Deliver the shard's pending records in order until one batch fails (it waits for the
        next poll, after the back-off) or none is left; returns how many were delivered."""
        delivered = 0
        while shard.pending:
            if self.max_age >= 0 and self._too_old(shard.pending[0]):
                self._give_up(shard_id, shard, 1, "RecordAgeExceeded")
                continue
            batch = shard.pending[: shard.limit]
            started = time.monotonic()
            try:
                response = self.invoke({"Records": batch})
                failed = _failed_ids(response) if self.partial else set()
                reason = None
            except Exception as exc:
                failed, reason = None, f"function raised {type(exc).__name__}: {exc}"
                self.log(traceback.format_exc())
            self.state.invocations += 1
            self.state.invoked_records += len(batch)
            self.state.invoked_seconds += time.monotonic() - started
            if failed is not None and not failed:
                delivered += len(batch)
                self.state.processed += len(batch)
                del shard.pending[: len(batch)]
                shard.attempts, shard.limit, self.failures = 0, self.batch_size, 0
                continue
            if failed is None and self.bisect and len(batch) > 1:
                shard.limit = max(1, len(batch) // 2)  # halves are retried at once and count no attempt
                self._failed(f"{reason}; batch of {len(batch)} bisected")
                continue
            first = 0
            if failed:
                first = next((i for i, r in enumerate(batch) if r["dynamodb"]["SequenceNumber"] in failed), 0)
                reason = f"function reported record {batch[first]['dynamodb']['SequenceNumber']} as failed"
            delivered += first
            self.state.processed += first
            del shard.pending[:first]  # records before the first failure are done; retry from it
            shard.attempts += 1
            self.failures += 1
            if 0 <= self.max_retries < shard.attempts:
                self._failed(f"{reason}; retries exhausted after {shard.attempts} attempts")
                self._give_up(shard_id, shard, len(batch) - first, "RetryAttemptsExhausted")
                continue
            self._failed(f"{reason}; attempt {shard.attempts} will be retried")
            return delivered
        return delivered

    def _too_old(self, record: dict[str, Any]) -> bool:
        created = record["dynamodb"].get("ApproximateCreationDateTime")
        return created is not None and time.time() - float(created) > self.max_age

    def _give_up(self, shard_id: str, shard: _Shard, count: int, condition: str) -> None:
        """Send the records at the head to the OnFailure destination (or drop them) and move on."""
        records, shard.pending[:count] = shard.pending[:count], []
        shard.attempts, shard.limit = 0, self.batch_size
        if self.on_failure is None:
            self.state.discarded += len(records)
            self.errors(f"{self.state.source} -> {self.state.function}: {len(records)} record(s) discarded "
                        f"({condition}; no OnFailure destination)")
            return
        first, last = records[0]["dynamodb"], records[-1]["dynamodb"]
        self.on_failure({
            "requestContext": {"requestId": str(uuid.uuid4()), "functionArn": self.state.function,
                               "condition": condition, "approximateInvokeCount": self.max_retries + 1},
            "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
            "version": "1.0", "timestamp": datetime.now(UTC).isoformat(),
            "DDBStreamBatchInfo": {"shardId": shard_id, "startSequenceNumber": first["SequenceNumber"],
                                   "endSequenceNumber": last["SequenceNumber"],
                                   "approximateArrivalOfFirstRecord": first.get("ApproximateCreationDateTime"),
                                   "approximateArrivalOfLastRecord": last.get("ApproximateCreationDateTime"),
                                   "batchSize": len(records), "streamArn": self.stream_arn}})
        self.state.sent_to_failure_destination += len(records)

    def _run(self) -> None:
        idle_wait, last_record = self.interval, time.monotonic()
        while not self._stop.is_set():
            try:
                self.poll_once()
            except Exception as exc:
                self.failures += 1
                self._failed(f"poll failed: {type(exc).__name__}: {exc}")
            # Busy: poll again soon. Idle: slow down to Lambda's own pace (about 4 polls a second per
            # shard), so idle streams do not load the datastore that every request also needs; quiet
            # for a while: once a second.
            if self.records_read:
                last_record = time.monotonic()
            quiet = time.monotonic() - last_record > QUIET_AFTER_SECONDS
            ceiling = QUIET_POLL_SECONDS if quiet else IDLE_POLL_SECONDS
            idle_wait = self.interval if self.records_read else min(ceiling, idle_wait * 2)
            backoff = min(5.0, 0.1 * 2 ** min(self.failures, 6)) if self.failures else idle_wait
            self._stop.wait(backoff)


class QueuePoller(_Poller):
    def __init__(self, clients: dict[str, Any], queue_url: str, queue_arn: str, invoke: Callable[[dict], Any],
                 props: dict[str, Any], log=print, max_pollers: int = 4, *, function: str = "function",
                 errors: Callable[[str], None] = log_error) -> None:
        self.sqs, self.url, self.arn, self.invoke, self.log = clients["sqs"], queue_url, queue_arn, invoke, log
        self.errors = errors
        self.batch_size = min(10, int(props.get("BatchSize", 10)))
        self.partial = "ReportBatchItemFailures" in (props.get("FunctionResponseTypes") or [])
        self.state = PollerStatus(source=f"queue {queue_arn.rsplit(':', 1)[-1]}", function=function)
        self._unprocessed: dict[str, float] = {}   # message id -> sent time, for those not yet done
        self._lock = threading.Lock()
        self._stop = threading.Event()
        # Batches in flight at once (as many pollers, at most max_pollers here), so one slow batch
        # does not hold back the queue: ScalingConfig.MaximumConcurrency, else what Lambda starts a
        # standard queue's mapping with (5 concurrent batches, scaling up while messages wait).
        concurrency = int((props.get("ScalingConfig") or {}).get("MaximumConcurrency", SQS_STARTING_CONCURRENCY))
        name = f"sqs-{queue_arn.rsplit(':', 1)[-1]}"
        self._threads = [threading.Thread(target=self._run, name=f"{name}-{i}", daemon=True)
                         for i in range(max(1, min(concurrency, max_pollers)))]

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
        with self._lock:
            for r in records:
                self._unprocessed.setdefault(r["messageId"], int(r["attributes"].get("SentTimestamp", 0)) / 1000
                                             or time.time())
        try:
            failed = _failed_ids(self.invoke({"Records": records})) if self.partial else set()
        except Exception as exc:
            self.log(traceback.format_exc())
            self._failed(f"function raised {type(exc).__name__}: {exc}; {len(records)} message(s) come back "
                         "after their visibility timeout")
            return 0
        if failed:
            self._failed(f"function reported {len(failed)} of {len(records)} message(s) as failed; they come back "
                         "after their visibility timeout")
        done = [r for r in records if r["messageId"] not in failed]
        for start in range(0, len(done), 10):
            self.sqs.delete_message_batch(QueueUrl=self.url, Entries=[
                {"Id": str(i), "ReceiptHandle": r["receiptHandle"]} for i, r in enumerate(done[start:start + 10])])
        with self._lock:
            for r in done:
                self._unprocessed.pop(r["messageId"], None)
            self.state.processed += len(done)
        return len(done)

    def status(self) -> dict[str, Any]:
        counts = self.sqs.get_queue_attributes(QueueUrl=self.url, AttributeNames=[
            "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
        waiting = sum(int(v) for v in counts.values())
        with self._lock:
            if not waiting:  # the failed ones were redriven to the dead-letter queue: no longer this queue's
                self._unprocessed.clear()
            self.state.oldest_unprocessed_at = min(self._unprocessed.values(), default=None)
        return {**super().status(), "messagesWaiting": waiting}

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll_once(QUEUE_WAIT_SECONDS)
            except Exception as exc:
                if self._stop.is_set():
                    return  # the emulator stopped with the stack while this receive waited
                self._failed(f"poll failed: {type(exc).__name__}: {exc}")
                self._stop.wait(1)

    def stop(self) -> None:
        self.ask_to_stop()
        for thread in self._threads:  # they wait together: at most one receive's wait in all
            if thread.is_alive():
                thread.join(timeout=QUEUE_WAIT_SECONDS + 5)
