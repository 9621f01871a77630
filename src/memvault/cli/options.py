"""The command lines of the hot commands (``add``, ``log``, ``show``, the searches and
``context``) and the global options, as data.

Both ways into these commands are built from the tables here: the Typer commands get their
parameters from :func:`typer_parameters`, and the fast parser (:mod:`memvault.cli.fast`)
reads the tables directly. The fast path imports this module, so it imports nothing
beyond the standard library at import time; typer is imported inside
:func:`typer_parameters` only.
"""

from __future__ import annotations

from .. import KIND_TYPE, SCOPES
from ..values import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import inspect
    from collections.abc import Callable
    from typing import Any, Literal

    # str, int, float, path: one value; list: repeatable; flag: takes no value
    ValueKind = Literal["str", "int", "float", "path", "list", "flag"]
    Handler = Callable[..., None]


class Argument:
    """A positional argument: its parameter name, help, and whether it must be given."""

    __slots__ = ("name", "help", "required", "metavar", "choices")

    def __init__(
        self,
        name: str,
        help: str,
        *,
        required: bool = False,
        metavar: str | None = None,
        choices: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.help = help
        self.required = required
        self.metavar = metavar
        self.choices = choices  # when set, the value must be one of these


class Option:
    """An option: its parameter name, its flags (as shown in help), what value it takes."""

    __slots__ = (
        "name",
        "flags",
        "kind",
        "help",
        "default",
        "required",
        "off_flags",
        "bounds",
        "choices",
    )

    def __init__(
        self,
        name: str,
        flags: tuple[str, ...],
        kind: ValueKind,
        help: str,
        *,
        default: str | int | bool | None = None,
        required: bool = False,
        off_flags: tuple[str, ...] = (),
        bounds: tuple[int, int] | None = None,
        choices: tuple[str, ...] = (),
    ) -> None:
        self.name = name
        self.flags = flags
        self.kind = kind
        self.help = help
        # For "str" and "int" options, and True for a flag that is on unless turned off;
        # the others default to None (flags: False).
        self.default = default
        self.required = required
        self.off_flags = off_flags  # a flag's "off" spellings (--no-transcripts)
        self.bounds = bounds  # an "int" option's smallest and largest value
        self.choices = choices  # a "str" option's valid values (anything else: exit 2)

    def default_value(self) -> object:
        """The value the command gets when the option is not given."""
        return bool(self.default) if self.kind == "flag" else self.default


class Command:
    """One command's positional arguments and options, in the order help lists them."""

    __slots__ = ("name", "arguments", "options")

    def __init__(
        self, name: str, arguments: tuple[Argument, ...], options: tuple[Option, ...]
    ) -> None:
        self.name = name
        self.arguments = arguments
        self.options = options

    def lookup(self) -> dict[str, Option]:
        """Every flag (``--file``, ``-f``, ``--no-transcripts``) -> its option."""
        return {
            flag: option for option in self.options for flag in (*option.flags, *option.off_flags)
        }


KINDS = tuple(KIND_TYPE)

_ALLOW_SECRETS = "Store text that looks like a credential."
_FILE = "Read the text from this file."

GLOBAL = Command(
    "memvault",
    (),
    (
        Option(
            "vault",
            ("--vault", "-V"),
            "path",
            "Vault folder (default: $MEMVAULT_VAULT, else walk up from here).",
        ),
        Option("agent", ("--agent",), "str", "Act as this agent ($MEMVAULT_AGENT)."),
        Option("team", ("--team",), "str", "The agent's team ($MEMVAULT_TEAM)."),
        Option(
            "role",
            ("--role",),
            "str",
            "Role, e.g. 'librarian' to write scope global ($MEMVAULT_ROLE).",
        ),
        Option("quiet", ("--quiet", "-q"), "flag", "Less output on stderr."),
    ),
)

ADD = Command(
    "add",
    (
        Argument("kind", "episode, fact or procedure.", required=True, choices=KINDS),
        Argument("text", "The memory's text ('-' or omitted: read stdin)."),
    ),
    (
        Option("file", ("--file", "-f"), "path", _FILE),
        Option("title", ("--title", "-t"), "str", "Short title (default: first words)."),
        Option("id", ("--id",), "str", "Explicit id (default: a slug of the title)."),
        Option(
            "category",
            ("--category", "-c"),
            "str",
            "facts|decisions|definitions|relationships|constraints, "
            "workflows|templates|patterns|heuristics, or any episode category.",
        ),
        Option("tag", ("--tag",), "list", "Tag (repeat, or comma-separated)."),
        Option("importance", ("--importance", "-i"), "int", "1-5."),
        Option("decay", ("--decay",), "str", "fast|normal|slow|never."),
        Option("confidence", ("--confidence",), "str", "high|medium|low."),
        Option("scope", ("--scope", "-s"), "str", "self|team|global.", choices=SCOPES),
        Option(
            "subject",
            ("--subject",),
            "str",
            "Key shared by facts about the same thing (e.g. user.city): newer wins.",
        ),
        Option("valid_from", ("--valid-from",), "str", "When the fact became true."),
        Option("valid_to", ("--valid-to",), "str", "When it stopped being true."),
        Option("trigger", ("--trigger",), "list", "Procedure trigger keyword(s)."),
        Option("step", ("--step",), "list", "Procedure step (repeat, in order)."),
        Option("outcome", ("--outcome",), "str", "Episode outcome."),
        Option("session", ("--session",), "str", "Session the episode belongs to."),
        Option("source", ("--source",), "str", "Where it came from (url, file, commit)."),
        Option("related", ("--related",), "list", "Related memory id(s)."),
        Option("channel", ("--channel",), "str", "Channel (e.g. slack:#ops)."),
        Option("author", ("--author",), "str", "Author (human name or agent:<name>)."),
        Option("message", ("--message", "-m"), "str", "Why: goes into the commit message."),
        Option("allow_secrets", ("--allow-secrets",), "flag", _ALLOW_SECRETS),
        Option("json_out", ("--json",), "flag", "Print the written memory as JSON."),
    ),
)

LOG = Command(
    "log",
    (Argument("text", "The turn's text ('-' or omitted: read stdin)."),),
    (
        Option("session", ("--session", "-S"), "str", "Session name or id.", required=True),
        Option("role", ("--role", "-r"), "str", "user|assistant|system|tool.", default="user"),
        Option("name", ("--name",), "str", "Who spoke: a person's or agent's name (searchable)."),
        Option("rating", ("--rating",), "str", "helpful|neutral|not_helpful (agent feedback)."),
        Option(
            "scope",
            ("--scope", "-s"),
            "str",
            "A new session's scope: self (only you), team or global (reviewed first); "
            "default: config capture.scope, else defaults.scope.",
            choices=SCOPES,
        ),
        Option("channel", ("--channel",), "str", "Where it was said (e.g. slack:#ops)."),
        Option("file", ("--file", "-f"), "path", _FILE),
        Option("allow_secrets", ("--allow-secrets",), "flag", _ALLOW_SECRETS),
        Option("json_out", ("--json",), "flag", "Print the transcript memory as JSON."),
    ),
)

SHOW = Command(
    "show",
    (
        Argument(
            "memory_id",
            "The memory's id, or a turn's address (<transcript id>#<turn id>).",
            required=True,
            metavar="ID",
        ),
    ),
    (
        Option("raw", ("--raw",), "flag", "Print the file exactly as stored."),
        Option(
            "around",
            ("--around",),
            "int",
            "With a turn address: also show N turns before and after it (default 2).",
        ),
        Option("json_out", ("--json",), "flag", "Print JSON."),
    ),
)

UI = Command(
    "ui",
    (),
    (
        Option("port", ("--port", "-p"), "int", "Port (default 8765; 0: any free port)."),
        Option(
            "host",
            ("--host",),
            "str",
            "Address to bind (default 127.0.0.1: this machine only).",
            default="127.0.0.1",
        ),
        Option("open_browser", ("--open",), "flag", "Open the page in the default browser."),
        Option("json_out", ("--json",), "flag", "Print the address as JSON (url, port, pid)."),
    ),
)

INTEGRATIONS_INSTALL = Command(
    "install",
    (
        Argument(
            "client",
            "The agent client: claude-code, cursor or codex.",
            required=True,
            choices=("claude-code", "cursor", "codex"),
        ),
    ),
    (
        Option("project", ("--project",), "flag", "Into the project's files (the default)."),
        Option("user", ("--user",), "flag", "Into your user files, for every project."),
        Option("folder", ("--dir",), "path", "The project folder (default: here)."),
        Option(
            "command",
            ("--command",),
            "str",
            "What the client runs (default: this memvault's absolute path, which works "
            "where the client's PATH lacks it; 'memvault' names it by PATH).",
        ),
        Option(
            "capture_scope",
            ("--capture-scope",),
            "str",
            "claude-code: the scope its hooks save sessions with (default self: only this "
            "agent reads them; team; global: reviewed first).",
            choices=SCOPES,
        ),
        Option("dry_run", ("--dry-run",), "flag", "Show the diff of every file; write nothing."),
        Option("json_out", ("--json",), "flag", "Print the report (files, diffs, notes) as JSON."),
    ),
)

INTEGRATIONS_UNINSTALL = Command(
    "uninstall",
    INTEGRATIONS_INSTALL.arguments,
    tuple(
        o
        for o in INTEGRATIONS_INSTALL.options
        if o.name in ("project", "user", "folder", "dry_run", "json_out")
    ),
)

# Options of the search commands: each command lists the ones it takes.
_QUERY = Argument("query", "What to remember: a question or a few words.", required=True)
_LIMIT = Option(
    "limit",
    ("--limit", "-n"),
    "int",
    "At most N results (default: search.limit; max: limits.max_limit).",
)
_MIN_SCORE = Option(
    "min_score",
    ("--min-score",),
    "float",
    "Relevance floor, 0-1: hits below it are not returned, and an answer with none says "
    "'nothing relevant' (default: search.min_score, else the embedder's measured floor; "
    "0 turns it off).",
)
_KIND = Option(
    "kind",
    ("--kind", "-k"),
    "str",
    "Only this kind: episodic|semantic|procedural (episode|fact|procedure).",
)
_TYPE = Option("type", ("--type",), "str", "Only this memory type (same as --kind).")
_CATEGORY = Option(
    "category",
    ("--category", "-c"),
    "str",
    "Only this category (facts, decisions, workflows, ...).",
)
_TAG = Option("tag", ("--tag",), "list", "Has all these tags (repeat, or comma-separated).")
_SCOPE = Option(
    "scope",
    ("--scope",),
    "str",
    "Only self|team|global memories (among those you can see).",
    choices=SCOPES,
)
_BY_AGENT = Option("by_agent", ("--by-agent",), "str", "Only memories written by this agent.")
_SINCE = Option("since", ("--since",), "str", "Created on/after (2026-01-31, or 7d, 2w).")
_UNTIL = Option("until", ("--until",), "str", "Created on/before.")
_AS_OF = Option(
    "as_of",
    ("--as-of",),
    "str",
    "What was true then: facts valid at that date (superseded ones included).",
)
_ARCHIVE = Option(
    "include_archive", ("--include-archive",), "flag", "Also search archived (decayed) memories."
)
_SUPERSEDED = Option(
    "include_superseded", ("--include-superseded",), "flag", "Also return superseded facts."
)
_INBOX = Option(
    "include_inbox", ("--include-inbox",), "flag", "Also return proposed memories awaiting review."
)
_EXPLAIN = Option(
    "explain",
    ("--explain",),
    "flag",
    "Show the score breakdown: keyword rank, vector rank, fusion, boosts.",
)
_ORDER = Option("order", ("--order",), "str", "relevance (default) or time (newest first).")
_SPEAKER = Option(
    "speaker",
    ("--speaker",),
    "str",
    "Only what this speaker said (a name in a transcript, any case).",
)
_TURN_ROLE = Option(
    "turn_role",
    ("--role",),
    "str",
    "Only conversation turns of this role: user|assistant|system|tool "
    "(the global --role, before the command, is the reader's role).",
)
_JSON = Option("json_out", ("--json",), "flag", "Print JSON.")

_FILTERS = (_CATEGORY, _TAG, _SCOPE, _BY_AGENT, _SINCE, _UNTIL, _AS_OF)
_INCLUDES = (_ARCHIVE, _SUPERSEDED, _INBOX, _EXPLAIN, _ORDER, _SPEAKER, _TURN_ROLE, _JSON)

RECALL = Command("recall", (_QUERY,), (_KIND, _LIMIT, _MIN_SCORE, _TYPE, *_FILTERS, *_INCLUDES))
SEARCH = Command(
    "search",
    (Argument("query", "Words or a question.", required=True),),
    (_KIND, _LIMIT, _MIN_SCORE, _TYPE, *_FILTERS, *_INCLUDES),
)
FACT = Command(
    "fact",
    (Argument("query", "What to look up.", required=True),),
    (_LIMIT, _MIN_SCORE, *_FILTERS, _ARCHIVE, _SUPERSEDED, _INBOX, _EXPLAIN, _JSON),
)
PROCEDURE = Command(
    "procedure",
    (Argument("query", "The task you want to do.", required=True),),
    (
        _LIMIT,
        _MIN_SCORE,
        _CATEGORY,
        _TAG,
        _SCOPE,
        _BY_AGENT,
        _ARCHIVE,
        _INBOX,
        _EXPLAIN,
        _JSON,
    ),
)
CONTEXT = Command(
    "context",
    (Argument("query", "The task at hand, in a few words.", metavar="QUERY"),),
    (
        Option(
            "hook",
            ("--hook",),
            "flag",
            "Read a Claude Code hook's JSON from stdin (UserPromptSubmit: the prompt; "
            "SessionStart: the project) and print its hookSpecificOutput; nothing when "
            "nothing is relevant. Never fails the hook.",
        ),
        Option(
            "budget",
            ("--budget", "-b"),
            "int",
            "Token budget for the block (~4 characters a token).",
            default=1500,
        ),
        _MIN_SCORE,
        _SCOPE,
        _TAG,
        _SINCE,
        _UNTIL,
        _AS_OF,
        _ARCHIVE,
        _JSON,
    ),
)

VALIDATE = Command(
    "validate",
    (
        Argument(
            "statement", "The claim to check, as one sentence.", required=True, metavar="STATEMENT"
        ),
    ),
    (
        _AS_OF,
        _SCOPE,
        _TAG,
        _EXPLAIN,
        Option(
            "judge",
            ("--judge",),
            "flag",
            "Ask validate.judge_command, when one is set, for the verdict (default); "
            "--no-judge: the built-in rules only.",
            default=True,
            off_flags=("--no-judge",),
        ),
        _JSON,
    ),
)

EPISODES = Command(
    "episodes",
    (),
    (
        Option(
            "last",
            ("--last", "-n"),
            "int",
            "How many recent episodes.",
            default=10,
            bounds=(1, 100_000),
        ),
        Option(
            "include_transcripts",
            ("--transcripts",),
            "flag",
            "Include session transcripts.",
            default=True,
            off_flags=("--no-transcripts",),
        ),
        Option("json_out", ("--json",), "flag", "Print JSON (a list)."),
    ),
)

# The commands the fast parser may run without Typer.
FAST_COMMANDS = {
    command.name: command
    for command in (ADD, LOG, SHOW, RECALL, SEARCH, FACT, PROCEDURE, CONTEXT, VALIDATE, EPISODES)
}


def typer_parameters(command: Command) -> Callable[[Handler], Handler]:
    """A decorator that gives a Typer command function the parameters of ``command``.

    Typer reads a function's parameters with :func:`inspect.signature`, which honours
    ``__signature__``: the decorated function keeps its docstring (the command's help) and
    is called with every argument and option as a keyword. A choice argument arrives as
    its plain string value, as it does from the fast parser.
    """
    import enum
    import functools
    import inspect

    parameters = [_typer_argument(arg) for arg in command.arguments]
    parameters += [_typer_option(option) for option in command.options]
    signature = inspect.Signature(parameters, return_annotation=None)

    def decorate(func: Handler) -> Handler:
        @functools.wraps(func)
        def run(**values: Any) -> None:
            func(**{k: v.value if isinstance(v, enum.Enum) else v for k, v in values.items()})

        # inspect.signature reads this attribute; typeshed does not declare it on functions.
        run.__signature__ = signature  # type: ignore[attr-defined]
        # typer resolves annotations with typing.get_type_hints, which reads __annotations__.
        run.__annotations__ = {p.name: p.annotation for p in parameters}
        return run

    return decorate


def _typer_argument(arg: Argument) -> inspect.Parameter:
    import inspect

    import typer

    annotation: object = str if arg.required else str | None
    if arg.choices:  # an enum, so that help and errors list the choices
        annotation = _choice_type(arg.name.title(), arg.choices)
    default = typer.Argument(... if arg.required else None, help=arg.help, metavar=arg.metavar)
    return inspect.Parameter(
        arg.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def _choice_type(name: str, choices: tuple[str, ...]) -> object:
    import enum

    return enum.Enum(name, [(c, c) for c in choices], type=str)


def _typer_option(option: Option) -> inspect.Parameter:
    import inspect
    from pathlib import Path

    import typer

    plain: dict[str, object] = {
        "str": str,
        "int": int,
        "float": float,
        "path": Path,
        "list": list[str],
    }
    optional: dict[str, object] = {
        "str": str | None,
        "int": int | None,
        "float": float | None,
        "path": Path | None,
        "list": list[str] | None,
    }
    if option.kind == "flag":
        annotation: object = bool
    elif option.choices:  # an enum, so that help and errors list the choices
        choice = _choice_type(option.name.title(), option.choices)
        needed = option.required or option.default is not None
        annotation = choice if needed else choice | None  # type: ignore[operator]
    elif option.required or option.default is not None:
        annotation = plain[option.kind]
    else:
        annotation = optional[option.kind]
    default = ... if option.required else option.default_value()
    flags = option.flags
    if option.off_flags:  # typer spells an on/off pair as one declaration
        flags = ("/".join((*option.flags, *option.off_flags)),)
    low, high = option.bounds if option.bounds is not None else (None, None)
    return inspect.Parameter(
        option.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=typer.Option(default, *flags, help=option.help, min=low, max=high),
        annotation=annotation,
    )
