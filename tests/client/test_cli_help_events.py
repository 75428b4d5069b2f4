"""The CLI's help names only events that exist: every event name in the help of every command
(`svc listen -h`, `svc webhooks update -h`, ...) is one the service sends, and the client's
catalogue, from which the examples are made, is the service's."""

from __future__ import annotations

import re

import click

from svc_client.cli import cli
from svc_client.webhook_events import EVENT_TYPES, example_events
from svc_core.contracts.events import EVENT_TYPES as SERVICE_EVENT_TYPES

# An event's name is a kind and what happened to it (project.created), or the test event.
EVENT_NAME = re.compile(r"\b[a-z]+\.(?:[a-z]+ed|test)\b")
TEST_EVENT = "webhook.test"   # sent by POST /webhooks/{id}/test only, never subscribed to


def _helps(command: click.Command, context: click.Context) -> dict[str, str]:
    found = {context.command_path: command.get_help(context)}
    if isinstance(command, click.Group):
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            found |= _helps(sub, click.Context(sub, info_name=name, parent=context))
    return found


def test_the_clients_catalogue_is_the_services():
    assert EVENT_TYPES == SERVICE_EVENT_TYPES
    assert set(example_events()) <= set(EVENT_TYPES) and len(example_events()) == 2


def test_every_event_named_in_the_cli_help_exists():
    helps = _helps(cli, click.Context(cli, info_name="svc"))
    named = {(path, name) for path, text in helps.items() for name in EVENT_NAME.findall(text)}
    commands = {path for path, _ in named}
    assert {"svc listen", "svc webhooks update", "svc webhooks create", "svc events list"} <= commands, commands
    unknown = sorted((path, name) for path, name in named if name not in EVENT_TYPES and name != TEST_EVENT)
    assert unknown == []
