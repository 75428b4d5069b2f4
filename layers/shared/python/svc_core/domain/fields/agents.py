"""Agents' and runs' fields: an agent's name, system prompt, model and config (limits, defaults,
allowed values and their help texts); a run's goal, statuses and a decision's reason."""

from __future__ import annotations

from typing import Literal

from svc_core.domain import agent_tools

MAX_NAME = 200
MAX_SYSTEM_PROMPT = 20_000
MAX_MODEL_ID = 256
MIN_STEPS, MAX_STEPS, DEFAULT_STEP_LIMIT = 1, 25, 8
DEFAULT_AUTONOMY_LEVEL = "suggest"
AUTONOMY_LEVELS: dict[str, str] = {
    "suggest": "only tools that read run; a change is proposed in the run's output, never made",
    "supervised": "a tool that changes something pauses the run (awaiting_approval) until the caller "
                  "approves or rejects that call; tools that read run",
    "autonomous": "every allowed tool runs",
}
NAME_HELP = f"1 to {MAX_NAME} characters, at least one visible; leading and trailing spaces are trimmed"
PROMPT_HELP = f"1 to {MAX_SYSTEM_PROMPT:,} characters, at least one visible; kept exactly as sent"
AUTONOMY_HELP = ("; ".join(f"{level}: {meaning}" for level, meaning in AUTONOMY_LEVELS.items())
                 + f"; null or left out: {DEFAULT_AUTONOMY_LEVEL}")
MODEL_HELP = "one of the deployment's allowed model ids; null or left out: the deployment's default model"
STEPS_HELP = (f"the most model calls one run may make, {MIN_STEPS} to {MAX_STEPS}; "
              f"null or left out: {DEFAULT_STEP_LIMIT}")
TOOLS_HELP = ("the tools the agent may use, each at most once: "
              + "; ".join(f"{t.name} ({'changes' if t.changes else 'reads'}): {t.description.rstrip('.')}"
                          for t in agent_tools.CATALOGUE)
              + "; null or left out: every tool; [] for none")
AutonomyLevel = Literal[tuple(AUTONOMY_LEVELS)]  # type: ignore[valid-type]
ToolName = Literal[agent_tools.TOOL_NAMES]  # type: ignore[valid-type]

MAX_GOAL = 20_000
STATUSES = ("queued", "running", "awaiting_approval", "completed", "failed", "cancelled")
MAX_REASON = 1_000
