"""Password hashes: the standard parameters unless the settings ask for light ones, which a prod
stage refuses; either kind verifies, whatever the current setting (a hash carries its parameters)."""

from __future__ import annotations

import pytest

from svc_core.domain import passwords
from svc_core.platform import config


@pytest.fixture
def hashing(monkeypatch):
    def use(kind: str | None, stage: str = "dev") -> None:
        if kind is None:
            monkeypatch.delenv("PASSWORD_HASHING", raising=False)
        else:
            monkeypatch.setenv("PASSWORD_HASHING", kind)
        monkeypatch.setenv("STAGE", stage)
        config.settings.cache_clear()
    yield use
    config.settings.cache_clear()


def test_unset_the_hashes_are_argon2id_with_rfc_9106_low_memory_parameters(hashing):
    hashing(None)
    stored = passwords.hash_password("correct horse battery staple")
    assert stored.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert passwords.matches(stored, "correct horse battery staple")
    assert not passwords.matches(stored, "correct horse battery stapler")


def test_light_hashes_keep_full_length_and_each_kind_verifies_under_the_other(hashing):
    hashing("light")
    light = passwords.hash_password("a password")
    assert light.startswith("$argon2id$v=19$m=1024,t=1,p=1$")
    salt, digest = light.rsplit("$", 2)[1:]
    assert (len(salt), len(digest)) == (22, 43)   # 16 and 32 bytes, unpadded base64
    hashing(None)
    assert passwords.matches(light, "a password") and not passwords.matches(light, "another password")
    standard = passwords.hash_password("a password")
    hashing("light")
    assert passwords.matches(standard, "a password")


@pytest.mark.parametrize("kind, stage", [("light", "prod"), ("none", "dev"), ("Standard", "dev")])
def test_a_prod_stage_refuses_light_hashes_and_an_unknown_kind_is_refused(hashing, kind, stage):
    hashing(kind, stage)
    with pytest.raises(config.UnsafeSettings, match="PASSWORD_HASHING"):
        config.settings()
