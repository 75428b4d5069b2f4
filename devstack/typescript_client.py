"""The derived files of the TypeScript client (clients/typescript), written from the OpenAPI document:

- src/schema.ts       the document's types, by openapi-typescript (the package's own dev dependency,
                      installed by `npm ci` in clients/typescript: scripts/bootstrap_node.sh)
- src/operations.ts   every operation's id, method, path, success status and kind of answer (and
                      `idempotencyKey: true` where it takes the Idempotency-Key header), so the
                      client's `call(operationId, ...)` reaches each and a test checks none is missing
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from devstack.template import ROOT

PACKAGE = ROOT / "clients" / "typescript"
SCHEMA = PACKAGE / "src" / "schema.ts"
OPERATIONS = PACKAGE / "src" / "operations.ts"
_CLI = PACKAGE / "node_modules" / ".bin" / "openapi-typescript"
_METHODS = ("get", "post", "put", "patch", "delete")
_HEADER = "// Generated from functions/meta/openapi.json by scripts/generate (devstack/typescript_client.py): do not edit.\n"


def render(document: str) -> dict[Path, str]:
    return {SCHEMA: _schema(document), OPERATIONS: _operations(json.loads(document))}


def _schema(document: str) -> str:
    if not _CLI.exists():
        raise SystemExit(f"{_CLI.relative_to(ROOT)} is missing: run `npm ci` in {PACKAGE.relative_to(ROOT)} "
                         "(scripts/bootstrap_node.sh does)")
    with tempfile.TemporaryDirectory() as work:
        source, target = Path(work) / "openapi.json", Path(work) / "schema.d.ts"
        source.write_text(document)
        # --default-non-nullable false: a field with a default may be left out of a request body
        subprocess.run([str(_CLI), str(source), "--output", str(target), "--default-non-nullable", "false"],
                       check=True, capture_output=True, cwd=PACKAGE)
        return _HEADER + target.read_text()


def _answer(operation: dict[str, Any]) -> tuple[int, str]:
    """The success status and what its body is: json (the envelope), events (a stream), text, none."""
    statuses = sorted(int(code) for code in operation.get("responses", {}) if code.startswith("2"))
    status = statuses[0]
    content = operation["responses"][str(status)].get("content") or {}
    if "text/event-stream" in content:
        return status, "events"
    if "application/json" in content:
        return status, "json"
    return status, "text" if content else "none"


def _takes_idempotency_key(operation: dict[str, Any]) -> bool:
    """Whether the operation honours an Idempotency-Key (the service declares the header exactly there:
    svc_core/http/idempotency.py), so that a request carrying one may be sent again."""
    return any(p.get("in") == "header" and p.get("name", "").lower() == "idempotency-key"
               for p in operation.get("parameters", []))


def _operations(document: dict[str, Any]) -> str:
    lines = [_HEADER, "export const OPERATIONS = {"]
    for path, item in sorted(document["paths"].items()):
        for method in _METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            status, answer = _answer(operation)
            keyed = ", idempotencyKey: true" if _takes_idempotency_key(operation) else ""
            lines.append(f'  {operation["operationId"]}: {{method: "{method.upper()}", path: "{path}", '
                         f'status: {status}, answer: "{answer}"{keyed}}},')
    lines += ["} as const;", "", "export type OperationId = keyof typeof OPERATIONS;", ""]
    return "\n".join(lines)
