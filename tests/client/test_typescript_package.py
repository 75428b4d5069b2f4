"""The TypeScript client's package checks, with its own tools: strict types (tsc, the tests' code
too), its unit tests (vitest, real HTTP on loopback), the browser bundle within its budget, and
`npm pack` yielding the package with its build and declarations."""

from __future__ import annotations

import json
import subprocess

from tests.support.typescript import PACKAGE, npx


def run(*command: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(list(command), cwd=PACKAGE, capture_output=True, text=True, timeout=timeout)


def test_the_types_check_strictly():
    result = run(*npx("tsc", "-p", "tsconfig.json", "--noEmit"))
    assert result.returncode == 0, result.stdout[-3000:]


def test_the_unit_tests_pass(tmp_path):
    report = tmp_path / "vitest.json"
    result = run(*npx("vitest", "run", "test/core.test.ts", "test/session.test.ts", "test/webhooks.test.ts",
                      "test/resources.test.ts", "test/cells.test.ts", "--reporter=json",
                      f"--outputFile={report}"))
    summary = json.loads(report.read_text())
    assert result.returncode == 0, [t for s in summary["testResults"] for t in s["assertionResults"]
                                    if t["status"] != "passed"]
    assert summary["numPassedTests"] == summary["numTotalTests"] >= 20 and summary["numPendingTests"] == 0


def test_the_browser_bundle_is_within_its_budget():
    result = run("node", "scripts/size.mjs")
    figures = json.loads(result.stdout)
    assert result.returncode == 0 and figures["within"], figures
    assert 0 < figures["gzippedBytes"] <= figures["budgetBytes"] == 20 * 1024


def test_npm_pack_yields_the_package_with_its_build_and_declarations():
    result = run("npm", "pack", "--dry-run", "--json", "--ignore-scripts=false", timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    files = {entry["path"] for entry in json.loads(result.stdout[result.stdout.index("["):])[0]["files"]}
    for wanted in ("dist/index.js", "dist/index.d.ts", "dist/webhooks.js", "dist/schema.d.ts", "README.md", "package.json"):
        assert wanted in files, sorted(files)
    assert not any(path.startswith(("src/", "test/", "node_modules/")) for path in files)
