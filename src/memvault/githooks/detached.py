"""Running a hook's work in a detached child, and telling git about it in one line.

Loading the vector store alone takes seconds, so a reindex hook forks, detaches the
child's output to ``<git-dir>/memvault/hooks.log`` and, by default, does not wait for it:
a search refreshes the index lazily anyway. ``git config memvault.hookTimeout N`` (or
``$MEMVAULT_HOOK_TIMEOUT``) lets git wait up to N seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from .. import run_git
from ..values import Record

CLIENT_TIMEOUT = 0.0  # client hooks: never make git wait for the index
SERVER_TIMEOUT = 30.0  # post-receive: the pusher learns whether the shared index took it
LOG_KEEP = 256 * 1024  # bytes of hooks.log kept when it grows past LOG_LIMIT
LOG_LIMIT = 1024 * 1024


def say(hook: str, message: str) -> None:
    """One line for the person running git (git shows a remote's as ``remote: ...``)."""
    print(f"memvault: {hook}: {message}", file=sys.stderr)


class GitConfig:
    """Settings read with ``git config --get`` in a repository."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def get(self, key: str) -> str | None:
        proc = run_git(self.path, ["config", "--get", key], check=False)
        return proc.stdout.strip() or None


def hook_timeout(config: GitConfig | None = None, default: float = CLIENT_TIMEOUT) -> float:
    """``$MEMVAULT_HOOK_TIMEOUT`` > ``git config memvault.hookTimeout`` > ``default`` (seconds).

    How long git waits for a reindex before it goes on in the background; 0 (the client
    default) means git never waits. A git setting, not a vault one: how long *your* git
    waits is a personal choice, and reading it costs the hook no YAML parsing.
    """
    raw = os.environ.get("MEMVAULT_HOOK_TIMEOUT")
    if raw is None and config is not None:
        raw = config.get("memvault.hookTimeout")
    try:
        return max(0.0, float(raw)) if raw is not None else default
    except ValueError:
        return default


# A job returns {"status": "ok" | "busy" | "error", "message": str}.
Job = Callable[[], dict[str, Any]]


class Outcome(Record, frozen=True):
    status: str  # ok | busy | error | background
    message: str = ""
    pid: int | None = None


def run_bounded(job: Job, timeout: float, log_path: Path, label: str) -> Outcome:
    """Run ``job`` in a forked, detached child; wait at most ``timeout`` seconds for it.

    The child's stdin/stdout/stderr point at ``/dev/null``/``log_path`` from the start,
    so git (or a push's side band) never waits for output that would outlive the hook.
    After the timeout the child keeps going on its own and this returns ``background``.
    """
    trim_log(log_path)
    sys.stdout.flush()
    sys.stderr.flush()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        _child(job, log_path, label, read_fd, write_fd)  # never returns
    os.close(write_fd)
    if timeout <= 0:
        os.close(read_fd)
        return Outcome("background", pid=pid)
    try:
        answer = _read_until(read_fd, time.monotonic() + timeout)
    finally:
        os.close(read_fd)
    if answer is None:
        return Outcome("background", pid=pid)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    try:
        result = json.loads(answer.decode() or "{}")
    except json.JSONDecodeError:
        result = {}
    if not result:
        return Outcome("error", "the reindex process died without a word", pid)
    return Outcome(str(result.get("status", "error")), str(result.get("message", "")), pid)


def _child(job: Job, log_path: Path, label: str, read_fd: int, write_fd: int) -> NoReturn:
    """The forked side of :func:`run_bounded`: detach, run ``job``, send back its result."""
    code = 0
    try:
        os.close(read_fd)
        os.setsid()
        log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        null_fd = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null_fd, 0)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        started = time.monotonic()
        _log(f"{label} (pid {os.getpid()}): start")
        result = _run_logged(job)
        _log(
            f"{label}: {result.get('status')} "
            f"in {time.monotonic() - started:.2f} s: {result.get('message', '')}"
        )
        # After a timeout the hook has returned and nobody listens: that is fine.
        with contextlib.suppress(OSError):
            os.write(write_fd, json.dumps(result).encode() + b"\n")
    except BaseException:  # noqa: BLE001 - the child must reach os._exit, whatever happens
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _log(line: str) -> None:
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}", file=sys.stderr)


def _run_logged(job: Job) -> dict[str, Any]:
    """``job()``, or an error result with the traceback in the log."""
    try:
        return job()
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, never raised
        import traceback

        traceback.print_exc()
        return {"status": "error", "message": f"{type(exc).__name__}: {exc}".splitlines()[0]}


def _read_until(fd: int, deadline: float) -> bytes | None:
    """Everything written to ``fd`` until it closes; None when ``deadline`` comes first."""
    import select

    chunks = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None
        data = os.read(fd, 65536)
        if not data:
            return chunks
        chunks += data


def trim_log(path: Path, keep: int = LOG_KEEP, limit: int = LOG_LIMIT) -> None:
    """Cut ``path`` down to its last ``keep`` bytes once it is over ``limit``."""
    try:
        if path.stat().st_size > limit:
            with open(path, "rb") as handle:
                handle.seek(-keep, os.SEEK_END)
                tail = handle.read()
            with open(path, "wb") as handle:
                handle.write(tail)
    except OSError:
        pass


def report_outcome(name: str, outcome: Outcome, log: Path, base: Path, wait: float = 0.0) -> None:
    """Tell git's user how the hook's work went, in at most one line (``base``: for paths)."""
    try:
        where = os.path.relpath(log, base)
    except ValueError:
        where = str(log)
    if outcome.status == "ok":
        if os.environ.get("MEMVAULT_HOOK_VERBOSE"):
            say(name, f"reindexed: {outcome.message}")
    elif outcome.status == "busy":
        say(name, f"index busy: {outcome.message}")
    elif outcome.status == "background":
        if wait > 0:  # only news when the user asked git to wait for the index
            say(
                name,
                f"reindex still running after {wait:g} s; it finishes in the background "
                f"(pid {outcome.pid}, log {where})",
            )
    else:
        say(
            name,
            f"warning: reindex failed ({outcome.message}); git is unaffected, "
            f"search retries later (log {where})",
        )
