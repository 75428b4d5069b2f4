"""What every command shares: the state (profile, base URL, credential, output), the output
helpers, errors as a message per code and an exit status, and the list and one-call command makers."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from svc_client._core import DEFAULT_BASE_URL, base_url_from
from svc_client.client import Client
from svc_client.errors import ApiError, ConnectionFailed, StreamInterrupted, SvcError
from svc_client.models import ApiModel, Page
from svc_client.store import (
    CredentialStore,
    profile_name,
    profile_settings,
)

# What to do about each error code, shown under the service's message.
HINTS = {
    "UNAUTHORIZED": "Your credential is missing, expired or revoked: run `svc login` (or set SVC_API_KEY).",
    "FORBIDDEN": "Your credential lacks the scope or your plan lacks the feature (see the details).",
    "RESOURCE_NOT_FOUND": "Nothing with that id in your tenant: check it with a list command.",
    "VALIDATION_ERROR": "The request was refused as invalid: see the fields named above.",
    "METHOD_NOT_ALLOWED": "This client and the service disagree on the API: update the client.",
    "CONFLICT": ("It conflicts with what is there now (changed meanwhile, a name already used, a limit reached, "
                 "a state that forbids this): see the details, read it again and retry."),
    "LOGIN_SESSION_CONSUMED": "That login was already used: run `svc login` again.",
    "LOGIN_SESSION_EXPIRED": "The login expired (10 minutes): run `svc login` again.",
    "PAYMENT_REQUIRED": "Your tenant has no credit left: buy credits or redeem a gift card.",
    "IDEMPOTENCY_KEY_REUSED": "That Idempotency-Key was used for another request: use a new one.",
    "REQUEST_IN_PROGRESS": "The same request is still being served: wait a moment and retry it.",
    "PAYLOAD_TOO_LARGE": "The request is over 256 KiB: send less.",
    "UNSUPPORTED_MEDIA_TYPE": "The service expects JSON bodies.",
    "RATE_LIMIT_EXCEEDED": "Too many requests: wait a minute and try again.",
    "MODEL_THROTTLED": "The model is busy: try again in a little while.",
    "MODEL_UNAVAILABLE": "The model could not answer: try again later.",
    "PROVIDER_ERROR": "The OAuth provider refused or did not answer: start the connection again.",
    "INTERNAL_ERROR": "The service failed: try again; report the request id if it persists.",
}
EXIT_CODES = {"UNAUTHORIZED": 3, "FORBIDDEN": 3, "RESOURCE_NOT_FOUND": 4, "CONFLICT": 5, "RATE_LIMIT_EXCEEDED": 6}


class State:
    def __init__(self, base_url: str | None, profile: str | None, output: str) -> None:
        self.profile = profile_name(profile)
        self.output = output
        self._base_url = base_url
        self._store: CredentialStore | None = None
        self.out = Console(highlight=False, soft_wrap=True)
        self.err = Console(stderr=True, highlight=False, soft_wrap=True)

    @property
    def json(self) -> bool:
        return self.output == "json"

    @property
    def store(self) -> CredentialStore:
        if self._store is None:
            try:
                self._store = CredentialStore()
            except RuntimeError as error:
                raise click.ClickException(str(error)) from None
        return self._store

    def stored(self) -> dict[str, Any] | None:
        return self.store.get(self.profile)

    @property
    def base_url(self) -> str:
        """--base-url, else SVC_BASE_URL, else the profile's, else the stored login's, else the local stack."""
        explicit = self._base_url or os.environ.get("SVC_BASE_URL") or profile_settings(self.profile).get("baseUrl")
        if explicit:
            return base_url_from(explicit)
        if os.environ.get("SVC_API_KEY"):
            return DEFAULT_BASE_URL
        return base_url_from((self.stored() or {}).get("baseUrl"))

    def client(self, *, authenticated: bool = True) -> Client:
        if not authenticated:
            return Client(self.base_url, api_key="")
        key = os.environ.get("SVC_API_KEY")
        if not key:
            stored = self.stored()
            if not stored:
                raise click.ClickException(f"Not logged in (profile {self.profile}): run `svc login`, "
                                           "or set SVC_API_KEY.")
            key = stored["apiKey"]
        return Client(self.base_url, api_key=key)

    # ---- output ----------------------------------------------------------------------------

    def emit(self, value: Any, text: Callable[[Any], None] | None = None) -> None:
        """JSON of the API's data with --output json, else the text view."""
        if self.json or text is None:
            click.echo(json.dumps(_plain(value), indent=2, ensure_ascii=False))
        else:
            text(value)

    def table(self, rows: Iterable[Any], columns: list[tuple[str, str]], page: Any = None) -> None:
        if self.json:
            self.emit(page if page is not None else list(rows))
            return
        table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
        for title, _ in columns:
            table.add_column(title, overflow="fold")
        count = 0
        for row in rows:
            values = _plain(row)
            table.add_row(*[_cell(values.get(field)) for _, field in columns])
            count += 1
        if count:
            self.out.print(table)
        else:
            self.out.print("[dim](none)[/dim]")
        if isinstance(page, Page) and page.next_cursor:
            self.out.print(f"[dim]more: --cursor {page.next_cursor}[/dim]")

    def fields(self, value: Any, names: list[str]) -> None:
        values = _plain(value)
        width = max(len(n) for n in names)
        for name in names:
            self.out.print(f"[bold]{name.ljust(width)}[/bold]  {_cell(values.get(name))}")


def _plain(value: Any) -> Any:
    if isinstance(value, ApiModel):
        return value.raw()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, (list, dict)):
        return ", ".join(map(str, value)) if isinstance(value, list) else json.dumps(value)
    return str(value)


def _fail(state: State | None, error: Exception) -> None:
    json_mode = state is not None and state.json
    if isinstance(error, ApiError):
        if json_mode:
            click.echo(json.dumps({"error": {"code": error.code, "message": error.message, "details": error.details,
                                             "status": error.status, "requestId": error.request_id}}), err=True)
        else:
            console = Console(stderr=True, highlight=False, soft_wrap=True)
            console.print(f"[red]Error:[/red] {error.message} [dim]({error.code}, HTTP {error.status}"
                          f"{', request ' + error.request_id if error.request_id else ''})[/dim]", markup=True)
            for field in error.details.get("fields") or []:
                console.print(f"  {field.get('field')} ({field.get('in')}): {field.get('reason')}")
            hint = HINTS.get(error.code)
            if hint:
                console.print(hint, markup=False)
        sys.exit(EXIT_CODES.get(error.code, 1))
    message = str(error)
    if isinstance(error, ConnectionFailed):
        message = f"Cannot reach the service: {error}. Is --base-url right (and the service running)?"
    if json_mode:
        click.echo(json.dumps({"error": {"code": type(error).__name__, "message": message}}), err=True)
    else:
        click.echo(f"Error: {message}", err=True)
    sys.exit(1)


def _set_output(ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    state = ctx.find_object(State)
    if value and state is not None:
        state.output = value
    return value


class SvcCommand(click.Command):
    """Every command also takes --output, so it may come after the command's name."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.append(click.Option(["--output", "-o"], type=click.Choice(["text", "json"]), expose_value=False,
                                        callback=_set_output, help="json prints the API's data for scripts."))


class SvcGroup(click.Group):
    """Turns the library's errors into a message per code and an exit status."""

    command_class = SvcCommand
    group_class = type  # subgroups are SvcGroups too

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (SvcError, StreamInterrupted) as error:
            state = ctx.obj if isinstance(ctx.obj, State) else None
            _fail(state, error)


pass_state = click.make_pass_decorator(State)


def _paging(function: Callable) -> Callable:
    function = click.option("--cursor", help="The nextCursor of the previous page.")(function)
    return click.option("--limit", type=click.IntRange(1, 100), help="Items per page (1-100).")(function)


def _list_command(group: click.Group, name: str, columns: list[tuple[str, str]], fetch: Callable[..., Page[Any]],
                  summary: str, argument: str | None = None) -> None:
    """A command that shows one page of a list (--limit, --cursor) as a table, or its JSON."""
    def command(state: State, limit: int | None, cursor: str | None, **arguments: str) -> None:
        with state.client() as svc:
            page = fetch(svc, *arguments.values(), limit=limit, cursor=cursor)
        state.table(page.items, columns, page)
    command.__doc__ = summary
    decorated = _paging(pass_state(command))
    if argument:
        decorated = click.argument(argument)(decorated)
    group.command(name)(decorated)


def _call_command(group: click.Group, name: str, parameter: Callable[[Callable], Callable],
                  call: Callable[[Client, Any], Any], show: list[str] | Callable[[Any], str],
                  summary: str | None = None) -> None:
    """A command that makes one call with its one parameter and shows the answer: the fields named in
    `show`, or the line `show` makes of it (or, with --output json, its JSON)."""
    def command(state: State, **arguments: Any) -> None:
        with state.client() as svc:
            answer = call(svc, *arguments.values())
        state.emit(answer, lambda a: state.fields(a, show) if isinstance(show, list) else state.out.print(show(a)))
    command.__doc__ = summary
    group.command(name)(parameter(pass_state(command)))

