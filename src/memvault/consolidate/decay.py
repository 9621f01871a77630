"""Decay and refresh, as pure functions of a memory's numbers, and the decay step.

    relevance = (importance / 5) × rate ^ weeks × recency_boost      (capped at 1.0)

``weeks`` counts from the last use (the last read, or earlier when the reads were weak
matches: :func:`memvault.consolidate.fold.refresh`), or from creation when never read; the
boost is measured from the same moment. Rates per
week: fast 0.5, normal 0.8, slow 0.95, never 1.0. The recency boost rewards recent use:
2.0 accessed today, 1.5 this week, 1.2 this month, 1.0 this quarter, 0.8 older.
Semantic and procedural memories don't decay unless their ``decay`` key says so.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..memory import Memory, format_time, now_utc, parse_time
from ..store.usage import Usage
from ..store.usage import load as load_usage
from ..store.usage import of as usage_of
from ..values import Record
from .fold import Accesses
from .model import ARCHIVE_DIR, INBOX_DIR, Action, Plan, State

if TYPE_CHECKING:  # pragma: no cover
    from ..config import Config
    from ..core import Core

DEFAULT_RATES = {"fast": 0.5, "normal": 0.8, "slow": 0.95, "never": 1.0}
DEFAULT_BY_TYPE = {"episodic": "normal", "semantic": "never", "procedural": "never"}
BOOSTS = (
    (1, 2.0, "accessed today"),
    (7, 1.5, "accessed this week"),
    (30, 1.2, "accessed this month"),
    (90, 1.0, "accessed this quarter"),
)
OLD_BOOST = (0.8, "not accessed for over a quarter")
# Never accessed: no reward for use; a new memory is not punished either.
NEVER_ACCESSED_BOOST = (1.0, "never accessed")
DEFAULT_ARCHIVE_BELOW = 0.1


class Relevance(Record, frozen=True):
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
            f"{text}\n  decay '{self.decay}' (rate {self.rate}/week); "
            f"{self.weeks:.2f} weeks since {self.since}; "
            f"boost {self.boost} ({self.boost_reason})"
        )


def decay_name(memory: Memory, defaults: Mapping[str, str] | None = None) -> str:
    name = memory.meta.get("decay")
    if name in DEFAULT_RATES:
        return str(name)
    return (defaults or DEFAULT_BY_TYPE).get(memory.type, "normal")


def recency_boost(
    now: dt.datetime, accessed: dt.datetime | None, weeks: float
) -> tuple[float, str]:
    """The boost and its reason; ``weeks`` is the age used when never accessed."""
    if accessed is None:
        return OLD_BOOST if weeks * 7 > 90 else NEVER_ACCESSED_BOOST
    days = (now - accessed).total_seconds() / 86400
    for limit, boost, reason in BOOSTS:
        if days < limit:
            return boost, reason
    return OLD_BOOST


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
    since = "last use" if accessed else "creation"
    weeks = max(0.0, (now - anchor).total_seconds() / (7 * 86400))
    boost, reason = recency_boost(now, accessed, weeks)
    importance = memory.importance
    raw = (importance / 5) * (rate**weeks) * boost
    return Relevance(min(1.0, raw), importance, name, rate, weeks, since, boost, reason, raw > 1.0)


def last_use(memory: Memory, records: Mapping[str, Usage]) -> dt.datetime | None:
    """The moment the memory's relevance decays from, by its usage record (else its file's
    own key): its last read, or earlier when its reads were weak matches."""
    used = usage_of(memory, records)
    for value in (used.decays_from, used.last_accessed):
        try:
            when = parse_time(value)
        except ValueError:
            continue
        if when is not None:
            return when
    return None


def config_rates(config: Config) -> tuple[dict[str, float], dict[str, str]]:
    """Decay rates by name and the default decay per type, the defaults overridden by config."""
    rates = dict(DEFAULT_RATES)
    rates.update({k: float(v) for k, v in (config.get("decay.rates") or {}).items()})
    defaults = dict(DEFAULT_BY_TYPE)
    defaults.update(config.get("decay.default") or {})
    return rates, defaults


def archive_below(config: Config) -> float:
    return float(config.get("decay.archive_below", DEFAULT_ARCHIVE_BELOW))


def plan_decay(
    vault: Core,
    state: State,
    result: Plan,
    accesses: Accesses,
) -> None:
    """Store each memory's relevance (its usage record); archive it below the threshold,
    restore it when used."""
    rates, defaults = config_rates(vault.config)
    threshold = archive_below(vault.config)
    now = result.now
    for m in state.memories:
        if m.status not in ("active", "archived") or m.path.startswith(INBOX_DIR):
            continue
        rel = relevance(m, now, rates, defaults, state.decays_from(m))
        rounded = round(rel.value, 4)
        old = state.value(m, "relevance")
        moved = old is None or abs(float(old) - rounded) > 1e-9
        if moved and (rel.rate < 1.0 or old is not None or m.id in accesses):
            changes = {"relevance": rounded}
            state.set_usage(m, changes)
            what = f"relevance {old if old is not None else '-'} → {rounded}"
            why = rel.explain().splitlines()[0]
            result.actions.append(
                Action("decay", m.id, m.path, what, why, changes, usage_only=True)
            )
        # A transcript leaves by distillation only: archived for low relevance first, it
        # would never be summarised, and what was said in it never becomes knowledge.
        undistilled = m.category == "transcript"
        if m.status == "active" and rel.rate < 1.0 and rel.value < threshold and not undistilled:
            why = f"relevance {rel.value:.3f} < {threshold} (archive_below)"
            state.archive(m, result, "decay", why)
        elif (
            m.path.startswith(ARCHIVE_DIR)
            and m.id in accesses
            and rel.value >= threshold
            and not m.get("superseded_by")
        ):
            state.restore(m, result, f"recalled again (accessed {format_time(accesses[m.id][1])})")


def why(vault: Core, memory_id: str, now: dt.datetime | None = None) -> str:
    """Explain a memory's current relevance from its numbers."""
    m = vault.get(memory_id)
    now = now or now_utc()
    rates, defaults = config_rates(vault.config)
    records = load_usage(vault.root)
    rel = relevance(m, now, rates, defaults, last_use(m, records))
    threshold = archive_below(vault.config)
    lines = [f"{m.id} ({m.type}/{m.category}, {m.status}) at {format_time(now)}", rel.explain()]
    used = usage_of(m, records)
    if used.access_count or used.last_accessed:
        lines.append(
            f"  read {used.access_count} time(s), last {used.last_accessed or '-'} "
            "(folded by consolidation; .memvault/usage.jsonl)"
        )
    if used.decays_from:
        lines.append(
            f"  decays from {used.decays_from}: its reads were weak matches, each a use in "
            "proportion to how well it matched"
        )
    if used.relevance is not None:
        lines.append(f"  stored relevance (last consolidation): {used.relevance}")
    if rel.rate >= 1.0:
        lines.append("  does not decay (decay: never), so it is never archived for low relevance")
    elif rel.value < threshold and m.status == "archived":
        lines.append(
            f"  below archive_below {threshold}: archived; "
            "using it (--include-archive) brings it back"
        )
    elif rel.value < threshold and m.category == "transcript":
        lines.append(
            f"  below archive_below {threshold}: a transcript is archived once it is distilled"
            " (consolidate.distill_after_days after its last turn)"
        )
    elif rel.value < threshold:
        lines.append(f"  below archive_below {threshold}: the next consolidation archives it")
    elif rel.value > 0 and rel.rate < 1:
        # weeks until the value falls under the threshold at this rate, without new accesses
        weeks_left = math.log(threshold / rel.value) / math.log(rel.rate)
        lines.append(f"  archived in about {weeks_left:.1f} weeks unless it is used")
    return "\n".join(lines)
