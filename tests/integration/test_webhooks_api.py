"""The webhooks registration API end to end: the handler fed real API Gateway events, on the
moto server (DynamoDB, KMS, SQS).

Webhooks are created, read, listed, changed and deleted; their secrets are stored only sealed
and never answered (a generated one, once); weak secrets, unknown events and URLs that point
inside (SSRF) are refused naming the field, with nothing stored; a rotation keeps the previous
secret signing for the overlap only; the test call queues exactly one delivery for that webhook;
the delivery log pages newest first; scopes, 405s, and another tenant's ids and credentials
answered as missing on every endpoint.

Names are resolved by this module's resolver (no DNS here): the names below, nothing else.
"""

from __future__ import annotations

import base64
import json
import re
import sys

import pytest

from svc_core.contracts.cursors import id_cursor
from tests.support.functions import call
from tests.support.projects import assert_envelope, assert_error
from tests.support.queues import take_messages
from tests.support.stack import provisioned_stack

WEBHOOK_ID = re.compile(r"^whk_[0-9A-HJKMNP-TV-Z]{26}$")
EVENT_ID = re.compile(r"^evt_[0-9A-HJKMNP-TV-Z]{26}$")
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
FIELDS = {"id", "url", "events", "enabled", "description", "disabledReason", "disabled_at", "first_failure_at",
          "version", "created_at", "updated_at"}
MISSING_ID = "whk_01JD2Q7ZB6V8S3K4X9W2M5N7PA"
URL = "https://hooks.example.com/svc?token=abc123"
NAMES = {
    "hooks.example.com": ["93.184.216.34"],
    "other.example.com": ["2606:4700::1111", "104.16.1.1"],
    "loopback.example.com": ["127.0.0.1"],
    "metadata.example.com": ["169.254.169.254"],
    "split.example.com": ["93.184.216.34", "10.0.0.5"],   # one bad address refuses the name
    "ula.example.com": ["fd12:3456::1"],
}


def whsec(size: int = 32, fill: int | None = None) -> str:
    raw = bytes([fill] * size) if fill is not None else bytes((i * 7 + size) % 256 for i in range(size))
    return "whsec_" + base64.b64encode(raw).decode()


SECRET = whsec(32, 0x5A)


@pytest.fixture(scope="module")
def stack(emulator):
    yield from provisioned_stack(emulator)


@pytest.fixture(scope="module")
def kept(stack) -> dict:
    """A tenant with one webhook, shared by the tests of refused requests (each checks that its
    request changed nothing of it)."""
    tenant, key = stack.tenant_with_key()
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr("svc_core.adapters.endpoint_guard.resolve", lambda host, port: NAMES[host])
        webhook = made(key)
    return {"tenant": tenant, "key": key, "webhook": webhook}


@pytest.fixture(autouse=True)
def resolver(monkeypatch):
    from svc_core.adapters import endpoint_guard
    looked_up: list[str] = []

    def resolve(host, port):
        looked_up.append(host)
        if host not in NAMES:
            raise OSError("name does not resolve")
        return NAMES[host]

    monkeypatch.setattr(endpoint_guard, "resolve", resolve)
    return looked_up


@pytest.fixture
def clock(monkeypatch):
    """Move the service's clock (svc_core.platform.timeutil.now) forward without sleeping."""
    from svc_core.platform import timeutil
    real = timeutil.now
    offset = {"seconds": 0.0}
    monkeypatch.setattr(timeutil, "now", lambda: real() + offset["seconds"])

    def forward(seconds: float) -> None:
        offset["seconds"] += seconds
    return forward


# ---- calling the service -----------------------------------------------------------------

def api(event: str, token: str, **kwargs):
    return call("webhooks", f"Webhooks-{event}", token=token, **kwargs)


def create(token, **body):
    return api("CreateWebhook", token, body=body)


def made(token, url=URL, events=("*",), secret=SECRET, **body) -> dict:
    reply = create(token, url=url, events=list(events), secret=secret, **body)
    assert reply.status == 201, reply
    assert reply.data["secret"] is None  # a supplied secret is never answered
    return {k: v for k, v in reply.data.items() if k != "secret"}  # the webhook as read afterwards


def get(token, webhook_id):
    return api("GetWebhook", token, path_params={"id": webhook_id})


def patch(token, webhook_id, body=None, **kwargs):
    return api("UpdateWebhook", token, path_params={"id": webhook_id}, body=body, **kwargs)


def delete(token, webhook_id):
    return api("DeleteWebhook", token, path_params={"id": webhook_id})


def rotate(token, webhook_id, body=None):
    return api("RotateWebhookSecret", token, path_params={"id": webhook_id}, body=body)


def send_test(token, webhook_id):
    return api("TestWebhook", token, path_params={"id": webhook_id})


def listed(token, **query):
    return api("ListWebhooks", token, query={k: str(v) for k, v in query.items()} or None)


def deliveries(token, webhook_id, **query):
    return api("ListWebhookDeliveries", token, path_params={"id": webhook_id},
               query={k: str(v) for k, v in query.items()} or None)


def fields_of(reply) -> list[dict]:
    return assert_error(reply, 400, "VALIDATION_ERROR")["fields"]


def items(tenant_id: str) -> list[dict]:
    """Every item of a tenant in the webhooks table, as stored."""
    from svc_core.adapters import aws
    from svc_core.platform.config import settings
    pages = aws.client("dynamodb").get_paginator("query").paginate(
        TableName=settings().webhooks_table, ConsistentRead=True, KeyConditionExpression="tenantId = :t",
        ExpressionAttributeValues={":t": {"S": tenant_id}})
    return [i for page in pages for i in page["Items"]]


def stored(tenant_id: str, webhook_id: str) -> dict:
    from svc_core.data import webhooks_table
    return webhooks_table.get(tenant_id, webhook_id)


def snapshot(*tenant_ids: str) -> list[str]:
    return sorted(json.dumps(i, sort_keys=True) for t in tenant_ids for i in items(t))


def secrets_of(tenant_id: str, webhook_id: str) -> list[tuple[str, int | None]]:
    """The stored secrets opened, with their expiry: what deliveries sign with."""
    from svc_core.adapters import sealing
    context = {"purpose": "webhook-secret", "tenantId": tenant_id, "webhookId": webhook_id}
    return [(sealing.unseal(s["sealed"], context).decode(), s["expiresAt"])
            for s in stored(tenant_id, webhook_id)["secrets"]]


def drain_delivery_queue() -> list[dict]:
    """Every message on the delivery queue, taken off it."""
    from svc_core.adapters import aws
    from svc_core.platform.config import settings
    return take_messages(aws.client("sqs"), settings().webhook_delivery_queue_url)


def user_token(tenant_id: str, role: str) -> str:
    from svc_core.auth import tokens
    from svc_core.auth.roles import ROLE_SCOPES
    from svc_core.platform import ids
    token, _ = tokens.mint(subject=ids.new_id("usr"), tenant_id=tenant_id, scopes=ROLE_SCOPES[role],
                           credential="user")
    return token


# ---- the life of a webhook ---------------------------------------------------------------

def test_create_read_list_update_delete_never_answer_the_secret(stack):
    tenant, key = stack.tenant_with_key()
    reply = create(key, url=URL, events=["project.created", "project.deleted"], secret=SECRET,
                   description="our receiver")
    assert reply.status == 201, reply
    assert_envelope(reply)
    assert reply.data["secret"] is None  # supplied: never answered
    webhook = {k: v for k, v in reply.data.items() if k != "secret"}
    assert set(webhook) == FIELDS and WEBHOOK_ID.match(webhook["id"])
    assert (webhook["url"], webhook["events"], webhook["enabled"], webhook["description"], webhook["version"]) == \
        (URL, ["project.created", "project.deleted"], True, "our receiver", 1)
    assert (webhook["disabledReason"], webhook["disabled_at"], webhook["first_failure_at"]) == (None, None, None)
    assert ISO_UTC.match(webhook["created_at"]) and webhook["updated_at"] == webhook["created_at"]
    assert get(key, webhook["id"]).data == webhook
    assert listed(key).data == {"items": [webhook], "nextCursor": None}

    changed = patch(key, webhook["id"], {"url": "https://other.example.com/in", "events": ["*"],
                                         "description": None})
    assert changed.status == 200, changed
    assert (changed.data["url"], changed.data["events"], changed.data["description"], changed.data["version"]) == \
        ("https://other.example.com/in", ["*"], None, 2)
    assert changed.data["updated_at"] >= webhook["updated_at"] and changed.data["created_at"] == webhook["created_at"]
    assert get(key, webhook["id"]).data == changed.data
    assert secrets_of(tenant, webhook["id"]) == [(SECRET, None)]  # a change keeps the secret

    deleted = delete(key, webhook["id"])
    assert deleted.status == 200 and deleted.data == {"id": webhook["id"], "deleted": True}
    for reply_after in (get(key, webhook["id"]), delete(key, webhook["id"]), send_test(key, webhook["id"]),
                        deliveries(key, webhook["id"])):
        assert assert_error(reply_after, 404, "RESOURCE_NOT_FOUND") == {"id": webhook["id"], "resource": "webhook"}
    assert listed(key).data == {"items": [], "nextCursor": None} and items(tenant) == []
    secret_b64 = SECRET.removeprefix("whsec_")
    for text in (reply.text, changed.text, deleted.text):
        assert secret_b64 not in text and "sealed" not in text and "secrets" not in text


def test_the_secret_is_stored_sealed_for_its_tenant_and_webhook_only(stack):
    from svc_core.adapters import sealing
    tenant, key = stack.tenant_with_key()
    other_tenant, _ = stack.tenant_with_key()
    webhook = made(key)
    [item] = items(tenant)
    raw = json.dumps(item)
    assert SECRET.removeprefix("whsec_") not in raw and "whsec_" not in raw
    assert base64.b64decode(SECRET.removeprefix("whsec_")).hex() not in raw
    [entry] = item["secrets"]["L"]
    sealed = {k: v["S"] for k, v in entry["M"]["sealed"]["M"].items()}
    assert sealed["alg"] == sealing.ALGORITHM and entry["M"]["expiresAt"] == {"NULL": True}
    own = {"purpose": "webhook-secret", "tenantId": tenant, "webhookId": webhook["id"]}
    assert sealing.unseal(sealed, own).decode() == SECRET
    for wrong in ({**own, "tenantId": other_tenant}, {**own, "webhookId": MISSING_ID}, {**own, "purpose": "x"}):
        with pytest.raises(sealing.Unsealable):
            sealing.unseal(sealed, wrong)


# ---- bad input ---------------------------------------------------------------------------

@pytest.mark.parametrize("secret", [
    whsec(23), whsec(16), whsec(65), "whsec_",
    "WHSEC_" + base64.b64encode(bytes(32)).decode(),                    # the prefix in upper case
    "whsec_" + base64.urlsafe_b64encode(b"\xfb\xff" * 16).decode(),     # base64url, not standard
    "whsec_" + base64.b64encode(bytes(33)).decode() + "A",              # not a whole base64 text
    "whsec_" + base64.b64encode(bytes(31)).decode().rstrip("="),        # padding left out
    "whsec_" + "A" * 43 + "%",
    "correct horse battery staple",
    "x" * 31, "x" * 257, "correct-horse-battery-staple and-more-words", "é" * 32,   # plain: 32-256 printable ASCII
    None, 12345,
], ids=["23-bytes", "16-bytes", "65-bytes", "empty", "upper-prefix", "urlsafe", "bad-length", "no-padding",
        "bad-char", "password", "plain-31", "plain-257",
        "plain-space", "plain-non-ascii", "null", "number"])
def test_weak_or_malformed_secrets_are_400_naming_secret_and_store_nothing(kept, secret):
    before = snapshot(kept["tenant"])
    for reply in (create(kept["key"], url=URL, events=["*"], secret=secret),
                  rotate(kept["key"], kept["webhook"]["id"], {"secret": secret})):
        assert [f["field"] for f in fields_of(reply)] == ["secret"], reply
        if isinstance(secret, str) and len(secret) > 8:
            assert secret not in reply.text
    assert snapshot(kept["tenant"]) == before


def test_a_plain_secret_of_the_callers_choosing_is_accepted_and_never_answered(stack):
    import secrets as random_secrets
    tenant, key = stack.tenant_with_key()
    plain = random_secrets.token_urlsafe(30)  # 40 characters, no whsec_ prefix
    reply = create(key, url=URL, events=["*"], secret=plain)
    assert reply.status == 201, reply
    assert reply.data["secret"] is None and plain not in reply.text
    assert secrets_of(tenant, reply.data["id"]) == [(plain, None)]
    rotated = rotate(key, reply.data["id"], {"secret": plain[::-1], "overlapSeconds": 0})
    assert rotated.status == 200 and rotated.data["secret"] is None
    assert secrets_of(tenant, reply.data["id"])[0] == (plain[::-1], None)


def test_left_out_the_secret_is_generated_and_answered_once_by_the_create(stack):
    tenant, key = stack.tenant_with_key()
    reply = create(key, url=URL, events=["*"])
    assert reply.status == 201, reply
    generated = reply.data["secret"]
    assert generated.startswith("whsec_") and len(base64.b64decode(generated.removeprefix("whsec_"))) == 32
    assert secrets_of(tenant, reply.data["id"]) == [(generated, None)]
    again = get(key, reply.data["id"])
    assert "secret" not in again.data and generated not in again.text and generated not in listed(key).text


@pytest.mark.parametrize("body, field", [
    ({"events": ["*"], "secret": SECRET}, "url"),
    ({"url": URL, "secret": SECRET}, "events"),
    ({"url": URL, "events": [], "secret": SECRET}, "events"),
    ({"url": URL, "events": "project.created", "secret": SECRET}, "events"),
    ({"url": URL, "events": ["project.exploded"], "secret": SECRET}, "events.0"),
    ({"url": URL, "events": ["project.created", "webhook.test"], "secret": SECRET}, "events.1"),
    ({"url": URL, "events": ["PROJECT.CREATED"], "secret": SECRET}, "events.0"),
    ({"url": URL, "events": ["*"], "secret": SECRET, "description": "d" * 501}, "description"),
    ({"url": URL, "events": ["*"], "secret": SECRET, "enabled": False}, "enabled"),
    ({"url": URL, "events": ["*"], "secret": SECRET, "id": MISSING_ID}, "id"),
    ({"url": "https://hooks.example.com/" + "a" * 2048, "events": ["*"], "secret": SECRET}, "url"),
    ({"url": "hooks.example.com/in", "events": ["*"], "secret": SECRET}, "url"),
    ({"url": "ftp://hooks.example.com/in", "events": ["*"], "secret": SECRET}, "url"),
    ({"url": "https://hooks.example.com/\ud800", "events": ["*"], "secret": SECRET}, "url"),
])
def test_bad_bodies_are_400_naming_the_field_and_store_nothing(kept, body, field):
    before = snapshot(kept["tenant"])
    reply = create(kept["key"], **body)
    assert field in [f["field"] for f in fields_of(reply)], reply
    assert snapshot(kept["tenant"]) == before


def test_events_are_kept_once_each_and_star_stands_alone(stack):
    _, key = stack.tenant_with_key()
    assert made(key, events=["agent.failed", "user.created", "agent.failed"])["events"] == ["agent.failed",
                                                                                           "user.created"]
    assert made(key, events=["project.created", "*"])["events"] == ["*"]


# ---- SSRF ----------------------------------------------------------------------------------

@pytest.mark.parametrize("url, code", [
    ("https://127.0.0.1/hook", "loopback"),
    ("https://127.0.0.2:8443/hook", "loopback"),
    ("https://[::1]/hook", "loopback"),
    ("https://[::ffff:127.0.0.1]/hook", "loopback"),
    ("http://127.0.0.1:8080/hook", "loopback"),
    ("https://10.0.0.1/hook", "private"),
    ("https://192.168.1.20/hook", "private"),
    ("https://169.254.169.254/latest/meta-data", "metadata_service"),
    ("https://[::ffff:169.254.169.254]/", "metadata_service"),
    ("https://169.254.10.10/", "link_local"),
    ("https://[fe80::1]/", "link_local"),
    ("https://100.64.0.1/hook", "shared_address_space"),
    ("https://[fd12:3456::1]/", "unique_local"),
    ("https://0.0.0.0/", "unspecified"),
    ("https://[::]/", "unspecified"),
    ("https://224.0.0.1/", "multicast"),
    ("https://192.0.2.10/", "not_public"),
    ("http://hooks.example.com/hook", "scheme"),
    ("http://8.8.8.8/hook", "scheme"),
    ("https://8.8.8.8/hook", "ip_address"),
    ("https://127.1/hook", "host"),
    ("https://intranet/hook", "host"),
    ("https://api.localhost/hook", "local_name"),
    ("https://printer.LOCAL/hook", "local_name"),
    ("https://user:pw@hooks.example.com/hook", "malformed"),
    ("https://hooks.example.com/hook#frag", "malformed"),
    ("https://hooks.example.com:0/hook", "port"),
    ("https://8.8.8.8:0/", "port"),
    ("https://hooks.example.com:65536/hook", "port"),
    ("https://hooks.example.com:99999999999/hook", "port"),
    ("https://hooks.example.com:https/hook", "port"),
    ("https://hooks.example.com:-443/hook", "port"),
])
def test_urls_that_point_inside_are_400_on_create_and_patch_and_change_nothing(kept, setting, url, code):
    setting("ALLOW_LOOPBACK_ENDPOINTS", "false")
    before = snapshot(kept["tenant"])
    for reply in (create(kept["key"], url=url, events=["*"], secret=SECRET),
                  patch(kept["key"], kept["webhook"]["id"], {"url": url})):
        [problem] = fields_of(reply)
        assert (problem["field"], problem["in"], problem["code"]) == ("url", "body", code), reply
        assert problem["reason"].startswith("the URL ")
    assert snapshot(kept["tenant"]) == before


@pytest.mark.parametrize("url", ["https://loopback.example.com/hook", "https://split.example.com/hook",
                                 "https://metadata.example.com/", "https://ula.example.com/",
                                 "https://nowhere.example.com/hook"])
def test_where_a_name_points_is_not_checked_at_registration_but_at_delivery(stack, setting, resolver, url):
    """A name may point elsewhere tomorrow (or resolve only once published): the text is the rule
    here, and every delivery checks the addresses (test_webhook_delivery)."""
    setting("ALLOW_LOOPBACK_ENDPOINTS", "false")
    _, key = stack.tenant_with_key()
    webhook = made(key, url=url)
    assert webhook["url"] == url and resolver == []
    changed = patch(key, webhook["id"], {"url": url + "?v=2"})
    assert changed.status == 200 and resolver == [], changed


def test_a_port_from_1_to_65535_is_kept_on_create_and_patch(stack):
    _, key = stack.tenant_with_key()
    webhook = made(key, url="https://hooks.example.com:1/hook")
    assert webhook["url"] == "https://hooks.example.com:1/hook"
    changed = patch(key, webhook["id"], {"url": "https://hooks.example.com:65535/hook"})
    assert changed.status == 200 and changed.data["url"] == "https://hooks.example.com:65535/hook", changed


def test_loopback_and_its_http_only_with_the_development_setting(stack, setting):
    tenant, key = stack.tenant_with_key()
    # The tests' stack allows loopback, as the local stack does: http too, for loopback only.
    for url in ("http://127.0.0.1:8080/hook?x=1", "https://loopback.example.com/hook", "http://[::1]:9/h"):
        assert made(key, url=url)["url"] == url
    assert fields_of(create(key, url="http://hooks.example.com/", events=["*"], secret=SECRET))[0]["code"] == "scheme"
    assert fields_of(create(key, url="https://10.0.0.1/", events=["*"], secret=SECRET))[0]["code"] == "private"
    setting("ALLOW_LOOPBACK_ENDPOINTS", "false")
    count = len(items(tenant))
    for url in ("http://127.0.0.1:8080/hook?x=1", "https://127.0.0.1/hook", "http://[::1]:9/h"):
        assert fields_of(create(key, url=url, events=["*"], secret=SECRET))[0]["code"] == "loopback"
    assert len(items(tenant)) == count


def test_the_host_is_not_resolved_and_a_query_is_kept(stack, resolver):
    _, key = stack.tenant_with_key()
    url = "https://other.example.com:8443/in/hooks?token=s3cr3t&v=2"
    assert made(key, url=url)["url"] == url
    assert resolver == []


# ---- changes -----------------------------------------------------------------------------

@pytest.mark.parametrize("body, field", [
    ({}, "body"),
    ({"url": None}, "url"),
    ({"events": None}, "events"),
    ({"events": []}, "events"),
    ({"events": ["nope"]}, "events.0"),
    ({"enabled": None}, "enabled"),
    ({"enabled": "false"}, "enabled"),
    ({"secret": SECRET}, "secret"),
    ({"description": "d" * 501}, "description"),
    ({"version": 3}, "version"),
])
def test_bad_patches_are_400_and_change_nothing(kept, body, field):
    before = snapshot(kept["tenant"])
    assert field in [f["field"] for f in fields_of(patch(kept["key"], kept["webhook"]["id"], body))]
    assert snapshot(kept["tenant"]) == before


def test_disable_and_enable_and_what_enabling_clears(stack):
    from svc_core.data import webhooks_table
    tenant, key = stack.tenant_with_key()
    webhook = made(key)
    off = patch(key, webhook["id"], {"enabled": False})
    assert off.status == 200, off
    assert (off.data["enabled"], off.data["disabledReason"]) == (False, "disabled through the API")
    assert ISO_UTC.match(off.data["disabled_at"]) and off.data["version"] == 2
    assert assert_error(send_test(key, webhook["id"]), 409, "CONFLICT") == {"id": webhook["id"]}
    assert drain_delivery_queue() == []

    # The delivery side's marks: a failing streak, then a disabling with its reason.
    on = patch(key, webhook["id"], {"enabled": True})
    webhooks_table.mark_failing(tenant, webhook["id"], 1_900_000_000)
    assert get(key, webhook["id"]).data["first_failure_at"] == "2030-03-17T17:46:40.000Z"
    webhooks_table.disable(tenant, webhook["id"], "failing for 5 days", "2030-03-22T17:46:40.000Z")
    disabled = get(key, webhook["id"]).data
    assert (disabled["enabled"], disabled["disabledReason"], disabled["disabled_at"]) == \
        (False, "failing for 5 days", "2030-03-22T17:46:40.000Z")
    webhooks_table.mark_failing(tenant, webhook["id"], 1_900_000_000)
    on = patch(key, webhook["id"], {"enabled": True})
    assert on.status == 200, on
    assert (on.data["enabled"], on.data["disabledReason"], on.data["disabled_at"], on.data["first_failure_at"]) == \
        (True, None, None, None)
    assert {"disabledReason", "disabledAt", "failingSince"}.isdisjoint(stored(tenant, webhook["id"]))


def test_a_lost_update_is_409_and_leaves_the_concurrent_change(stack, monkeypatch):
    from svc_core.data import webhooks_table
    tenant, key = stack.tenant_with_key()
    webhook = made(key)
    real_replace = webhooks_table.replace
    race = {"armed": False}

    def concurrent_patch_first(tenant_id, record, expected_version, **options):
        if race["armed"]:
            race["armed"] = False  # the concurrent request itself goes straight through
            race["winner"] = patch(key, webhook["id"], {"description": f"winner {record['version']}"})
        return real_replace(tenant_id, record, expected_version, **options)

    monkeypatch.setattr(webhooks_table, "replace", concurrent_patch_first)
    race["armed"] = True
    loser = patch(key, webhook["id"], {"description": "loser"})
    assert race["winner"].status == 200 and race["winner"].data["version"] == 2
    assert assert_error(loser, 409, "CONFLICT")["id"] == webhook["id"]
    race["armed"] = True
    lost_rotation = rotate(key, webhook["id"], {"secret": whsec(32, 1)})
    assert assert_error(lost_rotation, 409, "CONFLICT")["id"] == webhook["id"]
    assert race["winner"].data["version"] == 3
    assert get(key, webhook["id"]).data["description"] == "winner 3"
    assert secrets_of(tenant, webhook["id"]) == [(SECRET, None)]


def test_at_most_20_webhooks_per_tenant(stack):
    from svc_core.data import webhooks_table
    from svc_core.platform import ids
    tenant, key = stack.tenant_with_key()
    first = made(key)
    for _ in range(18):  # stored directly: only the count matters here
        webhooks_table.create(tenant, {**stored(tenant, first["id"]), "id": ids.new_id("whk")})
    made_ids = [w["id"] for w in listed(key, limit=100).data["items"]] + [made(key)["id"]]
    details = assert_error(create(key, url=URL, events=["*"], secret=SECRET), 409, "CONFLICT")
    assert details == {"resource": "webhook", "limit": 20}
    assert len(items(tenant)) == 20
    assert delete(key, made_ids[0]).status == 200
    assert made(key)["id"] not in made_ids


# ---- secrets and their rotation --------------------------------------------------------------

def test_a_rotation_signs_with_both_secrets_for_the_overlap_then_the_new_one_only(stack, clock):
    from svc_core.platform import timeutil
    tenant, key = stack.tenant_with_key()
    webhook = made(key)
    second = whsec(48, 7)
    reply = rotate(key, webhook["id"], {"secret": second, "overlapSeconds": 3600})
    assert reply.status == 200, reply
    assert reply.data["secret"] is None and reply.data["version"] == 2
    assert set(reply.data) == FIELDS | {"secret", "previous_secrets_expire_at"}
    assert second.removeprefix("whsec_") not in reply.text and SECRET.removeprefix("whsec_") not in reply.text
    [(new, new_ends), (old, ends)] = secrets_of(tenant, webhook["id"])
    assert (new, new_ends, old) == (second, None, SECRET)
    assert ends == int(timeutil.now()) + 3600 or ends == int(timeutil.now()) + 3599
    assert reply.data["previous_secrets_expire_at"] == timeutil.iso(ends)

    # No body: the service makes the secret and answers it this once.
    asked = int(timeutil.now())
    generated = rotate(key, webhook["id"])
    answered = int(timeutil.now())
    assert generated.status == 200, generated
    third = generated.data["secret"]
    assert third.startswith("whsec_") and len(base64.b64decode(third[6:])) == 32
    assert [s for s, _ in secrets_of(tenant, webhook["id"])] == [third, second, SECRET]
    assert get(key, webhook["id"]).text.count("whsec_") == 0 and third not in listed(key).text
    by_default = secrets_of(tenant, webhook["id"])[1][1]
    assert asked + 86400 <= by_default <= answered + 86400  # a day from the rotation, however slow the machine
    assert secrets_of(tenant, webhook["id"])[2][1] == ends  # an earlier, shorter overlap is kept

    # After the first overlap the first secret no longer signs, and the next write drops it.
    clock(3601)
    from svc_core.domain.webhooks import live_secrets
    assert [s for s, _ in secrets_of(tenant, webhook["id"])][:2] == [third, second]
    live = live_secrets(stored(tenant, webhook["id"])["secrets"], timeutil.now())
    assert len(live) == 2
    assert patch(key, webhook["id"], {"description": "after"}).status == 200
    assert [s for s, _ in secrets_of(tenant, webhook["id"])] == [third, second]

    # overlapSeconds 0 ends every previous secret now (a leaked secret).
    ended = rotate(key, webhook["id"], {"overlapSeconds": 0})
    assert ended.data["previous_secrets_expire_at"] is None
    assert secrets_of(tenant, webhook["id"]) == [(ended.data["secret"], None)]


def test_rotation_bodies_and_the_limit_of_signing_secrets(stack):
    tenant, key = stack.tenant_with_key()
    webhook = made(key)
    before = snapshot(tenant)
    for body, field in (({"secret": whsec(16)}, "secret"), ({"secret": None}, "secret"),
                        ({"overlapSeconds": 604801}, "overlapSeconds"), ({"overlapSeconds": -1}, "overlapSeconds"),
                        ({"overlapSeconds": "60"}, "overlapSeconds"), ({"other": 1}, "other")):
        assert [f["field"] for f in fields_of(rotate(key, webhook["id"], body))] == [field]
    assert snapshot(tenant) == before
    for n in range(4):
        assert rotate(key, webhook["id"], {"secret": whsec(32, n + 1)}).status == 200
    assert len(secrets_of(tenant, webhook["id"])) == 5
    before = snapshot(tenant)
    details = assert_error(rotate(key, webhook["id"], {"secret": whsec(32, 9)}), 409, "CONFLICT")
    assert details == {"id": webhook["id"], "limit": 5}
    assert snapshot(tenant) == before
    assert rotate(key, webhook["id"], {"secret": whsec(32, 9), "overlapSeconds": 0}).status == 200
    assert secrets_of(tenant, webhook["id"]) == [(whsec(32, 9), None)]


# ---- the test event ------------------------------------------------------------------------

def test_the_test_call_queues_one_webhook_test_event_for_that_webhook_only(stack):
    drain_delivery_queue()
    tenant, key = stack.tenant_with_key()
    webhook = made(key, events=["project.created"])
    other = made(key, events=["*"])
    reply = send_test(key, webhook["id"])
    assert reply.status == 202, reply
    assert_envelope(reply)
    event = reply.data
    assert EVENT_ID.match(event["id"]) and ISO_UTC.match(event["timestamp"])
    assert (event["type"], event["tenantId"], event["data"]["webhookId"]) == ("webhook.test", tenant, webhook["id"])
    assert event["data"]["message"]
    assert drain_delivery_queue() == [{"event": event, "webhookId": webhook["id"], "tenantId": tenant}]
    assert other["id"] not in reply.text
    second = send_test(key, other["id"])
    assert second.data["id"] != event["id"]
    assert [m["webhookId"] for m in drain_delivery_queue()] == [other["id"]]


# ---- the delivery log ----------------------------------------------------------------------

def test_the_delivery_log_pages_newest_first_with_each_attempts_fields(stack):
    from svc_core.data import webhook_deliveries_table
    from svc_core.platform import ids, timeutil
    tenant, key = stack.tenant_with_key()
    other_tenant, _ = stack.tenant_with_key()
    webhook, sibling = made(key), made(key)
    start = timeutil.now() - 600
    event_ids = [ids.new_id("evt") for _ in range(3)]
    attempts = []
    for n, (event_id, attempt, outcome, status) in enumerate([
            (event_ids[0], 1, "retrying", 503), (event_ids[0], 2, "delivered", 200),
            (event_ids[1], 1, "retrying", None), (event_ids[2], 1, "failed", 410)]):
        at = start + n * 10
        attempt_item = {"webhookId": webhook["id"], "tenantId": tenant, "eventId": event_id,
                        "eventType": "project.created", "attempt": attempt, "outcome": outcome,
                        "statusCode": status, "latencyMs": 40 + n, "error": None if status == 200 else "it failed",
                        "nextRetryAt": timeutil.iso(at + 60) if outcome == "retrying" else None,
                        "attemptedAt": timeutil.iso(at)}
        webhook_deliveries_table.record(attempt_item, at)
        attempts.append(attempt_item)
    # Another webhook's attempts, and an attempt filed under this webhook's id by another tenant.
    webhook_deliveries_table.record({**attempts[0], "webhookId": sibling["id"]}, start + 100)
    webhook_deliveries_table.record({**attempts[0], "tenantId": other_tenant, "eventId": ids.new_id("evt")},
                                    start + 200)

    def view(a):
        return {"eventId": a["eventId"], "eventType": a["eventType"], "attempt": a["attempt"], "outcome": a["outcome"],
                "statusCode": a["statusCode"], "latencyMs": a["latencyMs"], "error": a["error"],
                "next_retry_at": a["nextRetryAt"], "attempted_at": a["attemptedAt"], "resentBy": None}

    everything = deliveries(key, webhook["id"])
    assert everything.status == 200, everything
    assert everything.data == {"items": [view(a) for a in reversed(attempts)], "nextCursor": None}
    pages, cursor = [], None
    while True:
        reply = deliveries(key, webhook["id"], limit=2, **({"cursor": cursor} if cursor else {}))
        pages.append(reply.data["items"])
        cursor = reply.data["nextCursor"]
        if cursor is None:
            break
    # A page may hold fewer than `limit` (another tenant's attempt is skipped), never more.
    assert [a for p in pages for a in p] == [view(a) for a in reversed(attempts)]
    assert all(len(p) <= 2 for p in pages)
    assert deliveries(key, sibling["id"]).data["items"] == [view({**attempts[0]})]
    for cursor in ("bm90LWEtY3Vyc29y", base64.urlsafe_b64encode(json.dumps({"after": MISSING_ID}).encode())
                   .decode().rstrip("=")):
        assert [f["field"] for f in fields_of(deliveries(key, webhook["id"], cursor=cursor))] == ["cursor"]
    for limit in (0, 101):
        assert_error(deliveries(key, webhook["id"], limit=limit), 400, "VALIDATION_ERROR")


def test_the_list_pages_newest_first(stack):
    _, key = stack.tenant_with_key()
    made_ids = [made(key)["id"] for _ in range(3)]
    first = listed(key, limit=2)
    assert [w["id"] for w in first.data["items"]] == made_ids[:0:-1] and first.data["nextCursor"]
    second = listed(key, limit=2, cursor=first.data["nextCursor"])
    assert [w["id"] for w in second.data["items"]] == made_ids[:1] and second.data["nextCursor"] is None
    bad = base64.urlsafe_b64encode(b'{"after":"sec_01JD2Q7ZB6V8S3K4X9W2M5N7PA"}').decode().rstrip("=")
    assert [f["field"] for f in fields_of(listed(key, cursor=bad))] == ["cursor"]


# ---- tenants, scopes, methods ------------------------------------------------------------

def test_another_tenants_webhook_is_exactly_a_missing_one_on_every_endpoint(stack):
    from svc_core.data import webhook_deliveries_table
    from svc_core.platform import timeutil
    drain_delivery_queue()
    tenant_a, key_a = stack.tenant_with_key()
    tenant_b, key_b = stack.tenant_with_key()
    theirs = made(key_a, description="private to A")
    mine = made(key_b, url="https://other.example.com/b")
    webhook_deliveries_table.record({"webhookId": theirs["id"], "tenantId": tenant_a, "eventId": "evt_x",
                                     "eventType": "project.created", "attempt": 1, "outcome": "delivered",
                                     "statusCode": 200, "latencyMs": 5, "error": None, "nextRetryAt": None,
                                     "attemptedAt": timeutil.iso(timeutil.now())}, timeutil.now())
    before = snapshot(tenant_a, tenant_b)
    attempts = (lambda wid: get(key_b, wid),
                lambda wid: patch(key_b, wid, {"url": "https://other.example.com/hijack"}),
                lambda wid: patch(key_b, wid, {"enabled": False}),
                lambda wid: delete(key_b, wid),
                lambda wid: rotate(key_b, wid),
                lambda wid: rotate(key_b, wid, {"secret": whsec(32, 3), "overlapSeconds": 0}),
                lambda wid: send_test(key_b, wid),
                lambda wid: deliveries(key_b, wid))
    for attempt in attempts:
        foreign, missing = attempt(theirs["id"]), attempt(MISSING_ID)
        assert assert_error(foreign, 404, "RESOURCE_NOT_FOUND") == {"id": theirs["id"], "resource": "webhook"}
        assert json.loads(json.dumps(missing.error).replace(MISSING_ID, theirs["id"])) == foreign.error
        assert "private to A" not in foreign.text and "hooks.example.com" not in foreign.text
    assert snapshot(tenant_a, tenant_b) == before
    assert drain_delivery_queue() == []
    assert listed(key_b).data["items"] == [mine]
    # A's webhook is only a position in B's list (B's own, older ones follow: none); the last position, all of B's.
    assert listed(key_b, cursor=id_cursor(theirs["id"])).data["items"] == []
    assert listed(key_b, cursor=id_cursor("whk_7" + "Z" * 25)).data["items"] == [mine]
    assert get(key_a, theirs["id"]).data == theirs and secrets_of(tenant_a, theirs["id"]) == [(SECRET, None)]
    assert len(deliveries(key_a, theirs["id"]).data["items"]) == 1


@pytest.mark.parametrize("bad_id", ["whk_123", "sec_01JD2Q7ZB6V8S3K4X9W2M5N7PA", "..%2F..",
                                    "WHK_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
def test_a_malformed_id_is_404_with_that_id(kept, bad_id):
    key = kept["key"]
    for reply in (get(key, bad_id), patch(key, bad_id, {"description": "x"}), delete(key, bad_id),
                  rotate(key, bad_id), send_test(key, bad_id), deliveries(key, bad_id)):
        assert assert_error(reply, 404, "RESOURCE_NOT_FOUND")["id"] == bad_id


def test_scopes_read_and_write_and_the_roles(stack):
    drain_delivery_queue()
    tenant, key = stack.tenant_with_key()
    webhook = made(key)
    reader = stack.new_key(tenant, ["webhooks:read"])["key"]
    writer = stack.new_key(tenant, ["webhooks:write"])["key"]
    member, admin = user_token(tenant, "member"), user_token(tenant, "admin")
    before = snapshot(tenant)
    for token in (reader, member):
        for reply in (create(token, url=URL, events=["*"], secret=SECRET), patch(token, webhook["id"], {"enabled": False}),
                      delete(token, webhook["id"]), rotate(token, webhook["id"]), send_test(token, webhook["id"])):
            assert assert_error(reply, 403, "FORBIDDEN")["requiredScope"] == "webhooks:write"
        assert get(token, webhook["id"]).data == webhook and listed(token).status == 200
        assert deliveries(token, webhook["id"]).status == 200
    for reply in (get(writer, webhook["id"]), get(writer, MISSING_ID), listed(writer), deliveries(writer, webhook["id"])):
        assert assert_error(reply, 403, "FORBIDDEN")["requiredScope"] == "webhooks:read"
    assert snapshot(tenant) == before and drain_delivery_queue() == []
    assert patch(writer, webhook["id"], {"description": "by the writer"}).status == 200
    assert patch(admin, webhook["id"], {"description": "by an admin"}).data["version"] == 3
    assert_error(listed(stack.new_key(tenant, ["secrets:read"])["key"]), 403, "FORBIDDEN")
    assert_error(listed("svc_sdk_notakey"), 401, "UNAUTHORIZED")


def test_other_methods_are_405(kept):
    key, wid = kept["key"], {"id": kept["webhook"]["id"]}
    for event, params, method, allowed in (
            ("ListWebhooks", None, "DELETE", ["GET", "POST"]),
            ("GetWebhook", wid, "PUT", ["DELETE", "GET", "PATCH"]),
            ("RotateWebhookSecret", wid, "GET", ["POST"]),
            ("TestWebhook", wid, "PATCH", ["POST"]),
            ("ListWebhookDeliveries", wid, "POST", ["GET"])):
        reply = api(event, key, path_params=params, method=method, body={"x": 1} if method != "GET" else None)
        assert assert_error(reply, 405, "METHOD_NOT_ALLOWED")["allowed"] == allowed, event
        assert reply.headers["allow"] == ", ".join(allowed)


# ---- logs --------------------------------------------------------------------------------

class _CurrentStdout:
    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


def test_no_secret_reaches_a_response_or_a_log_line(stack, monkeypatch, capsys, caplog):
    from svc_core.data import webhooks_table
    from svc_core.platform.log import logger
    monkeypatch.setattr(logger.registered_handler, "stream", _CurrentStdout())
    capsys.readouterr()
    _, key = stack.tenant_with_key()
    secrets = [whsec(32, n) for n in (11, 12, 13, 14)]
    webhook = made(key, secret=secrets[0])
    replies = [get(key, webhook["id"]), listed(key), rotate(key, webhook["id"], {"secret": secrets[1]}),
               create(key, url="https://10.0.0.1/", events=["*"], secret=secrets[2]),     # refused URL
               create(key, url=URL, events=["nope"], secret=secrets[2]),                  # refused event
               rotate(key, webhook["id"], {"secret": secrets[3], "other": 1})]            # unknown field
    generated = rotate(key, webhook["id"])
    assert [r.status for r in replies] + [generated.status] == [200, 200, 200, 400, 400, 400, 200]

    def fail(*_args, **_kwargs):
        raise RuntimeError("the store failed")
    monkeypatch.setattr(webhooks_table, "replace", fail)
    replies.append(rotate(key, webhook["id"], {"secret": secrets[3]}))
    assert replies[-1].status == 500
    out = capsys.readouterr()
    logged = out.out + out.err + caplog.text
    lines = [json.loads(line) for line in out.out.splitlines() if line.startswith("{")]
    assert sum(1 for line in lines if line["message"] == "request") >= 8
    assert any(line["message"] == "unhandled error" and "the store failed" in line["exception"] for line in lines)
    for secret in secrets + [generated.data["secret"]]:
        assert secret.removeprefix("whsec_") not in logged
        assert all(secret.removeprefix("whsec_") not in r.text for r in replies)
