"""`python -m ops directory backfill`: the global directory's items for what this cell stored before
the directory existed (data/directory_table.py): every tenant, user (and the keyed hash of the
address they sign in with), membership and live API-key value, homed in this cell's region.

Each item is written only where none with its key exists, so the command can be run again at any
time: a second run writes nothing, and a fact written since (by a request, in any cell) is never
overwritten. An address whose keyed hash another user holds already (an account of the same
address in another cell) is reported as a conflict, by user id, for the operator to settle.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

KINDS = ("tenants", "users", "emails", "memberships", "keys")


def _scan(table: str) -> Iterator[dict[str, Any]]:
    from svc_core.adapters import aws
    from svc_core.adapters.dynamo import from_item
    for page in aws.client("dynamodb").get_paginator("scan").paginate(TableName=table, ConsistentRead=True):
        yield from map(from_item, page.get("Items", []))


def backfill() -> dict[str, Any]:
    """Write the missing items; per kind, how many were written and how many were there already,
    and the users whose address's hash names another user."""
    from svc_core.auth.authenticate import email_hash
    from svc_core.contracts import cells
    from svc_core.data import directory_table
    from svc_core.platform import timeutil
    from svc_core.platform.config import settings

    cfg, home, now = settings(), cells.here(), timeutil.now()
    report: dict[str, Any] = {kind: {"written": 0, "present": 0} for kind in KINDS}
    report["region"], report["emailConflicts"] = home, []

    def write(kind: str, entry: dict[str, Any]) -> bool:
        written = directory_table.write_if_absent(entry)
        report[kind]["written" if written else "present"] += 1
        return written

    for tenant in _scan(cfg.tenants_table):
        write("tenants", directory_table.tenant_entry(tenant["id"], home))

    profiles: dict[str, dict[str, Any]] = {}
    claimed: set[str] = set()   # users whose address is claimed (not those of an identity provider)
    for item in _scan(cfg.users_table):
        if item["sk"] == "PROFILE":
            profiles[item["pk"].removeprefix("USER#")] = item
        elif item["sk"] == "EMAIL":
            claimed.add(item["userId"])
        elif item["sk"].startswith("MEMBER#"):
            write("memberships", directory_table.membership_entry(item["pk"].removeprefix("USER#"),
                                                                  item["sk"].removeprefix("MEMBER#")))
    for user_id, profile in profiles.items():
        hashed = email_hash(profile["email"]) if user_id in claimed and profile.get("email") else None
        home_entry, *email_entries = directory_table.user_entries(user_id, hashed, home)
        write("users", home_entry)
        for entry in email_entries:
            if not write("emails", entry):
                holder = directory_table.user_by_email_hash(hashed)
                if holder and holder["userId"] != user_id:
                    report["emailConflicts"].append({"userId": user_id, "heldBy": holder["userId"]})

    for item in _scan(cfg.api_keys_table):
        if not item["pk"].startswith("SECRET#"):
            continue
        not_after = item.get("notAfter")
        if not_after is None or not_after > now:   # live values only: an ended one routes nothing
            write("keys", directory_table.key_entry(item["pk"].removeprefix("SECRET#"), item["tenantId"],
                                                    item["keyId"], not_after))
    return report
