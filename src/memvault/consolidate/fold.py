"""Folding the access log into the usage records (:mod:`memvault.store.usage`, never the
memory files): ``access_count`` and ``last_accessed`` per memory, and ``decays_from``, the
moment its relevance decays from.

A read is a use in proportion to how well the memory matched (its strength, logged as
``w`` by :func:`memvault.search.accesslog.strength`): a read of strength ``w`` refreshes
relevance to ``w`` times what a full use would (:func:`refresh`). A hit just above the
relevance floor, or far below the answer's best hit, barely refreshes it, and many such
reads are no more a use than one: junk that unrelated questions keep brushing against
still decays on schedule, while a plain answer resets the clock as a read always did.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from ..memory import Memory, format_time, parse_time
from ..paths import ACCESS_LOG, ACCESS_LOG_FOLDING, CONSOLIDATION_LOG
from .model import Action, Plan, State


class Reads(NamedTuple):
    """A memory's reads not yet folded."""

    reads: int  # how many
    last: dt.datetime  # the latest read
    uses: tuple[tuple[dt.datetime, float], ...]  # each read's time and strength (0..1)


Accesses = dict[str, Reads]  # id -> its reads
# A memory that does not decay still ranks by how recently it was used: its reads' strength
# is read on the "normal" rate's scale.
DEFAULT_RATE = 0.8


def refresh(
    anchor: dt.datetime, uses: tuple[tuple[dt.datetime, float], ...], rate: float
) -> dt.datetime:
    """The moment relevance decays from after ``uses``, for a memory decaying at ``rate``
    a week. A read of strength ``w`` at ``t`` leaves relevance at ``w`` times a full use's,
    which decay reads as a full use made ``log(w) / log(rate)`` weeks before ``t``; the
    latest such moment wins (relevance is the best recent use, not a sum of glances)."""
    rate = rate if 0.0 < rate < 1.0 else DEFAULT_RATE
    for when, weight in uses:
        if weight <= 0.0:
            continue
        weeks = math.log(min(1.0, weight)) / math.log(rate)
        anchor = max(anchor, when - dt.timedelta(weeks=weeks))
    return anchor.replace(microsecond=0)


def _weights(record: dict[str, Any], n: int) -> list[float]:
    """Each read's strength from a record's ``w`` (records without it are full uses)."""
    w = record.get("w")
    if not isinstance(w, list) or len(w) != n:
        return [1.0] * n
    out = []
    for x in w:
        try:
            out.append(max(0.0, min(1.0, float(x))))
        except (TypeError, ValueError):
            out.append(1.0)
    return out


def read_records(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a log, one a line; damaged lines are skipped."""
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


def file_sha(path: Path) -> str | None:
    if not path.exists():
        return None
    return hashlib.sha256(path.read_bytes()).hexdigest()


def last_log_entry(root: Path) -> dict[str, Any]:
    """The latest entry of the consolidation log ({} when there is none)."""
    path = root / CONSOLIDATION_LOG
    if not path.exists():
        return {}
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    try:
        entry = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        return {}
    return entry if isinstance(entry, dict) else {}


def accesses(root: Path, now: dt.datetime) -> tuple[Accesses, str | None, int]:
    """Per id, reads from the log not yet folded, up to ``now``; the records' hash; how many
    records were counted."""
    folding = root / ACCESS_LOG_FOLDING
    records: list[dict[str, Any]] = []
    # A previous run may have died after its commit but before removing the folding file:
    # its records are already in the files then.
    if not (folding.exists() and file_sha(folding) == last_log_entry(root).get("folded_sha")):
        records.extend(read_records(folding))
    records.extend(read_records(root / ACCESS_LOG))
    per: Accesses = {}
    used = 0
    for record in records:
        try:
            when = parse_time(record.get("ts"))
        except ValueError:
            continue
        if when is None or when > now:
            continue
        used += 1
        ids = list(record.get("ids") or [])
        for address, weight in zip(ids, _weights(record, len(ids)), strict=True):
            mid = str(address).split("#", 1)[0]  # a turn's read counts for its transcript
            seen = per.get(mid) or Reads(0, when, ())
            per[mid] = Reads(seen.reads + 1, max(seen.last, when), (*seen.uses, (when, weight)))
    return per, None, used  # the hash is the parked file's, taken when it is parked


def plan_fold(
    root: Path, state: State, result: Plan, rate_of: Callable[[Memory], float]
) -> Accesses:
    """Add the logged reads to each memory's ``access_count`` and ``last_accessed`` (its
    usage record), and move its ``decays_from`` by their strength (``rate_of``: a memory's
    decay rate a week)."""
    per, result.folded_sha, result.folded_records = accesses(root, result.now)
    for mid, (count, last, uses) in sorted(per.items()):
        m = state.by_id.get(mid)
        if m is None:
            continue
        prev = state.last_accessed(m)
        new_last = max(prev, last) if prev else last
        start = state.decays_from(m) or m.created or min(when for when, _ in uses)
        since = format_time(min(refresh(start, uses, rate_of(m)), new_last))
        changes = {
            "access_count": int(state.value(m, "access_count") or 0) + count,
            "last_accessed": format_time(new_last),
            # only kept when weak reads left it behind the latest read
            "decays_from": since if since != format_time(new_last) else None,
        }
        state.set_usage(m, changes)
        why = f"read {count} time(s), last {format_time(last)}"
        result.actions.append(
            Action("fold", mid, m.path, f"accessed {count}×", why, changes, usage_only=True)
        )
    return per


def park_access_log(root: Path, result: Plan) -> None:
    """Set the log being folded aside, so reads logged during the commit start a new one,
    and record the parked file's hash (``result.folded_sha``) for the consolidation log.

    A parked file left by an earlier run that died before its commit is still there: the
    new log is appended to it, so the parked file holds every record this run folded."""
    access = root / ACCESS_LOG
    folding = root / ACCESS_LOG_FOLDING
    if not result.folded_records:
        return
    if access.exists():
        if folding.exists():
            with folding.open("ab") as out:
                out.write(access.read_bytes())
            access.unlink()
        else:
            os.replace(access, folding)
    result.folded_sha = file_sha(folding)


def drop_parked_log(root: Path) -> None:
    """Remove the parked log once its records are committed into the files (its records go
    to the access history first, for the windows of ``stats``)."""
    folding = root / ACCESS_LOG_FOLDING
    if folding.exists():
        from ..search.accesslog import retain

        retain(root, folding)
    folding.unlink(missing_ok=True)
