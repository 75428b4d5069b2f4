"""Independent calls made at once.

both(): two calls of one request, where a container's first request of a credential would
otherwise wait for two round trips one after the other (auth/authenticate.py: the key's last use
written while its tenant's policy is read); warm requests find those cached and start no thread.
The second call runs on a new thread in a copy of the caller's context (the request's state and
log keys go with it).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import Any, TypeVar

A = TypeVar("A")
B = TypeVar("B")


def both(first: Callable[[], A], second: Callable[[], B]) -> tuple[A, B]:
    """first() here and second() on another thread; both results, or the exception of the first
    that failed (first's, when both did). Returns only when both have ended."""
    outcome: dict[str, Any] = {}
    context = contextvars.copy_context()

    def run() -> None:
        try:
            outcome["value"] = context.run(second)
        except BaseException as exc:  # handed to the caller below
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="parallel-second", daemon=True)
    thread.start()
    try:
        first_value = first()
    finally:
        thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return first_value, outcome["value"]
