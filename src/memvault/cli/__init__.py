"""The ``memvault`` command line: a thin adapter over :class:`memvault.Vault`.

Every command parses options, opens the vault, calls one core function and renders
the result. Errors are translated here, at one boundary: exit 0 ok, 1 expected error
(one line on stderr), 2 usage, 3 bug (with a crash log path), 130 interrupted.

May import: memvault's public API (``from memvault import ...``: the Vault, its value
types, the shared vocabulary), ``memvault.errors``, ``memvault.debug``, and the other doors
it starts (mcp_server, ui, githooks, watch, integrations). ``tools/layout.py --check``.
"""

from __future__ import annotations

import os
import sys

from ..errors import MemvaultError, SecretDetectedError
from ..values import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path
    from typing import Any

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    if name == "app":  # the Typer app, built on first use (``memvault add`` may not need it)
        return _typer_app()
    raise AttributeError(f"module 'memvault.cli' has no attribute {name!r}")


def _typer_app() -> Any:
    """The Typer app with every command module registered on it."""
    # Importing a command module registers its commands; `memvault --help` lists them in
    # that order.
    from . import agents, hooks, sync  # noqa: F401

    # isort: split
    from . import allow, debugmode, maintain, read, write  # noqa: F401

    # isort: split
    from . import search, webui  # noqa: F401
    from .root import app

    return app


def _crash_log(exc: BaseException) -> Path:
    from .. import user_cache_dir

    base = user_cache_dir()
    base.mkdir(parents=True, exist_ok=True)
    import datetime as dt

    path = base / f"crash-{dt.datetime.now():%Y%m%d-%H%M%S}-{os.getpid()}.log"
    import traceback

    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f"memvault crash\nargv: {sys.argv!r}\n\n")
        traceback.print_exception(exc, file=handle)
    return path


def one_line(message: str) -> str:
    """``message`` with every character that would break it into lines (``\\n``, ``\\x1e``,
    ``\\u2028``, ...: what ``str.splitlines`` splits on) shown escaped: an error is one line,
    whatever input it quotes."""
    if len(message.splitlines()) <= 1 and not message.endswith(("\n", "\r")):
        return message
    return "".join(
        ch.encode("unicode_escape").decode("ascii") if len(f"a{ch}a".splitlines()) > 1 else ch
        for ch in message
    )


# Commands that serve until stopped: the cyclic collector keeps its default pace there.
LONG_RUNNING = frozenset({"mcp", "ui", "watch", "serve"})


_VALUED_GLOBALS = frozenset(("--vault", "-V", "--agent", "--team", "--role"))


def _procedure_used(argv: list[str]) -> list[str]:
    """``procedure used ID ...`` is the ``procedure-used`` command (``procedure`` itself
    takes one query, so two words can't be a search)."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in _VALUED_GLOBALS else 1
    ident = argv[i + 2] if len(argv) > i + 2 else "-"
    if argv[i : i + 2] == ["procedure", "used"] and not ident.startswith("-"):
        return [*argv[:i], "procedure-used", *argv[i + 2 :]]
    return argv


def main(argv: list[str] | None = None) -> int:
    """Console entry point; returns (and exits with) the process exit code."""
    if argv is None:
        # Undecodable bytes in arguments arrive as lone surrogates; make them U+FFFD once, here.
        argv = [_clean_arg(a) for a in sys.argv[1:]]
        exit_after = True
        # One short process, which may hold a whole vault's memories at once: the cyclic
        # collector's passes over them are a large share of `list` and `doctor` on a big
        # vault (docs/scale.md). Collect rarely; the process ends soon anyway.
        if not LONG_RUNNING.intersection(argv[:3]):
            import gc

            gc.set_threshold(100_000, 50, 100)
        served = _resident(argv)
        if served is not None:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(served)
    else:
        exit_after = False
    code = 0
    from .common import state

    state.exit_now = False
    from .trace import begin, finish

    argv = _procedure_used(argv)
    token = begin(argv)  # debug mode: a trace of a read command, printed on stderr
    try:
        from .fast import parse

        fast = parse(argv)
        if fast is not None:
            fast()
        else:
            code = _run_typer(argv)
    except MemvaultError as exc:
        # Each door says how to override a refusal its own way: here, with a flag.
        hint = ", or pass --allow-secrets" if isinstance(exc, SecretDetectedError) else ""
        print(f"Error: {one_line(str(exc))}{hint}", file=sys.stderr)
        code = exc.exit_code
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        code = 130
    except BrokenPipeError:
        code = 0
    except Exception as exc:  # a bug: keep the traceback out of the user's face
        path = _crash_log(exc)
        print(
            f"Error: internal error ({type(exc).__name__}: {exc}); details in {path}",
            file=sys.stderr,
        )
        code = 3
    finish(token, code)
    if exit_after:
        sys.stdout.flush()
        if state.exit_now:
            # Unloading chromadb, onnxruntime and numpy costs more CPU than a warm query
            # (docs/performance.md); what the command wrote is on disk already.
            sys.stderr.flush()
            os._exit(code)
        raise SystemExit(code)
    return code


def _resident(argv: list[str]) -> int | None:
    """The exit code of ``argv`` run by the vault's resident process (docs/resident.md), or
    None: run it here."""
    from ..resident import SERVED
    from .fast import command_name

    if command_name(_procedure_used(argv)) not in SERVED:  # ``procedure used`` writes
        return None
    from ..resident.client import ask

    try:
        return ask(argv)
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130
    except Exception:  # noqa: BLE001 - e.g. the current folder was deleted: run it here
        return None


def _run_typer(argv: list[str]) -> int:
    """Run the Typer app; its own exits and usage errors become exit codes here."""
    import typer

    # typer >= 0.16 vendors click; older ones (hence the ignore) use the real package.
    try:
        from typer._click import exceptions as click_exc  # type: ignore[import-not-found, unused-ignore]
    except ImportError:  # pragma: no cover
        from click import exceptions as click_exc  # type: ignore[no-redef]

    app = _typer_app()
    try:
        result = app(args=argv, standalone_mode=False, prog_name="memvault")
        return result if isinstance(result, int) else 0
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        print("Aborted.", file=sys.stderr)
        return 130
    except click_exc.ClickException as exc:
        exc.show(file=sys.stderr)
        return 2 if isinstance(exc, click_exc.UsageError) else exc.exit_code


def _clean_arg(arg: str) -> str:
    try:
        arg.encode("utf-8")
        return arg
    except UnicodeEncodeError:
        return arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
