"""What one cell reads and writes in another for a person whose account and tenant live in two cells
(docs/regions-and-storage.md, "People across cells"): the membership and the tenant a sign-in at the
account's cell needs from the tenant's home, the account a tenant's cell needs when a person of
another cell joins it, the audit entry a sign-in owes to the tenant's home, and the revocation of a
removed member's sign-ins in the cell holding them.

Reads are single items by key, decoded as their table's own module decodes them; writes are the
TransactWriteItems entries this cell's table modules make, sent to the same tables of the other
cell (each entry's TableName exchanged for that cell's name of the table). The other cell's resources
come from the directory (its `CELL#<region>` item), as a move between cells finds them.
"""

from __future__ import annotations

import time
from typing import Any

from svc_core.adapters.dynamo import from_item, to_attr, values
from svc_core.data import cell_tables, directory_table, sessions_table
from svc_core.data.cell_tables import Place

_PLACE_SECONDS = 300.0       # a cell's resources change only with its deployment
_places: dict[str, tuple[float, Place]] = {}


class CellUnknown(Exception):
    """The cell of that region has published no resources (not deployed, or not yet)."""


def place(region: str) -> Place:
    """The resources of the cell in `region`, from the directory (kept for a few minutes)."""
    cached = _places.get(region)
    if cached is not None and time.monotonic() - cached[0] < _PLACE_SECONDS:
        return cached[1]
    resources = directory_table.cell_resources(region)
    if resources is None:
        raise CellUnknown(region)
    found = Place.of({**resources, "region": region})
    _places[region] = (time.monotonic(), found)
    return found


def _key(**parts: str) -> dict[str, Any]:
    return {name: to_attr(value) for name, value in parts.items()}


def _get(where: Place, logical_id: str, **key: str) -> dict[str, Any] | None:
    item = cell_tables.get(where, logical_id, _key(**key))
    return from_item(item) if item is not None else None


def membership(where: Place, user_id: str, tenant_id: str) -> dict[str, Any] | None:
    """The user's membership of the tenant, as users_table.membership reads it there."""
    found = _get(where, "UsersTable", pk=f"USER#{user_id}", sk=f"MEMBER#{tenant_id}")
    if found is None:
        return None
    found.pop("pk"), found.pop("sk")
    return {**found, "userId": user_id}


def tenant(where: Place, tenant_id: str) -> dict[str, Any] | None:
    """The tenant item, as tenants_table.get reads it there."""
    return _get(where, "TenantsTable", id=tenant_id)


def account(where: Place, user_id: str) -> dict[str, Any] | None:
    """The user's profile without its password hash (a cell that is not the account's never checks
    a password): id, email, name, status."""
    found = _get(where, "UsersTable", pk=f"USER#{user_id}", sk="PROFILE")
    if found is None:
        return None
    return {k: v for k, v in found.items() if k not in ("pk", "sk", "passwordHash")}


def write(where: Place, entries: list[dict[str, Any]]) -> None:
    """This cell's TransactWriteItems entries, applied to the same tables of the other cell at once."""
    if not entries:
        return
    names = {name: logical_id for logical_id, name in cell_tables.here().tables.items()}
    moved = []
    for entry in entries:
        (kind, body), = entry.items()
        moved.append({kind: {**body, "TableName": where.tables[names[body["TableName"]]]}})
    where.client("dynamodb").transact_write_items(TransactItems=moved)


def _session_ids(where: Place, user_id: str) -> list[str]:
    """Every session of the user there, live or not (the byUser index, keys only)."""
    client, found = where.client("dynamodb"), []
    request: dict[str, Any] = {"TableName": where.tables["SessionsTable"], "IndexName": "byUser",
                               "KeyConditionExpression": "userId = :u", "ExpressionAttributeValues": values(u=user_id)}
    while True:
        answer = client.query(**request)
        found += [key["id"]["S"] for key in answer.get("Items", [])]
        if not answer.get("LastEvaluatedKey"):
            return found
        request["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def session(where: Place, session_id: str) -> dict[str, Any] | None:
    """One session there, as sessions_table.get reads it."""
    return _get(where, "SessionsTable", id=session_id)


def live_session_ids(where: Place, user_id: str, tenant_id: str, now: int) -> list[str]:
    """The user's sessions there that are live and have minted a token for the tenant (each read)."""
    found = []
    for session_id in _session_ids(where, user_id):
        found_session = session(where, session_id)
        if found_session is None or found_session.get("revokedAt") is not None \
                or int(found_session.get("expiresAt", 0)) <= now:
            continue
        if tenant_id in set(found_session.get("tenantIds") or ()) | {found_session.get("tenantId")}:
            found.append(found_session["id"])
    return found


def session_page(where: Place, user_id: str, limit: int, after: str | None, now: float
                 ) -> tuple[list[dict[str, Any]], str | None]:
    """A page of the user's open sessions there, newest first, as sessions_table.page_for_user reads it here."""
    return sessions_table.open_page(_session_ids(where, user_id),
                                    lambda chunk: [session(where, i) for i in chunk], limit, after, now)
