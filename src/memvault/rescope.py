"""Moving a memory to another scope (``memvault rescope ID --scope S``), as one commit.

The rules are ``add``'s: ``global`` without the librarian role is proposed in ``inbox/``
for review; ``self`` belongs to an agent (the one rescoping, who must be the memory's own
agent unless a librarian); a global memory moves only by a librarian's hand; a pause on
the new scope (or on this agent, or the memory's channel) refuses the move.
"""

from __future__ import annotations

from .core import Core, WriteResult
from .errors import PermissionDeniedError
from .memory import format_time, now_utc
from .paths import INBOX
from .pauses import check_scope
from .store.files import check_text, load_document, update_text


def rescope(vault: Core, memory_id: str, scope: str, reason: str = "") -> WriteResult:
    """Give ``memory_id`` the scope ``scope`` (one commit; none when it already has it)."""
    check_scope(scope)
    who = vault.identity
    with vault.locked():
        memory = vault.get(memory_id)  # one this identity may see
        old = memory.scope
        if old == scope:
            return WriteResult(memory, None, message=f"{memory_id} already has scope {scope}")
        if old == "global" and not who.is_librarian:
            raise PermissionDeniedError(
                "moving a 'global' memory needs the librarian role (--role librarian)",
                memory.path,
                "scope",
            )
        changes: dict[str, object] = {"scope": scope, "updated": format_time(now_utc())}
        if scope == "self":
            if not who.agent:
                raise PermissionDeniedError(
                    "scope 'self' needs an agent identity (--agent or MEMVAULT_AGENT)",
                    memory.path,
                    "scope",
                )
            if memory.agent not in (None, who.agent) and not who.is_librarian:
                raise PermissionDeniedError(
                    f"{memory_id} was written by agent {memory.agent}: only that agent (or a "
                    "librarian) can make it its own",
                    memory.path,
                    "scope",
                )
            changes["agent"] = memory.agent or who.agent
        if scope == "team" and not memory.team and who.team:
            changes["team"] = who.team
        vault._check_writable(
            scope, f"rescope {memory_id}", memory.agent, memory.meta.get("channel")
        )
        path = memory.path
        proposed = scope == "global" and not who.is_librarian
        if proposed and not path.startswith(f"{INBOX}/"):
            path, changes["status"] = f"{INBOX}/{path}", "proposed"
        elif old == "global" and path.startswith(f"{INBOX}/") and not proposed:
            # proposed only because it was global: in its new scope it needs no review
            path, changes["status"] = path.removeprefix(f"{INBOX}/"), "active"
        text = update_text(load_document(vault.root / memory.path, memory.path), changes)
        msg = f"memvault: rescope {memory_id}: {old} -> {scope}"
        msg += f": {' '.join(reason.split())}" if reason.strip() else ""
        if proposed:
            msg += "\n\nScope 'global' needs the librarian role: proposed in inbox/ for review."
        removes = [memory.path] if path != memory.path else []
        sha = vault.commit_files({path: text}, msg, removes=removes)
    return WriteResult(check_text(text, path), sha, inbox=proposed, message=msg)
