"""Members, invitations and the audit log through the client library and the CLI, on the local
stack: an invitation made, its link read from the local mailbox, looked up and accepted (the
accepting client is signed in), the member's role changed and the member removed, another
invitation resent and revoked, each action in the audit log, and the export refused below its plan."""

from __future__ import annotations

import secrets

import pytest

from svc_client import Client, Forbidden
from tests.support import mailbox

PASSWORD = "a long enough client password"


def address(name: str) -> str:
    return f"{name}-{secrets.token_hex(4)}@example.com"


def test_the_library_invites_accepts_changes_removes_and_reads_the_audit_log(account):
    email = address("ivy")
    with Client(account["baseUrl"], api_key=account["key"]) as svc:
        invitation = svc.invitations.create(email, "member")
        assert (invitation.email, invitation.role, invitation.status) == (email, "member", "pending")
        assert invitation.id in [i.id for i in svc.invitations.iter()]
        token = mailbox.token_of(mailbox.latest_link(to=email))
        with Client(account["baseUrl"]) as invitee:
            looked_up = invitee.invitations.lookup(token)
            assert (looked_up.role, looked_up.account_exists) == ("member", False)
            grant = invitee.invitations.accept(token, PASSWORD, name="Ivy")
            assert grant.tenant is not None and grant.tenant.id == account["tenantId"]
            assert invitee.auth.me().user.email == email          # the accepting client is signed in
        user_id = grant.user.id
        assert {m.user_id: m.role for m in svc.members.iter()}[user_id] == "member"
        assert svc.members.set_role(user_id, "admin").role == "admin"
        removed = svc.members.remove(user_id)
        assert removed.removed and removed.user_id == user_id
        assert user_id not in {m.user_id for m in svc.members.iter()}

        other = svc.invitations.create(address("otto"), "member")
        assert svc.invitations.resend(other.id).expires_at >= other.expires_at
        assert svc.invitations.revoke(other.id).status == "revoked"

        entries = list(svc.audit.iter())
        done = {(e.action, e.target.id) for e in entries}
        assert {("invitation.created", invitation.id), ("member.role_changed", user_id), ("member.removed", user_id),
                ("invitation.resent", other.id), ("invitation.revoked", other.id)} <= done
        assert [e.action for e in svc.audit.list(action="member.removed").items] == ["member.removed"]
        with pytest.raises(Forbidden) as refused:
            svc.audit.export()
        assert refused.value.details["feature"] == "audit_log_export"


def test_the_cli_covers_members_invitations_and_the_audit_log(run, account):
    env = {"SVC_API_KEY": account["key"]}
    email = address("cli")
    made = run.data("invitations", "create", email, "--role", "member", env=env)
    assert made["status"] == "pending"
    assert made["id"] in [i["id"] for i in run.data("invitations", "list", env=env)["items"]]
    token = mailbox.token_of(mailbox.latest_link(to=email))
    # the invitee has no account and no login here: the token and the new password are the credential
    joined = run.data("invitations", "accept", token, "--name", "Cli User", "--password", "-",
                      input=PASSWORD + "\n")
    assert joined["tenant"]["id"] == account["tenantId"] and "accessToken" not in str(joined)
    user_id = joined["user"]["id"]
    assert {m["userId"]: m["role"] for m in run.data("members", "list", env=env)["items"]}[user_id] == "member"
    assert run.data("members", "role", user_id, "admin", env=env)["role"] == "admin"
    assert run("members", "remove", user_id, env=env, ok=False).exit_code != 0      # destructive: --yes
    assert run.data("members", "remove", user_id, "--yes", env=env)["removed"] is True
    audit = run.data("audit", "list", "--action", "member.removed", env=env)["items"]
    assert [(e["action"], e["target"]["id"]) for e in audit] == [("member.removed", user_id)]
    refused = run("audit", "export", env=env, ok=False)
    assert refused.exit_code != 0 and "enterprise plan" in refused.stderr
