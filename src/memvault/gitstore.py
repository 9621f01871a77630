"""The one module that talks to git.

Hot paths (stage + commit after a write) call the ``git`` binary directly: one process
per step, no import cost. Richer reads (history, init) go through GitPython, imported
lazily. Automated commits never rely on the user's global identity: the author and
committer come from the vault's config (``git.author_name`` / ``git.author_email``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover  (typing costs ~4 ms to import; annotations are strings)
    import subprocess
    from typing import Any

from ._record import Record
from .errors import GitError

# Variables git sets for hooks; inherited by a child git they would point it elsewhere.
GIT_ENV_VARS = (
    "GIT_DIR",
    "GIT_INDEX_FILE",
    "GIT_WORK_TREE",
    "GIT_PREFIX",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_QUARANTINE_PATH",
)


def no_git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The current environment without git's per-repository variables (pre-commit's trick)."""
    env = {k: v for k, v in os.environ.items() if k not in GIT_ENV_VARS}
    env.setdefault("GIT_TERMINAL_PROMPT", "0")
    if extra:
        env.update(extra)
    return env


class Identity(Record):
    """Author and committer of memvault's commits."""

    __slots__ = ("name", "email")
    _frozen = True
    name: str
    email: str


def run_git(
    root: Path,
    args: Sequence[str],
    *,
    identity: Identity | None = None,
    check: bool = True,
    input_text: str | None = None,
    env_extra: dict[str, str] | None = None,
) -> GitResult | subprocess.CompletedProcess[str]:
    extra = dict(env_extra or {})
    cmd = ["git"]
    if identity is not None:
        extra.update(
            GIT_AUTHOR_NAME=identity.name,
            GIT_AUTHOR_EMAIL=identity.email,
            GIT_COMMITTER_NAME=identity.name,
            GIT_COMMITTER_EMAIL=identity.email,
        )
        cmd += ["-c", f"user.name={identity.name}", "-c", f"user.email={identity.email}"]
    # memvault's own commits were validated already; our hook shims read this and stay quiet.
    extra.setdefault("MEMVAULT_INTERNAL", "1")
    if input_text is None and hasattr(os, "posix_spawnp"):
        try:
            code, out, err = _spawn(["git", "-C", str(root), *cmd[1:], *args], no_git_env(extra))
        except FileNotFoundError:
            raise GitError("git is not installed or not on PATH") from None
        proc = GitResult([*cmd, *args], code, out, err)
        if check and code != 0:
            detail = (err or out).strip().splitlines()
            raise GitError(f"git {args[0]} failed: {detail[-1] if detail else code}")
        return proc
    import subprocess

    try:
        proc = subprocess.run(
            [*cmd, *args],
            cwd=root,
            env=no_git_env(extra),
            capture_output=True,
            text=True,
            input=input_text,
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    if check and proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise GitError(f"git {args[0]} failed: {detail[-1] if detail else proc.returncode}")
    return proc


class GitResult(Record):
    """What ``subprocess.run`` returns, for the calls made without it."""

    __slots__ = ("args", "returncode", "stdout", "stderr")
    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def _spawn(argv: list[str], env: dict[str, str]) -> tuple[int, str, str]:
    """Run ``argv`` with stdin from /dev/null; return (exit code, stdout, stderr).

    ``subprocess.run`` without importing subprocess: its imports (threading, selectors,
    locale, ...) cost ~7 ms, a tenth of a whole ``memvault add``.
    """
    import select
    import signal

    out_r, out_w = os.pipe()  # non-inheritable: only the dup2-ed copies reach git
    err_r, err_w = os.pipe()
    try:
        pid = os.posix_spawnp(
            argv[0],
            argv,
            env,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, out_w, 1),
                (os.POSIX_SPAWN_DUP2, err_w, 2),
            ],
            setsigdef=(signal.SIGPIPE,),  # Python ignores SIGPIPE; git should not inherit that
        )
    except BaseException:
        for fd in (out_r, out_w, err_r, err_w):
            os.close(fd)
        raise
    os.close(out_w)
    os.close(err_w)
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    poller = select.poll()
    for fd in chunks:
        poller.register(fd, select.POLLIN)
    try:
        open_fds = len(chunks)
        while open_fds:
            for fd, _ in poller.poll():
                data = os.read(fd, 65536)
                if data:
                    chunks[fd].append(data)
                else:
                    poller.unregister(fd)
                    open_fds -= 1
    finally:
        os.close(out_r)
        os.close(err_r)
        _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return (
        code,
        b"".join(chunks[out_r]).decode("utf-8", "replace"),
        b"".join(chunks[err_r]).decode("utf-8", "replace"),
    )


def _repo(root: Path) -> Any:
    """A GitPython ``Repo`` for the richer, off-the-hot-path operations."""
    import git  # GitPython: ~0.1 s to import, so only where a command needs it

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
    new_files: Sequence[str] | None = None,
) -> str | None:
    """Stage exactly ``add``/``remove`` (vault-relative paths) and make one commit.

    Returns the new commit's sha, or ``None`` when there was nothing to commit.
    Paths staged by the user for other files are left out of this commit.

    ``new_files`` is a promise from the caller that every path of ``add`` changes and that
    these ones are new. Then a plain ``git commit`` (~40% cheaper than ``--only`` on a
    10,000-file index, which writes a second index) is tried first, and its summary
    checked: if anything else was staged it shows up there, the commit is undone with a
    soft reset and redone with ``--only``.
    """
    add = sorted(set(add))
    remove = sorted(set(remove))
    paths = add + remove
    if add:
        run_git(root, ["add", "-f", "--", *add])
    if remove:
        run_git(root, ["rm", "-q", "--cached", "--ignore-unmatch", "-r", "--", *remove])
    if not paths and not allow_empty:
        return None
    if new_files is not None and add and not remove and not allow_empty:
        sha = _plain_commit(root, message, identity, add, new_files)
        if sha is not None:
            return sha
    args = ["commit", "-q", "--no-verify", "-m", message]
    if allow_empty:
        args.append("--allow-empty")
    if paths:
        # --only keeps whatever else the user had staged out of this commit.
        proc = run_git(root, [*args, "--only", "--", *paths], identity=identity, check=False)
    else:
        proc = run_git(root, args, identity=identity, check=False)
    if proc.returncode != 0:
        text = (proc.stdout + proc.stderr).lower()
        if "nothing to commit" in text or "no changes added" in text or "nothing added" in text:
            return None
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise GitError(f"git commit failed: {detail[-1] if detail else proc.returncode}")
    return head(root)


def _plain_commit(
    root: Path, message: str, identity: Identity, add: Sequence[str], new_files: Sequence[str]
) -> str | None:
    """``git commit`` of the whole index, kept only if it holds exactly ``add``.

    Returns the sha, or None when the caller must commit with ``--only`` instead (the
    index held something else, which is then staged again as it was).
    """
    proc = run_git(
        root,
        # no rename pairing: a rename staged by the user shows as a delete and a create
        ["-c", "diff.renames=false", "-c", "core.quotePath=false", "commit", "--no-verify", "--no-status", "-m", message],
        identity=identity,
        check=False,
        env_extra={"LC_ALL": "C", "LANGUAGE": ""},
    )
    if proc.returncode != 0:
        return None  # nothing to commit, a hook, ...: the careful path sorts it out
    changed, created, other = None, [], False
    for line in proc.stdout.splitlines():
        words = line.split(" ", 4)  # " 1 file changed, ..." / " create mode 100644 path"
        if len(words) > 3 and words[0] == "" and words[2] in ("file", "files") and words[3].startswith("changed"):
            changed = int(words[1]) if words[1].isdigit() else None
        elif len(words) == 5 and words[:3] == ["", "create", "mode"]:
            created.append(words[4])
        elif len(words) > 1 and words[0] == "" and words[1] in ("delete", "rename", "copy", "mode"):
            other = True
    if changed == len(add) and sorted(created) == sorted(new_files) and not other:
        return head(root)
    # Something the user had staged went in too: undo (index and files stay) and redo.
    if run_git(root, ["reset", "-q", "--soft", "HEAD~1"], check=False).returncode != 0:
        return head(root)  # a first commit can't be undone this way; nothing is lost
    return None


def head(root: Path) -> str | None:
    """The sha HEAD points at, read from the ref files (no process) when they are plain."""
    try:
        git_dir = root / ".git"
        text = (git_dir / "HEAD").read_text(encoding="ascii").strip()
        if text.startswith("ref: "):
            text = (git_dir / text[5:]).read_text(encoding="ascii").strip()
        if len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text):
            return text
    except (OSError, UnicodeDecodeError):
        pass  # worktree (.git file), packed refs, reftable: ask git
    proc = run_git(root, ["rev-parse", "-q", "--verify", "HEAD"], check=False)
    return proc.stdout.strip() or None


def root_commit(root: Path) -> str | None:
    """The first commit of HEAD's history (the smallest sha if histories were joined): the
    same in every clone, so it can name the vault. None before the first commit."""
    proc = run_git(root, ["rev-list", "--max-parents=0", "HEAD"], check=False)
    roots = proc.stdout.split() if proc.returncode == 0 else []
    return min(roots) if roots else None


class Change(Record):
    """One commit that touched a memory's file."""

    __slots__ = ("sha", "author", "date", "message", "path")
    _frozen = True
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
        out = repo.git.log(f"-n{limit}", "--follow", "--name-only", "--format=%x1e%H", "--", rel_path)
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
        changes.append(Change(commit.hexsha, author, date, commit.summary if isinstance(commit.summary, str) else str(commit.summary), path))
    return changes


def history_by_pattern(root: Path, needle: str, limit: int = 50) -> list[Change]:
    """Commits whose diff adds or removes ``needle`` (used to find a deleted memory)."""
    fmt = "%x1e%H%x1f%an <%ae>%x1f%aI%x1f%s"  # names (--name-only) follow the header
    proc = run_git(
        root, ["log", "--all", f"-n{limit}", "--name-only", f"-S{needle}", f"--format={fmt}"], check=False
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


def fsck(root: Path) -> tuple[bool, str]:
    proc = run_git(root, ["fsck", "--no-progress"], check=False)
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()


def status_porcelain(root: Path, paths: Sequence[str] = ()) -> list[tuple[str, str]]:
    """``(XY status, path)`` pairs from ``git status --porcelain`` (untracked included)."""
    proc = run_git(root, ["status", "--porcelain", "-z", "--untracked-files=all", "--", *paths], check=False)
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
