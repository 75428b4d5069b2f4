"""The security headers on every answer: the functions' (svc_core.http.api, streamed answers
included), API Gateway's own (template.yaml's GatewayResponses, which a unit test holds to this
table) and the local gateway's (devstack/gateway.py).

- Strict-Transport-Security: a browser that has seen the API once reaches it (and its domain's
  subdomains) over HTTPS only, for two years.
- X-Content-Type-Options: nosniff: a browser never reads a JSON answer as a page or a script.
- Referrer-Policy: no-referrer: some of the API's URLs carry a credential or a login's id in the
  query (a chat stream's ?token=, the approval page's ?loginId=), and nothing the API serves needs a
  Referer, so no answer lets a browser tell another site where it came from.
- Content-Security-Policy: an answer that is not a page (JSON, an event stream, an error) may load
  nothing and be framed by no site; a page (svc_core.http.html_pages) sends its own policy instead.
- X-Frame-Options: DENY, for browsers that predate frame-ancestors.
"""

from __future__ import annotations

HSTS = "max-age=63072000; includeSubDomains"
API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'"

EVERY_ANSWER = {
    "Strict-Transport-Security": HSTS,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": API_CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
}
