"""A fast way in for the commands agents call most: ``add``, ``log``, ``show``, the searches
(``recall``, ``fact``, ``procedure``, ``search``) and ``context``.

Building the Typer app imports typer, click, rich and pydantic, which costs more than a
whole ``add``. Plain invocations of these commands are parsed here from the option tables
in :mod:`memvault.cli.options` instead; anything else (``--help``, an unknown or malformed
option, a missing value) returns None and Typer handles the whole command line as usual,
errors and all. Both ways read the same tables and call the same functions
(:mod:`memvault.cli.actions`, :mod:`memvault.cli.search_actions`), so they behave the same.
"""

from __future__ import annotations

from ..values import TYPE_CHECKING
from .options import FAST_COMMANDS, GLOBAL

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

    from .options import Command, Option


class _Unsure(Exception):
    """This command line is not a plain one: let Typer parse it."""


def _value(option: Option, value: str) -> object:
    if option.kind == "int":
        try:
            number = int(value)
        except ValueError:
            raise _Unsure(value) from None
        if option.bounds is not None and not option.bounds[0] <= number <= option.bounds[1]:
            raise _Unsure(value)  # Typer says what the range is
        return number
    if option.kind == "float":
        try:
            return float(value)
        except ValueError:
            raise _Unsure(value) from None  # Typer says it is not a number
    if option.choices and value not in option.choices:
        raise _Unsure(value)  # Typer says which values are valid
    return value  # (a path: made one by _options, when asked)


def _options(
    args: list[str], table: dict[str, Option], stop_at_positional: bool, paths: bool = True
) -> tuple[dict[str, Any], list[str], int]:
    """Parse ``args`` against ``table``: (values, positionals, index where parsing stopped).
    ``paths``: a path option's value as a :class:`~pathlib.Path` (else its string: the
    resident process's client asks without importing pathlib)."""
    values, positional, at = _strings(args, table, stop_at_positional)
    if paths and any(o.kind == "path" and o.name in values for o in table.values()):
        from pathlib import Path

        for option in table.values():
            if option.kind == "path" and isinstance(values.get(option.name), str):
                values[option.name] = Path(values[option.name])
    return values, positional, at


def _strings(
    args: list[str], table: dict[str, Option], stop_at_positional: bool
) -> tuple[dict[str, Any], list[str], int]:
    """:func:`_options`, path values left as strings."""
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
        option = table.get(name)
        if option is None or (eq and not name.startswith("--")):
            raise _Unsure(arg)
        if option.kind == "flag":
            if eq:
                raise _Unsure(arg)
            values[option.name] = name not in option.off_flags
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
        if option.kind == "list":
            values.setdefault(option.name, []).append(value)
            continue
        if option.name in values:
            raise _Unsure(arg)  # click keeps the last one; rare enough to leave to it
        values[option.name] = _value(option, value)
    return values, positional, i


def _every_parameter(
    command: Command, positional: list[str], given: dict[str, Any]
) -> dict[str, Any] | None:
    """Every parameter of ``command`` as the Typer command would get it, or None when
    the arguments are not ones it takes (Typer then says what is wrong)."""
    arguments = command.arguments
    if not sum(a.required for a in arguments) <= len(positional) <= len(arguments):
        return None
    values: dict[str, Any] = {a.name: None for a in arguments}
    for arg, value in zip(arguments, positional, strict=False):
        if arg.choices and value not in arg.choices:
            return None
        values[arg.name] = value
    for option in command.options:
        if option.name in given:
            values[option.name] = given[option.name]
        elif option.required:
            return None
        else:
            values[option.name] = option.default_value()
    return values


def global_options(argv: list[str], paths: bool = True) -> dict[str, Any] | None:
    """The global options of a command line (``vault``, ``agent``, ...), or None when they
    are not plain ones. ``paths``: see :func:`_options`."""
    try:
        values, _, _ = _options(argv, GLOBAL.lookup(), stop_at_positional=True, paths=paths)
    except _Unsure:
        return None
    return values


def arguments(argv: list[str], paths: bool = True) -> tuple[dict[str, Any], list[str]] | None:
    """The options and positional arguments after the command's name (``add fact TEXT
    --file F``: ``{"file": Path("F")}``, ``["fact", "TEXT"]``), or None when the command line
    is not a plain one of :data:`FAST_COMMANDS`. ``paths``: see :func:`_options`."""
    split = _split(argv, paths)
    return None if split is None else (split[2], split[3])


def _split(
    argv: list[str], paths: bool = True
) -> tuple[dict[str, Any], Any, dict[str, Any], list[str]] | None:
    """The global options, the fast command, its options and its positional arguments; None
    when the command line is not a plain one of :data:`FAST_COMMANDS`."""
    try:
        glob, _, at = _options(argv, GLOBAL.lookup(), stop_at_positional=True, paths=paths)
        command = FAST_COMMANDS.get(argv[at]) if at < len(argv) else None
        if command is None:
            return None
        given, positional, _ = _options(
            argv[at + 1 :], command.lookup(), stop_at_positional=False, paths=paths
        )
    except _Unsure:
        return None
    return glob, command, given, positional


def command_name(argv: list[str]) -> str | None:
    """The command a command line runs (the word after the global options), or None."""
    try:
        _, _, at = _options(argv, GLOBAL.lookup(), stop_at_positional=True, paths=False)
    except _Unsure:
        return None
    return argv[at] if at < len(argv) else None


def parse(argv: list[str]) -> Callable[[], None] | None:
    """A ready-to-run call for a plain command line of one of :data:`FAST_COMMANDS`, else None."""
    if "--help" in argv or "-h" in argv:
        return None
    split = _split(argv)
    if split is None:
        return None
    glob, command, given, positional = split
    values = _every_parameter(command, positional, given)
    if values is None:
        return None
    from . import actions, search_actions
    from .common import state

    handlers: dict[str, Callable[..., None]] = {
        "add": actions.add,
        "log": actions.log,
        "show": actions.show,
        "recall": search_actions.recall,
        "fact": search_actions.fact,
        "procedure": search_actions.procedure,
        "search": search_actions.search,
        "context": search_actions.context,
        "validate": search_actions.validate,
        "episodes": actions.episodes,
    }
    handler = handlers[command.name]

    def call() -> None:
        state.vault = glob.get("vault")
        state.agent, state.team, state.role = glob.get("agent"), glob.get("team"), glob.get("role")
        state.quiet = bool(glob.get("quiet"))
        handler(**values)

    return call
