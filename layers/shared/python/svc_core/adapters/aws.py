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
| events (put_events)       | 1 s     | 5 s   | 3        | at least once too: consumers dedupe by event id; only |
|                           |         |       |          | the outbox publisher (not an API request) sends       |
| secretsmanager            | 1 s     | 2 s   | 3        | reads; put_secret_value gets botocore's token         |
| kms                       | 1 s     | 2 s   | 3        | generate_data_key and decrypt change nothing          |
| bedrock-runtime (model)   | 2 s     | given | 2        | changes nothing (costs a call); a long answer reads   |
|                           |         |       |          | up to the caller's read_timeout (models/bedrock.py)   |
| anything else             | 2 s     | 10 s  | 3        |                                                       |

An API function has 15 s (29 s for agents; API Gateway answers after 29 s): one call (DynamoDB,
SQS, Secrets Manager, KMS) that never answers gives up after 3 x (1 + 2) s + 3 s of backoff = 12 s,
so the request still answers (a 500 when the datastore is gone) inside its time. A request whose every attempt timed
out has an unknown outcome; with an Idempotency-Key the client's retry gets the first answer if the
first request's answer was stored, else runs again (see idempotency.py).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import botocore.loaders
import botocore.session
from botocore.config import Config

from svc_core.platform import snapshot
from svc_core.platform.config import settings

_lock = threading.Lock()


@lru_cache(maxsize=1)
def _loader() -> Any:
    """The service models, parsed once per process: a new session (after reset_clients) reuses them."""
    return botocore.loaders.create_loader()


@lru_cache(maxsize=1)
def _session() -> Any:
    session = botocore.session.get_session()
    session.register_component("data_loader", _loader())
    return session


@dataclass(frozen=True)
class Profile:
    connect_timeout: float
    read_timeout: float
    max_attempts: int


DEFAULT = Profile(connect_timeout=2, read_timeout=10, max_attempts=3)
PROFILES: dict[str, Profile] = {   # the table of the module's docstring
    "dynamodb": Profile(connect_timeout=1, read_timeout=2, max_attempts=3),
    "sqs": Profile(connect_timeout=1, read_timeout=2, max_attempts=3),
    "events": Profile(connect_timeout=1, read_timeout=5, max_attempts=3),
    "secretsmanager": Profile(connect_timeout=1, read_timeout=2, max_attempts=3),
    "kms": Profile(connect_timeout=1, read_timeout=2, max_attempts=3),
    "bedrock-runtime": Profile(connect_timeout=2, read_timeout=120, max_attempts=2),
}


def profile(service: str, read_timeout: float | None = None) -> Profile:
    """The timeouts and attempts of a service's client; read_timeout (a slow answer's) overrides the read."""
    chosen = PROFILES.get(service, DEFAULT)
    return chosen if read_timeout is None else replace(chosen, read_timeout=read_timeout)


@lru_cache(maxsize=None)
def client(service: str, read_timeout: float | None = None) -> Any:
    """A client of the service, configured as PROFILES says; read_timeout longer only for slow answers (a model's)."""
    chosen = profile(service, read_timeout)
    with _lock:  # botocore sessions are not thread-safe while creating clients
        return _session().create_client(
            service,
            region_name=settings().aws_region,
            config=Config(retries={"mode": "standard", "total_max_attempts": chosen.max_attempts},
                          connect_timeout=chosen.connect_timeout, read_timeout=chosen.read_timeout,
                          max_pool_connections=32),
        )


def reset_clients() -> None:
    """Forget cached clients and the session: their credentials and open connections (tests point
    them at a new endpoint). The parsed service models (_loader) are kept: they hold nothing of an
    environment."""
    client.cache_clear()
    _session.cache_clear()


@snapshot.forget_on_restore
def forget_credentials() -> None:
    """After a SnapStart restore: drop every client (its connections) and the credentials the
    session resolved, but keep the session, whose handlers cost ~10 ms to register again. What it
    keeps then (handlers, configuration, the loader) holds nothing of an environment."""
    client.cache_clear()
    if _session.cache_info().currsize:
        _session()._credentials = None  # where botocore's Session.get_credentials() keeps them


def warm_models(services: tuple[str, ...]) -> None:
    """Parse the services' models and endpoint rules into the loader, calling no AWS API and
    resolving no credential (for the snapshot: see platform/snapshot.py)."""
    loader = _loader()
    for service in services:
        loader.load_service_model(service, "service-2")
        loader.load_service_model(service, "endpoint-rule-set-1")
    # A client made with placeholder keys imports and builds what the first real client needs
    # (signers, endpoint provider, parsers); it is dropped, and never sends a request.
    for service in services:
        _session().create_client(service, region_name=settings().aws_region,
                                 aws_access_key_id="snapshot", aws_secret_access_key="snapshot")


def error_code(exc: Exception) -> str | None:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return response.get("Error", {}).get("Code")
    return None
