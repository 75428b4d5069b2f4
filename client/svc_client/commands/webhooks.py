"""Webhooks."""

from __future__ import annotations

import click

from svc_client.commands.base import (
    State,
    SvcGroup,
    _call_command,
    _list_command,
    examples,
    pass_state,
    yes_option,
)
from svc_client.webhook_events import example_events

WEBHOOK_FIELDS = ["id", "url", "events", "enabled", "description", "disabled_reason", "created_at", "updated_at"]


@click.group(cls=SvcGroup)
def webhooks() -> None:
    """Webhooks: create, list, show, update, delete, rotate, test, deliveries, redeliver, replay."""


@webhooks.command("create", epilog=examples(f"svc webhooks create https://example.com/hooks --event {example_events(1)[0]}",
                                            "svc webhooks create https://example.com/hooks --event '*'"))
@click.argument("url")
@click.option("--event", "events", multiple=True, required=True, help="An event name, or * (repeat).")
@click.option("--secret", envvar="SVC_WEBHOOK_SECRET",
              help="whsec_... or a plain 32-256 character secret; default: the service makes one, printed once.")
@click.option("--description")
@pass_state
def webhooks_create(state: State, url: str, events: tuple[str, ...], secret: str | None,
                    description: str | None) -> None:
    """Register a webhook; a secret the service makes is printed this once."""
    made_secret = secret is None
    with state.client() as svc:
        webhook = svc.webhooks.create(url, list(events), secret, description)
    secret = webhook.secret if made_secret else secret
    value = {**{k: v for k, v in webhook.raw().items() if k != "secret"}, **({"secret": secret} if made_secret else {})}

    state.emit(value, lambda _: state.reveal(f"Created webhook {webhook.id} -> {webhook.url} "
                                             f"({', '.join(webhook.events)}).", "Its signing secret, shown this once:",
                                             secret if made_secret else None))


_list_command(webhooks, "list", [("ID", "id"), ("URL", "url"), ("EVENTS", "events"), ("ENABLED", "enabled")],
              lambda svc, **page: svc.webhooks.list(**page), "Webhooks, newest first (never their secrets).",
              example=("svc webhooks list",))
_list_command(webhooks, "deliveries", [("EVENT", "eventId"), ("TYPE", "eventType"), ("ATTEMPT", "attempt"),
                                       ("OUTCOME", "outcome"), ("STATUS", "statusCode"), ("AT", "attempted_at")],
              lambda svc, webhook_id, **page: svc.webhooks.deliveries(webhook_id, **page),
              "A webhook's delivery attempts, newest first (kept 30 days).", argument="webhook_id",
              example=("svc webhooks deliveries wh_... --limit 20",))
_call_command(webhooks, "show", click.argument("webhook_id"), lambda svc, id: svc.webhooks.get(id), WEBHOOK_FIELDS,
              "One webhook.", example=("svc webhooks show wh_...",))
_call_command(webhooks, "test", click.argument("webhook_id"), lambda svc, id: svc.webhooks.test(id),
              lambda e: f"Queued test event {e.id} for webhook {e.data['webhookId']}.",
              "Send the webhook a webhook.test event (see its deliveries).",
              example=("svc webhooks test wh_... && svc webhooks deliveries wh_...",))
_call_command(webhooks, "delete", click.argument("webhook_id"), lambda svc, id: svc.webhooks.delete(id),
              lambda d: f"Deleted webhook {d.id}.", "Delete a webhook: nothing more is delivered to it.",
              example=("svc webhooks delete wh_... --yes",), confirm="Delete webhook {webhook_id}")


@webhooks.command("update", epilog=examples("svc webhooks update wh_... --disable",
                                            "svc webhooks update wh_... "
                                            + " ".join(f"--event {name}" for name in example_events())))
@click.argument("webhook_id")
@click.option("--url")
@click.option("--event", "events", multiple=True, help="The new list of events (repeat).")
@click.option("--enable/--disable", "enabled", default=None, help="Turn deliveries on or off.")
@click.option("--description")
@pass_state
def webhooks_update(state: State, webhook_id: str, url: str | None, events: tuple[str, ...], enabled: bool | None,
                    description: str | None) -> None:
    """Change a webhook's URL, events or description, or enable or disable it."""
    if url is None and not events and enabled is None and description is None:
        raise click.UsageError("Give at least one of --url, --event, --enable/--disable, --description.")
    with state.client() as svc:
        webhook = svc.webhooks.update(webhook_id, url=url, events=list(events) or None, enabled=enabled,
                                      description=description)
    state.emit(webhook, lambda w: state.fields(w, WEBHOOK_FIELDS))


@webhooks.command("rotate", epilog=examples("svc webhooks rotate wh_... --yes",
                                            "svc webhooks rotate wh_... --overlap-seconds 0 --yes   # a leaked secret"))
@click.argument("webhook_id")
@click.option("--secret", envvar="SVC_WEBHOOK_SECRET", help="The new secret (default: the service makes one).")
@click.option("--overlap-seconds", type=click.IntRange(0, 604800),
              help="How long the previous secrets keep signing (default 86400; 0 ends them now).")
@yes_option
@pass_state
def webhooks_rotate(state: State, webhook_id: str, secret: str | None, overlap_seconds: int | None,
                    yes: bool) -> None:
    """Sign with a new secret (printed this once when the service makes it)."""
    state.confirm(yes, f"Rotate the signing secret of webhook {webhook_id}")
    with state.client() as svc:
        rotated = svc.webhooks.rotate_secret(webhook_id, secret=secret, overlap_seconds=overlap_seconds)

    state.emit(rotated, lambda w: state.reveal(f"Rotated the secret of webhook {w.id}; the previous ones sign until "
                                               f"{w.previous_secrets_expire_at or 'now'}.",
                                               "The new signing secret, shown this once:", w.secret))


REPLAY_FIELDS = ["id", "webhook_id", "status", "since", "until", "only_failed", "matched", "queued", "skipped",
                 "delivered", "failed", "created_at", "completed_at"]

_call_command(webhooks, "redeliver", [click.argument("webhook_id"), click.argument("event_id")],
              lambda svc, id, event_id: svc.webhooks.redeliver(id, event_id),
              lambda r: f"Queued {r.event_type} {r.event_id} for webhook {r.webhook_id} again (redelivery {r.id}).",
              "Send one event again: a new attempt, same webhook-id, signed with the current secret.",
              example=("svc webhooks redeliver wh_... evt_...",))


@webhooks.command("replay", epilog=examples("svc webhooks replay wh_... --since 2026-11-24T09:00:00Z",
                                            "svc webhooks replay wh_... --since 2026-11-24T09:00:00Z --only-failed"))
@click.argument("webhook_id")
@click.option("--since", required=True, help="From this instant (ISO 8601 with an offset).")
@click.option("--until", help="Up to this instant (default: now).")
@click.option("--only-failed", is_flag=True, default=None, help="Only events never delivered to this webhook.")
@pass_state
def webhooks_replay(state: State, webhook_id: str, since: str, until: str | None, only_failed: bool | None) -> None:
    """Queue again every event since a time that the webhook wants (each event once per webhook);
    follow it with `svc webhooks replay-status`."""
    with state.client() as svc:
        replay = svc.webhooks.replay(webhook_id, since, until=until, only_failed=only_failed)
    state.emit(replay, lambda r: state.fields(r, REPLAY_FIELDS))


_call_command(webhooks, "replay-status", [click.argument("webhook_id"), click.argument("replay_id")],
              lambda svc, id, replay_id: svc.webhooks.get_replay(id, replay_id), REPLAY_FIELDS,
              "A replay's progress: matched, queued, skipped, delivered, failed.",
              example=("svc webhooks replay-status wh_... rpl_...",))
