"""What Powertools' resolver would add to a function's cold start: the reason the HTTP layer is our own
(docs/architecture.md, "Why the HTTP layer is our own").

    .venv/bin/python -m bench.resolver_cost [--repeat 7]

Each figure comes from a fresh interpreter that first imports ProjectsFunction's app.py as Lambda
does (its start-up set: boto3, Powertools' logger, svc_core, our router), then times, from there:

- `ours`: the same route declared on our own router (svc_core.http.api), matched, bound (the
  pydantic-free path) and called: admission, the same with either router, is left out of all three;
- `resolver`: `from aws_lambda_powertools.event_handler import APIGatewayRestResolver`, a resolver
  built, GET /api/v1/projects/<id> declared on it and one request resolved;
- `validation`: the same with `enable_validation=True` (pydantic, Powertools' OpenAPI models and
  the route's request model, built on its first request).

One discarded round, then --repeat rounds, each in another order; medians and mins in ms, and the
modules each adds. Nothing reaches AWS (the route answers from its arguments). Figures only
inform: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYER = ROOT / "layers" / "shared" / "python"
FUNCTION = ROOT / "functions" / "projects"

_CHILD = """
import sys, time
import app  # the function's own start-up
modules = len(sys.modules)
started = time.perf_counter()
if KIND == "ours":  # the same route on our router: matched, bound and called (admission is the same in both)
    from svc_core.http.api import Api
    api = Api()

    @api.get("/api/v1/projects/{id}", scope="projects:read", summary="Read one project")
    def get_project(id: str):
        return {"id": id}

    path = "/api/v1/projects/proj_1"
    route = next(r for r in api.routes if r.spec.method == "GET" and r.pattern.match(path))
    answer = route.func(**route.binder.bind(route.pattern.match(path).groupdict(), {}, None))
    assert answer == {"id": "proj_1"}, answer
else:
    from aws_lambda_powertools.event_handler import APIGatewayRestResolver
    resolver = APIGatewayRestResolver(enable_validation=KIND == "validation")

    @resolver.get("/api/v1/projects/<id>")
    def get_project(id: str):
        return {"id": id}

    answer = resolver.resolve({"httpMethod": "GET", "path": "/api/v1/projects/proj_1",
                               "resource": "/api/v1/projects/{id}", "headers": {}, "multiValueHeaders": {},
                               "queryStringParameters": None, "body": None, "isBase64Encoded": False,
                               "requestContext": {"requestId": "r", "stage": "v1"}}, None)
    assert answer["statusCode"] == 200, answer
print(json.dumps({"ms": (time.perf_counter() - started) * 1000, "modules": len(sys.modules) - modules}))
"""

KINDS = ("ours", "resolver", "validation")


def run_child(kind: str) -> dict:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": f"{FUNCTION}:{LAYER}",
           "AWS_DEFAULT_REGION": "us-east-1", "PYDANTIC_DISABLE_PLUGINS": "__all__"}
    code = f"import json\nKIND = {kind!r}\n{_CHILD}"
    done = subprocess.run([sys.executable, "-c", code], cwd=FUNCTION, env=env, capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"{kind}: the child failed\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    for kind in KINDS:  # the discarded round: bytecode and page caches
        run_child(kind)
    seen: dict[str, list[dict]] = {kind: [] for kind in KINDS}
    for round_ in range(args.repeat):
        order = KINDS[round_ % 3:] + KINDS[:round_ % 3]
        for kind in (order if round_ % 2 == 0 else tuple(reversed(order))):
            seen[kind].append(run_child(kind))
    print(f"{args.repeat} rounds, load {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after; "
          f"after ProjectsFunction's app.py is imported, in ms:")
    for kind in KINDS:
        times = [r["ms"] for r in seen[kind]]
        print(f"  {kind:<10} median {statistics.median(times):6.1f}  min {min(times):6.1f}  "
              f"modules +{seen[kind][0]['modules']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
