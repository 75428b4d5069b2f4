"""The billing table: a tenant's balance, ledger, invoices, purchases and subscription; gift cards.

Keys pk / sk. A tenant's items have pk = its id:
- sk BALANCE: {balance (micro-credits), entryCount, invoiceCount, created_at, updated_at}. Changed
  only with ADD, in the same transaction as the ledger entry it adds, so balance == sum(amounts)
  and entryCount == number of entries at every moment.
- sk ENTRY#<led_…>: one ledger entry {id, kind, amount (signed micro-credits), principal,
  requestId, reason, reference, created_at}. Entries are never changed or deleted.
- sk INVOICE#<inv_…>, PURCHASE#<pur_…>, SUBSCRIPTION, REF#<provider reference> (the mark that a
  provider's charge was credited, so a replayed confirmation credits nothing).
- sk REDEEM_FAILURES#<hour>: failed gift-card redemptions in that hour (ttl).
Other partitions: giftcard#<sha-256 of the code> (sk CARD), and stripe-customer#<cus_…> (sk
CUSTOMER, the tenant a Stripe customer belongs to).
"""

from __future__ import annotations

import random
from typing import Any

from svc_core.adapters import aws
from svc_core.adapters.dynamo import to_item, values
from svc_core.data.common import (
    ConditionFailed,
    ItemRead,
    cancellation_reasons,
    conditional,
    new_request_token,
    transact_retrying,
)
from svc_core.data.table import Table

BALANCE, SUBSCRIPTION = "BALANCE", "SUBSCRIPTION"
ENTRY, INVOICE, PURCHASE = "ENTRY#", "INVOICE#", "PURCHASE#"
TRANSACTION_ATTEMPTS = 30   # concurrent changes of one balance collide (TransactionConflict): try again


class Refused(Exception):
    """A condition of the transaction did not hold; index: which of its items (0 = the balance)."""

    def __init__(self, index: int) -> None:
        super().__init__(f"condition of item {index} failed")
        self.index = index


_TABLE = Table("billing_table", ("pk", "sk"), private=("pk", "sk"))


def write(items: list[dict[str, Any]]) -> None:
    """All the writes or none, with one ClientRequestToken (data/common.py: transact). Refused(index)
    when a condition fails; a collision with another transaction on the same item is tried again,
    up to TRANSACTION_ATTEMPTS times with jittered backoff (a busy balance is normal)."""
    try:
        transact_retrying(items, new_request_token(), TRANSACTION_ATTEMPTS,
                          lambda attempt: random.uniform(0, 0.004 * 2 ** min(attempt, 5)))
    except Exception as exc:
        reasons = cancellation_reasons(exc)
        if "ConditionalCheckFailed" in reasons:
            raise Refused(reasons.index("ConditionalCheckFailed")) from None
        raise


# ---- the balance and the ledger ------------------------------------------------------------

def balance(tenant_id: str) -> dict[str, Any] | None:
    return _TABLE.get(tenant_id, BALANCE)


def balance_read(tenant_id: str) -> ItemRead:
    """The balance item, for common.read_items (read with other items in one round trip)."""
    return _TABLE.read(tenant_id, BALANCE)


def subscription_read(tenant_id: str) -> ItemRead:
    return _TABLE.read(tenant_id, SUBSCRIPTION)


def open_account(tenant_id: str, now_iso: str, first_entry: dict[str, Any] | None) -> dict[str, Any]:
    """A TransactWriteItems entry creating the balance (with the first entry's amount, if any)."""
    amount = first_entry["amount"] if first_entry else 0
    return {"Put": {"TableName": _TABLE.name, "ConditionExpression": "attribute_not_exists(pk)",
                    "Item": to_item({"pk": tenant_id, "sk": BALANCE, "balance": amount,
                                     "entryCount": 1 if first_entry else 0, "invoiceCount": 0,
                                     "created_at": now_iso, "updated_at": now_iso})}}


def add_to_balance(tenant_id: str, amount: int, now_iso: str, invoice_count: int | None = None,
                   entries: int = 1) -> dict[str, Any]:
    """A TransactWriteItems entry adding amount to an existing balance (and counting the entries).
    invoice_count: the count read before, when an invoice is added too (its number is count + 1)."""
    condition, vals = "attribute_exists(pk)", {"amount": amount, "entries": entries, "now": now_iso}
    update = "SET updated_at = :now ADD balance :amount, entryCount :entries"
    if invoice_count is not None:
        condition += " AND invoiceCount = :seen"
        update += ", invoiceCount :one"
        vals.update(seen=invoice_count, one=1)
    return {"Update": {"TableName": _TABLE.name, "Key": _TABLE.key(tenant_id, BALANCE), "UpdateExpression": update,
                       "ConditionExpression": condition, "ExpressionAttributeValues": values(**vals)}}


def put_entry(tenant_id: str, entry: dict[str, Any]) -> dict[str, Any]:
    return {"Put": {"TableName": _TABLE.name, "ConditionExpression": "attribute_not_exists(pk)",
                    "Item": to_item({"pk": tenant_id, "sk": ENTRY + entry["id"], **entry})}}


def _page(tenant_id: str, prefix: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """Items whose sort key is prefix + id, newest first, after the id `after`."""
    return _TABLE.page(tenant_id, limit, after, prefix=prefix, ConsistentRead=True)


def list_entries(tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """A page of the ledger, newest first (entry ids are ULIDs: by the time they were made)."""
    return _page(tenant_id, ENTRY, limit, after)


def all_entries(tenant_id: str) -> list[dict[str, Any]]:
    """Every entry of the tenant, oldest first (audits and tests: a whole partition's worth)."""
    found, query = [], {"TableName": _TABLE.name, "ConsistentRead": True,
                        "KeyConditionExpression": "pk = :t AND begins_with(sk, :p)",
                        "ExpressionAttributeValues": values(t=tenant_id, p=ENTRY)}
    while True:
        answer = aws.client("dynamodb").query(**query)
        found.extend(_TABLE.public(i) for i in answer.get("Items", []))
        if "LastEvaluatedKey" not in answer:
            return found
        query["ExclusiveStartKey"] = answer["LastEvaluatedKey"]


def mark_reference(tenant_id: str, reference: str, now_iso: str) -> dict[str, Any]:
    """A TransactWriteItems entry that fails when this provider reference was credited before."""
    return {"Put": {"TableName": _TABLE.name, "ConditionExpression": "attribute_not_exists(pk)",
                    "Item": to_item({"pk": tenant_id, "sk": f"REF#{reference}", "created_at": now_iso})}}


# ---- invoices, purchases, the subscription ---------------------------------------------------

def put_invoice(tenant_id: str, invoice: dict[str, Any]) -> dict[str, Any]:
    return {"Put": {"TableName": _TABLE.name, "ConditionExpression": "attribute_not_exists(pk)",
                    "Item": to_item({"pk": tenant_id, "sk": INVOICE + invoice["id"], **invoice})}}


def get_invoice(tenant_id: str, invoice_id: str) -> dict[str, Any] | None:
    return _TABLE.get(tenant_id, INVOICE + invoice_id)


def list_invoices(tenant_id: str, limit: int, after: str | None) -> tuple[list[dict[str, Any]], str | None]:
    return _page(tenant_id, INVOICE, limit, after)


def put_purchase(tenant_id: str, purchase: dict[str, Any]) -> None:
    _TABLE.create({"pk": tenant_id, "sk": PURCHASE + purchase["id"], **purchase})


def get_purchase(tenant_id: str, purchase_id: str) -> dict[str, Any] | None:
    return _TABLE.get(tenant_id, PURCHASE + purchase_id)


def settle_purchase(tenant_id: str, purchase_id: str, status: str, fields: dict[str, Any]) -> dict[str, Any]:
    """A TransactWriteItems entry moving a pending purchase to status (fails unless it is pending)."""
    names = {f"#{k}": k for k in fields}
    return {"Update": {"TableName": _TABLE.name, "Key": _TABLE.key(tenant_id, PURCHASE + purchase_id),
                       "UpdateExpression": "SET #status = :status" + "".join(f", #{k} = :{k}" for k in fields),
                       "ConditionExpression": "#status = :pending",
                       "ExpressionAttributeNames": {"#status": "status", **names},
                       "ExpressionAttributeValues": values(status=status, pending="pending", **fields)}}


def save_purchase_fields(tenant_id: str, purchase_id: str, fields: dict[str, Any]) -> None:
    names = {f"#{k}": k for k in fields}
    aws.client("dynamodb").update_item(
        TableName=_TABLE.name, Key=_TABLE.key(tenant_id, PURCHASE + purchase_id), ConditionExpression="attribute_exists(pk)",
        UpdateExpression="SET " + ", ".join(f"#{k} = :{k}" for k in fields), ExpressionAttributeNames=names,
        ExpressionAttributeValues=values(**fields))


def fail_purchase(tenant_id: str, purchase_id: str, fields: dict[str, Any]) -> bool:
    """Mark a pending purchase failed; False when it was not pending."""
    try:
        conditional(aws.client("dynamodb").update_item, **settle_purchase(tenant_id, purchase_id, "failed", fields)["Update"])
    except ConditionFailed:
        return False
    return True


def subscription(tenant_id: str) -> dict[str, Any] | None:
    return _TABLE.get(tenant_id, SUBSCRIPTION)


def put_subscription(tenant_id: str, record: dict[str, Any]) -> dict[str, Any]:
    return {"Put": {"TableName": _TABLE.name, "Item": to_item({"pk": tenant_id, "sk": SUBSCRIPTION, **record})}}


def save_subscription(tenant_id: str, record: dict[str, Any]) -> None:
    aws.client("dynamodb").put_item(**put_subscription(tenant_id, record)["Put"])


# ---- Stripe customers ---------------------------------------------------------------------------

def put_customer(customer_id: str, tenant_id: str, now_iso: str) -> None:
    aws.client("dynamodb").put_item(TableName=_TABLE.name, Item=to_item(
        {"pk": f"stripe-customer#{customer_id}", "sk": "CUSTOMER", "tenantId": tenant_id, "created_at": now_iso}))


def tenant_of_customer(customer_id: str) -> str | None:
    record = _TABLE.get(f"stripe-customer#{customer_id}", "CUSTOMER")
    return record["tenantId"] if record else None


# ---- gift cards -------------------------------------------------------------------------------

def _card_key(code_hash: str) -> dict[str, Any]:
    return _TABLE.key(f"giftcard#{code_hash}", "CARD")


def put_card(code_hash: str, card: dict[str, Any]) -> None:
    _TABLE.create({"pk": f"giftcard#{code_hash}", "sk": "CARD", **card})


def get_card(code_hash: str) -> dict[str, Any] | None:
    return _TABLE.get(f"giftcard#{code_hash}", "CARD")


def redeem_card(code_hash: str, tenant_id: str, principal: str, now_iso: str) -> dict[str, Any]:
    """A TransactWriteItems entry: the card becomes redeemed, only if it is active and unexpired."""
    return {"Update": {"TableName": _TABLE.name, "Key": _card_key(code_hash),
                       "UpdateExpression": "SET #s = :redeemed, redeemedBy = :t, redeemedByPrincipal = :p, "
                                           "redeemed_at = :now",
                       "ConditionExpression": "#s = :active AND expires_at > :now",
                       "ExpressionAttributeNames": {"#s": "status"},
                       "ExpressionAttributeValues": values(redeemed="redeemed", active="active", t=tenant_id,
                                                           p=principal, now=now_iso)}}


def count_failure(tenant_id: str, bucket: str, ttl: int) -> int:
    """Count one failed redemption in this bucket (an hour); the count now."""
    answer = aws.client("dynamodb").update_item(
        TableName=_TABLE.name, Key=_TABLE.key(tenant_id, f"REDEEM_FAILURES#{bucket}"),
        UpdateExpression="ADD failures :one SET #ttl = :ttl", ExpressionAttributeNames={"#ttl": "ttl"},
        ExpressionAttributeValues=values(one=1, ttl=ttl), ReturnValues="UPDATED_NEW")
    return int(answer["Attributes"]["failures"]["N"])


def failures(tenant_id: str, bucket: str) -> int:
    record = _TABLE.get(tenant_id, f"REDEEM_FAILURES#{bucket}")
    return int(record.get("failures", 0)) if record else 0
