"""Where a user's resident processes listen, and the names of their files.

A folder only this user can enter: ``$MEMVAULT_RUNTIME_DIR``, else ``memvault/`` in
``$XDG_RUNTIME_DIR``, else ``/tmp/memvault-UID``. It is made with mode 0700 and, found
already there, used only if it is a real folder (no symlink) owned by this user that nobody
else may enter: another user can't plant a socket where this user's commands would ask it.
Per vault: ``KEY.sock`` (the socket), ``KEY.lock`` (held by the running process: one per
vault), ``KEY.pid`` and ``KEY.log`` (its stderr). ``KEY`` hashes the vault's path and the
memvault and Python that serve it, so another install never answers for this one.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path


class Unsafe(Exception):
    """The runtime folder can't be trusted (the message says why)."""


def folder() -> Path:
    """The user's runtime folder, made if missing; raises :class:`Unsafe` when it is not
    private to this user."""
    explicit = os.environ.get("MEMVAULT_RUNTIME_DIR")
    if explicit:
        base = Path(explicit)
    else:
        xdg = os.environ.get("XDG_RUNTIME_DIR")
        base = Path(xdg) / "memvault" if xdg else Path(f"/tmp/memvault-{os.getuid()}")
    try:
        os.mkdir(base, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise Unsafe(f"{base}: cannot create ({exc.strerror})") from None
    check_private(base)
    return base


def check_private(path: Path) -> None:
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


def key(root: Path) -> str:
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
    return {kind: base / f"{name}.{kind}" for kind in ("sock", "lock", "pid", "log")}
