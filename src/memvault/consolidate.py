"""The "sleep job": consolidation as reviewable file rewrites, one commit per run.

``plan()`` is pure with respect to the vault (reads files, the access log and vectors;
writes nothing) and returns every action with its reason; ``apply()`` performs a plan
under the vault lock as exactly one commit and appends an entry to the tracked
``.memvault/consolidation.log``. With the same ``now`` a second run finds nothing to do.

Steps (``only`` selects a subset): fold (access log → access_count/last_accessed),
decay (relevance, archive below threshold, restore when used again), retention (max
age per scope, old transcripts), dedup (near-duplicate merge with tombstones),
supersede (facts sharing a subject; disputed pairs flagged), promote (patterns in 3+
episodes → proposals in inbox/), distill (old transcripts → summary episode).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .decay import config_rates, relevance
from .files import load_document, render_new, update_text
from .memory import Memory, format_time, now_utc, parse_time, slugify
from .vault import Vault

STEPS = ("fold", "decay", "retention", "dedup", "supersede", "promote", "distill")
LOG_PATH = ".memvault/consolidation.log"
ACCESS_LOG = ".memvault/access.log"
FOLDING = ".memvault/access.log.folding"
Progress = Callable[[str, int, int], None]


@dataclass
class Action:
    step: str
    memory_id: str
    path: str
    what: str  # e.g. "archive", "merge into x", "relevance 0.52 -> 0.41"
    why: str
    changes: dict[str, Any] = field(default_factory=dict)
    move_to: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "id": self.memory_id,
            "path": self.path,
            "what": self.what,
            "why": self.why,
            "changes": self.changes,
            "move_to": self.move_to,
        }


@dataclass
class Plan:
    now: dt.datetime
    actions: list[Action] = field(default_factory=list)
    new_files: dict[str, str] = field(default_factory=dict)  # rel -> text (proposals, summaries)
    disputed: list[dict[str, Any]] = field(default_factory=list)
    neighbours: list[dict[str, Any]] = field(default_factory=list)  # how similar pairs were found
    folded_sha: str | None = None
    folded_records: int = 0
    # filled by render(): rel path -> new text, and src -> dst moves
    writes: dict[str, str] = field(default_factory=dict)
    moves: dict[str, str] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = defaultdict(int)
        for a in self.actions:
            out[a.what.split(" ")[0]] += 1
        if self.new_files:
            out["new files"] = len(self.new_files)
        return dict(out)

    @property
    def empty(self) -> bool:
        return not self.actions and not self.new_files

    def summary(self) -> str:
        counts = self.counts()
        return ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) or "nothing to do"

    def as_dict(self) -> dict[str, Any]:
        return {
            "now": format_time(self.now),
            "summary": self.summary(),
            "counts": self.counts(),
            "actions": [a.as_dict() for a in self.actions],
            "new_files": sorted(self.new_files),
            "disputed": self.disputed,
            "neighbours": self.neighbours,
            "folded_access_records": self.folded_records,
        }


# --- access log ----------------------------------------------------------------------


def _read_records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                out.append(record)
    return out


def _file_sha(path: Path) -> str | None:
    if not path.exists():
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _last_log_entry(root: Path) -> dict[str, Any]:
    path = root / LOG_PATH
    if not path.exists():
        return {}
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    try:
        return json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        return {}


def _accesses(vault: Vault, now: dt.datetime) -> tuple[dict[str, tuple[int, dt.datetime]], str | None, int]:
    """Per id: (number of reads, latest read) from the log not yet folded, up to ``now``."""
    root = vault.root
    folding = root / FOLDING
    records: list[dict[str, Any]] = []
    sha = None
    # A previous run may have died after its commit but before removing the folding file.
    if folding.exists() and _file_sha(folding) == _last_log_entry(root).get("folded_sha"):
        pass
    else:
        records.extend(_read_records(folding))
    records.extend(_read_records(root / ACCESS_LOG))
    if records:
        sha = hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()
    per: dict[str, tuple[int, dt.datetime]] = {}
    used = 0
    for record in records:
        try:
            when = parse_time(record.get("ts"))
        except ValueError:
            continue
        if when is None or when > now:
            continue
        used += 1
        for mid in record.get("ids") or []:
            count, last = per.get(str(mid), (0, when))
            per[str(mid)] = (count + 1, max(last, when))
    return per, sha, used


# --- planning --------------------------------------------------------------------------


def plan(
    vault: Vault,
    now: dt.datetime | None = None,
    only: Iterable[str] | None = None,
    progress: Progress | None = None,
    writer: bool = False,
) -> Plan:
    """Work out everything a consolidation would do, without writing anything.

    ``writer``: the caller holds the vault lock, so the search index (where the
    neighbours for dedup and promotion come from) may be brought up to date first.
    """
    now = now or now_utc()
    steps = set(only or STEPS)
    unknown = steps - set(STEPS)
    if unknown:
        from .errors import MemvaultError

        raise MemvaultError(f"unknown step(s) {', '.join(sorted(unknown))}; expected {','.join(STEPS)}", key="only")
    result = Plan(now=now)
    memories = vault.all_memories()
    by_id = {m.id: m for m in memories}
    state = _State(memories)
    state.writer = writer

    accesses: dict[str, tuple[int, dt.datetime]] = {}
    if "fold" in steps:
        accesses, result.folded_sha, result.folded_records = _accesses(vault, now)
        for mid, (count, last) in sorted(accesses.items()):
            m = by_id.get(mid)
            if m is None:
                continue
            prev = m.time("last_accessed")
            new_last = max(prev, last) if prev else last
            changes = {"access_count": int(m.get("access_count", 0) or 0) + count, "last_accessed": format_time(new_last)}
            state.change(m, changes)
            result.actions.append(Action("fold", mid, m.path, f"accessed {count}×", f"read {count} time(s), last {format_time(last)}", changes))

    rates, defaults = config_rates(vault.config)
    threshold = float(vault.config.get("decay.archive_below", 0.1))
    if "decay" in steps:
        for m in memories:
            if m.status not in ("active", "archived") or m.path.startswith("inbox/"):
                continue
            last_read = state.last_accessed(m)
            rel = relevance(m, now, rates, defaults, last_read)
            rounded = round(rel.value, 4)
            if rel.rate < 1.0 or "relevance" in m.meta or m.id in accesses:
                old = m.meta.get("relevance")
                if old is None or abs(float(old) - rounded) > 1e-9:
                    state.change(m, {"relevance": rounded})
                    result.actions.append(Action("decay", m.id, m.path, f"relevance {old if old is not None else '-'} → {rounded}", rel.explain().splitlines()[0], {"relevance": rounded}))
            if m.status == "active" and rel.rate < 1.0 and rel.value < threshold:
                state.archive(m, result, "decay", f"relevance {rel.value:.3f} < {threshold} (archive_below)")
            elif m.path.startswith("archive/") and m.id in accesses and rel.value >= threshold and not m.get("superseded_by"):
                state.restore(m, result, f"recalled again (accessed {format_time(accesses[m.id][1])})")

    if "retention" in steps:
        _plan_retention(vault, state, result, now)
    if "supersede" in steps:
        _plan_supersede(state, result)
    if "dedup" in steps or "promote" in steps:
        from .consolidate_sim import plan_dedup, plan_promote

        if "dedup" in steps:
            plan_dedup(vault, state, result, progress)
        if "promote" in steps:
            plan_promote(vault, state, result, now, progress)
    if "distill" in steps:
        from .consolidate_sim import plan_distill

        plan_distill(vault, state, result, now)
    result.neighbours = state.neighbour_reports
    state.render(vault, result)
    return result


class _State:
    """Accumulates key changes and moves per memory before rendering text."""

    def __init__(self, memories: Sequence[Memory]) -> None:
        self.memories = list(memories)
        self.by_id = {m.id: m for m in memories}
        self.changes: dict[str, dict[str, Any]] = defaultdict(dict)
        self.moves: dict[str, str] = {}  # id -> new rel path
        self.archived: set[str] = set()
        # the search index, opened once per plan by the steps that need neighbours
        self.writer = False
        self.index: Any = None
        self.index_tried = False
        self.neighbour_reports: list[dict[str, Any]] = []
        self.vectors: dict[str, tuple[Any, tuple[int, ...], bool]] = {}  # id -> (vector, rowids, stale)

    def change(self, m: Memory, changes: Mapping[str, Any]) -> None:
        self.changes[m.id].update(changes)

    def value(self, m: Memory, key: str) -> Any:
        return self.changes.get(m.id, {}).get(key, m.meta.get(key))

    def last_accessed(self, m: Memory) -> dt.datetime | None:
        try:
            return parse_time(self.value(m, "last_accessed"))
        except ValueError:
            return None

    def live(self, m: Memory) -> bool:
        # A fact superseded earlier in this run is no longer a merge or dispute candidate.
        status = self.changes.get(m.id, {}).get("status", m.status)
        return m.id not in self.archived and status == "active" and not m.path.startswith(("archive/", "inbox/"))

    def archive(self, m: Memory, result: Plan, step: str, why: str, extra: Mapping[str, Any] | None = None) -> None:
        if m.id in self.archived or m.path.startswith("archive/"):
            if extra:
                self.change(m, extra)
            return
        self.archived.add(m.id)
        changes = {"status": "archived", **(extra or {})}
        self.change(m, changes)
        dst = f"archive/{m.path}"
        self.moves[m.id] = dst
        result.actions.append(Action(step, m.id, m.path, "archive", why, changes, dst))

    def restore(self, m: Memory, result: Plan, why: str) -> None:
        dst = m.path.removeprefix("archive/")
        changes = {"status": "active"}
        self.change(m, changes)
        self.moves[m.id] = dst
        result.actions.append(Action("decay", m.id, m.path, "restore", why, changes, dst))

    def render(self, vault: Vault, result: Plan) -> None:
        stamp = format_time(result.now)
        for mid, changes in self.changes.items():
            m = self.by_id[mid]
            if not changes:
                continue
            doc = load_document(vault.root / m.path, m.path)
            real = {k: v for k, v in changes.items() if doc.meta.get(k) != v}
            if not real:
                continue
            text = update_text(doc, {**real, "updated": stamp} if set(real) - {"relevance", "access_count", "last_accessed"} else real)
            dst = self.moves.get(mid, m.path)
            result.writes[dst] = text
            if dst != m.path:
                result.moves[m.path] = dst
        for mid, dst in self.moves.items():
            m = self.by_id[mid]
            if m.path not in result.moves:
                result.moves[m.path] = dst
                result.writes.setdefault(dst, (vault.root / m.path).read_text(encoding="utf-8"))
        result.writes.update(result.new_files)


def _plan_retention(vault: Vault, state: _State, result: Plan, now: dt.datetime) -> None:
    limits = vault.config.get("retention") or {}
    transcripts_days = limits.get("transcripts")
    for m in state.memories:
        if m.type != "episodic" or not state.live(m):
            continue
        anchor = max(filter(None, [m.created, state.last_accessed(m)]), default=None)
        if anchor is None:
            continue
        age = (now - anchor).total_seconds() / 86400
        if m.category == "transcript" and transcripts_days and age > float(transcripts_days):
            state.archive(m, result, "retention", f"transcript older than {transcripts_days} days (retention.transcripts)")
            continue
        days = limits.get(m.scope)
        if days and age > float(days):
            state.archive(m, result, "retention", f"{m.scope} memory unused for {age:.0f} days > {days} (retention.{m.scope})")


def _owner(m: Memory) -> tuple[str, str | None, str | None]:
    return (m.scope, m.agent if m.scope == "self" else None, m.team if m.scope == "team" else None)


def _plan_supersede(state: _State, result: Plan) -> None:
    groups: dict[tuple[Any, ...], list[Memory]] = defaultdict(list)
    for m in state.memories:
        if m.type == "semantic" and m.subject and state.live(m):
            groups[(m.subject, *_owner(m))].append(m)
    for (subject, *_), facts in sorted(groups.items(), key=lambda kv: str(kv[0])):
        if len(facts) < 2:
            continue
        facts.sort(key=lambda m: (m.time("valid_from") or m.created or result.now, m.id))
        winner = facts[-1]
        win_from = winner.time("valid_from") or winner.created or result.now
        losers = facts[:-1]
        for old in losers:
            changes = {"status": "superseded", "valid_to": format_time(win_from), "superseded_by": winner.id}
            state.change(old, changes)
            result.actions.append(Action("supersede", old.id, old.path, f"superseded by {winner.id}", f"same subject '{subject}', older valid_from", changes))
        existing = winner.meta.get("supersedes")
        have = set(existing if isinstance(existing, list) else [existing] if existing else [])
        ids = sorted(have | {m.id for m in losers})
        if set(ids) != have:
            state.change(winner, {"supersedes": ids[0] if len(ids) == 1 else ids})


# --- applying -----------------------------------------------------------------------


def apply(vault: Vault, result: Plan) -> str | None:
    """Perform a plan as one commit (call with the vault lock held)."""
    if result.empty and not result.folded_records:
        return None
    entry = {
        "ts": format_time(result.now),
        "summary": result.summary(),
        "counts": result.counts(),
        "folded_sha": result.folded_sha,
        "actions": [{"step": a.step, "id": a.memory_id, "what": a.what, "why": a.why} for a in result.actions],
    }
    log_path = vault.root / LOG_PATH
    old_log = log_path.read_text(encoding="utf-8") if log_path.exists() else ""
    writes = dict(result.writes)
    sha = None
    if not result.empty:
        writes[LOG_PATH] = old_log + json.dumps(entry, ensure_ascii=False) + "\n"
    moves = {src: dst for src, dst in result.moves.items()}
    # a moved file is written at its destination; remove the source
    removes = [src for src in moves if src not in writes]
    # Fold the access log exactly once: park it, commit, then drop the parked copy.
    access = vault.root / ACCESS_LOG
    folding = vault.root / FOLDING
    if result.folded_records and access.exists() and not folding.exists():
        os.replace(access, folding)
    if writes or removes:
        message = f"memvault: consolidate ({format_time(result.now)}): {result.summary()}"
        body = "\n".join(f"- {a.step}: {a.memory_id}: {a.what} ({a.why})" for a in result.actions[:200])
        if len(result.actions) > 200:
            body += f"\n- … and {len(result.actions) - 200} more (see {LOG_PATH})"
        sha = vault.commit_files(writes, f"{message}\n\n{body}", removes=removes)
    try:
        folding.unlink()
    except FileNotFoundError:
        pass
    return sha


def consolidate(
    vault: Vault,
    now: dt.datetime | None = None,
    dry_run: bool = False,
    only: Iterable[str] | None = None,
    progress: Progress | None = None,
) -> tuple[Plan, str | None]:
    """Plan (and unless ``dry_run``, apply) a consolidation. Returns (plan, commit sha)."""
    if dry_run:
        return plan(vault, now, only, progress), None
    with vault.locked():
        result = plan(vault, now, only, progress, writer=True)
        sha = apply(vault, result)
    return result, sha


def diff_of(vault: Vault, result: Plan) -> str:
    """A unified diff of what the plan would change (for --dry-run)."""
    import difflib

    chunks: list[str] = []
    sources = {dst: src for src, dst in result.moves.items()}
    for rel, text in sorted(result.writes.items()):
        src = sources.get(rel, rel)
        old_path = vault.root / src
        old = old_path.read_text(encoding="utf-8") if old_path.exists() else ""
        if old == text and src == rel:
            continue
        chunks.extend(
            difflib.unified_diff(old.splitlines(True), text.splitlines(True), f"a/{src}" if old else "/dev/null", f"b/{rel}")
        )
    return "".join(chunks)


def why(vault: Vault, memory_id: str, now: dt.datetime | None = None) -> str:
    """Explain a memory's current relevance from its numbers."""
    m = vault.get(memory_id)
    now = now or now_utc()
    rates, defaults = config_rates(vault.config)
    rel = relevance(m, now, rates, defaults)
    threshold = float(vault.config.get("decay.archive_below", 0.1))
    lines = [f"{m.id} ({m.type}/{m.category}, {m.status}) at {format_time(now)}", rel.explain()]
    stored = m.meta.get("relevance")
    if stored is not None:
        lines.append(f"  stored relevance (last consolidation): {stored}")
    if rel.rate >= 1.0:
        lines.append("  does not decay (decay: never), so it is never archived for low relevance")
    elif rel.value < threshold and m.status == "archived":
        lines.append(f"  below archive_below {threshold}: archived; using it (--include-archive) brings it back")
    elif rel.value < threshold:
        lines.append(f"  below archive_below {threshold}: the next consolidation archives it")
    else:
        import math

        # weeks until value falls under threshold at this rate, without new accesses
        if rel.value > 0 and rel.rate < 1:
            weeks_left = math.log(threshold / rel.value) / math.log(rel.rate)
            lines.append(f"  archived in about {weeks_left:.1f} weeks unless it is used")
    return "\n".join(lines)


_ = (re, slugify, render_new)
