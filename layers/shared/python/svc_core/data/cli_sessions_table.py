"""The CLI login sessions table (device login), partition key loginId; TTL cleans up.

Every move of the state machine is one conditional write, so a session is approved at most
once, and consumed at most once whatever the concurrency. Expiry is enforced in code on every
read (`expiresAt`); TTL only removes the item later.
"""

from __future__ import annotations

from typing import Any

from svc_core.adapters.dynamo import values
from svc_core.data.common import ConditionFailed
from svc_core.data.table import Table

RETENTION_SECONDS = 24 * 3600  # kept a day after expiry, so a late poll still learns "expired"


class WrongState(Exception):
    """The session was not in the state the move needs."""


_TABLE = Table("cli_sessions_table", ("loginId",))


def create(session: dict[str, Any]) -> None:
    _TABLE.create({**session, "ttl": session["expiresAt"] + RETENTION_SECONDS})


def get(login_id: str) -> dict[str, Any] | None:
    return _TABLE.get(login_id)


def move(login_id: str, *, from_status: str, to_status: str, now: int, condition: str = "",
         extra: dict[str, Any] | None = None, **condition_values: Any) -> None:
    """from_status -> to_status if the session is unexpired (and the extra condition holds)."""
    sets = ", ".join(f"{name} = :x_{name}" for name in (extra or {}))
    expression = "SET #s = :to, updatedAt = :now" + (f", {sets}" if sets else "")
    try:
        _TABLE.update(
            _TABLE.key(login_id), UpdateExpression=expression,
            ConditionExpression="#s = :from AND expiresAt > :now" + (f" AND {condition}" if condition else ""),
            ExpressionAttributeNames={"#s": "status", **({"#st": "state"} if "#st" in condition else {})},
            ExpressionAttributeValues=values(to=to_status, now=now, **{"from": from_status},
                                             **{f"x_{k}": v for k, v in (extra or {}).items()},
                                             **condition_values))
    except ConditionFailed:
        raise WrongState() from None
