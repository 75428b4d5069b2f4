"""AWS clients, created once per container.

botocore is used directly rather than boto3: importing boto3 also imports s3transfer and adds
about a third to a function's cold start, and the low-level clients are all we need.
AWS_ENDPOINT_URL (read by botocore) points every client at the local emulator.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from typing import Any

import botocore.loaders
import botocore.session
from botocore.config import Config

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


@lru_cache(maxsize=None)
def client(service: str, read_timeout: int = 10) -> Any:
    """A client of the service; read_timeout longer only for slow answers (a model's)."""
    with _lock:  # botocore sessions are not thread-safe while creating clients
        region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        return _session().create_client(
            service,
            region_name=region,
            config=Config(retries={"mode": "standard", "max_attempts": 3},
                          connect_timeout=2, read_timeout=read_timeout, max_pool_connections=32),
        )


def reset_clients() -> None:
    """Forget cached clients (tests point them at a new endpoint)."""
    client.cache_clear()
    _session.cache_clear()


def error_code(exc: Exception) -> str | None:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return response.get("Error", {}).get("Code")
    return None
