"""The client library's rules, with httpx's MockTransport in place of the network: errors, token
expiry and callbacks, retries, idempotency keys, pagination and stream resumption. Each test
scripts the service's answers and checks what the client sent and did."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import pytest

from svc_client import (
    NULL,
    AccountDisabled,
    AsyncClient,
    CellUnreachable,
    Client,
    Conflict,
    ConnectionFailed,
    ContentDelta,
    Done,
    IdempotencyKeyReused,
    InvalidCredentials,
    MessageStart,
    NotFound,
    RateLimited,
    RetryPolicy,
    StreamInterrupted,
    Unauthorized,
    UnknownEvent,
    Usage,
)
from svc_client.models import Agent, TokenGrant

BASE = "http://svc.test"
PROJECT = {"id": "proj_1", "name": "Apollo", "description": None, "language": "python",
           "created_at": "2026-11-21T21:00:00.000Z", "updated_at": "2026-11-21T21:00:00.000Z"}


def envelope(data, status=200, headers=None):
    return httpx.Response(status, json={"data": data, "meta": {"request_id": "req-1", "timestamp": "t"}},
                          headers=headers)


def error(code, status, message="no", details=None, headers=None):
    return httpx.Response(status, headers=headers, json={
        "error": {"code": code, "message": message, "details": details or {}},
        "meta": {"request_id": "req-err", "timestamp": "t"}})


class Script:
    """Answers requests in order and keeps them."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request):
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer(request) if callable(answer) else answer


def client(script, **options) -> tuple[Client, list[float]]:
    slept: list[float] = []
    options.setdefault("api_key", "test-key")
    return Client(BASE, transport=httpx.MockTransport(script), sleep=slept.append, **options), slept


# ---- errors ----------------------------------------------------------------------------------

def test_an_error_envelope_becomes_its_exception_with_everything_it_said():
    script = Script(error("RESOURCE_NOT_FOUND", 404, "The project does not exist.",
                          {"id": "proj_x", "resource": "project"}))
    svc, _ = client(script)
    with pytest.raises(NotFound) as raised:
        svc.projects.get("proj_x")
    err = raised.value
    assert (err.code, err.status, err.request_id) == ("RESOURCE_NOT_FOUND", 404, "req-err")
    assert err.message == "The project does not exist." and err.details == {"id": "proj_x", "resource": "project"}
    assert script.requests[0].url.path == "/api/v1/projects/proj_x"
    assert script.requests[0].headers["authorization"] == "Bearer test-key"


def test_a_path_argument_cannot_change_the_path():
    script = Script(envelope(PROJECT))
    svc, _ = client(script)
    svc.projects.get("../api-keys")
    assert script.requests[0].url.raw_path == b"/api/v1/projects/..%2Fapi-keys"


@pytest.mark.parametrize("status, expected", [(401, InvalidCredentials), (403, AccountDisabled)])
def test_on_login_401_reads_as_invalid_credentials_and_403_as_a_disabled_account(status, expected):
    code = "UNAUTHORIZED" if status == 401 else "FORBIDDEN"
    svc, _ = client(Script(error(code, status)), api_key=None, access_token=None)
    with pytest.raises(expected) as raised:
        svc.auth.login("a@example.com", "a long enough password")
    assert raised.value.status == status and raised.value.code == code


@pytest.mark.parametrize("code, status, details, expected", [
    ("CONFLICT", 409, {"id": "l1", "status": "pending"}, "Conflict"),
    ("LOGIN_SESSION_EXPIRED", 409, {"id": "l1", "status": "expired", "reason": "denied"}, "LoginSessionExpired"),
    ("LOGIN_SESSION_CONSUMED", 409, {"id": "l1", "status": "consumed"}, "LoginSessionConsumed"),
    ("UNAUTHORIZED", 401, {"id": "l1", "reason": "code_verifier_mismatch"}, "Unauthorized"),
])
def test_a_refused_device_login_exchange_is_its_error_and_every_state_conflict_is_a_conflict(
        code, status, details, expected):
    import svc_client
    svc, _ = client(Script(error(code, status, "refused", details)), api_key=None)
    with pytest.raises(getattr(svc_client, expected)) as raised:
        svc.device_login.token("l1", "v" * 43)
    assert raised.value.details == details and isinstance(raised.value, Conflict) is (status == 409)


# ---- tokens ----------------------------------------------------------------------------------

class Clock:
    def __init__(self):
        self.now = 1_000_000.0

    def __call__(self):
        return self.now


def test_a_token_counts_as_expired_60_seconds_early_and_the_refresh_callback_replaces_it():
    clock = Clock()
    issued = []

    def refresh():
        issued.append(f"token-{len(issued) + 2}")
        return {"accessToken": issued[-1], "expiresIn": 900}

    script = Script(*[envelope(PROJECT)] * 3)
    svc, _ = client(script, api_key=None, access_token="token-1", expires_in=900, refresh=refresh, clock=clock)
    clock.now += 839   # 61 s left: still good
    svc.projects.get("proj_1")
    clock.now += 2     # 59 s left: expired for the client
    svc.projects.get("proj_1")
    svc.projects.get("proj_1")
    sent = [r.headers["authorization"] for r in script.requests]
    assert sent == ["Bearer token-1", "Bearer token-2", "Bearer token-2"]
    assert issued == ["token-2"]


def test_the_exchange_callback_trades_an_identity_provider_token_at_auth_exchange():
    clock = Clock()
    script = Script(envelope({"accessToken": "svc-jwt", "tokenType": "Bearer", "expiresIn": 900,
                              "user": {"id": "usr_1"}, "tenant": {"id": "ten_1", "name": "A"}}),
                    envelope(PROJECT),
                    envelope({"accessToken": "svc-jwt-2", "tokenType": "Bearer", "expiresIn": 900}),
                    envelope(PROJECT))
    idp_tokens = iter(["clerk-1", "clerk-2"])
    svc, _ = client(script, api_key=None, exchange=lambda: next(idp_tokens), clock=clock)
    svc.projects.get("proj_1")
    clock.now += 900
    svc.projects.get("proj_1")
    exchange, get, exchange_again, get_again = script.requests
    assert exchange.url.path == "/api/v1/auth/exchange" and json.loads(exchange.content) == {"token": "clerk-1"}
    assert "authorization" not in exchange.headers
    assert get.headers["authorization"] == "Bearer svc-jwt"
    assert json.loads(exchange_again.content) == {"token": "clerk-2"}
    assert get_again.headers["authorization"] == "Bearer svc-jwt-2"


def test_login_keeps_the_token_in_memory_and_refreshes_it_with_the_refresh_token():
    clock = Clock()
    pair = {"accessToken": "jwt-1", "tokenType": "Bearer", "expiresIn": 900, "refreshToken": "rt-1",
            "refreshExpiresIn": 2592000, "user": {"id": "usr_1"}, "tenant": {"id": "ten_1", "name": "A"}}
    script = Script(envelope(pair), envelope(PROJECT),
                    envelope({**pair, "accessToken": "jwt-2", "refreshToken": "rt-2"}), envelope(PROJECT),
                    envelope({"loggedOut": True, "sessionId": "ses_1"}))
    svc, _ = client(script, api_key=None, clock=clock)
    svc.auth.login("a@example.com", "a long enough password")
    svc.projects.get("proj_1")
    clock.now += 841
    svc.projects.get("proj_1")
    svc.auth.logout()
    _login, first, refresh, second, logout = script.requests
    assert first.headers["authorization"] == "Bearer jwt-1"
    assert refresh.url.path == "/api/v1/auth/refresh" and json.loads(refresh.content) == {"refreshToken": "rt-1"}
    assert second.headers["authorization"] == "Bearer jwt-2"
    assert json.loads(logout.content) == {"refreshToken": "rt-2"}
    assert svc.credentials.access_token is None and svc._refresh_token is None


def test_a_401_calls_on_unauthorized_and_forgets_the_token():
    seen = []
    script = Script(error("UNAUTHORIZED", 401, "expired"))
    svc, _ = client(script, api_key=None, access_token="jwt", on_unauthorized=seen.append)
    with pytest.raises(Unauthorized):
        svc.projects.list()
    assert [e.code for e in seen] == ["UNAUTHORIZED"]
    assert svc.credentials.access_token is None


def test_a_refused_refresh_ends_the_session_through_on_unauthorized():
    clock = Clock()
    seen = []
    pair = {"accessToken": "jwt-1", "tokenType": "Bearer", "expiresIn": 900, "refreshToken": "rt-1"}
    script = Script(envelope(pair), error("UNAUTHORIZED", 401, "reused", {"reason": "refresh_token_reused"}))
    svc, _ = client(script, api_key=None, clock=clock, on_unauthorized=seen.append)
    svc.auth.login("a@example.com", "a long enough password")
    clock.now += 900
    with pytest.raises(Unauthorized) as raised:
        svc.projects.list()
    assert raised.value.details == {"reason": "refresh_token_reused"} and seen == [raised.value]
    assert svc.credentials.access_token is None and len(script.requests) == 2


def test_without_a_callback_a_token_in_its_last_minute_is_still_sent():
    clock = Clock()
    script = Script(envelope(PROJECT))
    svc, _ = client(script, api_key=None, access_token="jwt", expires_in=30, clock=clock)
    svc.projects.get("proj_1")
    assert script.requests[0].headers["authorization"] == "Bearer jwt"


# ---- retries ---------------------------------------------------------------------------------

def test_429_is_retried_after_retry_after_even_for_a_post():
    script = Script(error("RATE_LIMIT_EXCEEDED", 429, headers={"Retry-After": "2"}), envelope(PROJECT, 201))
    svc, slept = client(script)
    assert svc.projects.create("Apollo").id == "proj_1"
    assert slept == [2.0] and len(script.requests) == 2


def test_a_retry_after_longer_than_allowed_is_raised_not_waited():
    script = Script(error("RATE_LIMIT_EXCEEDED", 429, headers={"Retry-After": "3600"}))
    svc, slept = client(script)
    with pytest.raises(RateLimited) as raised:
        svc.projects.list()
    assert slept == [] and raised.value.retry_after == 3600


def test_429_retries_stop_after_max_retries():
    script = Script(*[error("RATE_LIMIT_EXCEEDED", 429, headers={"Retry-After": "1"})] * 3)
    svc, slept = client(script, retry=RetryPolicy(max_retries=2))
    with pytest.raises(RateLimited):
        svc.projects.list()
    assert slept == [1.0, 1.0] and len(script.requests) == 3


def test_a_connection_failure_is_retried_for_a_get_with_backoff():
    script = Script(httpx.ConnectError("refused"), httpx.ReadTimeout("slow"), envelope(PROJECT))
    svc, slept = client(script, retry=RetryPolicy(backoff=0.5))
    assert svc.projects.get("proj_1").name == "Apollo"
    assert len(slept) == 2 and 0 <= slept[0] <= 0.5 and 0 <= slept[1] <= 1.0


def test_connection_failures_are_retried_3_times_whatever_max_retries_allows():
    script = Script(*[httpx.ConnectError("refused")] * 5)
    svc, slept = client(script)
    with pytest.raises(ConnectionFailed):
        svc.projects.list()
    assert RetryPolicy().max_retries == 10 and len(script.requests) == 4 and len(slept) == 3


def test_a_tenant_moves_write_pause_is_ridden_out_with_the_defaults():
    """Writes refused with 503 tenant_moving and Retry-After 2 for about 10 s: five refusals."""
    moving = error("SERVICE_UNAVAILABLE", 503, "moving", {"reason": "tenant_moving"}, {"Retry-After": "2"})
    script = Script(*[moving] * 5, envelope(PROJECT))
    svc, slept = client(script)
    assert svc.projects.update("proj_1", name="x").id == "proj_1"
    assert slept == [2.0] * 5 and len(script.requests) == 6


def test_a_connection_failure_is_not_retried_for_a_post_without_idempotency_key():
    script = Script(httpx.ReadError("reset"), envelope(PROJECT, 201))
    svc, slept = client(script)
    with pytest.raises(ConnectionFailed):
        svc.projects.create("Apollo")
    assert len(script.requests) == 1 and slept == []


PURCHASE = {"id": "pur_1", "status": "succeeded", "credits": 10, "microCredits": 10_000_000, "amount": 1000,
            "currency": "usd", "checkoutUrl": None, "invoiceId": "inv_1", "provider": "test", "testMode": True,
            "created_at": "t", "settled_at": "t"}


def test_billing_posts_carry_one_idempotency_key_kept_across_retries():
    script = Script(httpx.ReadError("reset"), envelope(PURCHASE, 201),
                    envelope({"plan": "growth", "status": "active"}, 201))
    svc, slept = client(script)
    assert svc.billing.purchase_credits(credits=10).status == "succeeded"
    first, retried = script.requests
    key = first.headers["idempotency-key"]
    assert str(uuid.UUID(key)) == key and retried.headers["idempotency-key"] == key and len(slept) == 1
    assert json.loads(first.content) == {"credits": 10}
    svc.billing.create_subscription("growth", idempotency_key="mine")
    assert script.requests[-1].headers["idempotency-key"] == "mine"
    assert json.loads(script.requests[-1].content) == {"plan": "growth"}


def test_a_retry_that_finds_the_first_request_in_progress_waits_for_its_answer():
    script = Script(httpx.ReadTimeout("slow"), error("REQUEST_IN_PROGRESS", 409), envelope(PURCHASE, 201))
    svc, slept = client(script)
    assert svc.billing.purchase_credits(pack="credits_10").id == "pur_1"
    assert len({r.headers["idempotency-key"] for r in script.requests}) == 1 and len(slept) == 2
    plain = Script(error("CONFLICT", 409))
    svc, slept = client(plain)
    with pytest.raises(Conflict):
        svc.projects.update("proj_1", name="x")
    assert slept == [] and len(plain.requests) == 1


def test_a_reused_idempotency_key_is_its_own_error():
    svc, _ = client(Script(error("IDEMPOTENCY_KEY_REUSED", 422)))
    with pytest.raises(IdempotencyKeyReused):
        svc.billing.redeem_gift_card("GC-AAAA-BBBB", idempotency_key="k")


# ---- bodies, models, pages ---------------------------------------------------------------------

def test_left_out_arguments_are_not_sent_and_null_sends_json_null():
    script = Script(envelope(PROJECT))
    svc, _ = client(script)
    svc.projects.update("proj_1", description=NULL)
    assert json.loads(script.requests[0].content) == {"description": None}


def test_models_use_the_api_names_and_keep_unknown_fields():
    agent = Agent.model_validate({"id": "agt_1", "name": "N", "systemPrompt": "p", "created_at": "t",
                                  "config": {"autonomyLevel": "suggest", "stepLimit": 8}, "newField": 1})
    assert agent.system_prompt == "p" and agent.config.step_limit == 8
    assert agent.raw()["systemPrompt"] == "p" and agent.raw()["created_at"] == "t" and agent.raw()["newField"] == 1


def test_iter_follows_next_cursor_through_every_page():
    pages = [envelope({"items": [{**PROJECT, "id": f"proj_{i}"} for i in ids], "nextCursor": cursor})
             for ids, cursor in (((1, 2), "c1"), ((3, 4), "c2"), ((5,), None))]
    script = Script(*pages)
    svc, _ = client(script)
    assert [p.id for p in svc.projects.iter(limit=2)] == [f"proj_{i}" for i in range(1, 6)]
    assert [r.url.params.get("cursor") for r in script.requests] == [None, "c1", "c2"]
    assert all(r.url.params["limit"] == "2" for r in script.requests)


# ---- chat streaming ----------------------------------------------------------------------------

def sse(*events, status=200):
    body = "".join(f"id: {i}\nevent: {name}\ndata: {json.dumps(data)}\n\n" for i, name, data in events)
    return httpx.Response(status, content=body.encode(), headers={"Content-Type": "text/event-stream"})


TURN = [(7, "message_start", {"messageId": "msg_1", "role": "assistant", "model": "offline", "offline": True}),
        (8, "content_delta", {"messageId": "msg_1", "text": "Hello"}),
        (9, "content_delta", {"messageId": "msg_1", "text": " world"}),
        (10, "usage", {"messageId": "msg_1", "inputTokens": 3, "outputTokens": 2, "cacheReadTokens": 0,
                       "cacheWriteTokens": 0, "microCredits": 5, "estimated": True}),
        (11, "shiny_new_event", {"messageId": "msg_1", "x": 1}),
        (12, "message_stop", {"messageId": "msg_1", "stopReason": "end_turn"}),
        (13, "done", {"messageId": "msg_1", "status": "completed"})]


class BreaksMidway(httpx.SyncByteStream):
    """Sends some events, then the connection breaks."""

    def __init__(self, body: bytes):
        self.body = body

    def __iter__(self):
        yield self.body
        raise httpx.ReadError("connection reset by peer")


def test_a_broken_stream_resumes_from_the_last_event_id_without_gaps_or_repeats():
    breaking = httpx.Response(200, headers={"Content-Type": "text/event-stream"},
                              stream=BreaksMidway(sse(*TURN[:3]).content))
    script = Script(breaking, httpx.ConnectError("refused"), sse(*TURN[3:]))
    svc, slept = client(script)
    events = list(svc.chat.stream("chs_1"))
    assert [e.id for e in events] == list(range(7, 14))
    assert isinstance(events[0], MessageStart) and events[0].offline is True
    assert "".join(e.text for e in events if isinstance(e, ContentDelta)) == "Hello world"
    assert isinstance(events[3], Usage) and events[3].micro_credits == 5
    assert isinstance(events[4], UnknownEvent) and events[4].name == "shiny_new_event"
    assert isinstance(events[-1], Done) and events[-1].status == "completed"
    first, broken, resumed = script.requests
    assert "last-event-id" not in first.headers
    assert broken.headers["last-event-id"] == "9" and resumed.headers["last-event-id"] == "9"
    assert first.headers["accept"] == "text/event-stream" and len(slept) == 2


def test_nothing_to_stream_is_an_empty_iterator_and_a_stream_that_never_finishes_gives_up():
    svc, _ = client(Script(httpx.Response(204)))
    assert list(svc.chat.stream("chs_1", last_event_id=13)) == []
    svc, _ = client(Script(*[sse(*TURN[:2])] + [sse()] * 3))
    with pytest.raises(StreamInterrupted):
        list(svc.chat.stream("chs_1", max_attempts=2))


def test_the_async_client_streams_and_pages_the_same_way():
    pages = Script(envelope({"items": [PROJECT], "nextCursor": "c1"}),
                   envelope({"items": [{**PROJECT, "id": "proj_2"}], "nextCursor": None}))
    stream = Script(sse(*TURN[:4]), sse(*TURN[4:]))

    async def sleep(_seconds):
        return None

    async def main():
        async with AsyncClient(BASE, api_key="k", transport=httpx.MockTransport(pages), sleep=sleep) as svc:
            ids = [p.id async for p in svc.projects.iter()]
        async with AsyncClient(BASE, api_key="k", transport=httpx.MockTransport(stream), sleep=sleep) as svc:
            events = [e async for e in svc.chat.stream("chs_1")]
        return ids, events

    ids, events = asyncio.run(main())
    assert ids == ["proj_1", "proj_2"]
    assert [e.id for e in events] == list(range(7, 14))
    assert stream.requests[1].headers["last-event-id"] == "10"


def test_a_failure_of_the_stream_itself_is_resumed_not_reported_but_a_turns_error_is():
    failed_stream = httpx.Response(200, headers={"Content-Type": "text/event-stream"}, content=(
        sse(*TURN[:2]).content + b'event: error\ndata: {"code": "INTERNAL_ERROR", "message": "stream"}\n\n'))
    turn_error = (12, "error", {"messageId": "msg_1", "code": "MODEL_THROTTLED", "message": "busy"})
    script = Script(failed_stream, sse(TURN[2], turn_error, (13, "done", {"messageId": "msg_1", "status": "failed"})))
    svc, _ = client(script)
    events = list(svc.chat.stream("chs_1"))
    assert [e.event for e in events] == ["message_start", "content_delta", "content_delta", "error", "done"]
    assert events[3].code == "MODEL_THROTTLED" and events[-1].status == "failed"
    assert script.requests[1].headers["last-event-id"] == "8"


def test_credentials_and_tokens_never_show_in_a_repr():
    svc, _ = client(Script(), api_key="value-of-a-key")
    grant = TokenGrant.model_validate({"accessToken": "value-of-a-token", "refreshToken": "value-of-a-refresh"})
    shown = repr(svc.credentials) + repr(grant)
    assert "value-of" not in shown


@pytest.mark.parametrize("answer, message, denied", [
    ({"status": "expired", "reason": "denied"}, "the login was denied in the browser", True),
    ({"status": "expired", "reason": "timed_out"}, "the login expired (10 minutes) before it was approved", False),
    ({"status": "expired"}, "the login expired (10 minutes) before it was approved", False),
    ({"status": "consumed"}, "the login was already used", False),
])
def test_device_login_polling_stops_on_the_specs_end_states_and_names_a_denial(answer, message, denied):
    from svc_client.device import DeviceLogin, DeviceLoginFailed, wait_for_approval
    from svc_client.models import DeviceLoginStarted

    script = Script(envelope({"loginId": "l1", "status": "pending"}), envelope({"loginId": "l1", **answer}))
    svc, _ = client(script)
    login = DeviceLogin(started=DeviceLoginStarted(login_id="l1", auth_url="https://x", verification_code="ABCD-EFGH"))
    polls, sleeps = [], []
    with pytest.raises(DeviceLoginFailed) as raised:
        wait_for_approval(svc, login, sleep=sleeps.append, on_poll=polls.append)
    assert str(raised.value) == message and raised.value.denied is denied
    assert polls == ["pending", answer["status"]] and len(sleeps) == 1 and len(script.requests) == 2


# ---- cells -----------------------------------------------------------------------------------

def wrong_region(base_url, region="eu-central-1"):
    return error("WRONG_REGION", 421, "elsewhere", {"region": region, "baseUrl": base_url, "tenantId": "ten_1"})


def test_a_421_wrong_region_is_sent_again_to_the_named_cell_which_serves_every_later_call():
    moved: list[str] = []
    script = Script(wrong_region("http://eu.svc.test"), envelope(PROJECT, 201), envelope(PROJECT))
    svc, _ = client(script, on_moved=moved.append)
    svc.projects.create(name="Apollo", language="python")
    svc.projects.get("proj_1")
    first, again, later = script.requests
    assert (first.url.host, again.url.host, later.url.host) == ("svc.test", "eu.svc.test", "eu.svc.test")
    assert again.url.path == first.url.path == "/api/v1/projects" and later.url.path == "/api/v1/projects/proj_1"
    assert again.content == first.content and json.loads(again.content)["name"] == "Apollo"
    assert again.headers["authorization"] == "Bearer test-key" and again.headers["host"] == "eu.svc.test"
    assert again.headers.get("idempotency-key") == first.headers.get("idempotency-key")
    assert moved == ["http://eu.svc.test"] and svc.base_url == "http://eu.svc.test"


def test_a_base_with_a_path_keeps_the_requests_path_below_it():
    script = Script(wrong_region("https://eu.svc.test/v1"), envelope(PROJECT))
    svc = Client("https://svc.test/prod", api_key="k", transport=httpx.MockTransport(script))
    svc.projects.get("proj_1")
    assert str(script.requests[1].url) == "https://eu.svc.test/v1/api/v1/projects/proj_1"


def test_a_chain_of_421s_is_followed_to_the_cell_that_serves():
    """A tenant that has just moved: the entry's directory still names the old home, which names the new."""
    moved: list[str] = []
    script = Script(wrong_region("http://eu.svc.test"), wrong_region("http://ap.svc.test", "ap-northeast-1"),
                    envelope(PROJECT), envelope(PROJECT))
    svc, _ = client(script, on_moved=moved.append)
    svc.projects.get("proj_1")
    svc.projects.get("proj_1")
    assert [r.url.host for r in script.requests] == ["svc.test", "eu.svc.test", "ap.svc.test", "ap.svc.test"]
    assert moved == ["http://ap.svc.test"]   # the cell that served, once


def test_with_max_cell_follows_0_a_421_is_not_followed_but_raised_as_cell_unreachable():
    script = Script(wrong_region("http://eu.svc.test"))
    svc, _ = client(script, max_cell_follows=0)
    with pytest.raises(CellUnreachable) as raised:
        svc.projects.get("proj_1")
    assert (raised.value.base_url, raised.value.region, raised.value.reason) == (
        "http://eu.svc.test", "eu-central-1", "follow_limit")
    assert len(script.requests) == 1 and svc.base_url == BASE


@pytest.mark.parametrize("answers", [
    [error("WRONG_REGION", 421, "no url", {"region": "eu-central-1"})],
    [error("MISDIRECTED", 421, "another code", {"baseUrl": "http://x.svc.test"})],
], ids=["no-base-url", "other-code"])
def test_a_421_is_followed_only_when_it_names_a_cell(answers):
    from svc_client import ApiError
    script = Script(*answers)
    svc, _ = client(script)
    with pytest.raises(ApiError) as raised:
        svc.projects.get("proj_1")
    assert raised.value.status == 421 and len(script.requests) == len(answers)


def test_https_is_never_given_up_for_http_by_a_421():
    from svc_client import ApiError
    script = Script(wrong_region("http://eu.svc.test"))
    svc = Client("https://svc.test", api_key="k", transport=httpx.MockTransport(script))
    with pytest.raises(ApiError):
        svc.projects.get("proj_1")
    assert len(script.requests) == 1 and svc.base_url == "https://svc.test"


def test_the_async_client_follows_a_421_the_same_way():
    script = Script(wrong_region("http://eu.svc.test"), envelope(PROJECT))

    async def run():
        async with AsyncClient(BASE, api_key="k", transport=httpx.MockTransport(script)) as svc:
            await svc.projects.get("proj_1")
            return svc.base_url

    assert asyncio.run(run()) == "http://eu.svc.test"
    assert [r.url.host for r in script.requests] == ["svc.test", "eu.svc.test"]


def test_a_followed_cell_that_cannot_be_reached_sends_the_request_back_to_the_entry_which_names_the_new_home():
    """The tenant's cell was lost and the tenant failed over: the entry cell (a global name, or the
    first URL given) answers 421 to the secondary, which serves."""
    moved: list[str] = []
    script = Script(wrong_region("http://eu.svc.test"), envelope(PROJECT),                  # followed to eu
                    httpx.ConnectError("refused"),                                          # eu is gone
                    wrong_region("http://ap.svc.test", "ap-northeast-1"), envelope(PROJECT))  # the entry knows
    svc, slept = client(script, on_moved=moved.append)
    svc.projects.get("proj_1")
    svc.projects.create(name="Apollo", language="python")
    assert [r.url.host for r in script.requests] == ["svc.test", "eu.svc.test", "eu.svc.test", "svc.test",
                                                     "ap.svc.test"]
    assert script.requests[-1].content == script.requests[2].content   # the same create, sent once served
    assert moved == ["http://eu.svc.test", "http://ap.svc.test"] and svc.base_url == "http://ap.svc.test"
    assert slept == []


def test_an_entry_that_cannot_be_reached_is_a_connection_failure_not_a_loop():
    script = Script(httpx.ConnectError("refused"))
    svc, _ = client(script, retry=RetryPolicy(max_retries=0))
    with pytest.raises(ConnectionFailed):
        svc.projects.create(name="Apollo", language="python")
    assert len(script.requests) == 1


def test_the_async_client_goes_back_to_the_entry_the_same_way():
    script = Script(wrong_region("http://eu.svc.test"), envelope(PROJECT), httpx.ConnectError("refused"),
                    wrong_region("http://ap.svc.test", "ap-northeast-1"), envelope(PROJECT))

    async def run():
        async with AsyncClient(BASE, api_key="k", transport=httpx.MockTransport(script)) as svc:
            await svc.projects.get("proj_1")
            await svc.projects.get("proj_1")
            return svc.base_url

    assert asyncio.run(run()) == "http://ap.svc.test"
    assert [r.url.host for r in script.requests] == ["svc.test", "eu.svc.test", "eu.svc.test", "svc.test",
                                                     "ap.svc.test"]


def test_a_cell_a_421_named_that_cannot_be_connected_to_is_never_left_for_the_cell_that_named_it():
    """The tenant's home is down and not failed over yet: the entry names it again and again. The
    request is not sent back there (which only loops), and a create is not sent again at all."""
    script = Script(wrong_region("http://eu.svc.test"), httpx.ConnectError("refused"))
    svc, slept = client(script)
    with pytest.raises(CellUnreachable) as raised:
        svc.projects.create(name="Apollo", language="python")
    assert (raised.value.base_url, raised.value.region, raised.value.reason) == (
        "http://eu.svc.test", "eu-central-1", "unreachable")
    assert raised.value.visited == [BASE, "http://eu.svc.test"] and "http://eu.svc.test" in str(raised.value)
    assert isinstance(raised.value, ConnectionFailed) and slept == [] and svc.base_url == BASE


def test_the_kept_cell_lost_and_the_entry_naming_it_again_ends_at_once():
    script = Script(wrong_region("http://eu.svc.test"), envelope(PROJECT),     # followed to eu, kept
                    httpx.ConnectError("refused"), wrong_region("http://eu.svc.test"))   # eu gone, entry names it
    svc, slept = client(script)
    svc.projects.get("proj_1")
    with pytest.raises(CellUnreachable) as raised:
        svc.projects.get("proj_1")
    assert raised.value.base_url == "http://eu.svc.test" and raised.value.reason == "unreachable"
    assert [r.url.host for r in script.requests] == ["svc.test", "eu.svc.test", "eu.svc.test", "svc.test"]
    assert slept == []
