"""AWS clients, created once per container, each with timeouts and retries chosen for its use.

botocore is used directly rather than boto3: importing boto3 also imports s3transfer and adds
about a third to a function's cold start, and the low-level clients are all we need.
AWS_ENDPOINT_URL (read by botocore) points every client at the local emulator.

Timeouts and retries (retry mode "standard": throttling, 5xx and connection errors, and a read
timeout, are retried with jittered backoff of up to 1 s, then 2 s). A retry after a read timeout
re-sends a request the server may already have applied, so a client retries only where a repeat is
harmless. "attempts" counts the first one (botocore's total_max_attempts; its max_attempts would
count the retries only, one more attempt than it says):

| use                       | connect | read  | attempts | why a repeat is harmless                              |
|---------------------------|---------|-------|----------|-------------------------------------------------------|
| dynamodb (reads, writes)  | 1 s     | 2 s   | 3        | reads; TransactWriteItems carries a ClientRequestToken |
|                           |         |       |          | (data/common.transact); creates recognise their own   |
|                           |         |       |          | item (common.create_item); plain puts/deletes and SET |
|                           |         |       |          | updates write the same again; counters (rate-limit    |
|                           |         |       |          | hits, failed redemptions) may count one twice: on the |
|                           |         |       |          | strict side, accepted                                 |
| sqs (send_message)        | 1 s     | 2 s   | 3        | queues deliver at least once: workers already dedupe   |
| events (put_events)       | 1 s     | 2 s   | 3        | at least once too: consumers dedupe by event id; only |
|                           |         |       |          | the outbox publisher (not an API request, but 15 s    |
|                           |         |       |          | too: a batch cut off is handed back whole) sends      |
| secretsmanager            | 1 s     | 2 s   | 3        | reads; put_secret_value gets botocore's token         |
| kms                       | 1 s     | 2 s   | 3        | generate_data_key and decrypt change nothing          |
| sesv2                     | 1 s     | 3 s   | 2        | send_email: a retry may send a second copy (harmless) |
| bedrock-runtime (model)   | 2 s     | given | 1        | model_client: reads for the call's budget; bedrock.py |
|                           |         |       |          | retries within that budget                            |
| anything else             | 2 s     | 10 s  | 3        |                                                       |

An API function has 15 s (29 s for agents; API Gateway answers after 29 s): one call (DynamoDB,
SQS, Secrets Manager, KMS) that never answers gives up after 3 x (1 + 2) s + 3 s of backoff = 12 s,
so the request still answers inside its time: 503 SERVICE_UNAVAILABLE with Retry-After (is_unavailable;
svc_core/http/api.py), never a 500. Within a request a call is retried only while the request's deadline
(svc_core/platform/deadline.py: its Timeout less the time kept for answering) leaves room for the backoff
and one more whole attempt: a request whose several calls each met a stalled datastore still answers
503 before Lambda ends it at its Timeout (which API Gateway would answer 502). A call that waited long
and then got its answer leaves a stalled datastore answered, so the request's later calls are prompt.
A request whose every attempt timed out has an unknown outcome; a create's retry with its Idempotency-Key finds from the key's
record whether the change was made (and its answer), or makes it (svc_core/http/idempotency.py).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from typing import Any

import botocore.awsrequest
import botocore.credentials
import botocore.exceptions
import botocore.loaders
import botocore.session
from botocore.config import Config

from svc_core.platform import deadline, snapshot
from svc_core.platform.config import settings

_lock = threading.Lock()


class DeferredCredentials(botocore.credentials.Credentials):
    """The credentials every client of the session holds: resolved through botocore's own chain
    (environment, then the container provider SnapStart functions get, ...) on a request's first
    use of them, and forgotten (forget()) before a snapshot and after each restore, so that a
    client made before the snapshot can be kept without keeping a credential."""

    def __init__(self, resolve: Callable[[], Any]) -> None:  # not super()'s: it sets what are properties here
        self.method = "deferred"
        self._resolve = resolve
        self._resolved: Any = None
        self._resolving = threading.Lock()

    def _current(self) -> Any:
        resolved = self._resolved
        if resolved is None:
            with self._resolving:
                if self._resolved is None:
                    self._resolved = self._resolve()
                    if self._resolved is None:
                        raise botocore.exceptions.NoCredentialsError()
                resolved = self._resolved
        return resolved

    def forget(self) -> None:
        with self._resolving:
            self._resolved = None

    @property
    def resolved(self) -> bool:
        return self._resolved is not None

    def use(self, credentials: Any) -> None:
        """Sign with these until forget() (the warm-up's placeholders)."""
        with self._resolving:
            self._resolved = credentials

    def get_frozen_credentials(self) -> Any:
        return self._current().get_frozen_credentials()

    @property
    def access_key(self) -> str:  # type: ignore[override]
        return self._current().access_key

    @property
    def secret_key(self) -> str:  # type: ignore[override]
        return self._current().secret_key

    @property
    def token(self) -> str | None:  # type: ignore[override]
        return self._current().token

    @property
    def account_id(self) -> str | None:  # type: ignore[override]
        return getattr(self._current(), "account_id", None)


class _CredentialProvider:
    """The session's credential_provider component: hands every client the one DeferredCredentials,
    which resolves botocore's default chain with a resolver used once (botocore's keeps a cache of
    assumed roles' credentials, and its fetchers a connection to the credentials endpoint)."""

    def __init__(self, session: Any) -> None:
        self._session = session
        self._spare: Any = None
        self.credentials = DeferredCredentials(self._resolve)

    def _resolve(self) -> Any:
        resolver, self._spare = self._spare, None
        return (resolver or botocore.credentials.create_credential_resolver(self._session)).load_credentials()

    def forget(self) -> None:
        """Forget the resolved credentials, and have a resolver ready for the next resolution: made
        before the snapshot, one that has resolved nothing (so holds neither credential nor
        connection) serves the first call after a restore, which then saves the ~2.5 ms its making
        costs there."""
        self.credentials.forget()
        if self._spare is None:
            self._spare = botocore.credentials.create_credential_resolver(self._session)

    def load_credentials(self) -> DeferredCredentials:
        return self.credentials


@lru_cache(maxsize=1)
def _loader() -> Any:
    """The service models, parsed once per process: a new session (after reset_clients) reuses them."""
    return botocore.loaders.create_loader()


_handlers: list[tuple[str, Callable[..., Any], str]] = []  # register_handler's, for every session and client


@lru_cache(maxsize=1)
def _session() -> Any:
    session = botocore.session.get_session()
    session.register_component("data_loader", _loader())
    session.register_component("credential_provider", _CredentialProvider(session))
    for event, handler, unique_id in _handlers:
        session.register(event, handler, unique_id=unique_id)
    return session


def register_handler(event: str, handler: Callable[..., Any], unique_id: str) -> None:
    """Have every client of this module, made before or after (reset_clients included), emit
    botocore's `event` to handler: where a deployment adds behaviour to each AWS call without the
    callers knowing (the local stack checks each call against the calling function's IAM role).
    A client copies its session's handlers when made, so those made already are given it too."""
    with _lock:
        _handlers.append((event, handler, unique_id))
        if _session.cache_info().currsize:
            _session().register(event, handler, unique_id=unique_id)
        for made in _made:
            made.meta.events.register(event, handler, unique_id=unique_id)


def credentials() -> DeferredCredentials:
    """The credentials the session's clients sign with."""
    return _session().get_component("credential_provider").credentials


@dataclass(frozen=True)
class Profile:
    connect_timeout: float
    read_timeout: float
    max_attempts: int


DEFAULT = Profile(connect_timeout=2, read_timeout=10, max_attempts=3)
PROFILES: dict[str, Profile] = {   # the table of the module's docstring
    "dynamodb": Profile(connect_timeout=1, read_timeout=2, max_attempts=3),
    "sqs": Profile(connect_timeout=1, read_timeout=2, max_attempts=3),
    "events": Profile(connect_timeout=1, read_timeout=2, max_attempts=3),
    "secretsmanager": Profile(connect_timeout=1, read_timeout=2, max_attempts=3),
    "kms": Profile(connect_timeout=1, read_timeout=2, max_attempts=3),
    "sesv2": Profile(connect_timeout=1, read_timeout=3, max_attempts=2),
    "bedrock-runtime": Profile(connect_timeout=2, read_timeout=30, max_attempts=1),  # model_client
}


def profile(service: str, read_timeout: float | None = None) -> Profile:
    """The timeouts and attempts of a service's client; read_timeout (a slow answer's) overrides the read."""
    chosen = PROFILES.get(service, DEFAULT)
    return chosen if read_timeout is None else replace(chosen, read_timeout=read_timeout)


_made: list[Any] = []  # every client made: their connections are closed after a restore
_made_for: dict[tuple[str, float | None], Any] = {}


@cache
def client(service: str, read_timeout: float | None = None) -> Any:
    """A client of the service, configured as PROFILES says; read_timeout longer only for slow answers (a model's)."""
    chosen = profile(service, read_timeout)
    with _lock:  # botocore sessions are not thread-safe while creating clients
        if (service, read_timeout) in _made_for:  # threads that asked at once share the first one made
            return _made_for[(service, read_timeout)]
        made = _session().create_client(
            service,
            region_name=settings().aws_region,
            config=Config(retries={"mode": "standard", "total_max_attempts": chosen.max_attempts},
                          connect_timeout=chosen.connect_timeout, read_timeout=chosen.read_timeout,
                          max_pool_connections=32),
        )
        _retry_within_deadline(made, service)
        _made.append(made)
        _made_for[(service, read_timeout)] = made
        return made


@cache
def model_client(service: str, read_timeout: float, endpoint: str | None = None) -> Any:
    """A client for a model's calls: it reads for at most read_timeout (the call's budget) and does
    not retry (models/bedrock.py retries within the budget); endpoint: another server speaking the API."""
    chosen = profile(service)
    with _lock:
        made = _session().create_client(
            service, region_name=settings().aws_region, endpoint_url=endpoint,
            config=Config(retries={"mode": "standard", "total_max_attempts": 1},
                          connect_timeout=min(chosen.connect_timeout, read_timeout), read_timeout=read_timeout,
                          max_pool_connections=32))
        _made.append(made)
        return made


@cache
def client_in(service: str, region: str, endpoint: str | None = None) -> Any:
    """A client of the service in another cell's region (a move between cells reads and writes both):
    its regional endpoint, or `endpoint` (the local stack's cells each run their own emulators)."""
    chosen = profile(service)
    with _lock:
        made = _session().create_client(
            service, region_name=region, endpoint_url=endpoint,
            config=Config(retries={"mode": "standard", "total_max_attempts": chosen.max_attempts},
                          connect_timeout=chosen.connect_timeout, read_timeout=max(chosen.read_timeout, 10),
                          max_pool_connections=32))
        _retry_within_deadline(made, service, read_floor=10)
        _made.append(made)
        return made


MAX_BACKOFF_SECONDS = 2.0   # the standard retry mode's longest wait before a third attempt
# The profiles as deployed: a test that lengthens one's read timeout for a slow emulator changes PROFILES.
_DEPLOYED_PROFILES = dict(PROFILES)


def _retry_within_deadline(made: Any, service: str, read_floor: float = 0.0) -> None:
    """No retry once the request's deadline leaves less than the longest backoff and one whole attempt
    of the client's profile as deployed (a handler answering False first decides for botocore's retry
    handler); outside a request, botocore's retries as configured."""
    chosen = _DEPLOYED_PROFILES.get(service, DEFAULT)
    room = MAX_BACKOFF_SECONDS + chosen.connect_timeout + max(chosen.read_timeout, read_floor)

    def within_deadline(**_: Any) -> bool | None:
        left = deadline.left()
        return False if left is not None and left < room else None

    # On the service's own event, before botocore's retry handler there (the more specific name is asked first).
    service_id = made.meta.service_model.service_id.hyphenize()
    made.meta.events.register_first(f"needs-retry.{service_id}", within_deadline, unique_id="svc-retry-within-deadline")


def reset_clients() -> None:
    """Forget cached clients and the session: their credentials and open connections (tests point
    them at a new endpoint). The parsed service models (_loader) are kept: they hold nothing of an
    environment."""
    client.cache_clear()
    client_in.cache_clear()
    model_client.cache_clear()
    _made.clear()
    _made_for.clear()
    _session.cache_clear()


@snapshot.forget_on_restore
def forget_credentials() -> None:
    """Before a SnapStart snapshot and after each restore: forget the credentials the clients
    resolved and close every client's connections. The clients themselves are kept (made at init,
    as AWS advises for SnapStart): what they hold then (handlers, configuration, models, parsed
    endpoint rules) is nothing of an environment, and the next call resolves credentials afresh
    and opens its own connection."""
    if _session.cache_info().currsize:
        _session().get_component("credential_provider").forget()
    for made in _made:
        made.close()  # its pool's sockets: a restored one would share a peer's (or a dead) connection


class _CannedBody:
    """The raw body of a canned answer (botocore reads a response's raw.stream())."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    def stream(self, **_: Any) -> Any:
        yield self._body


_KEY = {"pk": {"S": "warm-up"}}
_ITEM = {"pk": {"S": "warm-up"}, "n": {"N": "1"}, "l": {"L": [{"S": "a"}]}, "m": {"M": {"b": {"BOOL": True}}},
         "ss": {"SS": ["a"]}, "z": {"NULL": True}}
_CONDITION_FAILED = (400, {"__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
                           "message": "The conditional request failed", "Item": _ITEM})
# The calls a request makes most (admission's key, tenant and counter reads and writes, a route's
# reads and writes), each with a canned answer: (operation, parameters, (status, body)).
WARM_CALLS: dict[str, tuple[tuple[str, dict[str, Any], tuple[int, dict[str, Any]]], ...]] = {
    "dynamodb": (
        ("get_item", {"TableName": "warm-up", "Key": _KEY, "ConsistentRead": True}, (200, {"Item": _ITEM})),
        ("update_item", {"TableName": "warm-up", "Key": _KEY, "UpdateExpression": "SET #h = #h + :one",
                         "ExpressionAttributeNames": {"#h": "hits"},
                         "ExpressionAttributeValues": {":one": {"N": "1"}}, "ReturnValues": "UPDATED_NEW",
                         "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}, (200, {"Attributes": _ITEM})),
        ("update_item", {"TableName": "warm-up", "Key": _KEY, "UpdateExpression": "SET #h = :one",
                         "ConditionExpression": "attribute_not_exists(#h)",
                         "ExpressionAttributeNames": {"#h": "hits"},
                         "ExpressionAttributeValues": {":one": {"N": "1"}}}, _CONDITION_FAILED),
        ("batch_get_item", {"RequestItems": {"warm-up": {"Keys": [_KEY], "ConsistentRead": True}}},
         (200, {"Responses": {"warm-up": [_ITEM]}, "UnprocessedKeys": {}})),
        ("query", {"TableName": "warm-up", "KeyConditionExpression": "pk = :p",
                   "ExpressionAttributeValues": {":p": {"S": "warm-up"}}, "Limit": 1},
         (200, {"Items": [_ITEM], "Count": 1, "ScannedCount": 1, "LastEvaluatedKey": _KEY})),
        ("put_item", {"TableName": "warm-up", "Item": _ITEM, "ConditionExpression": "attribute_not_exists(pk)"},
         (200, {})),
        ("delete_item", {"TableName": "warm-up", "Key": _KEY}, (200, {})),
        ("transact_write_items", {"TransactItems": [{"Put": {"TableName": "warm-up", "Item": _ITEM}}],
                                  "ClientRequestToken": "warm-up"}, (200, {})),
    ),
    "secretsmanager": (
        ("get_secret_value", {"SecretId": "warm-up"},
         (200, {"ARN": "arn:aws:secretsmanager:us-east-1:000000000000:secret:warm-up", "Name": "warm-up",
                "SecretString": "{}", "VersionId": "warm-up", "CreatedDate": 0})),
    ),
}


def warm_models(services: tuple[str, ...]) -> None:
    """Before the snapshot: make the services' clients, to be kept (AWS's advice for SnapStart),
    and send each the calls of WARM_CALLS once, answered here by a before-send handler, so that
    the first real call after a restore finds botocore's per-client and per-operation work done
    (operation models, serializers, endpoint rules, the signer, the parsers, the error classes).
    Nothing reaches the network; the requests are signed with placeholder credentials, forgotten
    afterwards (as the real ones are, by forget_credentials, before the snapshot is taken)."""
    # urllib3 encodes the host with the idna codec on connecting, which the canned calls never do;
    # its first use imports it (~2 ms after a restore, where no call before the snapshot connected).
    "warm-up".encode("idna")
    kept = credentials()
    kept.use(botocore.credentials.Credentials("warm-up", "warm-up"))
    try:
        for service in services:
            made = client(service)
            for operation, params, (status, body) in WARM_CALLS.get(service, ()):
                _canned_call(made, operation, params, status, json.dumps(body).encode())
    finally:
        kept.forget()


def _canned_call(made: Any, operation: str, params: dict[str, Any], status: int, body: bytes) -> None:
    def answer(request: Any = None, **_: Any) -> Any:
        return botocore.awsrequest.AWSResponse(request.url, status, {}, _CannedBody(body))

    made.meta.events.register_first("before-send", answer, unique_id="svc-warm-up")
    try:
        getattr(made, operation)(**params)
    except botocore.exceptions.ClientError:
        pass  # the canned error: its parsing and exception class are what was warmed
    finally:
        made.meta.events.unregister("before-send", unique_id="svc-warm-up")


# What DynamoDB (or another service) answers, after the client's own retries, when it cannot serve
# the call now: the request did not fail, the service was out of reach.
UNAVAILABLE_CODES = frozenset({
    "ServiceUnavailable", "ServiceUnavailableException", "InternalServerError", "InternalFailure",
    "ThrottlingException", "Throttling", "ProvisionedThroughputExceededException", "RequestLimitExceeded",
    "TransactionInProgressException",
})


def is_unavailable(exc: BaseException) -> bool:
    """Whether exc means the service was out of reach (no answer in time, no connection, or its
    "try later" after every attempt): the outcome of a write is then unknown, never a refusal. A
    library's own error raised from one (Powertools' persistence errors) counts too."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, (botocore.exceptions.HTTPClientError, botocore.exceptions.ConnectionError)):
            return True
        if isinstance(exc, Exception) and error_code(exc) in UNAVAILABLE_CODES:
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def error_code(exc: Exception) -> str | None:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return response.get("Error", {}).get("Code")
    return None
