"""Chat's fields: a session's title, a message's content and statuses, how many messages a
session's read shows, and a stream event's id."""

from __future__ import annotations

MAX_TITLE = 200
MAX_CONTENT = 20_000
MESSAGES_SHOWN = 100        # GET /chat/sessions/{id} answers the newest this many messages
MESSAGE_STATUSES = ("pending", "streaming", "completed", "failed")

EVENT_ID_PATTERN = r"^[0-9]{1,18}$"   # a stream event's id
