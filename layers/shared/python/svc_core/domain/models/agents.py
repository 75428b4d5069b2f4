"""Agents' and their runs' request and response models (svc_core/domain/models says why they live apart)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, StringConstraints

from svc_core.contracts import deployment_document
from svc_core.domain import agent_tools, projects
from svc_core.domain.fields.agents import (
    AUTONOMY_HELP,
    DEFAULT_AUTONOMY_LEVEL,
    DEFAULT_STEP_LIMIT,
    MAX_GOAL,
    MAX_MODEL_ID,
    MAX_NAME,
    MAX_REASON,
    MAX_STEPS,
    MAX_SYSTEM_PROMPT,
    MIN_STEPS,
    MODEL_HELP,
    NAME_HELP,
    PROMPT_HELP,
    STATUSES,
    STEPS_HELP,
    TOOLS_HELP,
    AutonomyLevel,
    ToolName,
)
from svc_core.domain.models.common import Deleted, Page, named
from svc_core.domain.models.request_body import VISIBLE, PatchBody, RequestBody, id_of, name_text, unicode_text, whole_number

# ---- agents --------------------------------------------------------------------------------------

def _each_once(names: list[str]) -> list[str]:
    if len(set(names)) != len(names):
        raise ValueError("must name each tool at most once")
    return agent_tools.in_catalogue_order(names)


Name = name_text(MAX_NAME)
SystemPrompt = Annotated[str, StringConstraints(min_length=1, max_length=MAX_SYSTEM_PROMPT, pattern=VISIBLE),
                         AfterValidator(unicode_text)]
# The allowed ids are the deployment's: the document served lists them (svc_core/contracts/deployment_document.py).
ModelId = Annotated[str, StringConstraints(min_length=1, max_length=MAX_MODEL_ID),
                    Field(json_schema_extra=deployment_document.mark(deployment_document.ALLOWED_MODELS))]
StepLimit = whole_number(MIN_STEPS, MAX_STEPS)
Tools = Annotated[list[ToolName], Field(max_length=len(agent_tools.TOOL_NAMES),  # type: ignore[valid-type]
                                        json_schema_extra={"uniqueItems": True}),
                  AfterValidator(_each_once)]


class AgentConfigBody(RequestBody):
    """Every field may be left out (or null): the defaults are in the schema."""
    autonomyLevel: AutonomyLevel | None = Field(DEFAULT_AUTONOMY_LEVEL, description=AUTONOMY_HELP)  # type: ignore
    model: ModelId | None = Field(None, description=MODEL_HELP)
    stepLimit: StepLimit | None = Field(DEFAULT_STEP_LIMIT, description=STEPS_HELP)  # type: ignore[valid-type]
    tools: Tools | None = Field(list(agent_tools.DEFAULT_TOOLS), description=TOOLS_HELP)  # type: ignore[valid-type]


class AgentCreate(RequestBody):
    name: Name = Field(description=NAME_HELP, examples=["Release notes writer"])
    systemPrompt: SystemPrompt = Field(description=PROMPT_HELP)
    config: AgentConfigBody = Field(default_factory=AgentConfigBody,
                                    description="left out: every field's default, as {}",
                                    json_schema_extra={"default": {}})


class AgentConfigUpdate(PatchBody):
    """Merged into the stored config: the fields sent change; null resets one to its default."""
    autonomyLevel: AutonomyLevel | None = Field(None, description=AUTONOMY_HELP)  # type: ignore[valid-type]
    model: ModelId | None = Field(None, description=MODEL_HELP)
    stepLimit: StepLimit | None = Field(None, description=STEPS_HELP)  # type: ignore[valid-type]
    tools: Tools | None = Field(None, description=TOOLS_HELP)  # type: ignore[valid-type]


class AgentUpdate(PatchBody):
    """Only the fields sent change; name, systemPrompt and config may be left out, not set to null."""
    name: Name = Field(None, description=NAME_HELP, examples=["Changelog writer"])  # type: ignore[assignment]
    systemPrompt: SystemPrompt = Field(None, description=PROMPT_HELP)  # type: ignore[assignment]
    config: AgentConfigUpdate = Field(None, description="merged into the stored config")  # type: ignore[assignment]


class AgentConfig(BaseModel):
    autonomyLevel: AutonomyLevel  # type: ignore[valid-type]
    model: str | None = Field(description="null: the deployment's default model")
    stepLimit: int
    tools: list[str]


class Agent(BaseModel):
    id: str = Field(examples=["agt_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    name: str
    systemPrompt: str
    config: AgentConfig
    created_at: str = Field(description="ISO 8601 UTC")
    updated_at: str = Field(description="ISO 8601 UTC")


AgentPage = named("AgentPage", Page[Agent])
AgentDeleted = named("AgentDeleted", Deleted)


# ---- runs ----------------------------------------------------------------------------------------

Goal = Annotated[str, StringConstraints(min_length=1, max_length=MAX_GOAL, pattern=VISIBLE),
                 AfterValidator(unicode_text)]


class RunCreate(RequestBody):
    goal: Goal = Field(description=f"what the agent should do, 1 to {MAX_GOAL:,} characters, at least one visible")
    projectId: id_of(projects.PREFIX) = Field(  # type: ignore[valid-type]
        description="the tenant's project the run works in (its files are the tools' files)",
        examples=["proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    run_async: bool = Field(False, alias="async", description=(
        "true: answer 202 with the queued run at once; a worker runs it (and continues it after each approval)"))


Reason = Annotated[str, StringConstraints(min_length=1, max_length=MAX_REASON, pattern=VISIBLE),
                   AfterValidator(unicode_text)]


class RunDecision(RequestBody):
    reason: Reason | None = Field(None, description=(
        f"why (1 to {MAX_REASON:,} characters); a rejection's reason is what the model is told"))


class RunUsage(BaseModel):
    inputTokens: int
    outputTokens: int
    microCredits: int = Field(description="the sum of the run's metered model calls")


class RunError(BaseModel):
    code: str = Field(description="MODEL_THROTTLED, MODEL_UNAVAILABLE, STEP_LIMIT_REACHED, CANCELLED, "
                                  "CONVERSATION_TOO_LARGE or INTERNAL_ERROR")
    message: str
    retryAfterSeconds: int | None = Field(
        default=None, description="MODEL_THROTTLED only: the seconds the model provider asked to wait "
                                  "(its Retry-After, at most 60; 10 when it said none)")


class Run(BaseModel):
    id: str = Field(examples=["run_01JD2Q7ZB6V8S3K4X9W2M5N7PA"])
    agentId: str
    projectId: str
    goal: str
    status: Literal[STATUSES]  # type: ignore[valid-type]
    output: str | None = Field(description="the model's final text (suggest mode: with the proposed changes)")
    steps: list[dict[str, Any]] = Field(description=(
        "in order: {type: model, text, toolUses [{toolUseId, name, input}], stopReason, usage, at} and "
        "{type: tool, toolUseId, name, input, status (success, error, proposed, awaiting_approval, approved, "
        "rejected), result, at, approval?: {decision, by, at, reason}}; a secret's value never appears"))
    usage: RunUsage
    model: str
    created_at: str = Field(description="ISO 8601 UTC")
    completed_at: str | None = Field(description="ISO 8601 UTC; set when the run is completed, failed or cancelled")
    error: RunError | None
    background: bool = Field(description="true when the worker runs it (async, or handed off at the time budget)")
    cancelRequested: bool = Field(description="a cancel was asked while the run was running; it stops before its "
                                              "next model call or tool")


RunPage = named("RunPage", Page[Run])
