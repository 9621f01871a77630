"""The ``memvault`` command line: a thin adapter over :class:`memvault.Vault`.

Every command parses options, opens the vault, calls one core function and renders
the result. Errors are translated here, at one boundary: exit 0 ok, 1 expected error
(one line on stderr), 2 usage, 3 bug (with a crash log path), 130 interrupted.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

import typer

from ..errors import MemvaultError
from ._app import app

# Command modules register themselves on ``app`` when imported.
from . import admin as _admin  # noqa: E402,F401
from . import agents as _agents  # noqa: F401
from . import hooks as _hooks  # noqa: F401
from . import maintain as _maintain  # noqa: E402,F401
from . import read as _read  # noqa: E402,F401
from . import write as _write  # noqa: E402,F401

import importlib.util as _ilu

if _ilu.find_spec("memvault.cli.search") is not None:  # search commands arrive with the index
    from . import search as _search  # noqa: F401

__all__ = ["app", "main"]


def _crash_log(exc: BaseException) -> Path:
    base = Path(os.environ.get("MEMVAULT_CACHE_DIR") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memvault")
    base.mkdir(parents=True, exist_ok=True)
    import datetime as dt

    path = base / f"crash-{dt.datetime.now():%Y%m%d-%H%M%S}-{os.getpid()}.log"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f"memvault crash\nargv: {sys.argv!r}\n\n")
        traceback.print_exception(exc, file=handle)
    return path


def main(argv: list[str] | None = None) -> int:
    """Console entry point; returns (and exits with) the process exit code."""
    try:  # typer >= 0.16 vendors click; older ones use the real package
        from typer._click import exceptions as click_exc  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover
        from click import exceptions as click_exc  # type: ignore[no-redef]

    if argv is None:
        # Undecodable bytes in arguments arrive as lone surrogates; make them U+FFFD once, here.
        argv = [_clean_arg(a) for a in sys.argv[1:]]
        exit_after = True
    else:
        exit_after = False
    code = 0
    try:
        result = app(args=argv, standalone_mode=False, prog_name="memvault")
        code = result if isinstance(result, int) else 0
    except MemvaultError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        code = exc.exit_code
    except typer.Exit as exc:
        code = exc.exit_code
    except typer.Abort:
        print("Aborted.", file=sys.stderr)
        code = 130
    except click_exc.ClickException as exc:
        exc.show(file=sys.stderr)
        code = 2 if isinstance(exc, click_exc.UsageError) else exc.exit_code
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        code = 130
    except BrokenPipeError:
        code = 0
    except Exception as exc:  # a bug: keep the traceback out of the user's face
        path = _crash_log(exc)
        print(f"Error: internal error ({type(exc).__name__}: {exc}); details in {path}", file=sys.stderr)
        code = 3
    if exit_after:
        sys.stdout.flush()
        raise SystemExit(code)
    return code


def _clean_arg(arg: str) -> str:
    try:
        arg.encode("utf-8")
        return arg
    except UnicodeEncodeError:
        return arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")

