"""Where `svc login` keeps the credential: the system keyring when one works, else a file only the
user can read. A keyring backend held in memory plays the system's."""

from __future__ import annotations

import os
import stat

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail

from svc_client.store import KEYRING_SERVICE, CredentialStore


class MemoryKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def __init__(self):
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service, username):
        return self.entries.get((service, username))

    def set_password(self, service, username, password):
        self.entries[(service, username)] = password

    def delete_password(self, service, username):
        if (service, username) not in self.entries:
            raise keyring.errors.PasswordDeleteError(username)
        del self.entries[(service, username)]


@pytest.fixture
def system_keyring(monkeypatch, tmp_path):
    monkeypatch.setenv("SVC_CONFIG_DIR", str(tmp_path / "svc"))
    monkeypatch.delenv("SVC_CREDENTIAL_STORE", raising=False)
    previous = keyring.get_keyring()

    def use(backend):
        keyring.set_keyring(backend)
        return backend

    yield use
    keyring.set_keyring(previous)


def test_a_working_keyring_holds_the_credential_and_no_file_is_written(system_keyring, tmp_path):
    memory = system_keyring(MemoryKeyring())
    store = CredentialStore()
    assert store.backend == "keyring" and store.where == "the system keyring"
    store.put("staging", {"apiKey": "value-made-in-the-test", "baseUrl": "https://example.test"})
    assert store.get("staging")["apiKey"] == "value-made-in-the-test"
    assert (KEYRING_SERVICE, "staging") in memory.entries
    assert not (tmp_path / "svc" / "credentials.json").exists()
    assert store.delete("staging") is True and store.get("staging") is None and store.delete("staging") is False


def test_without_a_keyring_the_file_is_used_readable_by_the_user_only(system_keyring, tmp_path):
    system_keyring(fail.Keyring())
    store = CredentialStore()
    assert store.backend == "file"
    store.put("default", {"apiKey": "a"})
    store.put("other", {"apiKey": "b"})
    path = tmp_path / "svc" / "credentials.json"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert store.delete("default") and store.get("other") == {"apiKey": "b"} and store.get("default") is None
    assert not list(path.parent.glob("*.tmp"))


def test_forcing_the_keyring_where_none_works_says_so(system_keyring, monkeypatch):
    system_keyring(fail.Keyring())
    monkeypatch.setenv("SVC_CREDENTIAL_STORE", "keyring")
    with pytest.raises(RuntimeError, match="no usable system keyring"):
        CredentialStore()
