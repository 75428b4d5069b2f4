"""Writes events/<Function>-<Event>.json: one real API Gateway proxy event per route of
template.yaml, produced by `sam local generate-event apigateway aws-proxy`.

The tests feed these files to the handlers (after setting credentials, ids and bodies), and
the local gateway's events are compared with them. Run again after adding a route:
    SAM=.venv-sam/bin/sam python scripts/generate_events.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devstack.template import Resolver  # noqa: E402

SAMPLE_ID = {"id": "proj_01JD2Q7ZB6V8S3K4X9W2M5N7PA", "run_id": "run_01JD2Q7ZB6V8S3K4X9W2M5N7PA",
             "proxy": "no/such/route"}


def main() -> None:
    sam = os.environ.get("SAM", str(ROOT / ".venv-sam" / "bin" / "sam"))
    resolver = Resolver({})
    out = ROOT / "events"
    out.mkdir(exist_ok=True)
    for logical_id, resource in resolver.of_type("AWS::Serverless::Function").items():
        for event_name, event in resource["Properties"].get("Events", {}).items():
            if event["Type"] != "Api" or event["Properties"]["Method"] == "ANY":
                continue
            method, resource_path = event["Properties"]["Method"].upper(), event["Properties"]["Path"]
            path = resource_path
            for name, value in SAMPLE_ID.items():
                path = path.replace("{%s+}" % name, value).replace("{%s}" % name, value)
            body = '{"name":"Example"}' if method in ("POST", "PATCH", "PUT") else ""
            args = [sam, "local", "generate-event", "apigateway", "aws-proxy", "--method", method,
                    "--resource", resource_path, "--path", path.lstrip("/"), "--stage", "v1",
                    "--body", body, "--querystringparameters", "{}"]
            raw = subprocess.run(args, check=True, capture_output=True, text=True,
                                 env={**os.environ, "SAM_CLI_TELEMETRY": "0"}).stdout
            generated = json.loads(raw)
            (out / f"{logical_id.removesuffix('Function')}-{event_name}.json").write_text(
                json.dumps(generated, indent=2) + "\n")
            print("wrote", f"{logical_id}-{event_name}")


if __name__ == "__main__":
    main()
