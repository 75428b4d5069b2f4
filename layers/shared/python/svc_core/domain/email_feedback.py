"""What SES tells about the e-mail the service sent: bounces and complaints (the configuration
set's event destination, through SNS). Each is logged for the operators, the recipients masked
as the accept page masks them (the message id finds the rest in SES if needed)."""

from __future__ import annotations

import json
from typing import Any

from svc_core.domain.invitations import mask


def summary(sns_message: str) -> dict[str, Any]:
    """One SES event (the SNS message's JSON) as a log line's fields."""
    event = json.loads(sns_message)
    kind = event.get("eventType") or event.get("notificationType") or "unknown"
    detail = event.get(kind.lower()) or {}
    recipients = [r.get("emailAddress", "") for r in
                  detail.get("bouncedRecipients") or detail.get("complainedRecipients") or []]
    return {"eventType": kind, "messageId": (event.get("mail") or {}).get("messageId"),
            "bounceType": detail.get("bounceType"), "bounceSubType": detail.get("bounceSubType"),
            "complaintType": detail.get("complaintFeedbackType"),
            "recipients": [mask(address) for address in recipients]}
