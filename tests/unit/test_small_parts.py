"""ids, DynamoDB conversion, envelope, cursors, rate-limit arithmetic, log scrubbing."""

import base64
import json
import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc_core.adapters import dynamo
from svc_core.auth import rate_limit
from svc_core.contracts import cursors
from svc_core.http import envelope
from svc_core.platform import ids
from svc_core.platform.errors import ValidationFailed
from svc_core.platform.log import scrub


def test_ids_carry_their_prefix_and_sort_by_creation_time():
    first = ids.new_ulid(now_ms=1_700_000_000_000)
    later = ids.new_ulid(now_ms=1_700_000_000_001)
    assert first < later
    assert ids.is_id(ids.new_id("proj"), "proj")
    assert not ids.is_id(ids.new_id("proj"), "key")
    assert not ids.is_id("proj_../../etc", "proj")


def test_dynamo_round_trip_keeps_every_supported_type():
    value = {"s": "x", "n": 42, "b": True, "none": None, "l": [1, "a", {"m": False}], "m": {"k": "v"},
             "ss": {"a", "b"}}
    item = dynamo.to_item(value)
    assert "none" not in item  # top-level None means "attribute absent"
    assert dynamo.from_item(item) == {k: v for k, v in value.items() if k != "none"}
    assert dynamo.from_attr(dynamo.to_attr([None])) == [None]


def test_envelope_bodies_have_the_spec_shape():
    ok = json.loads(envelope.success_body({"a": 1}, "req-1"))
    assert ok["data"] == {"a": 1} and ok["meta"]["request_id"] == "req-1"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", ok["meta"]["timestamp"])
    err = json.loads(envelope.error_body("FORBIDDEN", "no", None, "req-2"))
    assert err["error"] == {"code": "FORBIDDEN", "message": "no", "details": {}}
    assert err["meta"]["request_id"] == "req-2" and "data" not in err


def test_an_id_cursor_is_the_ulid_as_unpadded_base64url_and_comes_back_as_the_id():
    item_id = ids.new_id("proj")
    cursor = cursors.id_cursor(item_id)
    assert cursor == base64.urlsafe_b64encode(ids.ulid_value(item_id[5:]).to_bytes(16, "big")).decode().rstrip("=")
    assert cursors.id_after(cursor, "proj") == item_id and cursors.id_after(None, "proj") is None
    # Positions keep the ids' order: a later id's cursor continues after a later point.
    earlier, later = ids.new_id("sec").replace("sec_0", "sec_1"), ids.new_id("sec").replace("sec_0", "sec_2")
    assert cursors.id_after(cursors.id_cursor(earlier), "sec") < cursors.id_after(cursors.id_cursor(later), "sec")


@given(st.from_regex(cursors.ID_CURSOR, fullmatch=True))
def test_every_string_of_the_id_cursor_pattern_is_a_position(cursor):
    after = cursors.id_after(cursor, "whk")
    assert ids.is_id(after, "whk") and cursors.id_cursor(after) == cursor


@given(st.from_regex(cursors.ATTEMPT_CURSOR, fullmatch=True))
def test_every_string_of_the_attempt_cursor_pattern_is_a_position(cursor):
    position = cursors.attempt_after(cursor, "evt")
    assert ids.is_id(position.event_id, "evt") and 0 <= position.attempt < 100
    assert len(str(position.attempted_at_ms)) <= 13   # the attempt keys' 13-digit time keeps their order
    assert cursors.attempt_cursor(position) == cursor


def test_an_attempt_cursor_comes_back_as_its_position():
    position = cursors.AttemptPosition(1_764_000_000_123, ids.new_id("evt"), 7)
    assert cursors.attempt_after(cursors.attempt_cursor(position), "evt") == position


@given(st.text(max_size=40).filter(lambda s: not re.fullmatch(cursors.ID_CURSOR, s)))
def test_a_string_off_the_pattern_is_refused_naming_the_cursor(cursor):
    with pytest.raises(ValidationFailed) as refused:
        cursors.id_after(cursor, "proj")
    assert refused.value.details["fields"][0]["field"] == "cursor"


@pytest.mark.parametrize("cursor", ["", "A" * 21 + "B", "A" * 23, "A" * 22 + "\n", "A" * 21 + "=", "bm90IGpzb24"])
def test_malformed_cursors_are_refused(cursor):
    with pytest.raises(ValidationFailed):
        cursors.id_after(cursor, "proj")
    with pytest.raises(ValidationFailed):
        cursors.attempt_after("A" * 7 + cursor + "A", "evt")   # the event part malformed


def test_window_start_and_headers():
    assert rate_limit.window_start(1_000_059.9, 60) == 1_000_020
    allowance = rate_limit.Allowance(limit=10, hits=4, reset=1_000_080)
    assert allowance.headers() == {"X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "6",
                                   "X-RateLimit-Reset": "1000080"}
    over = rate_limit.Allowance(limit=10, hits=11, reset=2**40)
    assert over.exceeded and over.headers()["X-RateLimit-Remaining"] == "0"
    assert int(over.headers()["Retry-After"]) >= 1


def test_scrub_removes_every_credential_shape():
    key = "svc_sdk_" + "a" * 38
    jwt = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
    webhook_secret = "whsec_" + base64.b64encode(os.urandom(24)).decode()  # made here: no secret is committed
    line = json.dumps({"msg": f"key {key} token {jwt}", "auth": "Bearer abc.def", "password": "hunter22",
                       "secret": webhook_secret})
    cleaned = scrub(line)
    for secret in (key, jwt, "abc.def", "hunter22", webhook_secret):
        assert secret not in cleaned
    assert "[REDACTED]" in cleaned


def test_every_error_code_is_in_the_api_reference_with_its_status():
    from pathlib import Path

    from svc_core.platform import errors
    readme = (Path(__file__).resolve().parents[2] / "docs" / "conventions.md").read_text()
    defined = {cls for cls in vars(errors).values()
               if isinstance(cls, type) and issubclass(cls, errors.ServiceError) and cls.code != "INTERNAL_ERROR"}
    assert defined <= set(errors.ALL_ERRORS)
    for cls in errors.ALL_ERRORS:
        assert f"| {cls.code} | {cls.status} |" in readme, f"{cls.code} is missing from the error table of docs/conventions.md"


def test_every_scope_is_in_the_docs_scope_table():
    from pathlib import Path

    from svc_core.auth.scopes import SCOPES
    guide = Path(__file__).resolve().parents[2].joinpath("docs", "authentication.md").read_text()
    table = guide.split("\n## Scopes\n", 1)[1].split("\n## ", 1)[0]
    assert [s for s in SCOPES if s not in table] == []


def test_the_plan_matrix_is_ordered_and_complete():
    from svc_core.contracts import plans
    assert set(plans.LIMITS) == set(plans.PLANS)
    for feature in plans.FEATURES.values():
        assert feature.from_plan in plans.PLANS
        # included from its plan upwards, never below
        assert [plans.has_feature(p, feature.key) for p in plans.PLANS] == \
            [plans.rank(p) >= plans.rank(feature.from_plan) for p in plans.PLANS]
    assert plans.has_feature("growth", "secondary_region") and not plans.has_feature("starter", "secondary_region")


def test_an_allowlist_matches_ipv4_ipv6_and_mapped_addresses_and_nothing_else():
    from svc_core.auth.tenant_policy import TenantPolicy, parse_networks
    policy = TenantPolicy("ten_x", "starter", "active", parse_networks(["203.0.113.0/24", "2001:db8::/32"]))
    assert policy.admits("203.0.113.200") and policy.admits("2001:db8:ffff::1") and policy.admits("::ffff:203.0.113.1")
    assert not policy.admits("203.0.114.1") and not policy.admits("2001:db9::1") and not policy.admits("")
    assert not policy.admits("not an address")
    assert TenantPolicy("ten_x", "free", "active", ()).admits("192.0.2.1")  # no list: anywhere


def test_body_depth_is_counted_without_parsing_and_ignores_strings():
    from svc_core.http import json_body
    assert json_body.depth_of('{"a": [1, {"b": []}]}') == 4
    assert json_body.depth_of('{"a": "[[[{{{", "b": "\\"[["}') == 1  # brackets inside strings do not count
    assert json_body.depth_of("[" * 100_000) == 100_000  # no recursion, whatever the depth
    assert json_body.depth_of('"\\"' * 100_000) == 0  # an unterminated string is one pass, not one per quote
    assert json_body.depth_of("") == 0


def test_tokens_are_signed_with_low_s_and_their_high_s_twin_is_refused(monkeypatch):
    from cryptography.hazmat.primitives import serialization

    from svc_core.auth import signing_keys, tokens
    from svc_core.platform.errors import Unauthorized
    from tests.support.auth_helpers import high_s

    entry = signing_keys.new_key_entry()
    private = serialization.load_pem_private_key(entry["privateKeyPem"].encode(), password=None)
    keyset = signing_keys.KeySet(active_kid=entry["kid"], active_private=private,
                                 public={entry["kid"]: private.public_key()})
    monkeypatch.setattr(signing_keys, "current", lambda force_fetch=False: keyset)
    minted = [tokens.mint(subject="usr_x", tenant_id="ten_x", scopes=["projects:read"], credential="user")[0]
              for _ in range(24)]  # cryptography signs the high half about as often as the low one
    for token in minted:
        assert tokens._signature(token)[2] <= tokens.P256_ORDER // 2
        assert tokens.verify(token).subject == "usr_x"
        assert tokens.low_s(high_s(token)) == token
        with pytest.raises(Unauthorized, match="low-s"):
            tokens.verify(high_s(token))
    with pytest.raises(Unauthorized, match="malformed"):
        tokens.verify(minted[0][:-4])


def test_every_name_and_description_refuses_control_and_bidi_characters():
    from pydantic import ValidationError

    from svc_core.domain.models.accounts import RegisterBody
    from svc_core.domain.models.agents import AgentCreate, AgentUpdate
    from svc_core.domain.models.api_keys import ApiKeyCreate
    from svc_core.domain.models.chat import ChatSessionCreate
    from svc_core.domain.models.projects import ProjectCreate, ProjectUpdate
    from svc_core.domain.models.secrets import SecretUpdate
    from svc_core.domain.models.tenants import SettingsPatch, TenantCreate
    from svc_core.domain.models.webhooks import WebhookUpdate

    names = [(ProjectCreate, "name"), (ProjectUpdate, "name"), (AgentUpdate, "name"), (ApiKeyCreate, "name"),
             (ChatSessionCreate, "title"), (TenantCreate, "name"), (SettingsPatch, "displayName"),
             (RegisterBody, "name")]
    descriptions = [(ProjectCreate, "description"), (SecretUpdate, "description"), (WebhookUpdate, "description")]
    assert AgentCreate.model_fields["name"].annotation is AgentUpdate.model_fields["name"].annotation
    for model, field in names + descriptions:
        for bad in ("a\x00b", "a\x07b", "a\x7fb", "a\x85b", "a\u202eb", "a\u2066b", "a\u200fb", "a\rb"):
            with pytest.raises(ValidationError) as refused:
                model.__pydantic_validator__.validate_assignment(model.model_construct(), field, bad)
            assert refused.value.errors()[0]["loc"] == (field,), (model, field)
    for model, field in descriptions:  # a description may run over lines, with tabs
        checked = model.__pydantic_validator__.validate_assignment(model.model_construct(), field, "one\n\ttwo")
        assert getattr(checked, field) == "one\n\ttwo"
def test_the_binding_allowance_is_the_one_exceeded_else_the_one_with_fewest_remaining():
    key = rate_limit.Allowance(limit=10, hits=3, reset=60)
    tenant = rate_limit.Allowance(limit=50, hits=45, reset=60, counter="tenant")
    assert rate_limit.binding(key, tenant) is tenant  # 5 left against 7
    assert rate_limit.binding(rate_limit.Allowance(limit=10, hits=9, reset=60), tenant).counter == "credential"
    full = rate_limit.Allowance(limit=50, hits=51, reset=60, counter="tenant")
    assert rate_limit.binding(key, full) is full and full.headers()["X-RateLimit-Remaining"] == "0"
    assert rate_limit.tenant_key("ten_1") == "tenant#ten_1" == rate_limit.tenant_key("ten_1", 0)
    assert rate_limit.tenant_key("ten_1", 3) == "tenant#ten_1#3"


def test_only_a_ceiling_near_what_one_item_takes_is_counted_on_several():
    from svc_core.contracts import plans
    shards = {plan: rate_limit.tenant_counter_shards(plans.tenant_requests_per_window(plan), 60) for plan in plans.PLANS}
    # enterprise: 100,000 a minute, 1,667 a second, over one item's 1,000: on 4 items of 417 a second each
    assert plans.tenant_requests_per_window("enterprise") == 100_000 and shards["enterprise"] == 4
    assert {plan: n for plan, n in shards.items() if plan != "enterprise"} == {"free": 1, "starter": 1, "growth": 1}
    assert rate_limit.tenant_counter_shards(30_000, 60) == 1 and rate_limit.tenant_counter_shards(30_001, 60) == 2
    # API Gateway's 10,000 a second for the account fill 20 at most (the benchmarks' 1,000,000 a
    # minute base gives enterprise 100 million a minute: 3,334 items uncapped, each window's first
    # request on each of them two writes)
    assert rate_limit.tenant_counter_shards(600_000, 60) == 20 == rate_limit.tenant_counter_shards(10**8, 60)
    assert rate_limit.address_key("sign-in", "192.0.2.1") == "addr#sign-in#192.0.2.1"


def test_e_mail_addresses_normalise_to_nfkc_case_folded_and_trimmed():
    from svc_core.contracts.email_address import normalise
    assert normalise(" Ada@Example.COM ") == "ada@example.com"
    assert normalise("\uff21\uff24\uff21@example.com") == "ada@example.com"  # full-width
    assert normalise("Stra\u00dfe@example.de") == "strasse@example.de"
    assert normalise("\u03a3\u039f\u03a6\u0399\u0391@example.gr") == normalise("\u03c3\u03bf\u03c6\u03b9\u03b1@example.gr")


@pytest.mark.parametrize("address, valid", [
    ("ada@example.com", True), ("Ada.Lovelace+1@example.co.uk", True), ("a@localhost", True),  # as HTML says
    ("!#$%&'*+/=?^_`{|}~-@example.com", True), ("ivan@xn--e1afmkfd.xn--p1ai", True),  # an A-label domain
    ("ada@" + "a" * 63 + ".com", True), ("ada@" + "a" * 64 + ".com", False),  # a label of 63, 64
    ("ada@-example.com", False), ("ada@example-.com", False), ("ada@ex-ample.com", True),
    ("ada@example..com", False), ("ada@example.com.", False), ("@example.com", False), ("ada@", False),
    ("ada@@example.com", False), ("ada lovelace@example.com", False), ("ada@example.com\n", False),
    ("\u0430da@example.com", False), ("ada@ex\u0430mple.com", False),  # look-alikes: a Cyrillic a
    ("\u0438\u0432\u0430\u043d@\u043f\u0440\u0438\u043c\u0435\u0440.\u0440\u0444", False),  # one script, not ASCII
    ("\uff41\uff44\uff41@example.com", False), ("\"ada\"@example.com", False), ("ada@[192.0.2.1]", False),
    ("a" * 62 + "@" + ".".join(["b" * 63] * 3), True),  # 254 characters
    ("a" * 63 + "@" + ".".join(["b" * 63] * 3), False),  # 255
])
def test_registration_takes_the_html_standards_valid_e_mail_addresses(address, valid):
    from pydantic import ValidationError

    from svc_core.domain.models.accounts import RegisterBody
    body = {"email": address, "password": "a long enough password", "name": "Ada"}
    try:
        RegisterBody.model_validate(body)
        accepted = True
    except ValidationError:
        accepted = False
    assert accepted is valid


def test_the_documented_e_mail_rule_is_the_servers_and_every_address_it_describes_registers():
    """The document's pattern and maxLength are the constants the server checks, and both engines
    (the schema's, read by clients and the fuzzer, and pydantic's) agree on what they match."""
    import json
    import re

    from hypothesis import given, settings
    from hypothesis import strategies as st
    from pydantic import ValidationError

    from devstack import openapi
    from svc_core.contracts import email_address
    from svc_core.domain.models.accounts import RegisterBody
    schema = json.loads(openapi.DOCUMENT.read_text())["components"]["schemas"]["RegisterBody"]["properties"]["email"]
    assert (schema["pattern"], schema["maxLength"]) == (email_address.VALID, email_address.MAX_LENGTH)
    assert email_address.VALID.endswith("$")
    rule = re.compile(email_address.VALID[:-1] + r"\Z")  # ECMA's $ (and Rust's) is the very end; Python's is not

    def server_accepts(address: str) -> bool:
        try:
            RegisterBody.model_validate({"email": address, "password": "a long enough password", "name": "Ada"})
            return True
        except ValidationError:
            return False

    @settings(max_examples=300, deadline=None)
    @given(st.from_regex(rule, fullmatch=True).filter(lambda a: len(a) <= email_address.MAX_LENGTH))
    def described_addresses_register(address):
        assert server_accepts(address), address

    @settings(max_examples=300, deadline=None)
    @given(st.text(st.sampled_from("aZ09.-_+@\u0430\u00df \n\uff41"), max_size=20))
    def the_same_strings_match(text):
        assert server_accepts(text) is bool(rule.match(text) and len(text) <= email_address.MAX_LENGTH), text

    described_addresses_register()
    the_same_strings_match()


def test_a_names_length_counts_as_sent_as_the_schemas_max_length_does():
    """Found by the fuzzer: 95 spaces around 10 characters passed a 100-character limit after the
    strip, though the schema's maxLength (which counts the raw string) refuses it."""
    from pydantic import BaseModel, ValidationError

    from svc_core.domain.models.request_body import name_text

    class Named(BaseModel):
        name: name_text(10)

    assert Named(name="  abc  ").name == "abc"
    assert Named(name=" " * 5 + "x" * 5).name == "x" * 5
    for sent in (" " * 5 + "x" * 6, "x" * 11):
        with pytest.raises(ValidationError):
            Named(name=sent)
