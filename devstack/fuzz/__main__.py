"""API fuzzing: schemathesis against the local stack, with the OpenAPI document the stack
serves and the bootstrap key, running all its checks but one: use_after_free expects a
deleted resource to answer 404, and DELETE on an API key revokes it, leaving it readable with
status "revoked" (the projects' DELETE-then-404 is covered by the integration tests).
One worker: hypothesis's lambda-source cache is not thread-safe (seen as a runtime error).

    python -m devstack.fuzz [--max-examples 25] [--max-time 120]

Exit code: schemathesis's (0 when no check failed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m devstack.fuzz")
    parser.add_argument("--max-examples", type=int, default=25)
    parser.add_argument("--max-time", type=int, default=120, help="time budget of the run, seconds")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        credentials_file = Path(tmp) / "creds.json"
        # A stream follows a turn (or the event log) until its end; bounding it keeps one fuzzed call from
        # holding the run.
        stack_env = {**os.environ, "CHAT_STREAM_MAX_SECONDS": "10", "EVENT_STREAM_MAX_SECONDS": "10"}
        stack = subprocess.Popen([sys.executable, "-m", "devstack", "--port", "0", "--quiet",
                                  "--credentials", str(credentials_file)], cwd=ROOT, env=stack_env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                line = stack.stdout.readline()
                if "ready" in line:
                    break
                if not line and stack.poll() is not None:
                    print("the local stack did not start", file=sys.stderr)
                    return 1
            # Keep reading the stack's output, or a full pipe would stall it.
            threading.Thread(target=stack.stdout.read, daemon=True).start()
            credentials = json.loads(credentials_file.read_text())
            env = {**os.environ, "SCHEMATHESIS_HOOKS": "devstack.fuzz.hooks",
                   "FUZZ_PROTECTED_KEY_ID": credentials["apiKeyId"], "PYTHONPATH": str(ROOT)}
            command = [sys.executable, "-m", "schemathesis.cli", "--config-file", str(HERE / "schemathesis.toml"),
                       "run", f"{credentials['baseUrl']}/api/v1/openapi.json",
                       "--header", f"Authorization: Bearer {credentials['apiKey']}",
                       "--checks", "all", "--exclude-checks", "use_after_free",
                       "--max-examples", str(args.max_examples),
                       "--max-time", str(args.max_time), "--workers", "1", "--seed", "20261121",
                       "--no-color"]
            return subprocess.run(command, env=env, cwd=ROOT).returncode
        finally:
            stack.terminate()
            try:
                stack.wait(timeout=20)
            except subprocess.TimeoutExpired:
                stack.kill()


if __name__ == "__main__":
    sys.exit(main())
