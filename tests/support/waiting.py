"""Waiting for what the local stack's pollers do in the background."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def waited(read: Callable[[], Any], done: Callable[[Any], bool], timeout: float = 30.0) -> Any:
    """read() until done(value) holds or the time is up; the last value read (the test asserts on it)."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def until(condition: Callable[[], Any], seconds: float = 120, every: float = 0.2) -> Any:
    """The condition's first true answer, or its last answer once the time is up."""
    deadline = time.monotonic() + seconds
    while True:
        answer = condition()
        if answer or time.monotonic() > deadline:
            return answer
        time.sleep(every)
