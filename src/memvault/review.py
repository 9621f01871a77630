"""The inbox: proposed memories awaiting review.

Proposals come from agents writing to ``scope: global`` without the librarian role, and
from consolidation (patterns seen in several episodes, facts from transcript summaries).
"""

from __future__ import annotations

import json
from pathlib import Path

from .core import Core, WriteResult
from .errors import MemvaultError, NotFoundError
from .memory import Memory, format_time, now_utc
from .paths import INBOX, REVIEW_LOG
from .store.files import load_document, update_text

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
        doc = load_document(vault.root / m.path, m.path)
        text = update_text(doc, {"status": "active", "updated": format_time(now_utc())})
        msg = f"memvault: accept {memory_id} from inbox" + (f": {note}" if note else "")
        log = _logged(vault, m, "accepted", note)
        sha = vault.commit_files({dst: text, REVIEW_LOG: log}, msg, removes=[m.path])
    return WriteResult(m, sha, message=msg)


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
