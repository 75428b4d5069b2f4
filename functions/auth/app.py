"""Registration, login, refresh, logout and me; a forgotten password reset by e-mail; a signed-in
person's own password, sessions and name; and the command-line device login. The routes of a
signed-in person (me, the password's change, the sessions, complete and deny) take a credential;
the others are public: not counted per credential, but those that create or check credentials are
counted per source address in their throttle group (login also has its per-account-and-address
failure throttle)."""

from __future__ import annotations  # the models are named lazily (svc_core/domain/models)

from pathlib import Path
from typing import Annotated

from svc_core.domain import accounts, device_login, idp_exchange
from svc_core.domain.fields import device_login as device_login_fields
from svc_core.domain.paging import DEFAULT_LIMIT, MAX_LIMIT
from svc_core.http import refresh_cookie
from svc_core.http.api import AUTHENTICATED, Api
from svc_core.http.html_pages import load_page
from svc_core.http.params import Body, IdCursor, Query
from svc_core.platform.lazy import lazy_module

account_models = lazy_module("svc_core.domain.models.accounts")
device_models = lazy_module("svc_core.domain.models.device_login")
idp_models = lazy_module("svc_core.domain.models.idp_exchange")
# A person's own account and a forgotten password: rare calls, loaded by the first of them.
own_account = lazy_module("svc_core.domain.own_account")
password_reset = lazy_module("svc_core.domain.password_reset")
api = Api()
# The device login's id (models.device_login.LoginId) as the query marker states it, so that polling
# binds without pydantic; the document shows the same schema.
LoginId = Annotated[str, Query(pattern=device_login_fields.LOGIN_ID_PATTERN, examples=[device_login_fields.LOGIN_ID_EXAMPLE])]
TAGS = ["Authentication"]
COOKIE = refresh_cookie.NAME


def _set_refresh_cookie(token: str, max_age: int) -> None:
    api.set_response_header("Set-Cookie", refresh_cookie.set_cookie(token, max_age))


@api.post("/api/v1/auth/register", public=True, throttle="register", status=201,
          response_model="account_models.Registered", tags=TAGS, errors=(421,),
          summary="Create a user and the personal tenant they own",
          description="An address that already has an account gets the same 201 and a body of the same shape "
                      "(ids that name nothing), and nothing is created: the answer never tells whether an "
                      "address is registered. The email is a valid e-mail address as the HTML standard defines "
                      "it (ASCII; an internationalised domain in its xn-- form), at most 254 characters; "
                      "addresses are compared normalised (NFKC, case-folded, trimmed).")
def register(body: account_models.RegisterBody):
    return accounts.register(body, api.source_ip())


@api.post("/api/v1/auth/login", public=True, throttle="sign-in",
          response_model="account_models.TokenPair", tags=TAGS, errors=(401, 403, 421, 429),
          summary="Sign in with e-mail and password: an access token and a refresh token",
          description="401: wrong e-mail or password (the same answer, in the same time). 403: the account is "
                      "disabled, or not a member of tenantId. 429: too many failed sign-ins from this address "
                      "(details.counter address, until the minute ends), too many failures for this account "
                      "from this address (account_address, until the 15-minute window ends), or, after many "
                      "failures from everywhere, attempts on this account from an address it is not known at "
                      "share one every few seconds (account). An address is known at the account for 90 days "
                      "after its password was given from there, and is never slowed by failures from elsewhere; "
                      "a right password from an unknown address waits like a wrong one. Successful sign-ins are "
                      "not counted: the X-RateLimit-* headers show the address's failed sign-ins.")
def login(body: account_models.LoginBody):
    pair = accounts.login(body, api.source_ip())
    _set_refresh_cookie(pair["refreshToken"], pair["refreshExpiresIn"])
    return pair


@api.post("/api/v1/auth/refresh", public=True, throttle="refresh",
          response_model="account_models.TokenPair", tags=TAGS, errors=(401, 403),
          summary="Rotate the refresh token (body or cookie) for a new pair",
          description="A refresh token works once. Presenting one already used ends the whole session (401).")
def refresh(body: Annotated[account_models.RefreshBody | None, Body()] = None):
    body = body or account_models.RefreshBody()
    pair = accounts.refresh(body.refreshToken or api.cookie(COOKIE), body.tenantId)
    _set_refresh_cookie(pair["refreshToken"], pair["refreshExpiresIn"])
    return pair


@api.post("/api/v1/auth/logout", public=True, throttle="refresh",
          response_model="account_models.LoggedOut", tags=TAGS, errors=(401,),
          summary="End the session (refresh token in body or cookie, or the access token) and clear the cookie")
def logout(body: Annotated[account_models.LogoutBody | None, Body()] = None):
    refresh_token = (body.refreshToken if body else None) or api.cookie(COOKIE)
    ended = accounts.logout(refresh_token, None if refresh_token else api.optional_principal())
    _set_refresh_cookie("", 0)
    return ended


@api.post("/api/v1/auth/exchange", public=True, throttle="exchange",
          response_model="idp_models.Exchanged", tags=TAGS, errors=(401, 403),
          summary="Exchange the identity provider's token for a service access token",
          description="The provider's token is verified against its JWKS (iss, aud, exp, nbf); its (iss, sub) "
                      "names one user, created with a personal tenant on first sight. 404 when no provider "
                      "is configured.")
def exchange(body: idp_models.ExchangeBody):
    return idp_exchange.exchange(body, api.source_ip())


@api.get("/api/v1/auth/me", scope=AUTHENTICATED, response_model="account_models.Me", tags=TAGS,
         summary="The caller: user, current tenant, all their tenants, and the scopes in force")
def me():
    return accounts.me(api.tenant_context().principal)


def _page(loaded) -> str:
    """A page of the service's own, drawn once with the deployment's brand, its headers set."""
    page = loaded.page()
    for name, value in page.headers.items():
        api.set_response_header(name, value)
    return page.html


@api.patch("/api/v1/auth/me", scope=AUTHENTICATED, response_model="account_models.Me", tags=TAGS, errors=(403, 409),
           summary="Change the signed-in user's name; answers as GET /auth/me",
           description="The name follows registration's rules (1 to 200 characters, no control or bidirectional "
                       "formatting character). It is the profile's, and the one each tenant's member list shows. "
                       "403 user_required: an API key (it belongs to a tenant, not to a person).")
def update_me(body: account_models.ProfileUpdate):
    return own_account.update_name(api.tenant_context(), body)


@api.post("/api/v1/auth/password/forgot", public=True, throttle="password-reset", status=202,
          response_model="account_models.PasswordResetRequested", tags=TAGS, errors=(421,),
          summary="Ask for a password reset link by e-mail; the same 202 whether or not the address has an account",
          description="For an active account, a link that works once for 30 minutes is e-mailed (a newer request "
                      "makes the earlier link dead): to the dashboard's page when the deployment has one "
                      "(DashboardUrl/#/reset-password?token=...), else to GET /auth/password/reset-page#token=...; "
                      "the token is always in the fragment, which a browser never sends to a server. For any other "
                      "address nothing is sent or stored. At most 3 mails an hour go to one account: further asks "
                      "are answered alike and send nothing. Counted per source address (password-reset group).")
def forgot_password(body: account_models.ForgotPasswordBody):
    return password_reset.forgot(body, api.public_base_url())


@api.post("/api/v1/auth/password/reset", public=True, throttle="password-reset",
          response_model="account_models.PasswordReset", tags=TAGS, errors=(403, 409, 421),
          summary="Set a new password with the e-mailed link's token; every session of the account ends",
          description="The password follows registration's rules (12 to 256 characters). The link works once. 404: the "
                      "token names no live link (unknown, or a newer link was sent, or the password changed since). "
                      "409: the link was used (details.reason used) or has expired (expired). 403 account_disabled. "
                      "Every refresh token of the account stops at once and every access token at its next request. "
                      "The answer names the account's e-mail address, to sign in with next.")
def reset_password(body: account_models.ResetPasswordBody):
    return password_reset.reset(body, api.source_ip())


RESET_PAGE = load_page(Path(__file__).parent / "reset_page")


@api.get("/api/v1/auth/password/reset-page", public=True, raw=True, media_type="text/html", tags=TAGS,
         summary="The browser page a reset link opens when there is no dashboard: asks the new password twice",
         description="The link is this page with #token=... (the fragment never reaches a server). The page calls "
                     "POST /auth/password/reset itself.")
def password_reset_page():
    return _page(RESET_PAGE)


@api.post("/api/v1/auth/password", scope=AUTHENTICATED, response_model="account_models.PasswordChanged",
          tags=TAGS, errors=(403, 409, 429),
          summary="Change the signed-in user's password; every other session of the account ends",
          description="currentPassword is checked under the sign-in throttles: a wrong one is 403 "
                      "current_password_wrong and counts as a failed sign-in of the account from this address "
                      "(429 as a sign-in would be, details.counter account_address or account). newPassword follows "
                      "registration's rules. The caller's session stays open; any pending reset link dies. 403 "
                      "user_required: an API key. 409 account_in_another_region: the account lives in another cell, "
                      "which alone checks its password (details.region); 409 changed: changed meanwhile.")
def change_password(body: account_models.ChangePasswordBody):
    return own_account.change_password(api.tenant_context(), body)


@api.get("/api/v1/auth/sessions", scope=AUTHENTICATED, response_model="account_models.SignInSessionPage",
         tags=TAGS, errors=(403,),
         summary="List the signed-in user's open sessions, newest first; the caller's is marked current",
         description="A session is a sign-in (a refresh-token family) whose refresh token still works. The service "
                     "keeps no address or device of a session: the tenants it is for and its times are all there is. "
                     "403 user_required: an API key.")
def list_sessions(limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT, cursor: IdCursor = None):
    return own_account.list_sessions(api.tenant_context(), limit, cursor)


@api.delete("/api/v1/auth/sessions", scope=AUTHENTICATED, response_model="account_models.OtherSessionsEnded",
            tags=TAGS, errors=(403,),
            summary="Sign out everywhere else: end every session of the user but the caller's",
            description="Their refresh tokens stop at once, their access tokens at their next request. "
                        "403 user_required: an API key.")
def end_other_sessions():
    return own_account.end_other_sessions(api.tenant_context())


@api.delete("/api/v1/auth/sessions/{id}", scope=AUTHENTICATED, response_model="account_models.SignInSessionDeleted",
            tags=TAGS, errors=(403,),
            summary="End one of the signed-in user's sessions (the caller's own too: a sign-out)",
            description="404: no session of the caller's has this id (another user's included). Ending an ended one "
                        "answers the same. 403 user_required: an API key.")
def end_session(id: str):
    return own_account.end_session(api.tenant_context(), id)


CLI_TAGS = ["Command-line login"]


@api.post("/api/v1/cli/auth/start", public=True, throttle="device-login", status=201,
          response_model="device_models.Started", tags=CLI_TAGS,
          summary="Start a device login: a login id, the browser address and the code to compare")
def cli_start(body: device_models.StartBody):
    return device_login.start(body, api.public_base_url())


@api.get("/api/v1/cli/auth/status", public=True, response_model="device_models.Status", tags=CLI_TAGS,
         summary="Poll a device login: pending, approved, expired (reason timed_out or denied) or consumed")
def cli_status(loginId: LoginId):
    return device_login.status(loginId)


@api.get("/api/v1/cli/auth/info", public=True, response_model="device_models.LoginInfo", tags=CLI_TAGS,
         summary="What the approval page shows: code, CLI version, platform, times, status")
def cli_info(loginId: LoginId):
    return device_login.info(loginId)


APPROVAL_PAGE = load_page(Path(__file__).parent / "approval_page")


@api.get("/api/v1/cli/auth/approve", public=True, raw=True, media_type="text/html", tags=CLI_TAGS,
         summary="The browser page behind authUrl: sign in, compare the code, approve or deny",
         description="authUrl is this page with ?loginId=... and #state=... (the fragment never reaches "
                     "a server). The page calls info, login (or refresh, when already signed in), and "
                     "complete or deny itself.")
def cli_approve_page(loginId: Annotated[str | None, Query()] = None):
    return _page(APPROVAL_PAGE)


@api.post("/api/v1/cli/auth/complete", scope=AUTHENTICATED, response_model="device_models.Status", tags=CLI_TAGS, errors=(409,),
          summary="Approve a pending device login (a signed-in user; the state must match)")
def cli_complete(body: device_models.DecisionBody):
    return device_login.complete(body, api.tenant_context().principal)


@api.post("/api/v1/cli/auth/deny", scope=AUTHENTICATED, response_model="device_models.Status", tags=CLI_TAGS, errors=(409,),
          summary="Deny a pending device login: it can never be approved; polling shows expired, reason denied")
def cli_deny(body: device_models.DecisionBody):
    return device_login.deny(body, api.tenant_context().principal)


@api.post("/api/v1/cli/auth/token", public=True, throttle="device-login",
          response_model="device_models.CliToken", tags=CLI_TAGS, errors=(401, 403, 409),
          summary="Exchange an approved login and its PKCE verifier for a CLI key, once",
          description="401: the codeVerifier does not match the challenge (details.reason code_verifier_mismatch; "
                      "the session stays approved). 409: the session is not approved, details.status says what "
                      "it is: CONFLICT (pending), LOGIN_SESSION_EXPIRED (expired, details.reason timed_out or "
                      "denied), LOGIN_SESSION_CONSUMED. 403: the approving account can no longer sign in there.")
def cli_token(body: device_models.TokenBody):
    return device_login.exchange(body, api.source_ip())


api.snapstart()  # SnapStart's hooks (svc_core/platform/snapshot.py); a no-op outside Lambda
lambda_handler = api.handler
