"""Deletes a deleted project's files, told by the projects table's stream.

DELETE /projects/:id removes the project item (and emits project.deleted); its files, in the
platform bucket or the tenant's own storage, are deleted here, however many there are. A record
whose clean-up fails (the tenant's storage unreachable, say) is reported as a batch item failure
and handed over again, up to the mapping's retry limit.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

from svc_core.adapters.dynamo import from_item
from svc_core.domain import projects
from svc_core.platform.log import logger

processor = BatchProcessor(event_type=EventType.DynamoDBStreams, raise_on_entire_batch_failure=False)


def forget(record) -> None:
    keys = from_item(record.raw_event["dynamodb"]["Keys"])
    deleted = projects.forget_files(keys["tenantId"], keys["id"])
    logger.info("project files deleted", extra={"tenantId": keys["tenantId"], "projectId": keys["id"],
                                                "files": deleted})


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return process_partial_response(event=event, record_handler=forget, processor=processor, context=context)
