"""Noticing that the files moved on since the index was last brought up to date, cheaply:
the write counter, a stat of the memory files (all at once, a budget per search, or only
those a file-system watcher reported)."""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Protocol

from ..early_status import differing, take_early
from ..paths import ALL_TREES, GENERATION_PATH
from ..tree import is_listed, walk_memory_files

Stats = dict[str, tuple[int, int]]  # {path: (mtime_ns, size)}


def generation(root: Path) -> int:
    """How many writes memvault made (``Vault.bump_generation`` appends a byte per write)."""
    try:
        return (root / GENERATION_PATH).stat().st_size
    except FileNotFoundError:
        return 0


def walk_stats(root: Path) -> Iterator[tuple[str, tuple[int, int] | None]]:
    """``(path, (mtime_ns, size))`` of every memory file (None: it vanished meanwhile)."""
    for rel, st in walk_memory_files(root):
        yield rel, None if st is None else (st.st_mtime_ns, st.st_size)


def stat_files(root: Path) -> Stats:
    """``{path: (mtime_ns, size)}`` of every memory file: the drift check's view of the disk."""
    return {rel: st for rel, st in walk_stats(root) if st is not None}


# More differing files than this at a manifest write: the next process stats every file.
DIRTY_LIMIT = 5000


def dirty_paths(root: Path, early_ok: bool = False) -> list[str] | None:
    """The memory-tree paths git says differ from HEAD (None: git can't tell, or too many
    to be worth keeping). Written into the manifest with the commit it was checked at.
    ``early_ok``: a ``git status`` begun by :func:`start_early` may answer (only the drift
    check it was begun for says so: a manifest must describe the files as they are now)."""
    early = take_early(root) if early_ok else None
    found = early.result() if early is not None else differing(root)
    return sorted(found) if found is not None and len(found) <= DIRTY_LIMIT else None


def git_drift(
    root: Path,
    dirty_then: object,
    recorded: Callable[[list[str]], Mapping[str, tuple[int, int]]],
) -> bool | None:
    """Whether a memory file differs from the index's record, statting only the files
    that can: those git says differ from HEAD now, and those that differed when the index
    last wrote its manifest (``dirty_then``). Call only while HEAD is the manifest's
    commit: then any file the index holds other text for is in one of the two sets.

    At 100,000 files ``git status`` (C, over git's stat cache) costs a fraction of a
    Python stat of every file plus reading every file's record. None when git can't tell
    (no repository, the manifest kept no list): the caller stats every file."""
    if not isinstance(dirty_then, list):
        return None
    now = dirty_paths(root, early_ok=True)
    if now is None:
        return None
    candidates = sorted({*now, *(str(p) for p in dirty_then)})
    if not candidates:
        return False
    stats = recorded(candidates)
    base = str(root)
    return any(_listed(base, rel) != stats.get(rel) for rel in candidates)


_feeds_lock = threading.Lock()


class ChangeFeed(Protocol):
    """File-system events of a vault's memory trees (:class:`memvault.watch.ChangeFeed`)."""

    started: float  # time.monotonic() when it began to watch

    def alive(self) -> bool: ...

    def take(self) -> tuple[set[str], bool]:
        """Paths changed since the last call, and whether something needs a full check
        (a folder moved or removed, events lost)."""
        ...


_feeds: dict[Path, ChangeFeed] = {}  # per vault root, in this process


def set_change_feed(root: Path, feed: ChangeFeed | None) -> None:
    """Let searches of ``root`` in this process learn of hand edits from ``feed`` (None: stop)."""
    with _feeds_lock:
        if feed is None:
            _feeds.pop(Path(root), None)
        else:
            _feeds[Path(root)] = feed


def change_feed(root: Path) -> ChangeFeed | None:
    return _feeds.get(Path(root))


def _listed(root: str, rel: str) -> tuple[int, int] | None:
    """``(mtime_ns, size)`` of one file as :func:`memvault.files.walk_memory_files` would see
    it (None: it would not list it -- missing, under a hidden or symlinked folder, not a
    memory file name)."""
    parts = rel.split("/")
    name = parts[-1]
    if (
        len(parts) < 2
        or parts[0] not in ALL_TREES
        or any(p.startswith(".") for p in parts)
        or not is_listed(name)
    ):
        return None
    folder = root
    try:
        for part in parts[:-1]:
            folder = os.path.join(folder, part)
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return None
        st = os.lstat(os.path.join(folder, name))
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return None
    return st.st_mtime_ns, st.st_size


class DriftSweep:
    """Looks for hand edits without statting the whole vault on every search.

    With a :class:`ChangeFeed` (a long-running server watches the trees): only the files
    it reported are compared with the index, so a warm search costs a query, and an edit
    is seen by the next search. A reported file stays suspect until the index has caught up
    with it (if the vault lock was busy, the next search tries again).

    Without one: a few hundred files per search, so that a long-lived process never pays
    for a stat of the whole vault in one query (at 100,000 files that is a third of a
    second); a full pass completes every few dozen searches.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: Iterator[tuple[str, tuple[int, int] | None]] | None = None
        self._seen: set[str] = set()
        self._suspects: set[str] = set()
        self._compare_all = False
        self._compared_at = float("-inf")  # last time every file was compared

    def reset(self) -> None:
        """Every file was just compared with the index (the caller did a full check)."""
        self._restart()
        self._compared_at = time.monotonic()

    def _restart(self) -> None:
        self._files = None
        self._seen = set()

    def step(self, recorded: Mapping[str, tuple[int, int]], budget: int) -> bool:
        """Check the files the feed reported, or up to ``budget`` more files; True when one
        differs from the index."""
        feed = change_feed(self.root)
        if feed is not None and feed.alive():
            return self._check_reported(feed, recorded)
        if self._files is None:
            self._files = walk_stats(self.root)
            self._seen = set()
        for _ in range(budget):
            try:
                rel, st = next(self._files)
            except StopIteration:
                gone = len(self._seen) != len(recorded) or not self._seen.issuperset(recorded)
                self.reset()
                return gone
            self._seen.add(rel)
            if st is None or recorded.get(rel) != st:
                self._restart()
                return True
        return False

    def _check_reported(self, feed: ChangeFeed, recorded: Mapping[str, tuple[int, int]]) -> bool:
        paths, everything = feed.take()
        self._suspects.update(paths)
        if everything or self._compare_all or feed.started > self._compared_at:
            # A folder moved, events were lost, or the feed began after the last full check.
            self._compare_all = stat_files(self.root) != recorded
            if not self._compare_all:
                self._suspects.clear()
                self._compared_at = time.monotonic()
            return self._compare_all
        drift = False
        root = str(self.root)
        for rel in list(self._suspects):
            if _listed(root, rel) != recorded.get(rel):
                drift = True
            else:
                self._suspects.discard(rel)
        return drift
