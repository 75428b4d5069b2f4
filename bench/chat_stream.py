"""6. Chat stream: time from POST message to the first streamed event, and to `done`.

In a child process (the local stack sets its own environment), as bench/webhooks.py's latency:
the local stack (LocalStack in-process: gateway, the chat turn queue's poller, the worker with the
offline model, the stream function's ASGI app), one chat session, then --chat-turns turns one after
the other. For each: POST /api/v1/chat/sessions/{id}/messages, then GET .../stream at once (the
Authorization header, read with httpx-sse); the time from sending the POST to the first event
(message_start) and to `done`. The path measured: the API stores the turn and queues it -> the
queue poller hands it to the worker -> the worker calls the offline model and stores each event ->
the stream, polling the events table every CHAT_STREAM_POLL_MS, sends it.

    .venv/bin/python -m bench --only chat              # in the table
    .venv/bin/python -m bench.chat_stream 20           # alone: prints the figures
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.fixture import ROOT
from bench.report import verdict
from bench.warm import percentile

WARM_UP = 2  # turns not counted: imports, first clients, first containers


@dataclass
class ChatStreamResult:
    turns: int
    first_event_ms: list[float]
    done_ms: list[float]
    events_per_turn: float
    startup_s: float

    def figures(self) -> dict[str, float]:
        return {"first_p50": percentile(self.first_event_ms, 50), "first_p99": percentile(self.first_event_ms, 99),
                "done_p50": percentile(self.done_ms, 50), "done_p99": percentile(self.done_ms, 99)}


def rows(r: ChatStreamResult) -> list[tuple]:
    f = r.figures()
    note = f"{len(r.first_event_ms)} turns one after the other, offline model; stack start {r.startup_s:.1f} s"
    return [
        ("6. Chat stream (local stack, offline model)",),
        ("  POST message to first streamed event", f"p50 {f['first_p50']:.0f} ms, p99 {f['first_p99']:.0f} ms",
         "< 1 s", verdict(f["first_p99"] < 1000), note),
        ("  POST message to done", f"p50 {f['done_p50']:.0f} ms, p99 {f['done_p99']:.0f} ms", "", "",
         f"{r.events_per_turn:.0f} events per turn on average"),
    ]


def measure(env: dict[str, str], turns: int = 20) -> ChatStreamResult:
    """Runs _child in a fresh interpreter and reads its JSON answer."""
    done = subprocess.run([sys.executable, "-m", "bench.chat_stream", str(turns), "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{\"bench\"")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"the chat stream run failed:\n{done.stderr[-3000:]}")
    answer = json.loads(lines[-1])
    return ChatStreamResult(turns, answer["first_event_ms"], answer["done_ms"], answer["events_per_turn"],
                            answer["startup_s"])


def _child(turns: int) -> dict:
    import httpx
    from httpx_sse import EventSource

    from devstack.bootstrap import bootstrap
    from devstack.stack import LocalStack

    begun = time.monotonic()
    stack = LocalStack(port=0, log=lambda _m: None, parameters={"LogLevel": "WARNING"}).start()
    first_ms: list[float] = []
    done_ms: list[float] = []
    counts: list[int] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-chat-") as tmp:
            credentials = bootstrap(stack.base_url, Path(tmp) / "credentials.json")
        startup = time.monotonic() - begun
        with httpx.Client(base_url=stack.base_url, timeout=30,
                          headers={"Authorization": f"Bearer {credentials['apiKey']}"}) as http:
            session = http.post("/api/v1/chat/sessions", json={"title": "bench"}).json()["data"]["id"]
            for i in range(turns + WARM_UP):
                sent, answer = _send(http, session, f"Turn {i}: say something.")
                first = last = None
                count = 0
                with http.stream("GET", answer["streamUrl"]) as response:
                    response.raise_for_status()
                    for event in EventSource(response).iter_sse():
                        count += 1
                        if first is None:
                            first = time.perf_counter()
                        if event.event == "done":
                            last = time.perf_counter()
                if first is None or last is None:
                    raise RuntimeError(f"turn {i}: the stream ended without done")
                if i >= WARM_UP:
                    first_ms.append((first - sent) * 1000)
                    done_ms.append((last - sent) * 1000)
                    counts.append(count)
    finally:
        stack.stop()
    return {"bench": "chat-stream", "first_event_ms": first_ms, "done_ms": done_ms,
            "events_per_turn": statistics.mean(counts) if counts else 0.0, "startup_s": startup}


def _send(http, session: str, content: str) -> tuple[float, dict]:
    """POST the message (again while the previous turn is still being closed: 409), and when it was sent."""
    for _ in range(200):
        sent = time.perf_counter()
        answer = http.post(f"/api/v1/chat/sessions/{session}/messages", json={"content": content})
        if answer.status_code != 409:
            answer.raise_for_status()
            return sent, answer.json()["data"]
        time.sleep(0.01)
    raise RuntimeError("the previous turn never ended")


if __name__ == "__main__":
    from bench.fixture import isolate_from_aws
    isolate_from_aws()
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    result = _child(count)
    if "--json" in sys.argv:
        print(json.dumps(result))
    else:
        measured = ChatStreamResult(count, result["first_event_ms"], result["done_ms"], result["events_per_turn"],
                                    result["startup_s"])
        print(json.dumps({**measured.figures(), "turns": count, "events_per_turn": result["events_per_turn"],
                          "startup_s": round(result["startup_s"], 1)}, indent=1))
