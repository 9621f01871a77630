"""Decay and refresh, the seed's formula, as pure functions of a memory's numbers.

    relevance = (importance / 5) × rate ^ weeks × recency_boost      (capped at 1.0)

``weeks`` counts from the last access, or from creation when never accessed. Rates per
week: fast 0.5, normal 0.8, slow 0.95, never 1.0. The recency boost rewards recent use:
2.0 accessed today, 1.5 this week, 1.2 this month, 1.0 this quarter, 0.8 older.
Semantic and procedural memories don't decay unless their ``decay`` key says so.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .memory import Memory

DEFAULT_RATES = {"fast": 0.5, "normal": 0.8, "slow": 0.95, "never": 1.0}
DEFAULT_BY_TYPE = {"episodic": "normal", "semantic": "never", "procedural": "never"}
BOOSTS = ((1, 2.0, "accessed today"), (7, 1.5, "accessed this week"), (30, 1.2, "accessed this month"), (90, 1.0, "accessed this quarter"))
OLD_BOOST = (0.8, "not accessed for over a quarter")


@dataclass(frozen=True)
class Relevance:
    value: float
    importance: int
    decay: str
    rate: float
    weeks: float
    since: str  # "last access" or "creation"
    boost: float
    boost_reason: str
    capped: bool

    def explain(self) -> str:
        raw = (self.importance / 5) * (self.rate**self.weeks) * self.boost
        text = (
            f"relevance = importance/5 × rate^weeks × boost = {self.importance}/5 × "
            f"{self.rate}^{self.weeks:.2f} × {self.boost} = {raw:.4f}"
        )
        if self.capped:
            text += " → capped at 1.0"
        return (
            f"{text}\n  decay '{self.decay}' (rate {self.rate}/week); {self.weeks:.2f} weeks since {self.since}; "
            f"boost {self.boost} ({self.boost_reason})"
        )


def decay_name(memory: Memory, defaults: Mapping[str, str] | None = None) -> str:
    name = memory.meta.get("decay")
    if name in DEFAULT_RATES:
        return str(name)
    return (defaults or DEFAULT_BY_TYPE).get(memory.type, "normal")


def relevance(
    memory: Memory,
    now: dt.datetime,
    rates: Mapping[str, float] | None = None,
    defaults: Mapping[str, str] | None = None,
    last_accessed: dt.datetime | None = None,
) -> Relevance:
    """The memory's relevance at ``now`` (``last_accessed`` overrides the file's value)."""
    rates = {**DEFAULT_RATES, **(rates or {})}
    name = decay_name(memory, defaults)
    rate = float(rates.get(name, 1.0))
    accessed = last_accessed or memory.time("last_accessed")
    anchor = accessed or memory.created or now
    since = "last access" if accessed else "creation"
    weeks = max(0.0, (now - anchor).total_seconds() / (7 * 86400))
    if accessed is None:
        boost, reason = OLD_BOOST if weeks * 7 > 90 else _boost_for(weeks * 7, "created")
    else:
        boost, reason = _boost_for((now - accessed).total_seconds() / 86400, "accessed")
    importance = memory.importance
    raw = (importance / 5) * (rate**weeks) * boost
    return Relevance(min(1.0, raw), importance, name, rate, weeks, since, boost, reason, raw > 1.0)


def _boost_for(days: float, verb: str) -> tuple[float, str]:
    if verb == "created":
        # Never accessed: no reward for use; a new memory is not punished either.
        return 1.0, "never accessed"
    for limit, boost, reason in BOOSTS:
        if days < limit:
            return boost, reason
    return OLD_BOOST


def config_rates(config: Any) -> tuple[dict[str, float], dict[str, str]]:
    rates = dict(DEFAULT_RATES)
    rates.update({k: float(v) for k, v in (config.get("decay.rates") or {}).items()})
    defaults = dict(DEFAULT_BY_TYPE)
    defaults.update(config.get("decay.default") or {})
    return rates, defaults
