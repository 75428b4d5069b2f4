"""A project's files where the tenant keeps them: the platform's bucket, or its own (BYOS).

One small interface (ProjectFiles: put, get, list_files, delete_all) with three implementations under the
same key layout, `tenants/<tenantId>/projects/<projectId>/files/<path>`:
- platform: the S3 bucket ProjectFilesBucket (svc_core/adapters/project_files_bucket.py);
- BYOS s3, r2, gcs: the tenant's bucket through botocore's S3 client, with its endpoint and keys;
- BYOS azure: the tenant's container through azure-storage-blob (shared key).
The BYOS clients are storage_probe's: every request goes to the address endpoint_guard checked
(pinned pool), with the probe's short timeouts and no retries. Which implementation a tenant's
files use, the endpoint's check (anew each time the files are opened) and the unsealing of the
keys are the domain's (svc_core/domain/storage.py: files_for); the keys stay in memory for the
run's segment, never logged or answered.

A BYOS failure (refused endpoint, keys that no longer open, bad credentials, no bucket, timeout)
is StorageUnavailable with a message a user can act on; the caller (the agent's tools) gives it to
the model as the tool's error. It never falls back to the platform bucket: a tenant that chose
its own storage keeps its files there.
"""

from __future__ import annotations

from typing import Any, Protocol

from svc_core.adapters import project_files_bucket, storage_probe

MAX_LISTED = project_files_bucket.MAX_LISTED
CONTENT_TYPE = "text/plain; charset=utf-8"


class ProjectFiles(Protocol):
    def put(self, tenant_id: str, project_id: str, path: str, content: bytes) -> None: ...

    def get(self, tenant_id: str, project_id: str, path: str) -> bytes | None: ...

    def list_files(self, tenant_id: str, project_id: str, prefix: str = "") -> tuple[list[dict[str, Any]], bool]: ...

    def delete_all(self, tenant_id: str, project_id: str) -> int: ...


class StorageUnavailable(Exception):
    """The tenant's own storage could not be used; the message says why (never a key)."""


def byos_files(connection: storage_probe.Connection) -> ProjectFiles:
    """The files in the tenant's own storage, through a connection to a checked address."""
    return AzureFiles(connection) if connection.provider == "azure" else S3CompatibleFiles(connection)


def _unavailable(failed: storage_probe.StepFailed) -> StorageUnavailable:
    code = f" ({failed.code})" if failed.code else ""
    return StorageUnavailable(f"The tenant's storage failed{code}: {storage_probe.MESSAGES[failed.reason]}")


class S3CompatibleFiles:
    """The tenant's S3, R2 or GCS bucket (S3 API)."""

    def __init__(self, connection: storage_probe.Connection) -> None:
        self.connection = connection
        self._client: Any = None

    def _s3(self) -> Any:
        if self._client is None:
            self._client = storage_probe._s3_client(self.connection)
        return self._client

    def _call(self, operation: str, **kwargs: Any) -> Any:
        try:
            return getattr(self._s3(), operation)(Bucket=self.connection.bucket, **kwargs)
        except Exception as exc:
            raise _unavailable(storage_probe._s3_failure(exc)) from None

    def put(self, tenant_id: str, project_id: str, path: str, content: bytes) -> None:
        self._call("put_object", Key=project_files_bucket.key_of(tenant_id, project_id, path), Body=content,
                   ContentType=CONTENT_TYPE)

    def get(self, tenant_id: str, project_id: str, path: str) -> bytes | None:
        try:
            answer = self._s3().get_object(Bucket=self.connection.bucket,
                                           Key=project_files_bucket.key_of(tenant_id, project_id, path))
            return answer["Body"].read()
        except Exception as exc:
            failed = storage_probe._s3_failure(exc)
            if failed.code in ("NoSuchKey", "404"):
                return None
            raise _unavailable(failed) from None

    def list_files(self, tenant_id: str, project_id: str, prefix: str = "") -> tuple[list[dict[str, Any]], bool]:
        return project_files_bucket.listed(lambda request: self._call("list_objects_v2", **request),
                                           project_files_bucket.key_of(tenant_id, project_id, ""), prefix)

    def delete_all(self, tenant_id: str, project_id: str) -> int:
        return project_files_bucket.deleted_all(
            lambda request: self._call("list_objects_v2", **request),
            lambda keys: self._call("delete_objects", Delete={"Objects": keys, "Quiet": True}),
            project_files_bucket.key_of(tenant_id, project_id, ""))


class AzureFiles:
    """The tenant's Azure Blob Storage container."""

    def __init__(self, connection: storage_probe.Connection) -> None:
        self.connection = connection
        self._container: Any = None

    def _blobs(self) -> Any:
        if self._container is None:
            self._container = storage_probe._azure_container(self.connection)
        return self._container

    def put(self, tenant_id: str, project_id: str, path: str, content: bytes) -> None:
        from azure.storage.blob import ContentSettings
        try:
            self._blobs().upload_blob(project_files_bucket.key_of(tenant_id, project_id, path), content,
                                      overwrite=True, content_settings=ContentSettings(content_type=CONTENT_TYPE))
        except Exception as exc:
            raise _unavailable(storage_probe._azure_failure(exc)) from None

    def get(self, tenant_id: str, project_id: str, path: str) -> bytes | None:
        try:
            return self._blobs().download_blob(project_files_bucket.key_of(tenant_id, project_id, path)).readall()
        except Exception as exc:
            code = getattr(exc, "error_code", None)
            if getattr(code, "value", code) == "BlobNotFound":  # a StorageErrorCode (str enum) or its text
                return None
            raise _unavailable(storage_probe._azure_failure(exc)) from None

    def list_files(self, tenant_id: str, project_id: str, prefix: str = "") -> tuple[list[dict[str, Any]], bool]:
        base = project_files_bucket.key_of(tenant_id, project_id, "")
        files: list[dict[str, Any]] = []
        try:
            for blob in self._blobs().list_blobs(name_starts_with=base + prefix):
                if len(files) == MAX_LISTED:
                    return files, True
                files.append({"path": blob.name[len(base):], "size": int(blob.size)})
        except Exception as exc:
            raise _unavailable(storage_probe._azure_failure(exc)) from None
        return files, False

    def delete_all(self, tenant_id: str, project_id: str) -> int:
        base = project_files_bucket.key_of(tenant_id, project_id, "")
        try:
            names = [blob.name for blob in self._blobs().list_blobs(name_starts_with=base)]
            for name in names:
                self._blobs().delete_blob(name)
        except Exception as exc:
            raise _unavailable(storage_probe._azure_failure(exc)) from None
        return len(names)
