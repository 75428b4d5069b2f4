"""The audit log table: security-relevant actions of a tenant, append-only.

Partition tenantId, sort id (aud_ ULID: time-ordered, so a time range is a key range). Item: the
entry as domain/audit.py builds it {id, tenantId, action, actor, target, changes, sourceIp,
requestId, created_at} and ttl (its time + the retention). Entries are only ever put, with a
condition that the id is new, in the same transaction as the change they record; nothing here
updates or deletes one, and template.yaml gives no function the right to.
"""

from __future__ import annotations

from typing import Any

from svc_core.data.table import Table

_TABLE = Table("audit_log_table", ("tenantId", "id"), private=("ttl",))


def put_entry(entry: dict[str, Any], expires_at: int) -> dict[str, Any]:
    """A TransactWriteItems entry that appends one audit entry."""
    return _TABLE.put_entry({**entry, "ttl": expires_at}, ConditionExpression="attribute_not_exists(id)")
