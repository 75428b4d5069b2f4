"""People whose account and tenant live in different cells, on the two-cell local stack: a tenant of
us-east-1 moved to eu-central-1 while its owner's and a member's accounts stay in us-east-1; both sign
in, refresh and keep working; their sign-ins are audited in the tenant's home; a member lists and ends
their sessions and changes their name at the tenant's cell (their password only at their own); an account of
us-east-1 joins the tenant by invitation; a removed member's tokens end at once in the tenant's cell
and their refresh in the account's. The tests run in order, each on what the one before left."""

from __future__ import annotations

import threading
import time
import uuid

import httpx
import pytest

from tests.support.cells import TwoCells
from tests.support.waiting import until

pytestmark = pytest.mark.long_running   # two whole stacks, each in a process of its own

US, EU = "us-east-1", "eu-central-1"
PASSWORD = "across-cells-password-0123"


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TENANT_POLICY_CACHE_SECONDS", "2")
        with TwoCells(tmp_path_factory.mktemp("cells")).start() as pair:
            yield pair


def _address(who: str) -> str:
    return f"{who}-{uuid.uuid4().hex[:10]}@example.com"


class Person:
    """A person at an API base URL, over plain HTTP: follows a 421 to the cell it names, once per call
    (as both clients do), and remembers the cells it was sent to."""

    def __init__(self, base_url: str, email: str) -> None:
        self.base_url, self.email = base_url, email
        self.access: str | None = None
        self.refresh_token: str | None = None
        self.sent_to: list[str] = []
        self.http = httpx.Client(timeout=30)

    def call(self, method: str, path: str, *, token: str | None = None, base: str | None = None,
             **kwargs) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token or self.access}"} if (token or self.access) else {}
        url = (base or self.base_url) + path
        answer = self.http.request(method, url, headers=headers, **kwargs)
        if answer.status_code == 421:
            moved = answer.json()["error"]["details"]["baseUrl"]
            self.sent_to.append(moved)
            answer = self.http.request(method, moved + path, headers=headers, **kwargs)
        return answer

    def register(self, region: str) -> dict:
        made = self.call("POST", "/api/v1/auth/register",
                         json={"email": self.email, "password": PASSWORD, "name": self.email.split("-")[0], "region": region})
        assert made.status_code == 201, made.text
        return made.json()["data"]

    def login(self, tenant_id: str | None = None) -> httpx.Response:
        answer = self.call("POST", "/api/v1/auth/login",
                           json={"email": self.email, "password": PASSWORD, **({"tenantId": tenant_id} if tenant_id else {})})
        if answer.status_code == 200:
            self.access, self.refresh_token = answer.json()["data"]["accessToken"], answer.json()["data"]["refreshToken"]
        return answer

    def refresh(self, base: str | None = None) -> httpx.Response:
        answer = self.call("POST", "/api/v1/auth/refresh", base=base, json={"refreshToken": self.refresh_token})
        if answer.status_code == 200:
            self.access, self.refresh_token = answer.json()["data"]["accessToken"], answer.json()["data"]["refreshToken"]
        return answer


class Writer(threading.Thread):
    """Changes a project through the Python client with an API key until told to finish, counting the
    statuses its transport saw (the client's retries and 421 follows included) and any error raised."""

    def __init__(self, base_url: str, key: str) -> None:
        super().__init__(daemon=True)
        self.base_url, self.key = base_url, key
        self.statuses: dict[int, int] = {}
        self.errors: list[str] = []
        self.made, self.moved_to = 0, []
        self._finished = threading.Event()

    def run(self) -> None:
        from svc_client import Client
        writer = self

        class Counting(httpx.HTTPTransport):
            def handle_request(self, request):
                answer = super().handle_request(request)
                writer.statuses[answer.status_code] = writer.statuses.get(answer.status_code, 0) + 1
                return answer
        with Client(self.base_url, api_key=self.key, transport=Counting(), on_moved=self.moved_to.append) as svc:
            project = svc.projects.create("written during the move")   # then changed (a plan allows few projects)
            while not self._finished.is_set():
                try:
                    svc.projects.update(project.id, description=f"change {self.made}")
                    self.made += 1
                except Exception as exc:  # any failure is what the test counts
                    self.errors.append(f"{type(exc).__name__}: {exc}")
                time.sleep(0.1)

    def finish(self) -> None:
        self._finished.set()
        self.join(60)


def _audit_items(cell, tenant_id: str) -> list[dict]:
    client, table = cell.dynamodb(), cell.environment["AUDIT_LOG_TABLE"]
    answer = client.query(TableName=table, KeyConditionExpression="tenantId = :t",
                          ExpressionAttributeValues={":t": {"S": tenant_id}}, ConsistentRead=True)
    return answer["Items"]


@pytest.fixture(scope="module")
def state(cells):
    return {}


def _owner_and_member(cell, prefix: str = "") -> tuple[Person, Person, str]:
    """Two accounts of the cell, each with a workspace of its own; the second invited to the first's
    (and accepting signed in): the owner, the member and the owner's tenant id."""
    owner, member = Person(cell.base_url, _address(prefix + "owner")), Person(cell.base_url, _address(prefix + "member"))
    tenant_id = owner.register(cell.region)["tenant"]["id"]
    member.register(cell.region)
    assert owner.login().status_code == 200
    invited = owner.call("POST", "/api/v1/invitations", json={"email": member.email, "role": "member"})
    assert invited.status_code == 201, invited.text
    token = _invitation_token(cell, member.email)
    assert member.login().status_code == 200   # into the member's own workspace
    joined = member.call("POST", "/api/v1/invitations/accept", json={"token": token})
    assert joined.status_code == 200, joined.text
    return owner, member, tenant_id


def test_a_tenant_of_the_us_cell_with_a_member_moves_to_the_eu_cell(cells, state):
    us, eu = cells.cell(US), cells.cell(EU)
    owner, member, tenant_id = _owner_and_member(us)

    # A writer through the Python client while the tenant moves: the switch's write pause (503
    # tenant_moving) is retried after its Retry-After, the 421 after it followed; no call fails.
    key = owner.call("POST", "/api/v1/api-keys", json={"name": "writer", "type": "sdk", "environment": "Production"})
    assert key.status_code == 201, key.text
    writer = Writer(us.base_url, key.json()["data"]["key"])
    writer.start()
    # The eu cell's resources reach the us cell's copy of the directory after the replication's lag.
    started = until(lambda: (a := owner.call("POST", f"/api/v1/regions/migrations/{tenant_id}", json={"toRegion": EU}))
                    .status_code != 409 and a, seconds=60)
    assert started and started.status_code == 202, started.text
    done = until(lambda: (m := owner.call("GET", f"/api/v1/regions/migrations/{tenant_id}")).status_code == 200
                 and m.json()["data"]["status"] in ("done", "failed") and m.json()["data"], seconds=300)
    assert done and done["status"] == "done", done
    writer.finish()
    assert writer.errors == [] and writer.made > 0, writer.errors
    assert writer.statuses.get(503, 0) >= 1 and writer.moved_to == [eu.base_url], (writer.statuses, writer.moved_to)
    state.update(tenant_id=tenant_id, owner=owner, member=member)
    # The accounts stayed in the us cell; the memberships moved with the tenant.
    for person in (owner, member):
        user_id = person.call("GET", "/api/v1/auth/me").json()["data"]["user"]["id"]
        assert us.dynamodb().get_item(TableName=us.environment["USERS_TABLE"],
                                      Key={"pk": {"S": f"USER#{user_id}"}, "sk": {"S": "PROFILE"}}).get("Item")
        assert not us.dynamodb().get_item(TableName=us.environment["USERS_TABLE"],
                                          Key={"pk": {"S": f"USER#{user_id}"}, "sk": {"S": f"MEMBER#{tenant_id}"}}).get("Item")
        assert eu.dynamodb().get_item(TableName=eu.environment["USERS_TABLE"],
                                      Key={"pk": {"S": f"USER#{user_id}"}, "sk": {"S": f"MEMBER#{tenant_id}"}}).get("Item")


def _invitation_token(cell, address: str) -> str:
    """The accept link's token from the e-mail the cell sent (its local mailbox)."""
    import re
    mail = httpx.get(f"{cell.base_url}/_local/mailbox.json", params={"to": address}, timeout=30).json()
    messages = mail["messages"] if isinstance(mail, dict) else mail
    for message in messages:
        found = re.search(r"token=([A-Za-z0-9_.\-]+)", message.get("body") or message.get("text") or "")
        if found:
            return found.group(1)
    raise AssertionError(f"no invitation link sent to {address}: {messages!r}")


def test_the_owner_and_the_member_sign_in_at_their_accounts_cell_and_work_in_the_tenants(cells, state):
    us, eu = cells.cell(US), cells.cell(EU)
    tenant_id = state["tenant_id"]
    for person, role in ((state["owner"], "owner"), (state["member"], "member")):
        person.base_url, person.access = eu.base_url, None   # a client starting at the tenant's cell
        signed_in = person.login(tenant_id)
        assert signed_in.status_code == 200, signed_in.text
        assert signed_in.json()["data"]["tenant"] == {**signed_in.json()["data"]["tenant"], "id": tenant_id, "role": role}
        assert person.refresh_token.endswith(f".{US}")   # the session is kept in the account's cell
        projects = person.call("GET", "/api/v1/projects")
        assert projects.status_code == 200, projects.text
        me = person.call("GET", "/api/v1/auth/me")
        assert me.status_code == 200, me.text
        assert me.json()["data"]["user"]["email"] == person.email and me.json()["data"]["tenant"]["role"] == role
        assert tenant_id in {t["id"] for t in me.json()["data"]["tenants"]}
    made = state["member"].call("POST", "/api/v1/projects", json={"name": "Made by a member of another cell"})
    assert made.status_code == 201, made.text
    # The owner's sign-in is audited in the tenant's home, and nothing of the tenant is written in the us cell.
    signed = [i for i in _audit_items(eu, tenant_id) if i["action"]["S"] == "user.signed_in"]
    assert signed, "no sign-in entry in the tenant's home"
    assert _audit_items(us, tenant_id) == []


def test_a_refresh_at_the_tenants_cell_is_sent_to_the_accounts_cell_and_rotates_there(cells, state):
    us, eu = cells.cell(US), cells.cell(EU)
    owner = state["owner"]
    old = owner.refresh_token
    at_eu = httpx.post(f"{eu.base_url}/api/v1/auth/refresh", json={"refreshToken": old}, timeout=30)
    assert at_eu.status_code == 421 and at_eu.json()["error"]["details"]["baseUrl"] == us.base_url
    refreshed = owner.refresh(base=eu.base_url)
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.json()["data"]["tenant"]["id"] == state["tenant_id"]
    assert owner.call("GET", "/api/v1/projects").status_code == 200
    replayed = httpx.post(f"{us.base_url}/api/v1/auth/refresh", json={"refreshToken": old}, timeout=30)
    assert replayed.status_code == 401 and replayed.json()["error"]["details"]["reason"] == "refresh_token_reused"
    # The reuse ended the session: its access token is refused at the tenant's cell too, at once.
    assert owner.call("GET", "/api/v1/projects").status_code == 401
    assert owner.login(state["tenant_id"]).status_code == 200


def test_a_person_of_the_us_cell_lists_and_ends_sessions_and_renames_at_the_eu_tenants_cell(cells, state):
    us, eu = cells.cell(US), cells.cell(EU)
    owner, member, tenant_id = state["owner"], state["member"], state["tenant_id"]
    elsewhere = Person(eu.base_url, member.email)
    assert elsewhere.login(tenant_id).status_code == 200              # a second sign-in, kept in the us cell
    other_id = elsewhere.refresh_token[3:].split(".")[0]
    # Served by the tenant's cell, read from the account's, which keeps the sessions.
    redirects = len(member.sent_to)
    listed = member.call("GET", "/api/v1/auth/sessions")
    assert listed.status_code == 200 and len(member.sent_to) == redirects, listed.text
    sessions = {s["id"]: s for s in listed.json()["data"]["items"]}
    assert sessions[other_id]["current"] is False and sessions[other_id]["currentTenantId"] == tenant_id
    assert [s["id"] for s in sessions.values() if s["current"]] == [member.refresh_token[3:].split(".")[0]]
    ended = member.call("DELETE", f"/api/v1/auth/sessions/{other_id}")
    assert ended.status_code == 200, ended.text
    assert elsewhere.call("GET", "/api/v1/projects").status_code == 401       # at the tenant's cell, at once
    assert elsewhere.refresh(base=us.base_url).status_code == 401             # and its refresh in the account's
    assert member.call("GET", "/api/v1/projects").status_code == 200
    # The password is checked in the account's cell alone.
    changed = member.call("POST", "/api/v1/auth/password",
                          json={"currentPassword": PASSWORD, "newPassword": "a changed across-cells password"})
    assert changed.status_code == 409, changed.text
    assert changed.json()["error"]["details"] == {"reason": "account_in_another_region", "region": US}
    # The name: the profile in the account's cell, the member list's copy in the tenant's.
    renamed = member.call("PATCH", "/api/v1/auth/me", json={"name": "Mia Renamed"})
    assert renamed.status_code == 200 and renamed.json()["data"]["user"]["name"] == "Mia Renamed", renamed.text
    listed_members = owner.call("GET", "/api/v1/members").json()["data"]["items"]
    assert {m["email"]: m["name"] for m in listed_members}[member.email] == "Mia Renamed"
    user_id = renamed.json()["data"]["user"]["id"]
    profile = us.dynamodb().get_item(TableName=us.environment["USERS_TABLE"], ConsistentRead=True,
                                     Key={"pk": {"S": f"USER#{user_id}"}, "sk": {"S": "PROFILE"}})["Item"]
    assert profile["name"]["S"] == "Mia Renamed"


def test_an_account_of_the_us_cell_joins_the_eu_tenant_by_invitation(cells, state):
    us, eu = cells.cell(US), cells.cell(EU)
    owner, tenant_id = state["owner"], state["tenant_id"]
    joiner = Person(us.base_url, _address("joiner"))
    joiner.register(US)
    invited = owner.call("POST", "/api/v1/invitations", json={"email": joiner.email, "role": "member"})
    assert invited.status_code == 201, invited.text
    token = _invitation_token(eu, joiner.email)
    # The new account's claim reaches the eu cell's copy of the directory after the replication's lag.
    looked = until(lambda: (a := httpx.get(f"{eu.base_url}/api/v1/invitations/lookup", params={"token": token},
                                           timeout=30)).status_code != 200 or a.json()["data"]["accountExists"] and a,
                   seconds=30)
    assert looked and looked.status_code == 200 and looked.json()["data"]["accountExists"] is True, looked.text
    with_password = httpx.post(f"{eu.base_url}/api/v1/invitations/accept",
                               json={"token": token, "password": PASSWORD}, timeout=30)
    assert with_password.status_code == 409 and with_password.json()["error"]["details"]["reason"] == "account_exists"
    assert joiner.login().status_code == 200            # their own workspace, in the us cell
    accepted = joiner.call("POST", "/api/v1/invitations/accept", base=eu.base_url, json={"token": token})
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()["data"]["tenant"]["id"] == tenant_id
    members = owner.call("GET", "/api/v1/members")
    assert joiner.email in {m["email"] for m in members.json()["data"]["items"]}
    joiner.base_url, joiner.access = us.base_url, None
    assert joiner.login(tenant_id).status_code == 200     # at their account's cell, into the eu tenant
    assert joiner.call("GET", "/api/v1/projects").status_code == 200
    # A switch between their tenants of the two cells is a refresh naming the other tenant.
    own = joiner.call("GET", "/api/v1/auth/me").json()["data"]["tenants"]
    assert {t["id"] for t in own} >= {tenant_id} and len(own) == 2, own
    other = next(t["id"] for t in own if t["id"] != tenant_id)
    switched = joiner.call("POST", "/api/v1/auth/refresh", json={"refreshToken": joiner.refresh_token, "tenantId": other})
    assert switched.status_code == 200 and switched.json()["data"]["tenant"]["id"] == other, switched.text
    joiner.access, joiner.refresh_token = switched.json()["data"]["accessToken"], switched.json()["data"]["refreshToken"]
    assert joiner.call("GET", "/api/v1/projects", base=us.base_url).status_code == 200   # served at home, no 421
    back = joiner.refresh()
    assert back.status_code == 200 and back.json()["data"]["tenant"]["id"] == other
    state["joiner"] = joiner


def test_a_removed_member_of_another_cell_is_signed_out_at_once(cells, state):
    us = cells.cell(US)
    owner, member, tenant_id = state["owner"], state["member"], state["tenant_id"]
    assert member.call("GET", "/api/v1/projects").status_code == 200
    user_id = member.call("GET", "/api/v1/auth/me").json()["data"]["user"]["id"]
    removed = owner.call("DELETE", f"/api/v1/members/{user_id}")
    assert removed.status_code in (200, 204), removed.text
    assert member.call("GET", "/api/v1/projects").status_code == 401
    again = member.refresh(base=us.base_url)
    assert again.status_code == 401, again.text
    assert member.login(tenant_id).status_code == 403


def test_after_a_failover_the_owner_and_a_member_of_the_old_homes_cell_sign_in_to_the_new_home(cells, state):
    from tests.support.secondary import directory_item, failover, on_growth_with_secondary, replica_current
    us, eu = cells.cell(US), cells.cell(EU)
    owner, member, tenant_id = _owner_and_member(us, "fo-")
    key = owner.call("POST", "/api/v1/api-keys", json={"name": "ops", "type": "sdk", "environment": "Production"})
    assert key.status_code == 201, key.text
    on_growth_with_secondary(us, eu, {"id": tenant_id, "key": key.json()["data"]["key"]})
    seeded = replica_current(cells, tenant_id)
    assert seeded and seeded["status"] == "current", seeded
    # The failover is run against the secondary alone: its copy of the directory must know it is one.
    assert until(lambda: (directory_item(eu, f"TENANT#{tenant_id}", "HOME") or {}).get("secondaryRegion") == EU, 30)

    done, answer = failover(eu, tenant_id)
    assert done.returncode == 0 and answer and answer["toRegion"] == EU, done.stdout + done.stderr
    # Once the directory's new home reached the us cell, both sign in there (their accounts' cell) to
    # the tenant, now served by the eu cell, and refresh.
    for person, role in ((owner, "owner"), (member, "member")):
        person.access = None
        signed_in = until(lambda p=person: (a := p.login(tenant_id)).status_code == 200 and a, seconds=60)
        assert signed_in, person.login(tenant_id).text
        assert signed_in.json()["data"]["tenant"]["role"] == role
        listed = until(lambda p=person: (a := p.call("GET", "/api/v1/projects")).status_code == 200 and a, seconds=30)
        assert listed, person.call("GET", "/api/v1/projects").text
        assert person.sent_to[-1] == eu.base_url
        assert person.refresh(base=eu.base_url).status_code == 200
        assert person.call("GET", "/api/v1/auth/me").json()["data"]["tenant"]["id"] == tenant_id


def test_nothing_of_anyone_is_out_of_place_in_either_cell(cells):
    """The sign-ins, refreshes, sign-outs and removals above wrote each item in its own cell: sessions
    and their marks in the account's, audit entries and memberships in the tenant's home."""
    import json
    import subprocess
    import sys

    from tests.support.functions import ROOT
    us, eu = cells.cell(US), cells.cell(EU)
    audit = subprocess.run([sys.executable, "-m", "ops", "residency", "audit", "--local", f"{us.port},{eu.port}",
                            "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    report = json.loads(audit.stdout)
    assert audit.returncode == 0 and report["outOfPlace"] == 0, report["findings"][:5]
