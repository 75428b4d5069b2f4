"""A tenant's content between cells:
- the worker of TenantMoveQueue: a move (one message per move, {tenantId}: the move's item in the
  directory says which step is next, svc_core/domain/tenant_moves.py), or a "replica" job (the seed of
  the tenant's secondary cell, svc_core/domain/tenant_replicas.py);
- in a deployment of several cells, the changes of the tables' streams, and the bucket's objects
  (ReplicaObjectsQueue), carried to each tenant's secondary cell;
- the stack's custom resource CellResources, which publishes this cell's tables, bucket and key in the
  directory at deploy time, where another cell reads them."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from svc_core.domain import tenant_moves, tenant_replicas
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


def _stream_changes(records: list[dict[str, Any]]) -> dict[str, Any]:
    ages, failed = tenant_replicas.carry_records(records)
    if ages:
        logger.info("changes carried to secondary cells", extra={"carried": len(ages),
                                                                 "lagMs": round(max(ages) * 1000)})
    if failed is not None:
        logger.warning("carrying a change to a secondary cell failed; the batch resumes from it")
        return {"batchItemFailures": [{"itemIdentifier": failed}]}
    return {"batchItemFailures": []}


def _message(record: dict[str, Any]) -> None:
    body = json.loads(record["body"])
    if body.get("source") == "aws.s3":   # an object of the bucket written or deleted (its EventBridge event)
        tenant_replicas.carry_object(body["detail"]["object"]["key"])
        return
    tenant_id = body["tenantId"]
    if body.get("job") == "replica":
        status = tenant_replicas.run_job(tenant_id, body.get("dropRegion"))
        logger.info("tenant replica job", extra={"tenant_id": tenant_id, "status": status})
        return
    status = tenant_moves.run(tenant_id)
    logger.info("tenant move step", extra={"tenant_id": tenant_id, "status": status})


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any] | None:
    if "RequestType" in event:
        _custom_resource(event)
        return None
    records = event.get("Records", [])
    if records and records[0].get("eventSource") == "aws:dynamodb":
        return _stream_changes(records)
    failures = []
    for record in records:
        try:
            _message(record)
        except Exception:
            logger.exception("a tenant's move or copy failed; its message comes back and it resumes")
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}
