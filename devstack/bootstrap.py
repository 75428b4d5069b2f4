"""Creates the development tenant, its owner and an API key with every scope, and writes
them to a JSON file for the developer (and the fuzzing and benchmarks)."""

from __future__ import annotations

import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any


def bootstrap(base_url: str, credentials_file: Path, *, email: str = "dev@example.com",
              tenant_name: str = "Development") -> dict[str, Any]:
    from svc_core.auth.scopes import ALL_SCOPES
    from svc_core.domain.api_keys import issue_key
    from svc_core.domain.tenants import create_tenant_with_owner

    password = secrets.token_urlsafe(18)
    made = create_tenant_with_owner(tenant_name=tenant_name, email=email, password=password,
                                    user_name="Local Developer")
    key = issue_key(tenant_id=made["tenant"]["id"], created_by=made["user"]["id"], name="local development",
                    key_type="sdk", environment="Development", scopes=sorted(ALL_SCOPES))
    credentials = {
        "baseUrl": base_url,
        "tenantId": made["tenant"]["id"],
        "apiKey": key["key"],
        "apiKeyId": key["id"],
        "user": {"id": made["user"]["id"], "email": made["user"]["email"], "password": password},
    }
    write_credentials(credentials, credentials_file)
    return credentials


def write_credentials(credentials: dict[str, Any], path: Path) -> None:
    """Readable by the user only: it holds a password and an API key."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(credentials, out, indent=2)


def print_credentials(allowed_origins: str, credentials: dict, path: Path) -> None:
    print(f"browser front-ends allowed (CORS): {allowed_origins or 'none'}", flush=True)
    print(f"credentials written to {path}:", flush=True)
    print(json.dumps(shown_credentials(credentials, path, sys.stdout.isatty()), indent=2), flush=True)


def shown_credentials(credentials: dict, path: Path, terminal: bool) -> dict:
    """The credentials as printed: whole on a terminal (the password, this once), else where the
    output is kept (a log file, a pipe) without the password, which stays in the credentials file."""
    if terminal:
        return credentials
    return {**credentials, "user": {**credentials["user"], "password": f"(not printed: see {path})"}}
