"""The answer of a CloudFormation custom resource's function: a PUT of the outcome to the event's
pre-signed ResponseURL (what cfn-response does; its module is only on Lambda's inline functions)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

REASON_LIMIT = 1000   # CloudFormation shows the reason in the stack's events; keep it readable


def respond(event: dict[str, Any], status: str, physical_id: str, reason: str = "") -> None:
    body = json.dumps({
        "Status": status, "Reason": (reason or status)[:REASON_LIMIT], "PhysicalResourceId": physical_id,
        "StackId": event["StackId"], "RequestId": event["RequestId"], "LogicalResourceId": event["LogicalResourceId"],
    }).encode()
    request = urllib.request.Request(event["ResponseURL"], data=body, method="PUT",
                                     headers={"Content-Type": "", "Content-Length": str(len(body))})
    urllib.request.urlopen(request, timeout=10).close()
