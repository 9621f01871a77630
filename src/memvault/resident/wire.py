"""What the command line and the resident process say to each other over the socket.

The command line's new process only asks, so it imports as little as it can: not even
``json``, whose decoder imports ``re`` (and ``re`` enum, functools and collections), about
5 ms of every served command (docs/performance.md). Both ends come from one installation (the
socket's name changes with it: :func:`memvault.resident.runtime.key`), so the format is
this module's alone:

- a request is ``MAGIC``, then NUL-separated fields (the vault, the working folder, the three
  streams' terminal flags, the output encoding and the two error handlers, the argument
  count and the arguments, the variable count and ``NAME=value`` each), then ``-`` for no
  standard input or ``+`` and its bytes to the end. No field can hold a NUL: the operating
  system keeps them out of arguments, variables and paths, and :func:`request` refuses one;
- an answer is one ASCII line, ``CODE OUT ERR`` (``-`` for a declined command), then the
  command's standard output and standard error, OUT and ERR bytes long.
"""

from __future__ import annotations

from ..values import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

MAGIC = b"memvault-resident-1"


def _bytes(text: str) -> bytes:
    data = text.encode("utf-8", "surrogateescape")
    if b"\0" in data:
        raise ValueError("a NUL in a request field")
    return data


def request(
    root: str,
    argv: list[str],
    cwd: str,
    env: dict[str, str],
    stdin: bytes | None,
    tty: tuple[bool, bool, bool],
    encoding: tuple[str, str, str],
) -> bytes:
    """The request to run ``argv`` in ``root``'s resident process, as this process would."""
    fields = [MAGIC, _bytes(root), _bytes(cwd), bytes(b"01"[flag] for flag in tty)]
    fields += [_bytes(part) for part in encoding]
    fields += [str(len(argv)).encode("ascii"), *(_bytes(arg) for arg in argv)]
    fields += [str(len(env)).encode("ascii"), *(_bytes(f"{k}={v}") for k, v in env.items())]
    fields.append(b"-" if stdin is None else b"+" + stdin)
    return b"\0".join(fields)


def read_request(raw: bytes) -> dict[str, Any]:
    """The fields of a :func:`request` (ValueError when ``raw`` is not one): ``root``,
    ``argv``, ``cwd``, ``env``, ``stdin`` (bytes or None), ``tty`` and ``encoding``."""
    at = 0

    def field() -> str:
        nonlocal at
        end = raw.find(b"\0", at)
        if end < 0:
            raise ValueError("a cut request")
        text = raw[at:end].decode("utf-8", "surrogateescape")
        at = end + 1
        return text

    def count() -> int:
        text = field()
        if not text.isdigit() or len(text) > 9:
            raise ValueError(f"not a count: {text[:20]!r}")
        return int(text)

    if field() != MAGIC.decode("ascii"):
        raise ValueError("not a memvault request")
    root, cwd, flags = field(), field(), field()
    if len(flags) != 3 or set(flags) - {"0", "1"}:
        raise ValueError(f"bad terminal flags: {flags[:20]!r}")
    encoding = (field(), field(), field())
    argv = [field() for _ in range(count())]
    env: dict[str, str] = {}
    for _ in range(count()):
        name, sep, value = field().partition("=")
        if not sep or not name:
            raise ValueError(f"not a variable: {name[:20]!r}")
        env[name] = value
    marker = raw[at : at + 1]
    if marker not in (b"-", b"+") or (marker == b"-" and at + 1 != len(raw)):
        raise ValueError("bad standard input")
    return {
        "root": root,
        "argv": argv,
        "cwd": cwd,
        "env": env,
        "stdin": raw[at + 1 :] if marker == b"+" else None,
        "tty": (flags[0] == "1", flags[1] == "1", flags[2] == "1"),
        "encoding": encoding,
    }


def answer(code: int | None, out: bytes = b"", err: bytes = b"") -> bytes:
    """The answer to a request: its exit code (None: declined, the caller runs it) and the
    command's output."""
    head = "-" if code is None else str(int(code))
    return f"{head} {len(out)} {len(err)}\n".encode("ascii") + out + err


def read_answer(raw: bytes) -> tuple[int | None, bytes, bytes]:
    """(exit code or None, stdout, stderr) of an :func:`answer`; ValueError for anything else,
    a cut answer included."""
    head, sep, body = raw.partition(b"\n")
    parts = head.split(b" ")
    if not sep or len(parts) != 3:
        raise ValueError("not a memvault answer")
    code_text, n_out, n_err = (part.decode("ascii") for part in parts)
    out_len, err_len = int(n_out), int(n_err)
    if out_len < 0 or err_len < 0 or len(body) != out_len + err_len:
        raise ValueError("a cut answer")
    code = None if code_text == "-" else int(code_text)
    return code, body[:out_len], body[out_len:]
