"""The global directory (data/directory_table.py) written with every change it records, through the
real handlers: registration, POST /tenants, an invitation accepted, a member removed or leaving, an
API key created, rotated and revoked, a command-line login's key; a refused change leaves nothing in
it; the e-mail address is in none of its items; `python -m ops directory backfill` rebuilds what is
missing and changes nothing on a second run."""

from __future__ import annotations

import hashlib
import json

import pytest

from ops.__main__ import main as ops_main
from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item
from svc_core.auth import authenticate
from svc_core.data import directory_table, users_table
from svc_core.data.common import ConditionFailed
from svc_core.domain.tenants import create_tenant_with_owner
from svc_core.platform import ids, timeutil
from svc_core.platform.config import settings
from tests.integration.test_device_login import complete, exchange, start
from tests.support import mailbox
from tests.support.functions import call

PASSWORD = "a long enough test password"
REGION = "us-east-1"   # the tests' AWS_REGION: the cell every home is written in here


def directory() -> dict[tuple[str, str], dict]:
    """Every item of the directory about tenants and users, by (pk, sk). The cell's own resources
    (CELL#<region>) are left out: the deploy publishes them (Custom::CellResources), and a freshly
    provisioned emulator has them while a wiped one does not."""
    found = {}
    for page in aws.client("dynamodb").get_paginator("scan").paginate(TableName=settings().directory_table,
                                                                         ConsistentRead=True):
        for item in map(from_item, page.get("Items", [])):
            if not item["pk"].startswith("CELL#"):
                found[(item.pop("pk"), item.pop("sk"))] = item
    return found


def facts(items: dict[tuple[str, str], dict]) -> dict[tuple[str, str], dict]:
    """The items without when and where they were written (those are checked on their own)."""
    return {key: {k: v for k, v in item.items() if k not in ("updatedAt", "writtenIn")} for key, item in items.items()}


def assert_well_formed(items: dict[tuple[str, str], dict], *addresses: str) -> None:
    """Each item says when and where it was written, and no address is in the directory in any spelling."""
    for item in items.values():
        assert item["writtenIn"] == REGION and item["updatedAt"].endswith("Z"), item
    text = json.dumps(sorted((list(k), v) for k, v in items.items())).lower()
    for address in addresses:
        assert address.lower() not in text and address.split("@")[0].lower() not in text


def unique(name: str) -> str:
    return f"{name}.{ids.new_ulid()[-10:].lower()}@example.com"


def register(email: str, name: str = "Ada") -> dict:
    reply = call("auth", "Auth-Register", body={"email": email, "password": PASSWORD, "name": name})
    assert reply.status == 201, reply
    return reply.data


def sign_in(email: str, tenant_id: str | None = None) -> str:
    reply = call("auth", "Auth-Login", body={"email": email, "password": PASSWORD,
                                             **({"tenantId": tenant_id} if tenant_id else {})})
    assert reply.status == 200, reply
    return reply.data["accessToken"]


def account_items(user_id: str, tenant_id: str, email: str) -> dict[tuple[str, str], dict]:
    """What a registration puts in the directory."""
    return {(f"TENANT#{tenant_id}", "HOME"): {"homeRegion": REGION, "status": "active"},
            (f"USER#{user_id}", "HOME"): {"homeRegion": REGION},
            (f"USER#{user_id}", f"MEMBER#{tenant_id}"): {"tenantId": tenant_id},
            (f"EMAIL#{authenticate.email_hash(email)}", "EMAIL"): {"userId": user_id}}


def key_item(value: str, tenant_id: str, key_id: str, not_after: int | None = None):
    item = {"tenantId": tenant_id, "keyId": key_id, **({"notAfter": not_after} if not_after is not None else {})}
    return (f"KEY#{authenticate.hash_key(value)}", "KEY"), item


# ---- registration -------------------------------------------------------------------------------------

def test_registration_writes_the_tenant_the_user_the_address_hash_and_the_membership(stack):
    email = unique("Ada.Lovelace")
    made = register(email)
    user_id, tenant_id = made["user"]["id"], made["tenant"]["id"]
    items = directory()
    assert facts(items) == account_items(user_id, tenant_id, email)
    assert_well_formed(items, email)
    # The reads the routing uses: an address in any spelling that normalises alike finds the user.
    assert directory_table.tenant_home(tenant_id)["homeRegion"] == REGION
    assert directory_table.user_home(user_id)["homeRegion"] == REGION
    shouted = "  " + email.upper().replace("@", "＠") + " "   # upper case, a full-width @, spaces
    assert directory_table.user_by_email_hash(authenticate.email_hash(shouted)) == {"userId": user_id,
                                                                                    "homeRegion": REGION}
    assert directory_table.user_by_email_hash(authenticate.email_hash(unique("nobody"))) is None


def test_the_address_hash_is_keyed_and_never_an_api_key_hash(stack):
    email = unique("grace")
    hashed = authenticate.email_hash(email)
    assert len(hashed) == 64 and int(hashed, 16) >= 0
    # Tagged: the HMAC of "email:<address>", which no API key's value (svc_...) can be.
    assert hashed == authenticate.hash_key("email:" + email) and hashed != authenticate.hash_key(email)
    assert hashed != hashlib.sha256(("email:" + email).encode()).hexdigest()   # the pepper is in it
    authenticate.forget_pepper()
    from svc_core.platform import container
    authenticate._pepper[container.key()] = b"another pepper"
    try:
        assert authenticate.email_hash(email) != hashed
    finally:
        authenticate.forget_pepper()


def test_a_user_of_an_identity_provider_has_a_home_but_no_address_claim(stack, capsys):
    """Their address claims nothing in the users table (it cannot take over an account that signs in
    otherwise), so it claims nothing in the directory either; the backfill agrees."""
    email = unique("federated")
    made = create_tenant_with_owner(tenant_name="Fed", email=email, user_name="Fed", federated=("https://idp.example", "sub-1"))
    user_id, tenant_id = made["user"]["id"], made["tenant"]["id"]
    expected = {key: item for key, item in account_items(user_id, tenant_id, email).items() if key[1] != "EMAIL"}
    assert facts(directory()) == expected
    assert directory_table.user_by_email_hash(authenticate.email_hash(email)) is None
    for pk, sk in expected:
        aws.client("dynamodb").delete_item(TableName=settings().directory_table, Key={"pk": {"S": pk}, "sk": {"S": sk}})
    assert backfill(capsys)["emails"] == {"written": 0, "present": 0}
    assert facts(directory()) == expected


def test_a_second_registration_of_an_address_changes_nothing_in_the_directory(stack):
    email = unique("ada")
    made = register(email)
    before = directory()
    assert facts(before) == account_items(made["user"]["id"], made["tenant"]["id"], email)
    again = register(email.upper(), name="Someone Else")   # the same 201, nothing stored
    assert directory() == before
    assert (f"USER#{again['user']['id']}", "HOME") not in before


def test_an_address_claimed_in_another_cell_refuses_the_registration_here_and_leaves_nothing(stack):
    """The directory's claim of the address hash is part of the registration's transaction: an account
    of the address homed in another cell (its claim replicated here, no user in this cell's tables)
    refuses the whole registration."""
    email = unique("elsewhere")
    claim = {"pk": f"EMAIL#{authenticate.email_hash(email)}", "sk": "EMAIL", "userId": "usr_01J00000000000000000000000",
             "updatedAt": "2026-01-01T00:00:00.000Z", "writtenIn": "eu-central-1"}
    aws.client("dynamodb").put_item(TableName=settings().directory_table,
                                    Item={k: {"S": v} for k, v in claim.items()})
    before = directory()
    register(email)   # answered as for any taken address
    assert directory() == before
    assert users_table.id_for_email(email) is None
    tenants = aws.client("dynamodb").scan(TableName=settings().tenants_table)["Items"]
    assert tenants == []


# ---- POST /tenants ---------------------------------------------------------------------------------------

def test_a_tenant_created_by_a_signed_in_user_is_homed_here_with_its_owner_membership(stack):
    email = unique("ada")
    made = register(email)
    before = directory()
    reply = call("tenants", "Tenants-CreateTenant", token=sign_in(email), body={"name": "Second"})
    assert reply.status == 201, reply
    second = reply.data["id"]
    added = {k: v for k, v in directory().items() if k not in before}
    assert facts(added) == {(f"TENANT#{second}", "HOME"): {"homeRegion": REGION, "status": "active"},
                            (f"USER#{made['user']['id']}", f"MEMBER#{second}"): {"tenantId": second}}
    assert_well_formed(added, email)


# ---- invitations and members -------------------------------------------------------------------------------

def invite(owner_token: str, email: str, role: str = "member") -> str:
    reply = call("invitations", "Invitations-CreateInvitation", token=owner_token, body={"email": email, "role": role})
    assert reply.status == 201, reply
    return mailbox.token_of(mailbox.latest_link(to=email))


def accept(token: str, **body):
    return call("invitations", "Invitations-AcceptInvitation", body={"token": token, **body})


def test_an_invitation_accepted_by_a_new_user_adds_the_user_and_the_membership_and_no_more(stack):
    owner = unique("owner")
    tenant_id = register(owner)["tenant"]["id"]
    link = invite(sign_in(owner), newbie := unique("Newbie"))
    before = directory()
    reply = accept(link, name="Nina", password=PASSWORD)
    assert reply.status == 200, reply
    user_id = reply.data["user"]["id"]
    added = {k: v for k, v in directory().items() if k not in before}
    assert facts(added) == {(f"USER#{user_id}", "HOME"): {"homeRegion": REGION},
                            (f"EMAIL#{authenticate.email_hash(newbie)}", "EMAIL"): {"userId": user_id},
                            (f"USER#{user_id}", f"MEMBER#{tenant_id}"): {"tenantId": tenant_id}}
    assert_well_formed(directory(), owner, newbie)
    # Used once: a second acceptance (another new account of the address) is refused, and adds nothing.
    after = directory()
    assert accept(link, name="Nina Again", password=PASSWORD).status == 409
    assert directory() == after


def test_an_invitation_accepted_by_an_existing_account_adds_only_the_membership(stack):
    owner, guest = unique("owner"), unique("guest")
    tenant_id = register(owner)["tenant"]["id"]
    guest_id = register(guest)["user"]["id"]
    link = invite(sign_in(owner), guest)
    before = directory()
    assert accept(link, password=PASSWORD).status == 200
    added = {k: v for k, v in directory().items() if k not in before}
    assert facts(added) == {(f"USER#{guest_id}", f"MEMBER#{tenant_id}"): {"tenantId": tenant_id}}


def test_an_acceptance_whose_transaction_is_refused_leaves_no_user_in_the_directory(data_backend, monkeypatch):
    """The invitation revoked after its link was read: the acceptance's transaction fails on the
    invitation's condition, and the new user's home, address claim and membership go with it."""
    owner = unique("owner")
    register(owner)
    owner_token = sign_in(owner)
    link = invite(owner_token, newbie := unique("late"))
    invitation_id = link.split(".", 1)[0]
    from svc_core.domain import invitations
    real_invitee = invitations._invitee

    def revoked_meanwhile(*args, **kwargs):
        found = real_invitee(*args, **kwargs)
        assert call("invitations", "Invitations-RevokeInvitation", token=owner_token,
                    path_params={"id": invitation_id}).status == 200
        return found

    before = directory()
    assert len(before) == 4   # the owner's registration
    monkeypatch.setattr(invitations, "_invitee", revoked_meanwhile)
    refused = accept(link, name="Late", password=PASSWORD)
    assert refused.status == 409, refused
    assert directory() == before
    assert directory_table.user_by_email_hash(authenticate.email_hash(newbie)) is None


def test_a_member_removed_or_leaving_leaves_the_directory_with_their_cli_keys(stack):
    owner, alice, bob = unique("owner"), unique("alice"), unique("bob")
    made = register(owner)
    tenant_id = made["tenant"]["id"]
    owner_token = sign_in(owner)
    ids_of = {}
    for email in (alice, bob):
        ids_of[email] = register(email)["user"]["id"]
        assert accept(invite(owner_token, email), password=PASSWORD).status == 200
    # Alice's command-line key in the tenant: revoked with her membership, its value leaves the directory.
    started, state, verifier = start()
    assert complete(started.data["loginId"], state, sign_in(alice, tenant_id)).status == 200
    cli = exchange(started.data["loginId"], verifier).data
    value_key, value_item = key_item(cli["token"], tenant_id, cli["keyId"])
    assert facts(directory())[value_key] == value_item

    removed = call("members", "Members-RemoveMember", token=owner_token, path_params={"userId": ids_of[alice]})
    assert removed.status == 200 and removed.data["cliKeysRevoked"] == 1, removed
    items = directory()
    assert (f"USER#{ids_of[alice]}", f"MEMBER#{tenant_id}") not in items and value_key not in items
    assert (f"USER#{ids_of[alice]}", "HOME") in items   # the account stays, in its own tenant too
    assert (f"USER#{ids_of[bob]}", f"MEMBER#{tenant_id}") in items

    left = call("members", "Members-LeaveTenant", token=sign_in(bob, tenant_id))
    assert left.status == 200, left
    items = directory()
    assert (f"USER#{ids_of[bob]}", f"MEMBER#{tenant_id}") not in items
    assert [k for k in items if k[1] == f"MEMBER#{tenant_id}"] == [(f"USER#{made['user']['id']}", f"MEMBER#{tenant_id}")]


def test_a_removal_whose_transaction_is_refused_keeps_the_membership_in_the_directory(data_backend):
    """The last owner cannot leave: the refused transaction leaves the directory's membership."""
    owner = unique("owner")
    made = register(owner)
    before = directory()
    assert (f"USER#{made['user']['id']}", f"MEMBER#{made['tenant']['id']}") in before
    refused = call("members", "Members-LeaveTenant", token=sign_in(owner))
    assert refused.status == 409 and refused.error["details"]["reason"] == "last_owner", refused
    assert directory() == before


# ---- API keys ----------------------------------------------------------------------------------------------

def keys_of(tenant_id: str) -> dict[tuple[str, str], dict]:
    return {k: v for k, v in facts(directory()).items() if k[1] == "KEY" and v["tenantId"] == tenant_id}


def test_a_key_has_one_item_per_live_value_through_creation_rotations_and_revocation(stack, monkeypatch):
    email = unique("ada")
    tenant_id = register(email)["tenant"]["id"]
    token = sign_in(email)
    clock = [float(int(timeutil.now()))]
    monkeypatch.setattr(timeutil, "now", lambda: clock[0])
    made = call("api_keys", "ApiKeys-CreateKey", token=token,
                body={"name": "ci", "type": "ci", "environment": "Production", "expiresInDays": 30})
    assert made.status == 201, made
    key_id, first = made.data["id"], made.data["key"]
    expires = int(clock[0]) + 30 * 86400
    assert keys_of(tenant_id) == dict([key_item(first, tenant_id, key_id, expires)])
    assert directory_table.key(authenticate.hash_key(first))["keyId"] == key_id

    def rotate(overlap: int) -> str:
        reply = call("api_keys", "ApiKeys-RotateKey", token=token, path_params={"id": key_id},
                     body={"overlapSeconds": overlap})
        assert reply.status == 200, reply
        return reply.data["key"]

    second = rotate(3600)   # the first lives on for an hour: both have their item, each with its end
    assert keys_of(tenant_id) == dict([key_item(second, tenant_id, key_id, expires),
                                       key_item(first, tenant_id, key_id, int(clock[0]) + 3600)])
    clock[0] += 10
    third = rotate(60)      # a shorter overlap shortens the first's too
    end = int(clock[0]) + 60
    assert keys_of(tenant_id) == dict([key_item(third, tenant_id, key_id, expires),
                                       key_item(second, tenant_id, key_id, end),
                                       key_item(first, tenant_id, key_id, end)])
    clock[0] += 100         # their overlap is over: the next rotation drops them
    fourth = rotate(0)      # and ends the third at once
    assert keys_of(tenant_id) == dict([key_item(fourth, tenant_id, key_id, expires)])
    assert_well_formed(directory(), email)

    revoked = call("api_keys", "ApiKeys-RevokeKey", token=token, path_params={"id": key_id})
    assert revoked.status == 200, revoked
    assert keys_of(tenant_id) == {}


def test_a_key_without_expiry_has_no_end_and_a_refused_key_write_leaves_no_item(data_backend):
    email = unique("ada")
    tenant_id = register(email)["tenant"]["id"]
    key = data_backend.stack.new_key(tenant_id)
    assert keys_of(tenant_id) == dict([key_item(key["key"], tenant_id, key["id"])])
    # A key whose id exists already: its transaction fails, and the value's directory item with it.
    from svc_core.domain.api_keys import issue_key
    before = directory()
    with pytest.raises(ConditionFailed):
        issue_key(tenant_id=tenant_id, created_by="usr_operator", name="again", key_type="sdk",
                  environment="Development", scopes=["projects:read"], key_id=key["id"])
    assert directory() == before


def test_a_command_line_login_key_is_in_the_directory_and_leaves_it_when_revoked(stack):
    email = unique("ada")
    tenant_id = register(email)["tenant"]["id"]
    started, state, verifier = start()
    assert complete(started.data["loginId"], state, sign_in(email)).status == 200
    cli = exchange(started.data["loginId"], verifier)
    assert cli.status == 200, cli
    assert keys_of(tenant_id) == dict([key_item(cli.data["token"], tenant_id, cli.data["keyId"])])
    # svc logout: the key revokes itself
    assert call("api_keys", "ApiKeys-RevokeKey", token=cli.data["token"],
                path_params={"id": cli.data["keyId"]}).status == 200
    assert keys_of(tenant_id) == {}


def test_an_operator_disabling_a_user_takes_their_cli_keys_out_of_the_directory(stack):
    email = unique("ada")
    tenant_id = register(email)["tenant"]["id"]
    started, state, verifier = start()
    complete(started.data["loginId"], state, sign_in(email))
    assert exchange(started.data["loginId"], verifier).status == 200
    assert len(keys_of(tenant_id)) == 1
    assert ops_main(["users", "disable", email]) == 0
    assert keys_of(tenant_id) == {}


# ---- the backfill ------------------------------------------------------------------------------------------

def backfill(capsys) -> dict:
    code = ops_main(["directory", "backfill"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0, report
    return report


def test_the_backfill_writes_back_what_is_missing_and_a_second_run_changes_nothing(stack, capsys):
    owner, guest = unique("owner"), unique("guest")
    made = register(owner)
    tenant_id = made["tenant"]["id"]
    owner_token = sign_in(owner)
    assert call("tenants", "Tenants-CreateTenant", token=owner_token, body={"name": "Second"}).status == 201
    assert accept(invite(owner_token, guest), name="Guest", password=PASSWORD).status == 200
    key = call("api_keys", "ApiKeys-CreateKey", token=owner_token,
               body={"name": "k", "type": "sdk", "environment": "Development"}).data
    rotated = call("api_keys", "ApiKeys-RotateKey", token=owner_token, path_params={"id": key["id"]},
                   body={"overlapSeconds": 3600})
    assert rotated.status == 200
    gone = stack.new_key(tenant_id)
    assert call("api_keys", "ApiKeys-RevokeKey", token=owner_token, path_params={"id": gone["id"]}).status == 200
    complete_set = facts(directory())
    assert len(complete_set) == 11   # 2 tenants, 2 users and their 2 addresses, 3 memberships, 2 key values

    # The directory as it was before any of this was written to it (data older than the directory).
    client = aws.client("dynamodb")
    for pk, sk in complete_set:
        client.delete_item(TableName=settings().directory_table, Key={"pk": {"S": pk}, "sk": {"S": sk}})
    assert directory() == {}

    report = backfill(capsys)
    assert facts(directory()) == complete_set   # the revoked key's value is not brought back
    assert_well_formed(directory(), owner, guest)
    assert {kind: report[kind]["written"] for kind in ("tenants", "users", "emails", "memberships", "keys")} == \
        {"tenants": 2, "users": 2, "emails": 2, "memberships": 3, "keys": 2}
    assert report["region"] == REGION and report["emailConflicts"] == []

    written = directory()
    again = backfill(capsys)
    assert directory() == written   # every item as it was, its updatedAt too
    assert all(again[kind]["written"] == 0 for kind in ("tenants", "users", "emails", "memberships", "keys"))
    assert again["keys"]["present"] == 2


def test_the_backfill_fills_only_the_gaps_and_reports_an_address_held_by_another_user(stack, capsys):
    email = unique("ada")
    made = register(email)
    kept = directory()
    user_home = (f"USER#{made['user']['id']}", "HOME")
    aws.client("dynamodb").delete_item(TableName=settings().directory_table,
                                       Key={"pk": {"S": user_home[0]}, "sk": {"S": user_home[1]}})
    # The address's claim now names another user (an account of it in another cell).
    claim = f"EMAIL#{authenticate.email_hash(email)}"
    aws.client("dynamodb").put_item(TableName=settings().directory_table, Item={
        "pk": {"S": claim}, "sk": {"S": "EMAIL"}, "userId": {"S": "usr_elsewhere"},
        "updatedAt": {"S": "2026-01-01T00:00:00.000Z"}, "writtenIn": {"S": "eu-central-1"}})
    code = ops_main(["directory", "backfill"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["emailConflicts"] == [{"userId": made["user"]["id"], "heldBy": "usr_elsewhere"}]
    items = directory()
    assert facts({user_home: items[user_home]}) == facts({user_home: kept[user_home]})
    assert items[(claim, "EMAIL")]["userId"] == "usr_elsewhere"   # never overwritten
    assert report["users"] == {"written": 1, "present": 0} and report["tenants"] == {"written": 0, "present": 1}
