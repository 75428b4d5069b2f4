"""The command-line device login (the spec's flow), as a library function the CLI drives.

1. a random 32-byte hex `state` and a PKCE verifier, with its S256 challenge (RFC 7636);
2. POST /cli/auth/start -> loginId, authUrl, verificationCode, interval;
3. the user opens authUrl, compares the code and approves in the browser;
4. GET /cli/auth/status every `interval` seconds until approved (or expired / consumed; a login
   denied in the browser reads expired with reason "denied");
5. POST /cli/auth/token with the verifier -> a `svc_cli_` API key, the user and the tenant.
"""

from __future__ import annotations

import base64
import hashlib
import platform as _platform
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from svc_client._core import VERSION
from svc_client.errors import SvcError
from svc_client.models import CliToken, DeviceLoginStarted


class DeviceLoginFailed(SvcError):
    """The login ended without a credential: denied in the browser, expired or already used."""

    def __init__(self, status: str, reason: str | None = None) -> None:
        messages = {"denied": "the login was denied in the browser",
                    "expired": "the login expired (10 minutes) before it was approved",
                    "consumed": "the login was already used"}
        ended = "denied" if reason == "denied" or status == "denied" else status
        super().__init__(messages.get(ended, f"the login ended as {status}"))
        self.status = status
        self.reason = reason
        self.denied = ended == "denied"


def code_challenge(verifier: str) -> str:
    """S256: base64url(SHA-256(verifier)) without padding."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


@dataclass
class DeviceLogin:
    state: str = field(default_factory=lambda: secrets.token_hex(32))            # 32 bytes, hex
    verifier: str = field(default_factory=lambda: secrets.token_urlsafe(48), repr=False)  # 64 chars (43-128)
    started: DeviceLoginStarted | None = None

    @property
    def challenge(self) -> str:
        return code_challenge(self.verifier)


def platform_name() -> str:
    return f"{_platform.system().lower()}-{_platform.machine().lower()}"


def start(client, login: DeviceLogin | None = None) -> DeviceLogin:
    login = login or DeviceLogin()
    login.started = client.device_login.start(state=login.state, code_challenge=login.challenge,
                                              cli_version=VERSION, platform=platform_name())
    return login


def wait_for_approval(client, login: DeviceLogin, *, sleep: Callable[[float], None] = time.sleep,
                      interval: float | None = None, on_poll: Callable[[str], None] | None = None) -> CliToken:
    """Polls at the interval the service gave until approved, then exchanges the verifier."""
    assert login.started is not None, "start() first"
    wait = login.started.interval if interval is None else interval
    while True:
        polled = client.device_login.status(login.started.login_id)
        status = polled.status
        if on_poll is not None:
            on_poll(status)
        if status == "approved":
            return client.device_login.token(login.started.login_id, login.verifier)
        if status != "pending":
            raise DeviceLoginFailed(status, polled.reason)
        sleep(wait)
