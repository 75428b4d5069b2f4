"""What a webhook URL may be: a rule on its text alone, one pattern that the OpenAPI document
carries and the API applies (PATTERN), so that every URL the document allows is registered.

    https://<host name>[:<port>][/<path>][?<query>]     at most 2048 characters

- https only;
- the host is a DNS name of two labels or more (letters, digits and hyphens, 1-63 characters,
  no hyphen first or last) whose last label starts with a letter. No IP address then, in any
  spelling (127.0.0.1, 127.1, 0x7f000001, 2130706433, [::1]: all-digit or hex "names" are
  addresses to a resolver), and no single-label name (resolved through a search domain, inside);
- the last label is not localhost, local, localdomain or internal (in any case): names of this
  machine or of a private network (RFC 6761, mDNS, ICANN's private-use TLD);
- a port, if any, is 1 to 65535 in digits without a leading zero;
- the path and query are printable ASCII (percent-encode the rest); no fragment, no user name
  or password (an "@" before the host cannot match the host name).

Where a name points is not part of the rule: it may change after registration (and a name not
yet published may resolve later). It is checked before every delivery instead
(svc_core/adapters/webhook_http.py, endpoint_guard): a name that does not resolve, or resolves to a
loopback, private, link-local, metadata... address, is not connected to, and the attempt is
recorded as failed with the reason.

Local development (AllowLoopbackEndpoints) also takes URLs to loopback, http too: a superset of
the rule, for the tests' and the local stack's receivers.
"""

from __future__ import annotations

import ipaddress
import re

from svc_core.adapters import endpoint_guard

MAX_URL = 2048
LOCAL_NAMES = endpoint_guard.LOCAL_NAMES
_REST = r'(?:[/?][!"$-~]*)?'   # printable ASCII but "#"

PATTERN = rf"^https://{endpoint_guard.HOST_NAME}(?::{endpoint_guard.PORT})?{_REST}$"
_URL = re.compile(PATTERN)

HELP = (f"https://, a host name, an optional port (1-65535), then an optional path and query of printable "
        f"ASCII; at most {MAX_URL} characters. The host is a DNS name of two labels or more (letters, digits, "
        "hyphens) whose last label starts with a letter and is not " + ", ".join(LOCAL_NAMES) + ": no IP "
        "address. No user name, password or fragment. Where the name points is checked at every delivery "
        "(not at registration): an attempt to a name that does not resolve, or resolves to a private, "
        "loopback, link-local or otherwise internal address, is not sent and is recorded as failed")

# Why a URL was refused, beyond the guard's REASONS (details.fields[].code).
REASONS = {
    "ip_address": "names an IP address: give the receiver's host name",
    "host": "must name a DNS host of two labels or more (letters, digits, hyphens) whose last label starts "
            "with a letter",
    "local_name": "names this machine or a private network (" + ", ".join(LOCAL_NAMES) + ")",
    "malformed": "is not https://host[:port][/path][?query] in printable ASCII (no user name, password or "
                 "fragment)",
}


def allowed(url: str) -> bool:
    """The rule: whether the document's pattern matches (fullmatch: no newline after the end)."""
    return len(url) <= MAX_URL and _URL.fullmatch(url) is not None


def loopback_in_development(url: str) -> bool:
    """AllowLoopbackEndpoints' addition: a URL whose host is, or resolves only to, loopback."""
    try:
        target = endpoint_guard.check(url, allow_loopback=True, allow_query=True)
    except endpoint_guard.EndpointRefused:
        return False
    return all(endpoint_guard.address_problem(a) == "loopback" for a in target.addresses)


def problem(url: str) -> tuple[str, str] | None:
    """(code, reason) when the URL breaks the rule, or None. The decision is allowed(); the rest only
    says why, with the guard's codes where they fit (a private IP literal is `private`...)."""
    if allowed(url):
        return None
    try:
        scheme, host, _port = endpoint_guard.parse(url, allow_query=True)
        literal = ipaddress.ip_address(host)
    except endpoint_guard.EndpointRefused as refused:
        return refused.code, REASONS["malformed"] if refused.code == "malformed" else endpoint_guard.REASONS[refused.code]
    except ValueError:
        literal = None
    found = endpoint_guard.address_problem(str(literal)) if literal is not None else None
    if found:
        return found, endpoint_guard.REASONS[found]
    if scheme != "https":
        return "scheme", endpoint_guard.REASONS["scheme"]
    if literal is not None:
        return "ip_address", REASONS["ip_address"]
    last = host.rsplit(".", 1)[-1]
    if last.lower() in LOCAL_NAMES:
        return "local_name", REASONS["local_name"]
    if not re.fullmatch(rf"(?:{endpoint_guard.LABEL}\.)+{endpoint_guard.LAST_LABEL}", host):
        return "host", REASONS["host"]
    return "malformed", REASONS["malformed"]
