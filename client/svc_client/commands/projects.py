"""Projects."""

from __future__ import annotations

import click

from svc_client.commands.base import (
    State,
    SvcGroup,
    _call_command,
    _list_command,
    pass_state,
)

# ---- projects ---------------------------------------------------------------------------------

PROJECT_COLUMNS = [("ID", "id"), ("NAME", "name"), ("LANGUAGE", "language"), ("CREATED", "created_at")]


@click.group(cls=SvcGroup)
def projects() -> None:
    """Projects: list, create, show, delete."""


_list_command(projects, "list", PROJECT_COLUMNS, lambda svc, **page: svc.projects.list(**page),
              "One page of projects, newest first.")


@projects.command("create")
@click.argument("name")
@click.option("--description")
@click.option("--language")
@pass_state
def projects_create(state: State, name: str, description: str | None, language: str | None) -> None:
    with state.client() as svc:
        project = svc.projects.create(name, description=description, language=language)
    state.emit(project, lambda p: state.out.print(f"Created project {p.id} ({p.name})."))


_call_command(projects, "show", click.argument("project_id"), lambda svc, id: svc.projects.get(id),
              ["id", "name", "description", "language", "created_at", "updated_at"])
_call_command(projects, "delete", click.argument("project_id"), lambda svc, id: svc.projects.delete(id),
              lambda d: f"Deleted project {d.id}.")
