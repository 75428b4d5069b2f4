"""A person's own account through the client library on the local stack over real HTTP: a forgotten
password reset with the link read from the local mailbox, the password changed, the sessions listed
and ended, the name changed; and the same routes refused to an API key."""

from __future__ import annotations

import secrets

import pytest

from svc_client import Client, Conflict, Forbidden, InvalidCredentials, NotFound, Unauthorized
from tests.support import mailbox


def test_a_forgotten_password_is_reset_with_the_mailed_link_and_every_session_ends(account):
    with Client(account["baseUrl"]) as signed_in, Client(account["baseUrl"]) as browser:
        signed_in.auth.login(account["email"], account["password"])
        asked = browser.auth.forgot_password(account["email"])
        assert (asked.email, asked.expires_in) == (account["email"], 1800)
        unknown = f"nobody-{secrets.token_hex(4)}@example.com"
        assert browser.auth.forgot_password(unknown).expires_in == 1800 and mailbox.messages(to=unknown) == []
        token = mailbox.token_of(mailbox.latest_link(to=account["email"]))
        done = browser.auth.reset_password(token, "a new password from the mail")
        assert (done.email, done.sessions_ended) == (account["email"], 1)
        with pytest.raises(Conflict) as used:
            browser.auth.reset_password(token, "a second new password")
        assert used.value.details["reason"] == "used"
        with pytest.raises(NotFound):
            browser.auth.reset_password(token.split(".")[0] + "." + "A" * 43, "a third new password")
        with pytest.raises(Unauthorized):
            signed_in.auth.me()                                  # the old session has ended
        with pytest.raises(InvalidCredentials):
            browser.auth.login(account["email"], account["password"])
        assert browser.auth.login(done.email, "a new password from the mail").user.email == account["email"]


def test_the_signed_in_user_changes_the_password_lists_and_ends_sessions_and_renames(account):
    with Client(account["baseUrl"]) as mine, Client(account["baseUrl"]) as other, \
            Client(account["baseUrl"]) as third:
        for client in (other, third, mine):
            client.auth.login(account["email"], account["password"])
        listed = list(mine.auth.iter_sessions(limit=2))
        assert len(listed) == 3 and [s.current for s in listed] == [True, False, False]
        assert mine.auth.sessions(limit=1).next_cursor is not None
        ended = mine.auth.end_session(listed[2].id)
        assert ended.deleted and ended.id == listed[2].id
        with pytest.raises(Unauthorized):
            other.projects.list()                                # the oldest session was `other`'s
        with pytest.raises(Forbidden) as wrong:
            mine.auth.change_password("not the password at all", "a changed long password")
        assert wrong.value.details["reason"] == "current_password_wrong"
        changed = mine.auth.change_password(account["password"], "a changed long password")
        assert changed.sessions_ended == 1 and changed.current_session_id == listed[0].id
        with pytest.raises(Unauthorized):
            third.projects.list()
        assert mine.projects.list().items == []                  # this session stays
        third.auth.login(account["email"], "a changed long password")
        assert mine.auth.end_other_sessions().sessions_ended == 1
        assert [s.id for s in mine.auth.iter_sessions()] == [listed[0].id]
        assert mine.auth.update_me(name="Renamed Tester").user.name == "Renamed Tester"
        assert mine.auth.me().user.name == "Renamed Tester"


def test_an_api_key_is_refused_the_routes_of_a_persons_own_account(account):
    with Client(account["baseUrl"], api_key=account["key"]) as svc:
        for call in (lambda: svc.auth.change_password("x", "a changed long password"), svc.auth.sessions,
                     svc.auth.end_other_sessions, lambda: svc.auth.end_session("ses_01JD2Q7ZB6V8S3K4X9W2M5N7PA"),
                     lambda: svc.auth.update_me(name="A key")):
            with pytest.raises(Forbidden) as refused:
                call()
            assert refused.value.details["reason"] == "user_required"
