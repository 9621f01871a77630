"""Running git: one process per call, without the cost of importing ``subprocess``.

:mod:`memvault.store.git.ops` is where memvault's git calls are; this module only starts them.
The environment git sets for hooks is stripped (it would point a child git elsewhere);
stdin, when given, is written while git's output is read, so a large path list on stdin
(``--stdin``, ``--pathspec-from-file=-``) never deadlocks on a full pipe.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ...errors import GitError
from ...values import TYPE_CHECKING, Record

if TYPE_CHECKING:  # pragma: no cover
    import subprocess

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


class Identity(Record, frozen=True):
    """Author and committer of memvault's commits."""

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
    if hasattr(os, "posix_spawnp"):
        argv = ["git", "-C", str(root), *cmd[1:], *args]
        data = input_text.encode("utf-8") if input_text is not None else None
        try:
            code, out, err = _spawn(argv, no_git_env(extra), data)
        except FileNotFoundError:
            raise GitError("git is not installed or not on PATH") from None
        result = GitResult([*cmd, *args], code, out, err)
        if check and code != 0:
            detail = (err or out).strip().splitlines()
            raise GitError(f"git {args[0]} failed: {detail[-1] if detail else code}")
        return result
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

    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def _spawn(argv: list[str], env: dict[str, str], data: bytes | None = None) -> tuple[int, str, str]:
    """Run ``argv`` with ``data`` on its stdin (else /dev/null); return (exit code, stdout,
    stderr).

    ``subprocess.run`` without importing subprocess, whose imports (threading, selectors,
    locale, ...) are a noticeable share of a whole ``memvault add``. Stdin is written as git
    reads it, interleaved with reading its output, so neither side can fill a pipe and wait.
    """
    import _signal  # the C module: signal.py builds enums on import
    import select

    out_r, out_w = os.pipe()  # non-inheritable: only the dup2-ed copies reach git
    err_r, err_w = os.pipe()
    in_r, in_w = os.pipe() if data is not None else (-1, -1)
    stdin_action = (
        (os.POSIX_SPAWN_DUP2, in_r, 0)
        if data is not None
        else (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)
    )
    try:
        pid = os.posix_spawnp(
            argv[0],
            argv,
            env,
            file_actions=[
                stdin_action,
                (os.POSIX_SPAWN_DUP2, out_w, 1),
                (os.POSIX_SPAWN_DUP2, err_w, 2),
            ],
            setsigdef=(_signal.SIGPIPE,),  # Python ignores SIGPIPE; git should not inherit that
        )
    except BaseException:
        for fd in (out_r, out_w, err_r, err_w, in_r, in_w):
            if fd >= 0:
                os.close(fd)
        raise
    for fd in (out_w, err_w, in_r):
        if fd >= 0:
            os.close(fd)
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    poller = select.poll()
    for fd in chunks:
        poller.register(fd, select.POLLIN)
    view = memoryview(data or b"")
    if in_w >= 0:
        os.set_blocking(in_w, False)
        poller.register(in_w, select.POLLOUT)
    try:
        open_fds = len(chunks) + (in_w >= 0)
        while open_fds:
            for fd, _ in poller.poll():
                if fd == in_w:
                    try:
                        view = view[os.write(fd, view[:65536]) :]
                    except BrokenPipeError:  # git stopped reading (it failed): drop the rest
                        view = view[:0]
                    if not view:
                        poller.unregister(fd)
                        os.close(fd)
                        in_w = -1
                        open_fds -= 1
                    continue
                chunk = os.read(fd, 65536)
                if chunk:
                    chunks[fd].append(chunk)
                else:
                    poller.unregister(fd)
                    open_fds -= 1
    finally:
        for fd in (out_r, err_r, in_w):
            if fd >= 0:
                os.close(fd)
        _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return (
        code,
        b"".join(chunks[out_r]).decode("utf-8", "replace"),
        b"".join(chunks[err_r]).decode("utf-8", "replace"),
    )
