"""The Bedrock adapter against botocore's real machinery, never against Bedrock.

moto does not implement Converse. `converse` is driven by botocore's Stubber (which checks the
request and the response against the service model); `converse_stream` by a `before-send` hook
that answers the signed HTTP request with real AWS event-stream frames (prelude, headers, payload,
CRCs, encoded here per the format), which botocore's own EventStream decodes.
"""

from __future__ import annotations

import json

import botocore.session
import pytest
from botocore.awsrequest import AWSResponse
from botocore.stub import Stubber

from svc_core.adapters.models import bedrock
from svc_core.adapters.models.base import StreamAssembler, assemble
from svc_core.adapters.models.bedrock import BedrockProvider
from svc_core.platform.errors import ModelThrottled, ModelUnavailable
from tests.support.aws_event_stream import frame

MODEL = "us.anthropic.claude-haiku-4-5-20251001-v1:0"
AWS_TEXT = "arn:aws:bedrock:us-east-1:123456789012 secret-ish AWS detail"
TOOLS = {"tools": [{"toolSpec": {"name": "read_file", "description": "Read a file", "inputSchema": {
    "json": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}}]}
REQUEST = {"messages": [{"role": "user", "content": [{"text": "read a.txt"}]}], "system": [{"text": "Be brief."}],
           "toolConfig": TOOLS, "inferenceConfig": {"maxTokens": 256}}


def bedrock_client():
    return botocore.session.get_session().create_client(
        "bedrock-runtime", region_name="us-east-1", endpoint_url="https://bedrock-runtime.us-east-1.amazonaws.com",
        aws_access_key_id="local", aws_secret_access_key="local")


# ---- converse, with the Stubber ------------------------------------------------------------

def test_converse_passes_the_request_through_and_reads_a_tool_use_answer():
    client = bedrock_client()
    answer = {
        "output": {"message": {"role": "assistant", "content": [
            {"text": "Reading it."},
            {"toolUse": {"toolUseId": "tooluse_abc", "name": "read_file", "input": {"path": "a.txt"}}}]}},
        "stopReason": "tool_use",
        "usage": {"inputTokens": 120, "outputTokens": 30, "totalTokens": 190, "cacheReadInputTokens": 40},
        "metrics": {"latencyMs": 412},
    }
    with Stubber(client) as stub:
        stub.add_response("converse", answer, {"modelId": MODEL, **REQUEST})
        result = BedrockProvider(MODEL, client=client).converse(REQUEST)
        stub.assert_no_pending_responses()
    assert result.stop_reason == "tool_use" and result.provider == "bedrock" and result.model_id == MODEL
    assert result.tool_uses == [{"toolUseId": "tooluse_abc", "name": "read_file", "input": {"path": "a.txt"}}]
    assert result.text == "Reading it."
    assert result.usage == {"inputTokens": 120, "outputTokens": 30, "totalTokens": 190, "cacheReadInputTokens": 40,
                            "estimated": False}
    assert result.metrics == {"latencyMs": 412}


def test_converse_sends_only_the_parts_of_the_request_given():
    client = bedrock_client()
    messages = [{"role": "user", "content": [{"text": "hi"}]}]
    with Stubber(client) as stub:
        stub.add_response("converse", {"output": {"message": {"role": "assistant", "content": [{"text": "Hello"}]}},
                                       "stopReason": "end_turn", "usage": {"inputTokens": 1, "outputTokens": 1,
                                                                          "totalTokens": 2},
                                       "metrics": {"latencyMs": 5}},
                          {"modelId": MODEL, "messages": messages})
        assert BedrockProvider(MODEL, client=client).converse({"messages": messages, "system": []}).text == "Hello"


@pytest.mark.parametrize("code, status, error, reason", [
    ("ThrottlingException", 429, ModelThrottled, None),
    ("ServiceQuotaExceededException", 400, ModelThrottled, None),
    ("ValidationException", 400, ModelUnavailable, "invalid_request"),
    ("ModelErrorException", 424, ModelUnavailable, "model_error"),
    ("ModelTimeoutException", 408, ModelUnavailable, "timeout"),
    ("AccessDeniedException", 403, ModelUnavailable, "not_enabled"),
    ("ResourceNotFoundException", 404, ModelUnavailable, "not_found"),
    ("InternalServerException", 500, ModelUnavailable, "service_error"),
    ("SomethingNewException", 400, ModelUnavailable, "model_error"),
    ("UnrecognizedClientException", 403, ModelUnavailable, "credentials"),   # a key AWS does not know
    ("InvalidSignatureException", 403, ModelUnavailable, "credentials"),
    ("ExpiredTokenException", 403, ModelUnavailable, "credentials"),
])
def test_converse_errors_map_to_clean_errors_without_aws_text(code, status, error, reason):
    client = bedrock_client()
    # throttling and a failing service are tried MAX_ATTEMPTS times within the budget; the rest once
    attempts = bedrock.MAX_ATTEMPTS if code in ("ThrottlingException", "ServiceQuotaExceededException",
                                                "InternalServerException") else 1
    with Stubber(client) as stub:
        for _ in range(attempts):
            stub.add_client_error("converse", service_error_code=code, service_message=AWS_TEXT,
                                  http_status_code=status)
        with pytest.raises(error) as raised:
            BedrockProvider(MODEL, client=client).converse(REQUEST)
        stub.assert_no_pending_responses()
    exc = raised.value
    shown = json.dumps({"message": exc.message, "details": exc.details})
    assert "arn:aws" not in shown and code not in shown and "AWS" not in shown
    assert exc.__cause__ is None and exc.__suppress_context__      # the ClientError is not chained
    if error is ModelThrottled:
        assert (exc.code, exc.status, exc.headers["Retry-After"]) == ("MODEL_THROTTLED", 429, "10")
    else:
        assert (exc.code, exc.status, exc.details["reason"]) == ("MODEL_UNAVAILABLE", 502, reason)


def test_an_unreachable_endpoint_is_a_clean_error():
    from botocore.exceptions import EndpointConnectionError
    client = bedrock_client()

    def refuse(request, **kwargs):
        raise EndpointConnectionError(endpoint_url=request.url)
    client.meta.events.register("before-send.bedrock-runtime.Converse", refuse)
    with pytest.raises(ModelUnavailable) as raised:
        BedrockProvider(MODEL, client=client).converse(REQUEST)
    assert raised.value.details == {"model": MODEL, "reason": "unreachable"}


# ---- converse_stream, with real event-stream frames ----------------------------------------

def event(kind: str, payload: dict) -> bytes:
    return frame({":event-type": kind, ":content-type": "application/json", ":message-type": "event"}, payload)


def exception(kind: str, message: str) -> bytes:
    return frame({":exception-type": kind, ":content-type": "application/json", ":message-type": "exception"},
                 {"message": message})


class RawStream:
    """The response body as urllib3 gives it to botocore, delivered in awkward pieces."""

    def __init__(self, data: bytes, piece: int = 7) -> None:
        self.data, self.piece, self.closed = data, piece, False

    def stream(self, *args, **kwargs):
        for start in range(0, len(self.data), self.piece):
            yield self.data[start:start + self.piece]

    def close(self):
        self.closed = True


def streaming_client(body: bytes, status: int = 200, headers: dict[str, str] | None = None):
    client = bedrock_client()
    sent = []

    def answer(request, **kwargs):
        sent.append(request)
        raw = RawStream(body)
        return AWSResponse(request.url, status, headers or {"Content-Type": "application/vnd.amazon.eventstream"}, raw)
    client.meta.events.register("before-send.bedrock-runtime.ConverseStream", answer)
    return client, sent


TOOL_STREAM = [
    event("messageStart", {"p": "abcdefgh", "role": "assistant"}),      # Bedrock pads frames with "p"
    event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Reading "}, "p": "ab"}),
    event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "it."}}),
    event("contentBlockStop", {"contentBlockIndex": 0}),
    event("contentBlockStart", {"contentBlockIndex": 1,
                                "start": {"toolUse": {"toolUseId": "tooluse_xyz", "name": "read_file"}}}),
    event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": "{\"path\":"}}}),
    event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"toolUse": {"input": " \"a.txt\"}"}}}),
    event("contentBlockStop", {"contentBlockIndex": 1}),
    event("messageStop", {"stopReason": "tool_use"}),
    event("metadata", {"usage": {"inputTokens": 50, "outputTokens": 20, "totalTokens": 70,
                                 "cacheWriteInputTokens": 0}, "metrics": {"latencyMs": 300}}),
]


def test_converse_stream_decodes_real_frames_into_the_interfaces_events():
    client, sent = streaming_client(b"".join(TOOL_STREAM))
    events = list(BedrockProvider(MODEL, client=client).converse_stream(REQUEST))
    (request,) = sent
    assert request.url.endswith(f"/model/{MODEL.replace(':', '%3A')}/converse-stream")
    assert json.loads(request.body)["toolConfig"] == TOOLS and "Authorization" in request.headers   # signed
    assert [next(iter(e)) for e in events] == ["messageStart", "contentBlockDelta", "contentBlockDelta",
                                               "contentBlockStop", "contentBlockStart", "contentBlockDelta",
                                               "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"]
    assert events[0] == {"messageStart": {"role": "assistant"}}                  # padding dropped
    assert events[1] == {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Reading "}}}
    assert events[4]["contentBlockStart"]["start"]["toolUse"] == {"toolUseId": "tooluse_xyz", "name": "read_file"}
    assert events[-1] == {"metadata": {"usage": {"inputTokens": 50, "outputTokens": 20, "totalTokens": 70,
                                                 "estimated": False}, "metrics": {"latencyMs": 300}}}
    result = assemble(events, MODEL, "bedrock")
    assert result.text == "Reading it." and result.stop_reason == "tool_use"
    assert result.tool_uses == [{"toolUseId": "tooluse_xyz", "name": "read_file", "input": {"path": "a.txt"}}]
    assert result.usage["inputTokens"] == 50 and result.usage["estimated"] is False


def test_an_exception_frame_mid_stream_is_a_clean_error_after_the_events_before_it():
    body = b"".join(TOOL_STREAM[:3]) + exception("throttlingException", f"Too many tokens. {AWS_TEXT}")
    client, _ = streaming_client(body)
    assembler = StreamAssembler(MODEL, "bedrock")
    received = []
    with pytest.raises(ModelThrottled) as raised:
        for item in BedrockProvider(MODEL, client=client).converse_stream(REQUEST):
            received.append(item)
            assembler.add(item)
    assert len(received) == 3
    assert "arn:aws" not in raised.value.message and "Too many tokens" not in json.dumps(raised.value.details)
    with pytest.raises(ValueError):
        assembler.result()       # an interrupted stream makes no result

    client, _ = streaming_client(TOOL_STREAM[0] + exception("modelStreamErrorException", AWS_TEXT))
    with pytest.raises(ModelUnavailable) as raised:
        list(BedrockProvider(MODEL, client=client).converse_stream(REQUEST))
    assert raised.value.details["reason"] == "model_error"


def test_a_corrupt_frame_is_a_clean_error():
    broken = bytearray(TOOL_STREAM[1])
    broken[-6] ^= 0xFF                                           # the payload no longer matches its CRC
    client, _ = streaming_client(TOOL_STREAM[0] + bytes(broken))
    stream = BedrockProvider(MODEL, client=client).converse_stream(REQUEST)
    assert next(stream) == {"messageStart": {"role": "assistant"}}
    with pytest.raises(ModelUnavailable) as raised:
        next(stream)
    assert raised.value.details == {"model": MODEL, "reason": "bad_stream"}


def test_converse_stream_refused_before_streaming_is_a_clean_error():
    body = json.dumps({"message": f"Malformed input request: {AWS_TEXT}"}).encode()
    client, _ = streaming_client(body, status=400, headers={"Content-Type": "application/json",
                                                            "x-amzn-ErrorType": "ValidationException"})
    with pytest.raises(ModelUnavailable) as raised:
        BedrockProvider(MODEL, client=client).converse_stream(REQUEST)
    assert raised.value.details == {"model": MODEL, "reason": "invalid_request"}
    assert "Malformed" not in raised.value.message


# ---- the call's time budget, against a server on loopback ----------------------------------

def test_a_silent_bedrock_is_given_up_when_the_budget_is_spent_not_after_read_timeouts_times_attempts():
    from svc_core.adapters import aws
    from tests.support.model_api_server import Reply, serving
    with serving([Reply(hang_before=20, body={}), Reply(hang_before=20, body={})]) as server:
        model = BedrockProvider(MODEL, budget_seconds=1, endpoint_url=server.url)
        with pytest.raises(ModelUnavailable) as failed:
            model.converse(REQUEST)
        assert not server.hang_over.is_set()       # the server was still silent when the call ended
        assert len(server.received) == 1           # a timeout spends the budget: no second attempt
    assert failed.value.details == {"model": MODEL, "reason": "timeout"}
    aws.reset_clients()


def test_what_a_stream_had_received_before_it_failed_is_billed_as_a_failed_call():
    """An exception frame after text: an estimate of the request and of that text; a damaged frame
    after the metadata: its counts as Bedrock reported them. Either is a result marked failed."""
    from svc_core.adapters.models.base import billable, estimated_usage
    client, _ = streaming_client(b"".join(TOOL_STREAM[:3]) + exception("throttlingException", AWS_TEXT))
    with pytest.raises(ModelThrottled) as early:
        list(BedrockProvider(MODEL, client=client).converse_stream(REQUEST))
    received = billable(early.value)
    assert received.failed and received.model_id == MODEL and received.usage["estimated"]
    assert received.usage["outputTokens"] == estimated_usage(REQUEST, "Reading it.")["outputTokens"]
    damaged = bytearray(TOOL_STREAM[0])
    damaged[-1] ^= 0xFF
    client, _ = streaming_client(b"".join(TOOL_STREAM) + bytes(damaged))
    with pytest.raises(ModelUnavailable) as late:
        list(BedrockProvider(MODEL, client=client).converse_stream(REQUEST))
    assert late.value.details["reason"] == "bad_stream"
    usage = billable(late.value).usage
    assert (usage["inputTokens"], usage["outputTokens"], usage["estimated"]) == (50, 20, False)


def test_a_throttled_answers_retry_after_reaches_the_caller_capped():
    client = bedrock_client()
    with Stubber(client) as stub:
        for wait in ("7", "5", "3600"):   # the last answer's wait is the one the caller is told, at most 60 s
            stub.add_client_error("converse", service_error_code="ThrottlingException", service_message=AWS_TEXT,
                                  http_status_code=429, response_meta={"HTTPHeaders": {"retry-after": wait}})
        with pytest.raises(ModelThrottled) as raised:
            BedrockProvider(MODEL, client=client).converse(REQUEST)
    assert raised.value.details["retryAfterSeconds"] == 60 and raised.value.headers["Retry-After"] == "60"
