"""Where the service may connect on a tenant's behalf: the rules for a BYOS endpoint or a
webhook URL (SSRF).

A tenant names an endpoint (its own S3, R2, GCS or Azure storage, or its webhook receiver) and
the service connects to it.
Without these rules that would let a caller make the service reach what only the service can
reach: the instance metadata service, the VPC, the emulator on loopback. So, before any
connection, the endpoint is parsed, its host resolved, and every address it resolves to checked;
one bad address refuses the endpoint. The connection is then made to an address that was
checked (see pinned_pool), not to the name again, so a name that resolves once to a public
address and then to a private one (DNS rebinding) does not get through.

Refused: loopback (127.0.0.0/8, ::1), RFC 1918 private ranges, link-local (169.254.0.0/16, incl.
the metadata address 169.254.169.254, and fe80::/10), the shared address space 100.64.0.0/10
(CGNAT), unique-local IPv6 (fc00::/7), the unspecified addresses (0.0.0.0, ::), multicast, and
every other address that is not globally routable (documentation, benchmarking, reserved
ranges); IPv6 forms that carry an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible
::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16, Teredo) are judged by that IPv4 address too.
Only https is allowed, but for loopback endpoints when the deployment allows them (the
AllowLoopbackEndpoints parameter, for local development: then http too, and loopback only).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import urllib3

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# The text of an endpoint a tenant registers (a webhook URL, a BYOS endpoint), as the document's
# patterns say it: a DNS name of two labels or more whose last label starts with a letter (so no
# resolver reads it as an address: 127.1, 0x7f000001, 2130706433) and is not a name of this
# machine or a private network (RFC 6761, mDNS, ICANN's private-use TLD), and a port of 1-65535.
# Lookahead and classes only: the same in ECMA-262 (the document) and Python's re (the API).
LOCAL_NAMES = ("localhost", "local", "localdomain", "internal")
LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
LAST_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
PORT = r"(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})"


def _any_case(word: str) -> str:
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else c for c in word)


_NOT_LOCAL = "(?!(?:" + "|".join(map(_any_case, LOCAL_NAMES)) + r")(?:[:/?]|$))"
HOST_NAME = rf"(?:{LABEL}\.)+{_NOT_LOCAL}{LAST_LABEL}"

_SHARED = ipaddress.ip_network("100.64.0.0/10")
_RFC1918 = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))
_UNIQUE_LOCAL = ipaddress.ip_network("fc00::/7")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_METADATA = {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}

# What each refusal says (the code goes in details.fields[].code).
REASONS = {
    "malformed": "is not an absolute http(s) URL with a host, and nothing else (no user, query or fragment)",
    "port": "has a port that is not a number from 1 to 65535",
    "scheme": "must use https",
    "metadata_service": "points at the cloud instance metadata service",
    "loopback": "points at a loopback address",
    "private": "points at a private (RFC 1918) address",
    "link_local": "points at a link-local address",
    "shared_address_space": "points at the shared address space 100.64.0.0/10 (carrier-grade NAT)",
    "unique_local": "points at a unique-local IPv6 address (fc00::/7)",
    "unspecified": "points at an unspecified address (0.0.0.0 or ::)",
    "multicast": "points at a multicast address",
    "not_public": "points at an address that is not publicly routable",
    "does_not_resolve": "names a host that does not resolve",
}


class EndpointRefused(Exception):
    def __init__(self, code: str, resolved: bool = False) -> None:
        self.code = code
        self.resolved = resolved  # the refused address came from resolving a name
        text = REASONS[code]
        if resolved and code not in ("malformed", "scheme", "does_not_resolve"):
            text = "names a host that " + text.replace("points at", "resolves to")
        self.reason = f"the endpoint {text}"
        super().__init__(self.reason)


@dataclass(frozen=True)
class Target:
    """An endpoint that passed the checks, with the addresses it may be reached at."""
    url: str
    scheme: str
    host: str            # as in the URL (a name, or an IP literal without brackets)
    port: int
    addresses: tuple[str, ...]

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    found = []
    if ip.ipv4_mapped is not None:
        found.append(ip.ipv4_mapped)
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.extend(ip.teredo)
    if ip in _NAT64:
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    if int(ip) >> 32 == 0 and int(ip) > 1:  # IPv4-compatible ::a.b.c.d (deprecated, still routed by some stacks)
        found.append(ipaddress.IPv4Address(int(ip)))
    return found


def _classify(ip: IPAddress) -> str | None:
    if ip in _METADATA:
        return "metadata_service"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link_local"
    if ip.version == 4 and ip in _SHARED:
        return "shared_address_space"
    if ip.version == 4 and any(ip in net for net in _RFC1918):
        return "private"
    if ip.version == 6 and ip in _UNIQUE_LOCAL:
        return "unique_local"
    if ip.is_multicast:
        return "multicast"
    if not ip.is_global:
        return "not_public"
    return None


def address_problem(address: str, *, allow_loopback: bool = False) -> str | None:
    """Why the service may not connect to this address (a REASONS code), or None."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # a scope id (fe80::1%eth0) does not matter
    # An IPv4 address carried in an IPv6 one is judged first: its verdict is the one that says why.
    candidates: list[IPAddress] = (_embedded_ipv4(ip) if ip.version == 6 else []) + [ip]
    problems = [p for p in map(_classify, candidates) if p]
    if allow_loopback and problems and all(p == "loopback" for p in problems):
        return None
    return problems[0] if problems else None


def _ip_literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def is_ip_literal(host: str) -> bool:
    """Whether the host (as parse gives it) is an IP address, which check() judges without a lookup."""
    return _ip_literal(host) is not None


Resolver = Callable[[str, int], list[str]]


def resolve(host: str, port: int) -> list[str]:
    """Every address the host resolves to (IPv4 and IPv6); OSError when it does not resolve."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return list(dict.fromkeys(info[4][0] for info in infos))


def parse(url: str, *, allow_query: bool = False) -> tuple[str, str, int]:
    """(scheme, host, port) of an endpoint URL, or EndpointRefused('malformed'), or
    EndpointRefused('port') for a port other than 1-65535 (0, too large, not digits).

    allow_query: a query string is part of the URL (a webhook's ?token=...); a storage endpoint
    has none."""
    try:
        parts = urlsplit(url)
    except ValueError:
        raise EndpointRefused("malformed") from None
    try:
        port = parts.port  # None when absent or empty ("host:"): the scheme's default
    except ValueError:  # not ASCII digits, or above 65535
        raise EndpointRefused("port") from None
    if port == 0:  # a valid number, but no service listens on port 0 (and `or` below would hide it)
        raise EndpointRefused("port")
    if (parts.scheme not in ("http", "https") or not parts.hostname or parts.username is not None
            or parts.password is not None or (parts.query and not allow_query) or parts.fragment
            or "@" in parts.netloc
            or any(c.isspace() or ord(c) < 0x20 for c in url)):
        raise EndpointRefused("malformed")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80)


def check(url: str, *, allow_loopback: bool, require_resolution: bool = True,
          resolver: Resolver | None = None, allow_query: bool = False) -> Target:
    """The endpoint as a Target whose addresses may all be connected to, or EndpointRefused.

    require_resolution=False (when a configuration is saved): a name that does not resolve is
    accepted, as DNS may be down or the name not yet public; it is checked again, and must
    resolve, before every connection. allow_query: see parse."""
    scheme, host, port = parse(url, allow_query=allow_query)
    literal = _ip_literal(host)
    if literal is not None:
        addresses = [str(literal)]
    else:
        try:
            addresses = (resolver or resolve)(host, port)
        except (OSError, UnicodeError):
            addresses = []
        if not addresses:
            if require_resolution:
                raise EndpointRefused("does_not_resolve")
            return Target(url, scheme, host, port, ())
    for address in addresses:
        problem = address_problem(address, allow_loopback=allow_loopback)
        if problem:
            raise EndpointRefused(problem, resolved=literal is None)
    if scheme != "https":
        all_loopback = all(address_problem(a) == "loopback" for a in addresses)
        if not (allow_loopback and all_loopback):
            raise EndpointRefused("scheme")
    return Target(url, scheme, host, port, tuple(addresses))


def pinned_pool(target: Target, *, connect_timeout: float, read_timeout: float) -> urllib3.HTTPConnectionPool:
    """A connection pool that connects to the target's first checked address, never resolving
    the name again, while TLS still checks the certificate against the name (SNI and hostname
    verification use the host of the URL). No retries, no redirects."""
    if not target.addresses:
        raise EndpointRefused("does_not_resolve")
    timeout = urllib3.Timeout(connect=connect_timeout, read=read_timeout)
    address = target.addresses[0]
    common = {"host": address, "port": target.port, "timeout": timeout, "retries": False, "maxsize": 2,
              "block": False}
    if target.scheme == "https":
        return urllib3.HTTPSConnectionPool(**common, cert_reqs="CERT_REQUIRED", server_hostname=target.host,
                                           assert_hostname=target.host)
    return urllib3.HTTPConnectionPool(**common)
