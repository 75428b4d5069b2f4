"""The clients: `Client` (sync) and `AsyncClient`, on httpx, with the same resources.

    from svc_client import Client
    with Client() as svc:                      # SVC_BASE_URL and SVC_API_KEY from the environment
        project = svc.projects.create(name="Apollo")
        for p in svc.projects.iter():          # every page
            print(p.id, p.name)

`AsyncClient` has the same resources; each call returns an awaitable of the same result, and the
iterators (`iter`, `chat.stream`) are async iterators.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
from httpx_sse import EventSource

from svc_client import resources
from svc_client._core import (
    API_PREFIX,
    DEFAULT_MAX_CELL_FOLLOWS,
    SIGN_IN,
    TENANT,
    Credentials,
    RetryPolicy,
    Route,
    TokenSource,
    base_url_from,
    check_unauthorized,
    clean,
    decode,
    named_cell,
    parse,
    request_headers,
)
from svc_client.errors import (
    ApiError,
    CellUnreachable,
    ConnectionFailed,
    Forbidden,
    Unauthorized,
    as_login_error,
)
from svc_client.models import Page, TokenGrant
from svc_client.streaming import ChatEvent, ResumeState

STREAM_READ_TIMEOUT = 120.0   # an answer may pause between events; the server ends idle streams itself


class _Base:
    """Settings and the resources, shared by both clients."""

    def __init__(self, base_url: str | None = None, *, api_key: str | None = None,
                 access_token: str | None = None, expires_in: int | None = None,
                 refresh: TokenSource | None = None, exchange: TokenSource | None = None,
                 on_unauthorized: Callable[[ApiError], Any] | None = None, timeout: float = 30.0,
                 retry: RetryPolicy | None = None, headers: dict[str, str] | None = None,
                 clock: Callable[[], float] = time.time, on_moved: Callable[[str], Any] | None = None,
                 max_cell_follows: int = DEFAULT_MAX_CELL_FOLLOWS) -> None:
        """base_url: the service root (SVC_BASE_URL, else http://127.0.0.1:3000).
        api_key: an API key (SVC_API_KEY when no credential is given at all).
        access_token / expires_in: a service JWT, kept in memory only.
        refresh: a callback returning a new grant ({accessToken, expiresIn}) when the token expires.
        exchange: a callback returning an identity provider's token, exchanged at /auth/exchange
        for a service token whenever one is needed (the spec's exchange callback).
        on_unauthorized: called with the error on every 401, before it is raised.
        on_moved: called with the tenant's new base URL when a cell a 421 WRONG_REGION named has
        served a call of the tenant: every later call goes there (`base_url`). Sign-in calls keep the
        account's cell apart (`account_url`; see TENANT, ACCOUNT, SIGN_IN in _core).
        max_cell_follows: how many times one call is sent on to another cell (each 421 followed, and
        the way back to the base URL given here when the kept cell cannot be connected to at all:
        its region lost, the tenant failed over, that cell then naming the tenant's new one). Past
        it, or when a cell a 421 named gives no answer, CellUnreachable is raised."""
        self.base_url = base_url_from(base_url)   # the tenant's cell
        self.entry_url = self.base_url
        self.account_url = self.base_url          # the account's cell
        if max_cell_follows < 0:
            raise ValueError("max_cell_follows is 0 or more")
        self.max_cell_follows = max_cell_follows
        if api_key is None and access_token is None and refresh is None and exchange is None:
            api_key = os.environ.get("SVC_API_KEY") or None
            access_token = os.environ.get("SVC_ACCESS_TOKEN") or None
        self.credentials = Credentials(api_key=api_key, refresh=refresh, clock=clock)
        if access_token:
            self.credentials.set_grant(TokenGrant(access_token=access_token, expires_in=expires_in))
        if exchange is not None:
            self.credentials.refresh = lambda: self._exchange_with(exchange)
        self.on_unauthorized = on_unauthorized
        self.on_moved = on_moved
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self._extra_headers = dict(headers or {})
        self._refresh_token: str | None = None
        self.auth = resources.Auth(self)
        self.device_login = resources.DeviceLogin(self)
        self.projects = resources.Projects(self)
        self.agents = resources.Agents(self)
        self.chat = resources.Chat(self)
        self.tenants = resources.Tenants(self)
        self.regions = resources.Regions(self)
        self.webhooks = resources.Webhooks(self)
        self.events = resources.Events(self)
        self.billing = resources.Billing(self)
        self.secrets = resources.Secrets(self)
        self.api_keys = resources.ApiKeys(self)
        self.oauth = resources.OAuth(self)
        self.members = resources.Members(self)
        self.invitations = resources.Invitations(self)
        self.audit = resources.AuditLog(self)

    # ---- what the resources call ------------------------------------------------------------

    def _build(self, http: httpx.Client | httpx.AsyncClient, method: str, path: str, *, json: Any = None,
               params: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
               authenticated: bool = True, cell: str = TENANT) -> httpx.Request:
        all_headers = request_headers(self.credentials, {**self._extra_headers, **(headers or {})},
                                      authenticated=authenticated)
        body = clean(json) if isinstance(json, dict) else json
        return http.build_request(method, self._base_of(cell) + API_PREFIX + path, json=body, params=clean(params),
                                  headers=all_headers)

    def _base_of(self, cell: str) -> str:
        return self.base_url if cell == TENANT else self.account_url

    def _route(self, cell: str) -> Route:
        return Route(self._base_of(cell), self.entry_url, self.max_cell_follows)

    def _arrived(self, route: Route, cell: str) -> None:
        """A cell answered (not a 421 followed): keep it for the calls of its kind."""
        if route.base == route.start:
            return
        if cell != TENANT:
            self.account_url = route.base
        seeded = cell == SIGN_IN and self.base_url == self.entry_url
        if (cell == TENANT or seeded) and route.base != self.base_url:
            self.base_url = route.base
            if self.on_moved is not None:
                self.on_moved(route.base)

    def _failed(self, error: ApiError, login: bool) -> ApiError:
        if login:
            return as_login_error(error)
        if error.status == 401:
            check_unauthorized(error, self.credentials)
            if self.on_unauthorized is not None:
                self.on_unauthorized(error)
        return error

    def _result(self, response: httpx.Response, model: Any, login: bool, then: Callable[[Any], Any] | None) -> Any:
        """The answer's data as `model`, or the error it carries raised."""
        try:
            data = decode(response)
        except ApiError as error:
            raise self._failed(error, login) from None
        result = parse(model, data)
        if then is not None:
            then(result)
        return result

    def _stream_request(self, http: httpx.Client | httpx.AsyncClient, path: str, state: ResumeState) -> httpx.Request:
        request = self._build(http, "GET", path, headers=state.headers())
        request.extensions["timeout"] = httpx.Timeout(self.timeout, read=STREAM_READ_TIMEOUT).as_dict()
        return request

    def _stream_opened(self, response: httpx.Response) -> bool:
        """False when there is nothing to stream (204); raises the error of a refused stream
        (its body read already)."""
        if response.status_code == 204:
            return False
        if not response.is_success:
            try:
                decode(response)
            except ApiError as error:
                raise self._failed(error, False) from None
        return True

    def _renewal_failed(self, error: ApiError) -> ApiError:
        """The refresh or exchange was refused: the session is over, as a 401 would say."""
        self.credentials.clear()
        if self.on_unauthorized is not None:
            self.on_unauthorized(error)
        return error

    def _signed_in(self, grant: TokenGrant) -> None:
        """After login or refresh: the access token in memory, and this client's own refresh."""
        self.credentials.api_key = None
        self.credentials.set_grant(grant)
        if grant.refresh_token:
            self._refresh_token = grant.refresh_token
            self.credentials.refresh = self._refresh_with_token

    def _signed_out(self, _result: Any = None) -> None:
        self.credentials.clear()
        self._refresh_token = None
        self.credentials.refresh = None

    def _refresh_with_token(self) -> Any:
        return self.auth.refresh()

    def _exchange_with(self, exchange: TokenSource) -> Any:
        raise NotImplementedError


class Client(_Base):
    """The synchronous client."""

    def __init__(self, base_url: str | None = None, *, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep, **options: Any) -> None:
        super().__init__(base_url, **options)
        self._sleep = sleep
        self._http = httpx.Client(base_url=self.base_url, timeout=self.timeout, transport=transport)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _ensure_token(self) -> None:
        if self.credentials.needs_refresh():
            try:
                grant = self.credentials.refresh()  # type: ignore[misc]
            except (Unauthorized, Forbidden) as error:
                raise self._renewal_failed(error) from None
            if grant is not None and grant is not True:
                self.credentials.set_grant(grant)

    def _exchange_with(self, exchange: TokenSource) -> Any:
        return self.auth.exchange(exchange())

    def _send(self, request: httpx.Request, *, stream: bool = False, cell: str = TENANT) -> httpx.Response:
        route, started, attempt, failures = self._route(cell), time.monotonic(), 0, 0
        while True:
            try:
                response = self._http.send(request, stream=stream)
            except httpx.TransportError as exc:
                entry = route.back_to_entry(request, exc)
                if entry is not None:   # the kept cell is gone: the entry says where the tenant is now
                    request = entry
                    continue
                delay = self.retry.delay_after_failure(attempt, request, time.monotonic() - started, failures)
                if delay is None:
                    raise route.unreachable(request, exc) or ConnectionFailed(
                        f"{request.method} {request.url}: {type(exc).__name__}: {exc}") from exc
                failures += 1
            else:
                if response.status_code in (421, 503):
                    response.read()   # what the routing and the retry read (a stream's too)
                named = named_cell(response)
                if named is not None:
                    response.close()
                    request = route.follow(request, *named)
                    continue
                self._arrived(route, cell)
                delay = self.retry.delay_after_response(attempt, response, time.monotonic() - started)
                if delay is None:
                    return response
                response.close()
            self._sleep(delay)
            attempt += 1

    def _call(self, method: str, path: str, *, model: Any = None, json: Any = None,
              params: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
              authenticated: bool = True, login: bool = False, then: Callable[[Any], Any] | None = None,
              cell: str = TENANT) -> Any:
        if authenticated:
            self._ensure_token()
        request = self._build(self._http, method, path, json=json, params=params, headers=headers,
                              authenticated=authenticated, cell=cell)
        return self._result(self._send(request, cell=cell), model, login, then)

    def _paginate(self, path: str, model: Any, params: dict[str, Any] | None = None) -> Iterator[Any]:
        cursor: str | None = None
        while True:
            page = self._call("GET", path, model=Page[model], params={**(params or {}), "cursor": cursor})
            yield from page.items
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    def _stream(self, path: str, last_event_id: int | None, max_attempts: int) -> Iterator[ChatEvent]:
        state = ResumeState(last_id=last_event_id, max_attempts=max_attempts)
        while True:
            self._ensure_token()
            try:
                response = self._send(self._stream_request(self._http, path, state), stream=True)
                try:
                    if not response.is_success:
                        response.read()
                    if not self._stream_opened(response):
                        return
                    for sse in EventSource(response).iter_sse():
                        event, failed = state.take(sse)
                        if failed:
                            break  # the server's stream failed: resume after the last id
                        if event is not None:
                            yield event
                finally:
                    response.close()
            except CellUnreachable:
                raise   # the tenant's cell gave no answer, or the cells kept sending it on: not a broken stream
            except (httpx.TransportError, ConnectionFailed) as exc:
                self._sleep(state.broken(exc))
                continue
            if state.finished:
                return
            self._sleep(state.broken(None))


class AsyncClient(_Base):
    """The asynchronous client: the same resources; calls return awaitables."""

    def __init__(self, base_url: str | None = None, *, transport: httpx.AsyncBaseTransport | None = None,
                 sleep: Callable[[float], Any] = asyncio.sleep, **options: Any) -> None:
        super().__init__(base_url, **options)
        self._sleep = sleep
        self._http = httpx.AsyncClient(base_url=self.base_url, timeout=self.timeout, transport=transport)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    async def _ensure_token(self) -> None:
        if self.credentials.needs_refresh():
            try:
                grant = self.credentials.refresh()  # type: ignore[misc]
                if inspect.isawaitable(grant):
                    grant = await grant
            except (Unauthorized, Forbidden) as error:
                raise self._renewal_failed(error) from None
            if grant is not None and grant is not True:
                self.credentials.set_grant(grant)

    async def _exchange_with(self, exchange: TokenSource) -> Any:
        token = exchange()
        if inspect.isawaitable(token):
            token = await token
        return await self.auth.exchange(token)

    async def _send(self, request: httpx.Request, *, stream: bool = False, cell: str = TENANT) -> httpx.Response:
        route, started, attempt, failures = self._route(cell), time.monotonic(), 0, 0
        while True:
            try:
                response = await self._http.send(request, stream=stream)
            except httpx.TransportError as exc:
                entry = route.back_to_entry(request, exc)
                if entry is not None:   # the kept cell is gone: the entry says where the tenant is now
                    request = entry
                    continue
                delay = self.retry.delay_after_failure(attempt, request, time.monotonic() - started, failures)
                if delay is None:
                    raise route.unreachable(request, exc) or ConnectionFailed(
                        f"{request.method} {request.url}: {type(exc).__name__}: {exc}") from exc
                failures += 1
            else:
                if response.status_code in (421, 503):
                    await response.aread()   # what the routing and the retry read (a stream's too)
                named = named_cell(response)
                if named is not None:
                    await response.aclose()
                    request = route.follow(request, *named)
                    continue
                self._arrived(route, cell)
                delay = self.retry.delay_after_response(attempt, response, time.monotonic() - started)
                if delay is None:
                    return response
                await response.aclose()
            await self._sleep(delay)
            attempt += 1

    async def _call(self, method: str, path: str, *, model: Any = None, json: Any = None,
                    params: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
                    authenticated: bool = True, login: bool = False,
                    then: Callable[[Any], Any] | None = None, cell: str = TENANT) -> Any:
        if authenticated:
            await self._ensure_token()
        request = self._build(self._http, method, path, json=json, params=params, headers=headers,
                              authenticated=authenticated, cell=cell)
        return self._result(await self._send(request, cell=cell), model, login, then)

    async def _paginate(self, path: str, model: Any, params: dict[str, Any] | None = None) -> AsyncIterator[Any]:
        cursor: str | None = None
        while True:
            page = await self._call("GET", path, model=Page[model], params={**(params or {}), "cursor": cursor})
            for item in page.items:
                yield item
            if not page.next_cursor:
                return
            cursor = page.next_cursor

    async def _stream(self, path: str, last_event_id: int | None, max_attempts: int) -> AsyncIterator[ChatEvent]:
        state = ResumeState(last_id=last_event_id, max_attempts=max_attempts)
        while True:
            await self._ensure_token()
            try:
                response = await self._send(self._stream_request(self._http, path, state), stream=True)
                try:
                    if not response.is_success:
                        await response.aread()
                    if not self._stream_opened(response):
                        return
                    async for sse in EventSource(response).aiter_sse():
                        event, failed = state.take(sse)
                        if failed:
                            break  # the server's stream failed: resume after the last id
                        if event is not None:
                            yield event
                finally:
                    await response.aclose()
            except CellUnreachable:
                raise   # the tenant's cell gave no answer, or the cells kept sending it on: not a broken stream
            except (httpx.TransportError, ConnectionFailed) as exc:
                await self._sleep(state.broken(exc))
                continue
            if state.finished:
                return
            await self._sleep(state.broken(None))
