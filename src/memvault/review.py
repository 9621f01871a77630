"""The inbox: proposed memories awaiting review.

Proposals come from agents writing to ``scope: global`` without the librarian role, and
from consolidation (patterns seen in several episodes, facts from transcript summaries).
"""

from __future__ import annotations

from .core import Core, WriteResult
from .errors import MemvaultError, NotFoundError
from .memory import Memory, format_time, now_utc
from .paths import INBOX
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
        sha = vault.commit_files({dst: text}, msg, removes=[m.path])
    return WriteResult(m, sha, message=msg)


def reject(vault: Core, memory_id: str, reason: str = "") -> WriteResult:
    """Drop a proposal (its text stays in git history), one commit."""
    with vault.locked():
        m = _proposal(vault, memory_id)
        msg = f"memvault: reject {memory_id} from inbox" + (f": {reason}" if reason else "")
        sha = vault.commit_files({}, msg, removes=[m.path])
    return WriteResult(m, sha, message=msg)
