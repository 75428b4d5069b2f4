"""Which command serves each operation of the API (by the OpenAPI document's operationId), and
why the few without one have none. tests/client/test_cli_coverage.py walks the document
(functions/meta/openapi.json) and fails on an operation in neither table, or a command that
does not exist; a new route needs a command here, or a reason."""

from __future__ import annotations

COMMANDS = {
    "me": "whoami",
    "cli_start": "login", "cli_status": "login", "cli_token": "login",
    "list_projects": "projects list", "create_project": "projects create", "get_project": "projects show",
    "update_project": "projects update", "delete_project": "projects delete",
    "list_agents": "agents list", "create_agent": "agents create", "get_agent": "agents show",
    "update_agent": "agents update", "delete_agent": "agents delete", "execute_agent": "agents run",
    "list_runs": "agents runs list", "get_run": "agents runs show", "approve_run": "agents runs approve",
    "reject_run": "agents runs reject", "cancel_run": "agents runs cancel",
    "list_chat_sessions": "sessions list", "create_chat_session": "chat", "get_chat_session": "sessions show",
    "delete_chat_session": "sessions delete", "send_chat_message": "chat", "stream_chat_session": "chat",
    "list_chat_messages": "sessions messages",
    "list_keys": "keys list", "create_key": "keys create", "get_key": "keys show", "revoke_key": "keys revoke",
    "rotate_key": "keys rotate",
    "list_secrets": "secrets list", "create_secret": "secrets create", "get_secret": "secrets show",
    "update_secret": "secrets set", "delete_secret": "secrets delete",
    "list_webhooks": "webhooks list", "create_webhook": "webhooks create", "get_webhook": "webhooks show",
    "update_webhook": "webhooks update", "delete_webhook": "webhooks delete",
    "rotate_webhook_secret": "webhooks rotate", "test_webhook": "webhooks test",
    "list_webhook_deliveries": "webhooks deliveries",
    "get_summary": "billing summary", "get_usage_series": "billing usage", "list_ledger": "billing ledger",
    "list_invoices": "billing invoices",
    "get_invoice": "billing invoice", "purchase_credits": "billing buy", "redeem_gift_card": "billing redeem",
    "create_subscription": "billing subscribe", "create_portal_session": "billing portal",
    "list_tenants": "tenants list", "get_tenant": "tenants show", "update_settings": "tenants set",
    "list_regions": "regions list", "get_preferences": "regions preferences show",
    "update_preferences": "regions preferences set", "get_storage": "regions storage show",
    "put_storage": "regions storage set", "validate_storage": "regions storage validate",
    "check_feature": "regions feature", "routing_info": "regions routing",
    "list_connections": "oauth list", "delete_connection": "oauth delete",
    "list_events": "events list", "get_event": "events show", "stream_events": "listen",
    "redeliver_webhook_event": "webhooks redeliver", "replay_webhook_events": "webhooks replay",
    "get_webhook_replay": "webhooks replay-status",
    "list_members": "members list", "change_member_role": "members role", "remove_member": "members remove",
    "create_invitation": "invitations create", "list_invitations": "invitations list",
    "revoke_invitation": "invitations revoke", "resend_invitation": "invitations resend",
    "accept_invitation": "invitations accept",
    "list_audit_log": "audit list", "export_audit_log": "audit export",
    "health": "status",
    "openapi_document": "api",   # `svc api GET /openapi.json`: the document is for programs, not a table
}

_USER_SESSION = ("a signed-in user's own action: the service refuses API keys here (403), and every credential "
                 "the CLI holds is an API key (its login's svc_cli_ key included); the web app does it")
_BROWSER = "the browser's side of `svc login` (the approval page and what it calls), not the terminal's"

NOT_COMMANDS = {
    "register": "signing up is done in the web app; the CLI logs in to an existing account (`svc login`)",
    "login": "password sign-in returns a browser session's tokens; the CLI logs in with the device login",
    "refresh": "renews a password sign-in's session, which the CLI never holds",
    "exchange": "trades an identity provider's token for a browser session's; the CLI logs in with the device login",
    "logout": "ends a password sign-in's session; `svc logout` revokes the CLI's key instead (keys revoke)",
    "cli_approve_page": _BROWSER,
    "cli_info": _BROWSER,
    "cli_complete": _BROWSER,
    "cli_deny": _BROWSER,
    "issue_stream_token": "for EventSource in browsers, which cannot send headers; `svc chat` streams with its key",
    "create_tenant": _USER_SESSION,
    "leave_tenant": _USER_SESSION,
    "transfer_ownership": _USER_SESSION,
    "lookup_invitation": "what the accept page shows before the invitee signs in; `svc invitations accept` accepts",
    "invitation_accept_page": "an HTML page for browsers (the link in the invitation e-mail)",
    "forgot_password": "a forgotten password is a web account's; the CLI signs in with the device login, which "
                       "needs no password in the terminal",
    "reset_password": "called by the page the reset e-mail's link opens (the dashboard's or the API's own)",
    "password_reset_page": "an HTML page for browsers (the link in the password reset e-mail)",
    "change_password": _USER_SESSION,
    "list_sessions": _USER_SESSION,
    "end_session": _USER_SESSION,
    "end_other_sessions": _USER_SESSION,
    "update_me": _USER_SESSION,
    "oauth_start": _USER_SESSION + " (and the provider sends the browser back to the web app's page)",
    "oauth_start_post": _USER_SESSION + " (and the provider sends the browser back to the web app's page)",
    "oauth_authorize": _USER_SESSION + " (called by the web app's redirect page with the provider's code)",
    "start_migration": "moving a tenant to another cell is rare and watched by an operator: "
                       "`svc api POST /api/v1/regions/migrations/TENANT_ID --data '{\"toRegion\": ...}'`",
    "get_migration": "the progress of a move: `svc api GET /api/v1/regions/migrations/TENANT_ID`",
    "stripe_webhook": "Stripe's calls to the service, signed with Stripe's secret; no client calls it",
    "jwks": "public keys for programs that verify the service's tokens; `svc api GET /.well-known/jwks.json`",
    "reference_page": "an HTML page for browsers (the API reference)",
    "reference_script": "the script of the API reference page, for browsers",
}
