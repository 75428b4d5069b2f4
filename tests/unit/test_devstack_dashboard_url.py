"""python -m devstack points the device login at the dashboard it serves (the DashboardUrl parameter),
unless --parameter DashboardUrl=... says otherwise; its --brand-* options become the Brand* parameters
and the served config.json's brand, and a value a deploy would refuse is refused."""

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

        def __init__(self, port, brand=None):
            seen["console brand"] = brand

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


def test_the_brand_options_reach_the_functions_and_the_dashboard(chosen):
    with pytest.raises(Started):
        devstack_main.main(["--quiet", "--brand-name", "Acme Cloud", "--brand-color", "#c0ffee",
                            "--brand-logo", "https://cdn.example.com/acme.svg", "--parameter", "BrandFavicon=brand/a.png"])
    assert {k: v for k, v in chosen.items() if k.startswith("Brand")} == {
        "BrandName": "Acme Cloud", "BrandColor": "#c0ffee", "BrandLogo": "https://cdn.example.com/acme.svg",
        "BrandFavicon": "brand/a.png"}
    assert chosen["console brand"] == {"name": "Acme Cloud", "color": "#c0ffee",
                                       "logo": "https://cdn.example.com/acme.svg", "favicon": "brand/a.png"}


@pytest.mark.parametrize("option", [["--brand-color", "#fff;}body{display:none"], ["--brand-logo", "javascript:alert(1)"],
                                    ["--brand-name", "<img src=x onerror=alert(1)>"],
                                    ["--parameter", "BrandColor=red"]])
def test_a_hostile_brand_value_is_refused_before_anything_starts(chosen, option, capsys):
    with pytest.raises(SystemExit) as exited:
        devstack_main.main(["--quiet", *option])
    assert exited.value.code == 2 and "is refused" in capsys.readouterr().err
    assert chosen == {}
