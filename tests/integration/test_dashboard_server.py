"""The local stack's dashboard server (devstack/dashboard.py) over real HTTP: the build, config.json
and the deployment's headers, and nothing outside the build."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from devstack import dashboard


@pytest.fixture
def served(tmp_path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "app-1.js").write_text("export {}")
    (tmp_path / "index.html").write_text("<!doctype html><title>x</title>")
    (tmp_path.parent / "outside.txt").write_text("secret")
    server = dashboard.DashboardServer(port=0, root=tmp_path).start("http://127.0.0.1:3000")
    yield server
    server.stop()


def _get(url: str):
    try:
        with urllib.request.urlopen(url) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_the_local_server_serves_the_build_config_and_headers(served):
    status, headers, body = _get(f"{served.url}/")
    assert status == 200 and body.startswith(b"<!doctype html>") and headers["Cache-Control"] == "no-cache"
    assert headers["Content-Security-Policy"] == dashboard.content_security_policy("http://127.0.0.1:3000")
    assert headers["X-Frame-Options"] == "DENY"
    status, headers, body = _get(f"{served.url}/assets/app-1.js")
    assert status == 200 and headers["Cache-Control"].endswith("immutable")
    assert headers["Content-Type"].startswith("text/javascript")
    status, headers, body = _get(f"{served.url}/config.json")
    assert json.loads(body) == {"apiBaseUrl": "http://127.0.0.1:3000", "brand": {
        "name": "svc", "logo": "brand/logo.svg", "favicon": "brand/favicon.svg", "color": "#0b5cad"}}
    assert headers["Cache-Control"] == "no-store"


def test_the_local_server_serves_nothing_outside_the_build(served):
    for path in ("/../outside.txt", "/%2e%2e/outside.txt", "/assets/../../outside.txt", "/missing.js"):
        status, _, body = _get(served.url + path)
        assert status == 404 and b"secret" not in body, path


def test_a_server_that_never_served_stops_at_once(tmp_path):
    """The local stack stops its dashboard server when the stack's own start failed (an unpriced
    model): shutdown() would wait forever for a serve loop that never ran."""
    import threading
    server = dashboard.DashboardServer(port=0, root=tmp_path)
    stopping = threading.Thread(target=server.stop, daemon=True)
    stopping.start()
    stopping.join(timeout=10)
    assert not stopping.is_alive()


def test_the_brand_is_in_config_json_and_a_logos_host_in_img_src(tmp_path):
    (tmp_path / "index.html").write_text("<!doctype html><title>x</title>")
    brand = {"name": "Acme Cloud", "logo": "https://cdn.example.com/acme.svg", "color": "#c0ffee"}
    server = dashboard.DashboardServer(port=0, root=tmp_path, brand=brand).start("http://127.0.0.1:3000")
    try:
        _, headers, body = _get(f"{server.url}/config.json")
        assert json.loads(body)["brand"] == {**brand, "favicon": "brand/favicon.svg"}
        assert "img-src 'self' data: cdn.example.com;" in headers["Content-Security-Policy"]
    finally:
        server.stop()
