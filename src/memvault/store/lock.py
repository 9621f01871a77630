"""The one lock primitive of memvault: an advisory ``flock`` on a lock file.

:func:`file_lock` waits (up to a timeout) and :func:`try_lock` takes the lock only if it is
free now. Any layer may take them -- the vault lock around commits and index writes, the
lock of the index's vector store, of the post-receive queue, of a cache being filled in the
user's cache folder (a word list, the embedding model) -- so this module imports nothing of
memvault but its errors (``tests/test_layout.py`` counts it as a base module).

``flock`` locks die with their process, so a SIGKILLed writer never leaves a stale lock.
Git's own ``index.lock`` can be left behind by a killed ``git`` child; since every git
write of memvault happens under the vault lock, one found while we hold it is stale and
is removed (after a short grace period for a user's own git command).
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import LockTimeoutError


@contextmanager
def file_lock(path: Path, timeout: float = 60.0, label: str = "vault") -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) for the ``with`` block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    raise LockTimeoutError(
                        f"another memvault process has held the {label} lock for {timeout:.0f} s",
                        str(path),
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass
        yield
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


@contextmanager
def try_lock(path: Path) -> Iterator[bool]:
    """Take the lock only if it is free right now; yields whether we got it (readers use this)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    got = False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            got = True
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
        yield got
    finally:
        if got:
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def clear_stale_git_lock(root: Path, grace: float = 2.0) -> bool:
    """Remove ``.git/index.lock`` left by a killed git process. Call with the vault lock held."""
    lock = root / ".git" / "index.lock"
    if not lock.exists():
        return False
    deadline = time.monotonic() + grace
    while lock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if not lock.exists():
        return False
    try:
        age = time.time() - lock.stat().st_mtime
        lock.unlink()
    except FileNotFoundError:
        return False
    print(f"memvault: removed a stale .git/index.lock ({age:.0f} s old)", file=sys.stderr)
    return True
