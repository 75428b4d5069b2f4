"""In-memory stand-ins for the table modules, with the same functions the domain calls."""

from __future__ import annotations

import copy

from svc_core.contracts import rotation
from svc_core.contracts.events import Event
from svc_core.data.common import ConditionFailed


class MemoryProjects:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], dict] = {}
        self.events: list[Event] = []

    def create(self, tenant_id, project, event, now, answer=None):
        self.rows[(tenant_id, project["id"])] = copy.deepcopy(project)
        self.events.append(event)

    def get(self, tenant_id, project_id):
        row = self.rows.get((tenant_id, project_id))
        return copy.deepcopy(row) if row else None

    def list_for_tenant(self, tenant_id, limit, after):
        ids = sorted((pid for (tid, pid) in self.rows if tid == tenant_id), reverse=True)
        if after:
            ids = [i for i in ids if i < after]
        page = ids[:limit]
        more = len(ids) > limit
        return [self.get(tenant_id, i) for i in page], (page[-1] if more else None)

    def replace(self, tenant_id, project, seen, event, now):
        current = self.rows.get((tenant_id, project["id"]))
        if not current or current["updated_at"] != seen:
            raise ConditionFailed()
        self.rows[(tenant_id, project["id"])] = copy.deepcopy(project)
        self.events.append(event)

    def delete(self, tenant_id, project_id, seen, event, now):
        current = self.rows.get((tenant_id, project_id))
        if not current or current["updated_at"] != seen:
            raise ConditionFailed()
        del self.rows[(tenant_id, project_id)]
        self.events.append(event)


class MemoryKeys:
    def __init__(self) -> None:
        self.keys: dict[str, dict] = {}
        self.secrets: dict[str, dict] = {}
        self.recorded: list[dict] = []   # the audit entries the writes carried

    def create(self, record, secret_hash, also=()):
        self.recorded += also
        self.keys[record["id"]] = copy.deepcopy(record)
        self.secrets[secret_hash] = {"keyId": record["id"], "tenantId": record["tenantId"],
                                     "scopes": record["scopes"], "notAfter": record.get("expiresAt")}

    def get(self, tenant_id, key_id):
        record = self.keys.get(key_id)
        return copy.deepcopy(record) if record and record["tenantId"] == tenant_id else None

    def revoke(self, record, now, also=()):
        self.recorded += also
        self.keys[record["id"]]["revokedAt"] = now
        for secret in record["secrets"]:
            self.secrets[secret["hash"]]["notAfter"] = now

    def rotate(self, record, new_hash, hint, old_ends, now, also=()):
        if self.keys[record["id"]] != record:
            raise ConditionFailed()
        self.recorded += also
        new = {"hash": new_hash, "notAfter": record.get("expiresAt")}
        updated = {**record, "hint": hint, "rotatedAt": now,
                   "secrets": rotation.rotated(record["secrets"], new, now, old_ends, "notAfter")}
        self.keys[record["id"]] = updated
        self.secrets[new_hash] = {"keyId": record["id"], "notAfter": record.get("expiresAt")}
        for secret in rotation.capped(record["secrets"], now, old_ends, "notAfter"):
            self.secrets[secret["hash"]]["notAfter"] = secret["notAfter"]
        return copy.deepcopy(updated)
