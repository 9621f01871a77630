"""What a memory's page shows beside its text: the supersede chain, related memories, its git
history (with diffs on the history page) and its relevance. Memories the identity may not
see are never named: a link to one is counted, not shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import ARCHIVE, INBOX
from ..errors import MemvaultError
from ..values import Record
from .render import DiffLine, diff_lines

if TYPE_CHECKING:  # pragma: no cover
    from .. import Memory, Vault

CHAIN_STEPS = 20  # links followed each way along a supersede chain
HISTORY = 20  # commits shown


class Link(Record, frozen=True):
    id: str
    title: str
    status: str


def _ids(value: object) -> list[str]:
    items = value if isinstance(value, list) else [value] if value else []
    return [str(i) for i in items if isinstance(i, str)]


def _visible(vault: Vault, memory_id: str) -> Memory | None:
    try:
        return vault.get(memory_id)
    except MemvaultError:  # gone, another agent's, a bad id in a hand-edited file
        return None


def links(vault: Vault, ids: list[str]) -> tuple[list[Link], int]:
    """The memories among ``ids`` this identity may see, and how many others there are."""
    shown: list[Link] = []
    hidden = 0
    for mid in dict.fromkeys(ids):
        m = _visible(vault, mid)
        if m is None:
            hidden += 1
        else:
            shown.append(Link(m.id, m.title, m.status))
    return shown, hidden


def chain(vault: Vault, memory: Memory) -> list[Link]:
    """Older facts this one superseded (oldest first), itself, then what superseded it."""
    before: list[Link] = []
    seen = {memory.id}
    current = memory
    for _ in range(CHAIN_STEPS):
        older = [i for i in _ids(current.meta.get("supersedes")) if i not in seen]
        found = _visible(vault, older[0]) if older else None
        if found is None:
            break
        seen.add(found.id)
        before.insert(0, Link(found.id, found.title, found.status))
        current = found
    after: list[Link] = []
    current = memory
    for _ in range(CHAIN_STEPS):
        newer = [i for i in _ids(current.meta.get("superseded_by")) if i not in seen]
        found = _visible(vault, newer[0]) if newer else None
        if found is None:
            break
        seen.add(found.id)
        after.append(Link(found.id, found.title, found.status))
        current = found
    if not before and not after:
        return []
    return [*before, Link(memory.id, memory.title, memory.status), *after]


class Commit(Record, frozen=True):
    sha: str
    author: str
    date: str
    message: str
    path: str
    diff: tuple[DiffLine, ...] = ()


def _places(path: str) -> list[str]:
    """Every path the memory's file can have had: memvault moves a file into archive/ or
    out of inbox/ under the same relative path (a hand rename is not followed)."""
    base = path
    for tree in (ARCHIVE, INBOX):
        base = base.removeprefix(f"{tree}/")
    return [base, f"{ARCHIVE}/{base}", f"{INBOX}/{base}"]


def history(
    vault: Vault, memory: Memory, limit: int = HISTORY, diffs: bool = False
) -> list[Commit]:
    """Commits that touched the memory's file, newest first, across its moves into archive/
    and out of inbox/ (one ``git log``; ``diffs``: each commit with its change).

    Not ``git log --follow``: that also "follows" a file created beside a similar one (a
    fact superseding another) into the other's history, and costs a rename search.
    """
    places = _places(memory.path)
    fmt = "%x1e%H%x1f%an <%ae>%x1f%aI%x1f%s"
    args = ["log", f"-n{limit}", "-M", "--no-color", "--no-ext-diff", f"--format={fmt}"]
    args += ["-p"] if diffs else ["--name-only"]
    proc = vault.run_git([*args, "--", *places], check=False)
    out: list[Commit] = []
    for record in proc.stdout.split("\x1e"):
        head, _, rest = record.partition("\n")
        parts = head.split("\x1f")
        if len(parts) < 4:
            continue
        lines = tuple(diff_lines(rest.strip("\n"))) if diffs else ()
        path = next((p for p in _names(rest, diffs) if p in places), memory.path)
        out.append(Commit(parts[0], parts[1], parts[2], parts[3], path, lines))
    return out


def _names(text: str, diffs: bool) -> list[str]:
    """The paths a commit's record names (newest name last for a move)."""
    if not diffs:
        return list(reversed([line for line in text.splitlines() if line.strip()]))
    return [line[len("+++ b/") :] for line in text.splitlines() if line.startswith("+++ b/")]


def relevance(vault: Vault, memory: Memory) -> str:
    """``memvault why``: the decay formula with this memory's numbers."""
    return vault.why(memory.id)
