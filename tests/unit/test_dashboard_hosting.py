"""The dashboard's hosting: the deployment (template.yaml's CloudFront headers) and the local stack's
server (devstack/dashboard.py) give the page the same security headers."""

from __future__ import annotations

from devstack import dashboard
from devstack.template import Resolver, load


def _headers_policy() -> dict:
    return load()["Resources"]["DashboardHeadersPolicy"]["Properties"]["ResponseHeadersPolicyConfig"]


def test_the_deployment_and_the_local_server_send_the_same_content_security_policy():
    template, values = _headers_policy()["SecurityHeadersConfig"]["ContentSecurityPolicy"]["ContentSecurityPolicy"]["Fn::Sub"]
    assert template.replace("${ApiOrigin}", "https://api.example.com").replace("${LogoSource}", "cdn.example.com") == \
        dashboard.content_security_policy("https://api.example.com", "cdn.example.com")
    with_domain = Resolver({"PublicBaseUrl": "https://api.example.com"}).resolve(values["ApiOrigin"])
    without = Resolver({}).resolve(values["ApiOrigin"])
    assert with_domain == "https://api.example.com"
    assert without == "https://*.execute-api.us-east-1.amazonaws.com"


def test_the_deployment_and_the_local_server_send_the_same_other_headers():
    security = _headers_policy()["SecurityHeadersConfig"]
    hsts = security["StrictTransportSecurity"]
    assert dashboard.SECURITY_HEADERS["Strict-Transport-Security"] == \
        f"max-age={hsts['AccessControlMaxAgeSec']}; includeSubDomains" and hsts["IncludeSubdomains"]
    assert dashboard.SECURITY_HEADERS["X-Frame-Options"] == security["FrameOptions"]["FrameOption"]
    assert dashboard.SECURITY_HEADERS["Referrer-Policy"] == security["ReferrerPolicy"]["ReferrerPolicy"]
    assert security["ContentTypeOptions"]["Override"] and dashboard.SECURITY_HEADERS["X-Content-Type-Options"] == "nosniff"
    [permissions] = _headers_policy()["CustomHeadersConfig"]["Items"]
    assert dashboard.SECURITY_HEADERS[permissions["Header"]] == permissions["Value"]


def test_the_api_allows_the_dashboards_origin_only_where_the_stack_hosts_it():
    hosted = Resolver({"AllowedOrigins": "https://app.example.com"}).function_environment("AuthFunction")
    assert hosted["CORS_ALLOWED_ORIGINS"] == "https://app.example.com,https://dashboarddistribution.cloudfront.invalid"
    local = Resolver({"AllowedOrigins": "https://app.example.com", "DashboardHosting": "Disabled"})
    assert local.function_environment("AuthFunction")["CORS_ALLOWED_ORIGINS"] == "https://app.example.com"
    assert "DashboardBucket" not in local.of_type("AWS::S3::Bucket")
