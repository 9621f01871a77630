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
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from . import gitstore
from .catalog import sha256_bytes
from .paths import MARKER

TYPE_CHECKING = False  # typing is not imported at run time (fast CLI start)
if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Mapping

JOURNAL_NAME = "memvault-journal"
NOTE = "note.json"


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
    entries = {}
    for n, (rel, data) in enumerate(sorted(before.items())):
        saved = None
        if data is not None:
            saved = f"{n}.bak"
            with open(folder / saved, "wb") as handle:
                handle.write(data)
        new = writes.get(rel)
        if new is None and rel in moves.values():  # a move's target gets the source's bytes
            src = next(s for s, d in moves.items() if d == rel)
            old = before.get(src)
            new_sha = sha256_bytes(old) if old is not None else None
        else:
            new_sha = sha256_bytes(new.encode("utf-8")) if new is not None else None
        entries[rel] = {"saved": saved, "new": new_sha}
    tmp = folder / f"{NOTE}.tmp"
    tmp.write_text(json.dumps({"pid": os.getpid(), "paths": entries}), encoding="utf-8")
    os.replace(tmp, folder / NOTE)


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


def recover(root: Path) -> list[str]:
    """Undo an interrupted write (call with the vault lock held). Returns the paths put back."""
    folder = _folder(root)
    try:
        note = json.loads((folder / NOTE).read_text(encoding="utf-8"))
        entries: dict[str, dict[str, str | None]] = note["paths"]
    except (OSError, ValueError, KeyError, TypeError):
        end(root)  # unreadable (killed while writing the note itself): nothing was touched yet
        return []
    rels = sorted(entries)
    status = gitstore.run_git(
        root,
        ["status", "--porcelain", "-z", "--no-renames", "--untracked-files=all", "--", *rels],
        check=False,
    ).stdout
    uncommitted = {item[3:] for item in status.split("\0") if len(item) > 3}
    restored: list[str] = []
    for rel in rels:
        if rel not in uncommitted:
            continue  # committed after all (killed after the commit, before the cleanup)
        entry = entries[rel]
        path = root / rel
        current = _sha_of(path)
        if current != entry.get("new"):
            continue  # changed again since (by hand?): not ours to undo
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
        restored.append(rel)
    # Unstage every uncommitted path of the note, not only those put back now: a recovery
    # killed half-way has restored some already, and their index entries may still hold
    # the dead writer's blobs.
    pending_rels = sorted(uncommitted & set(rels))
    if pending_rels:
        gitstore.run_git(root, ["reset", "-q", "--", *pending_rels], check=False)
    _sweep_temp_files(root, rels)
    end(root)
    return restored


def _sha_of(path: Path) -> str | None:
    try:
        return sha256_bytes(path.read_bytes())
    except (FileNotFoundError, IsADirectoryError):
        return None


def _sweep_temp_files(root: Path, rels: list[str]) -> None:
    """Temp files a killed atomic write left beside its targets (``.name.<pid>.<n>.tmp``)."""
    for rel in rels:
        path = root / rel
        prefix = f".{path.name}."
        try:
            names = os.listdir(path.parent)
        except OSError:
            continue
        for name in names:
            if name.startswith(prefix) and name.endswith(".tmp"):
                try:
                    os.unlink(path.parent / name)
                except OSError:
                    pass
