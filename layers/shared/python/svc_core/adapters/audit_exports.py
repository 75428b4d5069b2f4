"""Audit log exports in the platform's storage: JSON Lines files in the bucket ProjectFilesBucket
under `audit-exports/<tenantId>/<exportId>.jsonl`, which a lifecycle rule deletes after a day
(template.yaml), and a presigned link that downloads one.
"""

from __future__ import annotations

from svc_core.adapters import aws
from svc_core.platform.config import settings

PREFIX = "audit-exports/"


def key_of(tenant_id: str, export_id: str) -> str:
    return f"{PREFIX}{tenant_id}/{export_id}.jsonl"


def put(tenant_id: str, export_id: str, content: bytes) -> None:
    aws.client("s3").put_object(Bucket=settings().project_files_bucket, Key=key_of(tenant_id, export_id),
                                Body=content, ContentType="application/jsonl",
                                ContentDisposition=f'attachment; filename="audit-log-{export_id}.jsonl"')


def download_url(tenant_id: str, export_id: str, seconds: int) -> str:
    """A link that downloads the export (GET) for `seconds`, signed with the function's credentials."""
    return aws.client("s3").generate_presigned_url(
        "get_object", Params={"Bucket": settings().project_files_bucket, "Key": key_of(tenant_id, export_id)},
        ExpiresIn=seconds)
