"""The tool catalogue: every tool an agent may be allowed to use, what it does, and whether it
changes something.

An agent's config.tools names a subset of these (all of them by default). Whether a tool that
changes something actually runs depends on the agent's autonomyLevel (svc_core/domain/agents.py):
`suggest` never runs one (the change is proposed in the output), `supervised` pauses the run for
the caller's approval before each one, `autonomous` runs it. Tools that only read always run.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    changes: bool  # True: it changes something (a write); False: it only reads


CATALOGUE: tuple[Tool, ...] = (
    Tool("read_project", "Read the run's project: its name, description and language.", changes=False),
    Tool("list_files", "List the files of the run's project.", changes=False),
    Tool("read_file", "Read one file of the run's project.", changes=False),
    Tool("write_file", "Create or overwrite one file of the run's project.", changes=True),
    Tool("read_secret", "Read one of the tenant's secrets by name; the value is given to the model, "
                        "never returned to the client.", changes=False),
)

TOOLS: dict[str, Tool] = {tool.name: tool for tool in CATALOGUE}
TOOL_NAMES: tuple[str, ...] = tuple(TOOLS)
DEFAULT_TOOLS: tuple[str, ...] = TOOL_NAMES  # an agent created without config.tools may use every tool


def changes_something(name: str) -> bool:
    """Whether the named tool changes something (KeyError for a name outside the catalogue)."""
    return TOOLS[name].changes


def in_catalogue_order(names: list[str] | tuple[str, ...]) -> list[str]:
    """The named tools, each once, in the catalogue's order (names outside it are dropped)."""
    chosen = set(names)
    return [name for name in TOOL_NAMES if name in chosen]
