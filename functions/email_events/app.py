"""Logs what SES reports of the service's e-mail (bounces, complaints): the configuration set's
events, delivered through the EmailEventsTopic. A permanent bounce means the invitee's address
does not exist: the invitation can only be revoked and made again for a right address."""

from __future__ import annotations

from typing import Any

from svc_core.domain import email_feedback
from svc_core.platform.log import logger


def lambda_handler(event: dict[str, Any], context: Any) -> None:
    for record in event.get("Records", []):
        logger.warning("e-mail not delivered", extra=email_feedback.summary(record["Sns"]["Message"]))
