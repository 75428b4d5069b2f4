"""`svc listen --forward-to URL`: the tenant's events, live, forwarded to a local receiver.

The command reads the service's event stream (GET /api/v1/events/stream, Server-Sent Events, with the
CLI's credential: it needs `events:read`) and POSTs each event to the local URL as the service's
webhooks would: the same body, signed with Standard Webhooks headers (`webhook-id`,
`webhook-timestamp`, `webhook-signature`) with a secret of its own, which it prints (and keeps, per
profile, so a receiver configured once keeps verifying). Each event and the local answer are shown;
events are forwarded one at a time, in the order of the stream; a failed forward is shown, not
retried. Ctrl-C stops it.

A restart resumes where the previous run stopped (the last event forwarded, within the last hour;
the service keeps 30 days): the events of the pause are forwarded first, none twice (an event the
stream sends again is recognised by its id).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import signal
import threading
import time
from datetime import UTC, datetime
from typing import Any

import click
import httpx
from httpx_sse import EventSource
from standardwebhooks import Webhook

from svc_client._core import VERSION
from svc_client.commands.base import examples
from svc_client.store import _read_json, _write_private, config_dir
from svc_client.webhook_events import example_events

USER_AGENT = f"svc-cli-listen/{VERSION}"
RESUME_WITHIN_SECONDS = 3600
RECENT = 200             # ids remembered to recognise an event the stream sends again
RECONNECT_SECONDS = 1.0


def _state_file():
    return config_dir() / "listen.json"


def _load(profile: str) -> dict[str, Any]:
    return _read_json(_state_file()).get(profile) or {}


def _save(profile: str, state: dict[str, Any]) -> None:
    everything = _read_json(_state_file())
    everything[profile] = state
    _write_private(_state_file(), everything)


def listen_secret(profile: str) -> str:
    """This profile's forwarding secret (whsec_ + 32 random bytes), made on first use and kept."""
    state = _load(profile)
    if not state.get("secret"):
        state["secret"] = "whsec_" + base64.b64encode(os.urandom(32)).decode()
        _save(profile, state)
    return state["secret"]


def signed_headers(secret: str, event_id: str, body: str, now: float | None = None) -> dict[str, str]:
    """The Standard Webhooks headers of one forward, signed with the reference library."""
    moment = datetime.fromtimestamp(time.time() if now is None else now, tz=UTC)
    return {"Content-Type": "application/json", "User-Agent": USER_AGENT, "webhook-id": event_id,
            "webhook-timestamp": str(int(moment.timestamp())),
            "webhook-signature": Webhook(secret).sign(event_id, moment, body)}


class Forwarder:
    """Forwards the stream's events to the local URL, once each, remembering where it is."""

    def __init__(self, profile: str, url: str, secret: str, verify: bool, show) -> None:
        self.profile, self.url, self.secret, self.show = profile, url, secret, show
        self.http = httpx.Client(verify=verify, timeout=15.0, follow_redirects=False)
        saved = _load(profile)
        fresh = saved.get("lastEventId") and time.time() - saved.get("lastAt", 0) < RESUME_WITHIN_SECONDS
        self.last_id: str | None = saved["lastEventId"] if fresh else None
        self.recent: list[str] = list(saved.get("recent") or []) if fresh else []

    def forward(self, event_id: str, body: str) -> None:
        if event_id in self.recent:
            return  # sent again by a resumed stream: forwarded already
        with _ctrl_c_after():  # a forward is finished and recorded, or not begun: never sent and forgotten
            self._forward(event_id, body)

    def _forward(self, event_id: str, body: str) -> None:
        event = json.loads(body)
        started = time.monotonic()
        try:
            answer = self.http.post(self.url, content=body.encode(), headers=signed_headers(self.secret, event_id, body))
            outcome: dict[str, Any] = {"status": answer.status_code}
        except httpx.HTTPError as exc:
            outcome = {"status": None, "error": f"{type(exc).__name__}: {exc}"}
        outcome["latencyMs"] = round((time.monotonic() - started) * 1000)
        self.recent = (self.recent + [event_id])[-RECENT:]
        self.last_id = event_id
        _save(self.profile, {**_load(self.profile), "lastEventId": event_id, "lastAt": time.time(),
                             "recent": self.recent})
        self.show(event, outcome)

    def close(self) -> None:
        self.http.close()


@contextlib.contextmanager
def _ctrl_c_after():
    """Ctrl-C during the block takes effect at its end."""
    pressed: list[int] = []
    try:
        previous = signal.signal(signal.SIGINT, lambda signum, _frame: pressed.append(signum))
    except ValueError:  # not the main thread: nothing to hold back
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        raise KeyboardInterrupt


def _show_text(out):
    def show(event: dict[str, Any], outcome: dict[str, Any]) -> None:
        status = outcome["status"]
        answer = f"[{'green' if status and 200 <= status < 300 else 'red'}]{status or outcome.get('error')}[/]"
        out.print(f"{event['timestamp']}  {event['type']:<17} {event['id']}  -> {answer} "
                  f"[dim]({outcome['latencyMs']} ms)[/dim]")
    return show


def _show_json(event: dict[str, Any], outcome: dict[str, Any]) -> None:
    click.echo(json.dumps({"event": event, **outcome}, ensure_ascii=False), nl=True)


def _stream_once(svc, forwarder: Forwarder, types: str | None, err) -> None:
    """One connection to the event stream: forward what it sends until it ends or breaks."""
    svc._ensure_token()
    headers = {"Accept": "text/event-stream", **({"Last-Event-ID": forwarder.last_id} if forwarder.last_id else {})}
    request = svc._build(svc._http, "GET", "/events/stream", params={"types": types}, headers=headers)
    request.extensions["timeout"] = httpx.Timeout(15.0, read=60.0).as_dict()
    response = svc._send(request, stream=True)
    try:
        if not response.is_success:
            response.read()
            svc._result(response, None, False, None)  # raises the error the envelope names
            return
        err.print("[dim]Connected: events from now on are forwarded.[/dim]")
        for sse in EventSource(response).iter_sse():
            if sse.event == "error" and not sse.id:
                return  # the stream failed on the service's side: reconnect after the last id
            if sse.id and sse.data:
                forwarder.forward(sse.id, sse.data)
    finally:
        response.close()


@click.command(epilog=examples("svc listen --forward-to http://localhost:4242/webhook",
                               "svc listen --forward-to https://localhost:8443/hooks "
                               f"--events {','.join(example_events())} --skip-verify",
                               "svc listen --print-secret"))
@click.option("--forward-to", "forward_to", metavar="URL", help="The local receiver, e.g. http://localhost:4242/webhook.")
@click.option("--events", "events", metavar="NAMES", help="Only these event names, comma-separated (default: all).")
@click.option("--print-secret", is_flag=True, help="Print the signing secret and exit.")
@click.option("--skip-verify", is_flag=True, help="Do not check the local https receiver's certificate.")
@click.pass_context
def listen(ctx: click.Context, forward_to: str | None, events: str | None, print_secret: bool,
           skip_verify: bool) -> None:
    """Forward the tenant's events, live and signed, to a local receiver (Ctrl-C stops)."""
    state = ctx.obj
    secret = listen_secret(state.profile)
    if print_secret:
        click.echo(secret)
        return
    if not forward_to:
        raise click.UsageError("Give --forward-to URL (or --print-secret).")
    show = _show_json if state.json else _show_text(state.out)
    state.err.print(f"Ready. Forwarding events to {forward_to}; verify them with the signing secret "
                        f"[bold]{secret}[/bold] (Ctrl-C stops).")
    forwarder = Forwarder(state.profile, forward_to, secret, not skip_verify, show)
    if forwarder.last_id:
        state.err.print(f"[dim]Resuming after {forwarder.last_id}.[/dim]")
    svc = state.client()
    try:
        while True:
            try:
                _stream_once(svc, forwarder, events, state.err)
            except (httpx.TransportError, httpx.StreamError) as exc:
                state.err.print(f"[dim]The stream broke ({type(exc).__name__}); reconnecting.[/dim]")
            time.sleep(RECONNECT_SECONDS)
    except KeyboardInterrupt:
        state.err.print("Stopped.")   # said before any clean-up, which must not keep Ctrl-C from ending it
    finally:
        _close_within(CLOSE_SECONDS, svc.close, forwarder.close)


CLOSE_SECONDS = 2.0


def _close_within(seconds: float, *closers) -> None:
    """Close the HTTP clients, giving up after `seconds`: a Ctrl-C that lands while a connection pool holds
    its lock can leave the lock held (the interrupt comes between the acquire and the block that releases
    it), and closing the pool would then wait for ever. Every forward is recorded as it is made, so nothing
    is lost by leaving the rest to the process's exit."""
    def close_all() -> None:
        for close in closers:
            with contextlib.suppress(Exception):
                close()
    closing = threading.Thread(target=close_all, name="svc-listen-close", daemon=True)
    closing.start()
    closing.join(seconds)
