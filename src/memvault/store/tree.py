"""Which files of a vault are memories, and the one walk over them.

A memory file lives under one of the memory trees (``episodic/``, ``semantic/``,
``procedural/``, ``archive/``, ``inbox/``), has a memory suffix (``.md``, ``.yaml``,
``.yml``), and is not hidden, an editor backup (``~``), a README or a non-UTF-8 name.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ..paths import ALL_TREES

MEMORY_SUFFIXES = (".md", ".yaml", ".yml")


def is_memory_file(name: str) -> bool:
    return name.endswith(MEMORY_SUFFIXES) and not name.startswith(".") and name != "README.md"


def is_utf8_name(name: str) -> bool:
    """A name that isn't UTF-8 (surrogate-escaped by ``os.listdir``) can't be stored or named
    in git-friendly text: such files are skipped, never a crash of every command."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def is_listed(name: str) -> bool:
    """Whether a file of this name inside a memory tree is a memory: a memory suffix, not
    hidden, not an editor backup (``~``), not the README, a UTF-8 name."""
    return is_memory_file(name) and not name.endswith("~") and is_utf8_name(name)


def walk_memory_files(
    root: Path | str,
    trees: Iterable[str] = ALL_TREES,
    on_folder: Callable[[str, os.stat_result], None] | None = None,
) -> Iterator[tuple[str, os.stat_result | None]]:
    """``(relative posix path, lstat)`` of every memory file under ``trees``, depth first in
    name order; the stat is None when the file vanished between listing and stat.

    Hidden files and folders, editor backups, non-UTF-8 names and symlinked folders are
    skipped. ``on_folder(rel, stat)`` is called for every folder walked. Strings and
    ``os.scandir``, no pathlib: this runs over every file on every scan and drift check.
    """
    base = str(root)
    for tree in trees:
        top = os.path.join(base, tree)
        if not os.path.isdir(top) or os.path.islink(top):
            continue
        stack = [(top, tree)]
        while stack:
            folder, rel_folder = stack.pop()
            try:
                if on_folder is not None:
                    on_folder(rel_folder, os.stat(folder))
                with os.scandir(folder) as listing:
                    entries = sorted(listing, key=lambda e: e.name)
            except OSError:
                continue
            subdirs = []
            for entry in entries:
                name = entry.name
                if name.startswith(".") or not is_utf8_name(name):
                    continue
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    subdirs.append((entry.path, f"{rel_folder}/{name}"))
                elif is_listed(name):
                    try:
                        yield f"{rel_folder}/{name}", entry.stat(follow_symlinks=False)
                    except FileNotFoundError:
                        yield f"{rel_folder}/{name}", None
                    except OSError:
                        continue
            stack.extend(reversed(subdirs))


def listed_stat(root: str, rel: str) -> os.stat_result | None:
    """The lstat of one file as :func:`walk_memory_files` would list it (None: it would not
    list it -- missing, outside the memory trees, under a hidden or symlinked folder, not a
    memory file name)."""
    parts = rel.split("/")
    name = parts[-1]
    if (
        len(parts) < 2
        or parts[0] not in ALL_TREES
        or any(p.startswith(".") or not is_utf8_name(p) for p in parts)
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
    return None if stat.S_ISDIR(st.st_mode) else st


# A folder whose mtime is this close to 'now' may still change within the same clock tick
# (git's "racy" entries): it is recorded as unknown and re-listed next time.
RACY_NS = 50_000_000


def dir_stamp(st: os.stat_result) -> int:
    """A folder's mtime, or 0 ("look again") when it is too recent to trust."""
    import time

    return 0 if time.time_ns() - st.st_mtime_ns < RACY_NS else st.st_mtime_ns


def list_folders(
    root: Path, trees: Iterable[str], known: dict[str, int]
) -> dict[str, tuple[int, list[str] | None]]:
    """Every folder of the trees: (mtime stamp, its memory file names, or None when the
    folder's stamp equals ``known``'s and it was not listed). Only folders are stat-ed;
    an unchanged folder's subfolders are taken from ``known`` (adding one moves its mtime).
    """
    children: dict[str, list[str]] = {}
    for rel in known:
        parent = rel.rpartition("/")[0]
        if parent:
            children.setdefault(parent, []).append(rel)
    out: dict[str, tuple[int, list[str] | None]] = {}
    stack = [tree for tree in trees]
    while stack:
        rel = stack.pop()
        folder = os.path.join(root, rel)
        try:
            st = os.lstat(folder)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            continue
        stamp = dir_stamp(st)
        if stamp and known.get(rel) == stamp:
            out[rel] = (stamp, None)
            stack.extend(children.get(rel, ()))
            continue
        try:
            listing = os.listdir(folder)  # names only: a folder may hold thousands of memories
        except OSError:
            continue
        names = [n for n in listing if is_listed(n)]
        for name in listing:  # subfolders: names that are not memory files
            if name[0] == "." or name.endswith(MEMORY_SUFFIXES) or not is_utf8_name(name):
                continue  # (checked before the path is made: a folder may hold thousands)
            full = os.path.join(folder, name)
            if os.path.isdir(full) and not os.path.islink(full):
                stack.append(f"{rel}/{name}")
        out[rel] = (stamp, names)
    return out
