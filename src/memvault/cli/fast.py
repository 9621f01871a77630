"""A fast way in for ``memvault add``, ``log`` and ``show``, the commands agents call most.

Building the Typer app costs more than a whole ``add`` should (typer, click, rich and
pydantic imports, ~0.3 s). Plain invocations of these two commands are parsed here with
a small table instead; anything else — ``--help``, an unknown or malformed option, a
missing value — returns None and Typer handles the whole command line as usual, errors
and all. Both ways call the same functions (:mod:`memvault.cli.actions`), and a test
checks that the tables below match the Typer commands' options exactly.
"""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover  (typing costs ~4 ms to import; annotations are strings)
    from typing import Any, Callable

# option -> (parameter, kind); kind: "str", "int", "path", "list" (repeatable), "flag"
GLOBAL_OPTIONS: dict[str, tuple[str, str]] = {
    "--vault": ("vault", "path"),
    "-V": ("vault", "path"),
    "--agent": ("agent", "str"),
    "--team": ("team", "str"),
    "--role": ("role", "str"),
    "--quiet": ("quiet", "flag"),
    "-q": ("quiet", "flag"),
}

ADD_OPTIONS: dict[str, tuple[str, str]] = {
    "--file": ("file", "path"),
    "-f": ("file", "path"),
    "--title": ("title", "str"),
    "-t": ("title", "str"),
    "--id": ("id", "str"),
    "--category": ("category", "str"),
    "-c": ("category", "str"),
    "--tag": ("tag", "list"),
    "--importance": ("importance", "int"),
    "-i": ("importance", "int"),
    "--decay": ("decay", "str"),
    "--confidence": ("confidence", "str"),
    "--scope": ("scope", "str"),
    "-s": ("scope", "str"),
    "--subject": ("subject", "str"),
    "--valid-from": ("valid_from", "str"),
    "--valid-to": ("valid_to", "str"),
    "--trigger": ("trigger", "list"),
    "--step": ("step", "list"),
    "--outcome": ("outcome", "str"),
    "--session": ("session", "str"),
    "--source": ("source", "str"),
    "--related": ("related", "list"),
    "--channel": ("channel", "str"),
    "--author": ("author", "str"),
    "--message": ("message", "str"),
    "-m": ("message", "str"),
    "--allow-secrets": ("allow_secrets", "flag"),
    "--json": ("json_out", "flag"),
}

LOG_OPTIONS: dict[str, tuple[str, str]] = {
    "--session": ("session", "str"),
    "-S": ("session", "str"),
    "--role": ("role", "str"),
    "-r": ("role", "str"),
    "--rating": ("rating", "str"),
    "--file": ("file", "path"),
    "-f": ("file", "path"),
    "--allow-secrets": ("allow_secrets", "flag"),
    "--json": ("json_out", "flag"),
}

SHOW_OPTIONS: dict[str, tuple[str, str]] = {
    "--raw": ("raw", "flag"),
    "--json": ("json_out", "flag"),
}

KINDS = ("episode", "fact", "procedure")


class _Unsure(Exception):
    """This command line is not a plain one: let Typer parse it."""


def _options(args: list[str], table: dict[str, tuple[str, str]], stop_at_positional: bool) -> tuple[dict[str, Any], list[str], int]:
    """Parse ``args`` against ``table``: (values, positionals, index where parsing stopped)."""
    values: dict[str, Any] = {}
    positional: list[str] = []
    i = 0
    only_positional = False
    while i < len(args):
        arg = args[i]
        if only_positional or arg == "-" or not arg.startswith("-"):
            if stop_at_positional:
                return values, positional, i
            positional.append(arg)
            i += 1
            continue
        if arg == "--":
            only_positional = True
            i += 1
            continue
        name, eq, inline = arg.partition("=")
        if name not in table or (eq and not name.startswith("--")):
            raise _Unsure(arg)
        param, kind = table[name]
        if kind == "flag":
            if eq:
                raise _Unsure(arg)
            values[param] = True
            i += 1
            continue
        if eq:
            value = inline
            i += 1
        else:
            if i + 1 >= len(args):
                raise _Unsure(arg)
            value = args[i + 1]
            i += 2
        if kind == "list":
            values.setdefault(param, []).append(value)
            continue
        if param in values:
            raise _Unsure(arg)  # click keeps the last one; rare enough to leave to it
        if kind == "int":
            try:
                values[param] = int(value)
            except ValueError:
                raise _Unsure(arg) from None
        elif kind == "path":
            values[param] = Path(value)
        else:
            values[param] = value
    return values, positional, i


def parse(argv: list[str]) -> Callable[[], None] | None:
    """A ready-to-run call for a plain ``add``/``log``/``show`` command line, else None."""
    if "--help" in argv or "-h" in argv:
        return None
    try:
        glob, _, at = _options(argv, GLOBAL_OPTIONS, stop_at_positional=True)
        if at >= len(argv) or argv[at] not in ("add", "log", "show"):
            return None
        command, rest = argv[at], argv[at + 1 :]
        table = {"add": ADD_OPTIONS, "log": LOG_OPTIONS, "show": SHOW_OPTIONS}[command]
        values, positional, _ = _options(rest, table, stop_at_positional=False)
    except _Unsure:
        return None
    from . import actions
    from ._common import state

    if command == "add":
        if not 1 <= len(positional) <= 2 or positional[0] not in KINDS:
            return None
        kind, text = positional[0], positional[1] if len(positional) == 2 else None

        def run() -> None:
            actions.add(kind, text, **values)

    elif command == "show":
        if len(positional) != 1:
            return None
        memory_id = positional[0]

        def run() -> None:
            actions.show(memory_id, **values)

    else:
        if len(positional) > 1 or "session" not in values:
            return None
        text = positional[0] if positional else None

        def run() -> None:
            actions.log(text, **values)

    def call() -> None:
        state.vault = glob.get("vault")
        state.agent, state.team, state.role = glob.get("agent"), glob.get("team"), glob.get("role")
        state.quiet = bool(glob.get("quiet"))
        run()

    return call
