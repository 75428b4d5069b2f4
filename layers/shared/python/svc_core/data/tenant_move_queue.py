"""The queue of moves between cells (TenantMoveQueue, with a DLQ), read by TenantMoveFunction.

A message is {tenantId}: the move's item in the directory says what is left to do
(svc_core/domain/tenant_moves.py), so a message delivered twice or late is harmless.
"""

from __future__ import annotations

import json

from svc_core.adapters import aws
from svc_core.platform.config import settings


def send(tenant_id: str, delay_seconds: int = 0) -> None:
    aws.client("sqs").send_message(QueueUrl=settings().tenant_move_queue_url, DelaySeconds=delay_seconds,
                                   MessageBody=json.dumps({"tenantId": tenant_id}))
