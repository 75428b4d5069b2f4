"""The users table (partition pk, sort sk).

- (USER#<id>, PROFILE): the user: email, name, status, passwordHash, created_at; tenantsCreated (the
  tenants the user has created, their registration's the first: at most TENANTS_PER_USER) and
  welcomeCreditTenant (the tenant that got the user's one welcome credit), both changed in the
  transaction that creates a tenant. A profile written before they existed has neither: that user
  registered with a tenant of their own, whose account has its welcome credit.
- (EMAIL#<normalised e-mail>, EMAIL): points at the user. Written with the profile in one
  transaction whose condition makes e-mail addresses unique in their normalised form (NFKC,
  case-folded, trimmed: svc_core/contracts/email_address.py). Claims written before that were merely
  lower-cased; a look-up falls back to that form.
- (USER#<id>, MEMBER#<tenant id>): a membership: the tenant and the user's role in it, and the
  member's e-mail and name as they were when they joined (what a member list shows without a read
  per member). The byTenant index (tenantId, pk) lists a tenant's memberships: only they carry tenantId.
- (IDP#<issuer>#<subject>, IDP): the identity-provider account a user signs in with.
- (RESET#<prt_ id>, PASSWORD_RESET): a link e-mailed to reset the user's password: userId, secretHash
  (the SHA-256 of the link's token, never the token), expiresAt, created_at, usedAt once used, ttl (a
  day after it expires: DynamoDB's TTL removes it). Only the profile's passwordResetId, the latest
  link's id, is a live link: a newer one, a reset or a change of the password leaves older ones dead.
One Query on USER#<id> returns the user with all their memberships.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import from_item, values
from svc_core.contracts import email_address
from svc_core.data.common import bounded_addition
from svc_core.data.table import Table

_TABLE = Table("users_table", ("pk", "sk"), private=("pk", "sk"))


def _put_new_claiming(user: dict[str, Any], claim_pk: str, claim_sk: str) -> list[dict[str, Any]]:
    """The user (who has created no tenant unless `user` says so), and the item that claims what
    names them: both only if neither exists yet."""
    return [
        _TABLE.put_entry({"pk": f"USER#{user['id']}", "sk": "PROFILE", "tenantsCreated": 0, **user},
                         ConditionExpression="attribute_not_exists(pk)"),
        _TABLE.put_entry({"pk": claim_pk, "sk": claim_sk, "userId": user["id"]},
                         ConditionExpression="attribute_not_exists(pk)"),
    ]


def put_new(user: dict[str, Any]) -> list[dict[str, Any]]:
    """TransactWriteItems entries that create a user and claim its e-mail address."""
    return _put_new_claiming(user, f"EMAIL#{email_address.normalise(user['email'])}", "EMAIL")


def put_membership(user_id: str, tenant_id: str, role: str, since: str, *, email: str | None = None,
                   name: str | None = None, only_new: bool = False) -> dict[str, Any]:
    """only_new: on the condition that the user is not a member yet (an invitation accepted)."""
    record = {"pk": f"USER#{user_id}", "sk": f"MEMBER#{tenant_id}", "tenantId": tenant_id, "userId": user_id,
              "role": role, "created_at": since, "email": email, "name": name}
    return _TABLE.put_entry({k: v for k, v in record.items() if v is not None},
                            **({"ConditionExpression": "attribute_not_exists(pk)"} if only_new else {}))


def set_role_entry(user_id: str, tenant_id: str, role: str, expected: str, at: str) -> dict[str, Any]:
    """A TransactWriteItems entry changing a member's role, only if it is still `expected`."""
    return _TABLE.update_entry(_TABLE.key(f"USER#{user_id}", f"MEMBER#{tenant_id}"),
                               UpdateExpression="SET #r = :role, updated_at = :at", ConditionExpression="#r = :expected",
                               ExpressionAttributeNames={"#r": "role"},
                               ExpressionAttributeValues=values(role=role, expected=expected, at=at))


def delete_membership_entry(user_id: str, tenant_id: str, expected_role: str) -> dict[str, Any]:
    """A TransactWriteItems entry ending a membership, only if its role is still `expected_role`."""
    return _TABLE.delete_entry(_TABLE.key(f"USER#{user_id}", f"MEMBER#{tenant_id}"), ConditionExpression="#r = :expected",
                               ExpressionAttributeNames={"#r": "role"},
                               ExpressionAttributeValues=values(expected=expected_role))


def role_check_entry(user_id: str, tenant_id: str, role: str) -> dict[str, Any]:
    """A TransactWriteItems entry that writes nothing: the transaction holds only while the user is a
    member of the tenant with this role (the caller's own role, checked with the change it allows)."""
    return {"ConditionCheck": {"TableName": _TABLE.name, "Key": _TABLE.key(f"USER#{user_id}", f"MEMBER#{tenant_id}"),
                               "ConditionExpression": "#r = :role", "ExpressionAttributeNames": {"#r": "role"},
                               "ExpressionAttributeValues": values(role=role)}}


def roles_check_entry(user_id: str, tenant_id: str, roles: Sequence[str]) -> dict[str, Any]:
    """A TransactWriteItems entry that writes nothing: the transaction holds only while the user is a
    member of the tenant with one of these roles."""
    names = {f":r{i}": {"S": role} for i, role in enumerate(roles)}
    return {"ConditionCheck": {"TableName": _TABLE.name, "Key": _TABLE.key(f"USER#{user_id}", f"MEMBER#{tenant_id}"),
                               "ConditionExpression": f"#r IN ({', '.join(names)})",
                               "ExpressionAttributeNames": {"#r": "role"}, "ExpressionAttributeValues": names}}


def tenant_created_entry(user_id: str, *, counted: int, at_most: int,
                         welcome_tenant: str | None = None) -> dict[str, Any]:
    """A TransactWriteItems entry counting one more tenant created by the user, only if the user
    exists and the count stays at most at_most (a profile without the count holds `counted`);
    with welcome_tenant, giving the user's welcome credit to that tenant, only if no tenant has it
    yet (of two creations at once, one gets it and the other's transaction fails)."""
    addition, bounds, vals = bounded_addition(counted, 1, at_most=at_most)
    sets, conditions, names = [addition], ["attribute_exists(pk)", *bounds], {"#c": "tenantsCreated"}
    if welcome_tenant is not None:
        sets.append("#w = :welcome")
        conditions.append("attribute_not_exists(#w)")
        names["#w"], vals["welcome"] = "welcomeCreditTenant", welcome_tenant
    return _TABLE.update_entry(_TABLE.key(f"USER#{user_id}", "PROFILE"), UpdateExpression="SET " + ", ".join(sets),
                               ConditionExpression=" AND ".join(conditions), ExpressionAttributeNames=names,
                               ExpressionAttributeValues=values(**vals))


def membership(user_id: str, tenant_id: str) -> dict[str, Any] | None:
    """One membership, read consistently (None: not a member)."""
    found = _TABLE.get(f"USER#{user_id}", f"MEMBER#{tenant_id}")
    if found is not None:
        found.setdefault("userId", user_id)
    return found


def members_of(tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """A page of the tenant's memberships (the byTenant index, by user id), after the user id `after`."""
    request: dict[str, Any] = {"TableName": _TABLE.name, "IndexName": "byTenant", "Limit": limit,
                               "KeyConditionExpression": "tenantId = :t", "ExpressionAttributeValues": values(t=tenant_id)}
    if after:
        request["ExclusiveStartKey"] = {"tenantId": {"S": tenant_id}, "pk": {"S": f"USER#{after}"},
                                        "sk": {"S": f"MEMBER#{tenant_id}"}}
    answer = aws.client("dynamodb").query(**request)
    found = []
    for item in map(from_item, answer.get("Items", [])):
        user_id = item.pop("pk").removeprefix("USER#")
        item.pop("sk")
        found.append({**item, "userId": user_id})
    last = answer.get("LastEvaluatedKey")
    return found, (last["pk"]["S"].removeprefix("USER#") if last else None)


def with_memberships(user_id: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The user and their memberships (one consistent query)."""
    answer = aws.client("dynamodb").query(
        TableName=_TABLE.name, KeyConditionExpression="pk = :pk", ExpressionAttributeValues=values(pk=f"USER#{user_id}"),
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
        claim = _TABLE.get(f"EMAIL#{form}", "EMAIL")
        if claim:
            return claim["userId"]
    return None


def get(user_id: str) -> dict[str, Any] | None:
    return _TABLE.get(f"USER#{user_id}", "PROFILE")


def set_status(user_id: str, status: str) -> None:
    aws.client("dynamodb").update_item(
        TableName=_TABLE.name, Key=_TABLE.key(f"USER#{user_id}", "PROFILE"),
        UpdateExpression="SET #s = :s", ConditionExpression="attribute_exists(pk)",
        ExpressionAttributeNames={"#s": "status"}, ExpressionAttributeValues=values(s=status))


def put_new_federated(user: dict[str, Any], issuer: str, subject: str) -> list[dict[str, Any]]:
    """TransactWriteItems entries for a user known by an identity provider's (iss, sub): the
    user, and the link whose condition makes one (iss, sub) one user. The provider's e-mail is
    kept on the user but claims nothing: it cannot take over an account that signs in otherwise."""
    return _put_new_claiming(user, f"IDP#{issuer}#{subject}", "IDP")


def id_for_federated(issuer: str, subject: str) -> str | None:
    link = _TABLE.get(f"IDP#{issuer}#{subject}", "IDP")
    return link["userId"] if link else None


# ---- the password and its reset links, the name ----------------------------------------------------

RESET_KEPT_SECONDS = 86400   # a link is kept a day after it expires, to be told used or expired, not unknown


def _profile_key(user_id: str) -> dict[str, Any]:
    return _TABLE.key(f"USER#{user_id}", "PROFILE")


def _reset_key(reset_id: str) -> dict[str, Any]:
    return _TABLE.key(f"RESET#{reset_id}", "PASSWORD_RESET")


def reset_requested_entries(user_id: str, reset: dict[str, Any]) -> list[dict[str, Any]]:
    """TransactWriteItems entries storing a new reset link ({id, secretHash, expiresAt, created_at})
    and making it the user's live one (any earlier link dies), only while the account is active."""
    return [
        _TABLE.put_entry({"pk": f"RESET#{reset['id']}", "sk": "PASSWORD_RESET", "userId": user_id,
                          "secretHash": reset["secretHash"], "expiresAt": reset["expiresAt"],
                          "created_at": reset["created_at"], "ttl": reset["expiresAt"] + RESET_KEPT_SECONDS},
                         ConditionExpression="attribute_not_exists(pk)"),
        _TABLE.update_entry(_profile_key(user_id), UpdateExpression="SET passwordResetId = :id",
                            ConditionExpression="attribute_exists(pk) AND #s = :active",
                            ExpressionAttributeNames={"#s": "status"},
                            ExpressionAttributeValues=values(id=reset["id"], active="active")),
    ]


def password_reset(reset_id: str) -> dict[str, Any] | None:
    """A reset link's record, read consistently (None: no such link, or one long gone)."""
    found = _TABLE.get(f"RESET#{reset_id}", "PASSWORD_RESET")
    return {**found, "id": reset_id} if found is not None else None


def reset_used_entries(user_id: str, reset_id: str, secret_hash: str, password_hash: str,
                       now: int) -> list[dict[str, Any]]:
    """TransactWriteItems entries setting the new password with the link, once: only while the link is
    the user's live one (the profile's passwordResetId, then removed), unused, unexpired, this
    token's, and the account active."""
    return [
        _TABLE.update_entry(_profile_key(user_id), UpdateExpression="SET passwordHash = :hash REMOVE passwordResetId",
                            ConditionExpression="passwordResetId = :id AND #s = :active",
                            ExpressionAttributeNames={"#s": "status"},
                            ExpressionAttributeValues=values(hash=password_hash, id=reset_id, active="active")),
        _TABLE.update_entry(_reset_key(reset_id), UpdateExpression="SET usedAt = :now",
                            ConditionExpression="attribute_not_exists(usedAt) AND secretHash = :secret "
                                                "AND expiresAt > :now",
                            ExpressionAttributeValues=values(now=now, secret=secret_hash)),
    ]


def password_changed_entry(user_id: str, password_hash: str, expected_hash: str) -> dict[str, Any]:
    """A TransactWriteItems entry replacing the password, only if it is still the one checked (no
    change in between wins silently); a pending reset link dies with the old password."""
    return _TABLE.update_entry(_profile_key(user_id), UpdateExpression="SET passwordHash = :hash "
                                                                       "REMOVE passwordResetId",
                               ConditionExpression="passwordHash = :expected AND #s = :active",
                               ExpressionAttributeNames={"#s": "status"},
                               ExpressionAttributeValues=values(hash=password_hash, expected=expected_hash,
                                                                active="active"))


def name_entry(user_id: str, name: str) -> dict[str, Any]:
    """A TransactWriteItems entry setting the profile's name (the user exists)."""
    return _TABLE.update_entry(_profile_key(user_id), UpdateExpression="SET #n = :name",
                               ConditionExpression="attribute_exists(pk)", ExpressionAttributeNames={"#n": "name"},
                               ExpressionAttributeValues=values(name=name))


def membership_name_entry(user_id: str, tenant_id: str, name: str) -> dict[str, Any]:
    """A TransactWriteItems entry setting the name a membership shows (what the members list reads),
    if the membership still exists."""
    return _TABLE.update_entry(_TABLE.key(f"USER#{user_id}", f"MEMBER#{tenant_id}"), UpdateExpression="SET #n = :name",
                               ConditionExpression="attribute_exists(pk)", ExpressionAttributeNames={"#n": "name"},
                               ExpressionAttributeValues=values(name=name))
