"""The command-line device login: the spec's state machine, PKCE S256, state, expiry, once-only."""

from __future__ import annotations

import base64
import hashlib
import secrets
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.functions import call

PASSWORD = "correct horse battery staple"


def pkce():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def start(**overrides):
    verifier, challenge = pkce()
    state = secrets.token_hex(32)
    body = {"state": state, "codeChallenge": challenge, "codeChallengeMethod": "S256", "cliVersion": "1.4.2",
            "platform": "linux-x86_64", **overrides}
    answer = call("auth", "Auth-CliStart", body=body)
    return answer, state, verifier


def user_token(email="ada@example.com"):
    call("auth", "Auth-Register", body={"email": email, "password": PASSWORD, "name": "Ada"})
    return call("auth", "Auth-Login", body={"email": email, "password": PASSWORD}).data


def status(login_id):
    return call("auth", "Auth-CliStatus", query={"loginId": login_id})


def complete(login_id, state, token, name="Auth-CliComplete"):
    return call("auth", name, token=token, body={"loginId": login_id, "state": state})


def exchange(login_id, verifier):
    return call("auth", "Auth-CliToken", body={"loginId": login_id, "codeVerifier": verifier})


def test_the_whole_flow_gives_a_cli_key_once(stack):
    started, state, verifier = start()
    assert started.status == 201, started
    login = started.data
    assert login["authUrl"].endswith(f"/api/v1/cli/auth/approve?loginId={login['loginId']}#state={state}")
    assert len(login["verificationCode"]) == 9 and login["verificationCode"][4] == "-"
    assert login["expiresIn"] == 600 and login["interval"] == 5
    assert status(login["loginId"]).data["status"] == "pending"
    info = call("auth", "Auth-CliInfo", query={"loginId": login["loginId"]})
    assert info.data["verificationCode"] == login["verificationCode"] and info.data["cliVersion"] == "1.4.2"
    assert state not in info.text and "codeChallenge" not in info.text
    pair = user_token()
    approved = complete(login["loginId"], state, pair["accessToken"])
    assert approved.status == 200 and approved.data["status"] == "approved"
    assert status(login["loginId"]).data["status"] == "approved"
    token = exchange(login["loginId"], verifier)
    assert token.status == 200, token
    assert token.data["token"].startswith("svc_cli_") and token.data["user"]["email"] == "ada@example.com"
    assert token.data["tenant"]["id"] == pair["tenant"]["id"]
    assert call("projects", "Projects-ListProjects", token=token.data["token"]).status == 200
    listed = call("api_keys", "ApiKeys-ListKeys", token=token.data["token"]).data["items"]
    assert token.data["keyId"] in [k["id"] for k in listed]  # listed and revocable like any key
    assert status(login["loginId"]).data["status"] == "consumed"
    again = exchange(login["loginId"], verifier)
    assert again.status == 409 and again.error["code"] == "LOGIN_SESSION_CONSUMED"
    assert again.error["details"] == {"id": login["loginId"], "status": "consumed"}
    # approving a session that is no longer pending: a state conflict that says the state
    late = complete(login["loginId"], state, pair["accessToken"])
    assert late.status == 409 and late.error["details"]["status"] == "consumed"


def test_with_a_dashboard_the_auth_url_is_its_approval_route_with_the_state_in_the_fragment(stack, monkeypatch):
    from svc_core.platform import config
    monkeypatch.setenv("DASHBOARD_URL", "https://console.example.com/")
    config.settings.cache_clear()
    try:
        started, state, _ = start()
    finally:
        monkeypatch.delenv("DASHBOARD_URL")
        config.settings.cache_clear()
    assert started.status == 201, started
    login_id = started.data["loginId"]
    assert started.data["authUrl"] == f"https://console.example.com/#/device?loginId={login_id}&state={state}"
    # without one, the API's own page again
    started, state, _ = start()
    assert started.data["authUrl"].endswith(f"/api/v1/cli/auth/approve?loginId={started.data['loginId']}#state={state}")


def test_a_wrong_verifier_is_refused_and_consumes_nothing(stack):
    started, state, verifier = start()
    login_id = started.data["loginId"]
    complete(login_id, state, user_token()["accessToken"])
    wrong = exchange(login_id, secrets.token_urlsafe(48))  # a failed proof: the verifier is the credential
    assert wrong.status == 401 and wrong.error["code"] == "UNAUTHORIZED"
    assert wrong.error["details"]["reason"] == "code_verifier_mismatch"
    assert wrong.error["details"]["fields"][0]["field"] == "codeVerifier"
    assert status(login_id).data["status"] == "approved"
    assert exchange(login_id, verifier).status == 200


def test_a_wrong_state_or_an_api_key_cannot_approve(stack):
    started, state, _ = start()
    login_id = started.data["loginId"]
    token = user_token()["accessToken"]
    wrong = complete(login_id, secrets.token_hex(32), token)
    assert wrong.status == 403 and wrong.error["details"]["reason"] == "state_mismatch"
    assert wrong.error["details"]["fields"][0]["field"] == "state"
    _, key = stack.tenant_with_key()
    assert complete(login_id, state, key).status == 403
    assert complete(login_id, state, None).status == 401
    assert status(login_id).data["status"] == "pending"


def test_an_exchange_before_approval_is_refused(stack):
    started, _, verifier = start()
    refused = exchange(started.data["loginId"], verifier)
    assert refused.status == 409 and refused.error["code"] == "CONFLICT"
    assert refused.error["details"] == {"id": started.data["loginId"], "status": "pending"}


@pytest.mark.parametrize("overrides, field", [
    ({"codeChallengeMethod": "plain"}, "codeChallengeMethod"),
    ({"state": "abc"}, "state"),
    ({"state": "G" * 64}, "state"),
    ({"codeChallenge": "short"}, "codeChallenge"),
    ({"cliVersion": "x" * 33}, "cliVersion"),
    ({"platform": ""}, "platform"),
])
def test_bad_start_requests_are_400(stack, overrides, field):
    answer, _, _ = start(**overrides)
    assert answer.status == 400 and field in [f["field"] for f in answer.error["details"]["fields"]]


def test_unknown_login_ids_are_404(stack):
    unknown = secrets.token_urlsafe(32)
    assert status(unknown).status == 404
    assert call("auth", "Auth-CliInfo", query={"loginId": unknown}).status == 404
    assert exchange(unknown, secrets.token_urlsafe(48)).status == 404
    assert status("../etc").status == 400


def test_sessions_expire_ten_minutes_after_start(stack, monkeypatch):
    from svc_core.platform import timeutil
    clock = [1_900_000_000.0]
    monkeypatch.setattr(timeutil, "now", lambda: clock[0])
    started, state, verifier = start()
    login_id = started.data["loginId"]
    token = user_token()["accessToken"]
    clock[0] += 599
    assert status(login_id).data["status"] == "pending"
    clock[0] += 1
    assert status(login_id).data["status"] == "expired"
    late = complete(login_id, state, call("auth", "Auth-Login", body={"email": "ada@example.com",
                                                                      "password": PASSWORD}).data["accessToken"])
    assert late.status == 409 and late.error["code"] == "LOGIN_SESSION_EXPIRED"
    assert late.error["details"] == {"id": login_id, "status": "expired", "reason": "timed_out"}
    assert token  # the first token was minted before the clock moved


def test_an_approved_session_not_exchanged_in_time_expires_too(stack, monkeypatch):
    from svc_core.platform import timeutil
    clock = [1_900_000_000.0]
    monkeypatch.setattr(timeutil, "now", lambda: clock[0])
    started, state, verifier = start()
    login_id = started.data["loginId"]
    complete(login_id, state, user_token()["accessToken"])
    clock[0] += 600
    assert status(login_id).data["status"] == "expired"
    assert exchange(login_id, verifier).status == 409


def test_a_denied_session_reads_expired_with_reason_denied_and_can_never_be_approved(stack):
    # The spec's status values are pending, approved, expired and consumed: a client that follows
    # it stops polling on expired; the reason says the user denied it.
    started, state, verifier = start()
    login_id = started.data["loginId"]
    token = user_token()["accessToken"]
    denied = complete(login_id, state, token, name="Auth-CliDeny")
    assert denied.status == 200 and denied.data == {"loginId": login_id, "status": "expired", "reason": "denied"}
    assert status(login_id).data == {"loginId": login_id, "status": "expired", "reason": "denied"}
    info = call("auth", "Auth-CliInfo", query={"loginId": login_id})
    assert info.data["status"] == "expired" and info.data["reason"] == "denied"
    for refused in (complete(login_id, state, token), exchange(login_id, verifier)):
        assert refused.status == 409 and refused.error["code"] == "LOGIN_SESSION_EXPIRED"
        assert refused.error["details"] == {"id": login_id, "status": "expired", "reason": "denied"}


def test_a_session_that_timed_out_says_so(stack, monkeypatch):
    from svc_core.platform import timeutil
    clock = [1_900_000_000.0]
    monkeypatch.setattr(timeutil, "now", lambda: clock[0])
    started, _, verifier = start()
    login_id = started.data["loginId"]
    assert "reason" not in status(login_id).data
    clock[0] += 600
    assert status(login_id).data == {"loginId": login_id, "status": "expired", "reason": "timed_out"}
    assert exchange(login_id, verifier).error["details"]["reason"] == "timed_out"


def test_of_twenty_concurrent_exchanges_exactly_one_gets_a_key(atomic_stack):
    started, state, verifier = start()
    login_id = started.data["loginId"]
    complete(login_id, state, user_token()["accessToken"])
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda _: exchange(login_id, verifier), range(20)))
    statuses = sorted(a.status for a in answers)
    assert statuses == [200] + [409] * 19


def test_the_approval_page_allows_only_its_own_script_and_style_and_no_framing(stack):
    import re

    page = call("auth", "Auth-CliApprovePage", query={"loginId": "x" * 43})
    assert page.status == 200 and page.headers["content-type"] == "text/html"
    policy = dict(part.strip().split(" ", 1) for part in page.headers["content-security-policy"].split(";"))
    assert policy["default-src"] == "'none'" and policy["frame-ancestors"] == "'none'"
    assert policy["connect-src"] == "'self'" and policy["base-uri"] == "'none'"
    assert page.headers["cache-control"] == "no-store" and page.headers["x-frame-options"] == "DENY"
    for tag, directive in (("script", "script-src"), ("style", "style-src")):
        inline = re.findall(rf"<{tag}[^>]*>(.*?)</{tag}>", page.text, re.S)
        assert len(inline) == 1, f"one inline {tag}, no other"
        digest = base64.b64encode(hashlib.sha256(inline[0].encode()).digest()).decode()
        assert policy[directive] == f"'sha256-{digest}'"  # exactly this text, nothing else
    assert "{{" not in page.text  # every placeholder filled
    assert call("auth", "Auth-CliApprovePage", method="POST", body={}).status == 405
