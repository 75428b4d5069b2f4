"""The event log: what happened in the tenant in the last 30 days, as the webhooks carry it."""

from __future__ import annotations

import click

from svc_client.commands.base import State, SvcGroup, _call_command, _collect, _paging, examples, pass_state
from svc_client.webhook_events import example_events

EVENT_COLUMNS = [("ID", "id"), ("TYPE", "type"), ("AT", "timestamp")]


@click.group(cls=SvcGroup)
def events() -> None:
    """The event log (30 days, newest first): list, show; `svc listen` follows it live."""


@events.command("list", epilog=examples(f"svc events list --type {example_events(1)[0]} --since 2026-11-24T00:00:00Z",
                                        "svc events list --object proj_... --all -o json"))
@click.option("--type", "event_type", help="Only events of this type (e.g. project.updated).")
@click.option("--object", "object_id", help="Only events about this object (a project's id, a run's id...).")
@click.option("--since", help="From this instant (ISO 8601 with an offset, e.g. 2026-11-24T00:00:00Z).")
@click.option("--until", help="Up to this instant (ISO 8601 with an offset).")
@_paging
@pass_state
def events_list(state: State, event_type: str | None, object_id: str | None, since: str | None, until: str | None,
                limit: int | None, all_items: bool, cursor: str | None) -> None:
    """The tenant's events, newest first, filtered by type, object or time."""
    with state.client() as svc:
        page = _collect(lambda **p: svc.events.list(type=event_type, object_id=object_id, since=since, until=until,
                                                    **p), limit, all_items, cursor)
    state.table(page["items"], EVENT_COLUMNS, page)


_call_command(events, "show", click.argument("event_id"), lambda svc, id: svc.events.get(id),
              ["id", "type", "timestamp", "tenant_id", "data"], "One event, with the payload the webhooks carry.",
              example=("svc events show evt_...", "svc events show evt_... -o json | jq .data"))
