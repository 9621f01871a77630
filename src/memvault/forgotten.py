"""What was forgotten stays visible as a fact: when, by whom and why, never what.

``forget`` and ``purge`` end their commit message with trailers (``Forgotten-by:``,
``Reason:``, the memory's ``Memory-scope:``/``Memory-agent:``/``Memory-team:``); a purge
names the memory by the sha256 of its id (``Purged-id-sha256:``), since the purge erases
the id itself from every other commit and message. :func:`find` reads the newest such
record of an id back from git, for ``history ID`` and the inspector's memory page, and
shows it only to an identity that could have seen the memory (the same scope rules).
"""

from __future__ import annotations

import hashlib

from .memory import Memory
from .store.git import ops as gitstore
from .values import TYPE_CHECKING, Record, field

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from .scopes import AgentIdentity

FORGET_SUBJECT = "memvault: forget {id}:"
PURGE_KEY = "Purged-id-sha256"


class Forgotten(Record, frozen=True):
    """The record of a forgotten (``forgotten``) or purged (``purged``) memory."""

    id: str
    action: str  # forgotten | purged
    when: str  # the commit's author time, ISO
    by: str  # agent:NAME, or the commit's author for a person
    reason: str
    commit: str
    path: str | None = None  # forgotten: the file it had (git history still holds it)
    commits: list[gitstore.Change] = field(default_factory=list)  # forgotten: the file's commits

    def as_dict(self) -> dict[str, object]:
        data = dict(super().as_dict())
        data["commits"] = [c.as_dict() for c in self.commits]
        return data


def id_hash(memory_id: str) -> str:
    return hashlib.sha256(memory_id.encode("utf-8")).hexdigest()


def trailers(by: str, memory: Memory, reason: str, *, purged: bool = False) -> str:
    """The lines a forget (or purge) commit message ends with: who (``by``), why, whose
    the memory was."""
    lines = [f"Forgotten-by: {by}", f"Reason: {' '.join(reason.split())}"]
    lines.append(f"Memory-scope: {memory.scope}")
    if memory.agent:
        lines.append(f"Memory-agent: {memory.agent}")
    if memory.team:
        lines.append(f"Memory-team: {memory.team}")
    if purged:
        lines.append(f"{PURGE_KEY}: {id_hash(memory.id)}")
    return "\n".join(lines)


def find(root: Path, identity: AgentIdentity, memory_id: str, limit: int = 50) -> Forgotten | None:
    """The newest forget or purge record of ``memory_id`` that ``identity`` may see, or None
    (``limit``: at most that many commits of a forgotten file's history)."""
    needles = [FORGET_SUBJECT.format(id=memory_id), f"{PURGE_KEY}: {id_hash(memory_id)}"]
    fmt = "%x1e%H%x1f%aI%x1f%an%x1f%B"
    args = ["log", "-n1", "-F", f"--format={fmt}"]
    found: list[tuple[str, str, str, str]] = []
    for needle in needles:
        out = gitstore.run_git(root, [*args, f"--grep={needle}"], check=False).stdout
        for record in out.split("\x1e"):
            parts = record.split("\x1f", 3)
            if len(parts) == 4:
                found.append((parts[1], parts[0], parts[2], parts[3]))
    if not found:
        return None
    when, sha, author, message = max(found)  # ISO times of one repository sort by time
    keys = _trailers(message)
    owner = (keys.get("Memory-scope", "team"), keys.get("Memory-agent"), keys.get("Memory-team"))
    if not identity.can_see_owner(*owner):
        return None
    purged = PURGE_KEY in keys
    subject = message.split("\n", 1)[0]
    reason = keys.get("Reason") or subject.split(": ", 2)[-1]
    path = None if purged else _removed_path(message)
    commits = gitstore.history(root, path, limit) if path else []
    return Forgotten(
        memory_id,
        "purged" if purged else "forgotten",
        when,
        keys.get("Forgotten-by") or author,
        reason,
        sha,
        path,
        commits,
    )


def _trailers(message: str) -> dict[str, str]:
    keys: dict[str, str] = {}
    for line in message.strip().splitlines():
        key, sep, value = line.partition(": ")
        if sep and key and " " not in key and key[0].isupper():
            keys.setdefault(key, value.strip())
    return keys


def _removed_path(message: str) -> str | None:
    for line in message.splitlines():
        if line.startswith("Removed ") and line.endswith("."):
            return line[len("Removed ") : -1]
    return None
