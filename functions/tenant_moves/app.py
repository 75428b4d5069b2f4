"""Moves of a tenant between cells: the worker of TenantMoveQueue (one message per move, {tenantId}:
the move's item in the directory says which step is next, svc_core/domain/tenant_moves.py), and the
stack's custom resource CellResources, which publishes this cell's tables, bucket and key in the
directory at deploy time, where a cell moving a tenant here reads them."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from svc_core.domain import tenant_moves
from svc_core.platform.log import logger


def _respond(event: dict[str, Any], status: str) -> None:
    body = json.dumps({"Status": status, "Reason": status if status == "SUCCESS" else "see the function's logs",
                       "PhysicalResourceId": "cell-resources", "StackId": event["StackId"],
                       "RequestId": event["RequestId"], "LogicalResourceId": event["LogicalResourceId"]}).encode()
    request = urllib.request.Request(event["ResponseURL"], data=body, method="PUT",
                                     headers={"Content-Type": "", "Content-Length": str(len(body))})
    urllib.request.urlopen(request, timeout=10).close()


def _custom_resource(event: dict[str, Any]) -> None:
    try:
        if event["RequestType"] in ("Create", "Update"):
            tenant_moves.publish_cell()
        _respond(event, "SUCCESS")
    except Exception:
        logger.exception("publishing the cell's resources failed")
        _respond(event, "FAILED")


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any] | None:
    if "RequestType" in event:
        _custom_resource(event)
        return None
    failures = []
    for record in event.get("Records", []):
        tenant_id = json.loads(record["body"])["tenantId"]
        try:
            status = tenant_moves.run(tenant_id)
            logger.info("tenant move step", extra={"tenant_id": tenant_id, "status": status})
        except Exception:
            logger.exception("tenant move failed; it resumes from its last step", extra={"tenant_id": tenant_id})
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}
