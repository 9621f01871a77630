"""Which files the index must touch: a pure comparison of the files with the index.

:func:`plan_changes` only compares hashes; :func:`memvault.index.build.apply_changes`
does the work. Kept apart so the rules (what counts as a move, what needs a new vector)
are easy to read and to test.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..values import Record, field


class DiskDoc(Record, frozen=True):
    """A memory file as it is now: ``sha`` of its bytes, ``text_hash`` of its indexed text.

    ``text_hash`` may be ``None`` when the file's ``sha`` equals the indexed one (no need
    to build its text to know it is unchanged).
    """

    sha: str
    text_hash: str | None


class IndexedDoc(Record, frozen=True):
    sha: str
    text_hash: str


class ChangeReport(Record, frozen=True):
    """What to do to bring the index in line with the files (all paths vault-relative).

    * ``added``: new files (embedded);
    * ``changed``: same path, new text (re-embedded);
    * ``updated``: same path and text, other keys changed (metadata only, no embedding);
    * ``moved``: ``old path -> new path`` with the same text (metadata only);
    * ``removed``: gone from disk (or no longer a valid memory).
    """

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    moved: tuple[tuple[str, str], ...] = ()
    removed: tuple[str, ...] = ()
    unchanged: int = 0

    @property
    def empty(self) -> bool:
        return not (self.added or self.changed or self.updated or self.moved or self.removed)

    @property
    def to_embed(self) -> tuple[str, ...]:
        return self.added + self.changed

    @property
    def total(self) -> int:
        return (
            len(self.added)
            + len(self.changed)
            + len(self.updated)
            + len(self.moved)
            + len(self.removed)
        )

    def summary(self) -> str:
        parts = [
            f"{len(v)} {k}"
            for k, v in (
                ("added", self.added),
                ("changed", self.changed),
                ("updated", self.updated),
                ("moved", self.moved),
                ("removed", self.removed),
            )
            if v
        ]
        return ", ".join(parts) if parts else "up to date"

    def as_dict(self) -> dict[str, object]:
        return {
            "added": list(self.added),
            "changed": list(self.changed),
            "updated": list(self.updated),
            "moved": [list(m) for m in self.moved],
            "removed": list(self.removed),
            "unchanged": self.unchanged,
        }


def plan_changes(disk: Mapping[str, DiskDoc], indexed: Mapping[str, IndexedDoc]) -> ChangeReport:
    """Compare files on disk with the index. Pure: no I/O, deterministic order.

    A file whose bytes are unchanged is left alone. A new path whose text equals the text
    of a path that disappeared is a move (the vectors are kept). Several candidates for
    one move are paired in path order.
    """
    added: list[str] = []
    changed: list[str] = []
    updated: list[str] = []
    unchanged = 0
    for path in sorted(disk):
        now = disk[path]
        before = indexed.get(path)
        if before is None:
            added.append(path)
        elif now.sha == before.sha:
            unchanged += 1
        elif now.text_hash is not None and now.text_hash == before.text_hash:
            updated.append(path)
        else:
            changed.append(path)
    gone = [p for p in sorted(indexed) if p not in disk]
    by_text: dict[str, list[str]] = {}
    for path in gone:
        by_text.setdefault(indexed[path].text_hash, []).append(path)
    moved: list[tuple[str, str]] = []
    still_added: list[str] = []
    for path in added:
        text_hash = disk[path].text_hash
        sources = by_text.get(text_hash) if text_hash is not None else None
        if sources:
            moved.append((sources.pop(0), path))
        else:
            still_added.append(path)
    claimed = {old for old, _ in moved}
    removed = [p for p in gone if p not in claimed]
    return ChangeReport(
        added=tuple(still_added),
        changed=tuple(changed),
        updated=tuple(updated),
        moved=tuple(moved),
        removed=tuple(removed),
        unchanged=unchanged,
    )


class ApplyStats(Record):
    """What applying a plan did (for reports and the benchmark)."""

    embedded: int = 0  # chunks sent to the embedder
    fetched: int = 0  # chunks whose vector came from the shared Chroma server
    context_embedded: int = 0  # context vectors (memory + its session neighbours) embedded
    reused: int = 0  # chunks whose vector was kept
    seconds: float = 0.0
    rebuilt: bool = False
    reason: str = ""
    extra: dict[str, object] = field(default_factory=dict)
