"""`svc api` (any route, as `gh api` does) and `svc completion` (shell completion scripts)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from click.shell_completion import get_completion_class

from svc_client._core import API_PREFIX, decode, request_headers
from svc_client.commands.base import State, SvcCommand, examples, pass_state

PROG = "svc"


@click.command(cls=SvcCommand, epilog=examples(
    "svc api GET /projects",
    "svc api GET '/billing/ledger?limit=5' | jq '.items[].kind'",
    "svc api POST /projects --data '{\"name\": \"Apollo\"}'",
    "svc api PATCH /agents/agt_... --data @agent.json",
    "svc api POST /billing/portal -H 'Idempotency-Key: portal-1'"))
@click.argument("method", type=click.Choice(["GET", "POST", "PUT", "PATCH", "DELETE"], case_sensitive=False))
@click.argument("path")
@click.option("--data", "-d", help="The JSON body: text, @FILE, or @- for standard input.")
@click.option("--header", "-H", "headers", multiple=True, help="An extra header, 'Name: value' (repeat).")
@pass_state
def api(state: State, method: str, path: str, data: str | None, headers: tuple[str, ...]) -> None:
    """Call any route of the API with the profile's credential and print the answer's data as JSON
    (PATH under /api/v1, which may be left out). Errors are reported and exit as every command's."""
    body = _body(data)
    extra = {}
    for header in headers:
        name, colon, value = header.partition(":")
        if not colon or not name.strip():
            raise click.UsageError(f"A header is 'Name: value', not {header!r}.")
        extra[name.strip()] = value.strip()
    if body is not None:
        extra.setdefault("Content-Type", "application/json")
    path = "/" + path.lstrip("/")
    if path.startswith(API_PREFIX + "/"):
        path = path[len(API_PREFIX):]
    with state.client() as svc:
        # The body is sent exactly as given (the library's calls leave out None fields; this must not).
        request = svc._http.build_request(method.upper(), API_PREFIX + path, content=body,
                                          headers=request_headers(svc.credentials, extra, authenticated=True))
        response = svc._send(request)
        answer = decode(response)
    if answer is None and response.content:
        click.echo(response.text)   # not JSON (a page, a script)
    else:
        click.echo(json.dumps(answer, indent=2, ensure_ascii=False))


def _body(data: str | None) -> bytes | None:
    if data is None:
        return None
    if data.startswith("@"):
        text = sys.stdin.read() if data == "@-" else Path(data[1:]).read_text()
    else:
        text = data
    try:
        json.loads(text)
    except ValueError as error:
        raise click.UsageError(f"--data is not JSON: {error}.") from None
    return text.encode()


@click.command(cls=SvcCommand, epilog=examples(
    "eval \"$(svc completion bash)\"                                   # in ~/.bashrc",
    "svc completion zsh > \"${fpath[1]}/_svc\"                         # then restart zsh",
    "svc completion fish > ~/.config/fish/completions/svc.fish"))
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the shell completion script for bash, zsh or fish (commands, options, choices)."""
    complete: Any = get_completion_class(shell)
    click.echo(complete(ctx.find_root().command, {}, PROG, "_SVC_COMPLETE").source())


@click.command("status", cls=SvcCommand, epilog=examples("svc status", "svc status -o json"))
@pass_state
def status(state: State) -> None:
    """Whether the service answers: GET /health (no credential sent), its stage and version."""
    with state.client(authenticated=False) as svc:
        response = svc._send(svc._http.build_request("GET", API_PREFIX + "/health",
                                                     headers=request_headers(svc.credentials, {}, authenticated=False)))
        health = decode(response)
    state.emit(health, lambda h: state.out.print(
        f"{h.get('service', 'svc')} {h.get('status', '?')}: stage {h.get('stage') or '-'}, "
        f"version {h.get('version') or '-'}" + (" (the local stack)" if h.get("local") else "")))
