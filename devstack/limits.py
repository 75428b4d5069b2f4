"""AWS's size limits that the emulator does not enforce, enforced on every AWS client of the shared
layer (svc_core.adapters.aws.register_handler), answered with the error AWS answers.

Measured on moto 5.2 (server mode) and DynamoDB Local, each crossed by tests/integration/test_aws_limits.py:

| limit                                           | moto     | DynamoDB Local | here        |
|-------------------------------------------------|----------|----------------|-------------|
| SQS message (body + attributes) 262,144 bytes   | accepted | -              | refused     |
| SQS SendMessageBatch, all messages 262,144 bytes| accepted | -              | refused     |
| EventBridge PutEvents entries 262,144 bytes     | accepted | -              | refused     |
| DynamoDB item 400 KB (put, update, batch, txn)  | refused  | refused        | (the engine)|
| TransactWriteItems 100 actions                  | refused  | refused        | (the engine)|
| Query / Scan page 1 MB (LastEvaluatedKey)       | paged    | paged          | (the engine)|

The check runs in `before-call`, before botocore sends anything: a call over a limit is answered
with AWS's status and error (botocore raises it as it raises the service's own), without reaching
the emulator, and is not retried (AWS's answer is a 400, never retried either).
Sizes as AWS counts them: an SQS message is its body's UTF-8 bytes plus, for each attribute, its
name, data type and value (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html);
a PutEvents entry is 14 bytes for Time, then Source, DetailType, Detail and each Resources entry in
UTF-8 bytes, and the entries of one request together must stay within 256 KB
(https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html).
"""

from __future__ import annotations

import json
import threading
from typing import Any

SQS_MESSAGE_BYTES = 262_144
EVENTS_REQUEST_BYTES = 262_144
HANDLER_ID = "devstack-aws-limits"

_installed = threading.Lock()
_done = False


class _Refused:
    """The HTTP side of a short-circuited call: botocore reads its status code (and headers)."""

    def __init__(self, status: int) -> None:
        self.status_code = status
        self.headers: dict[str, str] = {}
        self.content = b""


def sqs_message_size(message: dict[str, Any]) -> int:
    size = len(message.get("MessageBody", "").encode("utf-8"))
    for name, attribute in (message.get("MessageAttributes") or {}).items():
        size += len(name.encode("utf-8")) + len(attribute.get("DataType", "").encode("utf-8"))
        value = attribute.get("StringValue")
        if value is not None:
            size += len(value.encode("utf-8"))
        binary = attribute.get("BinaryValue")
        if binary is not None:   # base64 on the wire (JSON protocol): the bytes it stands for
            size += len(binary) * 3 // 4
    return size


def events_entry_size(entry: dict[str, Any]) -> int:
    size = 14 if entry.get("Time") is not None else 0
    for name in ("Source", "DetailType", "Detail"):
        if entry.get(name) is not None:
            size += len(entry[name].encode("utf-8"))
    return size + sum(len(resource.encode("utf-8")) for resource in entry.get("Resources") or [] if resource)


def refusal(service: str, operation: str, params: dict[str, Any]) -> tuple[int, str, str] | None:
    """(status, error code, message) as AWS answers a call over one of its limits; None when within them."""
    if service == "sqs" and operation == "SendMessage":
        if sqs_message_size(params) > SQS_MESSAGE_BYTES:
            return 400, "InvalidParameterValue", (
                f"One or more parameters are invalid. Reason: Message must be shorter than {SQS_MESSAGE_BYTES} bytes.")
    elif service == "sqs" and operation == "SendMessageBatch":
        sizes = [sqs_message_size(entry) for entry in params.get("Entries") or []]
        if any(size > SQS_MESSAGE_BYTES for size in sizes):
            return 400, "InvalidParameterValue", (
                f"One or more parameters are invalid. Reason: Message must be shorter than {SQS_MESSAGE_BYTES} bytes.")
        if sum(sizes) > SQS_MESSAGE_BYTES:
            return 400, "AWS.SimpleQueueService.BatchRequestTooLong", (
                f"Batch requests cannot be longer than {SQS_MESSAGE_BYTES} bytes. "
                f"You have sent {sum(sizes)} bytes.")
    elif service == "events" and operation == "PutEvents":
        if sum(events_entry_size(entry) for entry in params.get("Entries") or []) > EVENTS_REQUEST_BYTES:
            return 400, "ValidationException", "Total size of the entries in the request is over the limit."
    return None


def _before_call(model: Any = None, params: dict[str, Any] | None = None, **_: Any) -> Any:
    if model is None or params is None:
        return None
    service = model.service_model.endpoint_prefix
    if service not in ("sqs", "events"):
        return None
    body = params.get("body") or b"{}"
    try:
        arguments = json.loads(body)
    except ValueError:
        return None
    refused = refusal(service, model.name, arguments)
    if refused is None:
        return None
    status, code, message = refused
    return _Refused(status), {"Error": {"Code": code, "Message": message},
                              "ResponseMetadata": {"HTTPStatusCode": status, "HTTPHeaders": {}}}


def install() -> None:
    """Enforce the limits on every client of the shared layer (made before or after); once per process."""
    global _done
    with _installed:
        if _done:
            return
        from svc_core.adapters import aws
        aws.register_handler("before-call", _before_call, HANDLER_ID)
        _done = True
