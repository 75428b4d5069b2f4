"""Where the CLI keeps its profiles and credentials.

Profiles (no secret): `<config dir>/config.json`, `{"defaultProfile": ..., "profiles": {name: {"baseUrl": ...}}}`.
Credentials: the system keyring (service "svc-cli", one entry per profile), falling back to
`<config dir>/credentials.json`, readable by the user only (0600, in a 0700 directory), when no
keyring works here (a server without a desktop session, a container). SVC_CREDENTIAL_STORE=file or
=keyring forces one. The config dir is SVC_CONFIG_DIR, else $XDG_CONFIG_HOME/svc, else ~/.config/svc.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

KEYRING_SERVICE = "svc-cli"


def config_dir() -> Path:
    if os.environ.get("SVC_CONFIG_DIR"):
        return Path(os.environ["SVC_CONFIG_DIR"])
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "svc"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _write_private(path: Path, value: dict[str, Any]) -> None:
    """Written whole to a 0600 file beside it, then renamed over it (never world-readable, never half)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_suffix(".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(value, out, indent=2)
    os.chmod(temporary, 0o600)  # the umask cannot have widened it, but an older file might have been
    os.replace(temporary, path)


# ---- profiles ------------------------------------------------------------------------------

def load_config() -> dict[str, Any]:
    return _read_json(config_dir() / "config.json")


def save_config(config: dict[str, Any]) -> None:
    _write_private(config_dir() / "config.json", config)


def profile_name(explicit: str | None) -> str:
    return explicit or os.environ.get("SVC_PROFILE") or load_config().get("defaultProfile") or "default"


def profile_settings(name: str) -> dict[str, Any]:
    return dict(load_config().get("profiles", {}).get(name, {}))


def set_profile(name: str, **settings: Any) -> None:
    config = load_config()
    profile = config.setdefault("profiles", {}).setdefault(name, {})
    profile.update({k: v for k, v in settings.items() if v is not None})
    save_config(config)


# ---- credentials ---------------------------------------------------------------------------

class CredentialStore:
    """The stored credential of each profile: {"apiKey", "keyId"?, "baseUrl", "user"?, "tenant"?}."""

    def __init__(self, backend: str | None = None) -> None:
        self.backend = backend or os.environ.get("SVC_CREDENTIAL_STORE", "auto")
        self._keyring: Any = None
        if self.backend in ("auto", "keyring"):
            self._keyring = _usable_keyring()
            if self._keyring is None:
                if self.backend == "keyring":
                    raise RuntimeError("no usable system keyring (SVC_CREDENTIAL_STORE=keyring)")
                self.backend = "file"
            else:
                self.backend = "keyring"

    @property
    def file(self) -> Path:
        return config_dir() / "credentials.json"

    @property
    def where(self) -> str:
        return "the system keyring" if self.backend == "keyring" else str(self.file)

    def get(self, profile: str) -> dict[str, Any] | None:
        if self.backend == "keyring":
            text = self._keyring.get_password(KEYRING_SERVICE, profile)
            return json.loads(text) if text else None
        return _read_json(self.file).get(profile)

    def put(self, profile: str, credential: dict[str, Any]) -> None:
        if self.backend == "keyring":
            self._keyring.set_password(KEYRING_SERVICE, profile, json.dumps(credential))
            return
        stored = _read_json(self.file)
        stored[profile] = credential
        _write_private(self.file, stored)

    def delete(self, profile: str) -> bool:
        if self.backend == "keyring":
            try:
                self._keyring.delete_password(KEYRING_SERVICE, profile)
                return True
            except Exception:  # keyring's PasswordDeleteError: nothing stored
                return False
        stored = _read_json(self.file)
        if profile not in stored:
            return False
        del stored[profile]
        _write_private(self.file, stored)
        return True


def _usable_keyring() -> Any:
    """The system keyring if one works here, else None (keyring's fail/null backends do not)."""
    try:
        import keyring
        from keyring.backends import fail
        backend = keyring.get_keyring()
        if isinstance(backend, fail.Keyring) or getattr(backend, "priority", 1) <= 0:
            return None
        backend.get_password(KEYRING_SERVICE, "__probe__")  # a locked or absent D-Bus service fails here
        return backend
    except Exception:
        return None
