"""The queue of agent runs to run or continue in the background (AgentRunQueue, with a DLQ).

A message is {tenantId, runId}: the run itself says what to do (svc_core/domain/agent_runs.py),
so a message delivered twice, late, or for a run that someone else took is harmless.
"""

from __future__ import annotations

import json

from svc_core.adapters import aws
from svc_core.platform.config import settings


def send(tenant_id: str, run_id: str, delay_seconds: int = 0) -> None:
    """delay_seconds (at most 900): the message shows only then (a watchdog for a run a request holds)."""
    aws.client("sqs").send_message(QueueUrl=settings().agent_run_queue_url, DelaySeconds=delay_seconds,
                                   MessageBody=json.dumps({"tenantId": tenant_id, "runId": run_id}))
