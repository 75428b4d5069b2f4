"""Users: registration, login, refresh-token rotation with reuse detection, logout, me, roles."""

from __future__ import annotations

import pytest

from tests.support.auth_helpers import Clock
from tests.support.functions import call

PASSWORD = "correct horse battery staple"


def register(email="ada@example.com", password=PASSWORD, name="Ada"):
    return call("auth", "Auth-Register", body={"email": email, "password": password, "name": name})


def registered_before(email, password=PASSWORD, name="Ada"):
    """An account made as registration made them before it took only HTML's valid addresses."""
    from svc_core.domain.tenants import create_tenant_with_owner
    return create_tenant_with_owner(tenant_name=f"{name}'s workspace", email=email, user_name=name, password=password)


def login(email="ada@example.com", password=PASSWORD, source_ip="203.0.113.10", **extra):
    return call("auth", "Auth-Login", body={"email": email, "password": password, **extra}, source_ip=source_ip)


def refresh(token=None, **kwargs):
    return call("auth", "Auth-Refresh", body={"refreshToken": token} if token else None, **kwargs)


def projects(token):
    return call("projects", "Projects-ListProjects", token=token)


def outbox_types(stack):
    items = stack.client("dynamodb").scan(TableName="OutboxTable")["Items"]
    return sorted(i["type"]["S"] for i in items)


def test_register_creates_the_user_and_a_tenant_they_own_with_both_events(stack):
    made = register()
    assert made.status == 201, made
    assert made.data["user"]["email"] == "ada@example.com" and "passwordHash" not in made.text
    assert made.data["tenant"]["role"] == "owner" and made.data["tenant"]["plan"] == "free"
    assert outbox_types(stack) == ["tenant.created", "user.created"]
    stored = stack.client("dynamodb").scan(TableName="UsersTable")["Items"]
    assert all(PASSWORD not in str(item) for item in stored)
    assert any(i.get("passwordHash", {}).get("S", "").startswith("$argon2id$") for i in stored)


@pytest.mark.parametrize("body, field", [
    ({"email": "ada@example.com", "password": "short", "name": "Ada"}, "password"),
    ({"email": "not-an-address", "password": PASSWORD, "name": "Ada"}, "email"),
    ({"email": "ada@example.com", "password": "x" * 257, "name": "Ada"}, "password"),
    ({"email": "ada@example.com", "password": PASSWORD, "name": "  "}, "name"),
])
def test_bad_registrations_are_400_naming_the_field_and_store_nothing(stack, body, field):
    answer = call("auth", "Auth-Register", body=body)
    assert answer.status == 400 and field in [f["field"] for f in answer.error["details"]["fields"]]
    assert stack.client("dynamodb").scan(TableName="UsersTable")["Items"] == []


def users_items(stack):
    return stack.client("dynamodb").scan(TableName="UsersTable")["Items"]


def test_registering_a_known_address_answers_as_for_a_new_one_and_changes_nothing(stack):
    first = register()
    assert first.status == 201
    items, events = users_items(stack), outbox_types(stack)
    again = register(email="ADA@Example.com", password="another long password", name="Eve")
    assert again.status == 201, again
    assert again.json.keys() == first.json.keys()
    for part in ("user", "tenant"):
        assert again.data[part].keys() == first.data[part].keys()
    assert again.data["user"]["id"].startswith("usr_") and again.data["user"]["id"] != first.data["user"]["id"]
    assert again.data["tenant"]["id"].startswith("ten_") and again.data["tenant"]["id"] != first.data["tenant"]["id"]
    assert again.data["user"]["email"] == "ADA@Example.com" and again.data["tenant"]["role"] == "owner"
    assert "set-cookie" not in again.headers and "accessToken" not in again.text
    assert users_items(stack) == items and outbox_types(stack) == events  # nothing created or changed
    assert login().status == 200
    assert login(password="another long password").status == 401


@pytest.mark.parametrize("typed", ["ADA@EXAMPLE.COM", " ada@example.com ", "\uff41\uff44\uff41@example.com"])
def test_addresses_are_compared_normalised_and_keep_their_display_form(stack, typed):
    made = register(email="Ada@Example.com")
    answer = login(email=typed)
    assert answer.status == 200, (typed, answer)
    assert answer.data["user"]["email"] == "Ada@Example.com" == made.data["user"]["email"]
    # the same address in another spelling is not a second account (the full-width one is not
    # even a valid address to register: 400)
    assert register(email=typed.strip(), password="another long password").status in (201, 400)
    assert sum(1 for i in users_items(stack) if i["sk"]["S"] == "PROFILE") == 1


def test_case_folding_goes_beyond_lower_case(stack):
    assert register(email="strasse@example.de").status == 201
    assert login(email="STRASSE@example.de").status == 200
    assert login(email="Stra\u00dfe@example.de").status == 200  # \u00df folds to ss
    assert register(email="Stra\u00dfe@example.de", password="another long password").status == 400  # not ASCII
    assert sum(1 for i in users_items(stack) if i["sk"]["S"] == "PROFILE") == 1


def test_an_address_claimed_before_normalisation_still_signs_in(stack, monkeypatch):
    from svc_core.contracts import email_address
    with monkeypatch.context() as patched:
        patched.setattr(email_address, "normalise", lambda address: address.lower())  # as claims were written
        registered_before("Stra\u00dfe@example.de")
    assert login(email="stra\u00dfe@example.de").status == 200


@pytest.mark.parametrize("email", [
    "\u0430da@example.com",          # a Cyrillic a among Latin letters
    "ada@ex\u0430mple.com",          # ... in the domain
    "ad\u03b1@example.com",          # a Greek alpha
    "p\u0430ypal@example.com",
    "ada@-example.com",              # a label starting with a hyphen
    "ada@" + "a" * 64 + ".com",      # a label over 63
])
def test_addresses_html_does_not_call_valid_are_refused_look_alikes_among_them(stack, email):
    answer = register(email=email)
    assert answer.status == 400 and answer.error["code"] == "VALIDATION_ERROR", answer
    assert [f["field"] for f in answer.error["details"]["fields"]] == ["email"]
    assert users_items(stack) == []


@pytest.mark.parametrize("email", ["\u0438\u0432\u0430\u043d@\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444",
                                   "\u5c71\u7530taro@example.jp", "\u00f1and\u00fa@example.es"])
def test_accounts_registered_with_non_ascii_addresses_still_sign_in(stack, email):
    registered_before(email)
    assert login(email=email).status == 200
    assert login(email=email.upper()).status == 200  # compared normalised, as before
    assert register(email=email).status == 400  # but no new one is registered so


def test_an_internationalised_domain_registers_in_its_a_label_form(stack):
    assert register(email="ivan@xn--e1afmkfd.xn--p1ai").status == 201
    assert login(email="IVAN@XN--E1AFMKFD.XN--P1AI").status == 200


def test_login_gives_a_working_token_a_refresh_token_and_a_safe_cookie(stack):
    register()
    answer = login()
    assert answer.status == 200, answer
    pair = answer.data
    assert pair["tokenType"] == "Bearer" and pair["expiresIn"] == 900
    assert pair["refreshToken"].startswith("rt_ses_")
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"refresh_token={pair['refreshToken']};")
    assert all(flag in cookie for flag in ("HttpOnly", "Secure", "SameSite=Strict", "Path=/api/v1/auth"))
    # the address's failed sign-ins, not the credential's requests: a success counts nothing
    assert answer.headers["x-ratelimit-limit"] == "50" and answer.headers["x-ratelimit-remaining"] == "50"
    assert projects(pair["accessToken"]).status == 200
    me = call("auth", "Auth-Me", token=pair["accessToken"])
    assert me.status == 200 and me.data["user"]["email"] == "ada@example.com"
    assert me.data["tenant"]["id"] == pair["tenant"]["id"] and me.data["tenants"] == [me.data["tenant"]]
    assert "keys:write" in me.data["scopes"] and me.data["credential"] == "user"


def test_unknown_e_mail_and_wrong_password_get_the_same_401(stack):
    register()
    unknown, wrong = login(email="nobody@example.com"), login(password="wrong password!!")
    assert unknown.status == wrong.status == 401
    assert unknown.error == wrong.error


def test_disabling_an_account_ends_its_sign_ins_and_cli_keys_but_not_the_tenant_keys(stack, capsys):
    import json

    from ops.__main__ import main as ops
    from tests.integration import test_device_login as device

    register()
    pair = login().data
    started, state, verifier = device.start()
    device.complete(started.data["loginId"], state, pair["accessToken"])
    cli_key = device.exchange(started.data["loginId"], verifier).data["token"]
    tenant_key = call("api_keys", "ApiKeys-CreateKey", token=pair["accessToken"],
                      body={"name": "backend", "type": "sdk", "environment": "Production",
                            "scopes": ["projects:read"]}).data["key"]
    assert projects(cli_key).status == projects(tenant_key).status == projects(pair["accessToken"]).status == 200

    assert ops(["users", "disable", "ada@example.com"]) == 0
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["status"] == "disabled" and outcome["sessionsEnded"] == 1 and outcome["cliKeysRevoked"] == 1
    refused = login()
    assert refused.status == 403 and refused.error["details"]["reason"] == "account_disabled"
    assert projects(pair["accessToken"]).status == 401  # its session ended: no 15-minute grace
    assert refresh(pair["refreshToken"]).status == 401
    assert projects(cli_key).status == 401
    assert projects(tenant_key).status == 200  # the tenant's key, not the user's

    assert ops(["users", "enable", "ada@example.com"]) == 0
    assert login().status == 200
    assert projects(cli_key).status == 401  # what was ended stays ended
    assert ops(["users", "disable", "nobody@example.com"]) == 1


HOUR = 1_900_000_800.0  # a multiple of 3600 (and so of 900 and 60): windows start here


def test_failures_from_one_address_lock_out_that_address_only(stack, monkeypatch):
    clock = Clock(monkeypatch, HOUR + 10)
    register()
    attacker, owner = "198.51.100.66", "203.0.113.5"
    statuses = [login(password=f"wrong password {i}", source_ip=attacker).status for i in range(5)]
    assert statuses == [401] * 5
    blocked = login(source_ip=attacker)  # even the right password, from that address
    assert blocked.status == 429 and blocked.error["code"] == "RATE_LIMIT_EXCEEDED"
    assert blocked.error["details"]["counter"] == "account_address"
    assert blocked.headers["retry-after"] == str(15 * 60 - 10)
    assert login(source_ip=owner).status == 200  # the owner, elsewhere, is not locked out
    assert login(email="someone-else@example.com", source_ip=attacker).status == 401  # other accounts
    clock.travel(15 * 60 - 10)  # the window ends
    assert login(source_ip=attacker).status == 200


@pytest.fixture
def twelve_failures_an_hour(setting):
    setting("LOGIN_ACCOUNT_FAILURES_PER_HOUR", "12")


def test_many_failures_from_everywhere_only_slow_the_account(stack, monkeypatch, twelve_failures_an_hour):
    clock = Clock(monkeypatch, HOUR + 10)
    register()
    for address in ("198.51.100.1", "198.51.100.2", "198.51.100.3"):
        for i in range(4):  # below each address's own limit
            assert login(password=f"wrong {i} password", source_ip=address).status == 401
    # past 12 failures an hour, one attempt on the account every 5 seconds, from any address
    assert login(password="wrong again password", source_ip="198.51.100.4").status == 401
    slowed = login(source_ip="203.0.113.5")
    assert slowed.status == 429 and slowed.error["details"]["counter"] == "account"
    assert 1 <= int(slowed.headers["retry-after"]) <= 5
    clock.travel(int(slowed.headers["retry-after"]))
    assert login(source_ip="203.0.113.5").status == 200  # a short wait, never a lockout


def fail_from_everywhere(count=12):
    """Failures for ada's account from addresses that each stay below their own limit (4 each)."""
    for n in range(count):
        assert login(password=f"wrong {n} password", source_ip=f"198.51.100.{1 + n // 4}").status == 401


def test_an_address_the_owner_signed_in_from_is_never_slowed(stack, monkeypatch, twelve_failures_an_hour):
    Clock(monkeypatch, HOUR + 10)
    register()
    owner = "203.0.113.5"
    assert login(source_ip=owner).status == 200  # from now on the address is known at the account
    fail_from_everywhere()
    # the account is slowed: a stranger takes this window's one attempt, the next stranger waits...
    assert login(password="wrong again password", source_ip="198.51.100.40").status == 401
    assert login(password="and again password", source_ip="198.51.100.41").error["details"]["counter"] == "account"
    for _ in range(3):  # ...but the owner's address is not slowed, however often the slot is taken
        assert login(source_ip=owner).status == 200
    # its own failures still lock it out for the account (per account and address)
    for n in range(5):
        assert login(password=f"owner's typo {n}", source_ip=owner).status == 401
    locked = login(source_ip=owner)
    assert locked.status == 429 and locked.error["details"]["counter"] == "account_address"
    marks = [i["pk"]["S"] for i in stack.client("dynamodb").scan(TableName="RateLimitsTable")["Items"]
             if i["pk"]["S"].startswith("login-known#")]
    assert len(marks) == 1 and "ada" not in marks[0] and owner not in marks[0]  # hashed


def test_a_right_password_from_a_new_address_waits_for_the_shared_attempt_then_is_known(
        stack, monkeypatch, twelve_failures_an_hour):
    clock = Clock(monkeypatch, HOUR + 10)
    register()
    fail_from_everywhere()
    assert login(password="wrong again password", source_ip="198.51.100.40").status == 401  # the slot
    right = login(source_ip="203.0.113.7")
    wrong = login(password="a wrong guess here", source_ip="203.0.113.8")
    # refused before the password is looked at: the answer says nothing of whether it was right
    assert right.status == wrong.status == 429 and right.error == wrong.error
    assert right.error["details"]["counter"] == "account"
    clock.travel(int(right.headers["retry-after"]))
    assert login(source_ip="203.0.113.7").status == 200  # it had the next shared attempt
    assert login(password="wrong once more password", source_ip="198.51.100.42").status == 429  # used
    assert login(source_ip="203.0.113.7").status == 200  # known now: not slowed
    assert login(source_ip="203.0.113.8").status == 429  # the other new address still shares the slot


def test_an_address_is_known_for_90_days_after_it_last_signed_in(stack, monkeypatch):
    from svc_core.platform import config
    monkeypatch.setenv("LOGIN_ACCOUNT_FAILURES_PER_HOUR", "2")
    config.settings.cache_clear()
    clock = Clock(monkeypatch, HOUR + 10)
    register()
    owner, day = "203.0.113.5", 86400

    def slowed_for_owner():
        clock.travel(3600)  # a new hour: a new count of failures from everywhere
        fail_from_everywhere(3)  # the last of them takes the window's attempt
        return login(source_ip=owner).status == 429

    assert login(source_ip=owner).status == 200
    clock.travel(60 * day)
    assert not slowed_for_owner()  # known (and this sign-in renews it)
    clock.travel(89 * day)
    assert not slowed_for_owner()
    clock.travel(91 * day)
    assert slowed_for_owner()  # forgotten: it shares the slowed attempt as any new address
    config.settings.cache_clear()


def test_refresh_rotates_and_a_replayed_token_ends_the_whole_session(stack):
    register()
    first = login().data
    second = refresh(first["refreshToken"])
    assert second.status == 200, second
    assert second.data["refreshToken"] != first["refreshToken"]
    assert projects(second.data["accessToken"]).status == 200
    replay = refresh(first["refreshToken"])
    assert replay.status == 401 and replay.error["details"]["reason"] == "refresh_token_reused"
    assert refresh(second.data["refreshToken"]).status == 401          # the family is revoked
    assert projects(second.data["accessToken"]).status == 401          # and its access tokens at once
    assert projects(first["accessToken"]).status == 401


def test_a_forged_refresh_token_for_a_real_session_is_refused_without_ending_it(stack):
    register()
    pair = login().data
    session = pair["refreshToken"].split(".")[0]
    forged = refresh(session + "." + "A" * 43)
    assert forged.status == 401
    assert refresh(pair["refreshToken"]).status == 200


def test_refresh_reads_the_cookie_when_the_body_has_no_token(stack):
    register()
    pair = login().data
    answer = refresh(headers={"Cookie": f"refresh_token={pair['refreshToken']}"})
    assert answer.status == 200, answer


def test_logout_ends_the_session_its_tokens_and_clears_the_cookie(stack):
    register()
    pair = login().data
    out = call("auth", "Auth-Logout", body={"refreshToken": pair["refreshToken"]})
    assert out.status == 200 and out.data["loggedOut"] is True
    assert "Max-Age=0" in out.headers["set-cookie"]
    assert projects(pair["accessToken"]).status == 401
    assert refresh(pair["refreshToken"]).status == 401


def test_logout_with_the_access_token_alone(stack):
    register()
    pair = login().data
    out = call("auth", "Auth-Logout", token=pair["accessToken"])
    assert out.status == 200
    assert projects(pair["accessToken"]).status == 401


def _second_tenant(stack, user_id, role):
    from svc_core.data import users_table
    from svc_core.data.common import transact
    from svc_core.platform import timeutil
    tenant_id = stack.new_tenant("Second")
    transact([users_table.put_membership(user_id, tenant_id, role, timeutil.iso(timeutil.now() + 1))])
    return tenant_id


def test_a_member_of_several_tenants_gets_a_token_for_any_of_them_and_no_other(stack):
    user_id = register().data["user"]["id"]
    second = _second_tenant(stack, user_id, "member")
    pair = login(tenantId=second).data
    assert pair["tenant"]["id"] == second and pair["tenant"]["role"] == "member"
    assert sorted(call("auth", "Auth-Me", token=pair["accessToken"]).data["scopes"]) == sorted(
        ["agents:read", "agents:write", "billing:read", "chat:read", "chat:write", "events:read", "projects:read",
         "projects:write", "secrets:read", "tenants:read", "webhooks:read", "members:read"])
    stranger = stack.new_tenant("Not mine")
    refused = login(tenantId=stranger)
    assert refused.status == 403 and refused.error["details"]["tenantId"] == stranger
    personal = login().data["tenant"]["id"]
    mine = call("auth", "Auth-Me", token=pair["accessToken"]).data["tenants"]
    assert {t["id"] for t in mine} == {second, personal}
    switched = call("auth", "Auth-Refresh", body={"refreshToken": pair["refreshToken"], "tenantId": personal})
    assert switched.status == 200 and switched.data["tenant"] == {**switched.data["tenant"], "id": personal,
                                                                   "role": "owner"}
    assert call("auth", "Auth-Me", token=switched.data["accessToken"]).data["tenant"]["id"] == personal
    stranger_switch = call("auth", "Auth-Refresh", body={"refreshToken": switched.data["refreshToken"],
                                                          "tenantId": stranger})
    assert stranger_switch.status == 403


def test_a_member_cannot_manage_keys(stack):
    user_id = register().data["user"]["id"]
    second = _second_tenant(stack, user_id, "member")
    token = login(tenantId=second).data["accessToken"]
    made = call("api_keys", "ApiKeys-CreateKey", token=token, body={"name": "k", "type": "sdk",
                                                                     "environment": "Production"})
    assert made.status == 403 and made.error["details"]["requiredScope"] == "keys:write"


def test_me_with_an_api_key_describes_the_key(stack):
    tenant, key = stack.tenant_with_key(["projects:read"])
    me = call("auth", "Auth-Me", token=key)
    assert me.status == 200 and me.data["credential"] == "api_key" and me.data["user"] is None
    assert me.data["tenant"]["id"] == tenant and me.data["scopes"] == ["projects:read"]


def test_me_without_a_credential_is_401(stack):
    assert call("auth", "Auth-Me").status == 401


def test_no_password_reaches_a_log_line_even_at_debug(stack, caplog, capsys):
    import logging
    caplog.set_level(logging.DEBUG)  # every logger at DEBUG, as a deployment's LogLevel=DEBUG would
    logging.getLogger("aws_lambda_powertools").setLevel(logging.DEBUG)
    secret_password = "debug-level password 1234"
    register(email="dbg@example.com", password=secret_password)
    assert login(email="dbg@example.com", password=secret_password).status == 200
    assert login(email="dbg@example.com", password=secret_password + "x").status == 401
    assert any(r.levelno == logging.DEBUG for r in caplog.records)  # debug lines were written
    assert secret_password not in caplog.text and secret_password not in capsys.readouterr().out


def test_an_ended_session_is_told_in_a_session_s_words_not_an_api_key_s(stack):
    register()
    pair = login().data
    assert call("auth", "Auth-Logout", body={"refreshToken": pair["refreshToken"]}).status == 200
    answer = projects(pair["accessToken"])
    assert answer.status == 401 and answer.error["details"]["reason"] == "session_ended"
    assert "sign in again" in answer.error["message"] and "API key" not in answer.error["message"]


def test_a_revoked_api_key_is_still_told_as_an_api_key(stack):
    _, admin = stack.tenant_with_key(["keys:read", "keys:write", "projects:read"])
    body = {"name": "CI deploys", "type": "ci", "environment": "Production", "scopes": ["projects:read"]}
    made = call("api_keys", "ApiKeys-CreateKey", token=admin, body=body).data
    assert projects(made["key"]).status == 200                # counted: its counter exists
    assert call("api_keys", "ApiKeys-RevokeKey", token=admin, path_params={"id": made["id"]}).status == 200
    answer = projects(made["key"])
    assert answer.status == 401 and "API key" in answer.error["message"]
    assert answer.error["details"].get("reason") != "session_ended"
