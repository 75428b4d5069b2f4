"""Billing's fields: the credit packs, and the bounds of a custom number of credits."""

from __future__ import annotations

PACKS: dict[str, int] = {"credits_10": 10, "credits_25": 25, "credits_50": 50, "credits_100": 100}
MIN_CUSTOM_CREDITS, MAX_CUSTOM_CREDITS = 5, 10_000
