"""The CORS rules' small parts (svc_core/http/cors.py) and the local stack's AllowedOrigins option."""

from __future__ import annotations

import pytest

from devstack.__main__ import main
from devstack.stack import LocalStack
from svc_core.http import cors


def test_configured_origins_are_exact_and_never_a_wildcard_or_null():
    allowed = cors.parse_origins(" https://App.example.com/ ,http://localhost:5173,*,null,")
    assert allowed == {"https://app.example.com", "http://localhost:5173"}
    assert cors.is_allowed("https://app.example.com", allowed)
    assert not cors.is_allowed("https://app.example.com.evil.example", allowed)
    assert not cors.is_allowed("http://app.example.com", allowed)  # another scheme is another origin
    assert not cors.is_allowed("null", allowed) and not cors.is_allowed(None, allowed)
    assert cors.parse_origins("") == frozenset()


def test_headers_for_an_allowed_origin_echo_it_and_for_another_only_vary():
    allowed = cors.parse_origins("https://app.example.com")
    assert cors.response_headers("https://evil.example", allowed) == {"Vary": "Origin"}
    echoed = cors.response_headers("https://app.example.com", allowed)
    assert echoed["Access-Control-Allow-Origin"] == "https://app.example.com"
    assert echoed["Access-Control-Allow-Credentials"] == "true" and echoed["Vary"] == "Origin"


def test_a_preflight_is_an_options_with_origin_and_the_requested_method():
    assert cors.is_preflight("OPTIONS", {"origin": "x", "Access-Control-Request-Method": "GET"})
    assert not cors.is_preflight("OPTIONS", {"Origin": "x"})
    assert not cors.is_preflight("GET", {"Origin": "x", "Access-Control-Request-Method": "GET"})


def test_the_local_stack_allows_the_dev_server_unless_told_otherwise():
    assert LocalStack().parameters["AllowedOrigins"] == "http://localhost:5173"
    assert LocalStack(parameters={"AllowedOrigins": ""}).parameters["AllowedOrigins"] == ""


@pytest.mark.parametrize("origin", ["*", "http://a.example,http://b.example"])
def test_allow_origin_takes_one_exact_origin(origin, capsys):
    with pytest.raises(SystemExit):
        main(["--allow-origin", origin])
    assert "--allow-origin takes one exact origin" in capsys.readouterr().err
