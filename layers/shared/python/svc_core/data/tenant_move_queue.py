"""The queue of moves between cells (TenantMoveQueue, with a DLQ), read by TenantMoveFunction.

A message is {tenantId}: the move's item in the directory says what is left to do
(svc_core/domain/tenant_moves.py), so a message delivered twice or late is harmless. A message with a
`job` is another task of the same worker: "replica" seeds the tenant's secondary cell
(svc_core/domain/tenant_replicas.py), the same whenever it runs.
"""

from __future__ import annotations

import json

from svc_core.adapters import aws
from svc_core.platform.config import settings


def send(tenant_id: str, delay_seconds: int = 0) -> None:
    aws.client("sqs").send_message(QueueUrl=settings().tenant_move_queue_url, DelaySeconds=delay_seconds,
                                   MessageBody=json.dumps({"tenantId": tenant_id}))


def send_job(tenant_id: str, job: str, **fields: str | None) -> None:
    body = {"tenantId": tenant_id, "job": job, **{k: v for k, v in fields.items() if v is not None}}
    aws.client("sqs").send_message(QueueUrl=settings().tenant_move_queue_url, MessageBody=json.dumps(body))
