"""A conservation soak of the local stack: a long, mixed session, then a count of what was
committed, published and delivered.

A seeded random session of API calls from several clients (each from its own loopback address)
on a few tenants, mixing successes and deliberate failures: creates, racing PATCHes of the same
project, deletes (of real and of missing ids), reads, validation errors, pathological bodies,
duplicate registrations and new ones. Optionally the datastores (the AWS emulator and DynamoDB
Local) are paused with SIGSTOP for a few seconds in the middle, then resumed with SIGCONT.

Every create carries its marker as its Idempotency-Key; one answered 5xx (or not at all) is sent
again with that key, after its Retry-After, as a client should, until it gets an answer that is
not "try later". A retry answered from the key's record (Idempotent-Replayed) is a recognised
create: the first attempt's change had committed although its answer was 5xx.

What is counted at the end:
- committed changes: what the answers say, reconciled with the final state (every write carries a
  unique marker, so a change answered 5xx that did commit is found: after a 503 or 504, which say
  the outcome is unknown, it is counted as committed after an unknown answer; after any other 5xx,
  as a wrong 5xx; a create whose retry made a second project is a duplicate);
- published events: every event that reached the bus, captured by a rule of our own into a queue;
- delivered events: a loopback receiver subscribed to all event types verifies each delivery with
  the `standardwebhooks` package.
Then: each committed change has exactly one event on the bus and one delivery per subscription
(by event id and by object), no event exists for a change that did not commit (phantoms), a
delivery is never repeated, every answer is in the envelope, and each object's events can be
put in order (by the object's updated_at, then created < updated < deleted) and end in its
final state.

Used by tests/e2e/test_soak.py (CI) and `python -m bench --only soak` (longer).
"""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import random
import signal
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from devstack.template import REGION

RANK = {"project.created": 0, "project.updated": 1, "project.deleted": 2}
# What each tenant's webhook subscribes to: the changes the session makes and counts. (Its own
# tenant.created and user.created may reach the outbox publisher before or after the webhook is
# made: subscribed to, they were delivered or not by that race, and the count with them.)
EVENT_TYPES = tuple(RANK)
PASSWORD = "soak-password-0123456789"

# Operations and their weights in the mix.
MIX = {"create": 26, "patch": 18, "race": 6, "delete": 7, "delete_missing": 5, "read": 10, "list": 5,
       "invalid": 8, "pathological": 5, "register_duplicate": 5, "register_new": 2, "wrong_route": 3,
       "invite_member": 3}

PATHOLOGICAL = [
    ("application/json", b"[" * 10_000 + b"]" * 10_000),
    ("application/json", b'{"name": "a", "name": "b", "language": "python"}'),
    ("application/json", b'{"name": "n", "description": 1e400, "language": "python"}'),
    ("application/json", '{"name": "n", "language": "python"}'.encode("utf-16")),
    ("application/json", b'{"name": "\\ud800", "language": "python"}'),
    ("application/json", b'{"name": "nul\\u0000", "language": "python"}'),
    ("application/json", b"null"),
    ("application/json", b'{"name": "x'),
    ("text/plain", b"name=x"),
    ("application/json", b'{"name": "' + b"x" * 300_000 + b'"}'),
]


@dataclass
class Call:
    client: int
    op: str
    status: int
    code: str | None
    marker: str | None = None
    object_id: str | None = None
    tenant: int | None = None
    enveloped: bool = True
    during_pause: bool = False
    detail: str = ""
    mixed_up: bool = False         # a success whose answer is not the data this request sent
    retries: list[int] = field(default_factory=list)   # a create's retries' statuses, with its key
    recognised: bool = False       # a retry answered from the key's record (the first attempt committed)
    unsettled: bool = False        # no retry got an answer other than "try later"


# The counts that must be 0 at the end of a session, and how the summary names them.
PROBLEM_COUNTS = {
    "lost": "lost", "phantom": "phantom", "duplicated": "duplicated", "redelivered": "redelivered",
    "wrong_5xx": "wrong 5xx", "not_enveloped": "not in the envelope", "unordered": "unordered objects",
    "bad_signatures": "bad signatures", "mixed_up": "answers showing another request's data",
    "retries_unsettled": "creates still unanswered after their retries",
}
# A 5xx that says the outcome is unknown (the datastore did not answer in time, or the gateway
# stopped waiting): a change may still commit after it, which is then no wrong answer.
UNKNOWN_OUTCOME = (503, 504)
STALL_SECONDS = 30.0           # settling: nothing in flight and nothing moved for this long ends it
IN_FLIGHT_PATIENCE = 600.0     # settling: something in flight that has not moved for this long ends it
PIPELINE_LOOK_SECONDS = 1.0    # settling: how often the pollers are asked while deliveries are missing
RETRY_ATTEMPTS = 12            # a create's retries with its key, each after the answer's Retry-After
RETRY_AFTER_DEFAULT = 2.0      # seconds, when an answer gives none (no answer at all)



@dataclass
class Report:
    calls: int = 0
    seconds: float = 0.0
    statuses: Counter = field(default_factory=Counter)
    committed: int = 0
    expected_deliveries: int = 0
    delivered: int = 0
    published: int = 0
    published_twice: int = 0
    lost: int = 0
    phantom: int = 0
    duplicated: int = 0
    redelivered: int = 0
    wrong_5xx: int = 0
    not_enveloped: int = 0
    unordered: int = 0
    bad_signatures: int = 0
    mixed_up: int = 0              # answers that show another request's data
    retried: int = 0               # creates answered 5xx (or not at all), sent again with their key
    recognised: int = 0            # of those, retries answered from the key's record: committed at first
    retries_unsettled: int = 0     # creates whose retries never got a final answer
    retry_statuses: Counter = field(default_factory=Counter)
    committed_after_unknown: int = 0   # changes answered 503/504 that committed afterwards
    paused_seconds: float = 0.0
    calls_during_pause: int = 0
    statuses_during_pause: Counter = field(default_factory=Counter)
    settle_seconds: float = 0.0
    # Where the rest of a run's time went: the tenants' set-up, reading the final state back
    # (projects and sign-ins, before settling), and counting once settled (the bus, the matching).
    set_up_seconds: float = 0.0
    read_back_seconds: float = 0.0
    count_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        found = [f"{name} = {getattr(self, name)}" for name in PROBLEM_COUNTS if getattr(self, name)]
        return found + self.notes

    def to_json(self) -> str:
        """The report as one JSON object, with its problems (dataclasses.asdict would turn a Counter's
        items into keys: the status counts are written as {status: count})."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for name in ("statuses", "statuses_during_pause", "retry_statuses"):
            fields[name] = {str(status): count for status, count in sorted(fields[name].items())}
        return json.dumps({**fields, "problems": self.problems()}, default=str)

    def summary(self) -> str:
        statuses = ", ".join(f"{s}: {n}" for s, n in sorted(self.statuses.items()))
        lines = [
            f"calls {self.calls} in {self.seconds:.1f} s ({self.calls / max(self.seconds, 1e-9):.0f}/s); statuses {statuses}",
            f"committed changes {self.committed}; events on the bus {self.published} ({self.published_twice} "
            f"published twice by a retried call); deliveries expected "
            f"{self.expected_deliveries}, delivered {self.delivered} (settled {self.settle_seconds:.1f} s after "
            f"the final state was read back, {self.read_back_seconds + self.settle_seconds:.1f} s after the last call)",
            ", ".join(f"{label} {getattr(self, name)}" for name, label in PROBLEM_COUNTS.items()),
        ]
        lines.append(f"seconds: set-up {self.set_up_seconds:.1f}, calls {self.seconds:.1f}, final state read back "
                     f"{self.read_back_seconds:.1f}, settling {self.settle_seconds:.1f}, counting {self.count_seconds:.1f}")
        if self.retried:
            retries = ", ".join(f"{s}: {n}" for s, n in sorted(self.retry_statuses.items()))
            lines.append(f"creates retried with their Idempotency-Key {self.retried} (retries' answers {retries}); "
                         f"recognised as committed by the first attempt {self.recognised}; changes committed "
                         f"after a 503/504 {self.committed_after_unknown}")
        if self.paused_seconds:
            during = ", ".join(f"{s}: {n}" for s, n in sorted(self.statuses_during_pause.items()))
            lines.append(f"datastores paused {self.paused_seconds:.1f} s; {self.calls_during_pause} calls answered "
                         f"while paused or just after ({during})")
        lines += [f"problem: {note}" for note in self.notes]
        return "\n".join(lines)


class Receiver:
    """Webhook endpoints on loopback, one path per tenant, verifying every delivery."""

    def __init__(self) -> None:
        from standardwebhooks import Webhook
        self.secrets: dict[int, str] = {}
        self.deliveries: list[dict[str, Any]] = []
        self.bad_signatures = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                tenant = int(self.path.rsplit("/", 1)[-1])
                try:
                    payload = Webhook(receiver.secrets[tenant]).verify(body, dict(self.headers.items()))
                except Exception:
                    with receiver._lock:
                        receiver.bad_signatures += 1
                    self.send_response(400)
                    self.end_headers()
                    return
                with receiver._lock:
                    receiver.deliveries.append({"tenant": tenant, "webhook_id": self.headers["webhook-id"],
                                                "event": payload})
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, name="soak-receiver", daemon=True).start()

    def url(self, tenant: int) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/hook/{tenant}"

    def count(self) -> int:
        with self._lock:
            return len(self.deliveries)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class BusCapture:
    """Every event that reaches the service's bus, through a rule and a queue of our own.

    Read while the session runs (a long poll in a thread of its own), so the count at the end reads
    only the last few: read all at the end, one receive and one delete per 10 events took 8 s of
    a 300-call soak on a busy machine, after the pipeline had settled."""

    def __init__(self, stack: Any) -> None:
        import botocore.session
        session = botocore.session.get_session()
        options = dict(region_name=REGION, endpoint_url=stack.emulator_endpoint, aws_access_key_id="local",
                       aws_secret_access_key="local")
        self.sqs = session.create_client("sqs", **options)
        self.events = session.create_client("events", **options)
        name = f"soak-capture-{os.getpid()}-{int(time.time() * 1000)}"
        self.url = self.sqs.create_queue(QueueName=name)["QueueUrl"]
        arn = self.sqs.get_queue_attributes(QueueUrl=self.url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        bus = stack.environment["EVENT_BUS_NAME"]
        source = stack.environment.get("EVENT_SOURCE") or "svc.api"
        self.events.put_rule(Name=name, EventBusName=bus, EventPattern=json.dumps({"source": [source]}),
                             State="ENABLED")
        self.events.put_targets(Rule=name, EventBusName=bus, Targets=[{"Id": "capture", "Arn": arn}])
        self.seen: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._reader = threading.Thread(target=self._read_while_running, name="soak-bus-capture", daemon=True)
        self._reader.start()

    def _receive(self, wait_seconds: int) -> int:
        messages = self.sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=10,
                                            WaitTimeSeconds=wait_seconds).get("Messages", [])
        if messages:
            self.seen += [json.loads(message["Body"])["detail"] for message in messages]
            self.sqs.delete_message_batch(QueueUrl=self.url, Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)])
        return len(messages)

    def _read_while_running(self) -> None:
        while not self._stop.is_set():
            try:
                self._receive(wait_seconds=2)
            except Exception:  # the emulator paused or stopping: the final drain reads what is left
                self._stop.wait(1)

    def stop(self) -> None:
        self._stop.set()
        self._reader.join()

    def drain(self) -> list[dict[str, Any]]:
        """Every event captured so far (the reader stops: what it had not read is read here)."""
        self.stop()
        while self._receive(wait_seconds=0):
            pass
        return self.seen


def _retry_after(response: httpx.Response | None) -> float:
    try:
        return float(response.headers["Retry-After"]) if response is not None else RETRY_AFTER_DEFAULT
    except (KeyError, ValueError):
        return RETRY_AFTER_DEFAULT


def _in_progress(response: httpx.Response) -> bool:
    return response.status_code == 409 and _envelope(response)[2] == "REQUEST_IN_PROGRESS"


def _envelope(response: httpx.Response) -> tuple[bool, dict[str, Any] | None, str | None]:
    """(in the envelope, data, error code) of an answer."""
    if response.status_code == 204:
        return True, None, None
    try:
        body = response.json()
    except ValueError:
        return False, None, None
    if not isinstance(body, dict) or "meta" not in body:
        return False, None, None
    if "error" in body:
        return isinstance(body["error"], dict) and "code" in body["error"], None, body["error"].get("code")
    return "data" in body, body.get("data"), None


class Session:
    def __init__(self, stack: Any, *, calls: int, clients: int, tenants: int, seed: int, log) -> None:
        self.stack, self.calls_wanted, self.clients, self.tenant_count = stack, calls, clients, tenants
        self.seed, self.log = seed, log
        self.base = stack.base_url + "/api/v1"
        self.receiver = Receiver()
        self.capture = BusCapture(stack)
        self.keys: dict[int, str] = {}
        self.tenant_ids: dict[int, str] = {}
        self.projects: dict[int, list[str]] = defaultdict(list)
        self.registered: list[str] = []           # e-mails registered for real
        self.owner_emails: list[str] = []         # tenant t's owner, by t
        self.new_tenants: set[str] = set()        # tenants made by registrations in the session
        self.calls: list[Call] = []
        self.lock = threading.Lock()
        self.next_call = 0
        self.paused = threading.Event()
        self.pause_ended_at = 0.0

    # -- set-up --------------------------------------------------------------------------------
    def _client(self, index: int) -> httpx.Client:
        # Each client from its own loopback address, as separate machines would be (per-address limits).
        index += self.seed * 2000  # another seed, other addresses (their limits are counted apart)
        transport = httpx.HTTPTransport(local_address=f"127.{index // 40000 % 250}.{index // 200 % 200}.{10 + index % 200}")
        return httpx.Client(transport=transport, timeout=90)

    def set_up(self) -> None:
        """The tenants, each with an owner, an API key and a webhook to the receiver: all at once
        (one after another, four took 5-8 s of a busy machine's time, mostly waiting on answers)."""
        emails = [f"soak-owner-{self.seed}-{t}-{os.getpid()}@example.com" for t in range(self.tenant_count)]
        with self._client(250) as http:
            _all_at_once(lambda t: self._set_up_tenant(http, t, emails[t]), range(self.tenant_count))
        self.owner_emails = emails
        self.registered += emails  # in tenant order, whichever finished first (the seeded picks read it)

    @staticmethod
    def lift_project_quota(tenant_id: str) -> None:
        """The tenant on the plan without a project limit, in the stack's own tables (this process has its
        environment): a quarter of the calls create projects, far more than a free plan's 10."""
        from svc_core.domain.tenants import set_plan
        set_plan(tenant_id, "enterprise")

    def _set_up_tenant(self, http: httpx.Client, t: int, email: str) -> None:
        answer = http.post(f"{self.base}/auth/register", json={"email": email, "password": PASSWORD,
                                                               "name": f"Soak {t}"})
        answer.raise_for_status()
        login = http.post(f"{self.base}/auth/login", json={"email": email, "password": PASSWORD})
        login.raise_for_status()
        token, tenant_id = login.json()["data"]["accessToken"], login.json()["data"]["tenant"]["id"]
        self.lift_project_quota(tenant_id)   # the quota itself is tests/integration/test_projects.py's
        self.tenant_ids[t] = tenant_id
        auth = {"Authorization": f"Bearer {token}"}
        key = http.post(f"{self.base}/api-keys", headers=auth, json={
            "name": "soak", "type": "sdk", "environment": "Development"})
        key.raise_for_status()
        self.keys[t] = key.json()["data"]["key"]
        secret = "whsec_" + base64.b64encode(os.urandom(32)).decode()
        self.receiver.secrets[t] = secret
        hook = http.post(f"{self.base}/webhooks", headers=self._auth(t), json={
            "url": self.receiver.url(t), "events": list(EVENT_TYPES), "secret": secret})
        hook.raise_for_status()

    def _auth(self, tenant: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[tenant]}"}

    # -- the session ---------------------------------------------------------------------------
    def _take(self) -> int | None:
        with self.lock:
            if self.next_call >= self.calls_wanted:
                return None
            self.next_call += 1
            return self.next_call

    def _record(self, call: Call, response: httpx.Response | None) -> None:
        if response is not None:
            call.enveloped, _, call.code = _envelope(response)
            if call.code:
                call.detail = response.text[:300]
        call.during_pause = call.during_pause or self._pausing()
        with self.lock:
            self.calls.append(call)

    def _pausing(self) -> bool:
        """Whether an answer now comes during the pause (or just after it, as the backlog clears)."""
        return self.paused.is_set() or time.monotonic() - self.pause_ended_at < 2

    def client_loop(self, index: int) -> None:
        rng = random.Random(self.seed * 1000 + index)
        ops, weights = zip(*MIX.items(), strict=False)
        tenant = index % self.tenant_count
        with self._client(index) as http:
            while (number := self._take()) is not None:
                op = rng.choices(ops, weights)[0]
                marker = f"s{self.seed}c{index}n{number}"
                try:
                    getattr(self, f"_op_{op}")(http, rng, tenant, index, marker)
                except httpx.HTTPError as exc:  # no answer at all: counted as status 0
                    self._record(Call(index, op, 0, type(exc).__name__, marker, tenant=tenant, enveloped=False), None)

    def _pick(self, rng: random.Random, tenant: int) -> str | None:
        with self.lock:
            known = self.projects[tenant]
            return rng.choice(known) if known else None

    def _op_create(self, http, rng, tenant, index, marker) -> None:
        headers = {**self._auth(tenant), "Idempotency-Key": marker}
        body = {"name": f"p-{marker}", "description": f"d-{marker}", "language": "python"}
        send = lambda: http.post(f"{self.base}/projects", headers=headers, json=body)  # noqa: E731
        try:
            response: httpx.Response | None = send()
            call = Call(index, "create", response.status_code, None, marker, tenant=tenant)
        except httpx.HTTPError as exc:  # no answer at all: counted as status 0, and sent again
            response, call = None, Call(index, "create", 0, type(exc).__name__, marker, tenant=tenant, enveloped=False)
        first, call.during_pause = response, self._pausing()
        if response is None or response.status_code >= 500:
            response = self._retry(send, response, call)
            call.unsettled = response is None
        if response is not None and response.status_code == 201:
            call.object_id = response.json()["data"]["id"]
            call.mixed_up = response.json()["data"]["name"] != f"p-{marker}"
            with self.lock:
                self.projects[tenant].append(call.object_id)
        self._record(call, first)

    def _retry(self, send, response: httpx.Response | None, call: Call) -> httpx.Response | None:
        """Send a create answered 5xx (or not at all) again with its key, after the answer's
        Retry-After, while the answers say to try later (5xx, or 409 REQUEST_IN_PROGRESS)."""
        for _ in range(RETRY_ATTEMPTS):
            time.sleep(_retry_after(response))
            try:
                response = send()
            except httpx.HTTPError:
                response = None
            call.retries.append(response.status_code if response is not None else 0)
            if response is not None and response.headers.get("Idempotent-Replayed") == "true":
                call.recognised = True
            if response is not None and response.status_code < 500 and not _in_progress(response):
                return response
        return None

    def _op_patch(self, http, rng, tenant, index, marker, project_id: str | None = None) -> None:
        project_id = project_id or self._pick(rng, tenant)
        if project_id is None:
            return self._op_create(http, rng, tenant, index, marker)
        response = http.patch(f"{self.base}/projects/{project_id}", headers=self._auth(tenant),
                              json={"description": f"d-{marker}"})
        call = Call(index, "patch", response.status_code, None, marker, project_id, tenant)
        call.mixed_up = response.status_code == 200 and response.json()["data"]["description"] != f"d-{marker}"
        self._record(call, response)

    def _op_race(self, http, rng, tenant, index, marker) -> None:
        """Two PATCHes of one project at once: both may win in turn, or one gets 409."""
        project_id = self._pick(rng, tenant)
        if project_id is None:
            return self._op_create(http, rng, tenant, index, marker)
        def rival() -> None:
            with self._client(index) as own:
                self._op_patch(own, random.Random(marker), tenant, index, marker + "r", project_id)

        other = threading.Thread(target=rival)
        other.start()
        self._op_patch(http, rng, tenant, index, marker, project_id)
        other.join()

    def _op_delete(self, http, rng, tenant, index, marker) -> None:
        project_id = self._pick(rng, tenant)
        if project_id is None:
            return self._op_delete_missing(http, rng, tenant, index, marker)
        response = http.delete(f"{self.base}/projects/{project_id}", headers=self._auth(tenant))
        self._record(Call(index, "delete", response.status_code, None, marker, project_id, tenant), response)

    def _op_delete_missing(self, http, rng, tenant, index, marker) -> None:
        missing = "proj_01" + "".join(rng.choice("0123456789ABCDEFGHJKMNPQRSTVWXYZ") for _ in range(24))
        response = http.delete(f"{self.base}/projects/{missing}", headers=self._auth(tenant))
        self._record(Call(index, "delete_missing", response.status_code, None, marker, tenant=tenant), response)

    def _op_read(self, http, rng, tenant, index, marker) -> None:
        project_id = self._pick(rng, tenant) or "proj_01J00000000000000000000000"
        response = http.get(f"{self.base}/projects/{project_id}", headers=self._auth(tenant))
        self._record(Call(index, "read", response.status_code, None, tenant=tenant), response)

    def _op_list(self, http, rng, tenant, index, marker) -> None:
        response = http.get(f"{self.base}/projects", headers=self._auth(tenant), params={"limit": 50})
        self._record(Call(index, "list", response.status_code, None, tenant=tenant), response)

    def _op_invalid(self, http, rng, tenant, index, marker) -> None:
        body = rng.choice([{"description": "no name"}, {"name": "", "language": "python"},
                           {"name": 7, "language": "python"}, {"name": "x", "language": "python", "extra": 1},
                           {"name": "x" * 500, "language": "python"}])
        response = http.post(f"{self.base}/projects", headers=self._auth(tenant), json=body)
        self._record(Call(index, "invalid", response.status_code, None, tenant=tenant), response)

    def _op_pathological(self, http, rng, tenant, index, marker) -> None:
        content_type, body = rng.choice(PATHOLOGICAL)
        response = http.post(f"{self.base}/projects", headers={**self._auth(tenant), "Content-Type": content_type},
                             content=body)
        self._record(Call(index, "pathological", response.status_code, None, tenant=tenant), response)

    def _op_register_duplicate(self, http, rng, tenant, index, marker) -> None:
        with self.lock:
            email = rng.choice(self.registered) if self.registered else None
        if email is None:
            return self._op_register_new(http, rng, tenant, index, marker)
        response = http.post(f"{self.base}/auth/register", json={"email": email, "password": PASSWORD, "name": "Again"})
        self._record(Call(index, "register_duplicate", response.status_code, None, marker), response)

    def _op_register_new(self, http, rng, tenant, index, marker) -> None:
        email = f"soak-{marker}-{os.getpid()}@example.com"
        response = http.post(f"{self.base}/auth/register", json={"email": email, "password": PASSWORD, "name": "New"})
        call = Call(index, "register_new", response.status_code, None, marker, email)
        if response.status_code == 201:
            with self.lock:
                self.registered.append(email)
        self._record(call, response)

    def _op_invite_member(self, http, rng, tenant, index, marker) -> None:
        """A conflict that needs no race: inviting the tenant's own owner (409 already_member; two
        PATCHes at once conflict only when they overlap, which a fast machine may never do)."""
        response = http.post(f"{self.base}/invitations", headers=self._auth(tenant),
                             json={"email": self.owner_emails[tenant], "role": "member"})
        self._record(Call(index, "invite_member", response.status_code, None, tenant=tenant), response)

    def _op_wrong_route(self, http, rng, tenant, index, marker) -> None:
        response = http.request(rng.choice(["PUT", "GET", "POST"]), f"{self.base}/projectz/{marker}",
                                headers=self._auth(tenant))
        self._record(Call(index, "wrong_route", response.status_code, None, tenant=tenant), response)

    # -- the pause -----------------------------------------------------------------------------
    def pause_datastores(self, seconds: float) -> None:
        processes = [p for p in (self.stack.emulator, getattr(self.stack.dynamodb_local, "process", None)) if p]
        for process in processes:
            os.kill(process.pid, signal.SIGSTOP)
        self.paused.set()
        try:
            time.sleep(seconds)
        finally:
            for process in processes:
                os.kill(process.pid, signal.SIGCONT)
            self.pause_ended_at = time.monotonic()
            self.paused.clear()

    # -- counting ------------------------------------------------------------------------------
    def final_projects(self) -> dict[str, dict[str, Any] | None]:
        """Every project the session may have touched, as stored at the end (None: not there)."""
        found: dict[str, dict[str, Any] | None] = {}
        with self._client(251) as http:
            for t in range(self.tenant_count):
                cursor = None
                while True:
                    params = {"limit": 100, **({"cursor": cursor} if cursor else {})}
                    page = http.get(f"{self.base}/projects", headers=self._auth(t), params=params)
                    page.raise_for_status()
                    data = page.json()["data"]
                    for item in data["items"]:
                        found[item["id"]] = {**item, "tenant": t}
                    cursor = data["nextCursor"]
                    if not cursor:
                        break
        return found


def run(stack: Any, *, calls: int = 2000, clients: int = 8, tenants: int = 4, seed: int = 1,
        pause_seconds: float = 0.0, stall_seconds: float = STALL_SECONDS, log=print) -> Report:
    """Play the session against a started LocalStack and count; see the module's docstring."""
    session = Session(stack, calls=calls, clients=clients, tenants=tenants, seed=seed, log=log)
    report = Report()
    try:
        set_up_started = time.monotonic()
        session.set_up()
        started = time.monotonic()
        report.set_up_seconds = started - set_up_started
        threads = [threading.Thread(target=session.client_loop, args=(i,), name=f"soak-client-{i}")
                   for i in range(clients)]
        for thread in threads:
            thread.start()
        if pause_seconds:
            while session.next_call < calls // 2 and any(t.is_alive() for t in threads):
                time.sleep(0.05)
            session.pause_datastores(pause_seconds)
            report.paused_seconds = pause_seconds
        for thread in threads:
            thread.join()
        report.seconds = time.monotonic() - started
        _count(session, report, stall_seconds)
    finally:
        session.receiver.stop()
        session.capture.stop()
    return report


def _count(session: Session, report: Report, stall_seconds: float) -> None:
    calls = session.calls
    report.calls = len(calls)
    report.statuses = Counter(c.status for c in calls)
    retried = [c for c in calls if c.retries]
    report.retried = len(retried)
    report.retry_statuses = Counter(status for c in retried for status in c.retries)
    report.recognised = sum(1 for c in retried if c.recognised)
    report.retries_unsettled = sum(1 for c in retried if c.unsettled)
    report.not_enveloped = sum(1 for c in calls if not c.enveloped)
    report.mixed_up = sum(1 for c in calls if c.mixed_up)
    during = [c for c in calls if c.during_pause]
    report.calls_during_pause = len(during)
    report.statuses_during_pause = Counter(c.status for c in during)
    bad_5xx = [c for c in calls if c.status >= 500 and not c.during_pause]
    if bad_5xx:
        report.notes.append(f"{len(bad_5xx)} 5xx answers outside a pause: "
                            + ", ".join(sorted({f'{c.op} {c.status} {c.code}' for c in bad_5xx})))
    stray = [c for c in calls if c.status < 500 and c.status not in _ALLOWED.get(c.op, ())]
    if stray:
        report.notes.append("unexpected answers: " + ", ".join(sorted({f"{c.op} {c.status} {c.code}" for c in stray}))
                            + f" (e.g. {stray[0].detail})")

    read_back_started = time.monotonic()
    final = session.final_projects()
    expected = _committed_changes(session, final, report)
    report.committed = len(expected)
    wanted = [e for e in expected if e["type"].startswith("project.")]
    report.expected_deliveries = len(wanted)  # one subscription per tenant: one delivery per change

    settle_started = time.monotonic()
    report.read_back_seconds = settle_started - read_back_started
    unsettled = _settle(session, report.expected_deliveries, stall_seconds)
    if unsettled:
        report.notes.append(f"the pipeline did not settle: {unsettled}")
    time.sleep(1.0)  # late duplicates, if any, arrive in this second too
    report.settle_seconds = time.monotonic() - settle_started
    count_started = time.monotonic()
    bus = session.capture.drain()
    mine = {tid for tid in session.tenant_ids.values()} | session.new_tenants
    bus = [e for e in bus if e["tenantId"] in mine]
    report.published = len(bus)
    deliveries = list(session.receiver.deliveries)
    report.delivered = len(deliveries)
    report.bad_signatures = session.receiver.bad_signatures
    by_webhook_id = Counter(d["webhook_id"] for d in deliveries)
    report.redelivered = sum(n - 1 for n in by_webhook_id.values())

    # Match the expected changes to delivered events (by type and object; updates by their marker).
    delivered_events = {d["event"]["id"]: d["event"] for d in deliveries}.values()
    published_ids = Counter(e["id"] for e in bus)
    # The publisher may put an event on the bus twice (a retried call that had gone through):
    # reported, but no problem as long as each subscription still gets it once.
    report.published_twice = sum(n - 1 for n in published_ids.values())
    remaining = Counter(_change_key(e) for e in delivered_events)
    for change in wanted:
        key = (change["type"], change["object"], change["marker"])
        if remaining[key]:
            remaining[key] -= 1
        else:
            report.lost += 1
            report.notes.append(f"no event for the committed change {key}")
    # An extra event for a change that committed once is a duplicate; one for a change answered 5xx,
    # a wrong 5xx (it did commit); one for no change at all, a phantom.
    committed_keys = Counter((c["type"], c["object"], c["marker"]) for c in wanted)
    failed_5xx = {("project.updated", c.object_id, c.marker): c.status for c in calls
                  if c.op == "patch" and c.status >= 500}
    failed_5xx |= {("project.deleted", c.object_id, None): c.status for c in calls
                   if c.op == "delete" and c.status >= 500}
    # A set-up tenant's own creation events reach its webhook when the webhook was registered before
    # they were fanned out: committed changes, delivered at most once.
    registrations = Counter((c["type"], c["object"], None) for c in expected
                            if c["type"] in ("tenant.created", "user.created"))
    for key, count in remaining.items():
        if count and registrations[key]:
            report.duplicated += max(0, count - registrations[key])
        elif count and committed_keys[key]:
            report.duplicated += count
        elif count and key in failed_5xx:
            # Found by its event only (a delete, or an update later overwritten): it committed, so
            # its delivery was owed, once.
            _count_committed_5xx(report, failed_5xx[key])
            report.committed += 1
            report.expected_deliveries += 1
            report.duplicated += count - 1
        elif count:
            report.phantom += count
            answered = [f"{c.op} {c.status} {c.code or ''}".strip() for c in calls if c.marker and c.marker == key[2]]
            report.notes.append(f"event with no committed change: {key}" + (f", answered {answered}" if answered else ""))
    # Registration events are not delivered (their tenants have no subscription): on the bus, exactly one each.
    registered = [e for e in expected if e["type"] in ("tenant.created", "user.created")]
    # By event id: an event the publisher put on the bus twice (a retried call) is one event.
    bus_registrations = Counter((e["type"], e["tenantId"]) for e in {e["id"]: e for e in bus}.values()
                                if e["type"] in ("tenant.created", "user.created"))
    for change in registered:
        key = (change["type"], change["object"])
        if bus_registrations[key]:
            bus_registrations[key] -= 1
        else:
            report.lost += 1
    report.phantom += sum(bus_registrations.values())
    report.notes += [f"event with no committed change: {key}" for key, n in bus_registrations.items() if n]
    report.unordered = _unordered(delivered_events, final)
    report.count_seconds = time.monotonic() - count_started


def _settle(session: Session, expected: int, stall_seconds: float) -> str | None:
    """Wait for the pipeline to settle, by its progress, not by the clock: until every expected
    delivery is in and nothing is in flight. Progress: a delivery arrived, a poller finished a
    record or message, or what is in flight changed. With nothing in flight, stall_seconds without
    progress end the wait (what is missing then is lost); a message in flight (hidden until its
    queue's visibility timeout or its delivery's next attempt) is waited for up to
    IN_FLIGHT_PATIENCE without progress. Returns what was still in flight when the wait gave up.

    The deliveries are counted every 0.25 s (in this process); the pollers, whose queues are asked
    through the emulator, once a second while deliveries are still missing: asked four times a
    second, the settling's own requests loaded the emulator the pipeline it waits for needs."""
    last, moved_at = None, time.monotonic()
    pipeline, looked_at = _pipeline(session.stack), time.monotonic()
    while True:
        delivered = session.receiver.count()
        if delivered >= expected or time.monotonic() - looked_at >= PIPELINE_LOOK_SECONDS:
            pipeline, looked_at = _pipeline(session.stack), time.monotonic()
        state = (delivered, *pipeline)
        if state != last:
            last, moved_at = state, time.monotonic()
        delivered, _, in_flight = state
        if delivered >= expected and not in_flight:
            return None
        if time.monotonic() - moved_at > (IN_FLIGHT_PATIENCE if in_flight else stall_seconds):
            return f"{in_flight} records or messages still in flight" if in_flight else None
        time.sleep(0.25)


def _pipeline(stack: Any) -> tuple[int, int]:
    """(records and messages the local stack's pollers have finished, how many are in flight)."""
    done = in_flight = 0
    for poller in stack.pollers:
        status = poller.status()
        done += status["processed"] + status["sentToFailureDestination"] + status["discarded"]
        in_flight += status.get("messagesWaiting", 0) or int(status["oldestUnprocessedAgeSeconds"] is not None)
    return done, in_flight


_ALLOWED = {
    "create": (201, 429), "patch": (200, 404, 409, 429), "delete": (200, 204, 404, 409, 429),
    "delete_missing": (404, 429), "read": (200, 404, 429), "list": (200, 429), "invalid": (400, 429),
    "pathological": (400, 413, 415, 429), "register_duplicate": (201, 202, 409, 429),
    "register_new": (201, 429), "wrong_route": (404, 405, 429), "invite_member": (409, 429),
}


def _change_key(event: dict[str, Any]) -> tuple[str, str, str | None]:
    data = event["data"]
    if event["type"] == "project.updated":
        return event["type"], data["id"], (data.get("description") or "")[2:]
    if event["type"] in ("tenant.created", "user.created"):
        return event["type"], event["tenantId"], None
    return event["type"], data.get("id") or event["tenantId"], None


def _committed_changes(session: Session, final: dict[str, dict[str, Any] | None], report: Report
                       ) -> list[dict[str, Any]]:
    """The changes that committed: by their answers, and for 5xx answers by the final state."""
    changes: list[dict[str, Any]] = []
    by_name = {p["name"]: pid for pid, p in final.items() if p}
    named = Counter(p["name"] for p in final.values() if p)
    for c in session.calls:
        if c.op == "create":
            # A project answered 5xx is in no client's list, so nothing deletes it: the end state tells.
            project_id = c.object_id or by_name.get(f"p-{c.marker}")
            made = named[f"p-{c.marker}"]
            if made > 1:  # a retry with the key made another project: the first attempt's was not recognised
                report.duplicated += made - 1
                report.notes.append(f"create {c.marker} made {made} projects (answers {c.status}, {c.retries})")
                changes += [{"type": "project.created", "object": pid, "marker": None}
                            for pid, p in final.items() if p and p["name"] == f"p-{c.marker}" and pid != project_id]
            if project_id:
                if c.status >= 500 and (c.recognised or c.object_id is None):  # committed by the 5xx'd attempt
                    _count_committed_5xx(report, c.status)
                changes.append({"type": "project.created", "object": project_id, "marker": None})
        elif c.op == "patch" and (c.status == 200 or c.status >= 500):
            if c.status >= 500:
                stored = final.get(c.object_id)
                if not stored or stored.get("description") != f"d-{c.marker}":
                    continue  # not visible at the end: not committed, or overwritten (then its event tells)
                _count_committed_5xx(report, c.status)
            changes.append({"type": "project.updated", "object": c.object_id, "marker": c.marker})
        elif c.op == "delete" and c.status in (200, 204):
            changes.append({"type": "project.deleted", "object": c.object_id, "marker": None})
    # Registrations: the tenants a real registration made (read back by signing in, all at once:
    # one after another, the 20-odd sign-ins of a 1,000-call soak waited on each answer in turn).
    def sign_in(n: int) -> httpx.Response:
        with session._client(1000 + n) as http:  # an address each: sign-ins are limited per address
            return http.post(f"{session.base}/auth/login", json={"email": session.registered[n], "password": PASSWORD})

    for login in _all_at_once(sign_in, range(len(session.registered))):
        if login.status_code == 200:
            tenant_id = login.json()["data"]["tenant"]["id"]
            session.new_tenants.add(tenant_id)
            changes.append({"type": "tenant.created", "object": tenant_id, "marker": None})
            changes.append({"type": "user.created", "object": tenant_id, "marker": None})
        else:
            report.notes.append(f"a registered account cannot sign in: {login.status_code}")
    return changes


def _all_at_once(work, items, threads: int = 8) -> list[Any]:
    """work(item) for every item, on a few threads at once; the results in the items' order
    (the first error is raised)."""
    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(work, items))


def _count_committed_5xx(report: Report, status: int) -> None:
    """A change that committed although its request was answered `status` (5xx)."""
    if status in UNKNOWN_OUTCOME:
        report.committed_after_unknown += 1
    else:
        report.wrong_5xx += 1


def _unordered(events, final: dict[str, dict[str, Any] | None]) -> int:
    """Objects whose events cannot be put in one order ending in their final state."""
    per_object: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for event in events:
        if event["type"] in RANK:
            per_object[event["data"]["id"]].append(event)
    bad = 0
    for project_id, found in per_object.items():
        keys = [(e["data"]["updated_at"], RANK[e["type"]]) for e in found]
        ordered = [e for _, e in sorted(zip(keys, found, strict=False), key=lambda pair: pair[0])]
        if len(set(keys)) != len(keys) or ordered[0]["type"] != "project.created":
            bad += 1
            continue
        if any(e["type"] == "project.deleted" for e in ordered[:-1]):
            bad += 1
            continue
        last = ordered[-1]
        stored = final.get(project_id)
        if last["type"] == "project.deleted":
            bad += stored is not None
        elif stored is None or stored.get("description") != last["data"].get("description"):
            bad += 1
    return bad


def main(argv: list[str] | None = None) -> int:
    """python -m devstack.soak [--calls N] [--pause SECONDS] [--json]: a soak on a local stack of its own."""
    import argparse

    from devstack.stack import ENGINES, LocalStack
    parser = argparse.ArgumentParser(prog="python -m devstack.soak", description=main.__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--tenants", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pause", type=float, default=0.0, help="pause both datastores this long mid-way")
    parser.add_argument("--emulator", choices=ENGINES, default="dynamodb-local")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    args = parser.parse_args(argv)
    stack = LocalStack(port=0, log=lambda _m: None, engine=args.emulator, parameters={"LogLevel": "ERROR"}).start()
    try:
        report = run(stack, calls=args.calls, clients=args.clients, tenants=args.tenants, seed=args.seed,
                     pause_seconds=args.pause, log=lambda _m: None)
    finally:
        stack.stop()
    if args.json:
        print(report.to_json())
    else:
        print(report.summary())
    return 1 if report.problems() else 0


if __name__ == "__main__":
    raise SystemExit(main())
