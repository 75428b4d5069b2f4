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
    identity,
    keys,
    projects,
    tenants,
    webhooks,
)
from svc_client.commands.base import (  # noqa: F401 - the names other modules import from here
    EXIT_CODES,
    HINTS,
    State,
    SvcCommand,
    SvcGroup,
    _fail,
    _plain,
    pass_state,
)


@click.group(cls=SvcGroup)
@click.option("--base-url", help="The service's root URL (else SVC_BASE_URL, the profile's, or the local stack).")
@click.option("--profile", "-p", help="Which stored login and settings to use (else SVC_PROFILE or the default).")
@click.option("--output", "-o", type=click.Choice(["text", "json"]), default="text", show_default=True,
              envvar="SVC_OUTPUT", help="json prints the API's data for scripts.")
@click.version_option(VERSION, prog_name="svc")
@click.pass_context
def cli(ctx: click.Context, base_url: str | None, profile: str | None, output: str) -> None:
    """The svc service from the command line."""
    ctx.obj = State(base_url, profile, output)


for command in (identity.login, identity.logout, identity.whoami, identity.profiles, projects.projects,
                agents.agents, chat.chat, keys.keys, webhooks.webhooks, billing.billing, tenants.tenants,
                tenants.regions):
    cli.add_command(command)


def main() -> None:
    cli(prog_name="svc")


if __name__ == "__main__":
    main()
