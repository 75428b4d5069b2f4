"""The client library between cells, over real HTTP on loopback: 421 WRONG_REGION followed a
bounded number of times per call, a cell that cannot be reached ending the call with CellUnreachable
(never a way back to the cell that named it), and the refresh of tokens going to the account's cell
while the tenant's calls stay in the tenant's. The servers are tests/support/cell_servers.py; each test counts
the requests they were sent."""

from __future__ import annotations

import asyncio
import time

import pytest

from svc_client import (
    ApiError,
    AsyncClient,
    CellUnreachable,
    Client,
    ConnectionFailed,
    RetryPolicy,
)
from svc_client._core import DEFAULT_MAX_CELL_FOLLOWS
from tests.support.cell_servers import Seen, cell, closed_url, data, wrong_region

PAGE = {"items": [], "nextCursor": None}
PROJECT = {"id": "proj_1", "name": "Apollo", "description": None, "language": "python",
           "created_at": "2026-11-21T21:00:00.000Z", "updated_at": "2026-11-21T21:00:00.000Z"}
FAST = RetryPolicy(backoff=0.01, max_backoff=0.05)   # the backoff's waits kept short; the rules unchanged


class Later:
    """The other cell's URL, known once both servers listen."""

    url = ""


# ---- 421: bounded, and a clear error ----------------------------------------------------------

def test_the_default_number_of_cell_follows_is_3():
    with Client("http://127.0.0.1:9", api_key="k") as svc:
        assert DEFAULT_MAX_CELL_FOLLOWS == 3 and svc.max_cell_follows == 3


def test_two_cells_that_name_each_other_end_the_call_with_cell_unreachable_after_the_allowed_follows():
    """Each cell's directory names the other (cells that disagree while a tenant moves): the call
    ends after 1 + max_cell_follows requests, naming the cell the last 421 pointed to."""
    eu = Later()
    with cell(lambda _: wrong_region(eu.url, "eu-central-1")) as us, \
            cell(lambda _: wrong_region(us.url, "us-east-1")) as eu_server:
        eu.url = eu_server.url
        started = time.monotonic()
        with Client(us.url, api_key="k") as svc, pytest.raises(CellUnreachable) as raised:
            svc.projects.list()
        assert time.monotonic() - started < 30
        assert len(us.seen) + len(eu_server.seen) == 1 + DEFAULT_MAX_CELL_FOLLOWS
        assert (len(us.seen), len(eu_server.seen)) == (2, 2)
        failure = raised.value
        assert (failure.reason, failure.base_url, failure.region) == ("follow_limit", us.url, "us-east-1")
        assert failure.visited == [us.url, eu.url, us.url, eu.url]
        assert us.url in str(failure) and "max_cell_follows" in str(failure)
        assert svc.base_url == us.url   # no cell served: the kept one is unchanged

        with Client(us.url, api_key="k", max_cell_follows=1) as once, pytest.raises(CellUnreachable):
            once.projects.list()
        assert len(us.seen) + len(eu_server.seen) == 4 + 2


def test_the_async_client_ends_the_same_ping_pong_the_same_way():
    eu = Later()
    with cell(lambda _: wrong_region(eu.url)) as us, cell(lambda _: wrong_region(us.url, "us-east-1")) as eu_server:
        eu.url = eu_server.url

        async def run():
            async with AsyncClient(us.url, api_key="k") as svc:
                await svc.projects.list()

        with pytest.raises(CellUnreachable) as raised:
            asyncio.run(run())
        assert raised.value.reason == "follow_limit"
        assert len(us.seen) + len(eu_server.seen) == 1 + DEFAULT_MAX_CELL_FOLLOWS


def test_a_421_to_a_cell_that_cannot_be_reached_raises_cell_unreachable_naming_it():
    """The tenant's home is down and not failed over yet. The entry is asked once: the request is
    never sent back to it (it would only name the same cell)."""
    home = closed_url()
    with cell(lambda _: wrong_region(home)) as entry:
        started = time.monotonic()
        with Client(entry.url, api_key="k", retry=FAST) as svc, pytest.raises(CellUnreachable) as raised:
            svc.projects.list()     # a GET: its connection failures are retried (at the home), then given up
        assert time.monotonic() - started < 30
        assert entry.paths() == ["GET /api/v1/projects"]
        failure = raised.value
        assert (failure.reason, failure.base_url, failure.region) == ("unreachable", home, "eu-central-1")
        assert home in str(failure) and "eu-central-1" in str(failure) and entry.url in str(failure)
        assert isinstance(failure, ConnectionFailed)

        with Client(entry.url, api_key="k") as svc, pytest.raises(CellUnreachable):
            svc.projects.create("Apollo")     # a POST: not sent again anywhere
        assert entry.paths() == ["GET /api/v1/projects", "POST /api/v1/projects"]


def test_a_kept_cell_lost_goes_back_to_the_entry_once_and_ends_when_the_entry_names_it_again():
    """A cell followed earlier goes down: the entry is asked where the tenant is now (after a
    failover it names the new home); naming the lost cell again ends the call at once."""
    state = {"home": ""}
    with cell(lambda _: data(PAGE)) as home, cell(lambda _: wrong_region(state["home"])) as entry:
        state["home"] = home.url
        with Client(entry.url, api_key="k") as svc:
            svc.projects.list()
            assert svc.base_url == home.url
            home.stop()                              # its region lost
            with pytest.raises(CellUnreachable) as raised:
                svc.projects.list()
        assert raised.value.base_url == home.url and raised.value.reason == "unreachable"
        assert len(entry.seen) == 2 and len(home.seen) == 1


def test_a_kept_cell_lost_after_a_failover_reaches_the_new_home_through_the_entry():
    state = {"home": ""}
    with cell(lambda _: data(PAGE)) as old_home, \
            cell(lambda seen: data(PROJECT, 201) if seen.method == "POST" else data(PAGE)) as new_home, \
            cell(lambda _: wrong_region(state["home"])) as entry:
        moved: list[str] = []
        state["home"] = old_home.url
        with Client(entry.url, api_key="k", on_moved=moved.append) as svc:
            svc.projects.list()
            old_home.stop()
            state["home"] = new_home.url             # the tenant failed over
            svc.projects.create("Apollo")            # a POST: nothing was sent to the lost cell, so it goes on
        assert moved == [old_home.url, new_home.url]
        assert new_home.paths() == ["POST /api/v1/projects"] and len(entry.seen) == 2


# ---- the refresh goes to the account's cell ----------------------------------------------------

def grant(n: int) -> dict:
    return {"accessToken": f"jwt-{n}", "tokenType": "Bearer", "expiresIn": 900, "refreshToken": f"rt-{n}",
            "refreshExpiresIn": 2592000, "user": {"id": "usr_1"}, "tenant": {"id": "ten_1", "name": "A"}}


class Clock:
    def __init__(self):
        self.now = 1_000_000.0

    def __call__(self):
        return self.now


def two_cells():
    """The tenant's cell (which holds no session) and the account's (which holds no tenant)."""
    urls = {"tenant": "", "account": ""}
    issued = iter(range(1, 100))

    def tenant_cell(seen: Seen):
        if seen.path.startswith("/api/v1/auth/"):
            return wrong_region(urls["account"], "eu-central-1")
        return data(PAGE)

    def account_cell(seen: Seen):
        if seen.path == "/api/v1/auth/logout":
            return data({"loggedOut": True, "sessionId": "ses_1"})
        if seen.path.startswith("/api/v1/auth/"):
            return data(grant(next(issued)))
        return wrong_region(urls["tenant"], "us-east-1")

    return urls, tenant_cell, account_cell


def test_a_refresh_answered_421_follows_to_the_accounts_cell_and_the_tenants_calls_stay_in_the_tenants():
    urls, tenant_cell, account_cell = two_cells()
    clock = Clock()
    with cell(tenant_cell) as tenant, cell(account_cell) as account:
        urls.update(tenant=tenant.url, account=account.url)
        moved: list[str] = []
        with Client(tenant.url, api_key=None, clock=clock, on_moved=moved.append) as svc:
            svc.auth.refresh("rt-0")                 # a refresh token from elsewhere, sent to the tenant's cell
            svc.projects.list()
            clock.now += 900                         # the token expires: the client refreshes by itself
            svc.projects.list()
            assert (svc.base_url, svc.account_url) == (tenant.url, account.url)
        assert tenant.paths() == ["POST /api/v1/auth/refresh", "GET /api/v1/projects", "GET /api/v1/projects"]
        assert account.paths() == ["POST /api/v1/auth/refresh", "POST /api/v1/auth/refresh"]
        assert [s.body["refreshToken"] for s in account.seen] == ["rt-0", "rt-1"]
        assert [s.headers["authorization"] for s in tenant.seen[1:]] == ["Bearer jwt-1", "Bearer jwt-2"]
        assert moved == []                           # the tenant's cell never changed


def test_a_login_answered_421_keeps_the_accounts_cell_for_the_refresh_and_learns_the_tenants_from_its_421():
    urls, tenant_cell, account_cell = two_cells()
    clock = Clock()
    with cell(tenant_cell) as tenant, cell(account_cell) as account:
        urls.update(tenant=tenant.url, account=account.url)
        with Client(tenant.url, api_key=None, clock=clock) as svc:
            svc.auth.login("a@example.com", "a long enough password")
            svc.projects.list()                      # tried in the account's cell first (its workspace is mostly there)
            clock.now += 900
            svc.projects.list()
            svc.auth.logout()
            assert (svc.base_url, svc.account_url) == (tenant.url, account.url)
        assert tenant.paths() == ["POST /api/v1/auth/login", "GET /api/v1/projects", "GET /api/v1/projects"]
        assert account.paths() == ["POST /api/v1/auth/login", "GET /api/v1/projects", "POST /api/v1/auth/refresh",
                                   "POST /api/v1/auth/logout"]


def test_a_refresh_sent_round_in_circles_ends_with_cell_unreachable_and_is_not_an_unauthorized():
    seen_unauthorized: list[ApiError] = []
    other = Later()
    with cell(lambda _: wrong_region(other.url)) as one, cell(lambda _: wrong_region(one.url)) as two:
        other.url = two.url
        with Client(one.url, api_key=None, on_unauthorized=seen_unauthorized.append) as svc, \
                pytest.raises(CellUnreachable):
            svc.auth.refresh("rt-0")
        assert len(one.seen) + len(two.seen) == 1 + DEFAULT_MAX_CELL_FOLLOWS and seen_unauthorized == []


def test_the_cli_says_which_cell_it_cannot_reach_not_to_check_the_base_url(tmp_path):
    from click.testing import CliRunner

    from svc_client.cli import cli
    home = closed_url()
    with cell(lambda _: wrong_region(home)) as entry:
        result = CliRunner().invoke(cli, ["--base-url", entry.url, "projects", "list"], env={
            "SVC_API_KEY": "svc_sdk_test", "SVC_CONFIG_DIR": str(tmp_path), "SVC_CREDENTIAL_STORE": "file",
            "SVC_PROFILE": None, "SVC_BASE_URL": None})
    assert result.exit_code == 1 and f"Cannot reach the cell eu-central-1 at {home}" in result.stderr
    assert "--base-url" not in result.stderr
