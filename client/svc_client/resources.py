"""One resource per API area. Each method is one HTTP call (or an iterator over pages / events).

The same classes serve both clients: with `Client` a method returns its result, with
`AsyncClient` an awaitable of it (and `iter...`/`chat.stream` are async iterators). The return
annotations name the result.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from svc_client._core import ACCOUNT, SIGN_IN, new_idempotency_key
from svc_client.models import (
    Agent,
    ApiKey,
    ApiKeyWithSecret,
    AuditEntry,
    AuditExport,
    BillingSummary,
    BillingUsageSeries,
    ChatMessage,
    ChatSent,
    ChatSession,
    CliToken,
    Deleted,
    DeliveryAttempt,
    DeviceLoginStarted,
    DeviceLoginStatus,
    Event,
    FeatureCheck,
    Invitation,
    InvitationLookup,
    Invoice,
    LedgerEntry,
    LoggedOut,
    Me,
    Member,
    MemberRemoved,
    OAuthConnection,
    OtherSessionsEnded,
    OwnershipTransferred,
    Page,
    PasswordChanged,
    PasswordReset,
    PasswordResetRequested,
    PortalSession,
    Project,
    Purchase,
    QueuedEvent,
    Redelivery,
    Redemption,
    RegionalPreferences,
    RegionList,
    Replay,
    RoutingInfo,
    Run,
    Secret,
    SignInSession,
    StorageConfig,
    StorageValidation,
    StreamToken,
    Subscription,
    Tenant,
    TokenGrant,
    User,
    Webhook,
    WebhookCreated,
    WebhookRotated,
)
from svc_client.streaming import ChatEvent

if TYPE_CHECKING:
    from svc_client.client import _Base


def _seg(value: str) -> str:
    """A path segment, escaped (an id is never allowed to change the path)."""
    return quote(str(value), safe="")


class Resource:
    def __init__(self, client: _Base) -> None:
        self._c: Any = client


class Auth(Resource):
    """Sign-in with e-mail and password, refresh, logout, identity-provider exchange, me; a forgotten
    password reset by e-mail; the signed-in user's password, sessions and name."""

    def register(self, email: str, password: str, name: str, region: str | None = None) -> dict[str, Any]:
        """region: where the account and its workspace live (a multi-cell deployment: a region with a
        cell; the client follows the service to that cell)."""
        return self._c._call("POST", "/auth/register", authenticated=False, cell=SIGN_IN,
                             json={"email": email, "password": password, "name": name, "region": region})

    def login(self, email: str, password: str, tenant_id: str | None = None) -> TokenGrant:
        """Signs in; the access token stays in this client's memory and is refreshed with the
        refresh token when it expires. 401 raises InvalidCredentials, 403 AccountDisabled."""
        return self._c._call("POST", "/auth/login", model=TokenGrant, authenticated=False, login=True,
                             cell=SIGN_IN, json={"email": email, "password": password, "tenantId": tenant_id},
                             then=self._c._signed_in)

    def refresh(self, refresh_token: str | None = None, tenant_id: str | None = None) -> TokenGrant:
        """Sent to the account's cell (a 421 there is followed, as any); the tenant's calls stay where they go."""
        return self._c._call("POST", "/auth/refresh", model=TokenGrant, authenticated=False, login=True,
                             cell=ACCOUNT, then=self._c._signed_in,
                             json={"refreshToken": refresh_token or self._c._refresh_token, "tenantId": tenant_id})

    def exchange(self, token: str) -> TokenGrant:
        """Exchanges an identity provider's token (e.g. Clerk's) for a service access token."""
        return self._c._call("POST", "/auth/exchange", model=TokenGrant, authenticated=False, login=True,
                             cell=ACCOUNT, json={"token": token}, then=self._c._signed_in)

    def logout(self) -> LoggedOut:
        """Ends the server session first (in the account's cell, which holds it), then forgets the
        tokens (the spec's order)."""
        return self._c._call("POST", "/auth/logout", model=LoggedOut, json={"refreshToken": self._c._refresh_token},
                             cell=ACCOUNT, then=self._c._signed_out)

    def me(self) -> Me:
        return self._c._call("GET", "/auth/me", model=Me)

    def update_me(self, *, name: str) -> Me:
        """The signed-in user's name (a user's token; an API key is Forbidden); answers as me()."""
        return self._c._call("PATCH", "/auth/me", model=Me, json={"name": name})

    # ---- a forgotten password, a signed-in user's password and sessions ----------------------------

    def forgot_password(self, email: str) -> PasswordResetRequested:
        """E-mails a one-time reset link (30 minutes) to the address's account, if it has one: the answer
        is the same either way. Needs no credential; sent to the account's cell."""
        return self._c._call("POST", "/auth/password/forgot", model=PasswordResetRequested, authenticated=False,
                             cell=ACCOUNT, json={"email": email})

    def reset_password(self, token: str, password: str) -> PasswordReset:
        """Sets the new password with the e-mailed link's token (its token= part), once; every session of
        the account ends. NotFound: the link names nothing or a newer one was sent; Conflict (details
        reason used or expired)."""
        return self._c._call("POST", "/auth/password/reset", model=PasswordReset, authenticated=False,
                             cell=ACCOUNT, json={"token": token, "password": password})

    def change_password(self, current_password: str, new_password: str) -> PasswordChanged:
        """A signed-in user's new password; every other session of the account ends, this one stays. A
        wrong current password is Forbidden (reason current_password_wrong) and counts as a failed sign-in."""
        return self._c._call("POST", "/auth/password", model=PasswordChanged,
                             json={"currentPassword": current_password, "newPassword": new_password})

    def sessions(self, *, limit: int | None = None, cursor: str | None = None) -> Page[SignInSession]:
        """The signed-in user's open sessions, newest first (a user's token)."""
        return self._c._call("GET", "/auth/sessions", model=Page[SignInSession],
                             params={"limit": limit, "cursor": cursor})

    def iter_sessions(self, *, limit: int | None = None) -> Iterator[SignInSession]:
        return self._c._paginate("/auth/sessions", SignInSession, {"limit": limit})

    def end_session(self, session_id: str) -> Deleted:
        """Ends one of the user's sessions (NotFound for another user's); ending this one signs out."""
        return self._c._call("DELETE", f"/auth/sessions/{_seg(session_id)}", model=Deleted)

    def end_other_sessions(self) -> OtherSessionsEnded:
        """Signs out everywhere else: every session of the user but this client's."""
        return self._c._call("DELETE", "/auth/sessions", model=OtherSessionsEnded)


class DeviceLogin(Resource):
    """The command-line device login (`svc login` drives it; see svc_client.device)."""

    def start(self, *, state: str, code_challenge: str, cli_version: str, platform: str) -> DeviceLoginStarted:
        return self._c._call("POST", "/cli/auth/start", model=DeviceLoginStarted, authenticated=False,
                             json={"state": state, "codeChallenge": code_challenge, "codeChallengeMethod": "S256",
                                   "cliVersion": cli_version, "platform": platform})

    def status(self, login_id: str) -> DeviceLoginStatus:
        return self._c._call("GET", "/cli/auth/status", model=DeviceLoginStatus, authenticated=False,
                             params={"loginId": login_id})

    def info(self, login_id: str) -> dict[str, Any]:
        return self._c._call("GET", "/cli/auth/info", authenticated=False, params={"loginId": login_id})

    def token(self, login_id: str, code_verifier: str) -> CliToken:
        return self._c._call("POST", "/cli/auth/token", model=CliToken, authenticated=False,
                             json={"loginId": login_id, "codeVerifier": code_verifier})


class _Crud(Resource):
    path = ""
    model: Any = None

    def list(self, *, limit: int | None = None, cursor: str | None = None) -> Page[Any]:
        return self._c._call("GET", self.path, model=Page[self.model], params={"limit": limit, "cursor": cursor})

    def iter(self, *, limit: int | None = None) -> Iterator[Any]:
        """Every item, page after page (`limit` is the page size)."""
        return self._c._paginate(self.path, self.model, {"limit": limit})

    def get(self, id: str) -> Any:
        return self._c._call("GET", f"{self.path}/{_seg(id)}", model=self.model)

    def delete(self, id: str) -> Deleted:
        return self._c._call("DELETE", f"{self.path}/{_seg(id)}", model=Deleted)

    def _create(self, body: dict[str, Any]) -> Any:
        return self._c._call("POST", self.path, model=self.model, json=body)

    def _update(self, id: str, body: dict[str, Any]) -> Any:
        return self._c._call("PATCH", f"{self.path}/{_seg(id)}", model=self.model, json=body)


class Projects(_Crud):
    path, model = "/projects", Project

    def create(self, name: str, description: str | None = None, language: str | None = None) -> Project:
        return self._create({"name": name, "description": description, "language": language})

    def update(self, id: str, *, name: str | None = None, description: Any = None, language: Any = None) -> Project:
        """Only the arguments given change; pass NULL to clear description or language."""
        return self._update(id, {"name": name, "description": description, "language": language})


class Agents(_Crud):
    path, model = "/agents", Agent

    def create(self, name: str, system_prompt: str, autonomy_level: str = "suggest", *, model: str | None = None,
               step_limit: int | None = None, tools: builtins.list[str] | None = None) -> Agent:
        config = {"autonomyLevel": autonomy_level, "model": model, "stepLimit": step_limit, "tools": tools}
        return self._create({"name": name, "systemPrompt": system_prompt,
                             "config": {k: v for k, v in config.items() if v is not None}})

    def update(self, id: str, *, name: str | None = None, system_prompt: str | None = None,
               config: dict[str, Any] | None = None) -> Agent:
        return self._update(id, {"name": name, "systemPrompt": system_prompt, "config": config})

    def execute(self, id: str, goal: str, project_id: str, *, background: bool | None = None) -> Run:
        """Runs the agent on a goal in a project. Synchronous: the run as it ended or stopped for
        approval (or `running` with `background` true when it outgrew the request's time budget);
        background=True: at once, `queued` (poll get_run, or listen for the events)."""
        return self._c._call("POST", f"/agents/{_seg(id)}/execute", model=Run,
                             json={"goal": goal, "projectId": project_id, "async": background})

    def approve_run(self, id: str, run_id: str, reason: str | None = None) -> Run:
        """Runs the tool call a supervised run waits on, and goes on."""
        return self._run_action(id, run_id, "approve", {"reason": reason})

    def reject_run(self, id: str, run_id: str, reason: str | None = None) -> Run:
        """Refuses the tool call a supervised run waits on (the model is told), and goes on."""
        return self._run_action(id, run_id, "reject", {"reason": reason})

    def cancel_run(self, id: str, run_id: str) -> Run:
        return self._run_action(id, run_id, "cancel", None)

    def _run_action(self, id: str, run_id: str, action: str, body: dict[str, Any] | None) -> Run:
        return self._c._call("POST", f"/agents/{_seg(id)}/runs/{_seg(run_id)}/{action}", model=Run, json=body)

    def runs(self, id: str, *, limit: int | None = None, cursor: str | None = None) -> Page[Run]:
        return self._c._call("GET", f"/agents/{_seg(id)}/runs", model=Page[Run],
                             params={"limit": limit, "cursor": cursor})

    def iter_runs(self, id: str, *, limit: int | None = None) -> Iterator[Run]:
        return self._c._paginate(f"/agents/{_seg(id)}/runs", Run, {"limit": limit})

    def get_run(self, id: str, run_id: str) -> Run:
        return self._c._call("GET", f"/agents/{_seg(id)}/runs/{_seg(run_id)}", model=Run)


class Chat(Resource):
    """Chat sessions, messages, and the streamed answer."""

    def create_session(self, *, title: str | None = None, project_id: str | None = None,
                       agent_id: str | None = None) -> ChatSession:
        return self._c._call("POST", "/chat/sessions", model=ChatSession,
                             json={"title": title, "projectId": project_id, "agentId": agent_id})

    def list_sessions(self, *, limit: int | None = None, cursor: str | None = None) -> Page[ChatSession]:
        return self._c._call("GET", "/chat/sessions", model=Page[ChatSession],
                             params={"limit": limit, "cursor": cursor})

    def iter_sessions(self, *, limit: int | None = None) -> Iterator[ChatSession]:
        return self._c._paginate("/chat/sessions", ChatSession, {"limit": limit})

    def get_session(self, session_id: str) -> ChatSession:
        """The session with its newest 100 messages (`messages`, oldest first)."""
        return self._c._call("GET", f"/chat/sessions/{_seg(session_id)}", model=ChatSession)

    def delete_session(self, session_id: str) -> Deleted:
        return self._c._call("DELETE", f"/chat/sessions/{_seg(session_id)}", model=Deleted)

    def list_messages(self, session_id: str, *, limit: int | None = None,
                      cursor: str | None = None) -> Page[ChatMessage]:
        """The session's messages, oldest first, a page at a time."""
        return self._c._call("GET", f"/chat/sessions/{_seg(session_id)}/messages", model=Page[ChatMessage],
                             params={"limit": limit, "cursor": cursor})

    def iter_messages(self, session_id: str, *, limit: int | None = None) -> Iterator[ChatMessage]:
        return self._c._paginate(f"/chat/sessions/{_seg(session_id)}/messages", ChatMessage, {"limit": limit})

    def send(self, session_id: str, content: str, project_id: str | None = None) -> ChatSent:
        """Sends a user message and starts the assistant's turn; read the answer with stream().
        One turn at a time: while one is in progress this is Conflict (409)."""
        return self._c._call("POST", f"/chat/sessions/{_seg(session_id)}/messages", model=ChatSent,
                             json={"content": content, "projectId": project_id})

    def stream(self, session_id: str, *, last_event_id: int | None = None,
               max_attempts: int = 5) -> Iterator[ChatEvent]:
        """The typed events of the session's answer (without last_event_id: from the start of the
        latest turn). A broken connection is resumed with Last-Event-ID, so no event is missed or
        repeated; the iterator ends after the turn's `done` (or at once when there is nothing to
        stream)."""
        return self._c._stream(f"/chat/sessions/{_seg(session_id)}/stream", last_event_id, max_attempts)

    def stream_token(self, session_id: str) -> StreamToken:
        """A short-lived token for clients that cannot set headers (EventSource: `?token=`)."""
        return self._c._call("POST", f"/chat/sessions/{_seg(session_id)}/stream-token", model=StreamToken)


class Tenants(Resource):
    def list(self) -> Page[Tenant]:
        return self._c._call("GET", "/tenants", model=Page[Tenant])

    def create(self, name: str) -> Tenant:
        return self._c._call("POST", "/tenants", model=Tenant, json={"name": name})

    def get(self, tenant_id: str) -> Tenant:
        return self._c._call("GET", f"/tenants/{_seg(tenant_id)}", model=Tenant)

    def update_settings(self, tenant_id: str, **settings: Any) -> Tenant:
        """Settings by their API names (displayName=..., timezone=...); None clears one."""
        return self._c._call("PATCH", f"/tenants/{_seg(tenant_id)}/settings", model=Tenant, json=dict(settings))


class Members(Resource):
    """The people of the tenant and their roles (members:read to list, members:write to change)."""

    def list(self, *, limit: int | None = None, cursor: str | None = None) -> Page[Member]:
        return self._c._call("GET", "/members", model=Page[Member], params={"limit": limit, "cursor": cursor})

    def iter(self, *, limit: int | None = None) -> Iterator[Member]:
        return self._c._paginate("/members", Member, {"limit": limit})

    def set_role(self, user_id: str, role: str) -> Member:
        """owner, admin or member. Making or unmaking an owner needs a signed-in owner; otherwise the
        caller holds every permission of both roles. The last owner keeps the role (Conflict)."""
        return self._c._call("PATCH", f"/members/{_seg(user_id)}", model=Member, json={"role": role})

    def remove(self, user_id: str) -> MemberRemoved:
        """Their sign-ins for this tenant end and their command-line keys in it are revoked at once."""
        return self._c._call("DELETE", f"/members/{_seg(user_id)}", model=MemberRemoved)

    def leave(self) -> MemberRemoved:
        """The signed-in user leaves the tenant of their token (a signed-in user only; not the last owner)."""
        return self._c._call("POST", "/members/leave", model=MemberRemoved)

    def transfer_ownership(self, user_id: str) -> OwnershipTransferred:
        """A signed-in owner makes a member the owner and becomes an admin."""
        return self._c._call("POST", "/members/transfer-ownership", model=OwnershipTransferred,
                             json={"userId": user_id})


class Invitations(Resource):
    """Invitations by e-mail: the invitee's link is single use, for their address only, 7 days."""

    def create(self, email: str, role: str = "member") -> Invitation:
        return self._c._call("POST", "/invitations", model=Invitation, json={"email": email, "role": role})

    def list(self, *, limit: int | None = None, cursor: str | None = None) -> Page[Invitation]:
        return self._c._call("GET", "/invitations", model=Page[Invitation], params={"limit": limit, "cursor": cursor})

    def iter(self, *, limit: int | None = None) -> Iterator[Invitation]:
        return self._c._paginate("/invitations", Invitation, {"limit": limit})

    def revoke(self, id: str) -> Invitation:
        return self._c._call("DELETE", f"/invitations/{_seg(id)}", model=Invitation)

    def resend(self, id: str) -> Invitation:
        """A new link by e-mail (the earlier one stops working), valid 7 days from now."""
        return self._c._call("POST", f"/invitations/{_seg(id)}/resend", model=Invitation)

    def lookup(self, token: str) -> InvitationLookup:
        """What an invitation's link invites to (no credential needed)."""
        return self._c._call("GET", "/invitations/lookup", model=InvitationLookup, authenticated=False,
                             params={"token": token})

    def accept(self, token: str, password: str, name: str | None = None) -> TokenGrant:
        """Accept with the link's token: an existing account's password signs it in to the tenant; for an
        address with no account, `name` and `password` make one. The client is signed in afterwards."""
        return self._c._call("POST", "/invitations/accept", model=TokenGrant, authenticated=False, login=True,
                             json={"token": token, "password": password, "name": name}, then=self._c._signed_in)


class AuditLog(Resource):
    """The audit log (audit:read): who did what, from where; newest first."""

    def list(self, *, actor: str | None = None, action: str | None = None, target: str | None = None,
             since: str | None = None, until: str | None = None, limit: int | None = None,
             cursor: str | None = None) -> Page[AuditEntry]:
        return self._c._call("GET", "/audit-log", model=Page[AuditEntry], params={
            "actor": actor, "action": action, "target": target, "since": since, "until": until, "limit": limit,
            "cursor": cursor})

    def iter(self, *, actor: str | None = None, action: str | None = None, target: str | None = None,
             since: str | None = None, until: str | None = None, limit: int | None = None) -> Iterator[AuditEntry]:
        return self._c._paginate("/audit-log", AuditEntry, {"actor": actor, "action": action, "target": target,
                                                           "since": since, "until": until, "limit": limit})

    def export(self, *, actor: str | None = None, action: str | None = None, target: str | None = None,
               since: str | None = None, until: str | None = None) -> AuditExport:
        """JSON Lines behind a link that works 15 minutes (plans with audit_log_export)."""
        return self._c._call("POST", "/audit-log/export", model=AuditExport, params={
            "actor": actor, "action": action, "target": target, "since": since, "until": until})


class Regions(Resource):
    def list(self) -> RegionList:
        return self._c._call("GET", "/regions", model=RegionList)

    def preferences(self, tenant_id: str) -> RegionalPreferences:
        return self._c._call("GET", f"/regions/preferences/{_seg(tenant_id)}", model=RegionalPreferences)

    def update_preferences(self, tenant_id: str, **fields: Any) -> RegionalPreferences:
        """Fields by their API names (primaryRegion=..., complianceLevel=...); NULL clears one."""
        return self._c._call("PATCH", f"/regions/preferences/{_seg(tenant_id)}", model=RegionalPreferences,
                             json=dict(fields))

    def storage(self, tenant_id: str) -> StorageConfig:
        return self._c._call("GET", f"/regions/storage/{_seg(tenant_id)}", model=StorageConfig)

    def set_storage(self, tenant_id: str, **config: Any) -> StorageConfig:
        return self._c._call("PUT", f"/regions/storage/{_seg(tenant_id)}", model=StorageConfig, json=dict(config))

    def validate_storage(self, tenant_id: str, **config: Any) -> StorageValidation:
        return self._c._call("POST", f"/regions/storage/{_seg(tenant_id)}/validate", model=StorageValidation,
                             json=dict(config) or None)

    def check_feature(self, tenant_id: str, feature_key: str) -> FeatureCheck:
        return self._c._call("GET", f"/regions/features/{_seg(tenant_id)}/check/{_seg(feature_key)}",
                             model=FeatureCheck)

    def routing_info(self) -> RoutingInfo:
        return self._c._call("GET", "/routing-info", model=RoutingInfo)


class Webhooks(_Crud):
    path, model = "/webhooks", Webhook

    def create(self, url: str, events: builtins.list[str], secret: str | None = None,
               description: str | None = None) -> WebhookCreated:
        """`url`: https:// and a DNS host name (no IP address, no localhost); where it points is checked
        at each delivery, so a name that does not resolve shows up in `deliveries()` (try `test()`).
        `secret`: `whsec_...` (recommended) or a plain 32-256 character one; left out, the service
        generates a `whsec_` secret and answers it this once (`.secret`)."""
        return self._c._call("POST", self.path, model=WebhookCreated,
                             json={"url": url, "events": events, "secret": secret, "description": description})

    def update(self, id: str, *, url: str | None = None, events: builtins.list[str] | None = None,
               enabled: bool | None = None, description: Any = None) -> Webhook:
        return self._update(id, {"url": url, "events": events, "enabled": enabled, "description": description})

    def rotate_secret(self, id: str, *, secret: str | None = None,
                      overlap_seconds: int | None = None) -> WebhookRotated:
        return self._c._call("POST", f"/webhooks/{_seg(id)}/rotate-secret", model=WebhookRotated,
                             json={"secret": secret, "overlapSeconds": overlap_seconds})

    def test(self, id: str) -> QueuedEvent:
        return self._c._call("POST", f"/webhooks/{_seg(id)}/test", model=QueuedEvent)

    def deliveries(self, id: str, *, limit: int | None = None, cursor: str | None = None) -> Page[DeliveryAttempt]:
        return self._c._call("GET", f"/webhooks/{_seg(id)}/deliveries", model=Page[DeliveryAttempt],
                             params={"limit": limit, "cursor": cursor})

    def iter_deliveries(self, id: str, *, limit: int | None = None) -> Iterator[DeliveryAttempt]:
        return self._c._paginate(f"/webhooks/{_seg(id)}/deliveries", DeliveryAttempt, {"limit": limit})

    def redeliver(self, id: str, event_id: str) -> Redelivery:
        """Send one event of the event log to this webhook again: a new attempt with the same
        webhook-id, signed with the current secret."""
        return self._c._call("POST", f"/webhooks/{_seg(id)}/deliveries/{_seg(event_id)}/redeliver", model=Redelivery)

    def replay(self, id: str, since: str, *, until: str | None = None, only_failed: bool | None = None) -> Replay:
        """Queue again every event from `since` (ISO 8601 with an offset) to `until` (default: now)
        that this webhook wants; `only_failed`: only those never delivered to it. Each event is sent
        by one replay at most; follow it with `get_replay` until `.done`."""
        return self._c._call("POST", f"/webhooks/{_seg(id)}/replay", model=Replay,
                             json={"since": since, "until": until, "onlyFailed": only_failed})

    def get_replay(self, id: str, replay_id: str) -> Replay:
        return self._c._call("GET", f"/webhooks/{_seg(id)}/replays/{_seg(replay_id)}", model=Replay)


class Events(Resource):
    """The event log: the tenant's events of the last 30 days (scope events:read)."""

    def list(self, *, type: str | None = None, object_id: str | None = None, since: str | None = None,
             until: str | None = None, limit: int | None = None, cursor: str | None = None) -> Page[Event]:
        """Newest first; a filtered page may be short and still have a next_cursor."""
        return self._c._call("GET", "/events", model=Page[Event], params={
            "type": type, "objectId": object_id, "since": since, "until": until, "limit": limit, "cursor": cursor})

    def iter(self, *, type: str | None = None, object_id: str | None = None, since: str | None = None,
             until: str | None = None, limit: int | None = None) -> Iterator[Event]:
        return self._c._paginate("/events", Event, {"type": type, "objectId": object_id, "since": since,
                                                    "until": until, "limit": limit})

    def get(self, id: str) -> Event:
        return self._c._call("GET", f"/events/{_seg(id)}", model=Event)


class Secrets(_Crud):
    path, model = "/secrets", Secret

    def create(self, name: str, value: str, description: str | None = None) -> Secret:
        """`value`: 1 to 16,384 characters, not all whitespace; a `name` already used in the tenant
        (whatever its case) raises Conflict (409), `details.fields` naming `name`."""
        return self._create({"name": name, "value": value, "description": description})

    def update(self, id: str, *, value: str | None = None, description: Any = None) -> Secret:
        return self._update(id, {"value": value, "description": description})


class ApiKeys(_Crud):
    path, model = "/api-keys", ApiKey

    def create(self, name: str, type: str = "sdk", environment: str = "Development", *,
               scopes: builtins.list[str] | None = None, expires_in_days: int | None = None) -> ApiKeyWithSecret:
        """The answer's `key` is the value, shown this once."""
        return self._c._call("POST", self.path, model=ApiKeyWithSecret,
                             json={"name": name, "type": type, "environment": environment, "scopes": scopes,
                                   "expiresInDays": expires_in_days})

    def revoke(self, id: str) -> ApiKey:
        return self._c._call("DELETE", f"{self.path}/{_seg(id)}", model=ApiKey)

    delete = revoke  # type: ignore[assignment]

    def rotate(self, id: str, *, overlap_seconds: int | None = None) -> ApiKeyWithSecret:
        return self._c._call("POST", f"{self.path}/{_seg(id)}/rotate", model=ApiKeyWithSecret,
                             json={"overlapSeconds": overlap_seconds})


class OAuth(Resource):
    def start(self, provider: str) -> dict[str, Any]:
        return self._c._call("POST", f"/oauth/{_seg(provider)}/start", json={})

    def authorize(self, provider: str, code: str, state: str) -> OAuthConnection:
        return self._c._call("POST", f"/oauth/{_seg(provider)}/authorize", model=OAuthConnection,
                             json={"code": code, "state": state})

    def connections(self, *, limit: int | None = None, cursor: str | None = None) -> Page[OAuthConnection]:
        return self._c._call("GET", "/oauth/connections", model=Page[OAuthConnection],
                             params={"limit": limit, "cursor": cursor})

    def delete_connection(self, id: str) -> Deleted:
        return self._c._call("DELETE", f"/oauth/connections/{_seg(id)}", model=Deleted)


class Billing(Resource):
    """Billing. Every POST carries an Idempotency-Key (generated unless given), the same on each
    retry, so a retried purchase is never made twice; that also makes them safe to retry after a
    connection failure. Reusing a key with another body is IdempotencyKeyReused (422)."""

    def summary(self) -> BillingSummary:
        return self._c._call("GET", "/billing/summary", model=BillingSummary)

    def usage(self, *, from_: str | None = None, to: str | None = None) -> BillingUsageSeries:
        """Metered model calls summed per UTC day and model, from_ to to (YYYY-MM-DD, both included;
        default: the 30 days to today, at most 92 days)."""
        return self._c._call("GET", "/billing/usage", model=BillingUsageSeries, params={"from": from_, "to": to})

    def invoices(self, *, limit: int | None = None, cursor: str | None = None) -> Page[Invoice]:
        return self._c._call("GET", "/billing/invoices", model=Page[Invoice], params={"limit": limit, "cursor": cursor})

    def iter_invoices(self, *, limit: int | None = None) -> Iterator[Invoice]:
        return self._c._paginate("/billing/invoices", Invoice, {"limit": limit})

    def get_invoice(self, id: str) -> Invoice:
        return self._c._call("GET", f"/billing/invoices/{_seg(id)}", model=Invoice)

    def ledger(self, *, limit: int | None = None, cursor: str | None = None) -> Page[LedgerEntry]:
        return self._c._call("GET", "/billing/ledger", model=Page[LedgerEntry],
                             params={"limit": limit, "cursor": cursor})

    def iter_ledger(self, *, limit: int | None = None) -> Iterator[LedgerEntry]:
        return self._c._paginate("/billing/ledger", LedgerEntry, {"limit": limit})

    def purchase_credits(self, *, pack: str | None = None, credits: int | None = None,
                         idempotency_key: str | None = None) -> Purchase:
        """Exactly one of a pack (see summary().packs) or a custom number of credits."""
        return self._post("/billing/credits/purchase", {"pack": pack, "credits": credits}, Purchase, idempotency_key)

    def create_subscription(self, plan: str, *, idempotency_key: str | None = None) -> Subscription:
        """Starts or changes the subscription; "free" cancels it."""
        return self._post("/billing/subscription/create", {"plan": plan}, Subscription, idempotency_key)

    def redeem_gift_card(self, code: str, *, idempotency_key: str | None = None) -> Redemption:
        return self._post("/billing/gift-cards/redeem", {"code": code}, Redemption, idempotency_key)

    def portal(self, *, idempotency_key: str | None = None) -> PortalSession:
        return self._post("/billing/portal", None, PortalSession, idempotency_key)

    def _post(self, path: str, body: dict[str, Any] | None, model: Any, idempotency_key: str | None) -> Any:
        return self._c._call("POST", path, model=model, json=body,
                             headers={"Idempotency-Key": idempotency_key or new_idempotency_key()})


__all__ = [
    "Agents",
    "ApiKeys",
    "Auth",
    "Billing",
    "Chat",
    "DeviceLogin",
    "OAuth",
    "Projects",
    "Regions",
    "Secrets",
    "Tenants",
    "User",
    "Webhooks",
]
