"""Registration does not tell whether an address has an account, over real HTTP on the local
stack: not by the answer's shape, nor by the moments its ids carry, nor by the work it does (the
same calls to the datastore, the transaction refused for a known address). How long each path
takes is measured where timings belong, not asserted here (machines are shared and noisy)."""

from __future__ import annotations

import secrets
import statistics
from collections import Counter

import httpx

from svc_core.adapters import aws
from svc_core.platform import ids
from tests.support.auth_helpers import DynamoCalls

PASSWORD = "a long enough e2e password"
TRIES = 20
OWN_TABLES = {"UsersTable", "TenantsTable"}


def client_from(stack, address: str) -> httpx.Client:
    return httpx.Client(base_url=stack.base_url, timeout=30, transport=httpx.HTTPTransport(local_address=address))


def shape(value):
    """The answer with every leaf replaced by its type, and ids by their kind."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, str) and value[:4] in ("usr_", "ten_"):
        return value[:4] + "id" if ids.is_id(value, value[:3]) else "not an id"
    return type(value).__name__


def ms_of(identifier: str) -> int:
    return ids.ulid_value(identifier.split("_", 1)[1]) >> 80  # a ULID's first 48 bits: its millisecond


class _ServiceClients:
    """The local stack's functions run in this process: their DynamoDB client is the layer's own."""

    @staticmethod
    def client(service: str):
        return aws.client(service)


def register(http: httpx.Client, email: str) -> tuple[dict, Counter, int]:
    """The answer's data, the datastore calls it made ((operation, table): count), and the
    milliseconds between its user id and tenant id."""
    with DynamoCalls(_ServiceClients()) as calls:
        answer = http.post("/api/v1/auth/register", json={"email": email, "password": PASSWORD, "name": "Same"})
    assert answer.status_code == 201, answer.text
    data = answer.json()["data"]
    # The registration's own calls: its reads of users and tenants, its transaction. (Not the
    # address's count, the same route's for both, one call or two as a minute's window starts; nor
    # the stack's pollers, publishing earlier events meanwhile on other threads, on other tables.)
    own = [call for call in calls.calls if call[0] == "TransactWriteItems" or call[1] in OWN_TABLES]
    return data, Counter(own), ms_of(data["tenant"]["id"]) - ms_of(data["user"]["id"])


def test_known_and_new_addresses_get_alike_answers_id_moments_and_work(local_stack):
    known = f"known-{secrets.token_hex(4)}@example.com"
    # two addresses, so that the per-address limit is nowhere near for either series
    with client_from(local_stack, "127.0.3.1") as fresh, client_from(local_stack, "127.0.3.2") as again:
        register(fresh, known)
        register(fresh, f"warm-{secrets.token_hex(4)}@example.com")  # the first hash pays for the import
        new, old = [], []
        for n in range(TRIES):  # alternated, so that the machine's moods fall on both alike
            new.append(register(fresh, f"new-{n}-{secrets.token_hex(4)}@example.com"))
            old.append(register(again, known))
    assert {repr(shape(data)) for data, _, _ in new + old} == {repr(shape(new[0][0]))}
    assert all(data["user"]["email"].startswith("new-") for data, _, _ in new)
    new_gaps, old_gaps = [gap for _, _, gap in new], [gap for _, _, gap in old]
    # the ids are made together, before the work, in both: their moments are as far apart
    assert abs(statistics.median(new_gaps) - statistics.median(old_gaps)) <= 5, (new_gaps, old_gaps)
    assert min(new_gaps) <= max(old_gaps) and min(old_gaps) <= max(new_gaps), (new_gaps, old_gaps)
    # the same work: the same calls to the same tables (the transaction, refused for a known address)
    works = {tuple(sorted(work.items(), key=repr)) for _, work, _ in new + old}
    assert len(works) == 1, [dict(work) for _, work, _ in (new[0], old[0])]
    assert any(operation == "TransactWriteItems" for operation, _ in new[0][1]), new[0][1]
