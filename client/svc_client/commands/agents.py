"""Agents and their runs."""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from svc_client.client import Client
from svc_client.commands.base import (
    DefaultGroup,
    State,
    SvcGroup,
    _call_command,
    _cell,
    _collect,
    _list_command,
    _paging,
    examples,
    pass_state,
    yes_option,
)
from svc_client.models import Run

AGENT_FIELDS = ["id", "name", "systemPrompt", "config", "created_at", "updated_at"]
ACTIVE = ("queued", "running")          # a run still working: followed
ENDED_BADLY = ("failed", "cancelled")   # exit status 1

@click.group(cls=SvcGroup)
def agents() -> None:
    """Agents: list, create, show, update, delete, run, and their runs."""


@agents.command("list", epilog=examples("svc agents list", "svc agents list --all --json id,name"))
@_paging
@pass_state
def agents_list(state: State, limit: int | None, all_items: bool, cursor: str | None) -> None:
    """Agents, newest first."""
    with state.client() as svc:
        page = _collect(lambda **p: svc.agents.list(**p), limit, all_items, cursor)
    rows = [{**a.raw(), "autonomyLevel": a.config.autonomy_level} for a in page["items"]]
    state.table(rows, [("ID", "id"), ("NAME", "name"), ("AUTONOMY", "autonomyLevel"), ("CREATED", "created_at")],
                page)


@agents.command("create", epilog=examples(
    "svc agents create Notes --prompt 'You keep notes.' --autonomy supervised --tool write_file"))
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
    """Create an agent."""
    with state.client() as svc:
        agent = svc.agents.create(name, system_prompt, autonomy, model=model, step_limit=step_limit,
                                  tools=list(tools) or None)
    state.emit(agent, lambda a: state.out.print(f"Created agent {a.id} ({a.name}, {a.config.autonomy_level})."))


_call_command(agents, "show", click.argument("agent_id"), lambda svc, id: svc.agents.get(id), AGENT_FIELDS,
              "One agent.", example=("svc agents show agt_...",))
_call_command(agents, "delete", click.argument("agent_id"), lambda svc, id: svc.agents.delete(id),
              lambda d: f"Deleted agent {d.id}.", "Delete an agent.", example=("svc agents delete agt_... --yes",),
              confirm="Delete agent {agent_id}")


@agents.command("update", epilog=examples("svc agents update agt_... --autonomy autonomous --step-limit 12"))
@click.argument("agent_id")
@click.option("--name")
@click.option("--prompt", "system_prompt", help="The system prompt.")
@click.option("--autonomy", type=click.Choice(["suggest", "supervised", "autonomous"]))
@click.option("--model")
@click.option("--step-limit", type=click.IntRange(1, 25))
@click.option("--tool", "tools", multiple=True, help="The tools the agent may use (repeat; replaces the list).")
@pass_state
def agents_update(state: State, agent_id: str, name: str | None, system_prompt: str | None, autonomy: str | None,
                  model: str | None, step_limit: int | None, tools: tuple[str, ...]) -> None:
    """Change an agent (only what is given; the config is merged)."""
    config = {k: v for k, v in {"autonomyLevel": autonomy, "model": model, "stepLimit": step_limit,
                                "tools": list(tools) or None}.items() if v is not None}
    if name is None and system_prompt is None and not config:
        raise click.UsageError("Give at least one thing to change.")
    with state.client() as svc:
        agent = svc.agents.update(agent_id, name=name, system_prompt=system_prompt, config=config or None)
    state.emit(agent, lambda a: state.fields(a, AGENT_FIELDS))




@agents.command("run", epilog=examples("svc agents run agt_... 'Write the file notes.md' --project proj_...",
                                       "svc agents run agt_... 'Summarise it' --project proj_... --background"))
@click.argument("agent_id")
@click.argument("goal")
@click.option("--project", "project_id", required=True, help="The project the agent works in.")
@click.option("--background", is_flag=True, help="Run it in the service's background worker and follow it.")
@pass_state
def agents_run(state: State, agent_id: str, goal: str, project_id: str, background: bool) -> None:
    """Run an agent on a goal, showing progress, then its steps and output. A supervised run that
    stops for approval says so, with the commands that approve, reject or cancel it."""
    with state.client() as svc:
        with state.err.status(f"Running agent {agent_id}...", spinner="dots"):
            run = svc.agents.execute(agent_id, goal, project_id, background=background or None)
        run = _follow(state, svc, run)
    _show_run(state, run)


def _follow(state: State, svc: Client, run: Run) -> Run:
    """Polls a queued or running run until it ends or waits for approval; each new step is printed
    on standard error as it appears (a spinner on a terminal says where it is)."""
    shown = len(run.steps)
    with state.err.status(f"Run {run.id}: {run.status}...", spinner="dots") as status:
        while run.status in ACTIVE:
            time.sleep(1)
            run = svc.agents.get_run(run.agent_id, run.id)
            for step in run.steps[shown:]:
                if not state.json:
                    state.err.print(f"[dim]step:[/dim] {_step_line(step)}", markup=True)
            shown = len(run.steps)
            status.update(f"Run {run.id}: {run.status}, {shown} steps so far...")
    return run


def _step_line(step: dict[str, Any]) -> str:
    if step.get("type") == "tool":
        return f"tool {step.get('name')} {step.get('status')}: {_cell(step.get('result'))}"
    uses = ", ".join(u.get("name", "?") for u in step.get("toolUses") or [])
    return f"model {step.get('stopReason')}" + (f" (asks for {uses})" if uses else "")


def _show_run(state: State, run: Run, *, cancelling: bool = False) -> None:
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
        if run.status == "awaiting_approval":
            held = next((s for s in reversed(run.steps) if s.get("status") == "awaiting_approval"), {})
            state.out.print(f"Waiting for approval: {held.get('name')} {_cell(held.get('input'))}", markup=False)
            ids = f"{run.agent_id} {run.id}"
            state.out.print(f"  approve: svc agents runs approve {ids}\n  reject:  svc agents runs reject {ids} "
                            f"--reason ...\n  cancel:  svc agents runs cancel {ids}", markup=False)
    state.emit(run, text)
    if run.status in ENDED_BADLY and not (cancelling and run.status == "cancelled"):
        sys.exit(1)


# ---- runs -------------------------------------------------------------------------------------

@agents.group("runs", cls=DefaultGroup, default="list")
def runs() -> None:
    """An agent's runs: list (the default), show, watch, approve, reject, cancel."""


run_arguments = [click.argument("agent_id"), click.argument("run_id")]
follow_option = click.option("--follow/--no-follow", default=True, show_default=True,
                             help="Follow the run until it ends or waits again.")

_list_command(runs, "list", [("ID", "id"), ("STATUS", "status"), ("GOAL", "goal"), ("CREATED", "created_at")],
              lambda svc, agent_id, **page: svc.agents.runs(agent_id, **page), "An agent's runs, newest first.",
              argument="agent_id", example=("svc agents runs list agt_...", "svc agents runs agt_... --limit 5"))


def _run_command(name: str, summary: str, example: str, act: Any, *, reason: bool = False,
                 confirm: str | None = None, follows: bool = True) -> None:
    """show, watch, approve, reject and cancel: one call on AGENT_ID RUN_ID, then (--follow) the
    run followed to its end, and shown."""
    def command(state: State, agent_id: str, run_id: str, follow: bool = True, yes: bool = False,
                reason: str | None = None) -> None:
        if confirm:
            state.confirm(yes, confirm.format(run_id=run_id))
        with state.client() as svc:
            run = act(svc, agent_id, run_id, reason)
            if follows and follow:
                run = _follow(state, svc, run)
        _show_run(state, run, cancelling=name == "cancel")
    command.__doc__ = summary
    decorated = pass_state(command)
    if reason:
        decorated = click.option("--reason", help="Why (kept with the decision; a rejection tells the model).")(
            decorated)
    if confirm:
        decorated = yes_option(decorated)
    if follows and name != "watch":
        decorated = follow_option(decorated)
    for argument in reversed(run_arguments):
        decorated = argument(decorated)
    runs.command(name, epilog=examples(example))(decorated)


_run_command("show", "One run: its steps, usage and output.", "svc agents runs show agt_... run_...",
             lambda svc, agent, run, _: svc.agents.get_run(agent, run), follows=False)
_run_command("watch", "Follow a run to its end with its steps as they come, then show it.",
             "svc agents runs watch agt_... run_...", lambda svc, agent, run, _: svc.agents.get_run(agent, run))
_run_command("approve", "Approve the tool call the run waits on; it goes on (followed to its end).",
             "svc agents runs approve agt_... run_... --reason 'looks right'",
             lambda svc, agent, run, reason: svc.agents.approve_run(agent, run, reason), reason=True)
_run_command("reject", "Reject the tool call the run waits on (the model is told); it goes on.",
             "svc agents runs reject agt_... run_... --reason 'not that file'",
             lambda svc, agent, run, reason: svc.agents.reject_run(agent, run, reason), reason=True)
_run_command("cancel", "Cancel a run (a running one stops before its next step).",
             "svc agents runs cancel agt_... run_... --yes",
             lambda svc, agent, run, _: svc.agents.cancel_run(agent, run), confirm="Cancel run {run_id}")
