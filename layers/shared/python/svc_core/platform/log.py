"""Structured JSON logs (Powertools Logger) that never carry a credential.

Handlers never log events, headers or bodies; as a second line of defence the formatter
scrubs anything shaped like an API key, a bearer token, a JWT, a webhook secret or a
password field from every line before it is written.
"""

from __future__ import annotations

import logging
import re

from aws_lambda_powertools import Logger
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter

_SECRET_SHAPES = re.compile(
    r"svc_(?:sdk|cli|ci|int|mkt)_[0-9A-Za-z]+"          # API keys
    r"|(?i:bearer)\s+[^\s\"',]+"                         # Authorization values
    r"|(?i:basic)\s+[A-Za-z0-9+/]{8,}={0,2}"             # Basic credentials (base64 user:password)
    r"|eyJ[0-9A-Za-z_-]+\.[0-9A-Za-z_-]+\.[0-9A-Za-z_-]*"  # JWTs
    r"|whsec_[0-9A-Za-z+/=]+"                            # webhook secrets
    r"|rt_ses_[0-9A-Za-z]+\.[0-9A-Za-z_-]+"                # refresh tokens
    r"|prt_[0-9A-Za-z]+\.[0-9A-Za-z_-]+"                   # password reset links' tokens
    r"|(?i:\"(?:password|secret|token|apiKey|key)\"\s*:\s*\"[^\"]*\")"
)


def scrub(text: str) -> str:
    return _SECRET_SHAPES.sub("[REDACTED]", text)


class RedactingFormatter(LambdaPowertoolsFormatter):
    def format(self, record):
        return scrub(super().format(record))


logger = Logger(logger_formatter=RedactingFormatter())

# botocore's DEBUG lines carry every AWS request's and answer's body (an e-mailed link with its token, a
# secret's value sent to Secrets Manager), written by the runtime's own handler, which scrubs nothing:
# never let them, whatever the log level (a deployment's LogLevel=DEBUG included).
for _name in ("botocore.endpoint", "botocore.parsers"):
    logging.getLogger(_name).setLevel(logging.INFO)
