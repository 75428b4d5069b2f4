"""What every command shares: the state (profile, base URL, credential, output), the output
helpers, errors as a message per code and an exit status, confirmation, and the list and
one-call command makers."""

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
from svc_client.errors import ApiError, CellUnreachable, ConnectionFailed, StreamInterrupted, SvcError
from svc_client.models import ApiModel, Page
from svc_client.store import (
    CredentialStore,
    profile_name,
    profile_settings,
)

# What to do about each error code, shown under the service's message (a few are said more
# precisely from what the command knows: see _hint).
HINTS = {
    "UNAUTHORIZED": "Your credential is missing, expired or revoked: run `svc login` (or set SVC_API_KEY).",
    "FORBIDDEN": "Your credential lacks the scope or your plan lacks the feature (see the details).",
    "RESOURCE_NOT_FOUND": "Nothing with that id in your tenant: check the id you gave.",
    "VALIDATION_ERROR": "The request was refused as invalid: see the fields named above.",
    "METHOD_NOT_ALLOWED": "This client and the service disagree on the API: update the client.",
    "CONFLICT": ("It conflicts with what is there now (changed meanwhile, a name already used, a limit reached, "
                 "a state that forbids this): see the details, read it again and retry."),
    "LOGIN_SESSION_CONSUMED": "That login was already used: run `svc login` again.",
    "LOGIN_SESSION_EXPIRED": "The login expired (10 minutes): run `svc login` again.",
    "PAYMENT_REQUIRED": ("Your tenant's credit is used up: see `svc billing summary`, then buy credits "
                         "(`svc billing buy --pack ID`) or redeem a gift card (`svc billing redeem CODE`)."),
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
EXIT_CODES = {"UNAUTHORIZED": 3, "FORBIDDEN": 3, "RESOURCE_NOT_FOUND": 4, "CONFLICT": 5, "RATE_LIMIT_EXCEEDED": 6,
              "MODEL_THROTTLED": 6, "PAYMENT_REQUIRED": 7}
CONFIRMATION_REFUSED = 2   # not on a terminal and no --yes: a usage error, nothing was done
# The command that lists each kind of thing the service may not find (by details.resource).
LISTS = {"project": "svc projects list", "agent": "svc agents list", "run": "svc agents runs list AGENT_ID",
         "secret": "svc secrets list", "webhook": "svc webhooks list", "api_key": "svc keys list",
         "chat_session": "svc sessions list", "oauth_connection": "svc oauth list", "invoice": "svc billing invoices",
         "tenant": "svc tenants list", "region": "svc regions list"}


class State:
    def __init__(self, base_url: str | None, profile: str | None, output: str) -> None:
        self.profile = profile_name(profile)
        self.output = output
        self.select: list[str] | None = None      # --json FIELDS
        self.credential_source: str | None = None  # env, login (a device login's key) or key (a stored API key)
        self._base_url = base_url
        self._store: CredentialStore | None = None
        self.out = console()
        self.err = console(stderr=True)

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
        self.credential_source = "env"
        if not key:
            stored = self.stored()
            if not stored:
                raise click.ClickException(f"Not logged in (profile {self.profile}): run `svc login`, "
                                           "or set SVC_API_KEY.")
            key = stored["apiKey"]
            self.credential_source = "login" if stored.get("keyId") else "key"
        return Client(self.base_url, api_key=key, on_moved=self._moved)

    def _moved(self, base_url: str) -> None:
        """The tenant lives in another cell (421 WRONG_REGION): say so, and keep its URL with the stored login."""
        self.err.print(f"The tenant lives at {base_url}: using it from now on.")
        stored = self.stored()
        explicit = self._base_url or os.environ.get("SVC_BASE_URL") or profile_settings(self.profile).get("baseUrl")
        if stored and self.credential_source != "env" and not explicit:
            self.store.put(self.profile, {**stored, "baseUrl": base_url})

    # ---- output ----------------------------------------------------------------------------

    def emit(self, value: Any, text: Callable[[Any], None] | None = None) -> None:
        """JSON of the API's data with --output json (only the --json fields), else the text view."""
        if self.json or text is None:
            click.echo(json.dumps(self._selected(_plain(value)), indent=2, ensure_ascii=False))
        else:
            text(value)

    def _selected(self, value: Any) -> Any:
        """--json FIELDS: each object cut to those fields; a page becomes the list of its items."""
        if not self.select:
            return value
        if isinstance(value, dict) and isinstance(value.get("items"), list):
            value = value["items"]
        objects = value if isinstance(value, list) else [value]
        known = {k for item in objects if isinstance(item, dict) for k in item}
        unknown = [f for f in self.select if f not in known]
        if objects and unknown:
            raise click.UsageError(f"Unknown field {', '.join(unknown)} for --json; the fields: "
                                   f"{', '.join(sorted(known))}.")
        cut = [{f: item.get(f) for f in self.select} if isinstance(item, dict) else item for item in objects]
        return cut if isinstance(value, list) else cut[0]

    def table(self, rows: Iterable[Any], columns: list[tuple[str, str]], page: Any = None) -> None:
        """A table on a terminal; elsewhere (a pipe, a file) one tab-separated line per row with
        whole values and no header, for cut, grep and awk; --output json: the JSON."""
        if self.json:
            self.emit(page if page is not None else list(rows))
            return
        lines = [[_cell(_plain(row).get(field)) for _, field in columns] for row in rows]
        next_cursor = (page.next_cursor if isinstance(page, Page) else
                       page.get("nextCursor") if isinstance(page, dict) else None)
        if not self.out.is_terminal:
            for line in lines:
                click.echo("\t".join(" ".join(value.split()) for value in line))
        elif lines:
            table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
            for index, (title, _) in enumerate(columns):
                table.add_column(title, overflow="fold", no_wrap=index == 0)  # ids are never cut
            for line in lines:
                table.add_row(*line)
            self.out.print(table)
        else:
            self.out.print("[dim](none)[/dim]")
        if next_cursor:
            self.err.print(f"[dim]more: --cursor {next_cursor} (or --all)[/dim]")

    def fields(self, value: Any, names: list[str]) -> None:
        values = _plain(value)
        width = max(len(n) for n in names)
        for name in names:
            self.out.print(f"[bold]{name.ljust(width)}[/bold]  {_cell(values.get(name))}")

    def reveal(self, said: str, label: str, value: str | None) -> None:
        """A line, then (when there is one) a value alone on its line, whole, to copy: a secret shown
        once, an address to pay at."""
        self.out.print(said, markup=False)
        if value:
            self.out.print(label, markup=False)
            click.echo(value)

    def confirm(self, yes: bool, action: str) -> None:
        """Destructive and paying commands: --yes, else a question on a terminal; elsewhere refused."""
        if yes:
            return
        if not sys.stdin.isatty():
            raise ConfirmationRequired(f"{action}: pass --yes to confirm (no terminal to ask on, so nothing "
                                       "was done).")
        if not click.confirm(f"{action}?", default=False, err=True):
            raise click.ClickException("Not confirmed: nothing was done.")


def console(stderr: bool = False) -> Console:
    """Styled on a terminal; NO_COLOR (any value, no-color.org) leaves out every style, not only
    colours (rich alone would keep bold and dim); not a terminal: plain text anyway."""
    plain = bool(os.environ.get("NO_COLOR"))
    return Console(stderr=stderr, highlight=False, soft_wrap=True, **({"color_system": None} if plain else {}))


class ConfirmationRequired(click.UsageError):
    exit_code = CONFIRMATION_REFUSED


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


def _hint(state: State | None, error: ApiError) -> str | None:
    """What to do, said from what is known: where the refused credential came from, which command
    lists what exists, how long to wait."""
    profile = state.profile if state else "default"
    source = state.credential_source if state else None
    if error.code == "UNAUTHORIZED":
        if source == "given":
            return ("Get a key in the web app (Settings, API keys) or with `svc keys create` from a profile that "
                    "is logged in, then `svc login --api-key -`; or run `svc login` to log in through the browser.")
        if source == "env":
            return ("The key in SVC_API_KEY was refused (mistyped, expired or revoked): set a valid one "
                    "(`svc keys create`, or the web app's Settings, API keys), or unset it to use `svc login`.")
        if source == "login":
            return f"Your login (profile {profile}) has expired or was revoked: run `svc login` again."
        if source == "key":
            return (f"The API key stored for profile {profile} was refused (expired or revoked): store a valid one "
                    "with `svc login --api-key -`, or run `svc login` to log in through the browser.")
    if error.code == "RESOURCE_NOT_FOUND":
        resource = str(error.details.get("resource") or "")
        what = resource.replace("_", " ") or "thing"
        lister = LISTS.get(resource)
        if lister:
            return f"No such {what} in your tenant: see what there is with `{lister}`."
        return f"No such {what}: check the id or code you gave."
    if error.code == "RATE_LIMIT_EXCEEDED" and error.retry_after is not None:
        return (f"Too many requests for this credential or tenant: try again in {int(error.retry_after)} s "
                f"(limit {error.headers.get('x-ratelimit-limit', '?')} requests per window).")
    return HINTS.get(error.code)


def _fail(state: State | None, error: Exception) -> None:
    json_mode = state is not None and state.json
    if isinstance(error, ApiError):
        if json_mode:
            click.echo(json.dumps({"error": {"code": error.code, "message": error.message, "details": error.details,
                                             "status": error.status, "requestId": error.request_id}}), err=True)
        else:
            err = console(stderr=True)
            err.print(f"[red]Error:[/red] {error.message} [dim]({error.code}, HTTP {error.status}"
                          f"{', request ' + error.request_id if error.request_id else ''})[/dim]", markup=True)
            for field in error.details.get("fields") or []:
                err.print(f"  {field.get('field')} ({field.get('in')}): {field.get('reason')}")
            hint = _hint(state, error)
            if hint:
                err.print(hint, markup=False)
        sys.exit(EXIT_CODES.get(error.code, 1))
    message = str(error)
    if isinstance(error, ConnectionFailed) and not isinstance(error, CellUnreachable):
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


def _set_select(ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    state = ctx.find_object(State)
    if value and state is not None:
        state.select = [name.strip() for name in value.split(",") if name.strip()]
        state.output = "json"
    return value


def examples(*lines: str) -> str:
    """A command's epilog: its examples, kept line by line by click's help formatter."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


class SvcCommand(click.Command):
    """Every command also takes --output and --json, so they may come after the command's name."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.append(click.Option(["--output", "-o"], type=click.Choice(["text", "json"]), expose_value=False,
                                        callback=_set_output, help="json prints the API's data for scripts."))
        self.params.append(click.Option(["--json", "select"], metavar="FIELDS", expose_value=False,
                                        callback=_set_select,
                                        help="JSON with only these fields (comma-separated; a list: of each item)."))


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
yes_option = click.option("--yes", "-y", is_flag=True, help="Do it without asking (needed when not on a terminal).")


def _paging(function: Callable) -> Callable:
    function = click.option("--cursor", help="Start after this nextCursor of an earlier page.")(function)
    function = click.option("--all", "all_items", is_flag=True, help="Every item, page after page.")(function)
    return click.option("--limit", type=click.IntRange(1),
                        help="At most this many items (default: one page; for a filtered list, the first "
                             "page with a match).")(function)


def _collect(fetch: Callable[..., Page[Any]], limit: int | None, all_items: bool, cursor: str | None,
             *arguments: Any) -> dict[str, Any]:
    """Pages of up to 100 until --limit items are in, or every page with --all; without either, the
    first page that holds an item (a filtered list, such as the audit log's or the event log's, may
    answer an empty page with a nextCursor when its matches are further on). nextCursor goes on
    after the last item shown."""
    items: list[Any] = []
    while True:
        size = 100 if all_items else min(limit - len(items), 100) if limit else None
        page = fetch(*arguments, limit=size, cursor=cursor)
        items.extend(page.items)
        cursor = page.next_cursor
        wanted = all_items or (len(items) < limit if limit else not items)
        if not cursor or not wanted:
            return {"items": items, "nextCursor": cursor}


def _list_command(group: click.Group, name: str, columns: list[tuple[str, str]], fetch: Callable[..., Page[Any]],
                  summary: str, argument: str | None = None, example: tuple[str, ...] = ()) -> None:
    """A list command (--limit, --all, --cursor): a table, tab-separated lines, or the JSON."""
    def command(state: State, limit: int | None, all_items: bool, cursor: str | None, **arguments: str) -> None:
        with state.client() as svc:
            page = _collect(lambda *a, **p: fetch(svc, *a, **p), limit, all_items, cursor, *arguments.values())
        state.table(page["items"], columns, page)
    command.__doc__ = summary
    decorated = _paging(pass_state(command))
    if argument:
        decorated = click.argument(argument)(decorated)
    group.command(name, epilog=examples(*example) if example else None)(decorated)


def _call_command(group: click.Group, name: str, parameter: Callable[[Callable], Callable] | list[Callable],
                  call: Callable[..., Any], show: list[str] | Callable[[Any], str],
                  summary: str | None = None, example: tuple[str, ...] = (), confirm: str | None = None) -> None:
    """A command that makes one call with its parameters and shows the answer: the fields named in
    `show`, or the line `show` makes of it (or, with --output json, its JSON). `confirm`: the
    question a destructive command asks first (--yes skips it)."""
    def command(state: State, yes: bool = False, **arguments: Any) -> None:
        if confirm is not None:
            state.confirm(yes, confirm.format(**arguments))
        # In the order the command declares them (click fills its dict in the order typed).
        ordered = [arguments[p.name] for p in click.get_current_context().command.params if p.name in arguments]
        with state.client() as svc:
            answer = call(svc, *ordered)
        state.emit(answer, lambda a: state.fields(a, show) if isinstance(show, list) else state.out.print(show(a)))
    command.__doc__ = summary
    decorated = pass_state(command)
    for decorator in reversed(parameter if isinstance(parameter, list) else [parameter]):
        decorated = decorator(decorated)
    if confirm is not None:
        decorated = yes_option(decorated)
    group.command(name, epilog=examples(*example) if example else None)(decorated)


class DefaultGroup(SvcGroup):
    """A group whose default command runs when the next word is not one of its commands:
    `svc regions storage` shows the storage, `svc agents runs AGENT_ID` lists the runs."""

    def __init__(self, *args: Any, default: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.default = default

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.resilient_parsing:   # completing: offer the group's commands
            return super().parse_args(ctx, args)
        if not args or (args[0] not in self.commands and args[0] not in ctx.help_option_names):
            args = [self.default, *args]
        return super().parse_args(ctx, args)
