"""Webhook delivery: one attempt at one (event, subscription) pair, and what follows from it.

The fan-out puts one message per pair on the delivery queue (svc_core/data/webhook_delivery_queue.py);
the delivery function takes each message off and calls process(), which:

- loads the subscription: deleted or disabled -> the attempt is logged `skipped`, the message
  deleted;
- signs the event as Standard Webhooks does: `webhook-id` = the event id (the same on every
  retry, and what consumers deduplicate by), `webhook-timestamp` = the attempt's time (epoch
  seconds), `webhook-signature` = `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` with every
  secret not expired (several space-separated during a rotation); the body is the event's JSON;
- POSTs it (svc_core/adapters/webhook_http.py: address check on every attempt, no redirects, one timeout);
- 2xx: `delivered`; the subscription's failing streak ends;
- 410 Gone: the subscription is disabled with a reason the tenant sees, `disabled`, no retry;
- anything else (3xx, 4xx, 5xx, timeout, refused connection, address refused): a failure. The
  next attempt comes after the schedule's delay for this attempt plus 0-20% jitter (never
  sooner than the schedule says, so the whole schedule always spans what it documents); a 429 or 503
  with Retry-After waits at least that long; every delay is capped at 12 h (SQS's longest
  visibility). The message is hidden for that delay (ChangeMessageVisibility) and reported as a
  batch item failure, so SQS hands it back then: `retrying`;
- a URL that waiting cannot make acceptable (an IP literal in a refused range,
  a malformed URL, http to a public host) is not retried; a name that resolves to a refused
  address is (DNS may be fixed), but it is never connected to;
- after the last attempt (schedule length + 1 attempts), or a failure that is not retried:
  `failed`, and the message moves to the delivery dead-letter queue;
- a subscription failing without a success for 5 days is disabled (`disabled`), with the reason.

Attempt numbers go on from the last attempt's recorded wait (below), read once the send is claimed;
a failed attempt's wait is recorded (and its message hidden) before its claim is given back, so a
copy of the message that takes the claim next numbers on from it, and makes no attempt before that
wait ends (it hides itself until then: the schedule holds whichever copy sends). A receive that made no attempt
(another copy's claim held: its wait is recorded with the attempts made so far, unless a copy has
recorded more; a crash before sending; the residency audit's look at the queue) leaves no gap. A message with no wait recorded
(its first receive) counts its receives, after the attempts of the cells it came from. A crash of
the function (or of a batch) leaves the message on the queue: it comes back when its visibility
timeout ends. The queue's redrive (maxReceiveCount = schedule length + 1, counting receives) is the
backstop that moves a message to the dead letters if the last attempt itself crashed.

A message hidden for its retry is recorded with its receipt handle and due time (the deliveries
table's waiting item), so that a move of its tenant to another cell can bring it back at once. In a
deployment of cells, a message whose tenant the directory homes in another cell now is not delivered
here and writes nothing here: it is sent on to the home's delivery queue with its attempts and the
time its next attempt is due, and its numbering and schedule go on there (domain/cell_handoff.py).
A replay's step is sent on the same way.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import random
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from email.utils import parsedate_to_datetime
from typing import Any

from svc_core.adapters import sealing, webhook_http
from svc_core.data import cell_queues, webhook_deliveries_table, webhook_delivery_queue, webhooks_table
from svc_core.data.cell_tables import Place
from svc_core.data.common import ConditionFailed
from svc_core.domain import cell_handoff, webhook_replays
from svc_core.platform import timeutil
from svc_core.platform.config import settings
from svc_core.platform.log import logger

USER_AGENT = "svc-webhooks/1.0 (webhook delivery of the svc API)"
MAX_DELAY_SECONDS = 12 * 3600          # SQS's longest visibility timeout
JITTER = 0.2                           # up to 20% added to the scheduled delay
DISABLE_AFTER_SECONDS = 5 * 86400      # failing without a success for this long disables
RETRY_AFTER_STATUSES = (429, 503)


# ---- the rules ---------------------------------------------------------------------------

def parse_schedule(text: str) -> tuple[int, ...]:
    """"5,300,1800" -> (5, 300, 1800): the delay before each retry, in seconds."""
    try:
        delays = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise ValueError(f"the retry schedule must be comma-separated seconds, not {text!r}") from None
    if not delays or any(d < 0 for d in delays):
        raise ValueError(f"the retry schedule must be comma-separated seconds, not {text!r}")
    return delays


def max_attempts(schedule: tuple[int, ...]) -> int:
    return len(schedule) + 1


def retry_delay(attempt: int, schedule: tuple[int, ...], *, retry_after: float | None = None,
                rand: Callable[[], float] = random.random) -> int | None:
    """Seconds to wait after failed attempt number `attempt` (1-based), or None when it was the last."""
    if attempt >= max_attempts(schedule):
        return None
    delay = schedule[max(attempt, 1) - 1] * (1 + JITTER * rand())
    if retry_after is not None:
        delay = max(delay, retry_after)
    return int(min(MAX_DELAY_SECONDS, max(0, round(delay))))


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Retry-After as seconds from now: delta-seconds or an HTTP date; None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - now)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def is_success(status: int | None) -> bool:
    return status is not None and 200 <= status < 300


def retried_after_refusal(refused) -> bool:
    """An address refused at delivery: retry only when it came from DNS (which may change)."""
    return refused.code == "does_not_resolve" or (refused.resolved and refused.code not in ("malformed", "scheme"))


def sign(keys: list[bytes], msg_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{msg_id}.{timestamp}.".encode() + body
    return " ".join("v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
                    for key in keys)


def secret_key(secret: str) -> bytes:
    """The HMAC key of a secret: the decoded bytes of a `whsec_<base64>` (Standard Webhooks) secret,
    the UTF-8 bytes of a caller's plain secret."""
    if secret.startswith("whsec_"):
        return base64.b64decode(secret.removeprefix("whsec_") + "==")
    return secret.encode("utf-8")


# ---- secrets ------------------------------------------------------------------------------

_unsealed: OrderedDict[tuple[str, str, str], bytes] = OrderedDict()
_unsealed_lock = threading.Lock()


def _unseal(sealed: dict[str, Any], tenant_id: str, webhook_id: str) -> bytes:
    """The key of one sealed secret; kept in this container's memory (bounded), as KMS is a call."""
    cache_key = (tenant_id, webhook_id, sealed["ciphertext"])
    with _unsealed_lock:
        if cache_key in _unsealed:
            return _unsealed[cache_key]
    context = {"purpose": "webhook-secret", "tenantId": tenant_id, "webhookId": webhook_id}
    key = secret_key(sealing.unseal(sealed, context).decode())
    with _unsealed_lock:
        _unsealed[cache_key] = key
        while len(_unsealed) > 512:
            _unsealed.popitem(last=False)
    return key


def signing_keys(subscription: dict[str, Any], tenant_id: str, now: float) -> list[bytes]:
    """Every secret that has not expired (newest first); the newest alone if all have."""
    secrets = sorted(subscription.get("secrets") or [], key=lambda s: s.get("created_at") or "", reverse=True)
    live = [s for s in secrets if s.get("expiresAt") is None or s["expiresAt"] > now] or secrets[:1]
    return [_unseal(s["sealed"], tenant_id, subscription["id"]) for s in live]


# ---- one attempt --------------------------------------------------------------------------

@dataclass(frozen=True)
class Decision:
    outcome: str                  # delivered, retrying, failed, disabled, skipped; sent on (to another cell)
    retry_in: int | None = None   # retrying: seconds until the next attempt
    dead_letter: bool = False     # failed: keep the message on the dead-letter queue
    attempted: bool = True        # retrying: after a failed attempt (not waiting for another's claim)
    attempt: int | None = None    # the attempt's number (None: none was made)


@dataclass(frozen=True)
class Turn:
    """The next attempt of a delivery: its number, and when it is due (a copy's recorded wait)."""
    number: int
    due_at: float | None = None


EARLY_TOLERANCE_SECONDS = 1   # a wait is recorded rounded up to the second: its own copy may come back this early


def deliver(message: webhook_delivery_queue.DeliveryMessage, attempt: int | Callable[[], Turn], *,
            now: float | None = None, post: Callable[..., webhook_http.HttpResult] = webhook_http.post,
            rand: Callable[[], float] = random.random,
            wait: Callable[[int, int], None] | None = None) -> Decision:
    """Make an attempt of this delivery message, log it, and say what follows. `attempt` is its number,
    or what gives its Turn once the send is claimed (a copy's attempt just made counts, and so does the
    wait it recorded: no attempt before it is due); `wait(attempt, seconds)`, given, records a failed
    attempt's wait while the claim is still held."""
    cfg = settings()
    now = timeutil.now() if now is None else now
    event, tenant_id, webhook_id, send_id = message.event, message.tenantId, message.webhookId, message.sendId
    schedule = parse_schedule(cfg.webhook_retry_schedule)
    entry: dict[str, Any] = {"webhookId": webhook_id, "tenantId": tenant_id, "eventId": event.id,
                             "eventType": event.type, "attempt": None, "statusCode": None,
                             "latencyMs": None, "error": None, "nextRetryAt": None,
                             "attemptedAt": timeutil.iso(now), "resentBy": send_id}

    def log(outcome: str, **fields: Any) -> None:
        webhook_deliveries_table.record({**entry, **fields, "outcome": outcome}, now)
        logger.info("webhook attempt", extra={"webhook_id": webhook_id, "event_id": event.id,
                                              "attempt": entry["attempt"], "outcome": outcome,
                                              "status_code": fields.get("statusCode"), "error": fields.get("error")})
        from svc_core.platform import metrics  # on first use: not a start-up import
        metrics.webhook_delivery(outcome, fields.get("latencyMs"))

    def turn() -> Turn:
        next_turn = attempt() if callable(attempt) else Turn(attempt)
        entry["attempt"] = next_turn.number
        return next_turn

    subscription = webhooks_table.get(tenant_id, webhook_id)
    if subscription is None or not subscription.get("enabled"):
        turn()
        log("skipped", error="the webhook was deleted" if subscription is None else "the webhook is disabled")
        return _replay_outcome(message, Decision("skipped"))

    # The event may reach the queue twice (a publisher's retried call had gone through): one send
    # (one per resend: a redelivery or replay has its own mark).
    claimed = webhook_deliveries_table.claim(webhook_id, event.id, now, cfg.webhook_timeout_seconds + 5, send_id)
    if claimed == "delivered":
        logger.info("already delivered", extra={"webhook_id": webhook_id, "event_id": event.id})
        return Decision("skipped")
    if claimed != "claimed":  # another attempt is sending it now: look again when its claim ends
        return Decision("retrying", retry_in=max(1, int(claimed - now) + 1), attempted=False)
    try:
        this = turn()
        if this.due_at is not None and this.due_at - now > EARLY_TOLERANCE_SECONDS:
            # Another copy's attempt failed and recorded when the next one is due: not sooner, from any copy.
            webhook_deliveries_table.release(webhook_id, event.id, send_id)
            return Decision("retrying", retry_in=max(1, math.ceil(this.due_at - now)), attempted=False)
        number = this.number
        decision = replace(_send(message, number, subscription, schedule, now, log, post, rand), attempt=number)
        if decision.retry_in is not None and wait is not None:
            wait(number, decision.retry_in)
    except Exception:
        webhook_deliveries_table.release(webhook_id, event.id, send_id)
        raise
    if decision.outcome != "delivered":
        webhook_deliveries_table.release(webhook_id, event.id, send_id)  # the retry (if any) claims it again
    elif send_id:  # the event's own mark too: its delivery still retrying stops, onlyFailed passes it
        webhook_deliveries_table.mark_delivered(webhook_id, event.id, now)
    return _replay_outcome(message, decision)


def _replay_outcome(message: webhook_delivery_queue.DeliveryMessage, decision: Decision) -> Decision:
    """A replay's delivery that ended: counted in its progress; one that failed for good leaves the
    event to a later replay."""
    send_id = message.sendId
    if not send_id or not send_id.startswith(webhook_replays.REPLAY_PREFIX + "_") or decision.retry_in is not None:
        return decision
    if decision.outcome == "delivered":
        webhook_deliveries_table.count_replayed(message.webhookId, send_id, "delivered")
    else:
        webhook_deliveries_table.unmark_replayed(message.webhookId, message.event.id, send_id)
        webhook_deliveries_table.count_replayed(message.webhookId, send_id, "failed")
    return decision


def _send(message: webhook_delivery_queue.DeliveryMessage, attempt: int, subscription: dict[str, Any], schedule: tuple[int, ...],
          now: float, log: Callable[..., None], post: Callable[..., webhook_http.HttpResult],
          rand: Callable[[], float]) -> Decision:
    """Send the claimed event once and say what follows."""
    cfg = settings()
    event, tenant_id, webhook_id = message.event, message.tenantId, message.webhookId

    body = event.to_json().encode()
    timestamp = int(now)
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT, "webhook-id": event.id,
               "webhook-timestamp": str(timestamp),
               "webhook-signature": sign(signing_keys(subscription, tenant_id, now), event.id, timestamp, body)}
    result = post(subscription["url"], body, headers, timeout=cfg.webhook_timeout_seconds,
                  allow_loopback=cfg.allow_loopback_endpoints)
    answered = {"statusCode": result.status, "latencyMs": result.latency_ms}

    if is_success(result.status):
        webhook_deliveries_table.mark_delivered(webhook_id, event.id, now, message.sendId)
        log("delivered", **answered)
        if subscription.get("failingSince") is not None:
            webhooks_table.clear_failing(tenant_id, webhook_id)
        return Decision("delivered")

    if result.status == 410:
        reason = (f"The endpoint answered 410 Gone on {timeutil.iso(now)}; deliveries stopped. "
                  "Enable the webhook again to resume them.")
        _disable(tenant_id, webhook_id, reason, now)
        log("disabled", **answered, error="410 Gone: the webhook was disabled")
        return Decision("disabled")

    error = result.error or _status_error(result.status)
    retry_after = None
    if result.status in RETRY_AFTER_STATUSES:
        retry_after = parse_retry_after(result.headers.get("retry-after"), now)
    retried = result.refused is None or retried_after_refusal(result.refused)
    delay = retry_delay(attempt, schedule, retry_after=retry_after, rand=rand) if retried else None

    streak_start = _failing_since(tenant_id, webhook_id, now)
    if streak_start is not None and now - streak_start >= DISABLE_AFTER_SECONDS:
        reason = (f"Deliveries failed for 5 days in a row (since {timeutil.iso(streak_start)}); "
                  f"the last error: {error}. Enable the webhook again to resume them.")
        _disable(tenant_id, webhook_id, reason, now)
        log("disabled", **answered, error=error)
        return Decision("disabled", dead_letter=True)

    if delay is None:
        log("failed", **answered, error=error)
        return Decision("failed", dead_letter=True)
    log("retrying", **answered, error=error, nextRetryAt=timeutil.iso(now + delay))
    return Decision("retrying", retry_in=delay)


def _status_error(status: int | None) -> str:
    if status is not None and 300 <= status < 400:
        return f"HTTP {status}: redirects are not followed"
    return f"HTTP {status}"


def _failing_since(tenant_id: str, webhook_id: str, now: float) -> float | None:
    try:
        return webhooks_table.mark_failing(tenant_id, webhook_id, int(now)).get("failingSince")
    except ConditionFailed:
        return None  # deleted meanwhile


def _disable(tenant_id: str, webhook_id: str, reason: str, now: float) -> None:
    try:
        webhooks_table.disable(tenant_id, webhook_id, reason, timeutil.iso(now))
    except ConditionFailed:
        pass  # deleted meanwhile


class RetryLater(Exception):
    """The delivery failed and is hidden until its next attempt: report the message as failed."""


def attempts_made(message: webhook_delivery_queue.DeliveryMessage, receive_count: int) -> int:
    """The attempts of this delivery made before this receive: those of the cells it came from, then
    one per earlier receive here (but a carried message's first, which only waited)."""
    waited = 1 if message.waitFirst and receive_count > 1 else 0
    return message.attempts + max(receive_count, 1) - 1 - waited


def attempts_before(message: webhook_delivery_queue.DeliveryMessage, receive_count: int) -> int:
    """The attempts of this delivery made before this receive: as its recorded wait says (set by the
    last attempt, here or before it was carried here), else by its receives (attempts_made). A
    receive that made no attempt leaves the wait as it was, so the next one is numbered on."""
    return next_turn(message, receive_count).number - 1


def next_turn(message: webhook_delivery_queue.DeliveryMessage, receive_count: int) -> Turn:
    """The attempt this receive would make: numbered on from the recorded wait (and not due before it
    ends), else from the receives (attempts_made)."""
    if receive_count > 1:   # a first receive has no wait of its own to read (a carried one's is its message's)
        waiting = webhook_deliveries_table.parked(message.webhookId, message.event.id, message.sendId)
        if waiting is not None and int(waiting["attempt"]) >= message.attempts:
            return Turn(int(waiting["attempt"]) + 1, float(waiting["dueAt"]))
    return Turn(attempts_made(message, receive_count) + 1)


def carried(message: webhook_delivery_queue.DeliveryMessage, made: int, due_at: float, now: float
            ) -> tuple[webhook_delivery_queue.DeliveryMessage, int]:
    """The message as another cell's queue takes it on, and its DelaySeconds there: `made` attempts
    behind it, the next one due at due_at. SQS delays a message 15 minutes at most: a longer wait is
    its first receive's there (waitFirst)."""
    wait = max(0, math.ceil(due_at - now))
    delay = min(wait, cell_queues.LONGEST_DELAY_SECONDS)
    return replace(message, attempts=made, dueAt=math.ceil(due_at) if wait else None, waitFirst=wait > delay), delay


def send_on(message: webhook_delivery_queue.DeliveryMessage, receive_count: int, home: Place, now: float) -> Decision:
    """The delivery of a tenant homed in another cell now, put on that cell's delivery queue with its
    attempts and its next attempt's time (a wait recorded here when it was hidden for a retry: a move
    brings those back early); nothing written here but the end of that wait."""
    event = message.event
    waiting = webhook_deliveries_table.parked(message.webhookId, event.id, message.sendId)
    if waiting is not None:
        made, due_at = int(waiting["attempt"]), float(waiting["dueAt"])
    else:   # none recorded: due now, or when the message's own schedule says (carried, not tried yet)
        made = attempts_made(message, receive_count)
        due_at = float(message.dueAt) if message.dueAt and made == message.attempts else now
    onward, delay = carried(message, made, due_at, now)
    cell_queues.send(home, cell_queues.DELIVERIES, onward.to_json(), delay)
    if waiting is not None:
        webhook_deliveries_table.unpark(message.webhookId, event.id, message.sendId)
    logger.info("delivery sent on to the tenant's home cell", extra={
        "webhook_id": message.webhookId, "event_id": event.id, "tenant_id": message.tenantId, "region": home.region,
        "attempts": made, "delay": delay})
    return Decision("sent on")


def process(body: str, receive_count: int, receipt_handle: str) -> Decision:
    """What the delivery function does with one SQS message. Raises RetryLater (after hiding the
    message for the delay) when the delivery is to be tried again; returns when the message is
    done with (delivered, disabled, skipped, sent on to the tenant's home cell, or failed and copied
    to the dead-letter queue)."""
    step = webhook_delivery_queue.ReplayStep.of(body)
    if step is not None:  # a page of a replay's work, not a delivery
        home = cell_handoff.elsewhere(step.tenantId)
        if home is not None:   # the replay's records went with the tenant: its steps run there
            cell_queues.send(home, cell_queues.DELIVERIES, body)
            return Decision("sent on")
        try:
            webhook_replays.run_step(step)
        except webhook_replays.StepEarly:
            webhook_delivery_queue.retry_later(receipt_handle, webhook_replays.STEP_DELAY_SECONDS)
            raise RetryLater(f"replay step {step.position} came early") from None
        return Decision("replay step")
    message = webhook_delivery_queue.DeliveryMessage.of(body)
    home = cell_handoff.elsewhere(message.tenantId)
    if home is not None:
        return send_on(message, receive_count, home, timeutil.now())
    if message.waitFirst and receive_count == 1:   # carried here before its next attempt is due
        made = attempts_before(message, receive_count)
        wait = max(0, int(message.dueAt) - int(timeutil.now()))
        _wait(message, made, wait, receipt_handle)
        raise RetryLater(f"attempt {made + 1} of a delivery carried from another cell is due in {wait} s")
    # Numbered once the send is claimed: a copy that held the claim before has recorded its attempt.
    decision = deliver(message, lambda: next_turn(message, receive_count),
                       wait=lambda attempt, seconds: _wait(message, attempt, seconds, receipt_handle))
    if decision.retry_in is not None:
        if not decision.attempted:
            # A wait for another copy's claim (or for the attempt another copy scheduled) made no attempt:
            # recorded with the attempts made so far, so the next receive is numbered on from them, not
            # from the receives (a first receive here has no wait of its own: a carried delivery meeting
            # the claim copied from the old cell, say); unless a copy recorded more, whose wait (and
            # handle) stands.
            made = attempts_before(message, receive_count)
            _wait(message, made, decision.retry_in, receipt_handle, only_raising=True)
            raise RetryLater(f"attempt {made + 1} waits {decision.retry_in} s for another copy's claim or wait")
        raise RetryLater(f"attempt {decision.attempt} failed; next in {decision.retry_in} s")
    if (decision.attempt or 1) > 1 or receive_count > 1:   # it may have waited for this attempt
        webhook_deliveries_table.unpark(message.webhookId, message.event.id, message.sendId)
    if decision.dead_letter:   # as first queued: a redrive starts its attempts anew
        webhook_delivery_queue.to_dead_letters(replace(message, attempts=0, dueAt=None, waitFirst=False).to_json()
                                               if message.attempts or message.dueAt is not None else body)
    return decision


def _wait(message: webhook_delivery_queue.DeliveryMessage, attempt: int, seconds: int, receipt_handle: str, *,
          only_raising: bool = False) -> None:
    """Hide the message until its next attempt, the wait recorded first (a move reads it); only_raising:
    not over a wait recorded with as many attempts or more (another copy's)."""
    webhook_deliveries_table.park(message.tenantId, message.webhookId, message.event.id, message.sendId, attempt,
                                  timeutil.now() + seconds, receipt_handle, only_raising=only_raising)
    webhook_delivery_queue.retry_later(receipt_handle, seconds)
