"""The users table (partition pk, sort sk).

- (USER#<id>, PROFILE): the user: email, name, status, passwordHash, created_at.
- (EMAIL#<normalised e-mail>, EMAIL): points at the user. Written with the profile in one
  transaction whose condition makes e-mail addresses unique in their normalised form (NFKC,
  case-folded, trimmed: svc_core/contracts/email_address.py). Claims written before that were merely
  lower-cased; a look-up falls back to that form.
- (USER#<id>, MEMBER#<tenant id>): a membership: the tenant and the user's role in it.
- (IDP#<issuer>#<subject>, IDP): the identity-provider account a user signs in with.
One Query on USER#<id> returns the user with all their memberships.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, to_item, values
from svc_core.contracts import email_address
from svc_core.platform.config import settings


def _table() -> str:
    return settings().users_table


def _put_new_claiming(user: dict[str, Any], claim_pk: str, claim_sk: str) -> list[dict[str, Any]]:
    """The user, and the item that claims what names them: both only if neither exists yet."""
    return [
        {"Put": {"TableName": _table(), "Item": to_item({"pk": f"USER#{user['id']}", "sk": "PROFILE", **user}),
                 "ConditionExpression": "attribute_not_exists(pk)"}},
        {"Put": {"TableName": _table(), "Item": to_item({"pk": claim_pk, "sk": claim_sk, "userId": user["id"]}),
                 "ConditionExpression": "attribute_not_exists(pk)"}},
    ]


def put_new(user: dict[str, Any]) -> list[dict[str, Any]]:
    """TransactWriteItems entries that create a user and claim its e-mail address."""
    return _put_new_claiming(user, f"EMAIL#{email_address.normalise(user['email'])}", "EMAIL")


def put_membership(user_id: str, tenant_id: str, role: str, since: str) -> dict[str, Any]:
    return {"Put": {"TableName": _table(), "Item": to_item({
        "pk": f"USER#{user_id}", "sk": f"MEMBER#{tenant_id}", "tenantId": tenant_id, "role": role,
        "created_at": since})}}


def with_memberships(user_id: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The user and their memberships (one consistent query)."""
    answer = aws.client("dynamodb").query(
        TableName=_table(), KeyConditionExpression="pk = :pk", ExpressionAttributeValues=values(pk=f"USER#{user_id}"),
        ConsistentRead=True)
    user, memberships = None, []
    for item in map(from_item, answer.get("Items", [])):
        sk = item.pop("sk")
        item.pop("pk")
        if sk == "PROFILE":
            user = item
        else:
            memberships.append(item)
    return user, memberships


def id_for_email(email: str) -> str | None:
    normalised, legacy = email_address.normalise(email), email.strip().lower()
    for form in (normalised, legacy) if legacy != normalised else (normalised,):
        answer = aws.client("dynamodb").get_item(
            TableName=_table(), Key={"pk": {"S": f"EMAIL#{form}"}, "sk": {"S": "EMAIL"}}, ConsistentRead=True)
        item = answer.get("Item")
        if item:
            return item["userId"]["S"]
    return None


def get(user_id: str) -> dict[str, Any] | None:
    answer = aws.client("dynamodb").get_item(
        TableName=_table(), Key={"pk": {"S": f"USER#{user_id}"}, "sk": {"S": "PROFILE"}}, ConsistentRead=True)
    record = from_item(answer.get("Item"))
    if record:
        record.pop("pk")
        record.pop("sk")
    return record


def set_status(user_id: str, status: str) -> None:
    aws.client("dynamodb").update_item(
        TableName=_table(), Key={"pk": {"S": f"USER#{user_id}"}, "sk": {"S": "PROFILE"}},
        UpdateExpression="SET #s = :s", ConditionExpression="attribute_exists(pk)",
        ExpressionAttributeNames={"#s": "status"}, ExpressionAttributeValues=values(s=status))


def put_new_federated(user: dict[str, Any], issuer: str, subject: str) -> list[dict[str, Any]]:
    """TransactWriteItems entries for a user known by an identity provider's (iss, sub): the
    user, and the link whose condition makes one (iss, sub) one user. The provider's e-mail is
    kept on the user but claims nothing: it cannot take over an account that signs in otherwise."""
    return _put_new_claiming(user, f"IDP#{issuer}#{subject}", "IDP")


def id_for_federated(issuer: str, subject: str) -> str | None:
    answer = aws.client("dynamodb").get_item(
        TableName=_table(), Key={"pk": {"S": f"IDP#{issuer}#{subject}"}, "sk": {"S": "IDP"}}, ConsistentRead=True)
    item = answer.get("Item")
    return item["userId"]["S"] if item else None
