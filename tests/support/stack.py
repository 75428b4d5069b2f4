"""A provisioned stack on the emulator, with helpers to make tenants and credentials."""

from __future__ import annotations

from typing import Any

from devstack.provision import provision, run_custom_resources


class Stack:
    def __init__(self, endpoint: str, monkeypatch, parameters: dict[str, str] | None = None) -> None:
        self.endpoint = endpoint
        self.environment = provision(endpoint, parameters)
        for name, value in self.environment.items():
            monkeypatch.setenv(name, value)
        self.forget_caches()
        run_custom_resources(parameters)

    @staticmethod
    def forget_caches() -> None:
        from svc_core import aws, config, secrets_cache
        from svc_core.auth import authenticate, signing_keys
        config.settings.cache_clear()
        aws.reset_clients()
        secrets_cache.clear()
        authenticate._key_cache.clear()
        signing_keys._parsed.clear()

    def new_tenant(self, name: str = "Acme") -> str:
        from svc_core import ids, timeutil
        from svc_core.data import tenants_table
        from svc_core.data.common import transact
        tenant_id = ids.new_id("ten")
        transact([tenants_table.put_new({"id": tenant_id, "name": name, "plan": "free", "status": "active",
                                         "created_at": timeutil.iso(timeutil.now())})])
        return tenant_id

    def new_key(self, tenant_id: str, scopes: list[str] | None = None, key_type: str = "sdk",
                expires_in_days: int | None = None) -> dict[str, Any]:
        """An API key issued by an operator (as the bootstrap does); returns its view with 'key'."""
        from svc_core.domain.api_keys import issue_key
        from svc_core.scopes import ALL_SCOPES
        return issue_key(tenant_id=tenant_id, created_by="usr_operator", name="test key", key_type=key_type,
                         environment="Development", scopes=sorted(ALL_SCOPES) if scopes is None else scopes,
                         expires_in_days=expires_in_days)

    def tenant_with_key(self, scopes: list[str] | None = None) -> tuple[str, str]:
        tenant_id = self.new_tenant()
        return tenant_id, self.new_key(tenant_id, scopes)["key"]

    def client(self, service: str):
        from svc_core import aws
        return aws.client(service)
