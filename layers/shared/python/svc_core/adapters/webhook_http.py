"""The one HTTP call of a webhook delivery: a POST to the subscriber's URL, made safely.

Before every attempt the URL's host is resolved and every address checked (endpoint_guard: no
loopback, private, link-local, metadata, CGNAT... addresses), and the connection goes to the
address that was checked (a name that resolved to a public address at registration and now to
a private one, DNS rebinding, is refused here). Redirects are never followed (a 3xx is the
answer), urllib3 retries nothing, and the whole exchange is bounded by one timeout. At most
64 KiB of the answer is read; only its status and Retry-After matter.

Connection pools are kept per checked address (keep-alive between deliveries to one endpoint).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

import urllib3

from svc_core.adapters import endpoint_guard
from svc_core.adapters.endpoint_guard import EndpointRefused, Resolver

BODY_READ_LIMIT = 64 * 1024
_POOLS_KEPT = 64
_pools: OrderedDict[tuple, urllib3.HTTPConnectionPool] = OrderedDict()
_lock = threading.Lock()


@dataclass
class HttpResult:
    status: int | None                     # None when no answer came
    latency_ms: int | None = None
    headers: dict[str, str] = field(default_factory=dict)   # lower-cased names
    error: str | None = None               # what went wrong, for the delivery log
    refused: EndpointRefused | None = None  # the address check refused the URL: nothing was sent


def _pool(target: endpoint_guard.Target, timeout: float) -> urllib3.HTTPConnectionPool:
    key = (target.scheme, target.host, target.port, target.addresses[0], timeout)
    with _lock:
        pool = _pools.get(key)
        if pool is not None:
            _pools.move_to_end(key)
            return pool
        pool = endpoint_guard.pinned_pool(target, connect_timeout=timeout, read_timeout=timeout)
        _pools[key] = pool
        while len(_pools) > _POOLS_KEPT:
            _pools.popitem(last=False)[1].close()
        return pool


def _split(url: str) -> tuple[str, str]:
    """(the URL the guard checks: without query or fragment, the request target: path?query)."""
    parts = urlsplit(url)
    checked = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return checked, target


def post(url: str, body: bytes, headers: dict[str, str], *, timeout: float, allow_loopback: bool,
         resolver: Resolver | None = None) -> HttpResult:
    try:
        checked, path = _split(url)
        target = endpoint_guard.check(checked, allow_loopback=allow_loopback, require_resolution=True,
                                      resolver=resolver)
    except ValueError:
        return _refused(EndpointRefused("malformed"))
    except EndpointRefused as exc:
        return _refused(exc)
    started = time.perf_counter()
    try:
        response = _pool(target, timeout).urlopen(
            "POST", path, body=body, headers={**headers, "Host": target.host_header}, redirect=False,
            retries=False, assert_same_host=False, preload_content=False,
            timeout=urllib3.Timeout(total=timeout))
    # NewConnectionError is a ConnectTimeoutError in urllib3 2: it is caught first.
    except urllib3.exceptions.NewConnectionError as exc:
        refused = "refused" in str(exc).lower()
        return HttpResult(None, _ms(started), error="connection refused" if refused else "could not connect")
    except urllib3.exceptions.TimeoutError:
        return HttpResult(None, _ms(started), error=f"timed out after {timeout:g} s")
    except urllib3.exceptions.SSLError:
        return HttpResult(None, _ms(started), error="TLS handshake failed")
    except urllib3.exceptions.HTTPError as exc:
        return HttpResult(None, _ms(started), error=f"connection failed ({type(exc).__name__})")
    try:
        data = response.read(BODY_READ_LIMIT + 1, decode_content=False)
    except (urllib3.exceptions.HTTPError, OSError):
        data = b"x" * (BODY_READ_LIMIT + 1)  # unfinished: do not reuse the connection
    finally:
        latency = _ms(started)
    if len(data) > BODY_READ_LIMIT:
        response.close()
    else:
        response.release_conn()
    return HttpResult(response.status, latency, {k.lower(): v for k, v in response.headers.items()})


def _refused(exc: EndpointRefused) -> HttpResult:
    """Nothing was sent; the delivery log says why, in words and with the code."""
    reason = exc.reason.replace("the endpoint", "the URL", 1)
    return HttpResult(None, error=f"refused address: {exc.code}: {reason}; nothing was sent", refused=exc)


def _ms(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
