"""The one module that talks to git.

Hot paths (stage + commit after a write) call the ``git`` binary directly: one process
per step, no import cost. Richer reads (history, init) go through GitPython, imported
lazily. Automated commits never rely on the user's global identity: the author and
committer come from the vault's config (``git.author_name`` / ``git.author_email``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ...errors import GitError
from ...paths import COMMITS_STATE_PATH
from ...values import TYPE_CHECKING, Record

# Re-exported: callers reach the process layer through this module.
from .process import GIT_ENV_VARS as GIT_ENV_VARS
from .process import GitResult as GitResult
from .process import Identity as Identity
from .process import no_git_env as no_git_env
from .process import run_git as run_git
from .process import start_git as start_git

if TYPE_CHECKING:  # pragma: no cover
    import datetime as dt
    from typing import Any


def _repo(root: Path) -> Any:
    """A GitPython ``Repo`` for the richer, off-the-hot-path operations."""
    import git  # GitPython is slow to import: only where a command needs it

    return git.Repo(root)


def init_repo(root: Path, identity: Identity) -> None:
    import git

    git.Repo.init(root, initial_branch="main")


def is_repo(root: Path) -> bool:
    return (root / ".git").exists()


def commit(
    root: Path,
    message: str,
    identity: Identity,
    add: Iterable[str] = (),
    remove: Iterable[str] = (),
    *,
    allow_empty: bool = False,
) -> str | None:
    """Stage exactly ``add``/``remove`` (vault-relative paths) and make one commit.

    Returns the new commit's sha, or ``None`` when there was nothing to commit.
    Paths staged by the user for other files are left out of this commit.

    The commit is made with plumbing when it can (see :func:`_plumbing_commit`): ``git
    commit`` also re-stats every tracked file, which the plumbing skips
    (``docs/performance.md``).
    """
    add = sorted(set(add))
    remove = sorted(set(remove))
    paths = add + remove
    staging = _Staging(root, add, remove)
    try:
        if paths and not allow_empty:
            done, sha = _plumbing_commit(
                root, message, identity, paths, removed=remove, staged=staging.wait
            )
            if done:
                staging.wait()
                return sha
        staging.wait()
    finally:
        staging.reap()
    if not paths and not allow_empty:
        return None
    args = ["commit", "-q", "--no-verify", "-m", message]
    if allow_empty:
        args.append("--allow-empty")
    if paths:
        # --only keeps whatever else the user had staged out of this commit.
        args += ["--only", "--pathspec-from-file=-", "--pathspec-file-nul"]
        proc = run_git(root, args, identity=identity, check=False, input_text=_nul(paths))
    else:
        proc = run_git(root, args, identity=identity, check=False)
    if proc.returncode != 0:
        text = (proc.stdout + proc.stderr).lower()
        if "nothing to commit" in text or "no changes added" in text or "nothing added" in text:
            return None
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise GitError(f"git commit failed: {detail[-1] if detail else proc.returncode}")
    sha = head(root)
    _count_commit(root)
    return sha


def _nul(paths: Iterable[str]) -> str:
    return "".join(f"{p}\0" for p in paths)


def stage(root: Path, add: Sequence[str] = (), remove: Sequence[str] = ()) -> None:
    """Stage ``add`` (a path whose file is gone is unstaged) and unstage ``remove``.

    Paths go to ``git update-index`` on stdin, NUL-separated: no command line holds them
    (100,000 paths pass the OS argument limit), and the work is linear, where ``git add``
    and ``git rm`` match every path given against every index entry (100,000 paths into
    a 100,000-file index: minutes). Like ``git add -f``, ignore rules don't apply.
    """
    if remove:
        run_git(root, ["update-index", "--force-remove", "-z", "--stdin"], input_text=_nul(remove))
    if add:
        run_git(root, ["update-index", "--add", "--remove", "-z", "--stdin"], input_text=_nul(add))


class _Staging:
    """:func:`stage` begun in the background: the index is updated while the commit is
    prepared (``git fast-import`` starting and reading the parent's tree), and :meth:`wait`
    is called before anything that reads the index or makes the commit, so a failure to
    stage still stops the commit (``docs/performance.md``)."""

    def __init__(self, root: Path, add: Sequence[str], remove: Sequence[str]) -> None:
        if remove:  # (rare: a forget or a move) before the additions, as stage() does
            run_git(
                root, ["update-index", "--force-remove", "-z", "--stdin"], input_text=_nul(remove)
            )
        args = ["update-index", "--add", "--remove", "-z", "--stdin"]
        self._running = start_git(root, args, input_text=_nul(add)) if add else None
        self._waited = False

    def wait(self) -> None:
        """Wait for the index update; raises :class:`GitError` when it failed."""
        self._waited = True
        if self._running is not None:
            self._running.wait()

    def reap(self) -> None:
        """Wait for git without raising (an error elsewhere is on its way out)."""
        if not self._waited:
            try:
                self.wait()
            except GitError:
                pass


class BlobPacker:
    """Blobs written into one pack by ``git fast-import`` while a bulk write goes on, so
    that staging finds them there: ``update-index`` otherwise writes one loose object per
    new file, far slower than one pack for many files. Only a head start: staging
    still hashes every file as git sees it (filters included), so a blob packed here that
    isn't the staged one is merely unused. Any failure just stops the packing."""

    def __init__(self, root: Path) -> None:
        import subprocess

        self._proc: Any = subprocess.Popen(
            ["git", "-C", str(root), "fast-import", "--quiet"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # a failure only means no head start
            env=no_git_env({"MEMVAULT_INTERNAL": "1"}),
        )

    def add(self, data: bytes) -> None:
        if self._proc is None:
            return
        try:
            self._proc.stdin.write(b"blob\ndata %d\n%s\n" % (len(data), data))
        except OSError:  # fast-import stopped: staging writes the objects itself
            self.close()

    def close(self) -> None:
        """Finish the pack (waits for git)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
            proc.wait()


def _folders(paths: Iterable[str]) -> list[str]:
    """Pathspecs covering ``paths``: their folders (a file at the top level: itself)."""
    return sorted({p.rpartition("/")[0] or p for p in paths})


def _batches(items: Sequence[str], size: int = 500) -> Iterable[Sequence[str]]:
    return (items[i : i + size] for i in range(0, len(items), size))


def unstage(root: Path, paths: Iterable[str]) -> None:
    """Put the index entries of ``paths`` back to what HEAD holds (``git reset -- paths``).

    HEAD's entries are listed per folder (a handful of pathspecs, in bounded batches) and
    written back with ``update-index --index-info`` on stdin; paths HEAD lacks are dropped.
    Linear in the paths and their folders, where ``git reset`` with a pathspec list is not.
    """
    wanted = set(paths)
    if not wanted:
        return
    entries: dict[str, str] = {}
    zero = "0" * 40
    if head(root) is not None:
        for batch in _batches(_folders(wanted)):
            args = ["ls-tree", "-r", "-z", "--full-tree", "HEAD", "--", *batch]
            for item in run_git(root, args).stdout.split("\0"):
                info, _, rel = item.partition("\t")
                if rel in wanted:
                    mode, _, sha = info.split(" ")
                    entries[rel] = f"{mode} {sha}"
                    zero = "0" * len(sha)
    lines = "".join(f"{entries.get(rel, '0 ' + zero)}\t{rel}\0" for rel in sorted(wanted))
    run_git(root, ["update-index", "-z", "--index-info"], input_text=lines)


def changed_among(root: Path, paths: Iterable[str]) -> set[str]:
    """Which of ``paths`` differ from HEAD in the work tree or the index (untracked
    included): ``git status`` over their folders, in bounded batches of pathspecs."""
    wanted = set(paths)
    found: set[str] = set()
    for batch in _batches(_folders(wanted)):
        args = ["status", "--porcelain", "-z", "--no-renames", "--untracked-files=all", "--"]
        out = run_git(root, [*args, *batch], check=False).stdout
        found.update(item[3:] for item in out.split("\0") if len(item) > 3)
    return found & wanted


def differing_paths(root: Path, specs: Sequence[str], ignored: bool = True) -> list[str] | None:
    """Paths under ``specs`` that differ from HEAD in the index or the work tree, untracked
    files included, and ignored ones unless ``ignored`` is false: ``git status`` (C, over
    git's own stat cache). None when git can't tell (no repository, no commit yet, git
    failing)."""
    # (--ignore-submodules=none: a repository inside is looked into, whatever the config says)
    args = ["status", "--porcelain", "-z", "-uall", "--no-renames", "--ignore-submodules=none"]
    # "traditional" with -uall lists every ignored file ("matching" names an ignored folder
    # once, hiding the files in it)
    args += ["--ignored=traditional", "--"] if ignored else ["--"]
    # A reader's look: without the optional refresh of .git/index, whose lock would make a
    # writer's commit in another process fail while it is held (git's advice for
    # background status calls).
    optional = {"GIT_OPTIONAL_LOCKS": "0"}
    proc = run_git(root, [*args, *specs], check=False, env_extra=optional)
    if proc.returncode != 0 or read_head(root) is None:
        return None
    return [item[3:] for item in proc.stdout.split("\0") if len(item) > 3]


def changed_between(root: Path, old: str, new: str, specs: Sequence[str]) -> list[str] | None:
    """Paths under ``specs`` whose content differs between commits ``old`` and ``new`` (a
    move is its two paths). None when git can't tell (``old`` is gone: a rewritten history
    after a gc, a shallow clone; a submodule changed: its files are not listed)."""
    if old == new:
        return []
    args = ["diff", "--raw", "-z", "--no-renames", "--no-abbrev", "--no-ext-diff", old, new, "--"]
    proc = run_git(root, [*args, *specs], check=False)
    if proc.returncode != 0:
        return None
    # ":<old mode> <new mode> <old sha> <new sha> <status>" NUL <path> NUL, per file
    items = proc.stdout.split("\0")
    paths = []
    for head, path in zip(items[0::2], items[1::2], strict=False):
        if "160000" in head.lstrip(":").split()[:2]:  # the file modes: a gitlink's is 160000
            return None  # a submodule moved: its files are not in this diff
        paths.append(path)
    return paths


def write_state_note(path: Path, text: str) -> None:
    """Replace a small state file of the index folder atomically; nothing if it can't be."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def _plumbing_commit(
    root: Path,
    message: str,
    identity: Identity,
    paths: Sequence[str],
    removed: Sequence[str] = (),
    staged: Callable[[], None] = lambda: None,
) -> tuple[bool, str | None]:
    """``write-tree`` + ``commit-tree`` + ``update-ref``: ``git commit`` minus its refresh of
    the whole index (an lstat per tracked file), for a commit of exactly ``paths`` (those in
    ``removed`` deleted). A few files on a branch with a parent are committed by one
    ``git fast-import`` instead (:mod:`.fastimport`), when git keeps their bytes as they are.

    Returns (True, sha or None when nothing changed), or (False, None) when ``git
    commit`` must do it: hooks set up through ``core.hooksPath``, a worktree, or anything
    else staged in the index. That last check is a ``diff-tree`` of the very tree that
    gets committed, so a ``git add`` the user runs meanwhile can't slip into the commit
    (a tree-to-tree diff only walks the subtrees that differ: a few ms).

    ``staged`` waits for the index update begun by the caller (raising if it failed): called
    before the commit is made, and before anything reads the index.
    """
    dot_git = root / ".git"
    ref, parent = _head_state(dot_git)
    if ref is None or _hooks_path_set(dot_git):
        return False, None
    text = _clean_message(message)
    if parent is not None:
        from .fastimport import commit as import_commit

        gone = set(removed)
        kept = [p for p in paths if p not in gone]
        done, sha = import_commit(
            root, dot_git, ref, parent, text, identity, kept, sorted(gone), ready=staged
        )
        if done:
            if sha is not None:
                _after_commit(root, dot_git)
            return True, sha
        ref, parent = _head_state(dot_git)  # it may have failed because the branch moved
        if ref is None:
            return False, None
    staged()
    tree = run_git(root, ["write-tree"]).stdout.strip()
    proc = run_git(
        root,
        ["diff-tree", "--no-renames", "--name-only", "-r", "-z", parent or EMPTY_TREE, tree],
        check=False,
    )
    changed = [p for p in proc.stdout.split("\0") if p]
    if proc.returncode != 0 or not set(changed) <= set(paths):
        return False, None  # the user staged something else: git commit --only
    if not changed:
        return True, None
    args = ["commit-tree", tree, "-m", text] + (["-p", parent] if parent else [])
    sha = run_git(root, args, identity=identity).stdout.strip()
    subject = text.split("\n", 1)[0]
    reflog = f"commit: {subject}" if parent else f"commit (initial): {subject}"
    run_git(root, ["update-ref", "-m", reflog, "HEAD", sha, parent or ""])
    _after_commit(root, dot_git)
    return True, sha


def _after_commit(root: Path, dot_git: Path) -> None:
    """What ``git commit`` does after a commit that plumbing doesn't: the post-commit hook,
    and now and then ``git gc --auto``."""
    hook = dot_git / "hooks" / "post-commit"
    if os.access(hook, os.X_OK):
        run_git(root, ["hook", "run", "--ignore-missing", "post-commit"], check=False)
    _count_commit(root)


def _head_state(git_dir: Path) -> tuple[str | None, str | None]:
    """(the ref HEAD points at, its sha or None when unborn); (None, None) when HEAD is
    detached or git keeps it in a way we don't read (a worktree's .git file, reftable)."""
    text = _head_text(git_dir)
    if text is None or not text.startswith("ref: refs/heads/"):
        return None, None
    ref = text[5:]
    try:
        sha = (git_dir / ref).read_text(encoding="ascii").strip()
    except FileNotFoundError:
        packed = git_dir / "packed-refs"
        if packed.exists():
            return None, None  # the branch may be packed: let git commit handle it
        return ref, None  # unborn branch
    except (OSError, UnicodeDecodeError):
        return None, None
    return (ref, sha) if len(sha) in (40, 64) else (None, None)


def _hooks_path_set(git_dir: Path) -> bool:
    """Whether some git config may set ``core.hooksPath`` (then hooks live elsewhere)."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    for config in (git_dir / "config", Path(home, ".gitconfig"), Path(xdg, "git", "config")):
        try:
            if "hookspath" in config.read_text(encoding="utf-8", errors="replace").lower():
                return True
        except OSError:
            continue
    return bool(os.environ.get("GIT_CONFIG_PARAMETERS") or os.environ.get("GIT_CONFIG_COUNT"))


def _clean_message(message: str) -> str:
    """What ``git commit -m`` stores (its "whitespace" cleanup): trailing spaces and
    leading/trailing blank lines dropped, runs of blank lines squeezed to one."""
    lines: list[str] = []
    for line in message.replace("\r\n", "\n").split("\n"):
        line = line.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def _count_commit(root: Path) -> None:
    """Count memvault's commits; every ``GC_EVERY``-th runs ``git gc --auto``, which
    ``git commit`` runs after each commit and plumbing does not."""
    path = root / COMMITS_STATE_PATH
    try:
        count = int(path.read_text(encoding="ascii").split()[0]) + 1
    except (OSError, ValueError, IndexError, UnicodeDecodeError):
        count = 1
    if count % GC_EVERY == 0:
        run_git(root, ["gc", "--auto", "--quiet"], check=False)
    write_state_note(path, f"{count}\n")


# Plumbing commits skip the 'git gc --auto' that 'git commit' runs after each commit;
# memvault runs it itself every so many commits (it forks to the background when needed).
GC_EVERY = 200


def git_dir(root: Path) -> Path | None:
    """The vault's git dir: ``.git``, or the folder a ``.git`` file names (``gitdir: ...``,
    a worktree or submodule). None when ``.git`` is neither."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if text.startswith("gitdir:"):
        return (root / text[7:].strip()).resolve()
    return None


def _common_dir(git: Path) -> Path:
    """Where a worktree's shared refs live (its ``commondir`` file), else ``git`` itself."""
    try:
        text = (git / "commondir").read_text(encoding="utf-8").strip()
        return (git / text).resolve()
    except OSError:
        return git


def _head_text(git: Path) -> str | None:
    try:
        return (git / "HEAD").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None


def read_head(root: Path) -> str | None:
    """HEAD's commit read straight from the git dir (loose or packed refs), without starting
    a process: this runs before every search. None when unborn or not readable this way."""
    git = git_dir(root)
    text = _head_text(git) if git is not None else None
    if git is None or text is None:
        return None
    if not text.startswith("ref:"):
        return text or None
    ref = text[4:].strip()
    try:
        for base in (git, _common_dir(git)):
            path = base / ref
            if path.is_file():
                return path.read_text(encoding="utf-8").strip() or None
            packed = base / "packed-refs"
            if packed.is_file():
                for line in packed.read_text(encoding="utf-8").splitlines():
                    if line.endswith(" " + ref):
                        return line.split(" ", 1)[0]
    except (OSError, UnicodeDecodeError):
        return None
    return None


def current_branch(root: Path) -> str | None:
    """The checked-out branch's name (None when HEAD is detached or unreadable)."""
    git = git_dir(root)
    text = _head_text(git) if git is not None else None
    prefix = "ref: refs/heads/"
    return (text[len(prefix) :] or None) if text and text.startswith(prefix) else None


def head(root: Path) -> str | None:
    """The sha HEAD points at: read from the ref files when they are plain, else from git
    (reftable, or anything else :func:`read_head` can't read)."""
    sha = read_head(root)
    if sha is not None and len(sha) in (40, 64) and all(c in "0123456789abcdef" for c in sha):
        return sha
    proc = run_git(root, ["rev-parse", "-q", "--verify", "HEAD"], check=False)
    return proc.stdout.strip() or None


def root_commit(root: Path) -> str | None:
    """The first commit of HEAD's history (the smallest sha if histories were joined): the
    same in every clone, so it can name the vault. None before the first commit."""
    proc = run_git(root, ["rev-list", "--max-parents=0", "HEAD"], check=False)
    roots = proc.stdout.split() if proc.returncode == 0 else []
    return min(roots) if roots else None


class Change(Record, frozen=True):
    """One commit that touched a memory's file."""

    sha: str
    author: str
    date: str
    message: str
    path: str


def history(root: Path, rel_path: str, limit: int = 50) -> list[Change]:
    """Commits that touched a file, newest first, following moves (e.g. into archive/)."""
    import git

    repo = _repo(root)
    changes: list[Change] = []
    path = rel_path
    try:
        # iter_commits doesn't follow renames; ask log for the path each commit used.
        out = repo.git.log(
            f"-n{limit}", "--follow", "--name-only", "--format=%x1e%H", "--", rel_path
        )
    except git.GitCommandError:
        return []
    for record in out.split("\x1e"):
        lines = [ln for ln in record.strip("\n").split("\n") if ln]
        if not lines:
            continue
        commit = repo.commit(lines[0])
        path = lines[1] if len(lines) > 1 else path
        author = f"{commit.author.name} <{commit.author.email}>"
        date = commit.authored_datetime.isoformat()
        changes.append(
            Change(
                commit.hexsha,
                author,
                date,
                commit.summary if isinstance(commit.summary, str) else str(commit.summary),
                path,
            )
        )
    return changes


def history_by_pattern(root: Path, needle: str, limit: int = 50) -> list[Change]:
    """Commits whose diff adds or removes ``needle`` (used to find a deleted memory)."""
    fmt = "%x1e%H%x1f%an <%ae>%x1f%aI%x1f%s"  # names (--name-only) follow the header
    proc = run_git(
        root,
        ["log", "--all", f"-n{limit}", "--name-only", f"-S{needle}", f"--format={fmt}"],
        check=False,
    )
    out: list[Change] = []
    for record in proc.stdout.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        head_line, _, names = record.partition("\n")
        parts = head_line.split("\x1f")
        if len(parts) >= 4:
            out.append(Change(parts[0], parts[1], parts[2], parts[3], names.strip().split("\n")[0]))
    return out


class FileEdit(Record, frozen=True):
    """A file one commit changed in place (or moved and changed): its text before and after."""

    sha: str
    time: str  # committer time, ISO
    path: str
    before: str
    after: str


def edits(
    root: Path, since: dt.datetime, until: dt.datetime, folders: Sequence[str]
) -> list[FileEdit]:
    """Files under ``folders`` that commits made between ``since`` and ``until`` (committer
    time) modified or renamed -- not added or removed --, with their text before and after.

    One ``git log --raw`` names the blobs; their text comes through GitPython's persistent
    ``cat-file``. ``--since`` (a day early) bounds the walk of a long history; git stops a few
    commits past that date, so an edit with an older date behind several even older ones (a
    rebase of old work) can be missed. Dates are compared again here. Merges show no diff of
    their own: their edits are their branch's."""
    import datetime as dt

    fmt = "%x1e%H%x1f%cI"
    early = (since - dt.timedelta(days=1)).isoformat()
    args = ["log", "--raw", "--no-abbrev", "-M", f"--since={early}", f"--format={fmt}", "HEAD"]
    args += ["--", *folders]
    proc = run_git(root, args, check=False)
    if proc.returncode != 0:
        return []  # no commit yet
    found: list[tuple[str, str, str, str, str]] = []  # sha, time, path, old blob, new blob
    for record in proc.stdout.split("\x1e"):
        head, _, body = record.partition("\n")
        sha, _, when = head.partition("\x1f")
        if not when.strip() or not since <= dt.datetime.fromisoformat(when.strip()) <= until:
            continue
        for line in body.splitlines():
            fields, _, names = line.partition("\t")
            parts = fields.split()
            if line.startswith(":") and len(parts) >= 5 and parts[4][:1] in ("M", "R"):
                found.append((sha, when.strip(), names.split("\t")[-1], parts[2], parts[3]))
    if not found:
        return []
    odb = _repo(root).odb
    out = []
    for sha, when, path, old, new in found:
        before, after = (_blob_text(odb.stream(bytes.fromhex(b)).read()) for b in (old, new))
        out.append(FileEdit(sha, when, path, before, after))
    return out


def _blob_text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def fsck(root: Path) -> tuple[bool, str]:
    proc = run_git(root, ["fsck", "--no-progress"], check=False)
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()


def status_porcelain(root: Path, paths: Sequence[str] = ()) -> list[tuple[str, str]]:
    """``(XY status, path)`` pairs from ``git status --porcelain`` (untracked included)."""
    proc = run_git(
        root, ["status", "--porcelain", "-z", "--untracked-files=all", "--", *paths], check=False
    )
    out: list[tuple[str, str]] = []
    items = proc.stdout.split("\0")
    i = 0
    while i < len(items):
        item = items[i]
        if len(item) > 3:
            code, path = item[:2], item[3:]
            out.append((code, path))
            if code[0] in "RC":
                i += 1  # the source path of a rename follows
        i += 1
    return out


def commit_count(root: Path) -> int:
    proc = run_git(root, ["rev-list", "--count", "HEAD"], check=False)
    return int(proc.stdout.strip() or 0)


def remotes(root: Path) -> list[str]:
    proc = run_git(root, ["remote"], check=False)
    return [r for r in proc.stdout.split() if r]
