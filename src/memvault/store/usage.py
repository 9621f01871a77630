"""Usage records: how often and how lately each memory was read, and its decayed relevance,
kept in one tracked file instead of in the memory files.

``.memvault/usage.jsonl`` holds one JSON object a line, sorted by id::

    {"id": "deploy-failed", "access_count": 4, "last_accessed": "2026-11-30T09:12:00Z",
     "relevance": 0.61}                       (on one line in the file)

``decays_from`` is there when it differs from ``last_accessed``: the moment relevance decays
from when the reads were weak matches (each read moves it towards its own time by its
strength, :func:`memvault.consolidate.fold.refresh`).

Consolidation writes it (its fold and decay steps); nothing else does. A memory file's own
``access_count``/``last_accessed``/``relevance`` keys (written by versions before this file
existed, or by hand) are the fallback for an id the file has no record of. Keeping them out
of the memory files means a consolidation commit touches only the memories it decides
about (archive, merge, supersede...), not every memory somebody read that week.

Reads of the file are cached by its size and modification time, so a search (which ranks
with the relevance) pays a ``stat`` per query, not a parse.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from ..paths import USAGE_PATH
from ..values import TYPE_CHECKING, Record

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from ..memory import Memory

USAGE_KEYS = ("access_count", "last_accessed", "relevance", "decays_from")


class Usage(Record, frozen=True):
    access_count: int = 0
    last_accessed: str | None = None  # ISO time of the latest folded read
    relevance: float | None = None  # decayed relevance at the last consolidation
    # ISO time relevance decays from, when weak reads left it before ``last_accessed``
    decays_from: str | None = None

    def to_json(self, memory_id: str) -> dict[str, Any]:
        out: dict[str, Any] = {"id": memory_id, "access_count": self.access_count}
        if self.last_accessed:
            out["last_accessed"] = self.last_accessed
        if self.relevance is not None:
            out["relevance"] = self.relevance
        if self.decays_from:
            out["decays_from"] = self.decays_from
        return out


Records = dict[str, Usage]

_cache: dict[str, tuple[tuple[int, int, int], Records]] = {}


def parse(text: str) -> Records:
    """The records of a usage file's text. A damaged line (a bad hand edit, a half-merged
    file) is skipped: the memory falls back to its own keys until the next consolidation."""
    out: Records = {}
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
            continue
        out[obj["id"]] = _record(obj)
    return out


def _record(obj: Mapping[str, Any]) -> Usage:
    try:
        count = max(0, int(obj.get("access_count") or 0))
    except (TypeError, ValueError):
        count = 0
    last = obj.get("last_accessed")
    rel = obj.get("relevance")
    try:
        relevance = None if rel is None else min(1.0, max(0.0, float(rel)))
    except (TypeError, ValueError):
        relevance = None
    since = obj.get("decays_from")
    return Usage(count, str(last) if last else None, relevance, str(since) if since else None)


def render(records: Mapping[str, Usage]) -> str:
    """The file's text: one record a line, sorted by id (a merge sees one line per memory)."""
    return "".join(
        json.dumps(records[mid].to_json(mid), ensure_ascii=False, sort_keys=False) + "\n"
        for mid in sorted(records)
    )


def load(root: Path) -> Records:
    """The vault's usage records ({} when there is no file), cached by the file's stat."""
    path = root / USAGE_PATH
    try:
        st = os.stat(path)
    except OSError:
        _cache.pop(str(path), None)
        return {}
    key = (st.st_size, st.st_mtime_ns, st.st_ino)
    cached = _cache.get(str(path))
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        records = parse(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return {}
    _cache[str(path)] = (key, records)
    return records


def of(memory: Memory, records: Mapping[str, Usage]) -> Usage:
    """A memory's usage: its record, else what its own file says (older vaults kept it there)."""
    found = records.get(memory.id)
    if found is not None:
        return found
    return _record(
        {
            "access_count": memory.meta.get("access_count"),
            "last_accessed": memory.meta.get("last_accessed"),
            "relevance": memory.meta.get("relevance"),
        }
    )


def merge(base: str, ours: str, theirs: str) -> str:
    """Three-way merge of two clones' usage files: reads both sides folded add up (against
    the common ancestor), the later read wins, and the relevance of the side whose latest
    read is newer is kept (each side decayed from what it had seen)."""
    b, o, t = parse(base), parse(ours), parse(theirs)
    out: Records = {}
    for mid in sorted(set(o) | set(t)):
        mine, other = o.get(mid), t.get(mid)
        if mine is None or other is None:
            kept = mine or other
            assert kept is not None
            out[mid] = kept
            continue
        start = b.get(mid, Usage()).access_count
        count = start + (mine.access_count - start) + (other.access_count - start)
        later = max((mine, other), key=lambda u: u.last_accessed or "")
        out[mid] = Usage(max(count, 0), later.last_accessed, later.relevance, later.decays_from)
    return render(out)


__all__ = ["USAGE_KEYS", "Records", "Usage", "load", "merge", "of", "parse", "render"]
