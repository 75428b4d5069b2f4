"""The usage series' day pattern is the server's whole rule: it admits exactly the days the calendar
has, so a request valid by the document is always answered (docs/conventions.md)."""

from __future__ import annotations

import re
from datetime import date, timedelta

from svc_core.domain.fields.billing import USAGE_DATE_PATTERN

YEARS = [*range(1, 30), *range(1890, 2110), 400, 800, 1200, 1600, 2400, 9996, 9999]


def test_every_day_of_these_years_matches_and_every_other_date_shaped_text_does_not():
    for year in YEARS:
        for month in range(1, 13):
            for day in range(1, 33):
                text = f"{year:04d}-{month:02d}-{day:02d}"
                try:
                    date.fromisoformat(text)
                    exists = True
                except ValueError:
                    exists = False
                assert bool(re.fullmatch(USAGE_DATE_PATTERN, text)) == exists, text
    day, matched = date(2024, 1, 1), 0
    while day.year == 2024:   # a leap year, walked day by day
        matched += bool(re.fullmatch(USAGE_DATE_PATTERN, day.isoformat()))
        day += timedelta(days=1)
    assert matched == 366


def test_other_forms_and_the_year_zero_do_not_match():
    for text in ("0000-01-01", "0000-02-29", "2026-00-10", "2026-11-00", "20261101", "2026-11-1", "2026-11-01T00:00Z",
                 " 2026-11-01", "2026-11-01\n"):
        assert not re.fullmatch(USAGE_DATE_PATTERN, text), text
