"""Secrets (their values go in, never come out) and OAuth provider connections."""

from __future__ import annotations

import sys

import click

from svc_client.commands.base import (
    State,
    SvcGroup,
    _call_command,
    _list_command,
    examples,
    pass_state,
)

SECRET_FIELDS = ["id", "name", "description", "version", "created_at", "updated_at"]


@click.group(cls=SvcGroup)
def secrets() -> None:
    """Secrets: list, create, show, set, delete (values are never shown)."""


def _value(value: str | None, required: bool) -> str | None:
    """--value -: standard input (out of the shell's history); left out on a terminal: asked, hidden."""
    if value == "-":
        return sys.stdin.read().rstrip("\n")
    if value is None and required:
        if not sys.stdin.isatty():
            raise click.UsageError("Give the value: --value - reads it from standard input.")
        return click.prompt("Value", hide_input=True, err=True)
    return value


@secrets.command("create", epilog=examples("printf %s \"$TOKEN\" | svc secrets create GITHUB_TOKEN --value -",
                                           "svc secrets create DB_PASSWORD          # asks for the value"))
@click.argument("name")
@click.option("--value", help="The value; - reads it from standard input (else asked for on a terminal).")
@click.option("--description")
@pass_state
def secrets_create(state: State, name: str, value: str | None, description: str | None) -> None:
    """Store a secret; its value is sealed and never answered."""
    with state.client() as svc:
        secret = svc.secrets.create(name, _value(value, True) or "", description)
    state.emit(secret, lambda s: state.out.print(f"Created secret {s.id} ({s.name}, version {s.version})."))


@secrets.command("set", epilog=examples("svc secrets set sec_... --value -  < token.txt",
                                        "svc secrets set sec_... --description 'CI token'"))
@click.argument("secret_id")
@click.option("--value", help="A new value (a new version); - reads it from standard input.")
@click.option("--description")
@pass_state
def secrets_set(state: State, secret_id: str, value: str | None, description: str | None) -> None:
    """Set a new value (a new version) or change the description."""
    if value is None and description is None:
        raise click.UsageError("Give --value or --description.")
    with state.client() as svc:
        secret = svc.secrets.update(secret_id, value=_value(value, False), description=description)
    state.emit(secret, lambda s: state.fields(s, SECRET_FIELDS))


_list_command(secrets, "list", [("ID", "id"), ("NAME", "name"), ("VERSION", "version"), ("UPDATED", "updated_at")],
              lambda svc, **page: svc.secrets.list(**page), "Secrets, newest first (metadata only).",
              example=("svc secrets list",))
_call_command(secrets, "show", click.argument("secret_id"), lambda svc, id: svc.secrets.get(id), SECRET_FIELDS,
              "One secret's metadata.", example=("svc secrets show sec_...",))
_call_command(secrets, "delete", click.argument("secret_id"), lambda svc, id: svc.secrets.delete(id),
              lambda d: f"Deleted secret {d.id}.", "Delete a secret and its value.",
              example=("svc secrets delete sec_... --yes",), confirm="Delete secret {secret_id} and its value")


@click.group(cls=SvcGroup)
def oauth() -> None:
    """OAuth provider connections: list, delete (connecting is done in the web app)."""


_list_command(oauth, "list", [("ID", "id"), ("PROVIDER", "provider"), ("USER", "userId"), ("SCOPES", "scopes"),
                              ("CREATED", "created_at")],
              lambda svc, **page: svc.oauth.connections(**page), "The tenant's provider connections (never tokens).",
              example=("svc oauth list",))
_call_command(oauth, "delete", click.argument("connection_id"), lambda svc, id: svc.oauth.delete_connection(id),
              lambda d: f"Deleted connection {d.id} and its tokens.", "Delete a connection and its stored tokens.",
              example=("svc oauth delete ocn_... --yes",), confirm="Delete connection {connection_id} and its tokens")
