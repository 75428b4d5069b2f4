"""Regions and storage: the request and response models of the regional preferences
(domain/region_preferences), the storage configuration (domain/storage) and the routing
information (domain/routing); svc_core/domain/models says why they live apart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StringConstraints,
    Tag,
    ValidationError,
    WrapValidator,
    create_model,
    model_validator,
)
from pydantic_core import PydanticCustomError

from svc_core.domain.fields.regions import (
    COMPLIANCE_LEVEL_PATTERN,
    ENDPOINT_PATTERN,
    FIELDS,
    KEYS,
    PROVIDER_RULES,
    PROVIDERS,
    RULED_LEVELS,
    Jurisdiction,
    ProviderRules,
    RegionId,
    body_schema_rules,
)
from svc_core.domain.models.request_body import DocumentedPattern, RequestBody

# ---- regional preferences ------------------------------------------------------------------

ComplianceLevel = Annotated[str, StringConstraints(pattern=COMPLIANCE_LEVEL_PATTERN)]


def _document_rules(schema: dict[str, Any]) -> None:
    schema["minProperties"] = 1
    schema["allOf"] = body_schema_rules()


class PreferencesUpdate(RequestBody):
    """Only the fields sent change; secondaryRegion and dataResidencyRegion may be set to null. The
    fields sent must agree among themselves (rule_problems on them alone; allOf in the document)."""
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=_document_rules)
    primaryRegion: RegionId = Field(  # type: ignore[assignment]
        None, description="an available region of the catalogue; may be left out, not set to null")
    secondaryRegion: RegionId | None = Field(None, description="an available region other than the primary")
    dataResidencyRequired: bool = Field(None, examples=[False])  # type: ignore[assignment]
    dataResidencyRegion: Jurisdiction | None = Field(None, description="a jurisdiction of the catalogue")
    complianceLevel: ComplianceLevel = Field(  # type: ignore[assignment]
        None, description="an open list of lowercase identifiers; " + ", ".join(RULED_LEVELS) + " have rules: "
                          "the regions must be certified for them")

    @model_validator(mode="after")
    def _at_least_one_field(self) -> PreferencesUpdate:
        if not self.model_fields_set:
            raise ValueError("send at least one of " + ", ".join(FIELDS))
        return self


class Preferences(BaseModel):
    tenantId: str
    primaryRegion: str = Field(examples=["eu-central-1"])
    secondaryRegion: str | None
    dataResidencyRequired: bool
    dataResidencyRegion: str | None = Field(description="a jurisdiction of the catalogue, e.g. eu")
    complianceLevel: str
    isDefault: bool = Field(description="true until the tenant first sets its preferences")
    updated_at: str | None = Field(description="ISO 8601 UTC; null while the defaults apply")


class RegionView(BaseModel):
    id: str = Field(examples=["eu-central-1"])
    name: str
    jurisdiction: str
    complianceLevels: list[str]
    available: bool


class RegionList(BaseModel):
    items: list[RegionView]
    nextCursor: None = Field(description="always null: the catalogue is one page")
    defaultRegion: str
    jurisdictions: list[str]


# ---- storage -------------------------------------------------------------------------------

Endpoint = Annotated[str, StringConstraints(min_length=8, max_length=2048), DocumentedPattern(ENDPOINT_PATTERN)]
AwsRegion = Annotated[str, StringConstraints(min_length=1, max_length=32, pattern=r"^[a-z0-9][a-z0-9-]*$")]
Secret = Annotated[str, StringConstraints(min_length=1, max_length=512, pattern=r"^[\x21-\x7e]+$")]


class PlatformStorageBody(RequestBody):
    """The platform's storage."""
    storageMode: Literal["platform"]
    platformRegion: RegionId | None = Field(
        None, description="an available region of the catalogue; default: the tenant's primary region")


class _ByosBody(RequestBody):
    """A bucket of the tenant's own; the keys come together, or neither to keep the stored ones."""
    model_config = ConfigDict(json_schema_extra={"dependentRequired": {"byosAccessKey": ["byosSecretKey"],
                                                                       "byosSecretKey": ["byosAccessKey"]}})
    storageMode: Literal["byos"]
    byosEndpoint: Endpoint | None = Field(None, description="s3: optional; azure: the account endpoint")
    byosRegion: AwsRegion | None = Field(None, description="s3: the bucket's region; others: optional",
                                         examples=["us-east-1"])
    # Not nullable: a key sent is a key. repr=False: the keys stay out of every repr of the body
    # (Powertools logs a route's arguments at DEBUG).
    byosAccessKey: Secret = Field(None, repr=False,  # type: ignore[assignment]
                                  description="for azure: the account name; write-only; with byosSecretKey")
    byosSecretKey: Secret = Field(None, repr=False,  # type: ignore[assignment]
                                  description="for azure: the account key; write-only; with byosAccessKey")

    @model_validator(mode="after")
    def _keys_together(self) -> _ByosBody:
        sent = [k for k in KEYS if k in self.model_fields_set]
        if len(sent) == 1:
            missing = next(k for k in KEYS if k not in sent)
            raise PydanticCustomError("keys_together", "is required with {sent} (send both keys, or neither to keep "
                                      "the stored ones)", {"sent": sent[0], "field": missing})
        return self


def _provider_model(provider: str, rules: ProviderRules) -> type[_ByosBody]:
    bucket = Annotated[str, StringConstraints(min_length=3, max_length=rules.bucket_max, pattern=rules.bucket_pattern)]
    fields: dict[str, Any] = {"byosProvider": (Literal[provider], ...),  # type: ignore[valid-type]
                              "byosBucket": (bucket, Field(description=f"{rules.bucket_rule}",
                                                           examples=["svc-sample-files"]))}
    for name in rules.required:  # the same type as the optional field, now required and not null
        annotation = _ByosBody.model_fields[name].annotation.__args__[0]  # type: ignore[union-attr]
        optional = _ByosBody.model_fields[name]
        fields[name] = (annotation, Field(description=optional.description, examples=optional.examples))
    return create_model(f"{provider.capitalize()}StorageBody", __base__=_ByosBody, **fields)


BYOS_MODELS = {provider: _provider_model(provider, rules) for provider, rules in PROVIDER_RULES.items()}


def _variant(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    if value.get("storageMode") == "platform":
        return "platform"
    provider = value.get("byosProvider")
    return provider if value.get("storageMode") == "byos" and provider in PROVIDERS else None


def _field_names(value: Any, handler: Callable[[Any], Any]) -> Any:
    """The union's errors as the fields of the body: pydantic puts the variant's tag first in
    `loc` (byos.s3.byosBucket); a body without a known variant names storageMode or byosProvider;
    the keys' rule names the key missing."""
    try:
        return handler(value)
    except ValidationError as invalid:
        errors = []
        for error in invalid.errors():
            loc = tuple(error["loc"])
            if loc and loc[0] in ("platform", *PROVIDERS):
                loc = loc[1:]
            if error["type"] == "storage_variant":
                byos = isinstance(value, dict) and value.get("storageMode") == "byos"
                loc = ("byosProvider",) if byos else ("storageMode",)
            elif error["type"] == "keys_together":
                loc = (error["ctx"]["field"],)
            errors.append({"type": PydanticCustomError(error["type"], error["msg"]), "loc": loc,
                           "input": error["input"]})
        raise ValidationError.from_exception_data(invalid.title, errors) from None


def _union(models: dict[str, type[BaseModel]], message: str) -> Any:
    variants = tuple(Annotated[model, Tag(tag)] for tag, model in models.items())
    # Union[...] of a tuple made at run time: `|` has no spelling for it.
    return Annotated[Union[variants],  # type: ignore[valid-type]  # noqa: UP007
                     Discriminator(_variant, custom_error_type="storage_variant", custom_error_message=message),
                     WrapValidator(_field_names)]


VARIANT_MESSAGE = ("storageMode must be platform or byos, and byos needs byosProvider, one of " + ", ".join(PROVIDERS))
# A whole storage configuration (PUT), and a BYOS one (what validation can check).
StorageConfigBody = _union({"platform": PlatformStorageBody, **BYOS_MODELS}, VARIANT_MESSAGE)
ByosConfigBody = _union(BYOS_MODELS, "a byos configuration: storageMode byos, byosProvider one of " + ", ".join(PROVIDERS))


class StorageConfig(BaseModel):
    tenantId: str
    storageMode: Literal["platform", "byos"]
    platformRegion: str | None = Field(description="platform storage: where it is; null with byos")
    byosProvider: str | None
    byosEndpoint: str | None
    byosBucket: str | None
    byosRegion: str | None
    byosAccessKeySet: bool
    byosSecretKeySet: bool
    byosAccessKeyLast4: str | None = Field(description="the access key's last four characters (null when it "
                                                       "is shorter than 12)")
    isDefault: bool = Field(description="true until the tenant first sets its storage")
    updated_at: str | None


class ValidationStep(BaseModel):
    step: Literal["write", "read", "delete"]
    ok: bool
    latencyMs: int
    reason: Literal["bad_credentials", "no_such_bucket", "access_denied", "wrong_region", "unreachable",
                    "timeout", "unexpected_response", "endpoint_refused"] | None = None
    message: str | None = None
    providerCode: str | None = Field(None, description="the storage's own error code, when it gave one")


class StorageValidation(BaseModel):
    ok: bool
    source: Literal["stored", "body"] = Field(description="which configuration was tried")
    byosProvider: str
    byosEndpoint: str | None
    byosBucket: str
    steps: list[ValidationStep] = Field(description="write, read back, delete; stops at the first failure")
    checked_at: str


# ---- routing -------------------------------------------------------------------------------

class DataResidency(BaseModel):
    required: bool
    region: str | None


class StorageRouting(BaseModel):
    mode: str = Field(description="platform or byos")
    region: str | None = Field(description="the platform region, or the BYOS bucket's region when known")
    provider: str | None = Field(description="the BYOS provider; null with platform storage")


class RoutingInfo(BaseModel):
    requestId: str
    servingRegion: str = Field(description="the AWS region of the function that answered")
    homeRegion: str = Field(description="the region of the cell holding the tenant's data (a single-cell "
                                        "deployment: the one region it has)")
    homeBaseUrl: str | None = Field(description="the public base URL of the tenant's cell; null in a single-cell "
                                                "deployment (the URL you called)")
    stage: str
    apiVersion: str
    tenantId: str
    plan: str
    primaryRegion: str
    secondaryRegion: str | None
    dataResidency: DataResidency
    storage: StorageRouting


class FeatureCheck(BaseModel):
    featureKey: str
    enabled: bool
    currentPlan: str
    requiredPlan: str
    description: str


# ---- moving a tenant between cells -----------------------------------------------------------

class MigrationStart(RequestBody):
    toRegion: RegionId = Field(description="the region of the cell to move the tenant's data to (GET /regions "
                                           "marks available the regions with a cell)")


class MigrationTable(BaseModel):
    copied: int | None = Field(description="the tenant's items of the table copied to the new cell")
    verified: int | None = Field(None, description="items equal in both cells at the switch (null before it)")
    checksum: str | None = Field(None, description="SHA-256 over every item's key and digest, equal in both cells")
    copyMs: int | None = Field(None, description="how long the first copy of the table took")
    copiedInRun: int | None = Field(None, description="the worker's run that copied the table (a run that resumes a "
                                                      "move does not copy again what an earlier one recorded)")


class MigrationFiles(BaseModel):
    copied: int = 0
    verified: int | None = None


class Migration(BaseModel):
    tenantId: str
    status: Literal["pending", "copying", "verifying", "switching", "cleaning", "done", "failed"]
    fromRegion: str
    toRegion: str
    tables: dict[str, MigrationTable] = Field(description="per table (its logical id in template.yaml)")
    files: MigrationFiles
    writesPausedMs: int | None = Field(description="how long writes were paused for the switch (null before it)")
    startedAt: str
    finishedAt: str | None
    error: str | None = Field(description="the last step's failure (the worker retries it), or why it failed")
    runs: int | None = Field(None, description="the worker's runs so far (one more each time it resumes the move)")
