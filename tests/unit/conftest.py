"""Unit tests: domain logic with no AWS and no network (any connection attempt fails)."""

import os
import socket

import pytest


@pytest.fixture(autouse=True)
def default_settings(monkeypatch):
    """The settings' defaults: no variable a stack set earlier in this process reaches a unit test."""
    from svc_core.platform.config import settings
    from tests.conftest import PRISTINE_ENVIRONMENT
    for name, value in list(os.environ.items()):
        if name not in PRISTINE_ENVIRONMENT:
            monkeypatch.delenv(name)
        elif PRISTINE_ENVIRONMENT[name] != value:
            monkeypatch.setenv(name, PRISTINE_ENVIRONMENT[name])
    settings.cache_clear()
    yield
    settings.cache_clear()


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("unit tests must not open network connections")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
