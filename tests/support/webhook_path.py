"""The webhook event path on the moto server: the bus, the webhook queue and the delivery queue, with
their pollers playing template.yaml's event source mappings (the `path` fixture of the integration
tests)."""

from __future__ import annotations

import time
from typing import Any

from devstack.pollers import QueuePoller
from devstack.template import Resolver
from svc_core.contracts import events
from svc_core.domain import event_publishing
from tests.support.functions import load_function
from tests.support.queues import take_messages

ZEROS = "0,0,0,0,0,0,0"   # 8 attempts, as many as the delivery queue's maxReceiveCount


class WebhookPath:
    """The bus, the two queues and their pollers (template.yaml's mappings)."""

    def __init__(self, stack) -> None:
        self.stack = stack
        self.sqs = stack.client("sqs")
        mappings = {queue: (function, props) for queue, function, props in Resolver({}).queue_subscriptions()}
        resolver = Resolver({})
        self.urls = {q: self.sqs.get_queue_url(QueueName=q)["QueueUrl"]
                     for q in ("WebhookQueue", "WebhookDeliveryQueue", "WebhookDeliveryDeadLetterQueue")}
        self.handlers = {"WebhookFanoutFunction": load_function("webhook_fanout").lambda_handler,
                         "WebhookDeliveryFunction": load_function("webhook_delivery").lambda_handler}
        self.pollers = {}
        for queue in ("WebhookQueue", "WebhookDeliveryQueue"):
            function, props = mappings[queue]
            self.pollers[queue] = QueuePoller({"sqs": self.sqs}, self.urls[queue], resolver.arn(queue),
                                              self._invoker(function), props, log=lambda _m: None)

    def _invoker(self, function: str):
        return lambda event: self.handlers[function](event, None)

    def publish(self, event: events.Event) -> None:
        entry = event_publishing.bus_entry(event)
        assert not self.stack.client("events").put_events(Entries=[entry]).get("FailedEntryCount")

    def in_flight(self) -> int:
        total = 0
        for queue in ("WebhookQueue", "WebhookDeliveryQueue"):
            counts = self.sqs.get_queue_attributes(QueueUrl=self.urls[queue], AttributeNames=[
                "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
            total += sum(int(n) for n in counts.values())
        return total

    def pump(self, timeout: float = 8.0, until=None) -> None:
        """Run both mappings until nothing is left on the queues (or `until()` holds)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            moved = sum(p.poll_once(wait_seconds=0) for p in self.pollers.values())
            if until is not None and until():
                return
            if until is None and not moved and self.in_flight() == 0:
                return
            if not moved:
                time.sleep(0.02)
        raise AssertionError("the webhook queues did not drain in time")

    def _take(self, queue: str) -> list[dict[str, Any]]:
        """Every visible message of the queue, removed from it."""
        return take_messages(self.sqs, self.urls[queue])

    def dead_letters(self) -> list[dict[str, Any]]:
        return self._take("WebhookDeliveryDeadLetterQueue")

    def clear(self) -> None:
        for queue in self.urls:
            self._take(queue)
