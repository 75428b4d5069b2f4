"""A project's files in the tenant's platform storage: the S3 bucket ProjectFilesBucket.

Key: `tenants/<tenantId>/projects/<projectId>/files/<path>`. The path is checked by the caller
(svc_core/domain/agent_runs.py: relative, no '.' or '..' segment, at most 256 characters) and the
content's size too (at most 256 KiB); this module only stores and reads bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from svc_core.adapters import aws
from svc_core.platform.config import settings

MAX_LISTED = 1000
DELETE_BATCH = 1000   # S3's most keys in one DeleteObjects


def _bucket() -> str:
    return settings().project_files_bucket


def _prefix(tenant_id: str, project_id: str) -> str:
    return f"tenants/{tenant_id}/projects/{project_id}/files/"


def key_of(tenant_id: str, project_id: str, path: str) -> str:
    return _prefix(tenant_id, project_id) + path


def put(tenant_id: str, project_id: str, path: str, content: bytes) -> None:
    aws.client("s3").put_object(Bucket=_bucket(), Key=key_of(tenant_id, project_id, path), Body=content,
                                ContentType="text/plain; charset=utf-8")


def get(tenant_id: str, project_id: str, path: str) -> bytes | None:
    """The file's bytes, or None when the project has no such file."""
    try:
        answer = aws.client("s3").get_object(Bucket=_bucket(), Key=key_of(tenant_id, project_id, path))
    except Exception as exc:
        if aws.error_code(exc) in ("NoSuchKey", "404"):
            return None
        raise
    return answer["Body"].read()


def list_files(tenant_id: str, project_id: str, prefix: str = "") -> tuple[list[dict[str, Any]], bool]:
    """The project's files whose path starts with prefix, by path: [{path, size}], and whether
    the list was cut at MAX_LISTED."""
    return listed(lambda request: aws.client("s3").list_objects_v2(Bucket=_bucket(), **request),
                  _prefix(tenant_id, project_id), prefix)


def listed(list_objects: Callable[[dict[str, Any]], dict[str, Any]], base: str, prefix: str
           ) -> tuple[list[dict[str, Any]], bool]:
    """The files under base + prefix through an S3 ListObjectsV2 call (any S3-compatible store)."""
    request: dict[str, Any] = {"Prefix": base + prefix}
    files: list[dict[str, Any]] = []
    while True:
        answer = list_objects(request)
        for item in answer.get("Contents", []):
            if len(files) == MAX_LISTED:
                return files, True
            files.append({"path": item["Key"][len(base):], "size": int(item["Size"])})
        if not answer.get("IsTruncated"):
            return files, False
        request = {**request, "ContinuationToken": answer["NextContinuationToken"]}


def delete_all(tenant_id: str, project_id: str) -> int:
    """Delete every file of the project (it was deleted), every version of each: the bucket is versioned
    (template.yaml), so a plain delete would only hide a file behind a delete marker and keep its content
    as a noncurrent version. The number of files deleted."""
    s3 = aws.client("s3")
    return deleted_every_version(
        lambda request: s3.list_object_versions(Bucket=_bucket(), **request),
        lambda versions: s3.delete_objects(Bucket=_bucket(), Delete={"Objects": versions, "Quiet": True}),
        _prefix(tenant_id, project_id))


def deleted_every_version(list_versions: Callable[[dict[str, Any]], dict[str, Any]],
                          delete_objects: Callable[[list[dict[str, str]]], dict[str, Any]], base: str) -> int:
    """Delete every version and delete marker under base through S3's ListObjectVersions and DeleteObjects;
    the number of files (keys) deleted. A version the store could not delete fails the whole call."""
    files: set[str] = set()
    while True:
        answer = list_versions({"Prefix": base, "MaxKeys": DELETE_BATCH})
        versions = [{"Key": v["Key"], "VersionId": v["VersionId"]}
                    for v in [*answer.get("Versions", []), *answer.get("DeleteMarkers", [])]]
        if not versions:
            return len(files)
        for start in range(0, len(versions), DELETE_BATCH):
            _check_deleted(delete_objects(versions[start:start + DELETE_BATCH]), len(versions))
        files.update(v["Key"] for v in answer.get("Versions", []))


def deleted_all(list_objects: Callable[[dict[str, Any]], dict[str, Any]],
                delete_objects: Callable[[list[dict[str, str]]], dict[str, Any]], base: str) -> int:
    """Delete every object under base through S3's ListObjectsV2 and DeleteObjects (any S3-compatible
    store); the number deleted. A key the store could not delete fails the whole call (it is retried)."""
    deleted = 0
    while True:
        keys = [{"Key": item["Key"]} for item in list_objects({"Prefix": base, "MaxKeys": DELETE_BATCH})
                .get("Contents", [])]
        if not keys:
            return deleted
        _check_deleted(delete_objects(keys), len(keys))
        deleted += len(keys)


def _check_deleted(answer: dict[str, Any], asked: int) -> None:
    errors = answer.get("Errors") or []
    if errors:
        raise RuntimeError(f"{len(errors)} of {asked} files could not be deleted ({errors[0].get('Code')})")
