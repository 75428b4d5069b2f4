"""The tool catalogue: every tool an agent may be allowed to use, what it does, and whether it
changes something.

An agent's config.tools names a subset of these (all of them by default). Whether a tool that
changes something actually runs depends on the agent's autonomyLevel (svc_core/domain/agents.py):
`suggest` never runs one (the change is proposed in the output), `supervised` pauses the run for
the caller's approval before each one, `autonomous` runs it. Tools that only read always run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_PATH = 256                 # characters of a file's path inside its project
MAX_FILE_BYTES = 256 * 1024    # bytes of one file (UTF-8 text)
PATH_HELP = (f"a relative path inside the project, 1 to {MAX_PATH} characters, '/' between folders; "
             "no leading '/', no '.' or '..' segment")


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


_PATH = {"type": "string", "minLength": 1, "maxLength": MAX_PATH, "description": PATH_HELP}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    changes: bool  # True: it changes something (a write); False: it only reads
    input_schema: dict[str, Any] = field(default_factory=lambda: _object({}))  # JSON Schema of its input


CATALOGUE: tuple[Tool, ...] = (
    Tool("read_project", "Read the run's project: its name, description and language.", changes=False),
    Tool("list_files", "List the files of the run's project.", changes=False,
         input_schema=_object({"prefix": {"type": "string", "maxLength": MAX_PATH,
                                          "description": "only the paths that start with this"}})),
    Tool("read_file", "Read one file of the run's project.", changes=False,
         input_schema=_object({"path": _PATH}, ("path",))),
    Tool("write_file", "Create or overwrite one file of the run's project.", changes=True,
         input_schema=_object({"path": _PATH, "content": {
             "type": "string", "description": f"the whole new text of the file, at most {MAX_FILE_BYTES} bytes"}},
             ("path", "content"))),
    Tool("read_secret", "Read one of the tenant's secrets by name; the value is given to the model, "
                        "never returned to the client.", changes=False,
         input_schema=_object({"name": {"type": "string", "minLength": 1, "maxLength": 128,
                                        "description": "the secret's name"}}, ("name",))),
)

TOOLS: dict[str, Tool] = {tool.name: tool for tool in CATALOGUE}
TOOL_NAMES: tuple[str, ...] = tuple(TOOLS)
DEFAULT_TOOLS: tuple[str, ...] = TOOL_NAMES  # an agent created without config.tools may use every tool


def changes_something(name: str) -> bool:
    """Whether the named tool changes something (KeyError for a name outside the catalogue)."""
    return TOOLS[name].changes


def tool_spec(name: str) -> dict[str, Any]:
    """The tool as a model is offered it (Converse toolSpec)."""
    tool = TOOLS[name]
    return {"toolSpec": {"name": tool.name, "description": tool.description,
                         "inputSchema": {"json": tool.input_schema}}}


def input_errors(name: str, arguments: Any) -> list[str]:
    """What is wrong with a tool's input for its schema (objects of string properties): [] when valid."""
    schema = TOOLS[name].input_schema
    if not isinstance(arguments, dict):
        return ["the input must be a JSON object"]
    properties = schema["properties"]
    errors = [f"unknown property {key!r}" for key in arguments if key not in properties]
    errors += [f"{key!r} is required" for key in schema["required"] if key not in arguments]
    for key, rule in properties.items():
        if key not in arguments:
            continue
        value = arguments[key]
        if not isinstance(value, str):
            errors.append(f"{key!r} must be a string")
        elif len(value) < rule.get("minLength", 0):
            errors.append(f"{key!r} must be at least {rule['minLength']} characters")
        elif len(value) > rule.get("maxLength", len(value)):
            errors.append(f"{key!r} must be at most {rule['maxLength']} characters")
    return errors


def in_catalogue_order(names: list[str] | tuple[str, ...]) -> list[str]:
    """The named tools, each once, in the catalogue's order (names outside it are dropped)."""
    chosen = set(names)
    return [name for name in TOOL_NAMES if name in chosen]
