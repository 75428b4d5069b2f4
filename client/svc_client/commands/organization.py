"""The people of a tenant: members and their roles, invitations, and the audit log."""

from __future__ import annotations

import sys

import click

from svc_client.commands.base import (
    State,
    SvcGroup,
    _call_command,
    _collect,
    _list_command,
    _paging,
    examples,
    pass_state,
)

ROLES = click.Choice(["owner", "admin", "member"])
MEMBER_FIELDS = ["userId", "email", "name", "role", "joined_at"]
INVITATION_FIELDS = ["id", "email", "role", "status", "invitedBy", "created_at", "expires_at"]


@click.group(cls=SvcGroup)
def members() -> None:
    """Members of the tenant: list, change a role, remove."""


_list_command(members, "list", [("USER", "userId"), ("EMAIL", "email"), ("NAME", "name"), ("ROLE", "role"),
                                ("JOINED", "joined_at")],
              lambda svc, **page: svc.members.list(**page), "The tenant's members and their roles.",
              example=("svc members list", "svc members list --all --json userId,role"))
_call_command(members, "role", [click.argument("user_id"), click.argument("role", type=ROLES)],
              lambda svc, user_id, role: svc.members.set_role(user_id, role), MEMBER_FIELDS,
              "Give a member another role (owners are made and unmade by a signed-in owner).",
              example=("svc members role usr_... admin",))
_call_command(members, "remove", click.argument("user_id"), lambda svc, id: svc.members.remove(id),
              lambda r: f"Removed {r.user_id}: {r.sessions_ended} sign-in(s) ended, "
                        f"{r.cli_keys_revoked} command-line key(s) and {r.api_keys_revoked} other API key(s) revoked.",
              "Remove a member: their sign-ins for this tenant end and every API key they hold there is revoked.",
              example=("svc members remove usr_... --yes",), confirm="Remove member {user_id} from the tenant")


@click.group(cls=SvcGroup)
def invitations() -> None:
    """Invitations by e-mail: invite, list, resend, revoke, accept."""


@invitations.command("create", epilog=examples("svc invitations create grace@example.com --role admin"))
@click.argument("email")
@click.option("--role", type=ROLES, default="member", show_default=True)
@pass_state
def invitations_create(state: State, email: str, role: str) -> None:
    """Invite an address; the link goes by e-mail (single use, for that address, 7 days)."""
    with state.client() as svc:
        invitation = svc.invitations.create(email, role)
    state.emit(invitation, lambda i: state.out.print(
        f"Invited {i.email} as {i.role} ({i.id}); the link works until {i.expires_at}.", markup=False))


_list_command(invitations, "list", [("ID", "id"), ("EMAIL", "email"), ("ROLE", "role"), ("STATUS", "status"),
                                    ("EXPIRES", "expires_at")],
              lambda svc, **page: svc.invitations.list(**page), "The tenant's invitations, newest first.",
              example=("svc invitations list",))
_call_command(invitations, "resend", click.argument("invitation_id"), lambda svc, id: svc.invitations.resend(id),
              lambda i: f"Sent {i.email} a new link ({i.id}); the earlier one no longer works.",
              "E-mail a new link (valid 7 days; the earlier link stops working).",
              example=("svc invitations resend ivt_...",))
_call_command(invitations, "revoke", click.argument("invitation_id"), lambda svc, id: svc.invitations.revoke(id),
              lambda i: f"Revoked invitation {i.id} ({i.email}).", "Revoke an invitation: its link stops working.",
              example=("svc invitations revoke ivt_... --yes",), confirm="Revoke invitation {invitation_id}")


@invitations.command("accept", epilog=examples("svc invitations accept 'ivt_....secret'",
                                               "svc invitations accept 'ivt_....secret' --name 'Grace Hopper'"))
@click.argument("token")
@click.option("--name", help="Your name, when the address has no account yet (one is made).")
@click.option("--password", help="- reads it from standard input; else asked for on a terminal.")
@pass_state
def invitations_accept(state: State, token: str, name: str | None, password: str | None) -> None:
    """Accept an invitation with its link's token (the part after #token=): your account's password
    signs you in to the tenant; an address with no account gets one (--name and a new password)."""
    if password == "-":
        password = sys.stdin.readline().rstrip("\n")
    elif password is None:
        if not sys.stdin.isatty():
            raise click.UsageError("Give the password: --password - reads it from standard input.")
        password = click.prompt("Password", hide_input=True, err=True)
    # The link's token and the password are the credential: no login or API key is needed (nor sent).
    with state.client(authenticated=False) as svc:
        grant = svc.invitations.accept(token, password, name)
    joined = {"user": grant.user, "tenant": grant.tenant}   # the session's tokens stay out of the output
    state.emit(joined, lambda j: state.out.print(
        f"Joined {j['tenant'].name if j['tenant'] else 'the tenant'} as "
        f"{j['tenant'].role if j['tenant'] else 'a member'}. `svc login` signs this terminal in.", markup=False))


@click.group(cls=SvcGroup)
def audit() -> None:
    """The audit log: who did what, from where (owners and admins)."""


def _filters(command):
    for option in reversed((
            click.option("--actor", help="A user (usr_...) or an API key (key_...)."),
            click.option("--action", help="One action, e.g. api_key.created or member.removed."),
            click.option("--target", help="The id of the object acted on."),
            click.option("--since", help="ISO 8601 with an offset, e.g. 2026-11-01T00:00:00Z."),
            click.option("--until", help="ISO 8601 with an offset."))):
        command = option(command)
    return command


@audit.command("list", epilog=examples("svc audit list --action member.removed",
                                       "svc audit list --actor usr_... --since 2026-11-01T00:00:00Z --all"))
@_filters
@_paging
@pass_state
def audit_list(state: State, limit: int | None, all_items: bool, cursor: str | None, **filters: str | None) -> None:
    """Entries newest first, filtered by actor, action, target and time."""
    with state.client() as svc:
        page = _collect(lambda **p: svc.audit.list(**filters, **p), limit, all_items, cursor)
    rows = [{"created_at": e.created_at, "action": e.action, "actor": f"{e.actor.type} {e.actor.id}",
             "target": f"{e.target.type} {e.target.id}", "sourceIp": e.source_ip} for e in page["items"]]
    state.table(rows, [("TIME", "created_at"), ("ACTION", "action"), ("ACTOR", "actor"), ("TARGET", "target"),
                       ("FROM", "sourceIp")], page)


@audit.command("export", epilog=examples("svc audit export --since 2026-11-01T00:00:00Z",
                                         "curl -s \"$(svc audit export --json url | jq -r .url)\" > audit.jsonl"))
@_filters
@pass_state
def audit_export(state: State, **filters: str | None) -> None:
    """Export the entries as JSON Lines behind a link that works 15 minutes (plans with audit_log_export)."""
    with state.client() as svc:
        export = svc.audit.export(**filters)
    state.emit(export, lambda e: state.reveal(f"Exported {e.entries} entries ({e.id}); the link works until "
                                              f"{e.expires_at}:", "", e.url))
