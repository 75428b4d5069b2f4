"""Sending e-mail through Amazon SES (the SESv2 SendEmail API).

The sender is the deployment's verified SES identity (EMAIL_SENDER, the template's EmailSender);
the configuration set (EMAIL_CONFIGURATION_SET) sends bounces and complaints to an SNS topic whose
function logs them (functions/email_events). The message is rendered by the caller, subject, text
and HTML, and sent as simple content. On the local stack the endpoint is the emulator, which
keeps what was sent (devstack/mailbox.py reads it).
"""

from __future__ import annotations

from dataclasses import dataclass

from svc_core.adapters import aws
from svc_core.platform.config import settings


class EmailNotConfigured(Exception):
    """The deployment has no sender identity (EmailSender is empty)."""


class EmailNotSent(Exception):
    """SES refused or did not answer; the message was not sent."""


@dataclass(frozen=True)
class Message:
    to: str
    subject: str
    text: str
    html: str


def send(message: Message) -> str:
    """Send one message; SES's message id."""
    cfg = settings()
    if not cfg.email_sender:
        raise EmailNotConfigured()
    request = {"FromEmailAddress": cfg.email_sender, "Destination": {"ToAddresses": [message.to]},
               "Content": {"Simple": {"Subject": {"Data": message.subject, "Charset": "UTF-8"},
                                      "Body": {"Text": {"Data": message.text, "Charset": "UTF-8"},
                                               "Html": {"Data": message.html, "Charset": "UTF-8"}}}}}
    if cfg.email_configuration_set:
        request["ConfigurationSetName"] = cfg.email_configuration_set
    try:
        return aws.client("sesv2").send_email(**request)["MessageId"]
    except Exception as exc:
        raise EmailNotSent(aws.error_code(exc) or type(exc).__name__) from exc
