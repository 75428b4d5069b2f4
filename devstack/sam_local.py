"""What `sam local invoke` / `sam local start-api` need to run the functions against the local stack's data
(docs/sam-local.md):

- the sample objects the events of events/ name (a project, an agent, a run, a chat session, a webhook,
  a secret, an API key, and a spare of each for the DELETE events), created through the API with the
  events' own bodies: create_samples();
- the events with their placeholders filled ({{api_key}}, {{projects}}, ...): fill(), write_events();
- the --env-vars file: every function's environment (by logical id, and "Parameters" for all) pointing at
  the local stack's emulator endpoints, as a container reaches them: env_vars().

The local stack writes sam-env.json beside its own state at start (.local/stacks/PORT/, or its
--persist DIR), and .local/events/ with --sam-local. For a stack already running (or another one the
credentials file names):

    python -m devstack.sam_local [--credentials .local/dev-credentials.json] [--out DIR]

creates the samples and writes the filled events (default: events/ beside the credentials file).
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from devstack import sample_events
from devstack.template import ROOT, Resolver

EVENTS_OUT = ROOT / ".local" / "events"
ENV_VARS_NAME = "sam-env.json"   # written beside the stack's state (devstack/__main__.py), as its other environment

# How a container reaches the host's loopback-bound services: Docker Desktop (macOS, Windows) names the host
# host.docker.internal; on Linux a container on the default bridge reaches the host at the bridge's address.
DOCKER_DESKTOP_HOST = "host.docker.internal"
LINUX_BRIDGE_HOST = "172.17.0.1"

# The samples an id cannot be created for by POSTing to its collection, and the event that creates it.
CREATED_BY = {"agents.runs": "Agents-ExecuteAgent", "webhooks.replays": "Webhooks-ReplayWebhookEvents",
              "invitations": "Invitations-CreateInvitation"}
# Samples named by another list than their collection's: a delivery is named by its event's id, so
# the first event of the tenant's log (the bootstrap's tenant.created, once the publisher logged it).
LISTED_AT = {"webhooks.deliveries": "/api/v1/events"}
# The response field holding a created object's id, where it is not "id".
ID_FIELD: dict[str, str] = {}
# Parameters that name no object: a value of the local stack's (parameter name -> value).
FIXED_VALUES = {"provider": "github", "featureKey": "byos"}


ABSENT_ID = "none_01JD2Q7ZB6V8S3K4X9W2M5N7PA"  # names no object: what a sample no API call makes stands for


class MissingSample(KeyError):
    """An event names a placeholder no sample fills: the message says which, and where to add it."""

    def __str__(self) -> str:
        return self.args[0]


def fill(value: Any, values: dict[str, str], *, absent_ok: bool = False) -> Any:
    """The event with every {{name}} replaced (the base64 body decoded, filled and encoded again).
    absent_ok: a name without a value becomes an id no object has (for the events written for a 404)."""
    if isinstance(value, dict):
        filled = {k: fill(v, values, absent_ok=absent_ok) for k, v in value.items()}
        if value.get("isBase64Encoded") and isinstance(value.get("body"), str) and "httpMethod" in value:
            text = fill(base64.b64decode(value["body"]).decode(), values, absent_ok=absent_ok)
            filled["body"] = base64.b64encode(text.encode()).decode()
        return filled
    if isinstance(value, list):
        return [fill(v, values, absent_ok=absent_ok) for v in value]
    if isinstance(value, str):
        def one(match: re.Match) -> str:
            name = match.group(1)
            if name not in values and absent_ok:
                return ABSENT_ID
            if name not in values:
                raise MissingSample(
                    f"the placeholder {{{{{name}}}}} names no sample: devstack/sam_local.py creates one per "
                    "collection by POSTing the collection's create event; add the collection's create route, "
                    f"or CREATED_BY / FIXED_VALUES there for {name!r}")
            return values[name]
        return re.sub(r"\{\{([^{}]+)\}\}", one, value)
    return value


def _request(base_url: str, api_key: str | None, event: dict[str, Any]) -> tuple[int, Any]:
    body = base64.b64decode(event["body"]) if event.get("body") else None
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {api_key}"} if api_key else {})}
    request = urllib.request.Request(base_url + event["path"], data=body, method=event["httpMethod"], headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def _sign_in(base_url: str, email: str, password: str) -> dict[str, Any]:
    event = {"httpMethod": "POST", "path": "/api/v1/auth/login",
             "body": base64.b64encode(json.dumps({"email": email, "password": password}).encode()).decode()}
    status, answer = _request(base_url, None, event)
    if status != 200:
        raise RuntimeError(f"signing in as {email} answered {status}: {answer}")
    return answer["data"]


def _first_listed(base_url: str, values: dict[str, str], events: dict[str, dict[str, Any]], key: str) -> str | None:
    """The id of the first object the collection of this sample key lists (GET on the collection's path)."""
    for event in events.values():
        parameter = re.findall(r"\{(\w+)\}$", event["resource"])
        if event["httpMethod"] != "GET" or not parameter or \
                sample_events.placeholder_key(event["resource"], parameter[0]) != key:
            continue
        try:
            path = fill(event["path"][: event["path"].rindex("/")], values)
        except MissingSample:
            return None  # its parent first
        status, answer = _request(base_url, values["api_key"], {"httpMethod": "GET", "path": path, "body": ""})
        items = (answer or {}).get("data") if status == 200 else None
        items = items.get("items") if isinstance(items, dict) else items  # a page: {items, nextCursor}
        if items:
            return items[0]["id"]
    return None


def _first_of(base_url: str, api_key: str, path: str, wait_seconds: float = 15.0) -> str | None:
    """The id of the first item a list answers, waiting a while for one (the local stack logs
    events a moment after they commit)."""
    deadline = time.monotonic() + wait_seconds
    while True:
        status, answer = _request(base_url, api_key, {"httpMethod": "GET", "path": path, "body": ""})
        items = ((answer or {}).get("data") or {}).get("items") if status == 200 else None
        if items or time.monotonic() > deadline:
            return items[0]["id"] if items else None
        time.sleep(0.2)


def _collection_creators(events: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Sample key -> the event that creates one: the POST to the collection's own path."""
    creators = dict(CREATED_BY)
    for event in events.values():
        if event["httpMethod"] != "GET" or not event.get("pathParameters"):
            continue
        resource = event["resource"]
        parameter = re.findall(r"\{(\w+)\}$", resource)
        if not parameter:
            continue
        key = sample_events.placeholder_key(resource, parameter[0])
        collection = resource[: resource.rindex("/")]
        for other, candidate in events.items():
            if candidate["httpMethod"] == "POST" and candidate["resource"] == collection:
                creators.setdefault(key, other)
    return creators


def _renamed(event: dict[str, Any], key: str) -> dict[str, Any]:
    """The create event with a name (and an e-mail address) of the sample's own: names are unique in some
    collections (secrets), addresses among pending invitations, the event itself must still create its
    object later, and a restart makes new spares."""
    if not event.get("body"):
        return event
    body = json.loads(base64.b64decode(event["body"]))
    if isinstance(body, dict) and isinstance(body.get("name"), str):
        suffix = "_" + re.sub(r"[^A-Za-z0-9]", "_", key) + "_" + secrets.token_hex(3)
        body["name"] = body["name"][: 100 - len(suffix)] + suffix
    if isinstance(body, dict) and isinstance(body.get("email"), str):  # one pending invitation per address
        local, _, domain = body["email"].partition("@")
        body["email"] = f"{local}+{re.sub(r'[^A-Za-z0-9]', '-', key)}-{secrets.token_hex(3)}@{domain}"
    return {**event, "body": base64.b64encode(json.dumps(body).encode()).decode()}


SESSION_VALUES = ("access_token", "refresh_token")


def lasting(values: dict[str, str]) -> dict[str, str]:
    """The sample ids worth keeping across restarts (--persist): not the credentials, the sessions, nor
    the spares (a DELETE event may have taken one)."""
    dropped = {"api_key", "email", "password", *SESSION_VALUES, *(sample_events.SPARE + v for v in SESSION_VALUES)}
    return {k: v for k, v in values.items() if k not in dropped and not k.startswith(sample_events.SPARE)}


def create_samples(base_url: str, credentials: dict[str, Any], events: dict[str, dict[str, Any]] | None = None,
                   kept: dict[str, str] | None = None) -> dict[str, str]:
    """Create, through the API, one object of each collection the events name (two where a DELETE
    event names a spare), and return every placeholder's value. kept: the ids of an earlier start
    (--persist), not made again; the sessions are always new."""
    events = events if events is not None else {n: e for n, (e, _s) in sample_events.build().items()}
    user = credentials["user"]
    values = {**(kept or {}), "api_key": credentials["apiKey"], "tenant_id": credentials["tenantId"],
              "email": user["email"], "password": user["password"], **FIXED_VALUES}
    # Members are made by accepted invitations, not by a call of their collection: the samples name the
    # developer, the development tenant's only owner (sample_events.EXPECTED_STATUS says what each event answers).
    values.update({"members": user["id"], sample_events.SPARE + "members": user["id"]})
    for prefix in ("", sample_events.SPARE):  # two sessions of the developer: one is ended by Auth-Logout
        pair = _sign_in(base_url, user["email"], user["password"])
        values[f"{prefix}access_token"], values[f"{prefix}refresh_token"] = pair["accessToken"], pair["refreshToken"]
    wanted = set().union(*(sample_events.placeholders(e) for e in events.values())) - set(values)
    creators = _collection_creators(events)
    pending = sorted(wanted, key=lambda k: (k.startswith(sample_events.SPARE), k.count(".")))
    for _ in range(len(pending) + 1):  # a sample may need another first (a run needs an agent)
        progressed = False
        for key in list(pending):
            base = key.removeprefix(sample_events.SPARE)
            creator = creators.get(base)
            if base in LISTED_AT:
                listed = _first_of(base_url, values["api_key"], LISTED_AT[base])
                if listed is not None:
                    values[key] = listed
                    pending.remove(key)
                    progressed = True
                continue
            if creator is None:  # no way to create one: the first the collection lists, if any
                listed = _first_listed(base_url, values, events, base)
                if listed is not None:
                    values[key] = listed
                    pending.remove(key)
                    progressed = True
                continue
            try:
                event = fill(events[creator], values)
            except MissingSample:
                continue  # after what it needs
            status, answer = _request(base_url, values["api_key"], _renamed(event, key))
            if status >= 300:
                raise RuntimeError(f"creating the sample {key} with {creator} answered {status}: {answer}")
            values[key] = answer["data"][ID_FIELD.get(base, "id")]
            pending.remove(key)
            progressed = True
        if not pending or not progressed:
            break
    return values


def write_events(values: dict[str, str], out: Path = EVENTS_OUT) -> list[Path]:
    """The usable copies of events/ (placeholders filled) in out; an event naming a sample that
    could not be made is left out (the message says which)."""
    out.mkdir(mode=0o700, parents=True, exist_ok=True)
    written = []
    for path in sorted(sample_events.EVENTS_DIR.glob("*.json")):
        try:
            event = fill(json.loads(path.read_text()), values, absent_ok=sample_events.absent_allowed(path.stem))
        except MissingSample:
            continue
        target = out / path.name
        write_private(target, json.dumps(event, indent=2) + "\n")
        written.append(target)
    return written


def default_container_host() -> str:
    """How a `sam local` container reaches this machine: Docker Desktop's name for the host (macOS,
    Windows), else the default bridge's gateway (Linux)."""
    import platform
    return DOCKER_DESKTOP_HOST if platform.system() in ("Darwin", "Windows") else LINUX_BRIDGE_HOST


def container_url(url: str, host: str) -> str:
    """A loopback URL of the local stack as a container reaches it (the host's address instead)."""
    parts = urlsplit(url)
    if parts.hostname not in ("127.0.0.1", "localhost"):
        return url
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def env_vars(environment: dict[str, str], parameters: dict[str, str], host: str) -> dict[str, dict[str, str]]:
    """The --env-vars document: each function's template environment with the local stack's values
    (tables, queues, keys, endpoints), loopback URLs rewritten to host; "Parameters" for every function."""
    resolver = Resolver(parameters)
    # The stack's own addresses only (endpoints, queue URLs, its base URL), not e.g. the CORS origins.
    rewrite = {k: container_url(v, host) if k.startswith("AWS_ENDPOINT_URL") or k.endswith("_URL") else v
               for k, v in environment.items()}
    document: dict[str, dict[str, str]] = {"Parameters": rewrite}
    for logical_id in sorted(resolver.of_type("AWS::Serverless::Function")):
        own = resolver.function_environment(logical_id)
        document[logical_id] = {**own, **{k: rewrite[k] for k in own if k in rewrite},
                                **{k: v for k, v in rewrite.items() if k.startswith("AWS_")}}
    return document


def write_env_vars(environment: dict[str, str], parameters: dict[str, str], host: str, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    write_private(out, json.dumps(env_vars(environment, parameters, host), indent=2) + "\n")
    return out


def write_private(path: Path, text: str) -> None:
    """Readable by the user only: the events carry the development API key and session tokens."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)


def main(argv: list[str] | None = None) -> int:
    import argparse
    parser = argparse.ArgumentParser(prog="python -m devstack.sam_local",
                                     description="Create the sample objects the events of events/ name on the "
                                                 "stack the credentials file names, and write the events filled.")
    parser.add_argument("--credentials", type=Path, default=ROOT / ".local" / "dev-credentials.json",
                        help="the development credentials (baseUrl, apiKey, tenantId, user) the local stack wrote")
    parser.add_argument("--out", type=Path, help="where to write the events (default: events/ beside the credentials)")
    args = parser.parse_args(argv)
    credentials = json.loads(args.credentials.read_text())
    values = create_samples(credentials["baseUrl"], credentials)
    written = write_events(values, args.out or args.credentials.parent / "events")
    print(f"{len(written)} events filled in {args.out or args.credentials.parent / 'events'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
