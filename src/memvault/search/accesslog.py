"""The access log: one JSON line per read, appended to ``.memvault/access.log`` (ignored
by git). Reads never rewrite tracked files; consolidation later folds the log into the
memories' ``access_count`` / ``last_accessed``, and ``stats`` reads usage from it.

Folded records are not thrown away: :func:`retain` moves them to
``.memvault/access.log.history`` (also ignored by git, kept for ``KEEP_DAYS``), so that
``stats`` can measure a window longer than the time since the last consolidation.

Each record is written with a single ``write`` on a file opened ``O_APPEND``, so lines
from concurrent readers never interleave (POSIX appends are atomic for one write).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..memory import format_time, now_utc, parse_time
from ..paths import ACCESS_LOG, ACCESS_LOG_FOLDING, ACCESS_LOG_HISTORY

if TYPE_CHECKING:  # pragma: no cover
    from ..store.repository import Repository
    from .results import SearchHit

MAX_QUERY_CHARS = 500
KEEP_DAYS = 90  # folded reads kept in the history for `stats` (its longest window)
# Only the first hits of an answer count as reads: an agent acts on the top of a list, and a
# long tail of weak hits would keep unrelated memories from decaying.
READ_TOP_K = 5


def counted(hits: Sequence[SearchHit], floor: float) -> list[str]:
    """The ids of the hits that count as reads: returned, within the first
    :data:`READ_TOP_K`, and each above the relevance floor on its own (the floor holds the
    answer as a whole, so a weak hit may be returned beside a strong one; it was not what
    the answer was about, and counting it would keep junk alive)."""
    return [h.id for h in hits[:READ_TOP_K] if h.relevance is None or h.relevance >= floor]


def strength(relevance: float | None, floor: float, top: float | None = None) -> float:
    """How much a read is a use (0..1): the hit's relevance on the scale from the floor (0)
    to the same text (1), times its share of the answer's best hit (``top``) on the same
    scale. A hit just above the floor, or far below the hit the answer was about, barely
    refreshes the memory's relevance (:mod:`memvault.consolidate.fold`); a read without a
    relevance (a memory opened by id, the fact that decided a verdict) is a full use."""
    if relevance is None:
        return 1.0
    if floor >= 1.0:
        return 1.0 if relevance >= 1.0 else 0.0
    own = min(1.0, max(0.0, (relevance - floor) / (1.0 - floor)))
    best = own if top is None else min(1.0, max(own, (top - floor) / (1.0 - floor)))
    return round(own * own / best, 3) if best > 0 else 0.0


def strengths(hits: Sequence[SearchHit], floor: float) -> list[float]:
    """:func:`strength` of each hit :func:`counted` counts, in its order."""
    read = [h for h in hits[:READ_TOP_K] if h.relevance is None or h.relevance >= floor]
    top = max((h.relevance for h in read if h.relevance is not None), default=None)
    return [strength(h.relevance, floor, top) for h in read]


def log_access(
    root: Path,
    cmd: str,
    query: str,
    ids: Sequence[str],
    ms: float,
    agent: str | None = None,
    **extra: object,
) -> None:
    """Append one ``{"ts", "kind": "query", "cmd", "q", "ids", "ms", "agent"}`` record
    (plus ``extra``, e.g. ``w``: each read's strength).

    Never raises: a read must not fail because its log line could not be written (a
    read-only checkout, a full disk); a warning goes to stderr instead.
    """
    record: dict[str, object] = {
        "ts": format_time(now_utc()),
        "kind": "query",
        "cmd": cmd,
        "q": query[:MAX_QUERY_CHARS],
        "ids": list(ids),
        "ms": round(float(ms), 1),
        "agent": agent,
    }
    record.update({k: v for k, v in extra.items() if v is not None})
    line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    path = root / ACCESS_LOG
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            _warn(exc)
            return
    except OSError as exc:
        _warn(exc)
        return
    try:
        os.write(fd, line)
    except OSError as exc:
        _warn(exc)
    finally:
        os.close(fd)


def _warn(exc: OSError) -> None:
    print(f"memvault: could not write the access log ({exc.strerror or exc})", file=sys.stderr)


def log_read(
    vault: Repository,
    cmd: str,
    query: str,
    ids: Sequence[str],
    ms: float,
    weights: Sequence[float] | None = None,
) -> None:
    """One line in the access log: who read what, with which query, and how much each read
    was a use (``w``, one :func:`strength` per id; left out when every read is a full use)."""
    w = list(weights) if weights is not None and any(x < 1.0 for x in weights) else None
    log_access(vault.root, cmd, query, ids, ms, vault.identity.agent, w=w)


def _lines(path: Path) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return [line.rstrip("\n") for line in handle if line.strip()]
    except FileNotFoundError:
        return []


def _parse(lines: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn last line from a killed process: skip it
        if isinstance(record, dict):
            out.append(record)
    return out


def read_log(path: Path) -> list[dict[str, Any]]:
    """The records of one log file, in order; damaged lines are skipped."""
    return _parse(_lines(path))


def read_reads(root: Path) -> list[dict[str, Any]]:
    """Every read still on record: the folded history, a log being folded, the live log.

    A line found in the history is not counted again from the other two (a consolidation
    that died between keeping the history and removing its parked log leaves both)."""
    history = _lines(root / ACCESS_LOG_HISTORY)
    kept = set(history)
    rest = [
        line
        for name in (ACCESS_LOG_FOLDING, ACCESS_LOG)
        for line in _lines(root / name)
        if line not in kept
    ]
    return _parse(history + rest)


def retain(root: Path, folded: Path, keep_days: int = KEEP_DAYS) -> None:
    """Add the records of ``folded`` (a parked log, now in the files) to the history and
    drop history older than ``keep_days``. Lines already there are not added twice, so a
    run repeated after a crash adds nothing. Never raises: statistics are not worth a
    failed consolidation."""
    import datetime as dt

    from ..store.files import atomic_write

    cutoff = now_utc() - dt.timedelta(days=keep_days)
    lines = _lines(root / ACCESS_LOG_HISTORY)
    seen = set(lines)
    lines += [line for line in _lines(folded) if line not in seen]
    kept = []
    for line in lines:
        record = _parse([line])
        try:
            when = parse_time(record[0].get("ts")) if record else None
        except ValueError:
            when = None
        if when is not None and when >= cutoff:
            kept.append(line)
    try:
        atomic_write(root / ACCESS_LOG_HISTORY, "".join(f"{line}\n" for line in kept))
    except OSError as exc:
        _warn(exc)
