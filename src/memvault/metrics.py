"""Usage and the system metrics of seed 004 §9, for ``stats``.

Everything is measured over one **window**: the last ``days`` days (30 by default, at most
:data:`~memvault.search.accesslog.KEEP_DAYS`) up to ``now``, clipped to the vault's age
(the time of its first commit): a vault younger than the window is measured over its own
life, so that days before it existed do not dilute its rates. ``span_days`` is that
length in days, at least 1.

Usage, from the access log (the live log, a log being folded, and the folded reads that
consolidation keeps in ``.memvault/access.log.history``):

* ``queries``: reads (``recall``, ``fact``, ``procedure``, ``search``, ``validate``,
  ``context``) logged in the window;
* ``queries_per_day``: ``queries / span_days`` -- every calendar day of the window counts,
  days without a query included;
* ``recall_hit_rate``: the share of those queries that returned at least one memory;
  ``avg_query_ms``: their mean time; ``most_recalled``: the ids returned most often.

Seed 004's metrics, over the memories visible to the reader:

* ``consolidation_rate`` (episodes → semantic/procedural): of all episodes (session
  transcripts and their summaries aside, which promotion never considers), the share
  that a semantic or procedural memory lists in ``derived_from`` -- a proposal made by
  consolidation's promote step, in inbox/ or accepted. A share of the vault, not of the
  window.
* ``decay_rate`` (% decayed per week): memories archived by the decay step in the window
  (consolidation log) ÷ the memories subject to decay (decay rate below 1: episodes by
  default, anything with ``decay: fast|normal|slow``) that are active now or were archived
  by decay in the window ÷ the window in weeks (``span_days / 7``).
* ``validation_rate`` (% of facts revalidated): of the active semantic memories (facts,
  decisions, definitions, relationships, constraints), the share that a ``validate`` check
  (also ``recall "is it true that…"``) weighed as evidence in the window (access log).
* ``patterns_discovered``: proposals the promote step made in the window (a pattern in 3+
  episodes → a fact, the same steps in 3+ episodes → a procedure; consolidation log).
* ``procedures_optimized``: procedures whose ``steps`` or text a commit in the window
  changed (git history), counting neither the commit that added the file nor edits of
  bookkeeping keys alone (relevance, access counts, success rate).

Each rate comes with its numerator and denominator under ``basis``.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import MemvaultError
from .memory import Memory, format_time, now_utc, parse_time
from .paths import ARCHIVE, CONSOLIDATION_LOG, INBOX
from .search.accesslog import KEEP_DAYS, read_log, read_reads
from .store.git import ops as gitstore
from .values import Record

if TYPE_CHECKING:  # pragma: no cover
    from .core import Core

WINDOW_DAYS = 30
UNPROMOTED = ("transcript", "summary")  # episode categories promotion leaves alone
BOOKKEEPING = frozenset(
    {"relevance", "access_count", "last_accessed", "updated", "success_rate", "times_used"}
)


class Window(Record, frozen=True):
    """The period measured: ``start`` .. ``end``, ``days`` asked for."""

    days: int
    start: dt.datetime
    end: dt.datetime

    @property
    def span_days(self) -> float:
        return max(1.0, (self.end - self.start).total_seconds() / 86400)

    def holds(self, when: Any) -> bool:
        try:
            at = parse_time(when)
        except ValueError:
            return False
        return at is not None and self.start <= at <= self.end

    def as_dict(self) -> dict[str, Any]:
        return {
            "days": self.days,
            "start": format_time(self.start),
            "end": format_time(self.end),
            "span_days": round(self.span_days, 4),
        }


def vault_born(root: Path) -> dt.datetime | None:
    """When the vault's history begins: its earliest root commit's committer time."""
    proc = gitstore.run_git(root, ["log", "--max-parents=0", "--format=%cI", "HEAD"], check=False)
    times = [parse_time(line) for line in proc.stdout.split() if line.strip()]
    return min((t for t in times if t is not None), default=None)


def window(root: Path, days: int = WINDOW_DAYS, now: dt.datetime | None = None) -> Window:
    """The last ``days`` days up to ``now``, clipped to the vault's age."""
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= KEEP_DAYS:
        raise MemvaultError(f"expected 1-{KEEP_DAYS} days, got {days!r}", key="days")
    end = now or now_utc()
    start = end - dt.timedelta(days=days)
    born = vault_born(root)
    if born is not None and born > start:
        start = min(born, end)
    return Window(days, start, end)


def _rate(part: int, whole: float) -> float:
    return round(part / whole, 4) if whole else 0.0


def usage(
    records: Iterable[Mapping[str, Any]], win: Window, visible: set[str] | None
) -> dict[str, Any]:
    """Reads in the window (see the module's docstring); ``most_recalled`` names only
    ``visible`` ids (the log holds every agent's reads)."""
    queries = [r for r in records if r.get("kind") == "query" and win.holds(r.get("ts"))]
    counter: Counter[str] = Counter()
    for r in queries:
        counter.update(str(i) for i in (r.get("ids") or []) if visible is None or str(i) in visible)
    ms = [float(r.get("ms") or 0) for r in queries]
    return {
        "queries": len(queries),
        "queries_per_day": _rate(len(queries), win.span_days),
        "recall_hit_rate": _rate(sum(1 for r in queries if r.get("ids")), len(queries)),
        "avg_query_ms": round(sum(ms) / len(ms), 1) if ms else 0.0,
        "most_recalled": [{"id": k, "count": v} for k, v in counter.most_common(10)],
    }


def _live(m: Memory) -> bool:
    return not m.path.startswith((f"{ARCHIVE}/", f"{INBOX}/"))


def consolidation_rate(memories: Sequence[Memory]) -> tuple[float, dict[str, int]]:
    episodes = {
        m.id
        for m in memories
        if m.type == "episodic"
        and m.category not in UNPROMOTED
        and not m.path.startswith(f"{INBOX}/")
    }
    derived: set[str] = set()
    for m in memories:
        if m.type in ("semantic", "procedural"):
            value = m.meta.get("derived_from")
            derived.update(str(v) for v in (value if isinstance(value, list) else [value]) if v)
    done = len(episodes & derived)
    return _rate(done, len(episodes)), {"episodes": len(episodes), "consolidated": done}


def _actions(entries: Sequence[Mapping[str, Any]], win: Window, step: str, what: str) -> list[str]:
    """Ids of the consolidation log's ``step``/``what`` actions in the window, in order."""
    out: list[str] = []
    for entry in entries:
        if not win.holds(entry.get("ts")):
            continue
        for action in entry.get("actions") or []:
            if isinstance(action, Mapping) and (action.get("step"), action.get("what")) == (
                step,
                what,
            ):
                out.append(str(action.get("id")))
    return out


def decay_rate(
    vault: Core,
    memories: Sequence[Memory],
    entries: Sequence[Mapping[str, Any]],
    win: Window,
    hidden: set[str],
) -> tuple[float, dict[str, Any]]:
    from .consolidate.decay import config_rates, decay_name

    rates, defaults = config_rates(vault.config)
    archived = {i for i in _actions(entries, win, "decay", "archive") if i not in hidden}
    decaying = {
        m.id
        for m in memories
        if m.status == "active"
        and _live(m)
        and float(rates.get(decay_name(m, defaults), 1.0)) < 1.0
    }
    population = decaying | archived
    weeks = win.span_days / 7
    rate = round(len(archived) / len(population) / weeks, 4) if population else 0.0
    basis = {
        "archived_by_decay": len(archived),
        "decaying": len(population),
        "weeks": round(weeks, 4),
    }
    return rate, basis


def validation_rate(
    memories: Sequence[Memory], records: Iterable[Mapping[str, Any]], win: Window
) -> tuple[float, dict[str, int]]:
    facts = {m.id for m in memories if m.type == "semantic" and m.status == "active" and _live(m)}
    checked: set[str] = set()
    for r in records:
        if r.get("kind") == "query" and r.get("cmd") == "validate" and win.holds(r.get("ts")):
            checked.update(str(i) for i in r.get("ids") or [])
    done = len(facts & checked)
    return _rate(done, len(facts)), {"facts": len(facts), "validated": done}


def procedures_optimized(vault: Core, win: Window, hidden: set[str]) -> list[str]:
    """Ids of procedures whose steps or text changed in a commit of the window."""
    from .store.files import parse_text

    changed: set[str] = set()
    for edit in gitstore.edits(vault.root, win.start, win.end, ["procedural"]):
        try:
            before, after = parse_text(edit.before, edit.path), parse_text(edit.after, edit.path)
        except MemvaultError:
            continue  # a broken file in history: not an optimisation anyone can read
        mid = str(after.meta.get("id") or "")
        if not mid or mid in hidden:
            continue
        keys = ("steps", "content", "trigger")
        if before.body.strip() != after.body.strip() or any(
            before.meta.get(k) != after.meta.get(k) for k in keys
        ):
            changed.add(mid)
    return sorted(changed)


def seed_metrics(
    vault: Core,
    memories: Sequence[Memory],
    hidden: set[str],
    win: Window,
    records: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Seed 004's quality and learning metrics over ``memories`` (those the reader sees;
    ``hidden``: ids of the others), each with its basis."""
    if records is None:
        records = read_reads(vault.root)
    entries = read_log(vault.root / CONSOLIDATION_LOG)
    consolidation, c_basis = consolidation_rate(memories)
    decay, d_basis = decay_rate(vault, memories, entries, win, hidden)
    validation, v_basis = validation_rate(memories, records, win)
    proposals = [i for i in _actions(entries, win, "promote", "propose") if i not in hidden]
    optimized = procedures_optimized(vault, win, hidden)
    return {
        "consolidation_rate": consolidation,
        "decay_rate": decay,
        "validation_rate": validation,
        "patterns_discovered": len(proposals),
        "procedures_optimized": len(optimized),
        "basis": {
            "consolidation_rate": c_basis,
            "decay_rate": d_basis,
            "validation_rate": v_basis,
            "patterns_discovered": {"proposals": proposals},
            "procedures_optimized": {"procedures": optimized},
        },
    }
