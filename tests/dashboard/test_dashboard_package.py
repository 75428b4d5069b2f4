"""The dashboard's package checks, with its own tools: strict types (tsc, its tests too), its unit
tests (vitest), and the first load's JavaScript within its budget (200 kB gzipped)."""

from __future__ import annotations

import json
import subprocess

from devstack import dashboard as app

TOOLS = app.APP / "node_modules" / ".bin"


def run(*command: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(list(command), cwd=app.APP, capture_output=True, text=True, timeout=timeout)


def test_the_types_check_strictly():
    result = run(str(TOOLS / "tsc"), "-p", "tsconfig.json", "--noEmit")
    assert result.returncode == 0, result.stdout[-3000:]


def test_the_unit_tests_pass(tmp_path):
    report = tmp_path / "vitest.json"
    result = run(str(TOOLS / "vitest"), "run", "--reporter=json", f"--outputFile={report}")
    summary = json.loads(report.read_text())
    assert result.returncode == 0, [t for s in summary["testResults"] for t in s["assertionResults"]
                                    if t["status"] != "passed"]
    assert summary["numPassedTests"] == summary["numTotalTests"] >= 5 and summary["numPendingTests"] == 0


def test_the_first_load_is_within_its_budget():
    app.build()
    result = run("node", "scripts/size.mjs")
    figures = json.loads(result.stdout)
    assert result.returncode == 0 and figures["within"], figures
    assert 0 < figures["gzippedBytes"] <= figures["budgetBytes"] == 200 * 1024
