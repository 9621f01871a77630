"""The ``git status`` of a new process's first search, begun early.

``git status`` lstat()s every file (in a child process), and in a large vault the drift
check waits for it longer than for anything else. So the command line begins it as soon as
it knows the vault, before it imports the search code and loads the model, and the drift
check takes its answer (:func:`memvault.store.git.status.dirty_paths`). This module
imports nothing heavy, so that beginning it costs nothing first.
"""

from __future__ import annotations

import time
from pathlib import Path

from ...paths import ALL_TREES


def differing(root: Path) -> list[str] | None:
    """Memory-tree paths that differ from HEAD (None: git can't tell)."""
    from .ops import differing_paths

    return differing_paths(root, ALL_TREES)


class Early:
    """``git status`` started ahead of the drift check that reads it, in a thread (which
    waits on git: the other core does the work)."""

    def __init__(self, root: Path) -> None:
        from ...threads import Background

        self.started = time.monotonic()
        self._run = Background(differing, root)

    def result(self) -> list[str] | None:
        try:
            return self._run.result()
        except Exception:  # noqa: BLE001 - "git can't tell": the caller stats every file
            return None


_early: dict[Path, Early] = {}
EARLY_FOR = 2.0  # seconds a prefetched answer stays usable: it is of the moment it began


def start_early(root: Path) -> None:
    """Start the ``git status`` of a new process's first search now. One begun moments ago
    for the same vault (by the command line, before it imported the search code) is kept."""
    root = Path(root)
    early = _early.get(root)
    if early is None or time.monotonic() - early.started > EARLY_FOR:
        _early[root] = Early(root)


def drop_early(root: Path) -> None:
    """Forget an early ``git status`` that was not used (a write may follow)."""
    _early.pop(Path(root), None)


def take_early(root: Path) -> Early | None:
    """The early ``git status`` begun for ``root``, once (None: none, or too old to use)."""
    early = _early.pop(Path(root), None)
    if early is None or time.monotonic() - early.started > EARLY_FOR:
        return None
    return early
