"""Idempotency-Key for POST routes (billing, and the creates), with Powertools Idempotency on DynamoDB.

The key is scoped by tenant and operation: the record's key hashes [tenantId, operation, key], and
the request body is the payload that must match. The same key with the same body answers the first
request's answer again (and does nothing again); with another body it is 422 IDEMPOTENCY_KEY_REUSED;
while the first request is still being served it is 409 REQUEST_IN_PROGRESS. A request that failed
(any error answer) leaves no record, so it can be sent again with its key. Records live 24 hours
(KEY_LIFETIME_SECONDS, as Stripe's keys), then the key may be used afresh. A request without the
header is served as it is (no protection against a retry).

A route declares the header with `idempotency_key: IdempotencyKey = None`, lists ERRORS among its
error statuses, adds DESCRIPTION to its description, and wraps its work in run().

The answer is stored as it was sent, so a replay of POST /api-keys answers the key's value again
(as Stripe answers the first response again): a client that lost the first answer can still use
the key it created, rather than hold one nobody knows. The record, with that value, lives in the
IdempotencyTable for KEY_LIFETIME_SECONDS.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Callable, Optional

from svc_core.rules.params import Header

from svc_core.adapters import aws
from svc_core.platform.config import settings
from svc_core.platform.errors import IdempotencyKeyReused, RequestInProgress, ValidationFailed

HEADER = "Idempotency-Key"
KEY_LIFETIME_SECONDS = 24 * 3600
KEY_PATTERN = re.compile(r"^[\x21-\x7e]{1,255}$")   # visible ASCII, as Stripe's keys

IdempotencyKey = Annotated[Optional[str], Header(
    alias=HEADER, min_length=1, max_length=255, pattern=KEY_PATTERN.pattern,
    description="optional; the same key and body within 24 hours answer the first answer again")]
DESCRIPTION = (" Honours Idempotency-Key: the same key and body answer the first answer again; another body is "
               "422, a request still in progress 409.")
ERRORS = (409, 422)   # REQUEST_IN_PROGRESS, IDEMPOTENCY_KEY_REUSED


def run(api: Any, operation: str, key: str | None, body: dict[str, Any] | None,
        work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The answer of work(), at most once per (tenant, operation, Idempotency-Key header's value)."""
    if key is None:
        return work()
    if not KEY_PATTERN.match(key):
        raise ValidationFailed("The Idempotency-Key header is not valid.", {"fields": [
            {"field": HEADER, "in": "header", "reason": "1 to 255 visible ASCII characters"}]})
    # Powertools imports boto3: only requests that send a key pay for it.
    from aws_lambda_powertools.utilities.idempotency import (
        DynamoDBPersistenceLayer, IdempotencyConfig, idempotent_function,
    )
    from aws_lambda_powertools.utilities.idempotency.exceptions import (
        IdempotencyAlreadyInProgressError, IdempotencyValidationError,
    )

    config = IdempotencyConfig(event_key_jmespath="[tenantId, operation, key]", payload_validation_jmespath="body",
                               expires_after_seconds=KEY_LIFETIME_SECONDS, hash_function="sha256")
    context = api.lambda_context()
    if context is not None and hasattr(context, "get_remaining_time_in_millis"):
        config.register_lambda_context(context)  # a request cut off by the timeout is not in progress forever
    store = DynamoDBPersistenceLayer(table_name=settings().idempotency_table, boto3_client=aws.client("dynamodb"))

    @idempotent_function(data_keyword_argument="request", persistence_store=store, config=config)
    def perform(request: dict[str, Any]) -> dict[str, Any]:
        return work()

    request = {"tenantId": api.tenant_context().tenant_id, "operation": operation, "key": key, "body": body}
    try:
        return perform(request=request)
    except IdempotencyValidationError:
        raise IdempotencyKeyReused("This Idempotency-Key was used with another request body.",
                                   {"header": HEADER}) from None
    except IdempotencyAlreadyInProgressError:
        raise RequestInProgress("A request with this Idempotency-Key is still being processed; retry later.",
                                {"header": HEADER}) from None
