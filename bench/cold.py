"""1. Cold start: each API function in a fresh process, against the floor and FastAPI + Mangum."""

from __future__ import annotations

import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.fixture import BENCH, LAYER, Fixture, route_event
from devstack import routes

CHILD = BENCH / "cold_child.py"

# The request each function's child serves: (function, template event key, method, path), each
# function's everyday read (devstack/routes.py: every function with an API, but those it says why not).
# The chat stream's is its buffered handler on a session with no turn yet (204): the same module the
# Lambda Web Adapter's ASGI server imports.
FUNCTION_REQUESTS = [(function, read.event_key, read.method, read.path)
                     for function, read in routes.everyday_reads().items()]


@dataclass
class Variant:
    name: str
    label: str
    argv: list[str]
    env: dict[str, str]
    runs: list[dict[str, Any]] = field(default_factory=list)

    def values(self, key: str = "total_s") -> list[float]:
        return [r[key] for r in self.runs]

    def median(self, key: str = "total_s") -> float:
        return statistics.median(self.values(key))

    def min(self, key: str = "total_s") -> float:
        return min(self.values(key))


def _run_child(variant: Variant) -> dict[str, Any]:
    done = subprocess.run(variant.argv, env=variant.env, capture_output=True, text=True, timeout=120)
    lines = [line for line in done.stdout.splitlines() if line.startswith("@@bench ")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"cold start child {variant.name} failed (exit {done.returncode}):\n"
                           f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    result = json.loads(lines[-1][len("@@bench "):])
    if not 200 <= result.get("status", 200) < 300:
        raise RuntimeError(f"cold start child {variant.name} answered {result['status']}:\n{done.stdout[-2000:]}")
    return result


def _run_pass(variant: Variant) -> dict[str, Any]:
    started = time.perf_counter()
    subprocess.run(variant.argv, env=variant.env, check=True, timeout=60)
    return {"total_s": time.perf_counter() - started}


def variants(fixture: Fixture, workdir: Path, with_fastapi: bool) -> list[Variant]:
    from devstack.template import Resolver
    resolver = Resolver({})
    py = sys.executable
    out = [
        Variant("python", "interpreter start: python -c pass", [py, "-c", "pass"], fixture.child_env(LAYER)),
        Variant("floor", "floor: import boto3 + DynamoDB client", [py, str(CHILD), "floor"],
                fixture.child_env(LAYER)),
    ]
    if importlib.util.find_spec("aws_xray_sdk") is not None:  # Powertools Tracer's dependency, not in the layer
        out.append(Variant("tracer", "boto3 + Powertools + the X-Ray SDK (what Tracer would import)",
                           [py, str(CHILD), "tracer"], fixture.child_env(LAYER)))
    project_event = None
    for logical_id, event_key, method, path in FUNCTION_REQUESTS:
        resource_id = fixture.chat_session_id if logical_id == "ChatStreamFunction" else fixture.project_id
        params = {"id": resource_id} if "{id}" in path else None
        token = None if path.endswith("jwks.json") else fixture.key
        event = route_event(logical_id, event_key, method, path, token=token, path_params=params)
        event_file = workdir / f"{logical_id}.json"
        event_file.write_text(json.dumps(event))
        if logical_id == "ProjectsFunction":
            project_event = event_file
        code_dir = resolver.function_code_dir(logical_id)
        out.append(Variant(logical_id, f"{logical_id}  {method} {path.removeprefix('/api/v1')}",
                           [py, str(CHILD), "handler", "app", str(event_file)],
                           fixture.child_env(LAYER, code_dir, function=logical_id)))
        if logical_id == "ProjectsFunction":
            # A first write beside the read: its body is validated by pydantic, which a read never loads
            # (svc_core/http/binding.py), so it shows what the read's figure leaves out.
            write = route_event(logical_id, "CreateProject", "POST", "/api/v1/projects", token=fixture.key,
                                body={"name": "cold start", "language": "python"})
            write_file = workdir / f"{logical_id}.write.json"
            write_file.write_text(json.dumps(write))
            out.append(Variant(f"{logical_id}.write", f"{logical_id}  POST /projects (a first write)",
                               [py, str(CHILD), "handler", "app", str(write_file)],
                               fixture.child_env(LAYER, code_dir, function=logical_id)))
        if logical_id != "ChatStreamFunction":  # no SnapStart there (template.yaml says why)
            out.append(Variant(f"{logical_id}.restore", f"{logical_id}  SnapStart restore, emulated",
                               [py, str(CHILD), "restore", "app", str(event_file), fixture.key_id],
                               fixture.child_env(LAYER, code_dir, snapstart=True, function=logical_id)))
    if with_fastapi:
        out.insert(2, Variant("fastapi", "FastAPI + Mangum  GET /projects/{id}",
                              [py, str(CHILD), "handler", "fastapi_app", str(project_event)],
                              fixture.child_env(LAYER, BENCH)))
    return out


def measure(fixture: Fixture, repeat: int, with_fastapi: bool, progress=print) -> list[Variant]:
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp:
        all_variants = variants(fixture, Path(tmp), with_fastapi)
        # One discarded round: writes the bytecode caches and warms the page cache, so no
        # measured run pays for compiling a module.
        for variant in all_variants:
            (_run_pass if variant.name == "python" else _run_child)(variant)
        for i in range(repeat):
            # A different order each round (rotated, every other one reversed), so that a
            # burst of noise on the shared machine does not always land on the same variant.
            order = all_variants[i % len(all_variants):] + all_variants[:i % len(all_variants)]
            if i % 2:
                order.reverse()
            for variant in order:
                variant.runs.append((_run_pass if variant.name == "python" else _run_child)(variant))
            progress(f"  cold start round {i + 1}/{repeat}")
    return all_variants
