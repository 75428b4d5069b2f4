"""The client installs with pip from the repository, as a new user would install it: a fresh
virtual environment, `pip install ./client` (built through its pyproject.toml), then the `svc`
command and the package come from that environment, not from the development checkout.

Its dependencies are not downloaded again: the new environment sees the development venv's
site-packages through a .pth file (the install itself is --no-deps), which keeps the test to
seconds and off the network for everything but the build backend.
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.long_running   # minutes long: its test process starts with it (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]


def test_pip_installs_the_client_from_the_repository_with_its_command(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    installed = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", str(ROOT / "client")],
                               capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    new_site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                   capture_output=True, text=True, check=True).stdout.strip())
    (new_site / "zz_dev_dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    probe = subprocess.run([str(python), "-c", (
        "import json, importlib.metadata as m, svc_client; "
        "print(json.dumps({'file': svc_client.__file__, 'version': m.version('svc-client'), "
        "'typed': (__import__('pathlib').Path(svc_client.__file__).parent / 'py.typed').exists()}))")],
        capture_output=True, text=True, env=env, timeout=60)
    assert probe.returncode == 0, probe.stderr
    found = json.loads(probe.stdout)
    assert found["file"].startswith(str(new_site)), found   # the installed copy, not the checkout
    assert found["version"] and found["typed"]

    helped = subprocess.run([str(venv / "bin" / "svc"), "--help"], capture_output=True, text=True, env=env,
                            timeout=60)
    assert helped.returncode == 0, helped.stderr
    for command in ("login", "projects", "chat", "billing"):
        assert command in helped.stdout
