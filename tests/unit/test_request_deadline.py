"""One time budget per synchronous request (svc_core/platform/deadline.py): every model call's budget is
within what is left of the request's deadline, a fallback gets what the first model left of it and is not
asked when less than a second is, and outside a request a call has its own budget only."""

from __future__ import annotations

from svc_core.adapters.models.base import Budget
from svc_core.adapters.models.registry import WithFallback
from svc_core.platform import deadline
from svc_core.platform.errors import ModelUnavailable
from tests.unit.test_model_registry import Fails


def test_outside_a_request_a_call_has_its_own_budget():
    assert deadline.left() is None
    assert Budget(30).left() > 29


def test_a_request_leaves_its_model_calls_api_gateway_s_29_s_less_the_reserve():
    with deadline.request():
        assert deadline.REQUEST_SECONDS - deadline.RESERVE_SECONDS - 1 < Budget(600).left() \
            <= deadline.REQUEST_SECONDS - deadline.RESERVE_SECONDS
        assert Budget(3).left() <= 3   # a shorter budget of its own stays
    assert deadline.left() is None


def test_an_invocation_with_less_time_left_than_29_s_gives_its_model_calls_less():
    with deadline.request(remaining_seconds=8):
        assert Budget(30).left() <= 8 - deadline.RESERVE_SECONDS


def test_with_a_fallback_the_first_model_gets_its_share_and_the_fallback_the_rest():
    seen = {}

    class Measures(Fails):
        def converse(self, request):
            seen[self.model_id] = Budget(600).left()
            return super().converse(request)

    primary = Measures("a", ModelUnavailable("x", {"model": "a", "reason": "timeout"}))
    fallback = Measures("b", None)
    with deadline.request():
        WithFallback(primary, fallback).converse({"messages": []})
    whole = deadline.REQUEST_SECONDS - deadline.RESERVE_SECONDS
    assert seen["a"] <= whole * deadline.PRIMARY_SHARE < seen["b"] <= whole


def test_no_fallback_is_asked_with_less_than_a_second_of_the_request_left():
    primary = Fails("a", ModelUnavailable("x", {"model": "a", "reason": "timeout"}))
    fallback = Fails("b", None)
    with deadline.request(remaining_seconds=deadline.RESERVE_SECONDS + 0.5):
        try:
            WithFallback(primary, fallback).converse({"messages": []})
        except ModelUnavailable as exc:
            assert exc.details["model"] == "a"
        else:
            raise AssertionError("the fallback answered")
    assert (primary.calls, fallback.calls) == (1, 0)
