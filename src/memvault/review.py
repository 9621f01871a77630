"""Reviews: proposed memories awaiting review (the inbox), and disputes.

Proposals come from agents writing to ``scope: global`` without the librarian role, and
from consolidation (patterns seen in several episodes, facts from transcript summaries).
Disputes are facts in force that may state different values of one thing (a write that
was unsure, consolidation, a merge): ``keep`` settles one, and consolidation lets the newer
win after ``disputes.newer_wins_after``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .core import Core, WriteResult
from .errors import MemvaultError, NotFoundError
from .memory import Memory, format_time, now_utc
from .paths import ARCHIVE, INBOX, REVIEW_LOG
from .store.files import load_document, update_text
from .values import Record

INBOX_DIR = f"{INBOX}/"


def inbox(vault: Core) -> list[Memory]:
    """Proposed memories visible to this identity, oldest first."""
    items = [
        m
        for m in vault.all_memories()
        if m.path.startswith(INBOX_DIR) and vault.identity.can_see(m)
    ]
    return sorted(items, key=lambda m: (str(m.get("created", "")), m.id))


def _proposal(vault: Core, memory_id: str) -> Memory:
    for m in inbox(vault):
        if m.id == memory_id:
            return m
    raise NotFoundError(f"no proposed memory {memory_id!r} in inbox/", key="id")


def accept(vault: Core, memory_id: str, note: str = "") -> WriteResult:
    """Move a proposal into place (status active), one commit. Global needs the librarian role."""
    with vault.locked():
        m = _proposal(vault, memory_id)
        if m.scope == "global" and not vault.identity.is_librarian:
            raise MemvaultError(
                "accepting a 'global' memory needs the librarian role (--role librarian)",
                m.path,
                "scope",
            )
        dst = m.path.removeprefix(INBOX_DIR)
        if (vault.root / dst).exists():
            raise MemvaultError(f"{dst} already exists", m.path)
        now = now_utc()
        doc = load_document(vault.root / m.path, m.path)
        text = update_text(doc, {"status": "active", "updated": format_time(now)})
        msg = f"memvault: accept {memory_id} from inbox" + (f": {note}" if note else "")
        log = _logged(vault, m, "accepted", note)
        writes = {dst: text, REVIEW_LOG: log, **_replaced(vault, m, now)}
        sha = vault.commit_files(writes, msg, removes=[m.path])
    return WriteResult(m, sha, message=msg)


def _replaced(vault: Core, proposal: Memory, now: dt.datetime) -> dict[str, str]:
    """The tombstones of what an accepted proposal ``supersedes`` and is still in force (a
    reviewed procedure replaces the failing one), as file texts."""
    from .conflicts import superseded_keys

    writes: dict[str, str] = {}
    for old_id in _ids(proposal.meta.get("supersedes")):
        try:
            old = vault.get(old_id)
        except NotFoundError:
            continue
        if old.status != "active" or old.path.startswith((INBOX_DIR, f"{ARCHIVE}/")):
            continue
        doc = load_document(vault.root / old.path, old.path)
        keys = superseded_keys(proposal.id, now, format_time(now))
        writes[old.path] = update_text(doc, keys)
    return writes


def reject(vault: Core, memory_id: str, reason: str = "") -> WriteResult:
    """Drop a proposal (its text stays in git history), one commit."""
    with vault.locked():
        m = _proposal(vault, memory_id)
        msg = f"memvault: reject {memory_id} from inbox" + (f": {reason}" if reason else "")
        log = _logged(vault, m, "rejected", reason)
        sha = vault.commit_files({REVIEW_LOG: log}, msg, removes=[m.path])
    return WriteResult(m, sha, message=msg)


def _logged(vault: Core, m: Memory, verdict: str, note: str) -> str:
    """The review log with one more line: what was decided about which proposal, by whom,
    and (for a learned proposal) the episodes it was drawn from, so that consolidation does
    not propose the same thing again."""
    path = vault.root / REVIEW_LOG
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    entry = {
        "when": format_time(now_utc()),
        "verdict": verdict,
        "id": m.id,
        "by": vault.identity.agent or vault.git_identity.name,
        "note": note,
        "derived_from": [str(i) for i in m.meta.get("derived_from") or []],
    }
    return old + json.dumps(entry, ensure_ascii=False) + "\n"


def rejected_evidence(root: Path) -> list[frozenset[str]]:
    """The episode sets of rejected learned proposals (from the review log): a candidate
    drawn from no episode outside one of them brings no new evidence."""
    path = root / REVIEW_LOG
    if not path.exists():
        return []
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:  # a hand-edited line: ignored, the rest still counts
            continue
        ids = entry.get("derived_from") if isinstance(entry, dict) else None
        if entry.get("verdict") == "rejected" and isinstance(ids, list) and ids:
            found.append(frozenset(str(i) for i in ids))
    return found


# --- disputes ------------------------------------------------------------------------------


class Dispute(Record, frozen=True):
    """Facts in force that may state different values of one thing (``status: disputed``,
    each ``related`` to the others), oldest first; a review keeps one of them."""

    facts: tuple[Memory, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(m.id for m in self.facts)

    @property
    def newest(self) -> Memory:
        return max(self.facts, key=_since)

    def as_dict(self) -> dict[str, Any]:
        return {
            "ids": list(self.ids),
            "newest": self.newest.id,
            "facts": [
                {
                    "id": m.id,
                    "path": m.path,
                    "text": m.content,
                    "created": m.meta.get("created"),
                    "valid_from": m.meta.get("valid_from"),
                }
                for m in self.facts
            ],
        }


def _since(m: Memory) -> tuple[dt.datetime, str]:
    """When a fact took effect (``valid_from``, else created): the newer of two wins."""
    return (m.time("valid_from") or m.created or dt.datetime.min.replace(tzinfo=dt.UTC), m.id)


def dispute_groups(memories: Iterable[Memory]) -> list[Dispute]:
    """The disputes among ``memories``: disputed facts joined through their ``related`` links
    to other disputed facts (a fact disputed alone, e.g. by a merge, is a group of one)."""
    disputed = {
        m.id: m
        for m in memories
        if m.status == "disputed" and not m.path.startswith((INBOX_DIR, f"{ARCHIVE}/"))
    }
    seen: set[str] = set()
    groups: list[Dispute] = []
    for mid in sorted(disputed, key=lambda i: _since(disputed[i])):
        if mid in seen:
            continue
        todo, group = [mid], []
        while todo:
            cur = todo.pop()
            if cur in seen or cur not in disputed:
                continue
            seen.add(cur)
            group.append(disputed[cur])
            related = disputed[cur].meta.get("related")
            todo += _ids(related)
        groups.append(Dispute(tuple(sorted(group, key=_since))))
    return groups


def disputes(vault: Core) -> list[Dispute]:
    """Open disputes this identity may see, oldest first."""
    return dispute_groups(m for m in vault.all_memories() if vault.identity.can_see(m))


def keep(vault: Core, memory_id: str, note: str = "") -> WriteResult:
    """Resolve a dispute: ``memory_id`` is in force again (status active), the other facts of
    its dispute are superseded by it (tombstones linked both ways). One commit."""
    with vault.locked():
        kept = vault.get(memory_id)
        if kept.status != "disputed":
            raise MemvaultError(
                f"{memory_id} is not disputed (status {kept.status}); "
                "'memvault dispute list' shows the open disputes",
                kept.path,
                "status",
            )
        group = next(d for d in disputes(vault) if memory_id in d.ids)
        others = [m for m in group.facts if m.id != memory_id]
        writes, msg = resolution(vault, kept, others, now_utc())
        if note:
            msg += f": {note}"
        who = vault.identity.agent or vault.git_identity.name
        msg += f"\n\nResolved by review ({who})."
        sha = vault.commit_files(writes, msg)
    return WriteResult(vault.get(memory_id), sha, tuple(m.id for m in others), message=msg)


def resolution(
    vault: Core, kept: Memory, others: list[Memory], now: dt.datetime
) -> tuple[dict[str, str], str]:
    """The file texts that keep ``kept`` and supersede ``others`` by it, and a commit line."""
    from .conflicts import superseded_keys

    stamp = format_time(now)
    writes: dict[str, str] = {}
    for old in others:
        doc = load_document(vault.root / old.path, old.path)
        writes[old.path] = update_text(doc, superseded_keys(kept.id, now, stamp))
    ids = sorted({*_ids(kept.meta.get("supersedes")), *(m.id for m in others)})
    changes: dict[str, Any] = {"status": "active", "updated": stamp}
    if ids:
        changes["supersedes"] = ids[0] if len(ids) == 1 else ids
    doc = load_document(vault.root / kept.path, kept.path)
    writes[kept.path] = update_text(doc, changes)
    over = f" over {', '.join(m.id for m in others)}" if others else ""
    return writes, f"memvault: dispute: keep {kept.id}{over}"


def _ids(value: Any) -> list[str]:
    return [str(v) for v in (value if isinstance(value, list) else [value] if value else [])]
