"""Git's look at the memory files: which of them can differ from what a cache read.

The search index (its manifest) and the catalog each keep the commit they last read the
files at and the paths that differed from it then; with git's answer now (``git status``)
and the commits since (``git diff``) that names every file that can have changed, so a
fresh process stats and reads those instead of every file.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...paths import ALL_TREES, GIT_FLAGS_PATH
from ...values import Record
from .early import EARLY_FOR, differing, take_early
from .ops import changed_between, git_dir, read_head, run_git, write_state_note

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


class GitView(Record, frozen=True):
    """What git said of the memory files before the index read them: HEAD, the paths that
    differ from it (``git status``; None: too many to keep), and every path whose file can
    differ from what the index holds (None: git can't tell, compare every file).
    ``taken_ns``: wall clock (ns) no later than the moment git status began."""

    head: str
    differing: list[str] | None
    suspects: list[str] | None
    taken_ns: int = 0


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
    """Whether ``git status`` may not see some change under ``specs``: a file flagged
    assume-unchanged or skip-worktree (sparse checkout), a repository committed inside
    (a gitlink: status looks at its HEAD, not its files), or bytes git converts on the
    way in or out (``core.autocrlf``, ``core.eol``, ``text``/``eol``/``filter``/``ident``
    attributes: a line-ending-only edit is clean to git). None: git can't tell.

    Read with ``git ls-files -s -v`` (a listing of the whole git index) and ``git config``,
    and noted in the index folder with the stat of ``.git/index``, ``.git/config`` and the
    attributes files: a rewrite of any is a new file (its inode, size or mtime moves), so
    a new process asks again only after one of them changed."""
    folder = git_dir(root)
    if folder is None:
        return None
    stamps = []
    watched = ("index", "config", "info/attributes")
    for path in (*(folder / name for name in watched), root / ".gitattributes"):
        try:
            st = os.stat(path)
            stamps.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            stamps.append("-")
    stamp = f"{' '.join(stamps)} {' '.join(specs)}"
    note = root / GIT_FLAGS_PATH
    try:
        kept, _, answer = note.read_text(encoding="utf-8").rpartition(" ")
        if kept == stamp and answer in ("0", "1"):
            return answer == "1"
    except OSError:
        pass
    proc = run_git(root, ["ls-files", "-s", "-v", "-z", "--", *specs], check=False)
    if proc.returncode != 0:
        return None
    items = [item for item in proc.stdout.split("\0") if item]
    # "H <mode> <sha> <stage>\t<path>": a lower-case tag is assume-unchanged, "S"
    # skip-worktree; mode 160000 a gitlink
    blind = any(i[:1].islower() or i[:1] == "S" or i[2:8] == "160000" for i in items)
    attributes = [folder / "info" / "attributes", root / ".gitattributes"]
    attributes += [root / i.partition("\t")[2] for i in items if i.endswith(".gitattributes")]
    blind = blind or _converts(root, attributes)
    write_state_note(note, f"{stamp} {int(blind)}")  # (a read-only vault asks again next time)
    return blind


_CONVERTING = re.compile(r"(?:^|\s)-?(?:text|eol|crlf|filter|ident)\b")


def _converts(root: Path, attributes: list[Path]) -> bool:
    """Whether git may change a file's bytes between the work tree and its index."""
    proc = run_git(root, ["config", "--get", "core.autocrlf"], check=False)
    if proc.stdout.strip().lower() in ("true", "input"):
        return True
    for path in attributes:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            parts = line.split(None, 1)
            if len(parts) == 2 and not parts[0].startswith("#") and _CONVERTING.search(parts[1]):
                return True
    return False


def _folders_among(root: Path, paths: list[str]) -> bool:
    base = str(root)
    return any(p.endswith("/") or os.path.isdir(os.path.join(base, p)) for p in paths)
