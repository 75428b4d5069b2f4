"""Each HTTP function's start-up import set may not grow back.

Importing functions/<group>/app.py loads the modules a cold start pays for before the first
request. tests/unit/import_sets.json records, per function, those modules outside the standard
library (which varies with the Python release); a module not in the list fails the test, named
with its function. The list is updated on purpose, after checking the new module is needed at
start (not on first use):

    .venv/bin/python -m tests.unit.test_import_sets --update

Each function is imported in its own fresh interpreter: sys.modules is per process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from devstack.template import Resolver

ROOT = Path(__file__).resolve().parents[2]
LAYER = ROOT / "layers" / "shared" / "python"
RECORD = Path(__file__).with_name("import_sets.json")

# Run in the child: import app, print the non-stdlib modules it loaded.
_CHILD = """
import json, sys
before = set(sys.modules)
import app
std = sys.stdlib_module_names
print(json.dumps(sorted(m for m in set(sys.modules) - before
                        if m.split(".")[0] not in std and not m.startswith("_"))))
"""


def http_functions() -> dict[str, Path]:
    resolver = Resolver({})
    return {f: resolver.function_code_dir(f) for f in sorted({f for _, _, f in resolver.api_routes()})}


def import_set(code_dir: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-c", _CHILD], cwd=code_dir, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{code_dir}:{LAYER}",
                               "AWS_DEFAULT_REGION": "us-east-1"})
    assert done.returncode == 0, f"importing {code_dir}/app.py failed:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.splitlines()[-1])


def measure() -> dict[str, list[str]]:
    functions = http_functions()
    with ThreadPoolExecutor(4) as pool:
        return dict(zip(functions, pool.map(import_set, functions.values()), strict=False))


@pytest.fixture(scope="module")
def measured() -> dict[str, list[str]]:
    return measure()


def test_every_http_function_is_recorded():
    recorded = json.loads(RECORD.read_text())
    assert sorted(recorded) == sorted(http_functions()), "update the list: python -m tests.unit.test_import_sets --update"


def test_no_function_imports_more_at_start_than_recorded(measured):
    recorded = json.loads(RECORD.read_text())
    grown = {f: sorted(set(mods) - set(recorded.get(f, ()))) for f, mods in measured.items()}
    grown = {f: new for f, new in grown.items() if new}
    assert not grown, "start-up imports grew (load them on first use, or update the list on purpose: " \
        "python -m tests.unit.test_import_sets --update):\n" + \
        "\n".join(f"  {f}: +{len(new)} {', '.join(new)}" for f, new in grown.items())


def test_the_child_sees_a_new_import(tmp_path):
    # The check could fail: a function importing one more package shows it.
    (tmp_path / "app.py").write_text("import svc_core.platform.ids\nimport yaml\n")
    assert "yaml" in import_set(tmp_path)


if __name__ == "__main__" and sys.argv[1:] == ["--update"]:
    RECORD.write_text(json.dumps(measure(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {RECORD.relative_to(ROOT)}")
