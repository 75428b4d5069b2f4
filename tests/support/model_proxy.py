"""A recording proxy on loopback in front of an independent model server (llm-katan, which speaks
OpenAI's, Anthropic's and Bedrock's APIs with an echo backend), for the end-to-end provider tests.

It relays every request and keeps, for each answer, the usage the server reported (`calls`), so a
test can compare what the service metered with what the provider said, token for token. Where
llm-katan does not speak an API the way the real one does, the proxy fills in with real shapes:

- Bedrock's ConverseStream: llm-katan's stream is not AWS event-stream framed (botocore refuses its
  checksums). The proxy asks llm-katan's Converse and sends that answer as real event-stream frames
  (messageStart, contentBlockStart/Delta/Stop, messageStop, metadata with its usage).
- llm-katan calls the first tool whenever tools are offered, so a run would never end: a request
  that already holds a tool's result goes to it without the tools, and is answered with text, as a
  model that has what it asked for.

And it breaks answers on demand (`break_next`), after the provider counted and reported the tokens: the
next streamed answer of an API is passed on up to and with the event that reports its usage
(OpenAI's usage chunk, Anthropic's message_delta, Bedrock's metadata frame), then either cut
(`cut`: the connection closes in the middle of a chunk, a transport error) or followed by something
of another shape (`shape`: a chunk that is not JSON; Anthropic: an overloaded_error event; Bedrock:
a frame whose checksum fails). The call is recorded with the usage the server reported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.aws_event_stream import event, frame
from tests.support.relay_proxy import RelayProxy


@dataclass
class Call:
    api: str            # openai | anthropic | bedrock
    model: str
    stream: bool
    input_tokens: int
    output_tokens: int


class ModelProxy(RelayProxy):
    def __init__(self, upstream: str) -> None:
        super().__init__(upstream, timeout=30)
        self.calls: list[Call] = []
        self.breaks: dict[str, list[str]] = {}   # api -> how its next streamed answers break ("cut" | "shape")

    def break_next(self, api: str, how: str) -> None:
        """Break the next streamed answer of this API (openai | anthropic | bedrock) after its usage."""
        with self.lock:
            self.breaks.setdefault(api, []).append(how)

    def _break_for(self, api: str) -> str | None:
        with self.lock:
            pending = self.breaks.get(api) or []
            return pending.pop(0) if pending else None

    def usage_of(self, api: str, model: str) -> tuple[int, int]:
        """(input, output) tokens the server reported for this API's calls of this model."""
        with self.lock:
            mine = [c for c in self.calls if c.api == api and c.model == model]
        return sum(c.input_tokens for c in mine), sum(c.output_tokens for c in mine)

    def _record(self, call: Call) -> None:
        with self.lock:
            self.calls.append(call)

    def handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        path = handler.path.split("?")[0]
        if handler.command != "POST":
            self.relay(handler, body)
            return
        body = _after_a_tool_result(path, body)
        if path.endswith("/converse-stream"):
            self._bedrock_stream(handler, body, self._break_for("bedrock"))
            return
        api = "openai" if path.endswith("/chat/completions") else "anthropic" if path.endswith("/v1/messages") else None
        if api and json.loads(body or b"{}").get("stream"):
            how = self._break_for(api)
            if how:
                self._broken_sse(handler, path, body, api, how)
                return
        status, answer = self.relay(handler, body)
        if status == 200:
            self._note(path, body, answer)

    def _note(self, path: str, request_body: bytes, answer: bytes) -> None:
        """The usage an answer reported, as the provider's API says it."""
        request = json.loads(request_body or b"{}")
        stream = bool(request.get("stream"))
        if path.endswith("/chat/completions"):
            usage = {}
            for payload in _sse_data(answer) if stream else [json.loads(answer)]:
                usage = payload.get("usage") or usage
            self._record(Call("openai", request["model"], stream, usage.get("prompt_tokens", 0),
                              usage.get("completion_tokens", 0)))
        elif path.endswith("/v1/messages"):
            input_tokens = output_tokens = 0
            for payload in _sse_data(answer) if stream else [json.loads(answer)]:
                usage = (payload.get("message") or {}).get("usage") or payload.get("usage") or {}
                input_tokens = usage.get("input_tokens", input_tokens) or input_tokens
                output_tokens = usage.get("output_tokens", output_tokens) or output_tokens
            self._record(Call("anthropic", request["model"], stream, input_tokens, output_tokens))
        elif path.endswith("/converse"):
            usage = json.loads(answer).get("usage") or {}
            self._record(Call("bedrock", _bedrock_model(path), False, usage.get("inputTokens", 0),
                              usage.get("outputTokens", 0)))

    # ---- answers broken after the usage was sent --------------------------------------------

    def _broken_sse(self, handler: BaseHTTPRequestHandler, path: str, body: bytes, api: str, how: str) -> None:
        answer = self.http.post(self.upstream + path, content=body, headers=self.upstream_headers(handler))
        assert answer.status_code == 200, answer.text
        self._note(path, body, answer.content)   # the server counted these tokens
        events = [e + b"\n\n" for e in answer.content.replace(b"\r\n", b"\n").split(b"\n\n") if e.strip()]
        last = max(i for i, e in enumerate(events) if _reports_usage(api, e))
        after = {"openai": b"data: {\"choices\": [{\"delta\"\n\n",
                 "anthropic": b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
                              b'"message": "Overloaded"}}\n\n'}[api]
        self._send_broken(handler, "text/event-stream", events[:last + 1], after if how == "shape" else None)

    @staticmethod
    def _send_broken(handler: BaseHTTPRequestHandler, content_type: str, pieces: list[bytes],
                     another_shape: bytes | None) -> None:
        """Chunked: the pieces, then another_shape and a proper end, or (None) a chunk cut short."""
        handler.send_response(200)
        handler.send_header("content-type", content_type)
        handler.send_header("transfer-encoding", "chunked")
        handler.send_header("connection", "close")
        handler.end_headers()
        for piece in pieces:
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            handler.wfile.flush()
        if another_shape is not None:
            handler.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(another_shape), another_shape))
        else:
            handler.wfile.write(b"400\r\npart of a chunk")   # promised 1,024 bytes, then the connection ends
        handler.wfile.flush()
        handler.close_connection = True

    # ---- what llm-katan does not do as the real APIs do ------------------------------------

    def _bedrock_stream(self, handler: BaseHTTPRequestHandler, body: bytes, how: str | None = None) -> None:
        path = handler.path.split("?")[0].removesuffix("/converse-stream") + "/converse"
        answer = self.http.post(self.upstream + path, content=body, headers=self.upstream_headers(handler))
        if answer.status_code != 200:
            handler.send_response(answer.status_code)
            handler.send_header("content-type", answer.headers.get("content-type", "application/json"))
            handler.send_header("content-length", str(len(answer.content)))
            handler.end_headers()
            handler.wfile.write(answer.content)
            return
        result = answer.json()
        usage = result.get("usage") or {}
        frames = [event("messageStart", {"role": "assistant"})]
        for index, block in enumerate(result["output"]["message"]["content"]):
            if "toolUse" in block:
                use = block["toolUse"]
                frames.append(event("contentBlockStart", {"contentBlockIndex": index, "start": {
                    "toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}}))
                text = json.dumps(use.get("input") or {})
                pieces = [text[i:i + 7] for i in range(0, len(text), 7)]   # fragments, as Bedrock sends them
                frames += [event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"toolUse": {"input": p}}})
                           for p in pieces]
            else:
                text = block.get("text", "")
                frames += [event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": text[i:i + 5]}})
                           for i in range(0, len(text), 5)]
            frames.append(event("contentBlockStop", {"contentBlockIndex": index}))
        frames.append(event("messageStop", {"stopReason": result.get("stopReason", "end_turn")}))
        frames.append(event("metadata", {"usage": usage, "metrics": {"latencyMs": 1}}))
        if how is not None:
            self._record(Call("bedrock", _bedrock_model(path), True, usage.get("inputTokens", 0),
                              usage.get("outputTokens", 0)))
            damaged = bytearray(frame({":message-type": "event", ":event-type": "messageStop",
                                       ":content-type": "application/json"}, {"stopReason": "end_turn"}))
            damaged[-1] ^= 0xFF   # its checksum fails
            self._send_broken(handler, "application/vnd.amazon.eventstream", frames,
                              bytes(damaged) if how == "shape" else None)
            return
        handler.send_response(200)
        handler.send_header("content-type", "application/vnd.amazon.eventstream")
        handler.send_header("connection", "close")
        handler.end_headers()
        for piece in frames:
            handler.wfile.write(piece)
            handler.wfile.flush()
        handler.close_connection = True
        self._record(Call("bedrock", _bedrock_model(path), True, usage.get("inputTokens", 0),
                          usage.get("outputTokens", 0)))


def _reports_usage(api: str, sse_event: bytes) -> bool:
    payloads = _sse_data(sse_event)
    if api == "openai":
        return any(p.get("usage") for p in payloads)
    return any(p.get("type") == "message_delta" and p.get("usage") for p in payloads)


def _after_a_tool_result(path: str, body: bytes) -> bytes:
    """The body without its tools when it already holds a tool's result."""
    request = json.loads(body or b"{}")
    messages = request.get("messages") or []
    if path.endswith("/chat/completions") and any(m.get("role") == "tool" for m in messages):
        request.pop("tools", None)
        request.pop("tool_choice", None)
    elif path.endswith("/v1/messages") and any(
            isinstance(block, dict) and block.get("type") == "tool_result"
            for m in messages if isinstance(m.get("content"), list) for block in m["content"]):
        request.pop("tools", None)
        request.pop("tool_choice", None)
    elif (path.endswith("/converse") or path.endswith("/converse-stream")) and any(
            "toolResult" in block for m in messages for block in m.get("content") or []):
        request.pop("toolConfig", None)
    else:
        return body
    return json.dumps(request).encode()


def _sse_data(answer: bytes) -> list[dict[str, Any]]:
    payloads = []
    for line in answer.decode().splitlines():
        if line.startswith("data:") and line[5:].strip() not in ("", "[DONE]"):
            payloads.append(json.loads(line[5:]))
    return payloads


def _bedrock_model(path: str) -> str:
    """/model/{modelId}/converse -> the model id (URL-decoded)."""
    from urllib.parse import unquote
    return unquote(path.split("/model/", 1)[1].rsplit("/", 1)[0])
