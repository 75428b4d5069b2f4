"""The operator's brand (svc_core/contracts/brand.py): the same answers as the dashboard's rule
(dashboard/test/brand-cases.json), the accent readable whatever is configured, every hostile value
refused by the rule and by the template's patterns, and nothing of a value escaping into a page's or
an e-mail's markup."""

from __future__ import annotations

import base64
import hashlib
import json
import re

import pytest

from devstack import dashboard
from devstack.template import ROOT, Resolver, load
from svc_core.contracts import brand
from svc_core.http.html_pages import load_page

SHARED = json.loads((ROOT / "dashboard" / "test" / "brand-cases.json").read_text())
PAGES = {"approval": ROOT / "functions" / "auth" / "approval_page",
         "accept": ROOT / "functions" / "invitations" / "accept_page"}


def test_the_accent_and_its_text_are_the_dashboards_for_every_shared_case():
    assert len(SHARED["cases"]) > 200
    for case in SHARED["cases"]:
        accent = brand.readable_accent(case["color"])
        assert {"color": case["color"], "accent": accent, "onAccent": brand.on_accent(accent)} == case
    for case in SHARED["onDark"]:
        assert brand.readable_accent(case["color"], case["background"]) == case["accent"]


@pytest.mark.parametrize("color", ["#ffffff", "#ffff00", "#000000", "#777777", "#fafafa", "#00ff00", "#0b5cad"])
def test_text_on_the_accent_and_the_accent_on_white_keep_4_5_to_1(color):
    accent = brand.readable_accent(color)
    assert brand.contrast(accent, "#ffffff") >= brand.AA
    assert brand.contrast(accent, brand.on_accent(accent)) >= brand.AA
    assert accent == color or brand.contrast(accent, "#ffffff") < 5.5   # changed only as far as needed


def test_every_hostile_value_is_refused_and_the_accepted_ones_kept():
    assert [v for v in SHARED["hostile"]["colors"] if brand.color(v) is not None] == []
    assert [v for v in SHARED["hostile"]["logos"] if brand.image(v) is not None] == []
    assert [v for v in SHARED["hostile"]["names"] if brand.name(v) is not None] == []
    assert [brand.color(v) for v, _ in SHARED["accepted"]["colors"]] == [n for _, n in SHARED["accepted"]["colors"]]
    assert [brand.image(v) for v in SHARED["accepted"]["logos"]] == SHARED["accepted"]["logos"]
    assert [brand.name(v) for v, _ in SHARED["accepted"]["names"]] == [n for _, n in SHARED["accepted"]["names"]]


def _pattern(parameter: str) -> re.Pattern:
    return re.compile(load()["Parameters"][parameter]["AllowedPattern"])


def test_the_templates_patterns_refuse_what_the_rule_refuses_and_take_the_defaults():
    parameters = load()["Parameters"]
    for name, values, rule in (("BrandColor", "colors", brand.color), ("BrandLogo", "logos", brand.image),
                               ("BrandName", "names", brand.name)):
        pattern = _pattern(name)
        assert pattern.fullmatch(str(parameters[name]["Default"])), name   # CloudFormation matches the whole value
        assert [v for v in SHARED["hostile"][values] if pattern.fullmatch(v) and rule(v) is None] == []
    assert _pattern("BrandFavicon").fullmatch(parameters["BrandFavicon"]["Default"])
    assert not _pattern("BrandFavicon").fullmatch("https://cdn.example.com/favicon.png")
    assert [parameters[p]["Default"] for p in ("BrandName", "BrandLogo", "BrandFavicon", "BrandColor")] == \
        [brand.DEFAULT_NAME, brand.DEFAULT_LOGO, brand.DEFAULT_FAVICON, brand.DEFAULT_COLOR]


@pytest.mark.parametrize("logo, source", [("https://cdn.example.com/img/logo.svg", "cdn.example.com"),
                                          ("https://cdn.example.com:8443/logo.png?v=2", "cdn.example.com:8443"),
                                          ("brand/logo.svg", "'self'")])
def test_the_deployments_img_src_names_the_logos_host_as_the_local_server_does(logo, source):
    headers = load()["Resources"]["DashboardHeadersPolicy"]["Properties"]["ResponseHeadersPolicyConfig"]
    _, values = headers["SecurityHeadersConfig"]["ContentSecurityPolicy"]["ContentSecurityPolicy"]["Fn::Sub"]
    assert Resolver({"BrandLogo": logo}).resolve(values["LogoSource"]) == source == brand.image_source(logo)
    assert f"img-src 'self' data: {source};" in dashboard.content_security_policy("https://api.example.com", source)


def test_the_local_servers_config_refuses_what_a_deploy_refuses():
    assert dashboard.brand_config() == {"name": "svc", "logo": "brand/logo.svg", "favicon": "brand/favicon.svg",
                                        "color": "#0b5cad"}
    for hostile in ({"color": "red"}, {"logo": "javascript:alert(1)"}, {"name": "<b>x</b>"},
                    {"favicon": "https://cdn.example.com/f.png"}):
        with pytest.raises(ValueError):
            dashboard.brand_config(**hostile)


def test_a_shipped_file_is_given_the_dashboards_address_and_a_url_its_own():
    local = brand.resolve("Acme", "brand/acme.svg", None, "#c0ffee", "http://127.0.0.1:5173/")
    assert (local.logo_url, local.favicon_url) == ("http://127.0.0.1:5173/brand/acme.svg",
                                                   "http://127.0.0.1:5173/brand/favicon.svg")
    assert brand.resolve(None, "https://cdn.example.com/a.png", None, None, "").logo_url == "https://cdn.example.com/a.png"
    unknown = brand.resolve(None, None, None, None, "")
    assert (unknown.name, unknown.logo_url, unknown.favicon_url, unknown.color) == ("svc", None, None, "#0b5cad")
    # A files address that is not one is not used either.
    assert brand.resolve(None, None, None, None, "javascript:alert(1)//").logo_url is None


HOSTILE = brand.resolve('Acme"><script>alert(1)</script>', 'https://x.example/a.svg"onerror="alert(1)',
                        "brand/f.svg';", "#fff;}body{display:none}", "https://console.example.com")


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_api_pages_show_the_brand_and_nothing_of_a_hostile_value(page):
    acme = brand.resolve("Acme & Co", "https://cdn.example.com/acme.svg", "brand/acme.png", "#ffff00",
                         "https://console.example.com")
    drawn = load_page(PAGES[page]).page(acme)
    assert "Acme &amp; Co</span>" in drawn.html and "· Acme &amp; Co</title>" in drawn.html
    assert '<img src="https://cdn.example.com/acme.svg" alt=""' in drawn.html
    assert '<link rel="icon" href="https://console.example.com/brand/acme.png">' in drawn.html
    assert "--accent: #777700; --accent-ink: #ffffff;" in drawn.html   # yellow, made readable
    policy = drawn.headers["Content-Security-Policy"]
    assert "img-src 'self' https://cdn.example.com https://console.example.com;" in policy
    style = re.search(r"<style>(.*?)</style>", drawn.html, re.S).group(1)   # the brand's style is the hashed one
    assert "'sha256-" + base64.b64encode(hashlib.sha256(style.encode()).digest()).decode() + "'" in policy

    hostile = load_page(PAGES[page]).page(HOSTILE)
    assert "<script>alert" not in hostile.html and "onerror" not in hostile.html and "display:none" not in hostile.html
    assert (HOSTILE.name, HOSTILE.logo_url, HOSTILE.color) == ("svc", "https://console.example.com/brand/logo.svg",
                                                               "#0b5cad")


def test_the_invitation_email_names_the_product_and_shows_an_https_logo_only():
    from svc_core.domain.invitations import _message
    acme = brand.resolve("Acme Cloud", "https://cdn.example.com/acme.png", None, "#c0ffee", "")
    message = _message("ann@example.com", "Team", "admin", "Bob", "https://api.example.com/x#token=t", "soon", acme)
    assert message.subject == "You are invited to join Team on Acme Cloud"
    assert "join Team on Acme Cloud as admin" in message.text
    assert '<img src="https://cdn.example.com/acme.png" alt="Acme Cloud"' in message.html
    local = brand.resolve("Acme Cloud", "brand/acme.png", None, None, "http://127.0.0.1:5173")
    assert "<img" not in _message("a@example.com", "T", "admin", "B", "http://x/#token=t", "soon", local).html
    hostile = _message("a@example.com", "T", "admin", "B", "http://x/#token=t", "soon", HOSTILE)
    assert "<script>alert" not in hostile.html and "onerror" not in hostile.html and "\n" not in hostile.subject


def test_without_the_dashboards_address_a_page_has_no_logo_and_an_empty_icon_its_policy_allows():
    drawn = load_page(PAGES["accept"]).page(brand.resolve("Acme", None, None, None, ""))
    assert "<img" not in drawn.html and '<link rel="icon" href="data:,">' in drawn.html
    assert "img-src 'self' data:;" in drawn.headers["Content-Security-Policy"]
