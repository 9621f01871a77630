"""The command line's side: ask the vault's resident process to run a command.

Every failure to ask means "run it here": :func:`ask` returns None and the command runs in
this process, as it would with no resident process at all. A process not listening (never
started, killed, its socket left behind) is started again for the next command, detached
from this one (its standard streams are not this command's: a hook's reader waits for this
process's output to end, not for the resident's).
"""

from __future__ import annotations

# The C module: socket.py's own imports (selectors, its enums) would be a noticeable share
# of a served command's new process; a connection needs none of it.
import _socket
import os
import sys

from ..values import TYPE_CHECKING
from . import SERVED
from .runtime import Unsafe, files, folder_name, key, note_start, socket_name, start_due

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path
    from typing import Any

CONNECT_TIMEOUT = 1.0  # seconds: a local socket that doesn't accept by then is stuck
ANSWER_TIMEOUT = 30.0  # seconds for the answer (a first search after a large import catches up)
PEERCRED = getattr(_socket, "SO_PEERCRED", None)  # Linux: who is at the other end
MAX_SOCKET_PATH = 100  # bytes: sun_path holds 108 on Linux (104 elsewhere), with its NUL


def served(argv: list[str]) -> bool:
    """Whether ``argv`` is a command the resident process runs."""
    if "--help" in argv or "-h" in argv:
        return False
    from ..cli.fast import arguments, command_name

    name = command_name(argv)
    # ``add`` may read stdin: served only when this process can tell whether it will
    return name in SERVED and (name != "add" or arguments(argv, paths=False) is not None)


def off_by_env() -> bool:
    value = os.environ.get("MEMVAULT_RESIDENT")
    # An unknown value: run here, where loading the settings reports it.
    return value is not None and value.strip().lower() not in ("1", "true", "yes", "on")


def ask(argv: list[str]) -> int | None:
    """Run ``argv`` in the vault's resident process and copy its output here: its exit code,
    or None when this process must run the command itself."""
    if PEERCRED is None or off_by_env() or not served(argv):
        return None
    from .. import vault_folder
    from ..cli.fast import global_options

    # (strings, not pathlib: this process only asks, and imports as little as it can)
    options = global_options(argv, paths=False)
    root = vault_folder(options.get("vault")) if options is not None else None
    if root is None:
        return None  # no vault here: this process says so, as usual
    try:
        base = folder_name()
    except Unsafe as exc:
        print(f"memvault: not using a resident process: {exc}", file=sys.stderr)
        return None
    name = key(root)
    sock = socket_name(base, name)
    if len(os.fsencode(sock)) > MAX_SOCKET_PATH:
        print(f"memvault: not using a resident process: {base}: too long a path for a socket",
              file=sys.stderr)  # fmt: skip
        return None
    conn = _connect(sock)
    if conn is None:
        from pathlib import Path

        _start(Path(root), files(Path(base), name))
        return None
    try:
        return _exchange(conn, root, argv)
    except (OSError, ValueError):
        return None  # it went away mid-answer (killed, idle): run the command here
    finally:
        conn.close()


def _connect(path: str) -> _socket.socket | None:
    """A connection to the process listening at ``path``, if it is this user's."""
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    conn.settimeout(CONNECT_TIMEOUT)
    try:
        conn.connect(path)
        if PEERCRED is not None:
            import struct

            raw = conn.getsockopt(_socket.SOL_SOCKET, PEERCRED, struct.calcsize("3i"))
            if struct.unpack("3i", raw)[1] != os.getuid():
                raise PermissionError("the resident process is another user's")
    except OSError:
        conn.close()
        return None
    return conn


def _exchange(conn: _socket.socket, root: str, argv: list[str]) -> int | None:
    from . import wire

    stdin: bytes | None = None
    stdin_tty = _isatty(sys.stdin)
    if not stdin_tty and sys.stdin is not None and _reads_stdin(argv):
        stdin = sys.stdin.buffer.read()  # read here, used there
    env = dict(os.environ)
    out_tty = _isatty(sys.stdout)
    if out_tty:  # the resident process has no terminal to ask its size
        size = os.get_terminal_size(sys.stdout.fileno())
        env.setdefault("COLUMNS", str(size.columns))
        env.setdefault("LINES", str(size.lines))
    tty = (stdin_tty, out_tty, _isatty(sys.stderr))
    out, err = sys.stdout, sys.stderr
    encoding = (out.encoding or "utf-8", out.errors or "strict", err.errors or "strict")
    conn.sendall(wire.request(str(root), argv, os.getcwd(), env, stdin, tty, encoding))
    conn.shutdown(_socket.SHUT_WR)
    conn.settimeout(ANSWER_TIMEOUT)
    code, answer_out, answer_err = wire.read_answer(_read_all(conn))
    if code is None:
        return None  # declined (turned off, another vault, ...): run it here
    out.flush()
    err.flush()
    if answer_err:
        os.write(2, answer_err)
    if answer_out:
        _write_all(1, answer_out)
    return code


def _reads_stdin(argv: list[str]) -> bool:
    """Whether the command reads its standard input: a hook's JSON, or ``add``'s text when
    the command line gives neither a text (``-`` is none) nor a ``--file``
    (:func:`memvault.cli.common.read_text_arg`)."""
    if "--hook" in argv:
        return True
    from ..cli.fast import arguments, command_name

    if command_name(argv) != "add":
        return False
    parsed = arguments(argv, paths=False)
    if parsed is None:
        return False  # (not served: see served())
    options, positional = parsed
    text = positional[1] if len(positional) > 1 else None
    return text in (None, "-") and options.get("file") is None


def _read_all(conn: _socket.socket) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = conn.recv(1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream is not None and stream.isatty())
    except (OSError, ValueError):
        return False


def _start(root: Path, paths: dict[str, Path]) -> None:
    """Start the resident process for the next command (not waited for), unless one is
    starting already (it holds the lock), the vault's settings turn it off, or the last
    start came to nothing a moment ago (:func:`~memvault.resident.runtime.start_due`)."""
    import fcntl

    try:
        fd = os.open(paths["lock"], os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return  # one is starting
    os.close(fd)  # (releases the lock: the process takes it)
    try:
        from .. import resident_enabled

        if not resident_enabled(root):
            return
    except Exception:  # noqa: BLE001 - bad settings: this process reports them
        return
    import time

    now = time.time()
    due, tries = start_due(paths["start"], now)
    if not due:
        return  # the last start didn't come up: wait a little before the next
    note_start(paths["start"], tries + 1, now)
    argv = [sys.executable, "-P", "-m", "memvault.resident", str(root)]
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, str(paths["log"]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
    ]
    try:
        os.posix_spawn(sys.executable, argv, os.environ, file_actions=actions, setsid=True)
    except OSError as exc:
        print(f"memvault: could not start a resident process ({exc})", file=sys.stderr)
