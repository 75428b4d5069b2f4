"""The chat turn queue: one message per assistant turn, {tenantId, sessionId, messageId}, for the
chat turn worker (functions/chat_turns)."""

from __future__ import annotations

import json

from svc_core.adapters import aws
from svc_core.platform.config import settings


def body(tenant_id: str, session_id: str, message_id: str) -> str:
    return json.dumps({"tenantId": tenant_id, "sessionId": session_id, "messageId": message_id},
                      separators=(",", ":"))


def send(tenant_id: str, session_id: str, message_id: str) -> None:
    aws.client("sqs").send_message(QueueUrl=settings().chat_turn_queue_url,
                                   MessageBody=body(tenant_id, session_id, message_id))
