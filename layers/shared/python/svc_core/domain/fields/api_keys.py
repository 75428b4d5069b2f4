"""API keys' fields: a rotation's overlap, its default and its most."""

from __future__ import annotations

MAX_OVERLAP_SECONDS = 7 * 24 * 3600
DEFAULT_OVERLAP_SECONDS = 24 * 3600
