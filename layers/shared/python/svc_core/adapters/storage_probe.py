"""The edge to a tenant's own storage: write a small object, read it back, delete it.

S3, R2 and GCS (its S3-interoperable XML API) are spoken to with botocore's S3 client
(path-style addressing, short timeouts, no retries, checksums only where required, which R2
and GCS need); Azure Blob Storage with the azure-storage-blob client (shared key). Both send
their requests through a connection pool pinned to an address that endpoint_guard checked, so
nothing here resolves a customer's host name a second time.

Every failure becomes a reason a user can act on (bad_credentials, no_such_bucket,
access_denied, wrong_region, unreachable, timeout, unexpected_response) and a message written
here: the provider's own message, which may quote the access key, is never repeated (only its
error code, when it has the shape of one). Nothing here logs a credential.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

import urllib3

from svc_core.adapters.endpoint_guard import Target, pinned_pool

PROBE_PREFIX = "svc-storage-check/"
MESSAGES = {
    "bad_credentials": "The storage refused the access key and secret: check both (for azure: the account name "
                       "and account key).",
    "no_such_bucket": "The bucket (for azure: the container) does not exist at this endpoint.",
    "access_denied": "The storage refused to let these credentials write, read and delete objects in this "
                     "bucket: check their permissions (for azure: the account key and the account's network "
                     "rules).",
    "wrong_region": "The bucket is in another region than byosRegion.",
    "unreachable": "The endpoint could not be reached (connection refused or reset, TLS failure, or the name "
                   "does not resolve).",
    "timeout": "The endpoint did not answer in time.",
    "unexpected_response": "The endpoint answered something a storage service would not; check byosEndpoint.",
}
_S3_REASONS = {
    "InvalidAccessKeyId": "bad_credentials", "SignatureDoesNotMatch": "bad_credentials",
    "InvalidToken": "bad_credentials", "ExpiredToken": "bad_credentials", "InvalidClientTokenId": "bad_credentials",
    "InvalidSecurity": "bad_credentials", "Unauthorized": "bad_credentials",
    "AccessDenied": "access_denied", "AllAccessDisabled": "access_denied", "AccountProblem": "access_denied",
    "NoSuchBucket": "no_such_bucket",
    "PermanentRedirect": "wrong_region", "AuthorizationHeaderMalformed": "wrong_region",
    "IllegalLocationConstraintException": "wrong_region", "301": "wrong_region",
}
_AZURE_REASONS = {
    "AuthenticationFailed": "bad_credentials", "InvalidAuthenticationInfo": "bad_credentials",
    "NoAuthenticationInformation": "bad_credentials",
    "AuthorizationFailure": "access_denied", "AuthorizationPermissionMismatch": "access_denied",
    "AuthorizationResourceTypeMismatch": "access_denied", "AuthorizationSourceIPMismatch": "access_denied",
    "AuthorizationProtocolMismatch": "access_denied", "AccountIsDisabled": "access_denied",
    "InsufficientAccountPermissions": "access_denied",
    "ContainerNotFound": "no_such_bucket", "ContainerBeingDeleted": "no_such_bucket",
    "ResourceNotFound": "no_such_bucket",
}
_CODE_SHAPE = re.compile(r"^[A-Za-z0-9]{1,64}$")


@dataclass(frozen=True)
class Connection:
    """What the probe needs: never stored, never logged, never answered."""
    provider: str             # s3, r2, gcs, azure
    target: Target            # the checked endpoint
    bucket: str
    region: str | None
    access_key: str = field(repr=False)
    secret_key: str = field(repr=False)


class StepFailed(Exception):
    def __init__(self, reason: str, code: str | None = None) -> None:
        self.reason = reason
        self.code = code if code and _CODE_SHAPE.match(code) else None
        super().__init__(reason)


def _timeouts() -> tuple[float, float]:
    from svc_core.platform.config import settings
    cfg = settings()
    return cfg.storage_probe_connect_timeout_seconds, cfg.storage_probe_read_timeout_seconds


def _network_reason(exc: BaseException) -> str | None:
    """timeout / unreachable for a failure below HTTP, whichever library raised and wrapped it."""
    found: set[str] = set()
    pending, seen = [exc], set()
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen or not isinstance(current, BaseException):
            continue
        seen.add(id(current))
        name = type(current).__name__
        if isinstance(current, urllib3.exceptions.NewConnectionError):  # a ConnectTimeoutError by descent
            found.add("unreachable")
        elif isinstance(current, (urllib3.exceptions.TimeoutError, TimeoutError)) or "Timeout" in name:
            found.add("timeout")
        elif isinstance(current, (urllib3.exceptions.HTTPError, OSError)) or name in (
                "EndpointConnectionError", "ServiceRequestError", "ServiceResponseError", "SSLError"):
            found.add("unreachable")
        pending += [getattr(current, "reason", None), getattr(current, "inner_exception", None),
                    current.__cause__, current.__context__, *[a for a in current.args if isinstance(a, BaseException)]]
    return "timeout" if "timeout" in found else "unreachable" if found else None


# ---- S3, R2, GCS ---------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _botocore_session() -> Any:
    import botocore.session
    session = botocore.session.get_session()
    return session


def _s3_client(conn: Connection) -> Any:
    from botocore.config import Config
    connect, read = _timeouts()
    pool = pinned_pool(conn.target, connect_timeout=connect, read_timeout=read)
    # R2 and GCS sign with any region name; "auto" is what R2 documents.
    region = conn.region or ("us-east-1" if conn.provider == "s3" else "auto")
    client = _botocore_session().create_client(
        "s3", region_name=region, endpoint_url=conn.target.url,
        aws_access_key_id=conn.access_key, aws_secret_access_key=conn.secret_key,
        config=Config(s3={"addressing_style": "path"}, retries={"mode": "standard", "max_attempts": 1},
                      connect_timeout=connect, read_timeout=read, signature_version="s3v4",
                      request_checksum_calculation="when_required",
                      response_checksum_validation="when_required"))
    client.meta.events.register_first("before-send.s3", _pinned_sender(conn.target, pool))
    return client


def _pinned_sender(target: Target, pool: urllib3.HTTPConnectionPool) -> Callable[..., Any]:
    """A before-send handler: send botocore's signed request through the pinned pool."""
    from botocore.awsrequest import AWSResponse

    def send(request: Any, **_: Any) -> Any:
        parts = urlsplit(request.url)
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("expect", "host")}
        headers["Host"] = target.host_header  # what botocore signed (the URL's host), not the address
        response = pool.urlopen(request.method, path, body=request.body, headers=headers, retries=False,
                                redirect=False, assert_same_host=False, preload_content=False,
                                decode_content=False,
                                chunked=str(headers.get("Transfer-Encoding", "")).lower() == "chunked")
        return AWSResponse(request.url, response.status, response.headers, response)

    return send


def _s3_failure(exc: Exception) -> StepFailed:
    response = getattr(exc, "response", None)
    if not isinstance(response, dict):
        return StepFailed(_network_reason(exc) or "unexpected_response")
    code = str(response.get("Error", {}).get("Code") or "")
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    reason = _S3_REASONS.get(code)
    if reason is None and code in ("", str(status)):  # no error document (e.g. an answer to HEAD)
        reason = {401: "bad_credentials", 403: "access_denied", 404: "no_such_bucket"}.get(status)
    return StepFailed(reason or "unexpected_response", code or (str(status) if status else None))


def _s3_steps(conn: Connection, key: str, content: bytes) -> dict[str, Callable[[], None]]:
    client_box: list[Any] = []

    def client() -> Any:
        if not client_box:
            client_box.append(_s3_client(conn))
        return client_box[0]

    def write() -> None:
        client().put_object(Bucket=conn.bucket, Key=key, Body=content, ContentType="text/plain")

    def read() -> None:
        body = client().get_object(Bucket=conn.bucket, Key=key)["Body"]
        try:
            if body.read() != content:
                raise StepFailed("unexpected_response")
        finally:
            body.close()

    def delete() -> None:
        client().delete_object(Bucket=conn.bucket, Key=key)

    return {"write": write, "read": read, "delete": delete}


# ---- Azure Blob Storage --------------------------------------------------------------------

def _azure_container(conn: Connection) -> Any:
    import requests
    from azure.core.pipeline.transport import RequestsTransport
    from azure.storage.blob import BlobServiceClient

    connect, read = _timeouts()
    pool = pinned_pool(conn.target, connect_timeout=connect, read_timeout=read)
    target = conn.target

    class PinnedAdapter(requests.adapters.HTTPAdapter):
        def get_connection_with_tls_context(self, request, verify, proxies=None, cert=None):
            return pool

        def get_connection(self, url, proxies=None):
            return pool

        def cert_verify(self, conn, url, verify, cert):
            return None

        def add_headers(self, request, **kwargs):
            request.headers["Host"] = target.host_header

    session = requests.Session()
    session.trust_env = False  # no proxy from the environment: the pinned address is the destination
    adapter = PinnedAdapter(max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    transport = RequestsTransport(session=session, session_owner=True, use_env_settings=False,
                                  connection_timeout=connect, read_timeout=read)
    service = BlobServiceClient(account_url=target.url.rstrip("/"), transport=transport, retry_total=0,
                                connection_timeout=connect, read_timeout=read,
                                credential={"account_name": conn.access_key, "account_key": conn.secret_key})
    return service.get_container_client(conn.bucket)


def _azure_failure(exc: Exception) -> StepFailed:
    from azure.core.exceptions import ClientAuthenticationError, HttpResponseError
    if isinstance(exc, HttpResponseError):
        code = getattr(exc, "error_code", None) or ""
        code = getattr(code, "value", code)  # azure-storage-blob gives a StorageErrorCode (a str enum)
        status = getattr(exc, "status_code", None)
        if isinstance(exc, ClientAuthenticationError) and status is None:
            return StepFailed("bad_credentials")  # refused before sending: the account key is not base64
        reason = _AZURE_REASONS.get(str(code))
        if reason is None and status == 403:
            reason = "bad_credentials" if not code else "access_denied"
        if reason is None and status == 404:
            reason = "no_such_bucket"
        return StepFailed(reason or "unexpected_response", str(code) or (str(status) if status else None))
    return StepFailed(_network_reason(exc) or "unexpected_response")


def _azure_steps(conn: Connection, key: str, content: bytes) -> dict[str, Callable[[], None]]:
    box: list[Any] = []

    def container() -> Any:
        if not box:
            box.append(_azure_container(conn))
        return box[0]

    def write() -> None:
        container().upload_blob(key, content, overwrite=True)

    def read() -> None:
        if container().download_blob(key).readall() != content:
            raise StepFailed("unexpected_response")

    def delete() -> None:
        container().delete_blob(key)

    return {"write": write, "read": read, "delete": delete}


# ---- the probe -----------------------------------------------------------------------------

def probe(conn: Connection) -> list[dict[str, Any]]:
    """Write, read back and delete a small object; one result per step tried, stopping at the
    first failure: {step, ok, latencyMs, reason?, message?, providerCode?}."""
    if not conn.target.addresses:
        return [{"step": "write", "ok": False, "latencyMs": 0, "reason": "unreachable",
                 "message": "The endpoint's host name does not resolve."}]
    key = f"{PROBE_PREFIX}{uuid.uuid4().hex}.txt"
    content = f"storage check {uuid.uuid4().hex}\n".encode()
    azure = conn.provider == "azure"
    steps = (_azure_steps if azure else _s3_steps)(conn, key, content)
    failure = _azure_failure if azure else _s3_failure
    results: list[dict[str, Any]] = []
    for name, run in steps.items():
        started = time.perf_counter()
        try:
            run()
        except Exception as exc:
            failed = exc if isinstance(exc, StepFailed) else failure(exc)
            result = {"step": name, "ok": False, "latencyMs": _ms(started), "reason": failed.reason,
                      "message": MESSAGES[failed.reason]}
            if failed.code:
                result["providerCode"] = failed.code
            results.append(result)
            break
        results.append({"step": name, "ok": True, "latencyMs": _ms(started)})
    return results


def _ms(started: float) -> int:
    return max(0, round((time.perf_counter() - started) * 1000))
