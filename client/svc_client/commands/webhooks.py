"""Webhooks."""

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

# ---- webhooks ---------------------------------------------------------------------------------

@click.group(cls=SvcGroup)
def webhooks() -> None:
    """Webhooks: create, list, deliveries, test."""


@webhooks.command("create")
@click.argument("url")
@click.option("--event", "events", multiple=True, required=True, help="An event name, or * (repeat).")
@click.option("--secret", envvar="SVC_WEBHOOK_SECRET",
              help="whsec_... or a plain 32-256 character secret; default: the service makes one, printed once.")
@click.option("--description")
@pass_state
def webhooks_create(state: State, url: str, events: tuple[str, ...], secret: str | None,
                    description: str | None) -> None:
    made_secret = secret is None
    with state.client() as svc:
        webhook = svc.webhooks.create(url, list(events), secret, description)
    secret = webhook.secret if made_secret else secret
    value = {**{k: v for k, v in webhook.raw().items() if k != "secret"}, **({"secret": secret} if made_secret else {})}

    def text(_: Any) -> None:
        state.out.print(f"Created webhook {webhook.id} -> {webhook.url} ({', '.join(webhook.events)}).")
        if made_secret:
            state.out.print("Its signing secret, shown this once:")
            click.echo(secret)
    state.emit(value, text)


_list_command(webhooks, "list", [("ID", "id"), ("URL", "url"), ("EVENTS", "events"), ("ENABLED", "enabled")],
              lambda svc, **page: svc.webhooks.list(**page), "One page of webhooks.")
_list_command(webhooks, "deliveries", [("EVENT", "eventId"), ("TYPE", "eventType"), ("ATTEMPT", "attempt"),
                                       ("OUTCOME", "outcome"), ("STATUS", "statusCode"), ("AT", "attempted_at")],
              lambda svc, webhook_id, **page: svc.webhooks.deliveries(webhook_id, **page),
              "One page of a webhook's delivery attempts.", argument="webhook_id")


_call_command(webhooks, "test", click.argument("webhook_id"), lambda svc, id: svc.webhooks.test(id),
              lambda e: f"Queued test event {e.id} for webhook {e.data['webhookId']}.")
