"""python -m devstack points the device login at the dashboard it serves (the DashboardUrl parameter),
unless --parameter DashboardUrl=... says otherwise."""

from __future__ import annotations

import pytest

import devstack.__main__ as devstack_main


class Started(Exception):
    """Raised by the stand-in stack: main has chosen its parameters."""


@pytest.fixture
def chosen(monkeypatch):
    seen: dict[str, str] = {}

    class Console:
        url = "http://127.0.0.1:5999"

        def __init__(self, port):
            pass

    def stack(**kwargs):
        seen.update(kwargs["parameters"])
        raise Started

    monkeypatch.setattr(devstack_main.signal, "signal", lambda *_: None)
    monkeypatch.setattr(devstack_main.dashboard, "build", lambda log=None: None)
    monkeypatch.setattr(devstack_main.dashboard, "DashboardServer", Console)
    monkeypatch.setattr(devstack_main, "LocalStack", stack)
    return seen


def test_the_local_stack_sends_the_device_login_to_its_dashboard(chosen):
    with pytest.raises(Started):
        devstack_main.main(["--quiet"])
    assert chosen["DashboardUrl"] == "http://127.0.0.1:5999"
    assert "http://127.0.0.1:5999" in chosen["AllowedOrigins"].split(",")


def test_a_dashboard_url_given_wins(chosen):
    with pytest.raises(Started):
        devstack_main.main(["--quiet", "--parameter", "DashboardUrl=https://console.example.com"])
    assert chosen["DashboardUrl"] == "https://console.example.com"


def test_without_the_dashboard_the_api_page_approves(chosen):
    with pytest.raises(Started):
        devstack_main.main(["--quiet", "--no-dashboard"])
    assert "DashboardUrl" not in chosen
