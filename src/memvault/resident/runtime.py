"""Where a user's resident processes listen, and the names of their files.

A folder only this user can enter: ``$MEMVAULT_RUNTIME_DIR``, else ``memvault/`` in
``$XDG_RUNTIME_DIR``, else ``/tmp/memvault-UID``. It is made with mode 0700 and, found
already there, used only if it is a real folder (no symlink) owned by this user that nobody
else may enter: another user can't plant a socket where this user's commands would ask it.
Per vault: ``KEY.sock`` (the socket), ``KEY.lock`` (held by the running process: one per
vault), ``KEY.pid``, ``KEY.log`` (its stderr) and ``KEY.start`` (starts tried that did not
come up yet: see :func:`start_due`). ``KEY`` hashes the vault's path and the
memvault and Python that serve it, so another install never answers for this one.
"""

from __future__ import annotations

import os
import stat
import sys

from ..values import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path


class Unsafe(Exception):
    """The runtime folder can't be trusted (the message says why)."""


def folder() -> Path:
    """The user's runtime folder, made if missing; raises :class:`Unsafe` when it is not
    private to this user."""
    from pathlib import Path

    return Path(folder_name())


def folder_name() -> str:
    """:func:`folder` as a string, without pathlib (the command line's side imports little)."""
    explicit = os.environ.get("MEMVAULT_RUNTIME_DIR")
    if explicit:
        base = explicit
    else:
        xdg = os.environ.get("XDG_RUNTIME_DIR")
        base = os.path.join(xdg, "memvault") if xdg else f"/tmp/memvault-{os.getuid()}"
    try:
        os.mkdir(base, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise Unsafe(f"{base}: cannot create ({exc.strerror})") from None
    check_private(base)
    return base


def check_private(path: str | Path) -> None:
    """Raise :class:`Unsafe` unless ``path`` is a folder of this user's that only it may use."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise Unsafe(f"{path}: {exc.strerror}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise Unsafe(f"{path}: not a folder")
    if st.st_uid != os.getuid():
        raise Unsafe(f"{path}: owned by uid {st.st_uid}, not this user ({os.getuid()})")
    if st.st_mode & 0o077:
        raise Unsafe(f"{path}: others may use it (mode {stat.S_IMODE(st.st_mode):o}, want 700)")


def key(root: str | Path) -> str:
    """The name of ``root``'s files in the runtime folder."""
    from .. import __file__ as package

    try:
        from _sha256 import sha256
    except ImportError:  # pragma: no cover - CPython >= 3.12 names it _sha2
        from hashlib import sha256
    try:  # a reinstalled memvault rewrites its files: the old process is not asked again
        code = os.stat(package).st_mtime_ns
    except OSError:  # pragma: no cover
        code = 0
    ident = "\0".join((str(root), str(package), str(code), sys.prefix))
    return str(sha256(ident.encode("utf-8", "surrogateescape")).hexdigest())[:24]


def files(base: Path, name: str) -> dict[str, Path]:
    return {kind: base / f"{name}.{kind}" for kind in ("sock", "lock", "pid", "log", "start")}


def socket_name(base: str, name: str) -> str:
    """``files(base, name)["sock"]`` as a string."""
    return os.path.join(base, f"{name}.sock")


# A start that didn't come up (the process died before listening) is not tried again by every
# command: the next try waits BACKOFF seconds, doubling with each failed try up to BACKOFF_MAX.
BACKOFF = 5.0
BACKOFF_MAX = 300.0


def start_due(note: Path, now: float) -> tuple[bool, int]:
    """Whether a start may be tried now, and how many tries in a row came to nothing before
    (read from ``note``, ``KEY.start``: the tries and the time of the last; the process
    removes it once it listens)."""
    try:
        tries_text, _, when_text = note.read_text(encoding="ascii").partition(" ")
        tries, when = int(tries_text), float(when_text)
    except (OSError, ValueError):
        return True, 0
    wait = min(BACKOFF * 2 ** max(tries - 1, 0), BACKOFF_MAX)
    return not 0 <= now - when < wait, tries


def note_start(note: Path, tries: int, now: float) -> None:
    """Record a start tried at ``now`` after ``tries - 1`` that came to nothing."""
    tmp = note.with_name(f"{note.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(f"{tries} {now:.3f}\n")
        os.replace(tmp, note)
    except OSError:
        pass
