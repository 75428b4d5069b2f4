"""Logging in and out, who the credential is, and profiles (several environments)."""

from __future__ import annotations

import json
import os
import sys
import webbrowser
from typing import Any

import click

from svc_client import device
from svc_client._core import base_url_from
from svc_client.client import Client
from svc_client.commands.base import (
    State,
    SvcCommand,
    SvcGroup,
    _plain,
    examples,
    pass_state,
)
from svc_client.errors import ApiError, Unauthorized
from svc_client.store import load_config, save_config, set_profile


@click.command(cls=SvcCommand, epilog=examples("svc login", "svc login --no-browser",
                                               "printf %s \"$KEY\" | svc login --api-key -"))
@click.option("--api-key", help="Store this API key instead of the browser login (- reads it from standard input).")
@click.option("--no-browser", is_flag=True, help="Print the address instead of opening a browser.")
@pass_state
def login(state: State, api_key: str | None, no_browser: bool) -> None:
    """Log in through the browser (device login), or store an API key."""
    if api_key == "-":
        api_key = sys.stdin.readline().strip()  # keeps the key out of the shell's history
    if api_key:
        with Client(state.base_url, api_key=api_key) as svc:
            try:
                me = svc.auth.me()
            except Unauthorized as error:
                raise _key_refused(state, api_key, error) from None
            base_url = svc.base_url   # the tenant's cell, when the service named another (421)
        credential = {"apiKey": api_key, "baseUrl": base_url, "user": _plain(me.user),
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


def _key_refused(state: State, api_key: str, error: Unauthorized) -> Unauthorized:
    """The service's words are about the token it tried to read; say what happened to the key."""
    state.credential_source = "given"
    said = ("That is not an API key (they start with svc_)" if not api_key.startswith("svc_") else
            "The service refused that API key: it is mistyped, expired or revoked")
    return Unauthorized(said + ".", code=error.code, details=error.details, status=error.status,
                        request_id=error.request_id, headers=error.headers)


@click.command(cls=SvcCommand, epilog=examples("svc logout", "svc -p staging logout"))
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


@click.command(cls=SvcCommand, epilog=examples("svc whoami", "svc whoami --json tenant,scopes"))
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

@click.group(cls=SvcGroup)
def profiles() -> None:
    """Settings for several environments (e.g. local, staging, production)."""


@profiles.command("set", epilog=examples(
    "svc profiles set staging --base-url https://api.staging.example.com --default"))
@click.argument("name")
@click.option("--base-url", required=True)
@click.option("--default", "make_default", is_flag=True, help="Use it when no --profile is given.")
@pass_state
def profiles_set(state: State, name: str, base_url: str, make_default: bool) -> None:
    """Set a profile's service address (its login is made with `svc -p NAME login`)."""
    set_profile(name, baseUrl=base_url_from(base_url))
    if make_default:
        config = load_config()
        config["defaultProfile"] = name
        save_config(config)
    state.emit({"profile": name, "baseUrl": base_url_from(base_url), "default": make_default},
               lambda _: state.out.print(f"Profile {name}: {base_url_from(base_url)}"))


@profiles.command("list", epilog=examples("svc profiles list"))
@pass_state
def profiles_list(state: State) -> None:
    """The profiles and their addresses."""
    config = load_config()
    rows = [{"name": name, "baseUrl": p.get("baseUrl"), "default": name == config.get("defaultProfile")}
            for name, p in sorted(config.get("profiles", {}).items())]
    state.table(rows, [("NAME", "name"), ("BASE URL", "baseUrl"), ("DEFAULT", "default")])
