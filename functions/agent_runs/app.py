"""Runs agent runs in the background: queued ones (async, or approved/rejected in the background)
and those a request handed over at its time budget.

Each message is {tenantId, runId}; the rules are in svc_core/domain/agent_runs.py (continue_run).
The queue's BatchSize is 1: a run may take the worker's whole budget. A message for a run that is
not queued, or running with a lease someone still holds, does nothing (redeliveries are harmless);
an exception leaves the message to be retried and, after maxReceiveCount, in the dead letters.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

from svc_core.domain import agent_runs
from svc_core.platform.log import logger

processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


def run_message(record) -> None:
    message = json.loads(record.body)
    run = agent_runs.continue_run(message["tenantId"], message["runId"])
    logger.info("agent run message", extra={"run_id": message["runId"],
                                            "outcome": run["status"] if run else "nothing to do"})


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_partial_response(event=event, record_handler=run_message, processor=processor, context=context)
