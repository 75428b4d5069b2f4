"""The local stack's buckets are set as template.yaml says (devstack/provision.py): a bucket whose
VersioningConfiguration is Enabled keeps every version of an object, as it does in AWS, so what reads
versions (the residency audit, a restore, a clean-up deleting every version) meets locally what it meets
there; its default encryption, public access block, ownership and lifecycle rules are the template's too."""

from __future__ import annotations

import uuid

from devstack.template import Resolver
from tests.support.stack import DEFAULT_PARAMETERS


def _template_buckets() -> dict[str, dict]:
    """Each bucket the local stack makes (the template's, its conditions met): name -> its properties."""
    resolver = Resolver(dict(DEFAULT_PARAMETERS))
    return {resolver.physical_name(name): resolver.resolve(bucket.get("Properties", {}))
            for name, bucket in resolver.of_type("AWS::S3::Bucket").items()}


def _template_versioning() -> dict[str, str | None]:
    return {name: (props.get("VersioningConfiguration") or {}).get("Status")
            for name, props in _template_buckets().items()}


def test_each_bucket_is_versioned_as_the_template_says(stack):
    s3 = stack.client("s3")
    expected = _template_versioning()
    assert expected.get("svc-local-projectfilesbucket") == "Enabled"  # the tenants' files, at least
    assert {name: s3.get_bucket_versioning(Bucket=name).get("Status") for name in expected} == expected


def test_an_overwritten_file_keeps_its_earlier_version(stack):
    s3 = stack.client("s3")
    bucket, key = "svc-local-projectfilesbucket", f"tenants/ten_test/projects/p/files/{uuid.uuid4().hex}.txt"
    first = s3.put_object(Bucket=bucket, Key=key, Body=b"one")["VersionId"]
    s3.put_object(Bucket=bucket, Key=key, Body=b"two")
    versions = s3.list_object_versions(Bucket=bucket, Prefix=key)["Versions"]
    assert len(versions) == 2
    assert s3.get_object(Bucket=bucket, Key=key, VersionId=first)["Body"].read() == b"one"


def test_each_bucket_has_the_templates_encryption_access_block_ownership_and_lifecycle(stack):
    s3 = stack.client("s3")
    buckets = _template_buckets()
    assert "svc-local-projectfilesbucket" in buckets
    for name, props in buckets.items():
        [encryption] = s3.get_bucket_encryption(Bucket=name)["ServerSideEncryptionConfiguration"]["Rules"]
        [declared] = props["BucketEncryption"]["ServerSideEncryptionConfiguration"]
        assert encryption["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == \
            declared["ServerSideEncryptionByDefault"]["SSEAlgorithm"], name
        assert s3.get_public_access_block(Bucket=name)["PublicAccessBlockConfiguration"] == \
            props["PublicAccessBlockConfiguration"], name
        if "OwnershipControls" in props:
            assert s3.get_bucket_ownership_controls(Bucket=name)["OwnershipControls"]["Rules"] == \
                props["OwnershipControls"]["Rules"], name
        rules = {r["ID"]: r for r in s3.get_bucket_lifecycle_configuration(Bucket=name)["Rules"]}
        for declared in props["LifecycleConfiguration"]["Rules"]:
            rule = rules[declared["Id"]]
            assert rule["Status"] == declared["Status"], name
            assert rule.get("Filter", {}).get("Prefix", "") == declared.get("Prefix", ""), name
            assert rule.get("Expiration", {}).get("Days") == declared.get("ExpirationInDays"), name
            assert rule.get("NoncurrentVersionExpiration", {}).get("NoncurrentDays") == \
                declared.get("NoncurrentVersionExpiration", {}).get("NoncurrentDays"), name


def test_a_file_written_without_encryption_asked_is_encrypted_by_the_buckets_default(stack):
    answer = stack.client("s3").put_object(Bucket="svc-local-projectfilesbucket", Key="tenants/ten_test/x.txt", Body=b"x")
    assert answer["ServerSideEncryption"] == "AES256"
