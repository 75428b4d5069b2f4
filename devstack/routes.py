"""The registries the cross-cutting tests and the bench work through, read from the routes themselves:
template.yaml's Api events and what the OpenAPI document (functions/meta/openapi.json, generated from
the functions' `Api` objects) says of each operation. Nothing here is a list kept by hand, so a new
route is in every set it belongs to once it is routed and the document regenerated (scripts/generate).

What cannot be read from a route (which read of a function is its everyday one, how to store an
item of a list) is kept by those who need it, keyed by route or function, and checked against these
sets: tests/unit/test_route_registries.py fails when a route escapes one.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from devstack import sample_events
from devstack.template import ROOT, load

DOCUMENT = ROOT / "functions" / "meta" / "openapi.json"
IDEMPOTENCY_HEADER = "Idempotency-Key"
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True)
class Route:
    event: str        # the event file's stem, events/<event>.json: Projects-ListProjects
    function: str     # the function's logical id: ProjectsFunction
    directory: str    # its code directory under functions/: projects
    method: str       # GET
    path: str         # as in template.yaml: /api/v1/projects/{id}
    operation: dict[str, Any]  # the document's operation

    @property
    def event_key(self) -> str:
        """The event's name in template.yaml: ListProjects."""
        return self.event.split("-", 1)[1]

    def query_parameter(self, name: str) -> dict[str, Any] | None:
        return next((p for p in self.operation.get("parameters", ()) if p.get("in") == "query" and p["name"] == name),
                    None)

    @property
    def cursor_pattern(self) -> str | None:
        """The documented pattern of the `cursor` parameter: set on every list, None elsewhere."""
        parameter = self.query_parameter("cursor")
        if parameter is None:
            return None
        return next(s["pattern"] for s in parameter["schema"]["anyOf"] if "pattern" in s)

    @property
    def required_scope(self) -> str | None:
        """The scope the document says the route needs (None: public, or any credential of the tenant)."""
        scopes = [scope for scheme in self.operation.get("security") or () for scope in scheme.get("bearerAuth", ())]
        return scopes[0] if scopes else None

    @property
    def streams(self) -> bool:
        """Answers Server-Sent Events (an admitted request stays open)."""
        return any("text/event-stream" in (answer.get("content") or {})
                   for answer in self.operation.get("responses", {}).values())

    @property
    def is_list(self) -> bool:
        return self.cursor_pattern is not None

    @property
    def is_write(self) -> bool:
        return self.method in WRITE_METHODS

    @property
    def is_idempotent(self) -> bool:
        """Honours Idempotency-Key (svc_core/http/idempotency.py): the header is a documented parameter."""
        return any(p.get("in") == "header" and p["name"].lower() == IDEMPOTENCY_HEADER.lower()
                   for p in self.operation.get("parameters", ()))

    @property
    def path_parameters(self) -> list[str]:
        return [segment[1:-1] for segment in self.path.split("/") if segment.startswith("{")]

    @property
    def parents(self) -> list[str]:
        """The collection each path parameter names an object of: /agents/{id}/runs -> ["agents"]."""
        segments = self.path.split("/")
        return [segment for segment, following in itertools.pairwise(segments) if following.startswith("{")]


@lru_cache(maxsize=1)
def routes() -> tuple[Route, ...]:
    """Every Api route of template.yaml (an ANY route, the 405 answer of a resource, is none), with
    its document operation, in the template's order."""
    document = json.loads(DOCUMENT.read_text())
    template = load()
    found = []
    for event, logical_id, method, path in sample_events.routes(template):
        operation = document["paths"].get(path, {}).get(method.lower())
        if operation is None:
            raise LookupError(f"{method} {path} is routed but not in {DOCUMENT.name}: run scripts/generate")
        directory = Path(template["Resources"][logical_id]["Properties"]["CodeUri"]).name
        found.append(Route(event, logical_id, directory, method, path, operation))
    return tuple(found)


def list_routes() -> list[Route]:
    return [r for r in routes() if r.is_list]


def write_routes() -> list[Route]:
    return [r for r in routes() if r.is_write]


def idempotent_routes() -> list[Route]:
    return [r for r in routes() if r.is_idempotent]


def api_functions() -> list[str]:
    """The logical ids of the functions with an HTTP API, in the template's order."""
    return list(dict.fromkeys(r.function for r in routes()))


def by_event(event: str) -> Route:
    return next(r for r in routes() if r.event == event)


# A function's everyday read, when it is not the rule's (its first list without a path parameter,
# else its first GET without one): the read a cold start is measured on and a first read must
# serve without pydantic.
EVERYDAY_READ = {
    "ProjectsFunction": "Projects-GetProject",        # a single object, beside its list
    "MetaFunction": "Meta-Jwks",                      # what every verifier of a token fetches first
    "BillingFunction": "Billing-BillingSummary",      # the billing page's first request
    "AuthFunction": "Auth-Me",                        # who is signed in: the dashboard's first request (its
                                                      # list, the sessions, is a person's only: an API key gets 403)
    "ChatStreamFunction": "ChatStream-StreamChatSession",  # its only route
}
# Functions with an API but no read a user waits on, and why.
NO_EVERYDAY_READ = {
    "StripeWebhookFunction": "Stripe calls it (and retries): no user waits on its cold start",
    "EventStreamFunction": "its one route waits for events (up to 20 s buffered): no first answer to time",
}


def everyday_reads() -> dict[str, Route]:
    """function logical id -> its everyday read, for every function with an API but those of
    NO_EVERYDAY_READ; a function the rule finds no read for raises, it is not left out."""
    reads = {}
    for function in api_functions():
        if function in NO_EVERYDAY_READ:
            continue
        if function in EVERYDAY_READ:
            reads[function] = by_event(EVERYDAY_READ[function])
            continue
        gets = [r for r in routes() if r.function == function and r.method == "GET" and not r.path_parameters]
        chosen = next((r for r in gets if r.is_list), None) or next(iter(gets), None)
        if chosen is None:
            raise LookupError(f"{function} has no GET without a path parameter: name its everyday read in "
                              "devstack/routes.py EVERYDAY_READ, or why it has none in NO_EVERYDAY_READ")
        reads[function] = chosen
    return reads
