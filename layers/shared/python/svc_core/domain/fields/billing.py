"""Billing's fields: the credit packs, the bounds of a custom number of credits, and a usage series' days."""

from __future__ import annotations

PACKS: dict[str, int] = {"credits_10": 10, "credits_25": 25, "credits_50": 50, "credits_100": 100}
MIN_CUSTOM_CREDITS, MAX_CUSTOM_CREDITS = 5, 10_000
# A UTC day, YYYY-MM-DD, that the calendar has (year 0001 to 9999; 29 February in leap years only): the
# document's pattern is the server's whole rule, so a day valid by the document is always answered.
_YEAR = r"(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"
_LEAP_YEAR = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
USAGE_DATE_PATTERN = (rf"^(?:{_YEAR}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
                      rf"|02-(?:0[1-9]|1[0-9]|2[0-8]))|{_LEAP_YEAR}-02-29)$")
