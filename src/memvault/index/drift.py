"""Noticing that the files moved on since the index was last brought up to date, cheaply:
the write counter, a stat of the memory files (all at once, a budget per search, or only
those a file-system watcher reported)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Protocol

from ..paths import GENERATION_PATH
from ..store.tree import listed_stat, walk_memory_files

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


def differ(
    root: Path, paths: list[str], recorded: Callable[[list[str]], Mapping[str, tuple[int, int]]]
) -> bool:
    """Whether one of ``paths`` is not as the index recorded it (stat-ed, or gone)."""
    if not paths:
        return False
    stats = recorded(paths)
    base = str(root)
    return any(_listed(base, rel) != stats.get(rel) for rel in paths)


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
    """``(mtime_ns, size)`` of one file as the walk would list it (None: it would not)."""
    st = listed_stat(root, rel)
    return None if st is None else (st.st_mtime_ns, st.st_size)


class DriftSweep:
    """Looks for hand edits without statting the whole vault on every search.

    With a :class:`ChangeFeed` (a long-running server watches the trees): only the files
    it reported are compared with the index, so a warm search costs a query, and an edit
    is seen by the next search. A reported file stays suspect until the index has caught up
    with it (if the vault lock was busy, the next search tries again).

    Without one: at most ``budget`` files per search, and no more than ``rate`` files a
    second of the time since the last search, so that a long-lived process never pays for
    a stat of the whole vault in one query and back-to-back searches share the cost of one
    pass instead of each paying a full budget. A full pass completes within
    ``files / rate`` seconds or ``files / budget`` searches, whichever is longer.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: Iterator[tuple[str, tuple[int, int] | None]] | None = None
        self._seen: set[str] = set()
        self._suspects: set[str] = set()
        self._compare_all = False
        self._compared_at = float("-inf")  # last time every file was compared
        self._stepped_at = float("-inf")  # last time step() checked files
        self._credit = 0.0  # files step() may check, earned by the time since then

    def reset(self) -> None:
        """Every file was just compared with the index (the caller did a full check)."""
        self._restart()
        self._compared_at = self._stepped_at = time.monotonic()
        self._credit = 0.0

    def _restart(self) -> None:
        self._files = None
        self._seen = set()

    def step(
        self,
        recorded: Mapping[str, tuple[int, int]],
        budget: int,
        rate: float = float("inf"),
        least: int = 0,
    ) -> bool:
        """Check the files the feed reported, or up to ``budget`` more files (fewer when the
        last step was less than ``budget / rate`` seconds ago, but at least ``least``: a
        small vault is still checked whole on every search); True when one differs from
        the index."""
        feed = change_feed(self.root)
        if feed is not None and feed.alive():
            return self._check_reported(feed, recorded)
        now = time.monotonic()
        self._credit = min(float(budget), self._credit + (now - self._stepped_at) * rate)
        self._stepped_at = now
        count = max(int(self._credit), least)
        self._credit = max(0.0, self._credit - count)
        if count < 1:
            return False
        if self._files is None:
            self._files = walk_stats(self.root)
            self._seen = set()
        for _ in range(count):
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
