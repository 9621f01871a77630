"""Commands for agents: the MCP server, transcript ingest, usage insights, and installing
the integrations for agent clients."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from .. import parse_when
from ..errors import MemvaultError
from .common import KEEP_HINT, emit_json, hook_payload, info, open_vault, state
from .options import INTEGRATIONS_INSTALL, INTEGRATIONS_UNINSTALL, typer_parameters
from .root import app
from .write import Scope

if TYPE_CHECKING:
    from .. import IngestReport
    from ..integrations import InstallReport


@app.command()
def mcp(
    warm: bool = typer.Option(
        True,
        "--warm/--no-warm",
        help="Load the embedder and index at start instead of on the first search.",
    ),
) -> None:
    """Serve the vault to an agent over MCP (stdio): remember, recall, fact, procedure, ...

    The identity is fixed for the whole session: set it with the root options or env
    (MEMVAULT_AGENT, MEMVAULT_TEAM, MEMVAULT_ROLE); tool arguments cannot change it.

    Example: memvault --vault ~/memory --agent claude-code --team web mcp
    """
    vault = open_vault()  # fails fast, before the client waits on a handshake
    from ..mcp_server import serve  # the mcp SDK is heavy: imported only here

    info(f"memvault mcp: serving {vault.root} over stdio")
    serve(vault, warm_up=warm)


@app.command()
def ingest(
    file: Path | None = typer.Argument(
        None,
        help="Transcript file: Claude Code session JSONL, or JSONL of {role, content, timestamp}.",
    ),
    session: str | None = typer.Option(
        None,
        "--session",
        "-S",
        help="Session name (default: the file's session id, else its name).",
    ),
    format: str = typer.Option("auto", "--format", help="auto|jsonl|claude."),
    hook: bool = typer.Option(
        False,
        "--hook",
        help="Read a Claude Code hook's JSON from stdin (transcript_path, session_id).",
    ),
    allow_secrets: bool = typer.Option(
        False,
        "--allow-secrets",
        help="Keep credential-looking spans as they are (default: redacted, the turn kept).",
    ),
    scope: Scope | None = typer.Option(
        None,
        "--scope",
        "-s",
        help="A new session's scope: self (only you), team or global (reviewed first); "
        "default: config capture.scope, else defaults.scope.",
    ),
    channel: str | None = typer.Option(
        None, "--channel", help="Where the conversation happened (e.g. claude-code, slack:#ops)."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the ingest report as JSON."),
) -> None:
    """Import a conversation transcript as session turns (one commit; again adds nothing).

    Bad lines are reported as FILE:LINE on stderr and skipped; exit 1 only when nothing
    in the file could be read. With --hook a failure never blocks the client: one line on
    stderr says what was not saved and why (a pause too), and the exit code is 0.

    Examples:

      memvault ingest ~/.claude/projects/-home-me-app/3f2a9c1e.jsonl

      memvault ingest chat.jsonl --session 2026-01-05-deploy --scope self

      memvault ingest --hook --format claude   # in a Claude Code SessionEnd/PreCompact hook
    """
    if not hook:
        report = _ingest(file, session, format, allow_secrets, scope, channel)
        _show_report(report, json_out)
        for problem in report.problems:
            print(f"warning: {problem}", file=sys.stderr)
        if report.problems and not report.turns:
            raise typer.Exit(1)
        return
    what = "the session transcript"
    try:
        file, hook_session = _hook_input(file)
        session = session or hook_session
        what = f"session {session or '?'}" + (f" ({file})" if file else "")
        if file is None:
            raise MemvaultError("the hook's input names no transcript_path", "<stdin>")
        report = _ingest(file, session, format, allow_secrets, scope, channel)
    except MemvaultError as exc:
        _hook_failed(what, str(exc), json_out)
        return
    except Exception as exc:  # a bug: still never block the client, but say what it was
        _hook_failed(what, f"internal error ({type(exc).__name__}: {exc})", json_out)
        return
    _show_report(report, json_out)
    if report.problems and not report.turns:
        _hook_failed(what, f"no turn could be read ({report.problems[0]})")
    elif report.problems:
        first = report.problems[0]
        _hook_failed(f"{len(report.problems)} line(s) of {file}", f"skipped (first: {first})")


def _ingest(
    file: Path | None,
    session: str | None,
    fmt: str,
    allow_secrets: bool,
    scope: Scope | None,
    channel: str | None,
) -> IngestReport:

    if file is None:
        raise MemvaultError(
            "give a transcript FILE (or --hook to read a Claude Code hook's input)", key="FILE"
        )
    vault = open_vault()
    return vault.ingest(
        file,
        session=session,
        fmt=fmt,
        allow_secrets=allow_secrets,
        scope=scope.value if scope else None,
        channel=channel,
    )


def _show_report(report: IngestReport, json_out: bool) -> None:
    if json_out:
        emit_json(report.as_dict())
        return
    print(f"{report.memory_id or '-'}\t{report.path or '-'}")
    info(
        f"session {report.session}: {report.added} turn(s) added,"
        f" {report.skipped} already there"
        + (f", {report.truncated} cut to size" if report.truncated else "")
        + (f"; commit {report.commit[:10]}" if report.commit else "")
    )
    for note in report.notes:  # the redaction note, said with this door's override
        info(f"note: {note}" + (KEEP_HINT if report.redacted else ""))


def _hook_failed(what: str, why: str, json_out: bool = False) -> None:
    """One line on stderr for a hook's log: what was not saved and why; with --json, when
    no report was printed, the same as a JSON object on stdout."""
    line = " ".join(f"memvault: {what} not saved: {why}".split())
    if json_out:
        emit_json({"saved": False, "what": what, "error": " ".join(why.split())})
    print(line, file=sys.stderr)


def _hook_input(file: Path | None) -> tuple[Path | None, str | None]:
    data = hook_payload()
    path = file or (
        Path(data["transcript_path"]) if isinstance(data.get("transcript_path"), str) else None
    )
    sid = data.get("session_id") if isinstance(data.get("session_id"), str) else None
    return path, sid


@app.command()
def insights(
    by_agent: str | None = typer.Option(
        None, "--by-agent", help="Only replies given by this agent."
    ),
    topic: str | None = typer.Option(
        None, "--topic", help="Only interactions mentioning these words."
    ),
    since: str | None = typer.Option(
        None, "--since", help="From this date (2026-01-31, or 7d, 2w)."
    ),
    until: str | None = typer.Option(None, "--until", help="Up to this date."),
    limit: int = typer.Option(
        10, "--limit", "-n", min=0, max=10_000, help="At most N interactions."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Rated agent replies from logged sessions: counts, helpful rate per agent, recent ones.

    Ratings come from 'memvault log --rating' and the MCP tool log_turn.

    Example: memvault insights --by-agent cfo --topic pricing --since 30d
    """

    data = open_vault().insights(
        by_agent, topic, parse_when(since, "since"), parse_when(until, "until"), limit
    )
    if json_out:
        emit_json(data)
        return
    summary = data["summary"]
    counts = ", ".join(f"{k} {v}" for k, v in summary["by_rating"].items())
    rate = summary["helpful_rate"]
    print(
        f"rated interactions: {summary['interactions']} ({counts})"
        + (f", helpful {rate:.0%}" if rate is not None else "")
    )
    for name, row in summary["by_agent"].items():
        print(f"  {name}: {row['interactions']} rated, helpful {row['helpful_rate']:.0%}")
    for item in data["interactions"]:
        print(
            f"{(item['when'] or '')[:16]}  {item['rating']:<11}  {item['agent'] or '-'}"
            f"  {item['query'] or '-'}"
        )
        if not state.quiet:
            print(f"    -> {item['response']}")


integrations_app = typer.Typer(
    help=(
        "Connect agent clients (Claude Code, Cursor, Codex) to the vault: MCP server, hooks,"
        " permissions, the /memvault command; or take it out again.\n\n"
        "Example: memvault --vault ~/memory integrations install claude-code --dry-run"
    ),
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(integrations_app, name="integrations")


@integrations_app.command("install")
@typer_parameters(INTEGRATIONS_INSTALL)
def integrations_install(
    *,
    client: str,
    project: bool,
    user: bool,
    folder: Path | None,
    command: str | None,
    capture_scope: str | None,
    dry_run: bool,
    json_out: bool,
) -> None:
    """Write (or merge into existing files) what a client needs to use this vault.

    claude-code: the MCP server in .mcp.json (--user: ~/.claude.json), hooks, permissions
    and MEMVAULT_VAULT/MEMVAULT_AGENT in .claude/settings.json (--user: ~/.claude/), and the
    /memvault slash command in .claude/commands/memvault.md. cursor: the MCP server in
    .cursor/mcp.json (--user: ~/.cursor/mcp.json). codex: [mcp_servers.memvault] in
    .codex/config.toml and a section of AGENTS.md (--user: ~/.codex/). Running it again
    changes nothing; your own servers, hooks, rules and comments are kept; a file of yours
    that memvault would replace is kept as NAME.bak; --dry-run prints the diff and writes
    nothing. The files name this memvault by its absolute path (a client started from a
    desktop launcher has no venv on its PATH); --command chooses another.
    Claude Code's hooks save each session with scope self (only this agent reads it)
    unless --capture-scope says otherwise, and channel claude-code ('memvault pause
    --channel claude-code' stops them).

    Examples:

      memvault --vault ~/memory integrations install claude-code --dry-run

      memvault --vault ~/memory --team web integrations install claude-code --capture-scope team

      memvault --vault ~/memory --agent cursor integrations install cursor --user

      memvault --vault ~/memory integrations install codex --user
    """
    from ..integrations import install

    report = install(
        client,
        **_integration_target(project, user, folder),
        dry_run=dry_run,
        command=command,
        capture_scope=capture_scope,
    )
    _show_install(report, dry_run, json_out)


@integrations_app.command("uninstall")
@typer_parameters(INTEGRATIONS_UNINSTALL)
def integrations_uninstall(
    *,
    client: str,
    project: bool,
    user: bool,
    folder: Path | None,
    dry_run: bool,
    json_out: bool,
) -> None:
    """Take out of a client's files exactly what 'integrations install' put in.

    memvault's MCP server entry, hooks, permission rules, slash command and AGENTS.md
    section go; env values go when they are the ones install wrote (give the same --vault,
    --agent, --team and --role as the install); a file left empty goes; a file of yours that
    install kept as NAME.bak comes back. Your own entries stay as they are.

    Examples:

      memvault --vault ~/memory integrations uninstall claude-code --dry-run

      memvault --vault ~/memory integrations uninstall codex --user
    """
    from ..integrations import uninstall

    report = uninstall(client, **_integration_target(project, user, folder), dry_run=dry_run)
    _show_install(report, dry_run, json_out)


def _integration_target(project: bool, user: bool, folder: Path | None) -> dict[str, Any]:
    """What install and uninstall both take: the scope, the vault, this identity and the
    project and home folders."""
    if project and user:
        raise MemvaultError("choose one of --project and --user", key="scope")
    vault, home, where = _integration_places(folder)
    return {
        "scope": "user" if user else "project",
        "vault": vault,
        "agent": state.agent,
        "team": state.team,
        "role": state.role,
        "project": where,
        "home": home,
    }


def _integration_places(folder: Path | None) -> tuple[str, Path, Path]:
    """The vault as the files name it, the home folder, and the project folder."""
    from ..integrations.install import portable

    vault = open_vault()
    home = Path.home()
    return portable(vault.root, home), home, (folder or Path.cwd()).expanduser().resolve()


def _show_install(report: InstallReport, dry_run: bool, json_out: bool) -> None:
    if json_out:
        emit_json(report.as_dict())
    else:
        verbs = {"create": "created", "update": "updated", "delete": "deleted"}
        for change in report.files:
            if dry_run:
                sys.stdout.write(change.diff())
            verb = verbs.get(change.action, change.action)
            if dry_run and change.action != "unchanged":
                verb = f"would be {verb}"
            print(f"{verb}\t{change.path}", file=sys.stderr if dry_run else sys.stdout)
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
