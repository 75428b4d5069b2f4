"""The users table.

Two kinds of item: USER#<id> (the user) and EMAIL#<lower-cased e-mail> (points at the user).
Creating a user writes both in one transaction whose condition on the e-mail item makes
e-mail addresses unique, case-insensitively, under any concurrency.
"""

from __future__ import annotations

from typing import Any

from svc_core import aws
from svc_core.config import settings
from svc_core.dynamo import from_item, to_item


def _table() -> str:
    return settings().users_table


def put_new(user: dict[str, Any]) -> list[dict[str, Any]]:
    """TransactWriteItems entries that create a user and claim its e-mail address."""
    email_key = user["email"].lower()
    return [
        {"Put": {"TableName": _table(), "Item": to_item({"pk": f"USER#{user['id']}", **user}),
                 "ConditionExpression": "attribute_not_exists(pk)"}},
        {"Put": {"TableName": _table(), "Item": to_item({"pk": f"EMAIL#{email_key}", "userId": user["id"]}),
                 "ConditionExpression": "attribute_not_exists(pk)"}},
    ]


def get(user_id: str) -> dict[str, Any] | None:
    answer = aws.client("dynamodb").get_item(TableName=_table(), Key={"pk": {"S": f"USER#{user_id}"}},
                                             ConsistentRead=True)
    record = from_item(answer.get("Item"))
    if record:
        record.pop("pk", None)
    return record
