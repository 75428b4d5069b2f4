"""API keys."""

from __future__ import annotations

from typing import Any

import click

from svc_client.commands.base import (
    State,
    SvcGroup,
    _call_command,
    _list_command,
    pass_state,
)

# ---- API keys ---------------------------------------------------------------------------------

@click.group(cls=SvcGroup)
def keys() -> None:
    """API keys: create, list, revoke."""


@keys.command("create")
@click.argument("name")
@click.option("--type", "key_type", type=click.Choice(["sdk", "cli", "ci", "int", "mkt"]), default="sdk",
              show_default=True)
@click.option("--environment", type=click.Choice(["Development", "Staging", "Production"]), default="Development",
              show_default=True)
@click.option("--scope", "scopes", multiple=True, help="Limit the key to this scope (repeat; default: yours).")
@click.option("--expires-in-days", type=click.IntRange(1, 730))
@pass_state
def keys_create(state: State, name: str, key_type: str, environment: str, scopes: tuple[str, ...],
                expires_in_days: int | None) -> None:
    with state.client() as svc:
        key = svc.api_keys.create(name, key_type, environment, scopes=list(scopes) or None,
                                  expires_in_days=expires_in_days)

    def text(key: Any) -> None:
        state.out.print(f"Created key {key.id} ({key.type}, {key.environment}). Its value, shown this once:")
        click.echo(key.key)
    state.emit(key, text)


_list_command(keys, "list", [("ID", "id"), ("NAME", "name"), ("TYPE", "type"), ("STATUS", "status"),
                            ("HINT", "hint"), ("LAST USED", "last_used_at")],
              lambda svc, **page: svc.api_keys.list(**page), "One page of API keys (never their values).")


_call_command(keys, "revoke", click.argument("key_id"), lambda svc, id: svc.api_keys.revoke(id),
              lambda k: f"Revoked key {k.id} ({k.status}).")
