"""The tenant context handed to domain code: who calls, for which tenant, in which request."""

from __future__ import annotations

from dataclasses import dataclass

from svc_core.auth.principal import Principal


@dataclass(frozen=True)
class TenantContext:
    tenant_id: str
    principal: Principal
    request_id: str
    source_ip: str = ""   # API Gateway's sourceIp (what the audit log records)

    @property
    def actor(self) -> str:
        return self.principal.subject

    @property
    def scopes(self) -> frozenset[str]:
        return self.principal.scopes
