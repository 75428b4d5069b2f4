"""Agents and their runs."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from svc_client.commands.base import (
    State,
    SvcGroup,
    _call_command,
    _cell,
    _list_command,
    _paging,
    pass_state,
)

# ---- agents -----------------------------------------------------------------------------------

@click.group(cls=SvcGroup)
def agents() -> None:
    """Agents: list, create, show, run, runs."""


@agents.command("list")
@_paging
@pass_state
def agents_list(state: State, limit: int | None, cursor: str | None) -> None:
    with state.client() as svc:
        page = svc.agents.list(limit=limit, cursor=cursor)
    rows = [{**a.raw(), "autonomyLevel": a.config.autonomy_level} for a in page.items]
    state.table(rows, [("ID", "id"), ("NAME", "name"), ("AUTONOMY", "autonomyLevel"), ("CREATED", "created_at")],
                page)


@agents.command("create")
@click.argument("name")
@click.option("--prompt", "system_prompt", required=True, help="The system prompt.")
@click.option("--autonomy", type=click.Choice(["suggest", "supervised", "autonomous"]), default="suggest",
              show_default=True)
@click.option("--model")
@click.option("--step-limit", type=click.IntRange(1, 25))
@click.option("--tool", "tools", multiple=True, help="A tool the agent may use (repeat; default: all).")
@pass_state
def agents_create(state: State, name: str, system_prompt: str, autonomy: str, model: str | None,
                  step_limit: int | None, tools: tuple[str, ...]) -> None:
    with state.client() as svc:
        agent = svc.agents.create(name, system_prompt, autonomy, model=model, step_limit=step_limit,
                                  tools=list(tools) or None)
    state.emit(agent, lambda a: state.out.print(f"Created agent {a.id} ({a.name}, {a.config.autonomy_level})."))


_call_command(agents, "show", click.argument("agent_id"), lambda svc, id: svc.agents.get(id),
              ["id", "name", "systemPrompt", "config", "created_at"])


@agents.command("run")
@click.argument("agent_id")
@click.argument("goal")
@click.option("--project", "project_id", required=True, help="The project the agent works in.")
@click.option("--background", is_flag=True, help="Run it in the service's background worker and follow it.")
@pass_state
def agents_run(state: State, agent_id: str, goal: str, project_id: str, background: bool) -> None:
    """Run an agent on a goal, showing progress, then its steps and output."""
    with state.client() as svc:
        with state.err.status(f"Running agent {agent_id}...", spinner="dots") as status:
            run = svc.agents.execute(agent_id, goal, project_id, background=background or None)
            # A background run (asked for, or handed off at the request's time budget): follow it.
            while run.status in ("queued", "running"):
                status.update(f"Run {run.id}: {run.status}, {len(run.steps)} steps so far...")
                time.sleep(1)
                run = svc.agents.get_run(agent_id, run.id)

    def text(run: Any) -> None:
        for step in run.steps:
            if step.get("type") == "tool":
                state.out.print(f"[dim]tool[/dim] {step.get('name')} [dim]{step.get('status')}:[/dim] "
                                f"{_cell(step.get('result'))}", markup=True)
        colour = {"completed": "green", "failed": "red"}.get(run.status, "yellow")
        state.out.print(f"[{colour}]{run.status}[/{colour}] {run.id} [dim]({run.usage.input_tokens} in, "
                        f"{run.usage.output_tokens} out, {run.usage.micro_credits} micro-credits)[/dim]")
        if run.output:
            state.out.print(run.output, markup=False)
        if run.error:
            state.out.print(f"[red]{run.error.code}[/red]: {run.error.message}")
    state.emit(run, text)
    if run.status in ("failed", "cancelled"):
        sys.exit(1)


_list_command(agents, "runs", [("ID", "id"), ("STATUS", "status"), ("GOAL", "goal"), ("CREATED", "created_at")],
              lambda svc, agent_id, **page: svc.agents.runs(agent_id, **page), "One page of an agent's runs.",
              argument="agent_id")
