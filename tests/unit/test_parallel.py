"""platform/parallel.both: two calls at once, their results or their failure, never a stray thread."""

from __future__ import annotations

import contextvars
import threading

import pytest

from svc_core.platform import parallel

_request = contextvars.ContextVar("request", default=None)


def test_both_results_in_order_and_the_second_on_another_thread():
    here = threading.get_ident()
    first, second = parallel.both(lambda: ("first", threading.get_ident()), lambda: ("second", threading.get_ident()))
    assert first == ("first", here)
    assert second[0] == "second" and second[1] != here


def test_the_calls_overlap():
    """Each waits for the other to have started: run one after the other, this would never end."""
    started = [threading.Event(), threading.Event()]

    def meet(mine: int) -> bool:
        started[mine].set()
        return started[1 - mine].wait(timeout=10)

    assert parallel.both(lambda: meet(0), lambda: meet(1)) == (True, True)


def test_the_second_sees_the_callers_context():
    token = _request.set("req_1")
    try:
        assert parallel.both(lambda: _request.get(), lambda: _request.get()) == ("req_1", "req_1")
    finally:
        _request.reset(token)


def test_a_failure_of_the_second_is_raised_after_the_first_ended():
    done = []

    def first():
        done.append("first")
        return 1

    def second():
        raise KeyError("second failed")

    with pytest.raises(KeyError, match="second failed"):
        parallel.both(first, second)
    assert done == ["first"]


def test_the_first_failure_wins_and_the_second_still_ends_before_it_is_raised():
    ended = threading.Event()

    def second():
        ended.wait(0.05)
        ended.set()
        raise ValueError("second")

    with pytest.raises(RuntimeError, match="first"):
        parallel.both(lambda: (_ for _ in ()).throw(RuntimeError("first")), second)
    assert ended.is_set()
