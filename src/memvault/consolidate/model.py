"""What a consolidation plans: actions with their reasons, the plan, and the working state.

A :class:`State` gathers the key changes and moves of one planning run, memory by memory,
so that each step sees what the earlier steps decided; the runner renders it into file
texts at the end.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..memory import Memory, format_time, parse_time
from ..paths import ARCHIVE, INBOX
from ..store.usage import USAGE_KEYS, Records, Usage
from ..store.usage import of as usage_of
from ..values import Record, field

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    from numpy.typing import NDArray

    from ..index import Index

STEPS = ("fold", "decay", "retention", "dedup", "supersede", "promote", "optimize", "distill")
ARCHIVE_DIR = f"{ARCHIVE}/"
INBOX_DIR = f"{INBOX}/"
Progress = Callable[[str, int, int], None]  # (stage, done, total)
Owner = tuple[str, str | None, str | None]  # (scope, agent, team)


def owner(m: Memory) -> Owner:
    """Who a memory belongs to: merges, disputes and proposals never cross owners."""
    return (m.scope, m.agent if m.scope == "self" else None, m.team if m.scope == "team" else None)


def union_strings(members: Sequence[Memory], key: str) -> list[str]:
    """The distinct values of a key (a list or a single value) over ``members``, as text."""
    out: list[str] = []
    for m in members:
        value = m.meta.get(key)
        for item in value if isinstance(value, list) else [value] if value else []:
            if str(item) not in out:
                out.append(str(item))
    return out


def union_values(members: Sequence[Memory], key: str) -> list[Any]:
    """The distinct values of a key over ``members``, as they are (sources may be mappings)."""
    out: list[Any] = []
    for m in members:
        value = m.meta.get(key)
        for item in value if isinstance(value, list) else [value] if value else []:
            if item not in out:
                out.append(item)
    return out


def id_set(value: Any) -> set[str]:
    """A ``supersedes``-style key (one id or a list of ids) as a set."""
    return set(value if isinstance(value, list) else [value] if value else [])


class Action(Record):
    step: str
    memory_id: str
    path: str
    what: str  # e.g. "archive", "merge into x", "relevance 0.52 -> 0.41"
    why: str
    changes: dict[str, Any] = field(default_factory=dict)
    move_to: str | None = None
    # bookkeeping, not a decision: reads folded or relevance decayed (the usage file only)
    usage_only: bool = False

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


class Plan(Record):
    now: dt.datetime
    actions: list[Action] = field(default_factory=list)
    new_files: dict[str, str] = field(default_factory=dict)  # rel -> text (proposals, summaries)
    disputed: list[dict[str, Any]] = field(default_factory=list)
    neighbours: list[dict[str, Any]] = field(default_factory=list)  # how similar pairs were found
    folded_sha: str | None = None
    folded_records: int = 0
    # filled when the plan is rendered: rel path -> new text, and src -> dst moves
    writes: dict[str, str] = field(default_factory=dict)
    moves: dict[str, str] = field(default_factory=dict)
    # rel path -> the memory a write holds, when known without parsing it back
    known: dict[str, Memory] = field(default_factory=dict)
    # memory files with edits not committed yet: the run is not applied while there are any
    held: list[str] = field(default_factory=list)
    # the usage records after this run (:mod:`memvault.store.usage`), when they change
    usage: Records | None = None
    # one line each: what the run did not do as configured, and why (a command not allowed)
    notes: list[str] = field(default_factory=list)

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
            "held_uncommitted": self.held,
            "notes": self.notes,
        }


class CachedVector(NamedTuple):
    """A memory's vector, read once per plan (dedup and promotion ask about the same ones)."""

    vector: NDArray[np.float32]
    rowids: tuple[int, ...]  # its chunks in the index (empty: embedded now)
    stale: bool  # the index held other text for it, so it was embedded on the fly


class State:
    """Accumulates key changes and moves per memory before rendering text."""

    def __init__(
        self, memories: Sequence[Memory], writer: bool = False, usage: Records | None = None
    ) -> None:
        self.memories = list(memories)
        self.by_id = {m.id: m for m in memories}
        self.changes: dict[str, dict[str, Any]] = defaultdict(dict)
        # reads and relevance live in the usage file, not in the memories' own files:
        # what the vault holds, and what this run changes of it
        self.usage: Records = dict(usage or {})
        self.usage_changes: dict[str, dict[str, Any]] = defaultdict(dict)
        self.moves: dict[str, str] = {}  # id -> new rel path
        self.archived: set[str] = set()
        # ``writer``: the caller holds the vault lock, so the index may be brought up to date
        self.writer = writer
        # the search index, opened once per plan by the steps that need neighbours
        self.index: Index | None = None
        self.index_tried = False
        self.neighbour_reports: list[dict[str, Any]] = []
        self.vectors: dict[str, CachedVector] = {}
        # the vector store's answers, by query (see index.neighbours.similar_pairs): dedup
        # and promotion ask about the same episodes
        self.ann_answers: dict[Any, Any] = {}

    def change(self, m: Memory, changes: Mapping[str, Any]) -> None:
        self.changes[m.id].update(changes)

    def value(self, m: Memory, key: str) -> Any:
        if key in USAGE_KEYS:
            changed = self.usage_changes.get(m.id, {})
            return changed[key] if key in changed else getattr(self.used(m), key)
        return self.changes.get(m.id, {}).get(key, m.meta.get(key))

    def used(self, m: Memory) -> Usage:
        """The memory's usage before this run: its record, else its file's own keys."""
        return usage_of(m, self.usage)

    def set_usage(self, m: Memory, changes: Mapping[str, Any]) -> None:
        """Change a memory's usage record (never its file)."""
        self.usage_changes[m.id].update(changes)

    def usage_after(self) -> Records:
        """Every memory's usage record after this run, for the memories that still exist."""
        out: Records = {}
        for mid, m in self.by_id.items():
            changed = self.usage_changes.get(mid)
            if mid not in self.usage and not changed:
                continue
            base = self.used(m)
            out[mid] = base.replace(**changed) if changed else base
        return out

    def last_accessed(self, m: Memory) -> dt.datetime | None:
        try:
            return parse_time(self.value(m, "last_accessed"))
        except ValueError:
            return None

    def decays_from(self, m: Memory) -> dt.datetime | None:
        """The moment the memory's relevance decays from: its last read, or earlier when the
        reads were weak matches (:func:`memvault.consolidate.fold.refresh`)."""
        try:
            since = parse_time(self.value(m, "decays_from"))
        except ValueError:
            since = None
        return since or self.last_accessed(m)

    def live(self, m: Memory) -> bool:
        # A fact superseded earlier in this run is no longer a merge or dispute candidate.
        status = self.changes.get(m.id, {}).get("status", m.status)
        return (
            m.id not in self.archived
            and status == "active"
            and not m.path.startswith((ARCHIVE_DIR, INBOX_DIR))
        )

    def archive(
        self,
        m: Memory,
        result: Plan,
        step: str,
        why: str,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        if m.id in self.archived or m.path.startswith(ARCHIVE_DIR):
            if extra:
                self.change(m, extra)
            return
        self.archived.add(m.id)
        changes = {"status": "archived", **(extra or {})}
        self.change(m, changes)
        dst = ARCHIVE_DIR + m.path
        self.moves[m.id] = dst
        result.actions.append(Action(step, m.id, m.path, "archive", why, changes, dst))

    def restore(self, m: Memory, result: Plan, why: str) -> None:
        dst = m.path.removeprefix(ARCHIVE_DIR)
        changes = {"status": "active"}
        self.change(m, changes)
        self.moves[m.id] = dst
        result.actions.append(Action("decay", m.id, m.path, "restore", why, changes, dst))
