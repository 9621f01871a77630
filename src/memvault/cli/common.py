"""Typer-free helpers shared by every command (and by the fast path of ``add``/``log``).

Nothing here imports typer or click, and rich only inside :func:`console`: ``memvault add``
can run without them.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

from ..errors import MemvaultError
from ..values import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .. import Vault


class State:
    """Global options (``--vault``, ``--agent``, ...), set once per invocation."""

    def __init__(self) -> None:
        self.vault: Path | None = None
        self.agent: str | None = None
        self.team: str | None = None
        self.role: str | None = None
        self.quiet = False
        # The command is done and left nothing to tear down that matters (``watch`` after
        # Ctrl-C): the process ends without the interpreter's teardown, see ``main``.
        self.exit_now = False
        # Run by the resident process (memvault.resident), which stays: no work begun for a
        # new process's first search.
        self.resident = False


state = State()


def open_vault() -> Vault:
    from .. import Vault, debug

    if debug.current() is None:
        return Vault.open(state.vault, agent=state.agent, team=state.team, role=state.role)
    # A read command started a trace (cli/trace.py): keep it if debug mode is on here.
    with debug.stage("open vault"):
        vault = Vault.open(state.vault, agent=state.agent, team=state.team, role=state.role)
    if not debug.enabled(vault.root):
        debug.stop()
        return vault
    ident = vault.identity
    debug.note("vault", str(vault.root))
    debug.note("identity", {"agent": ident.agent, "team": ident.team, "role": ident.role})
    return vault


def console(stderr: bool = False) -> Any:
    """A rich console for output meant for people (rich is imported here, when first used)."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else 160  # pipes and logs: don't squeeze tables to 80 columns
    return Console(stderr=stderr, highlight=False, soft_wrap=False, width=width)


def print_table(rows: list[dict[str, Any]], columns: list[str]) -> None:
    """Rows as a borderless table for people (titles wrap, other cells are cut)."""
    from rich.table import Table

    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for col in columns:
        table.add_column(
            col, overflow="fold" if col == "title" else "ellipsis", no_wrap=col != "title"
        )
    for row in rows:
        table.add_row(*[str(row.get(c, "") or "") for c in columns])
    console().print(table)


def hook_payload() -> dict[str, Any]:
    """An agent client's hook JSON from stdin (an empty object when there is none)."""
    # bytes, not text: a strict locale's decoder would crash on non-UTF-8 input
    stream = getattr(sys.stdin, "buffer", None)
    try:
        if sys.stdin.isatty():
            raw = ""
        elif stream is not None:
            raw = stream.read().decode("utf-8")
        else:
            raw = sys.stdin.read()
    except UnicodeDecodeError:
        raise MemvaultError("hook input is not UTF-8 text", "<stdin>") from None
    try:
        data = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        raise MemvaultError(f"hook input is not JSON: {exc.msg}", "<stdin>") from None
    if not isinstance(data, dict):
        raise MemvaultError("hook input: expected a JSON object", "<stdin>")
    return data


def emit_json(data: Any) -> None:
    # Indented for people at a terminal; compact for programs (json's C encoder is faster).
    indent = 2 if sys.stdout.isatty() else None
    sys.stdout.write(
        json.dumps(data, ensure_ascii=False, indent=indent, default=_json_default) + "\n"
    )


def _json_default(value: Any) -> Any:
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "as_dict"):
        return value.as_dict()
    return str(value)


# What the CLI adds to a redaction note: how to keep the text as it is, said as a flag.
KEEP_HINT = " (--allow-secrets keeps the text as it is)"


def info(message: str) -> None:
    if not state.quiet:
        print(message, file=sys.stderr)


def read_text_arg(text: str | None, file: Path | None) -> str:
    """TEXT argument, else --file, else stdin (when piped)."""
    if text is not None and text != "-":
        return text
    if file is not None:
        try:
            return file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise MemvaultError(f"cannot read: {exc}", str(file)) from None
    if text == "-" or not sys.stdin.isatty():
        data = sys.stdin.buffer.read()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise MemvaultError("standard input is not UTF-8 text", key="TEXT") from None
    raise MemvaultError("give the text as an argument, with --file, or on stdin", key="TEXT")


def split_list(values: list[str] | None) -> list[str]:
    """Repeated options and comma-separated values both work: --tag a --tag b,c."""
    out: list[str] = []
    for value in values or []:
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return out
