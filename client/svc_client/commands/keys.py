"""API keys."""

from __future__ import annotations

from typing import Any

import click

from svc_client.commands.base import (
    State,
    SvcGroup,
    _call_command,
    _list_command,
    examples,
    pass_state,
)

KEY_FIELDS = ["id", "name", "type", "environment", "scopes", "status", "hint", "created_at", "last_used_at",
              "lastUsedIp", "expires_at", "revoked_at", "rotated_at"]


@click.group(cls=SvcGroup)
def keys() -> None:
    """API keys: create, list, show, rotate, revoke."""


@keys.command("create", epilog=examples("svc keys create deploy --type ci --scope projects:read",
                                        "svc keys create nightly --expires-in-days 30 --json key"))
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
    """Create an API key; its value is printed this once."""
    with state.client() as svc:
        key = svc.api_keys.create(name, key_type, environment, scopes=list(scopes) or None,
                                  expires_in_days=expires_in_days)
    state.emit(key, lambda k: state.reveal(f"Created key {k.id} ({k.type}, {k.environment}).", ONCE, k.key))


ONCE = "Its value, shown this once:"


_list_command(keys, "list", [("ID", "id"), ("NAME", "name"), ("TYPE", "type"), ("STATUS", "status"),
                            ("HINT", "hint"), ("LAST USED", "last_used_at")],
              lambda svc, **page: svc.api_keys.list(**page), "API keys, newest first (never their values).",
              example=("svc keys list", "svc keys list --all --json id,status"))
_call_command(keys, "show", click.argument("key_id"), lambda svc, id: svc.api_keys.get(id), KEY_FIELDS,
              "One API key (never its value).", example=("svc keys show key_...",))
_call_command(keys, "revoke", click.argument("key_id"), lambda svc, id: svc.api_keys.revoke(id),
              lambda k: f"Revoked key {k.id} ({k.status}).", "Revoke an API key: its next use is refused.",
              example=("svc keys revoke key_... --yes",), confirm="Revoke API key {key_id}")


@keys.command("rotate", epilog=examples("svc keys rotate key_... --overlap-seconds 3600 --yes"))
@click.argument("key_id")
@click.option("--overlap-seconds", type=click.IntRange(0),
              help="How long the earlier values keep working at most (0 ends them all now).")
@click.option("--yes", "-y", is_flag=True, help="Do it without asking (needed when not on a terminal).")
@pass_state
def keys_rotate(state: State, key_id: str, overlap_seconds: int | None, yes: bool) -> None:
    """Give a key a new value (printed this once); the earlier ones work for the overlap at most."""
    state.confirm(yes, f"Rotate API key {key_id} (its earlier values stop working after the overlap)")
    with state.client() as svc:
        key: Any = svc.api_keys.rotate(key_id, overlap_seconds=overlap_seconds)
    state.emit(key, lambda k: state.reveal(f"Rotated key {k.id}.", ONCE, k.key))
