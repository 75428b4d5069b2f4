"""A project's files in the tenant's platform storage: the S3 bucket ProjectFilesBucket.

Key: `tenants/<tenantId>/projects/<projectId>/files/<path>`. The path is checked by the caller
(svc_core/domain/agent_runs.py: relative, no '.' or '..' segment, at most 256 characters) and the
content's size too (at most 256 KiB); this module only stores and reads bytes.
"""

from __future__ import annotations

from typing import Any, Callable

from svc_core import aws
from svc_core.config import settings

MAX_LISTED = 1000


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
