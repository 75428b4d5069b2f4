"""Shared fixtures. Integration and end-to-end tests run against the moto server (a child
process), provisioned from template.yaml before each test."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT / "layers" / "shared" / "python", ROOT):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

# Tests never reach real AWS: no credentials of the machine are read.
os.environ.update({"AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
                   "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1",
                   "POWERTOOLS_TRACE_DISABLED": "true", "POWERTOOLS_METRICS_DISABLED": "true",
                   # The offline model only: asking for Bedrock anywhere in the tests raises.
                   "MODEL_PROVIDER": "offline", "SVC_FORBID_REAL_MODEL": "1",
                   # Hundreds of accounts are registered and signed in on two cores: light argon2id
                   # (svc_core/domain/passwords.py; tests/unit/test_passwords.py checks both kinds).
                   "PASSWORD_HASHING": "light"})
for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
    os.environ.pop(name, None)
PRISTINE_ENVIRONMENT = dict(os.environ)
LONG_RUNNING_TIMEOUT_SECONDS = 900
pytest_plugins = ["tests.support.browser"]  # `browser` and `page`, for the browser tests of every directory

# Property tests judge answers, never speed: hypothesis's per-example deadline (200 ms) and its
# too-slow health check fail a correct test on a busy machine (seen in CI at load 12 on 2 cores).
settings.register_profile("svc", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("svc")  # before any stack sets its variables


@pytest.fixture(scope="session")
def emulator():
    from devstack import limits
    from tests.support.emulator import MotoServer
    limits.install()   # AWS's size limits the emulator does not enforce (devstack/limits.py)
    server = MotoServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def provisioned(emulator):
    """The template's resources on the emulator, provisioned once and wiped between tests."""
    from tests.support.stack import Provisioned
    return Provisioned(emulator)


@pytest.fixture
def stack(provisioned, monkeypatch, request):
    """A provisioned stack with no data. Tests marked fresh_stack get a reset emulator and a new
    provisioning instead of a wiped one (they read DynamoDB streams or queues, which a wipe
    leaves records in)."""
    from dataclasses import replace

    from svc_core.adapters import aws
    from tests.support.stack import Stack
    # moto keeps no ClientRequestToken: a transaction botocore sends again after its 2 s read timeout
    # (a loaded machine) runs a second time there and fails on its own conditions (seen in CI at load
    # 10). As the local stack's moto engine does, its DynamoDB waits long enough for the load.
    monkeypatch.setitem(aws.PROFILES, "dynamodb", replace(aws.PROFILES["dynamodb"], read_timeout=30))
    if request.node.get_closest_marker("fresh_stack"):
        provisioned.invalidate()
    stack = Stack(provisioned.ready(), monkeypatch)
    yield stack
    stack.forget_caches()


def pytest_configure(config):
    config.addinivalue_line("markers", "fresh_stack: reset and provision the emulator for this test")
    config.addinivalue_line("markers", "long_running: a file of minutes (a soak, an attack, whole processes); run first")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """The files with a long_running test come first. scripts/test hands files to its test processes
    in the order collected (--no-loadscope-reorder): each process begins with a long file and the
    short ones fill in around them, instead of one process running a soak alone at the end."""
    long_files = {item.path for item in items if item.get_closest_marker("long_running")}
    items.sort(key=lambda item: item.path not in long_files)   # stable: the rest keep their order
    # A long file's test is bounded by its own waits; pytest.ini's 300 s (setup included) is for a hang
    # elsewhere. A move of 1,000 projects took 155 s on a quiet machine of 2 cores and over 300 s on a
    # loaded one (CI, with two pairs of cells beside it), and was stopped in the middle of its waits.
    for item in items:
        if item.path in long_files and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(LONG_RUNNING_TIMEOUT_SECONDS))
