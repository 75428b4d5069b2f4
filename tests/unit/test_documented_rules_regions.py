"""The OpenAPI document and the server agree on what regions, storage and tenant settings accept:
the enums are the catalogue's (and tzdata's), and a body the document's schema accepts is one
the server's validator accepts, and the other way round, over generated bodies."""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import TypeAdapter, ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from svc_core.adapters import endpoint_guard
from svc_core.contracts import regions
from svc_core.domain import region_preferences, storage
from svc_core.domain.fields import regions as region_fields
from svc_core.domain.fields import tenants as tenant_fields
from svc_core.domain.fields.regions import FIELDS
from svc_core.domain.models.regions import ByosConfigBody, PreferencesUpdate, StorageConfigBody
from svc_core.domain.models.tenants import TIMEZONE_PATTERN, SettingsPatch
from svc_core.platform.errors import ValidationFailed

DOCUMENT = json.loads((Path(__file__).parents[2] / "functions/meta/openapi.json").read_text())
REGISTRY = Registry().with_resource("urn:doc", Resource.from_contents(DOCUMENT, default_specification=DRAFT202012))
SCHEMAS = DOCUMENT["components"]["schemas"]
EXAMPLES = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": f"urn:doc#/components/schemas/{name}"}, registry=REGISTRY)


def body_schema(path: str, method: str) -> Draft202012Validator:
    schema = DOCUMENT["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]
    return Draft202012Validator(json.loads(json.dumps(schema).replace('"#/', '"urn:doc#/')), registry=REGISTRY)


# ---- regional preferences ------------------------------------------------------------------

def test_the_preferences_enums_are_the_catalogues():
    props = SCHEMAS["PreferencesUpdate"]["properties"]
    available = [r.id for r in regions.REGIONS.values() if r.available]
    assert props["primaryRegion"]["enum"] == available
    assert {"enum": available, "type": "string"} in props["secondaryRegion"]["anyOf"]
    jurisdictions = sorted({r.jurisdiction for r in regions.REGIONS.values()})
    assert [s for s in props["dataResidencyRegion"]["anyOf"] if "enum" in s][0]["enum"] == jurisdictions
    assert SCHEMAS["PlatformStorageBody"]["properties"]["platformRegion"]["anyOf"][0]["enum"] == available


def server_accepts_preferences(body: dict) -> bool:
    try:
        region_preferences.check_body(PreferencesUpdate.model_validate(body))
    except (ValidationError, ValidationFailed):
        return False
    return True


REGION_VALUES = st.sampled_from([*regions.REGIONS, "mars-1", None])
PREFERENCE_VALUES = {
    "primaryRegion": REGION_VALUES, "secondaryRegion": REGION_VALUES,
    "dataResidencyRequired": st.sampled_from([True, False, None]),
    "dataResidencyRegion": st.sampled_from(["eu", "us", "uk", "ca", "apac", "moon", None]),
    "complianceLevel": st.one_of(st.sampled_from(["standard", "gdpr", "hipaa", "GDPR", "gdp", "gdprx", "hipa"]),
                                 st.from_regex(r"[a-z][a-z0-9_-]{0,31}", fullmatch=True)),
}
PREFERENCE_BODIES = st.fixed_dictionaries({}, optional=PREFERENCE_VALUES)


@EXAMPLES
@given(PREFERENCE_BODIES)
def test_a_preferences_body_the_document_accepts_is_one_the_server_accepts_and_back(body):
    assert validator("PreferencesUpdate").is_valid(body) == server_accepts_preferences(body), body


@pytest.mark.parametrize("body", [
    {"dataResidencyRegion": "eu", "complianceLevel": "gdpr"},          # valid alone: the stored state decides
    {"primaryRegion": "eu-west-2", "secondaryRegion": "eu-west-1", "complianceLevel": "gdpr"},
    {"dataResidencyRequired": True},
])
def test_bodies_valid_alone_pass_both(body):
    assert validator("PreferencesUpdate").is_valid(body) and server_accepts_preferences(body)


def test_the_pattern_for_other_levels_excludes_exactly_the_ruled_ones():
    pattern = re.compile(region_fields.level_pattern_other_than(region_fields.RULED_LEVELS))
    for level in ("standard", "g", "gdp", "gdprs", "hipaa-x", "soc2", "a" * 32):
        assert pattern.fullmatch(level), level
    for level in (*region_fields.RULED_LEVELS, "a" * 33, "Gdpr"):
        assert not pattern.fullmatch(level), level


def test_a_conflict_with_the_stored_preferences_names_what_is_stored():
    merged = {**region_preferences.DEFAULTS, "complianceLevel": "gdpr"}  # us-east-1 stored, not gdpr
    problems = region_preferences.rule_problems(merged)
    assert [(p["field"], p["with"]) for p in problems] == [("primaryRegion", ("primaryRegion", "complianceLevel"))]
    assert set(FIELDS) >= {f for p in problems for f in p["with"]}


# ---- storage -------------------------------------------------------------------------------

def server_accepts_storage(body: dict, adapter=StorageConfigBody) -> bool:
    try:
        TypeAdapter(adapter).validate_python(body)
    except ValidationError:
        return False
    return True


STORAGE_VALUES = {
    "storageMode": st.sampled_from(["platform", "byos", "cloud"]),
    "platformRegion": st.sampled_from(["eu-west-1", "ap-northeast-1", None]),
    "byosProvider": st.sampled_from([*region_fields.PROVIDERS, "ftp"]),
    "byosEndpoint": st.sampled_from(["https://acct.r2.cloudflarestorage.com", "https://storage.googleapis.com",
                                     None]),
    "byosBucket": st.sampled_from(["acme-1", "under_score", "two--hyphens", "Up", "a.b.c"]),
    "byosRegion": st.sampled_from(["eu-west-1", None]),
    "byosAccessKey": st.just("test-access-key-id"),
    "byosSecretKey": st.just("s" * 40),
}


@EXAMPLES
@given(st.fixed_dictionaries({}, optional=STORAGE_VALUES))
def test_a_storage_body_the_document_accepts_is_one_the_server_accepts_and_back(body):
    put = body_schema("/api/v1/regions/storage/{tenantId}", "put")
    assert put.is_valid(body) == server_accepts_storage(body), body
    check = body_schema("/api/v1/regions/storage/{tenantId}/validate", "post")
    assert check.is_valid(body) == server_accepts_storage(body, ByosConfigBody), body


def test_the_providers_are_the_servers():
    variants = DOCUMENT["paths"]["/api/v1/regions/storage/{tenantId}"]["put"]["requestBody"]["content"][
        "application/json"]["schema"]["oneOf"]
    names = [v["$ref"].rsplit("/", 1)[1] for v in variants]
    assert [SCHEMAS[n]["properties"].get("byosProvider", {}).get("const") for n in names] == [None, *region_fields.PROVIDERS]
    for provider, rules in region_fields.PROVIDER_RULES.items():
        schema = SCHEMAS[f"{provider.capitalize()}StorageBody"]
        assert set(schema["required"]) == {"storageMode", "byosProvider", "byosBucket", *rules.required}
        assert schema["properties"]["byosBucket"]["pattern"] == rules.bucket_pattern


@EXAMPLES
@given(st.from_regex(region_fields.ENDPOINT_PATTERN, fullmatch=True).filter(lambda url: len(url) <= 2048))
def test_an_endpoint_matching_the_documented_pattern_is_accepted_without_resolving_it(url):
    def no_guard(*_args, **_kwargs):
        raise AssertionError("a name the pattern accepts is not resolved on PUT")

    assert storage.check_endpoint(url, no_guard) is None
    scheme, host, port = endpoint_guard.parse(url)  # what the connection will parse agrees
    assert scheme == "https" and 1 <= port <= 65535 and endpoint_guard._ip_literal(host) is None


@pytest.mark.parametrize("url", ["https://10.0.0.8", "https://[::1]", "http://storage.example.com",
                                 "https://localhost", "https://2130706433", "https://0x7f.1",
                                 "https://a.example.com:0", "https://a.example.com?x=1", "https://u@a.example.com",
                                 "https://minio.local", "https://s3.corp.INTERNAL:9000", "https://a.localhost/x"])
def test_endpoints_outside_the_pattern_are_400(url):
    assert not re.fullmatch(region_fields.ENDPOINT_PATTERN, url)
    with pytest.raises(ValidationFailed):
        storage.check_endpoint(url)


# ---- tenant settings -----------------------------------------------------------------------

@EXAMPLES
@given(st.from_regex(tenant_fields.CIDR_PATTERN, fullmatch=True))
def test_a_cidr_matching_the_documented_pattern_is_accepted_and_normalised(cidr):
    patch = SettingsPatch.model_validate({"ipAllowlist": [cidr]})
    assert patch.ipAllowlist == [str(ipaddress.ip_network(cidr, strict=False))]


@EXAMPLES
@given(st.one_of(st.ip_addresses().map(str), st.ip_addresses(v=6).map(lambda a: a.exploded)),
       st.integers(0, 140), st.booleans())
def test_every_address_ipaddress_reads_matches_the_pattern(address, prefix, with_prefix):
    text = f"{address}/{prefix}" if with_prefix else address
    try:
        ipaddress.ip_network(text, strict=False)
        readable = True
    except ValueError:
        readable = False
    assert bool(re.fullmatch(tenant_fields.CIDR_PATTERN, text)) == readable, text


def test_the_settings_schema_uses_the_servers_pattern_and_zones():
    props = SCHEMAS["SettingsPatch"]["properties"]
    items = props["ipAllowlist"]["anyOf"][0]["items"]
    assert items["pattern"] == tenant_fields.CIDR_PATTERN
    pattern = [s for s in props["timezone"]["anyOf"] if "pattern" in s][0]["pattern"]
    assert pattern == TIMEZONE_PATTERN
    from importlib import resources
    zones = resources.files("tzdata").joinpath("zones").read_text().split()
    assert "Europe/Berlin" in zones and "Etc/GMT+1" in zones
    for zone in zones:  # every zone of tzdata, and nothing one character off, matches
        assert validator("SettingsPatch").is_valid({"timezone": zone}), zone
        assert not validator("SettingsPatch").is_valid({"timezone": zone + "x"}), zone
    assert not validator("SettingsPatch").is_valid({"timezone": "Etc/GMT+1".replace("+", "x")})


@pytest.mark.parametrize("cidr", [":54Bc9:8137f", "01.2.3.4", "10.0.0.0/33", "fe80::1%eth0", "1:2:3:4:5:6:7:8:9"])
def test_what_the_pattern_refuses_the_server_refuses(cidr):
    assert not validator("SettingsPatch").is_valid({"ipAllowlist": [cidr]})
    with pytest.raises(ValidationError):
        SettingsPatch.model_validate({"ipAllowlist": [cidr]})


def test_host_bits_are_cleared():
    assert SettingsPatch.model_validate({"ipAllowlist": ["10.1.2.3/8", "2001:db8::1/32"]}).ipAllowlist == \
        ["10.0.0.0/8", "2001:db8::/32"]
