"""The resident process: serves one vault's read commands to this user's command lines.

It runs a request as the command line would run it, with the caller's arguments, folder,
environment and standard streams (captured and sent back), through the same entry point
(:func:`memvault.cli.main`), so an answer is the one the caller would have got by itself.
The difference is what stays loaded between requests: the model, the index handle, the
parsed settings. Nothing stays stale for that:

* every request opens the vault again (its settings, identity), and the search checks the
  index against the write counter and ``HEAD`` first, as every search does: a write by any
  process, a commit or a checkout made by hand, are caught up before the answer;
* a file watcher reports hand edits not yet committed, so the next search compares those
  files (a long-lived process without one would only find them within a sweep's time);
* ``resident.enabled`` turned off (in the config file or the caller's environment): the
  request is declined, the caller runs it itself, and this process ends.

Only this user's processes are answered (the socket's peer credentials), one at a time. It
ends after ``resident.idle_seconds`` without a request, when its socket is removed or taken
over, or when the vault is gone.
"""

from __future__ import annotations

import io
import os
import socket
import struct
import sys
import time
from pathlib import Path

from ..values import TYPE_CHECKING
from . import wire
from .runtime import Unsafe, files, folder, key

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .. import Vault

TICK = 5.0  # seconds between looks at the socket file and the vault while idle
MAX_REQUEST = 64 << 20  # bytes: a hook's JSON with a long prompt is far below


def _log(message: str) -> None:
    print(f"memvault resident [{os.getpid()}] {time.strftime('%H:%M:%S')}: {message}",
          file=sys.__stderr__, flush=True)  # fmt: skip


class _Stream(io.TextIOWrapper):
    """A captured standard stream that answers ``isatty`` as the caller's would."""

    def __init__(self, data: bytes, tty: bool, encoding: str, errors: str) -> None:
        super().__init__(io.BytesIO(data), encoding=encoding, errors=errors, write_through=True)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty

    def captured(self) -> bytes:
        self.flush()
        buffer = self.buffer
        assert isinstance(buffer, io.BytesIO)
        return buffer.getvalue()


def serve(root: Path) -> int:
    """Serve ``root`` until idle; 0 when another process serves it already."""
    import fcntl

    try:
        base = folder()
    except Unsafe as exc:
        _log(f"not serving: {exc}")
        return 1
    paths = files(base, key(root))
    lock_fd = os.open(paths["lock"], os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another one serves (or is starting to)
    os.chdir(root)
    import signal

    # ``kill PID`` ends it the way idling does: socket and pid file removed on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    from .. import Vault, resident_enabled

    if not resident_enabled(root):
        return 0
    vault = Vault.open(root)
    idle = float(vault.config.get("resident.idle_seconds"))
    listener, ino = _listen(paths["sock"])
    paths["pid"].write_text(f"{os.getpid()}\n", encoding="ascii")
    try:
        paths["start"].unlink()  # it came up: the next start, after this one ends, is not delayed
    except FileNotFoundError:
        pass
    from ..watch import feed_searches, stop_feed

    feed = feed_searches(root)
    stamp = code_stamp(PACKAGE)
    try:
        _warm(vault)
        _log(f"serving {root}")
        _loop(listener, root, paths["sock"], ino, idle, stamp)
    finally:
        stop_feed(feed)
        _release(listener, ino, paths)
    return 0


def _listen(path: Path) -> tuple[socket.socket, int]:
    """Listen at ``path`` (a socket left there by a process that died is replaced: the lock
    says nobody else serves)."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # the socket is made with mode 0600
    try:
        listener.bind(str(path))
    finally:
        os.umask(old)
    listener.listen(64)
    return listener, os.stat(path).st_ino


def _warm(vault: Vault) -> None:
    try:
        vault.warm()
    except Exception as exc:  # noqa: BLE001 - the first request loads what it needs
        _log(f"warm-up skipped ({type(exc).__name__}: {exc})")


def _loop(
    listener: socket.socket, root: Path, sock_path: Path, ours: int, idle: float, stamp: int | None
) -> None:
    last = time.monotonic()
    while True:
        left = idle - (time.monotonic() - last)
        if left <= 0:
            _log("idle: ending")
            return
        listener.settimeout(min(left, TICK))
        try:
            conn, _ = listener.accept()
        except TimeoutError:
            if not (root / ".memvault").is_dir():
                _log("the vault went away: ending")
                _forget(sock_path)
                return
            if not _still_ours(root, sock_path, ours):
                _log("the socket went away or another process took it: ending")
                return
            continue
        with conn:
            if not _same_user(conn):
                _log("refused a connection from another user")
                continue
            stay = _handle(conn, root, stamp)
        last = time.monotonic()
        if not stay:
            _log("turned off: ending")
            return


def _still_ours(root: Path, sock_path: Path, ino: int) -> bool:
    try:
        return os.stat(sock_path).st_ino == ino and (root / ".memvault").is_dir()
    except OSError:
        return False


def _forget(sock_path: Path) -> None:
    """Remove the vault's log and lock files once the vault is gone (a test's or a bench's
    temporary vault): nothing will ask for them again."""
    for kind in ("log", "lock", "start"):
        try:
            sock_path.with_suffix(f".{kind}").unlink()
        except OSError:
            pass


def _same_user(conn: socket.socket) -> bool:
    raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return bool(struct.unpack("3i", raw)[1] == os.getuid())


# memvault's own source folder, and the folders an installed package lives in
PACKAGE = Path(__file__).resolve().parent.parent
_INSTALLED = ("site-packages", "dist-packages")


def code_stamp(package: Path) -> int | None:
    """The newest modification time of ``package``'s Python files when it runs from a source
    checkout (an editable install, where a developer edits them while a process serves);
    None for an installed package, whose files change only with a reinstall, which
    :func:`~memvault.resident.runtime.key` notices."""
    if any(part in _INSTALLED for part in package.parts):
        return None
    newest = 0
    for where, _, names in os.walk(package):
        for name in names:
            if name.endswith(".py"):
                try:
                    newest = max(newest, os.stat(os.path.join(where, name)).st_mtime_ns)
                except OSError:
                    pass  # removed while we look: the next request sees the change
    return newest


def _handle(conn: socket.socket, root: Path, stamp: int | None = None) -> bool:
    """Answer one request; False when the process should end (turned off, or its source
    changed since it started: ``stamp``, see :func:`code_stamp`)."""
    conn.settimeout(10.0)
    try:
        raw = _read(conn)
        if not raw:
            return True  # a look at whether it listens
        request = wire.read_request(raw)
        if Path(request["root"]) != root:
            _answer(conn, None)  # another vault (a hash collision): the caller runs it
            return True
        if stamp is not None and code_stamp(PACKAGE) != stamp:
            # edited source: this process runs the old code; the caller runs the new
            _log("memvault's source changed since this process started: ending")
            _answer(conn, None)
            return False
        started = time.perf_counter()
        code, out, err, stay = _run(request, root)
    except Exception as exc:  # noqa: BLE001 - a bad request: the caller runs the command
        _log(f"declined a request ({type(exc).__name__}: {exc})")
        _answer(conn, None)
        return True
    _answer(conn, code, out, err)
    what = request["argv"][:1] if code is None else request["argv"]
    ms = (time.perf_counter() - started) * 1000
    _log(f"{'declined' if code is None else f'exit {code}'} in {ms:.0f} ms: {_brief(what)}")
    return stay


def _brief(argv: list[str]) -> str:
    """The command line for the log, its words cut short (a prompt is the user's text)."""
    return " ".join(a if len(a) <= 24 else a[:21] + "..." for a in argv)[:200]


def _read(conn: socket.socket) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_REQUEST:
            raise ValueError("request too large")
        chunks.append(chunk)


def _answer(conn: socket.socket, code: int | None, out: bytes = b"", err: bytes = b"") -> None:
    try:
        conn.sendall(wire.answer(code, out, err))
    except OSError:
        pass  # the caller gave up waiting; it runs the command itself


def _run(request: dict[str, Any], root: Path) -> tuple[int | None, bytes, bytes, bool]:
    """Run the request's command line as the caller: (exit code or None to decline, its
    stdout, its stderr, whether to keep serving)."""
    from .. import resident_enabled
    from ..cli import main

    saved_env = dict(os.environ)
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    stdin_tty, out_tty, err_tty = request["tty"]
    encoding, out_errors, err_errors = request["encoding"]
    stdin = request["stdin"] or b""
    try:
        _set_env(request["env"])
        os.chdir(request["cwd"])
        try:
            enabled = resident_enabled(root)
        except Exception:  # noqa: BLE001 - bad settings: the caller reports them
            return None, b"", b"", True
        if not enabled:
            return None, b"", b"", False
        sys.stdin = _Stream(stdin, stdin_tty, encoding, "strict")
        sys.stdout = out = _Stream(b"", out_tty, encoding, out_errors)
        sys.stderr = err = _Stream(b"", err_tty, encoding, err_errors)
        from ..cli.common import state

        state.resident = True
        code = main(list(request["argv"]))
        return code, out.captured(), err.captured(), True
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        _set_env(saved_env)
        os.chdir(root)


def _set_env(wanted: dict[str, str]) -> None:
    """Make the environment ``wanted``, touching only the variables that differ."""
    for name in [n for n in os.environ if n not in wanted]:
        del os.environ[name]
    for name, value in wanted.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


def _release(listener: socket.socket, ino: int, paths: dict[str, Path]) -> None:
    """Remove the socket and pid file if they are still this process's."""
    try:
        if os.stat(paths["sock"]).st_ino == ino:
            paths["sock"].unlink()
    except OSError:
        pass
    listener.close()
    try:
        if paths["pid"].read_text(encoding="ascii").strip() == str(os.getpid()):
            paths["pid"].unlink()
    except OSError:
        pass
