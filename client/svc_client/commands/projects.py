"""Projects."""

from __future__ import annotations

import click

from svc_client.commands.base import (
    State,
    SvcGroup,
    _call_command,
    _list_command,
    examples,
    pass_state,
)

PROJECT_COLUMNS = [("ID", "id"), ("NAME", "name"), ("LANGUAGE", "language"), ("CREATED", "created_at")]
PROJECT_FIELDS = ["id", "name", "description", "language", "created_at", "updated_at"]


@click.group(cls=SvcGroup)
def projects() -> None:
    """Projects: list, create, show, update, delete."""


_list_command(projects, "list", PROJECT_COLUMNS, lambda svc, **page: svc.projects.list(**page),
              "Projects, newest first.",
              example=("svc projects list", "svc projects list --all | cut -f1",
                       "svc projects list --json id,name"))


@projects.command("create", epilog=examples("svc projects create Apollo --language python"))
@click.argument("name")
@click.option("--description")
@click.option("--language")
@pass_state
def projects_create(state: State, name: str, description: str | None, language: str | None) -> None:
    """Create a project."""
    with state.client() as svc:
        project = svc.projects.create(name, description=description, language=language)
    state.emit(project, lambda p: state.out.print(f"Created project {p.id} ({p.name})."))


@projects.command("update", epilog=examples("svc projects update proj_... --name Artemis --language go"))
@click.argument("project_id")
@click.option("--name")
@click.option("--description")
@click.option("--language")
@pass_state
def projects_update(state: State, project_id: str, name: str | None, description: str | None,
                    language: str | None) -> None:
    """Change a project's name, description or language (only those given)."""
    if name is None and description is None and language is None:
        raise click.UsageError("Give at least one of --name, --description, --language.")
    with state.client() as svc:
        project = svc.projects.update(project_id, name=name, description=description, language=language)
    state.emit(project, lambda p: state.fields(p, PROJECT_FIELDS))


_call_command(projects, "show", click.argument("project_id"), lambda svc, id: svc.projects.get(id), PROJECT_FIELDS,
              "One project.", example=("svc projects show proj_...",))
_call_command(projects, "delete", click.argument("project_id"), lambda svc, id: svc.projects.delete(id),
              lambda d: f"Deleted project {d.id}.", "Delete a project and its files.",
              example=("svc projects delete proj_... --yes",), confirm="Delete project {project_id}")
