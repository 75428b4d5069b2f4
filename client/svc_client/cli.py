"""`svc`, the command-line client.

    svc login                     # device login in the browser; the key is kept in the keyring
    svc projects create Apollo --language python
    svc chat --project proj_...   # an interactive chat, answers streamed
    svc --output json projects list

Global options: --base-url, --profile (several environments), --output text|json. A credential
comes from SVC_API_KEY when set, else from the profile's stored login. The commands are in
svc_client.commands, one module per area; this module is the root they hang from.
"""

from __future__ import annotations

import click

from svc_client._core import VERSION
from svc_client.commands import (
    agents,
    billing,
    chat,
    events,
    identity,
    keys,
    meta,
    organization,
    projects,
    secrets,
    tenants,
    webhooks,
)
from svc_client.commands.base import (  # noqa: F401 - the names other modules import from here
    EXIT_CODES,
    HINTS,
    State,
    SvcCommand,
    SvcGroup,
    _call_command,
    _cell,
    _fail,
    _list_command,
    _paging,
    _plain,
    examples,
    pass_state,
    yes_option,
)


@click.group(cls=SvcGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=examples(
    "svc login", "svc projects list", "svc agents runs approve agt_... run_...", "svc api GET /routing-info",
    "svc projects list -o json | jq -r '.items[].id'"))
@click.option("--base-url", help="The service's root URL (else SVC_BASE_URL, the profile's, or the local stack).")
@click.option("--profile", "-p", help="Which stored login and settings to use (else SVC_PROFILE or the default).")
@click.option("--output", "-o", type=click.Choice(["text", "json"]), default="text", show_default=True,
              envvar="SVC_OUTPUT", help="json prints the API's data for scripts.")
@click.version_option(VERSION, prog_name="svc")
@click.pass_context
def cli(ctx: click.Context, base_url: str | None, profile: str | None, output: str) -> None:
    """The svc service from the command line. `svc COMMAND -h` says more about each command.

    On a terminal lists are tables; piped, one tab-separated line per item (no header). -o json
    prints the API's data, --json FIELDS only those fields. Destructive and paying commands ask
    first (--yes, needed when not on a terminal). NO_COLOR turns colours off."""
    ctx.obj = State(base_url, profile, output)


for _command in (identity.login, identity.logout, identity.whoami, identity.profiles, projects.projects,
                 agents.agents, chat.chat, chat.sessions, keys.keys, secrets.secrets, secrets.oauth,
                 webhooks.webhooks, events.events, billing.billing, tenants.tenants, tenants.regions,
                 organization.members, organization.invitations, organization.audit, meta.api, meta.status,
                 meta.completion):
    cli.add_command(_command)


from svc_client.listen import listen  # noqa: E402 - the command's own module, registered here

cli.add_command(listen)


def main() -> None:
    cli(prog_name="svc")


if __name__ == "__main__":
    main()
