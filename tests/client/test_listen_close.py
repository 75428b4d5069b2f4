"""`svc listen` ends on Ctrl-C even when closing its HTTP clients cannot finish: an interrupt that lands
between a connection pool's lock being taken and the block that releases it leaves the lock held, and
the command then hung in its clean-up, after the events were forwarded, without saying "Stopped."."""

from __future__ import annotations

import threading

from svc_client import listen


def test_closing_gives_up_on_a_client_whose_lock_is_held_and_runs_the_ones_before_it():
    held = threading.Lock()
    held.acquire()            # what the interrupted pool is left with
    closed: list[str] = []
    listen._close_within(0.1, lambda: closed.append("forwarder"), held.acquire, lambda: closed.append("never"))
    assert closed == ["forwarder"]     # returned although the second close never can


def test_a_close_that_fails_does_not_keep_the_others_from_closing():
    closed: list[str] = []

    def broken() -> None:
        raise RuntimeError("already closed")
    listen._close_within(5.0, broken, lambda: closed.append("client"))
    assert closed == ["client"]
