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
    if hasattr(os, "posix_spawnp"):
        return start_git(
            root, args, identity=identity, check=check, input_text=input_text, env_extra=env_extra
        ).wait()
    import subprocess

    cmd, extra = _command(identity, env_extra)
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


def _command(
    identity: Identity | None, env_extra: dict[str, str] | None
) -> tuple[list[str], dict[str, str]]:
    """``git`` and its options, and the variables to add to its environment."""
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
    return cmd, extra


def start_git(
    root: Path,
    args: Sequence[str],
    *,
    identity: Identity | None = None,
    check: bool = True,
    input_text: str | None = None,
    env_extra: dict[str, str] | None = None,
) -> Running:
    """Start git as :func:`run_git` would run it, without waiting for it: the caller does
    other work meanwhile, then :meth:`Running.wait` gives what :func:`run_git` would have
    returned (or raised). A short stdin is written at once, so git can finish meanwhile."""
    cmd, extra = _command(identity, env_extra)
    argv = ["git", "-C", str(root), *cmd[1:], *args]
    data = input_text.encode("utf-8") if input_text is not None else None
    try:
        return Running(argv, [*cmd, *args], no_git_env(extra), data, check, args[0])
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None


# Bytes of stdin written as git starts (a pipe holds 64 KiB on Linux, 16 KiB at least on
# the others): up to this, git reads all of it without the caller's help.
_EAGER_INPUT = 8192


class Running:
    """A git process started by :func:`start_git`.

    ``subprocess`` without importing subprocess, whose imports (threading, selectors,
    locale, ...) are a noticeable share of a whole ``memvault add``. Stdin is written as git
    reads it, interleaved with reading its output, so neither side can fill a pipe and wait.
    """

    def __init__(
        self,
        argv: list[str],
        args: list[str],
        env: dict[str, str],
        data: bytes | None,
        check: bool,
        name: str,
    ) -> None:
        import _signal  # the C module: signal.py builds enums on import

        self._args = args
        self._check = check
        self._name = name  # the git command, for the error
        self._result: GitResult | None = None
        out_r, out_w = os.pipe()  # non-inheritable: only the dup2-ed copies reach git
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe() if data is not None else (-1, -1)
        stdin_action = (
            (os.POSIX_SPAWN_DUP2, in_r, 0)
            if data is not None
            else (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)
        )
        try:
            self._pid = os.posix_spawnp(
                argv[0],
                argv,
                env,
                file_actions=[
                    stdin_action,
                    (os.POSIX_SPAWN_DUP2, out_w, 1),
                    (os.POSIX_SPAWN_DUP2, err_w, 2),
                ],
                setsigdef=(_signal.SIGPIPE,),  # Python ignores SIGPIPE; git should not inherit it
            )
        except BaseException:
            for fd in (out_r, out_w, err_r, err_w, in_r, in_w):
                if fd >= 0:
                    os.close(fd)
            raise
        for fd in (out_w, err_w, in_r):
            if fd >= 0:
                os.close(fd)
        self._out_r, self._err_r, self._in_w = out_r, err_r, in_w
        self._view = memoryview(data or b"")
        if in_w >= 0 and len(self._view) <= _EAGER_INPUT:
            try:
                os.write(in_w, self._view)
            except BrokenPipeError:  # git stopped reading (it failed): its exit code says so
                pass
            os.close(in_w)
            self._in_w = -1

    def wait(self) -> GitResult:
        """Wait for git: its exit code and output; raises :class:`GitError` when it failed
        and ``check`` was asked. The same answer (or error) however often it is called."""
        if self._result is None:
            code, out, err = self._pump()
            self._result = GitResult(self._args, code, out, err)
        result = self._result
        if self._check and result.returncode != 0:
            lines = (result.stderr or result.stdout).strip().splitlines()
            detail = lines[-1] if lines else result.returncode
            raise GitError(f"git {self._name} failed: {detail}")
        return result

    def _pump(self) -> tuple[int, str, str]:
        import select

        out_r, err_r, in_w = self._out_r, self._err_r, self._in_w
        chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
        poller = select.poll()
        for fd in chunks:
            poller.register(fd, select.POLLIN)
        view = self._view
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
            _, status = os.waitpid(self._pid, 0)
        code = os.waitstatus_to_exitcode(status)
        return (
            code,
            b"".join(chunks[out_r]).decode("utf-8", "replace"),
            b"".join(chunks[err_r]).decode("utf-8", "replace"),
        )


class GitResult(Record):
    """What ``subprocess.run`` returns, for the calls made without it."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
