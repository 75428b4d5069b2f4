"""Regions and storage rules without AWS or network: the SSRF checks of BYOS endpoints (addresses,
names resolving to them, IPv6 and its IPv4-carrying forms), the preference rules and plan gates,
the storage rules on an in-memory tenants table, and how storage answers become reasons."""

from __future__ import annotations

import copy

import pytest
from botocore.exceptions import BotoCoreError, ClientError
from pydantic import TypeAdapter, ValidationError

from svc_core.adapters import endpoint_guard
from svc_core.adapters.endpoint_guard import EndpointRefused, address_problem, check
from svc_core.auth.context import TenantContext
from svc_core.auth.principal import Principal
from svc_core.contracts import plans, regions
from svc_core.domain import region_preferences, routing, storage
from svc_core.domain.fields import regions as region_fields
from svc_core.domain.models.regions import BYOS_MODELS, ByosConfigBody, PreferencesUpdate, StorageConfigBody
from svc_core.domain.region_preferences import DEFAULTS
from svc_core.platform.errors import Conflict, Forbidden, NotFound, ValidationFailed
from tests.support.fake_keys import access_key_id

# ---- addresses -----------------------------------------------------------------------------

@pytest.mark.parametrize("address, problem", [
    ("127.0.0.1", "loopback"), ("127.255.0.9", "loopback"), ("::1", "loopback"),
    ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("172.31.255.254", "private"), ("192.168.0.10", "private"),
    ("169.254.169.254", "metadata_service"), ("fd00:ec2::254", "metadata_service"),
    ("169.254.10.20", "link_local"), ("fe80::1", "link_local"), ("fe80::1%eth0", "link_local"),
    ("100.64.0.1", "shared_address_space"), ("100.127.255.254", "shared_address_space"),
    ("fc00::1", "unique_local"), ("fd12:3456:789a::1", "unique_local"),
    ("0.0.0.0", "unspecified"), ("::", "unspecified"),
    ("224.0.0.1", "multicast"), ("ff02::1", "multicast"),
    ("192.0.2.10", "not_public"), ("198.18.0.1", "not_public"), ("240.0.0.1", "not_public"),
    ("0.1.2.3", "not_public"), ("2001:db8::1", "not_public"),
    # IPv6 forms carrying an IPv4 address are judged by it
    ("::ffff:127.0.0.1", "loopback"), ("::ffff:10.0.0.1", "private"), ("::ffff:169.254.169.254", "metadata_service"),
    ("::ffff:100.64.1.1", "shared_address_space"), ("::ffff:0.0.0.0", "unspecified"),
    ("::ffff:7f00:1", "loopback"),                       # the same mapped loopback, written in hex
    ("::10.0.0.1", "private"),                           # IPv4-compatible (deprecated)
    ("64:ff9b::a9fe:a9fe", "metadata_service"),          # NAT64 of 169.254.169.254
    ("2002:c0a8:0101::1", "private"),                    # 6to4 of 192.168.1.1
])
def test_addresses_inside_are_refused(address, problem):
    assert address_problem(address) == problem


@pytest.mark.parametrize("address", ["8.8.8.8", "52.216.0.1", "2606:4700::1111", "2a00:1450:4001::200e"])
def test_public_addresses_pass(address):
    assert address_problem(address) is None


def test_the_development_setting_lets_loopback_through_and_nothing_else():
    assert address_problem("127.0.0.1", allow_loopback=True) is None
    assert address_problem("::1", allow_loopback=True) is None
    for address in ("10.0.0.1", "169.254.169.254", "0.0.0.0", "::ffff:10.0.0.1", "100.64.0.1"):
        assert address_problem(address, allow_loopback=True) is not None


# ---- endpoints -----------------------------------------------------------------------------

def resolving(table: dict[str, list[str]]):
    def resolver(host: str, port: int) -> list[str]:
        if host not in table:
            raise OSError("name does not resolve")
        return table[host]
    return resolver


@pytest.mark.parametrize("addresses, problem", [
    (["10.0.0.7"], "private"),
    (["93.184.216.34", "10.0.0.7"], "private"),           # one bad address refuses the name
    (["2606:4700::1", "fd00::7"], "unique_local"),
    (["::ffff:169.254.169.254"], "metadata_service"),
    (["127.0.0.1"], "loopback"),
    (["169.254.169.254"], "metadata_service"),
])
def test_names_resolving_inside_are_refused(addresses, problem):
    with pytest.raises(EndpointRefused) as refused:
        check("https://bucket.storage.example.com", allow_loopback=False,
              resolver=resolving({"bucket.storage.example.com": addresses}))
    assert refused.value.code == problem and refused.value.resolved
    assert "resolves to" in refused.value.reason


def test_a_name_resolving_outside_passes_with_its_addresses():
    target = check("https://acct.blob.core.windows.net/", allow_loopback=False,
                   resolver=resolving({"acct.blob.core.windows.net": ["20.60.1.1", "2603:1000::1"]}))
    assert (target.scheme, target.host, target.port, target.addresses) == \
           ("https", "acct.blob.core.windows.net", 443, ("20.60.1.1", "2603:1000::1"))
    assert target.host_header == "acct.blob.core.windows.net"
    assert check("https://[2606:4700::1]:8443", allow_loopback=False).host_header == "[2606:4700::1]:8443"


def test_a_name_that_does_not_resolve():
    resolver = resolving({})
    with pytest.raises(EndpointRefused) as refused:
        check("https://nowhere.example.com", allow_loopback=False, resolver=resolver)
    assert refused.value.code == "does_not_resolve"
    target = check("https://nowhere.example.com", allow_loopback=False, require_resolution=False, resolver=resolver)
    assert target.addresses == ()


@pytest.mark.parametrize("url", [
    "ftp://storage.example.com", "https://", "https://user@storage.example.com", "https://u:p@8.8.8.8",
    "https://8.8.8.8/?x=1", "https://8.8.8.8/#frag", "storage.example.com",
    "https://8.8.8.8/a b", "file:///etc/passwd", "gopher://8.8.8.8",
])
def test_malformed_endpoints(url):
    with pytest.raises(EndpointRefused) as refused:
        check(url, allow_loopback=True, resolver=resolving({}))
    assert refused.value.code == "malformed"


@pytest.mark.parametrize("url", ["https://8.8.8.8:99999", "https://8.8.8.8:0", "https://storage.example.com:s3"])
def test_an_endpoint_port_outside_1_to_65535_is_refused_as_port(url):
    with pytest.raises(EndpointRefused) as refused:
        check(url, allow_loopback=True, resolver=resolving({}))
    assert refused.value.code == "port"


def test_https_only_but_for_loopback_when_allowed():
    with pytest.raises(EndpointRefused) as refused:
        check("http://8.8.8.8", allow_loopback=True)
    assert refused.value.code == "scheme"
    with pytest.raises(EndpointRefused) as refused:
        check("http://127.0.0.1:9000", allow_loopback=False)
    assert refused.value.code == "loopback"
    assert check("http://127.0.0.1:9000", allow_loopback=True).port == 9000
    localhost = resolving({"localhost": ["127.0.0.1", "::1"]})
    assert check("http://localhost:10000/acct", allow_loopback=True, resolver=localhost).addresses == \
        ("127.0.0.1", "::1")
    with pytest.raises(EndpointRefused):
        check("http://localhost:10000", allow_loopback=False, resolver=localhost)


def test_the_pinned_pool_connects_to_the_checked_address_and_verifies_the_name():
    target = check("https://bucket.storage.example.com:8443", allow_loopback=False,
                   resolver=resolving({"bucket.storage.example.com": ["93.184.216.34"]}))
    pool = endpoint_guard.pinned_pool(target, connect_timeout=1, read_timeout=2)
    assert (pool.host, pool.port, pool.scheme) == ("93.184.216.34", 8443, "https")
    assert pool.conn_kw["server_hostname"] == "bucket.storage.example.com"
    assert pool.assert_hostname == "bucket.storage.example.com" and pool.cert_reqs == "CERT_REQUIRED"
    assert pool.retries is False


# ---- preferences ---------------------------------------------------------------------------

def prefs(**changes):
    return {**DEFAULTS, **changes}


def tenant(plan="free", **sections):
    return {"id": "ten_A", "plan": plan, **sections}


def fields(problems):
    return {p["field"] for p in problems}


def test_the_defaults_follow_the_catalogue():
    assert DEFAULTS["primaryRegion"] == regions.DEFAULT_REGION and region_preferences.rule_problems(DEFAULTS) == []
    assert region_fields.RULED_LEVELS == ("gdpr", "hipaa")


def test_rule_problems_name_every_field_at_fault():
    assert fields(region_preferences.rule_problems(prefs(primaryRegion="nowhere-1", secondaryRegion="ap-northeast-1"))) \
        == {"primaryRegion", "secondaryRegion"}
    assert fields(region_preferences.rule_problems(prefs(secondaryRegion="us-east-1"))) == {"secondaryRegion"}
    assert fields(region_preferences.rule_problems(prefs(dataResidencyRequired=True))) == {"dataResidencyRegion"}
    assert fields(region_preferences.rule_problems(prefs(dataResidencyRegion="moon"))) == {"dataResidencyRegion"}
    assert fields(region_preferences.rule_problems(prefs(
        primaryRegion="eu-west-2", secondaryRegion="eu-west-1", dataResidencyRequired=True,
        dataResidencyRegion="eu"))) == {"primaryRegion"}                    # London is in uk
    assert fields(region_preferences.rule_problems(prefs(
        primaryRegion="eu-west-2", complianceLevel="hipaa"))) == {"primaryRegion"}
    assert region_preferences.rule_problems(prefs(primaryRegion="eu-west-2", complianceLevel="gdpr")) == []
    assert region_preferences.rule_problems(prefs(complianceLevel="pci-dss")) == []   # an open level


@pytest.mark.parametrize("plan", plans.PLANS)
def test_plan_gates_read_the_plans_table(plan):
    for changes, feature in (({"secondaryRegion": "us-west-2"}, "secondary_region"),
                             ({"dataResidencyRequired": True}, "data_residency"),
                             ({"complianceLevel": "gdpr"}, "gdpr"), ({"complianceLevel": "hipaa"}, "hipaa")):
        if plans.has_feature(plan, feature):
            region_preferences.check_plan(prefs(**changes), tenant(plan))
        else:
            with pytest.raises(Forbidden) as refused:
                region_preferences.check_plan(prefs(**changes), tenant(plan))
            assert refused.value.details == {"feature": feature, "requiredPlan": plans.required_plan(feature),
                                             "currentPlan": plan}


# ---- the domain on an in-memory table ------------------------------------------------------

class MemoryTenants:
    def __init__(self, *tenants):
        self.items = {t["id"]: copy.deepcopy(t) for t in tenants}
        self.writes = 0

    def get_consistent(self, tenant_id):
        return copy.deepcopy(self.items.get(tenant_id))

    def set_section(self, tenant_id, section, value, updated_at, also=()):
        self.writes += 1
        self.recorded = [*getattr(self, "recorded", []), *also]
        self.items[tenant_id][section] = copy.deepcopy(value)
        self.items[tenant_id]["updated_at"] = updated_at
        return copy.deepcopy(self.items[tenant_id])


def ctx(tenant_id="ten_A"):
    principal = Principal(subject="usr_1", tenant_id=tenant_id, scopes=frozenset(), credential="user", token_id="j")
    return TenantContext(tenant_id=tenant_id, principal=principal, request_id="req-1")


def test_another_tenant_and_a_missing_one_are_the_same_404():
    store = MemoryTenants(tenant("growth"), {"id": "ten_B", "plan": "growth"})
    for call in (lambda t: region_preferences.get_preferences(ctx(), t, store),
                 lambda t: storage.get_storage(ctx(), t, store),
                 lambda t: routing.check_feature(ctx(), t, "byos", store)):
        with pytest.raises(NotFound) as other:
            call("ten_B")
        with pytest.raises(NotFound) as missing:
            call("ten_missing")
        assert other.value.details == {"id": "ten_B", "resource": "tenant"}
        assert missing.value.details == {"id": "ten_missing", "resource": "tenant"}


def test_a_refused_patch_writes_nothing():
    store = MemoryTenants(tenant("starter"))
    with pytest.raises(ValidationFailed):  # the fields sent disagree among themselves
        region_preferences.update_preferences(ctx(), "ten_A", PreferencesUpdate(
            dataResidencyRequired=True, dataResidencyRegion=None), store)
    with pytest.raises(Conflict) as conflict:  # ...or with what is stored (here: the defaults)
        region_preferences.update_preferences(ctx(), "ten_A", PreferencesUpdate(dataResidencyRequired=True), store)
    assert conflict.value.details == {
        "resource": "regionPreferences", "current": {"dataResidencyRegion": None},
        "fields": [{"field": "dataResidencyRegion", "in": "body",
                    "reason": "is required when dataResidencyRequired is true"}]}
    with pytest.raises(Forbidden):
        region_preferences.update_preferences(ctx(), "ten_A", PreferencesUpdate(complianceLevel="hipaa"), store)
    assert store.writes == 0
    view = region_preferences.update_preferences(ctx(), "ten_A", PreferencesUpdate(complianceLevel="soc2"), store)
    assert view["complianceLevel"] == "soc2" and store.writes == 1


def test_residency_conflicts_with_platform_storage_elsewhere():
    store = MemoryTenants(tenant("starter", storage={"storageMode": "platform", "platformRegion": "us-east-1"}))
    with pytest.raises(Conflict):
        region_preferences.update_preferences(ctx(), "ten_A", PreferencesUpdate(
            primaryRegion="eu-west-1", dataResidencyRequired=True, dataResidencyRegion="eu"), store)


def never_called(*_args, **_kwargs):
    raise AssertionError("the endpoint must not be checked")


def storage_body(adapter=StorageConfigBody, **fields):
    return TypeAdapter(adapter).validate_python(fields)


def test_storage_rules_per_provider_are_the_bodys_model():
    with pytest.raises(ValidationError) as refused:
        storage_body(storageMode="byos", byosProvider="azure", byosBucket="bad--name")
    assert {e["loc"] for e in refused.value.errors()} == {("byosEndpoint",), ("byosBucket",)}
    with pytest.raises(ValidationError) as refused:  # the keys come together
        storage_body(storageMode="byos", byosProvider="azure", byosBucket="good-name", byosAccessKey="acct",
                     byosEndpoint="https://acct.blob.core.windows.net")
    assert [e["loc"] for e in refused.value.errors()] == [("byosSecretKey",)]
    with pytest.raises(ValidationError) as refused:
        storage_body(storageMode="byos")
    assert [e["loc"] for e in refused.value.errors()] == [("byosProvider",)]
    with pytest.raises(ValidationError) as refused:
        storage_body(ByosConfigBody, storageMode="platform")
    assert [e["loc"] for e in refused.value.errors()] == [("storageMode",)]


def test_keys_left_out_with_none_stored_for_the_place_are_409():
    store = MemoryTenants(tenant("growth"))
    body = storage_body(storageMode="byos", byosProvider="r2", byosBucket="acme-1",
                        byosEndpoint="https://acct.r2.cloudflarestorage.com")
    with pytest.raises(Conflict) as conflict:
        storage.put_storage(ctx(), "ten_A", body, store, guard=never_called)
    assert fields(conflict.value.details["fields"]) == {"byosAccessKey", "byosSecretKey"}
    assert conflict.value.details["current"]["storageMode"] == "platform" and store.writes == 0


def test_a_put_never_resolves_a_name_and_validation_checks_it_before_connecting():
    seen = []

    def guard(url, **kwargs):
        seen.append((url, kwargs))
        return endpoint_guard.Target(url, "https", "s3.eu-west-1.amazonaws.com", 443, ())

    assert storage.endpoint_of({"byosProvider": "s3", "byosRegion": "eu-west-1"}) == \
        "https://s3.eu-west-1.amazonaws.com"
    store = MemoryTenants(tenant("growth"))
    body = storage_body(storageMode="byos", byosProvider="s3", byosBucket="acme-1", byosRegion="eu-west-1",
                        byosAccessKey=access_key_id(), byosSecretKey="s" * 40)
    with pytest.raises((BotoCoreError, ClientError)):  # sealing needs KMS, which unit tests do not reach
        storage.put_storage(ctx(), "ten_A", body, store, guard=guard)
    assert seen == []
    answer = storage.validate_storage(ctx(), "ten_A", body, store, guard=guard, probe=lambda _conn: [])
    assert seen == [("https://s3.eu-west-1.amazonaws.com", {"allow_loopback": False, "require_resolution": False})]
    assert answer["ok"] is False


@pytest.mark.parametrize("endpoint", ["https://runsc", "https://localhost", "https://vm.internal", "http://runsc:9000"])
def test_a_name_the_pattern_refuses_is_malformed_without_asking_the_guard(endpoint):
    # The guard would resolve it; its answer (loopback, does not resolve...) would tell what the name is.
    store = MemoryTenants(tenant("growth"))
    body = storage_body(storageMode="byos", byosProvider="r2", byosBucket="acme-1", byosEndpoint=endpoint,
                        byosAccessKey=access_key_id(), byosSecretKey="s" * 40)
    for call in (storage.put_storage, storage.validate_storage):
        with pytest.raises(ValidationFailed) as refused:
            call(ctx(), "ten_A", body, store, guard=never_called)
        assert [(f["field"], f["code"]) for f in refused.value.details["fields"]] == [("byosEndpoint", "malformed")]
    assert store.writes == 0


def test_an_endpoint_refused_when_connecting_is_reported_not_400():
    def guard(url, **_kwargs):
        raise EndpointRefused("private", resolved=True)

    store = MemoryTenants(tenant("growth"))
    body = storage_body(storageMode="byos", byosProvider="r2", byosBucket="acme-1",
                        byosEndpoint="https://inside.example.com", byosAccessKey=access_key_id(), byosSecretKey="s" * 40)
    answer = storage.validate_storage(ctx(), "ten_A", body, store, guard=guard, probe=never_called)
    assert answer["ok"] is False and [s["reason"] for s in answer["steps"]] == ["endpoint_refused"]
    assert "private" in answer["steps"][0]["message"]


def test_validating_stored_platform_storage_is_409_with_the_stored_mode():
    with pytest.raises(Conflict) as conflict:
        storage.validate_storage(ctx(), "ten_A", None, MemoryTenants(tenant("growth")), guard=never_called)
    assert conflict.value.details == {"resource": "storage", "storageMode": "platform"}


def test_the_keys_stay_out_of_every_repr():
    access_key = access_key_id()
    body = BYOS_MODELS["s3"](storageMode="byos", byosProvider="s3", byosBucket="acme-1",
                                     byosRegion="eu-west-1", byosAccessKey=access_key,
                                     byosSecretKey="very-secret-value")
    assert "very-secret-value" not in repr(body) and access_key not in repr(body)
    from svc_core.adapters.storage_probe import Connection
    target = endpoint_guard.Target("https://x", "https", "x", 443, ("8.8.8.8",))
    assert "very-secret-value" not in repr(Connection("s3", target, "b", None, access_key, "very-secret-value"))


# ---- what storage answers become -----------------------------------------------------------

def client_error(code, status):
    from botocore.exceptions import ClientError
    return ClientError({"Error": {"Code": code, "Message": "quoting AKIASECRET"},
                        "ResponseMetadata": {"HTTPStatusCode": status}}, "PutObject")


@pytest.mark.parametrize("code, status, reason", [
    ("InvalidAccessKeyId", 403, "bad_credentials"), ("SignatureDoesNotMatch", 403, "bad_credentials"),
    ("AccessDenied", 403, "access_denied"), ("NoSuchBucket", 404, "no_such_bucket"),
    ("PermanentRedirect", 301, "wrong_region"), ("", 403, "access_denied"), ("404", 404, "no_such_bucket"),
    ("InternalError", 500, "unexpected_response"), ("NoSuchKey", 404, "unexpected_response"),
])
def test_s3_answers_become_reasons(code, status, reason):
    from svc_core.adapters.storage_probe import _s3_failure
    failed = _s3_failure(client_error(code, status))
    assert failed.reason == reason


def test_azure_answers_become_reasons():
    from azure.core.exceptions import ClientAuthenticationError, HttpResponseError, ResourceNotFoundError

    from svc_core.adapters.storage_probe import _azure_failure

    def error(cls, code, status):
        exc = cls(message="quoting the account")
        exc.error_code, exc.status_code = code, status
        return exc

    assert _azure_failure(error(ClientAuthenticationError, "AuthenticationFailed", 403)).reason == "bad_credentials"
    assert _azure_failure(error(HttpResponseError, "AuthorizationPermissionMismatch", 403)).reason == "access_denied"
    assert _azure_failure(error(ResourceNotFoundError, "ContainerNotFound", 404)).reason == "no_such_bucket"
    assert _azure_failure(error(ClientAuthenticationError, None, None)).reason == "bad_credentials"


def test_network_failures_become_unreachable_or_timeout():
    import urllib3

    from svc_core.adapters.storage_probe import _network_reason
    refused = urllib3.exceptions.NewConnectionError(None, "refused")  # a ConnectTimeoutError by descent
    assert _network_reason(refused) == "unreachable"
    assert _network_reason(urllib3.exceptions.ReadTimeoutError(None, "/", "read timed out")) == "timeout"
    assert _network_reason(urllib3.exceptions.ConnectTimeoutError("connect timed out")) == "timeout"
    wrapped = RuntimeError("outer")
    wrapped.__cause__ = ConnectionResetError()
    assert _network_reason(wrapped) == "unreachable"
    assert _network_reason(ValueError("nothing to do with the network")) is None
