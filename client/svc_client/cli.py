"""`svc`, the command-line client.

    svc login                     # device login in the browser; the key is kept in the keyring
    svc projects create Apollo --language python
    svc chat --project proj_...   # an interactive chat, answers streamed
    svc --output json projects list

Global options: --base-url, --profile (several environments), --output text|json. A credential
comes from SVC_API_KEY when set, else from the profile's stored login.
"""

from __future__ import annotations

import json
import os
import sys
import time
import webbrowser
from collections.abc import Callable, Iterable
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from svc_client import device
from svc_client._core import DEFAULT_BASE_URL, VERSION, base_url_from
from svc_client.client import Client
from svc_client.errors import ApiError, ConnectionFailed, StreamInterrupted, SvcError
from svc_client.models import ApiModel, Page
from svc_client.store import (
    CredentialStore,
    load_config,
    profile_name,
    profile_settings,
    save_config,
    set_profile,
)
from svc_client.streaming import (
    ContentDelta,
    Done,
    StreamError,
    ToolResult,
    ToolUse,
    Usage,
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


@click.group(cls=SvcGroup)
@click.option("--base-url", help="The service's root URL (else SVC_BASE_URL, the profile's, or the local stack).")
@click.option("--profile", "-p", help="Which stored login and settings to use (else SVC_PROFILE or the default).")
@click.option("--output", "-o", type=click.Choice(["text", "json"]), default="text", show_default=True,
              envvar="SVC_OUTPUT", help="json prints the API's data for scripts.")
@click.version_option(VERSION, prog_name="svc")
@click.pass_context
def cli(ctx: click.Context, base_url: str | None, profile: str | None, output: str) -> None:
    """The svc service from the command line."""
    ctx.obj = State(base_url, profile, output)


# ---- identity ---------------------------------------------------------------------------------

@cli.command()
@click.option("--api-key", help="Store this API key instead of the browser login (- reads it from standard input).")
@click.option("--no-browser", is_flag=True, help="Print the address instead of opening a browser.")
@pass_state
def login(state: State, api_key: str | None, no_browser: bool) -> None:
    """Log in through the browser (device login), or store an API key."""
    if api_key == "-":
        api_key = sys.stdin.readline().strip()  # keeps the key out of the shell's history
    if api_key:
        with Client(state.base_url, api_key=api_key) as svc:
            me = svc.auth.me()
        credential = {"apiKey": api_key, "baseUrl": state.base_url, "user": _plain(me.user),
                      "tenant": _plain(me.tenant)}
    else:
        with state.client(authenticated=False) as svc:
            flow = device.start(svc)
            started = flow.started
            assert started is not None
            if not state.json:
                click.echo(f"Open this address in a browser and approve the login:\n\n  {started.auth_url}\n")
                click.echo(f"Check that the browser shows the code: {started.verification_code}\n")
            else:
                click.echo(json.dumps({"authUrl": started.auth_url,
                                       "verificationCode": started.verification_code}), err=True)
            if not no_browser:
                try:
                    webbrowser.open(started.auth_url)
                except Exception:  # no browser here: the printed address is enough
                    pass
            with state.err.status("Waiting for the approval in the browser...", spinner="dots"):
                issued = device.wait_for_approval(svc, flow)
        credential = {"apiKey": issued.token, "keyId": issued.key_id, "baseUrl": state.base_url,
                      "user": _plain(issued.user), "tenant": _plain(issued.tenant)}
    state.store.put(state.profile, credential)
    who = (credential.get("user") or {}).get("email") or "an API key"
    tenant = (credential.get("tenant") or {}).get("name") or (credential.get("tenant") or {}).get("id")
    state.emit({"loggedIn": True, "profile": state.profile, "user": credential.get("user"),
                "tenant": credential.get("tenant"), "store": state.store.backend},
               lambda _: state.out.print(f"Logged in as {who} to {tenant} (profile {state.profile}; "
                                         f"credential in {state.store.where})."))


@cli.command()
@pass_state
def logout(state: State) -> None:
    """Revoke the login's key on the service and forget it here."""
    stored = state.stored()
    revoked = False
    if stored and stored.get("keyId"):
        with Client(state.base_url, api_key=stored["apiKey"]) as svc:
            try:
                svc.api_keys.revoke(stored["keyId"])
                revoked = True
            except ApiError as error:  # no keys:write, or already gone: forgetting it is still right
                if not state.json:
                    state.err.print(f"[yellow]The key was not revoked on the service ({error.code}); "
                                    "revoke it under Settings, Security, API Keys.[/yellow]")
    forgotten = state.store.delete(state.profile)
    state.emit({"loggedOut": forgotten, "revoked": revoked, "profile": state.profile},
               lambda _: state.out.print("Logged out." if forgotten else f"Not logged in (profile {state.profile})."))


@cli.command()
@pass_state
def whoami(state: State) -> None:
    """Who the credential is: user, tenant, scopes."""
    with state.client() as svc:
        me = svc.auth.me()

    def text(me: Any) -> None:
        # A login's svc_cli_ key answers as an API key; the stored login says whose it is.
        stored_user = (state.stored() or {}).get("user") if not os.environ.get("SVC_API_KEY") else None
        who = (me.user.email if me.user else
               f"{stored_user['email']} (command-line key)" if stored_user else "an API key")
        state.out.print(f"{who} in {me.tenant.name} ({me.tenant.id}, {me.tenant.role}) at {state.base_url}")
        state.out.print(f"[dim]scopes: {' '.join(me.scopes)}[/dim]")
    state.emit(me, text)


# ---- profiles ---------------------------------------------------------------------------------

@cli.group()
def profiles() -> None:
    """Settings for several environments (e.g. local, staging, production)."""


@profiles.command("set")
@click.argument("name")
@click.option("--base-url", required=True)
@click.option("--default", "make_default", is_flag=True, help="Use it when no --profile is given.")
@pass_state
def profiles_set(state: State, name: str, base_url: str, make_default: bool) -> None:
    set_profile(name, baseUrl=base_url_from(base_url))
    if make_default:
        config = load_config()
        config["defaultProfile"] = name
        save_config(config)
    state.emit({"profile": name, "baseUrl": base_url_from(base_url), "default": make_default},
               lambda _: state.out.print(f"Profile {name}: {base_url_from(base_url)}"))


@profiles.command("list")
@pass_state
def profiles_list(state: State) -> None:
    config = load_config()
    rows = [{"name": name, "baseUrl": p.get("baseUrl"), "default": name == config.get("defaultProfile")}
            for name, p in sorted(config.get("profiles", {}).items())]
    state.table(rows, [("NAME", "name"), ("BASE URL", "baseUrl"), ("DEFAULT", "default")])


# ---- projects ---------------------------------------------------------------------------------

PROJECT_COLUMNS = [("ID", "id"), ("NAME", "name"), ("LANGUAGE", "language"), ("CREATED", "created_at")]


@cli.group()
def projects() -> None:
    """Projects: list, create, show, delete."""


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


_list_command(projects, "list", PROJECT_COLUMNS, lambda svc, **page: svc.projects.list(**page),
              "One page of projects, newest first.")


@projects.command("create")
@click.argument("name")
@click.option("--description")
@click.option("--language")
@pass_state
def projects_create(state: State, name: str, description: str | None, language: str | None) -> None:
    with state.client() as svc:
        project = svc.projects.create(name, description=description, language=language)
    state.emit(project, lambda p: state.out.print(f"Created project {p.id} ({p.name})."))


_call_command(projects, "show", click.argument("project_id"), lambda svc, id: svc.projects.get(id),
              ["id", "name", "description", "language", "created_at", "updated_at"])
_call_command(projects, "delete", click.argument("project_id"), lambda svc, id: svc.projects.delete(id),
              lambda d: f"Deleted project {d.id}.")


# ---- agents -----------------------------------------------------------------------------------

@cli.group()
def agents() -> None:
    """Agents: list, create, show, run, runs."""


@agents.command("list")
@_paging
@pass_state
def agents_list(state: State, limit: int | None, cursor: str | None) -> None:
    with state.client() as svc:
        page = svc.agents.list(limit=limit, cursor=cursor)
    rows = [{**a.raw(), "autonomyLevel": a.config.autonomy_level} for a in page.items]
    state.table(rows, [("ID", "id"), ("NAME", "name"), ("AUTONOMY", "autonomyLevel"), ("CREATED", "created_at")],
                page)


@agents.command("create")
@click.argument("name")
@click.option("--prompt", "system_prompt", required=True, help="The system prompt.")
@click.option("--autonomy", type=click.Choice(["suggest", "supervised", "autonomous"]), default="suggest",
              show_default=True)
@click.option("--model")
@click.option("--step-limit", type=click.IntRange(1, 25))
@click.option("--tool", "tools", multiple=True, help="A tool the agent may use (repeat; default: all).")
@pass_state
def agents_create(state: State, name: str, system_prompt: str, autonomy: str, model: str | None,
                  step_limit: int | None, tools: tuple[str, ...]) -> None:
    with state.client() as svc:
        agent = svc.agents.create(name, system_prompt, autonomy, model=model, step_limit=step_limit,
                                  tools=list(tools) or None)
    state.emit(agent, lambda a: state.out.print(f"Created agent {a.id} ({a.name}, {a.config.autonomy_level})."))


_call_command(agents, "show", click.argument("agent_id"), lambda svc, id: svc.agents.get(id),
              ["id", "name", "systemPrompt", "config", "created_at"])


@agents.command("run")
@click.argument("agent_id")
@click.argument("goal")
@click.option("--project", "project_id", required=True, help="The project the agent works in.")
@click.option("--background", is_flag=True, help="Run it in the service's background worker and follow it.")
@pass_state
def agents_run(state: State, agent_id: str, goal: str, project_id: str, background: bool) -> None:
    """Run an agent on a goal, showing progress, then its steps and output."""
    with state.client() as svc:
        with state.err.status(f"Running agent {agent_id}...", spinner="dots") as status:
            run = svc.agents.execute(agent_id, goal, project_id, background=background or None)
            # A background run (asked for, or handed off at the request's time budget): follow it.
            while run.status in ("queued", "running"):
                status.update(f"Run {run.id}: {run.status}, {len(run.steps)} steps so far...")
                time.sleep(1)
                run = svc.agents.get_run(agent_id, run.id)

    def text(run: Any) -> None:
        for step in run.steps:
            if step.get("type") == "tool":
                state.out.print(f"[dim]tool[/dim] {step.get('name')} [dim]{step.get('status')}:[/dim] "
                                f"{_cell(step.get('result'))}", markup=True)
        colour = {"completed": "green", "failed": "red"}.get(run.status, "yellow")
        state.out.print(f"[{colour}]{run.status}[/{colour}] {run.id} [dim]({run.usage.input_tokens} in, "
                        f"{run.usage.output_tokens} out, {run.usage.micro_credits} micro-credits)[/dim]")
        if run.output:
            state.out.print(run.output, markup=False)
        if run.error:
            state.out.print(f"[red]{run.error.code}[/red]: {run.error.message}")
    state.emit(run, text)
    if run.status in ("failed", "cancelled"):
        sys.exit(1)


_list_command(agents, "runs", [("ID", "id"), ("STATUS", "status"), ("GOAL", "goal"), ("CREATED", "created_at")],
              lambda svc, agent_id, **page: svc.agents.runs(agent_id, **page), "One page of an agent's runs.",
              argument="agent_id")


# ---- chat -------------------------------------------------------------------------------------

@cli.command()
@click.option("--session", "session_id", help="Continue this session (else a new one).")
@click.option("--project", "project_id", help="The project the conversation is about.")
@click.option("--agent", "agent_id", help="An agent whose tools the assistant may use (new sessions).")
@click.option("--message", "-m", "messages", multiple=True, help="Send this and exit (repeat for several turns).")
@pass_state
def chat(state: State, session_id: str | None, project_id: str | None, agent_id: str | None,
         messages: tuple[str, ...]) -> None:
    """An interactive chat; answers are streamed as they are written. Ctrl-D or /exit ends it.
    With --output json, every stream event is printed as one JSON line."""
    with state.client() as svc:
        if session_id is None:
            session = svc.chat.create_session(project_id=project_id, agent_id=agent_id)
            session_id = session.id
            if state.json:
                click.echo(json.dumps({"event": "session", "data": session.raw()}))
            else:
                state.err.print(f"[dim]session {session_id} (Ctrl-D or /exit ends it)[/dim]")
        turns: Iterable[str] = messages or _prompts(state)
        for text in turns:
            svc.chat.send(session_id, text, project_id=project_id)
            _print_answer(state, svc.chat.stream(session_id))


def _prompts(state: State) -> Iterable[str]:
    while True:
        try:
            text = click.prompt(click.style("you", bold=True), prompt_suffix="> ", err=True)
        except (EOFError, click.Abort):
            state.err.print()
            return
        if text.strip() in ("/exit", "/quit"):
            return
        if text.strip():
            yield text


def _print_answer(state: State, events: Iterable[Any]) -> None:
    failed = False
    for event in events:
        if state.json:
            click.echo(json.dumps({"event": event.event, "id": event.id, "data": event.raw()}))
            continue
        if isinstance(event, ContentDelta):
            state.out.print(event.text, end="", markup=False)
        elif isinstance(event, ToolUse):
            state.out.print(f"\n[dim]-> {event.name} {json.dumps(event.input)}[/dim]")
        elif isinstance(event, ToolResult):
            state.out.print(f"[dim]<- {event.name}: {event.status}[/dim]")
        elif isinstance(event, StreamError):
            failed = True
            state.out.print(f"\n[red]{event.code}[/red]: {event.message}")
        elif isinstance(event, Usage):
            state.err.print(f"\n[dim]({event.input_tokens} in, {event.output_tokens} out, "
                            f"{event.micro_credits} micro-credits{', estimated' if event.estimated else ''})[/dim]")
        elif isinstance(event, Done) and event.status != "completed":
            failed = True
    if not state.json:
        state.out.print()
    if failed and not state.json:
        state.err.print("[red]The answer failed.[/red]")


# ---- API keys ---------------------------------------------------------------------------------

@cli.group()
def keys() -> None:
    """API keys: create, list, revoke."""


@keys.command("create")
@click.argument("name")
@click.option("--type", "key_type", type=click.Choice(["sdk", "cli", "ci", "int", "mkt"]), default="sdk",
              show_default=True)
@click.option("--environment", type=click.Choice(["Development", "Staging", "Production"]), default="Development",
              show_default=True)
@click.option("--scope", "scopes", multiple=True, help="Limit the key to this scope (repeat; default: yours).")
@click.option("--expires-in-days", type=click.IntRange(1, 730))
@pass_state
def keys_create(state: State, name: str, key_type: str, environment: str, scopes: tuple[str, ...],
                expires_in_days: int | None) -> None:
    with state.client() as svc:
        key = svc.api_keys.create(name, key_type, environment, scopes=list(scopes) or None,
                                  expires_in_days=expires_in_days)

    def text(key: Any) -> None:
        state.out.print(f"Created key {key.id} ({key.type}, {key.environment}). Its value, shown this once:")
        click.echo(key.key)
    state.emit(key, text)


_list_command(keys, "list", [("ID", "id"), ("NAME", "name"), ("TYPE", "type"), ("STATUS", "status"),
                            ("HINT", "hint"), ("LAST USED", "last_used_at")],
              lambda svc, **page: svc.api_keys.list(**page), "One page of API keys (never their values).")


_call_command(keys, "revoke", click.argument("key_id"), lambda svc, id: svc.api_keys.revoke(id),
              lambda k: f"Revoked key {k.id} ({k.status}).")


# ---- webhooks ---------------------------------------------------------------------------------

@cli.group()
def webhooks() -> None:
    """Webhooks: create, list, deliveries, test."""


@webhooks.command("create")
@click.argument("url")
@click.option("--event", "events", multiple=True, required=True, help="An event name, or * (repeat).")
@click.option("--secret", envvar="SVC_WEBHOOK_SECRET",
              help="whsec_... or a plain 32-256 character secret; default: the service makes one, printed once.")
@click.option("--description")
@pass_state
def webhooks_create(state: State, url: str, events: tuple[str, ...], secret: str | None,
                    description: str | None) -> None:
    made_secret = secret is None
    with state.client() as svc:
        webhook = svc.webhooks.create(url, list(events), secret, description)
    secret = webhook.secret if made_secret else secret
    value = {**{k: v for k, v in webhook.raw().items() if k != "secret"}, **({"secret": secret} if made_secret else {})}

    def text(_: Any) -> None:
        state.out.print(f"Created webhook {webhook.id} -> {webhook.url} ({', '.join(webhook.events)}).")
        if made_secret:
            state.out.print("Its signing secret, shown this once:")
            click.echo(secret)
    state.emit(value, text)


_list_command(webhooks, "list", [("ID", "id"), ("URL", "url"), ("EVENTS", "events"), ("ENABLED", "enabled")],
              lambda svc, **page: svc.webhooks.list(**page), "One page of webhooks.")
_list_command(webhooks, "deliveries", [("EVENT", "eventId"), ("TYPE", "eventType"), ("ATTEMPT", "attempt"),
                                       ("OUTCOME", "outcome"), ("STATUS", "statusCode"), ("AT", "attempted_at")],
              lambda svc, webhook_id, **page: svc.webhooks.deliveries(webhook_id, **page),
              "One page of a webhook's delivery attempts.", argument="webhook_id")


_call_command(webhooks, "test", click.argument("webhook_id"), lambda svc, id: svc.webhooks.test(id),
              lambda e: f"Queued test event {e.id} for webhook {e.data['webhookId']}.")


# ---- billing ----------------------------------------------------------------------------------

@cli.group()
def billing() -> None:
    """Billing: summary, invoices, buy credits, redeem a gift card."""


@billing.command("summary")
@pass_state
def billing_summary(state: State) -> None:
    """Plan, balance, this period's usage and the next charge."""
    with state.client() as svc:
        summary = svc.billing.summary()

    def text(s: Any) -> None:
        state.out.print(f"[bold]plan[/bold]     {s.plan} ({s.subscription.status})"
                        f"{'  [dim]test mode[/dim]' if s.test_mode else ''}")
        state.out.print(f"[bold]balance[/bold]  {s.balance.credits} credits")
        usage = s.usage
        state.out.print(f"[bold]usage[/bold]    {usage.period_start[:10]} to {usage.period_end[:10]}: agent runs "
                        f"{usage.agent_runs.calls} calls, chat {usage.chat.calls} calls, "
                        f"{usage.total_micro_credits / 1_000_000:.6f} credits")
        if s.next_charge:
            charge = s.next_charge
            state.out.print(f"[bold]next[/bold]     {charge.get('at')}: {charge.get('plan')}, "
                            f"{charge.get('amount', 0) / 100:.2f} {str(charge.get('currency', '')).upper()}")
    state.emit(summary, text)


_list_command(billing, "invoices", [("ID", "id"), ("NUMBER", "number"), ("AMOUNT (CENTS)", "amount"),
                                   ("CURRENCY", "currency"), ("STATUS", "status"), ("CREATED", "created_at")],
              lambda svc, **page: svc.billing.invoices(**page), "One page of invoices.")


@billing.command("buy")
@click.option("--pack", help="A pack id (see the summary's packs).")
@click.option("--credits", type=int, help="A custom number of credits.")
@click.option("--idempotency-key", help="Default: a new one (give the same to repeat a request safely).")
@pass_state
def billing_buy(state: State, pack: str | None, credits: int | None, idempotency_key: str | None) -> None:
    """Buy credits: a pack or a custom amount."""
    if (pack is None) == (credits is None):
        raise click.UsageError("Give exactly one of --pack and --credits.")
    with state.client() as svc:
        purchase = svc.billing.purchase_credits(pack=pack, credits=credits, idempotency_key=idempotency_key)

    def text(p: Any) -> None:
        state.out.print(f"Purchase {p.id}: {p.status}, {p.credits} credits for {p.amount / 100:.2f} "
                        f"{p.currency.upper()}.")
        if p.checkout_url:
            state.out.print("Pay at:")
            click.echo(p.checkout_url)
    state.emit(purchase, text)


_call_command(billing, "redeem", click.argument("code"), lambda svc, code: svc.billing.redeem_gift_card(code),
              lambda r: f"Redeemed: {r.micro_credits / 1_000_000:.6f} credits; balance {r.balance.credits}.",
              "Redeem a gift card's code.")


# ---- tenants and regions ----------------------------------------------------------------------

def _tenant_id(svc: Client, tenant_id: str | None) -> str:
    return tenant_id or svc.auth.me().tenant.id


@cli.group()
def tenants() -> None:
    """Tenants: list, show, set (settings)."""


@tenants.command("list")
@pass_state
def tenants_list(state: State) -> None:
    with state.client() as svc:
        page = svc.tenants.list()
    state.table(page.items, [("ID", "id"), ("NAME", "name"), ("PLAN", "plan"), ("ROLE", "role"),
                             ("STATUS", "status")], page)


_call_command(tenants, "show", click.argument("tenant_id", required=False),
              lambda svc, tenant_id: svc.tenants.get(_tenant_id(svc, tenant_id)),
              ["id", "name", "plan", "status", "role", "settings", "created_at"], "The tenant (default: the credential's).")


@tenants.command("set")
@click.option("--tenant", "tenant_id", help="Default: the credential's tenant.")
@click.option("--display-name")
@click.option("--default-project-language")
@click.option("--billing-email")
@click.option("--timezone")
@click.option("--ip-allow", "ip_allowlist", multiple=True, help="A CIDR of the IP allowlist (repeat).")
@pass_state
def tenants_set(state: State, tenant_id: str | None, display_name: str | None, default_project_language: str | None,
                billing_email: str | None, timezone: str | None, ip_allowlist: tuple[str, ...]) -> None:
    """Change the tenant's settings (only those given)."""
    settings = {"displayName": display_name, "defaultProjectLanguage": default_project_language,
                "billingEmail": billing_email, "timezone": timezone, "ipAllowlist": list(ip_allowlist) or None}
    settings = {k: v for k, v in settings.items() if v is not None}
    if not settings:
        raise click.UsageError("Give at least one setting to change.")
    with state.client() as svc:
        tenant = svc.tenants.update_settings(_tenant_id(svc, tenant_id), **settings)
    state.emit(tenant, lambda t: state.fields(t, ["id", "name", "settings"]))


@cli.group()
def regions() -> None:
    """Regions: list, preferences (show, set), storage."""


@regions.command("list")
@pass_state
def regions_list(state: State) -> None:
    with state.client() as svc:
        listing = svc.regions.list()
    state.table(listing.items, [("ID", "id"), ("NAME", "name"), ("JURISDICTION", "jurisdiction"),
                                ("COMPLIANCE", "complianceLevels"), ("AVAILABLE", "available")], listing)


@regions.group("preferences")
def preferences() -> None:
    """The tenant's regional preferences."""


_call_command(preferences, "show", click.option("--tenant", "tenant_id"),
              lambda svc, tenant_id: svc.regions.preferences(_tenant_id(svc, tenant_id)),
              ["primaryRegion", "secondaryRegion", "dataResidencyRequired", "dataResidencyRegion", "complianceLevel",
               "isDefault"])


@preferences.command("set")
@click.option("--tenant", "tenant_id")
@click.option("--primary-region")
@click.option("--secondary-region")
@click.option("--data-residency/--no-data-residency", "data_residency_required", default=None)
@click.option("--data-residency-region")
@click.option("--compliance-level")
@pass_state
def preferences_set(state: State, tenant_id: str | None, primary_region: str | None, secondary_region: str | None,
                    data_residency_required: bool | None, data_residency_region: str | None,
                    compliance_level: str | None) -> None:
    """Change regional preferences (only those given)."""
    fields = {"primaryRegion": primary_region, "secondaryRegion": secondary_region,
              "dataResidencyRequired": data_residency_required, "dataResidencyRegion": data_residency_region,
              "complianceLevel": compliance_level}
    fields = {k: v for k, v in fields.items() if v is not None}
    if not fields:
        raise click.UsageError("Give at least one preference to change.")
    with state.client() as svc:
        prefs = svc.regions.update_preferences(_tenant_id(svc, tenant_id), **fields)
    state.emit(prefs, lambda p: state.fields(p, ["primaryRegion", "secondaryRegion", "dataResidencyRequired",
                                                 "dataResidencyRegion", "complianceLevel"]))


_call_command(regions, "storage", click.option("--tenant", "tenant_id"),
              lambda svc, tenant_id: svc.regions.storage(_tenant_id(svc, tenant_id)),
              ["storageMode", "platformRegion", "byosProvider", "byosBucket", "byosRegion", "isDefault"],
              "The tenant's storage configuration (never its keys).")


from svc_client.listen import listen  # noqa: E402 - the command's own module, registered here

cli.add_command(listen)


def main() -> None:
    cli(prog_name="svc")


if __name__ == "__main__":
    main()
