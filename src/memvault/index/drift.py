"""Noticing that the files moved on since the index was last brought up to date, cheaply:
the write counter, a stat of the memory files (all at once, a budget per search, or only
those a file-system watcher reported)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..early_status import EARLY_FOR, differing, take_early
from ..gitstore import changed_between, git_dir, read_head, run_git, write_state_note
from ..paths import ALL_TREES, GENERATION_PATH, GIT_FLAGS_PATH
from ..tree import listed_stat, walk_memory_files

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


@dataclass(frozen=True)
class GitView:
    """What git said of the memory files before the index read them: HEAD, the paths that
    differ from it (``git status``; None: too many to keep), and every path whose file can
    differ from what the index holds (None: git can't tell, compare every file)."""

    head: str
    differing: list[str] | None
    suspects: list[str] | None
    taken_ns: int = 0  # wall clock (ns) no later than the moment git status began


def git_view(
    root: Path, manifest: Mapping[str, object] | None = None, early_ok: bool = False
) -> GitView | None:
    """Git's look at the files, taken before they are read (None: no repository, no commit).

    The index holds the files as they were at its manifest's commit plus the paths that
    differed from it then (``dirty_paths``). A file outside those, outside the paths the
    commits since then changed (``git diff``) and outside those that differ from HEAD now
    (``git status``) is the same file the index read: those are the ``suspects``. At
    100,000 files that costs a fraction of a Python stat of every file and the read of
    every file's record. No suspects when the manifest kept no list, its commit is gone or
    there are too many.

    The view is what the next manifest records: taken before the files are read, a file
    changed meanwhile is among its differing paths or in a later commit, never between.
    ``git status`` runs before HEAD is read, for the same reason. ``early_ok``: as for
    :func:`dirty_paths`."""
    # An early git status began up to EARLY_FOR seconds ago; a second more for file systems
    # whose mtimes lag the clock.
    taken = time.time_ns() - int(((EARLY_FOR if early_ok else 0.0) + 1.0) * 1e9)
    now = dirty_paths(root, early_ok)
    head = read_head(root)
    if head is None:
        return None
    if now is not None and (
        _folders_among(root, now) or status_blind(root, ALL_TREES) is not False
    ):
        # A nested repository or submodule is one entry for all its files; a file flagged
        # assume-unchanged or skip-worktree (sparse checkout) is one git status does not look
        # at. Git's answer is not the whole story now, nor for the next check: none is kept.
        now = None
    dirty_then, commit = (manifest or {}).get("dirty_paths"), (manifest or {}).get("commit")
    if now is None or not isinstance(dirty_then, list) or not isinstance(commit, str):
        return GitView(head, now, None, taken)
    committed = changed_between(root, commit, head, ALL_TREES)
    if committed is None:
        return GitView(head, now, None, taken)
    suspects = {*now, *committed, *(str(p) for p in dirty_then)}
    return GitView(head, now, sorted(suspects) if len(suspects) <= DIRTY_LIMIT else None, taken)


def status_blind(root: Path, specs: Sequence[str]) -> bool | None:
    """Whether ``git status`` may not see some file under ``specs``: one flagged
    assume-unchanged or skip-worktree (sparse checkout) in git's index. None: git can't tell.

    Read with ``git ls-files -v`` (~0.06 s at 100,000 files) and noted in the index folder
    with the stat of ``.git/index``: a rewrite of git's index is a new file (its inode,
    size or mtime moves), so a new process asks again only after git's index changed."""
    folder = git_dir(root)
    if folder is None:
        return None
    try:
        st = os.stat(folder / "index")
    except OSError:
        return False  # no index: nothing is flagged
    stamp = f"{st.st_ino} {st.st_size} {st.st_mtime_ns} {' '.join(specs)}"
    note = root / GIT_FLAGS_PATH
    try:
        kept, _, answer = note.read_text(encoding="utf-8").rpartition(" ")
        if kept == stamp and answer in ("0", "1"):
            return answer == "1"
    except OSError:
        pass
    proc = run_git(root, ["ls-files", "-v", "-z", "--", *specs], check=False)
    if proc.returncode != 0:
        return None
    # "H path" is a plain tracked file; a lower-case tag is assume-unchanged, "S" skip-worktree
    blind = any(item[:1].islower() or item[:1] == "S" for item in proc.stdout.split("\0") if item)
    write_state_note(note, f"{stamp} {int(blind)}")  # (a read-only vault asks again next time)
    return blind


def _folders_among(root: Path, paths: list[str]) -> bool:
    base = str(root)
    return any(p.endswith("/") or os.path.isdir(os.path.join(base, p)) for p in paths)


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
