"""Dates a query names ("8 May 2023", "in March", "2024-03"): a memory dated then gets
the fusion's date bonus."""

from __future__ import annotations

import datetime as dt
import re
from calendar import monthrange

from ..values import Record

_MONTH_NAMES = (
    "january february march april may june july august september october november december"
)
_MONTHS = {m: i for i, m in enumerate(_MONTH_NAMES.split(), 1)}
_DATE_RE = re.compile(
    r"\b(?:(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?)?(january|february|march|april|may|june|july|august|september"
    r"|october|november|december)(?:\s+(\d{1,2})(?:st|nd|rd|th)?)?(?:,?\s+(\d{4}))?\b",
    re.I,
)
_ISO_RE = re.compile(r"\b(\d{4})-(\d{2})(?:-(\d{2}))?\b")
AFTER_DAYS = 14  # memories are often written days after what they tell


class DateHint(Record, frozen=True):
    """A date the query names: a month (and day, and year when given)."""

    month: int
    day: int | None
    year: int | None

    def matches(self, when: float | None) -> bool:
        """Is a memory dated ``when`` (epoch s) in [the date, its end + 14 days]? A missing
        year matches that date in any year."""
        if when is None:
            return False
        created = dt.datetime.fromtimestamp(when, dt.UTC).date()
        for year in [self.year] if self.year else [created.year, created.year - 1]:
            try:
                start = dt.date(year, self.month, self.day or 1)
            except ValueError:
                return False
            end = start if self.day else start.replace(day=monthrange(year, self.month)[1])
            if start <= created <= _plus_days(end, AFTER_DAYS):
                return True
        return False


def _plus_days(day: dt.date, days: int) -> dt.date:
    try:
        return day + dt.timedelta(days=days)
    except OverflowError:  # past 9999-12-31
        return dt.date.max


def date_hint(query: str) -> DateHint | None:
    """The first explicit date in ``query`` ("8 May 2023", "in March", "2024-03"); a bare
    "may" is the verb, not the month."""
    iso = _ISO_RE.search(query)
    if iso:
        number = int(iso.group(2))
        if 1 <= number <= 12:
            return DateHint(number, int(iso.group(3)) if iso.group(3) else None, int(iso.group(1)))
    m = _DATE_RE.search(query)
    if not m:
        return None
    d1, name, d2, year = m.groups()
    if name.lower() == "may" and not (d1 or d2 or year) and (name != "May" or m.start(2) == 0):
        return None  # "may" is the verb; "in May" (capitalised, mid-sentence) is the month
    day = d1 or d2
    return DateHint(_MONTHS[name.lower()], int(day) if day else None, int(year) if year else None)
