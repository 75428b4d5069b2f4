import re

import pytest

from svc_core.auth import key_format


@pytest.mark.parametrize("key_type", key_format.KEY_TYPES)
def test_generated_keys_have_the_documented_shape_and_pass_their_checksum(key_type):
    value = key_format.generate(key_type)
    assert re.fullmatch(rf"svc_{key_type}_[0-9A-Za-z]{{38}}", value)
    assert key_format.parse_type(value) == key_type


def test_two_keys_differ():
    assert key_format.generate("sdk") != key_format.generate("sdk")


def test_a_single_changed_character_fails_the_checksum():
    value = key_format.generate("sdk")
    position = 12
    swapped = "A" if value[position] != "A" else "B"
    tampered = value[:position] + swapped + value[position + 1:]
    assert key_format.parse_type(tampered) is None


def test_changing_the_type_prefix_fails_the_checksum():
    value = key_format.generate("sdk")
    assert key_format.parse_type(value.replace("svc_sdk_", "svc_cli_", 1)) is None


@pytest.mark.parametrize("value", ["", "svc_sdk_", "svc_xyz_" + "a" * 38, "svc_sdk_" + "a" * 37,
                                   "svc_sdk_" + "a" * 39, "svc_sdk_" + "-" * 38, "sk_live_abc"])
def test_malformed_values_are_refused(value):
    assert key_format.parse_type(value) is None


def test_hint_shows_prefix_and_last_four_only():
    value = key_format.generate("cli")
    hint = key_format.display_hint(value)
    assert hint == f"svc_cli_...{value[-4:]}"
    assert value[8:-4] not in hint
