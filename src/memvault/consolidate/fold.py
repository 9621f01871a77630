"""Folding the access log into the usage records (:mod:`memvault.store.usage`, never the
memory files): ``access_count`` and ``last_accessed`` per memory.

Reads are appended to ``.memvault/access.log`` (git-ignored). A consolidation counts the
records up to its ``now`` and, when it applies, parks the log as
``.memvault/access.log.folding`` until its commit is made, so each record is folded
exactly once even when a run dies half-way.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ..memory import format_time, parse_time
from ..paths import ACCESS_LOG, ACCESS_LOG_FOLDING, CONSOLIDATION_LOG
from .model import Action, Plan, State

Accesses = dict[str, tuple[int, dt.datetime]]  # id -> (number of reads, latest read)


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
        for address in record.get("ids") or []:
            mid = str(address).split("#", 1)[0]  # a turn's read counts for its transcript
            count, last = per.get(mid, (0, when))
            per[mid] = (count + 1, max(last, when))
    return per, None, used  # the hash is the parked file's, taken when it is parked


def plan_fold(root: Path, state: State, result: Plan) -> Accesses:
    """Add the logged reads to each memory's ``access_count`` and ``last_accessed`` (its
    usage record)."""
    per, result.folded_sha, result.folded_records = accesses(root, result.now)
    for mid, (count, last) in sorted(per.items()):
        m = state.by_id.get(mid)
        if m is None:
            continue
        prev = state.last_accessed(m)
        new_last = max(prev, last) if prev else last
        changes = {
            "access_count": int(state.value(m, "access_count") or 0) + count,
            "last_accessed": format_time(new_last),
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
