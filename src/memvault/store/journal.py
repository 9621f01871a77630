"""A write-ahead note, so a write killed half-way is undone by the next one.

:meth:`memvault.vault.Vault.commit_files` writes files, then commits them. A process
killed in between (SIGKILL, OOM, a crash) used to leave those files in the work tree,
uncommitted, served as memories — an import of 2,000 records stopped at 20 left 20.
(This covers a process that dies; the note is not fsynced, so a power cut at the wrong
moment is not covered. The memory files themselves are fsynced.)
Now, before touching anything, the writer records in ``<git dir>/memvault-journal/`` which
paths it will change, the bytes each had (when it had any) and the SHA-256 of the bytes
it will write. After the commit the note is removed.

Whoever takes the vault lock next finds a note only if its writer died (the lock is
held while one exists), and puts back every path that still holds exactly what the dead
writer wrote and was not committed. A path committed since, or edited by hand since,
is left alone. The note lives inside ``.git`` so it is never committed and survives the
deletion of the (disposable) index folder.

A bulk write (an import of 100,000 memories) does not know every path up front: it adds
each batch of new files to ``more.jsonl`` before writing them (:func:`extend`). Recovery
is linear in the note's paths (one ``git status`` per batch of folders, one
``update-index`` on stdin), so a note of any size can be undone. When some of it still
can't be (a saved copy unreadable, git failing), :class:`~memvault.errors.JournalError`
says so in one line and the note stays; ``memvault doctor --repair`` (and the next write)
undoes what it can and moves the note aside, so the vault never stays blocked.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from ..errors import JournalError, MemvaultError
from ..paths import MARKER
from ..values import TYPE_CHECKING, Record
from .catalog import sha256_bytes
from .git import ops as gitstore

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterable, Mapping

JOURNAL_NAME = "memvault-journal"
NOTE = "note.json"
MORE = "more.jsonl"  # batches of new files a bulk write added after the note
# what atomic writes (files._temp_beside) and recovery leave beside a target if killed
_TEMP_RE = re.compile(r"^\.(?P<name>.+)\.(?:recover|\d+\.\d+)\.tmp$")


class Recovery(Record, frozen=True):
    """What undoing an interrupted write did: paths put back, what failed, and where the
    note was moved when it could not all be undone (``force``)."""

    restored: list[str]
    problems: list[str]
    kept: str | None


def _folder(root: Path) -> Path:
    """``<git dir>/memvault-journal``; the git dir of a worktree or submodule is named by
    its ``.git`` file (``gitdir: ...``)."""
    git = gitstore.git_dir(root)
    if git is None:  # not git's layout: keep it beside the config
        return root / MARKER / JOURNAL_NAME
    return git / JOURNAL_NAME


def begin(
    root: Path,
    before: Mapping[str, bytes | None],
    writes: Mapping[str, str],
    moves: Mapping[str, str],
) -> None:
    """Record what is about to change: old bytes (saved beside the note) and new hashes."""
    folder = _folder(root)
    folder.mkdir(parents=True, exist_ok=True)
    source_of = {dst: src for src, dst in moves.items()}
    entries = {}
    for n, (rel, data) in enumerate(sorted(before.items())):
        saved = None
        if data is not None:
            saved = f"{n}.bak"
            with open(folder / saved, "wb") as handle:
                handle.write(data)
        new = writes.get(rel)
        if new is None and rel in source_of:  # a move's target gets the source's bytes
            old = before.get(source_of[rel])
            new_sha = sha256_bytes(old) if old is not None else None
        else:
            new_sha = sha256_bytes(new.encode("utf-8")) if new is not None else None
        entries[rel] = {"saved": saved, "new": new_sha}
    tmp = folder / f"{NOTE}.tmp"
    tmp.write_text(json.dumps({"pid": os.getpid(), "paths": entries}), encoding="utf-8")
    os.replace(tmp, folder / NOTE)


def extend(root: Path, new_files: Mapping[str, str]) -> None:
    """Add files about to be created (path -> SHA-256 of their text) to the open note;
    call before writing them. A line torn by a kill names files not written yet."""
    line = json.dumps({rel: {"saved": None, "new": sha} for rel, sha in new_files.items()})
    with open(_folder(root) / MORE, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")


def end(root: Path) -> None:
    """The write is committed (or undone in-process): drop the note."""
    folder = _folder(root)
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return
    for name in names:
        try:
            os.unlink(folder / name)
        except FileNotFoundError:
            pass


def pending(root: Path) -> bool:
    return os.path.exists(_folder(root) / NOTE)


def _read_note(folder: Path) -> dict[str, dict[str, str | None]]:
    note = json.loads((folder / NOTE).read_text(encoding="utf-8"))
    entries: dict[str, dict[str, str | None]] = dict(note["paths"])
    try:
        with open(folder / MORE, encoding="utf-8") as handle:
            for line in handle:
                try:
                    entries.update(json.loads(line))
                except ValueError:
                    break  # torn by the kill: its files were never written
    except FileNotFoundError:
        pass
    return entries


def recover(root: Path, *, force: bool = False) -> Recovery:
    """Undo an interrupted write (call with the vault lock held).

    Raises :class:`JournalError` when part of it can't be undone; the note stays and
    nothing is lost. With ``force`` (``doctor --repair``), undo what can be, then move the
    note and its saved copies aside (``Recovery.kept``) so that writes may go on.
    """
    folder = _folder(root)
    try:
        entries = _read_note(folder)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        end(root)  # unreadable (killed while writing the note itself): nothing was touched yet
        return Recovery([], [], None)
    problems: list[str] = []
    restored: list[str] = []
    try:
        uncommitted = gitstore.changed_among(root, entries)
    except (MemvaultError, OSError) as exc:
        problems.append(f"git status: {exc}")
        uncommitted = set()  # can't tell what was committed: touch nothing
    for rel in sorted(uncommitted):  # the rest was committed (killed before the cleanup)
        try:
            if _undo(root, folder, rel, entries[rel]):
                restored.append(rel)
        except OSError as exc:
            problems.append(f"{rel}: {exc.strerror or exc}")
    # Unstage every uncommitted path of the note, not only those put back now: a recovery
    # killed half-way has restored some already, and their index entries may still hold
    # the dead writer's blobs.
    try:
        gitstore.unstage(root, uncommitted)
    except (MemvaultError, OSError) as exc:
        problems.append(f"git update-index: {exc}")
    _sweep_temp_files(root, entries)
    if problems and not force:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise JournalError(
            f"an interrupted write could not be undone: {problems[0]}{more}; "
            "run 'memvault doctor --repair'",
            os.path.relpath(folder / NOTE, root),
        )
    kept = _set_aside(folder) if problems else None
    if kept is None:
        end(root)
    return Recovery(restored, problems, kept)


def _undo(root: Path, folder: Path, rel: str, entry: Mapping[str, str | None]) -> bool:
    """Put one path back if it still holds exactly what the dead writer wrote."""
    path = root / rel
    if _sha_of(path) != entry.get("new"):
        return False  # changed again since (by hand?): not ours to undo
    saved = entry.get("saved")
    if saved:
        data = (folder / saved).read_bytes()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.recover.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
    return True


def _set_aside(folder: Path) -> str:
    """Move the note and its saved copies out of the way, keeping them for a person."""
    target = folder.with_name(
        f"{JOURNAL_NAME}.failed-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    )
    os.replace(folder, target)
    return str(target)


def _sha_of(path: Path) -> str | None:
    try:
        return sha256_bytes(path.read_bytes())
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _sweep_temp_files(root: Path, rels: Iterable[str]) -> None:
    """Temp files a killed atomic write left beside its targets (``.name.<pid>.<n>.tmp``):
    one listing per folder."""
    by_folder: dict[str, set[str]] = {}
    for rel in rels:
        parent, _, name = rel.rpartition("/")
        by_folder.setdefault(parent, set()).add(name)
    for parent, names in by_folder.items():
        folder = root / parent
        try:
            listing = os.listdir(folder)
        except OSError:
            continue
        for name in listing:
            match = _TEMP_RE.match(name) if name.startswith(".") else None
            if match and match.group("name") in names:
                try:
                    os.unlink(folder / name)
                except OSError:
                    pass
