"""The TypeScript client (clients/typescript) against the local stack: its vitest suite in Node
(test/stack.test.ts: API key, typed errors, a streamed chat answer, the device login, a session that
refreshes before expiry and calls onUnauthorized after logout), run with this stack's address and
development credentials; every one of its tests must run and pass (none skipped)."""

from __future__ import annotations

import json
import os
import subprocess

from tests.support.typescript import PACKAGE, npx


def test_the_node_suite_passes_against_the_local_stack(local_stack, tmp_path):
    credentials = local_stack.credentials
    report = tmp_path / "vitest.json"
    result = subprocess.run(
        npx("vitest", "run", "test/stack.test.ts", "--reporter=json", f"--outputFile={report}"),
        cwd=PACKAGE, capture_output=True, text=True, timeout=600,
        env={**os.environ, "SVC_BASE_URL": local_stack.base_url, "SVC_API_KEY": credentials["apiKey"],
             "SVC_EMAIL": credentials["user"]["email"], "SVC_PASSWORD": credentials["user"]["password"]})
    summary = json.loads(report.read_text())
    failures = [f"{t['fullName']}: {t['failureMessages']}" for suite in summary["testResults"]
                for t in suite["assertionResults"] if t["status"] != "passed"]
    assert result.returncode == 0 and failures == [], (failures, result.stderr[-3000:])
    assert summary["numPassedTests"] == summary["numTotalTests"] >= 5 and summary["numPendingTests"] == 0
