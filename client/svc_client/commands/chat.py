"""The interactive chat, and chat sessions."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

import click

from svc_client.commands.base import (
    State,
    SvcCommand,
    SvcGroup,
    _call_command,
    _list_command,
    examples,
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


@click.command(cls=SvcCommand, epilog=examples("svc chat --project proj_...",
                                               "svc chat --session chs_... -m 'And in French?'",
                                               "svc chat -m 'Hello' -o json | jq -r 'select(.event == \"delta\")'"))
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
            text = click.prompt(click.style("you", bold=not os.environ.get("NO_COLOR")), prompt_suffix="> ",
                                err=True)
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


@click.group(cls=SvcGroup)
def sessions() -> None:
    """Chat sessions: list, show (with messages), messages, delete. `svc chat` talks in one."""


_list_command(sessions, "list", [("ID", "id"), ("TITLE", "title"), ("PROJECT", "projectId"),
                                 ("CREATED", "created_at")],
              lambda svc, **page: svc.chat.list_sessions(**page), "Chat sessions, newest first.",
              example=("svc sessions list", "svc sessions list --json id,title"))


@sessions.command("show", epilog=examples("svc sessions show chs_...", "svc sessions show chs_... --json messages"))
@click.argument("session_id")
@pass_state
def sessions_show(state: State, session_id: str) -> None:
    """A session with its newest 100 messages."""
    with state.client() as svc:
        session = svc.chat.get_session(session_id)

    def text(s: Any) -> None:
        state.out.print(f"[bold]{s.title or s.id}[/bold] [dim]({s.id})[/dim]")
        for message in s.messages or []:
            state.out.print(f"[bold]{message.role}[/bold]> ", end="")
            state.out.print(message.content or "", markup=False)
    state.emit(session, text)


_list_command(sessions, "messages", [("ID", "id"), ("ROLE", "role"), ("STATUS", "status"), ("CONTENT", "content")],
              lambda svc, session_id, **page: svc.chat.list_messages(session_id, **page),
              "A session's messages, oldest first.", argument="session_id",
              example=("svc sessions messages chs_...", "svc sessions messages chs_... --all --json role,content"))


_call_command(sessions, "delete", click.argument("session_id"), lambda svc, id: svc.chat.delete_session(id),
              lambda d: f"Deleted chat session {d.id}.", "Delete a chat session and its messages.",
              example=("svc sessions delete chs_... --yes",), confirm="Delete chat session {session_id}")
