"""The interactive chat."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import click

from svc_client.commands.base import (
    State,
    SvcCommand,
    pass_state,
)
from svc_client.streaming import (
    ContentDelta,
    Done,
    StreamError,
    ToolResult,
    ToolUse,
    Usage,
)

# ---- chat -------------------------------------------------------------------------------------

@click.command(cls=SvcCommand)
@click.option("--session", "session_id", help="Continue this session (else a new one).")
@click.option("--project", "project_id", help="The project the conversation is about.")
@click.option("--agent", "agent_id", help="An agent whose tools the assistant may use (new sessions).")
@click.option("--message", "-m", "messages", multiple=True, help="Send this and exit (repeat for several turns).")
@pass_state
def chat(state: State, session_id: str | None, project_id: str | None, agent_id: str | None,
         messages: tuple[str, ...]) -> None:
    """An interactive chat; answers are streamed as they are written. Ctrl-D or /exit ends it.
    With --output json, every stream event is printed as one JSON line."""
    with state.client() as svc:
        if session_id is None:
            session = svc.chat.create_session(project_id=project_id, agent_id=agent_id)
            session_id = session.id
            if state.json:
                click.echo(json.dumps({"event": "session", "data": session.raw()}))
            else:
                state.err.print(f"[dim]session {session_id} (Ctrl-D or /exit ends it)[/dim]")
        turns: Iterable[str] = messages or _prompts(state)
        for text in turns:
            svc.chat.send(session_id, text, project_id=project_id)
            _print_answer(state, svc.chat.stream(session_id))


def _prompts(state: State) -> Iterable[str]:
    while True:
        try:
            text = click.prompt(click.style("you", bold=True), prompt_suffix="> ", err=True)
        except (EOFError, click.Abort):
            state.err.print()
            return
        if text.strip() in ("/exit", "/quit"):
            return
        if text.strip():
            yield text


def _print_answer(state: State, events: Iterable[Any]) -> None:
    failed = False
    for event in events:
        if state.json:
            click.echo(json.dumps({"event": event.event, "id": event.id, "data": event.raw()}))
            continue
        if isinstance(event, ContentDelta):
            state.out.print(event.text, end="", markup=False)
        elif isinstance(event, ToolUse):
            state.out.print(f"\n[dim]-> {event.name} {json.dumps(event.input)}[/dim]")
        elif isinstance(event, ToolResult):
            state.out.print(f"[dim]<- {event.name}: {event.status}[/dim]")
        elif isinstance(event, StreamError):
            failed = True
            state.out.print(f"\n[red]{event.code}[/red]: {event.message}")
        elif isinstance(event, Usage):
            state.err.print(f"\n[dim]({event.input_tokens} in, {event.output_tokens} out, "
                            f"{event.micro_credits} micro-credits{', estimated' if event.estimated else ''})[/dim]")
        elif isinstance(event, Done) and event.status != "completed":
            failed = True
    if not state.json:
        state.out.print()
    if failed and not state.json:
        state.err.print("[red]The answer failed.[/red]")
