"""Billing's fields: the credit packs, the bounds of a custom number of credits, and a usage series' days."""

from __future__ import annotations

PACKS: dict[str, int] = {"credits_10": 10, "credits_25": 25, "credits_50": 50, "credits_100": 100}
MIN_CUSTOM_CREDITS, MAX_CUSTOM_CREDITS = 5, 10_000
USAGE_DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"   # a UTC day, YYYY-MM-DD
