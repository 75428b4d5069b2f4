"""A sealed value moved to another cell (sealing.rewrap, as a move between cells uses it): its data key is
sealed again by the other region's KMS key under the same context, its ciphertext untouched; it opens
there, with that context only."""

from __future__ import annotations

import os

import pytest
from botocore.exceptions import ClientError

from svc_core.adapters import aws, sealing

CONTEXT = {"purpose": "tenant-secret", "tenantId": "ten_1", "secretId": "sec_1", "version": "1"}


def test_a_value_sealed_again_for_another_cell_opens_there_with_its_context_only(stack, setting):
    kms_eu = aws.client_in("kms", "eu-central-1", os.environ["AWS_ENDPOINT_URL"])
    key_eu = kms_eu.create_key(Description="the eu cell's tenant data key")["KeyMetadata"]["KeyId"]
    sealed = sealing.seal(b"the value", CONTEXT)

    moved = sealing.rewrap(sealed, CONTEXT, kms_eu, key_eu)
    assert (moved["ciphertext"], moved["nonce"], moved["alg"]) == (sealed["ciphertext"], sealed["nonce"], sealed["alg"])
    assert moved["encryptedKey"] != sealed["encryptedKey"]
    with pytest.raises(sealing.Unsealable):   # only a value that opens here, with its own context, is moved
        sealing.rewrap(sealed, {**CONTEXT, "tenantId": "ten_2"}, kms_eu, key_eu)

    setting("AWS_REGION", "eu-central-1")     # the eu cell: its region, its key
    setting("TENANT_DATA_KEY_ID", key_eu)
    assert sealing.unseal(moved, CONTEXT) == b"the value"
    with pytest.raises(sealing.Unsealable):
        sealing.unseal(moved, {**CONTEXT, "secretId": "sec_2"})
    with pytest.raises((sealing.Unsealable, ClientError)):   # the us cell's copy is the us key's: not opened here
        sealing.unseal(sealed, CONTEXT)
