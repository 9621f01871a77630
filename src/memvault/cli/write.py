"""Commands that write memories: init, add, log, edit, forget, import, pause/resume,
rescope."""

from __future__ import annotations

import enum
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import typer

from ..errors import MemvaultError, ValidationError
from . import actions, options
from .common import emit_json, info, open_vault, split_list, state
from .options import typer_parameters
from .root import app


@app.command()
def init(
    path: Path = typer.Argument(Path("."), help="Folder for the new vault (created if missing)."),
    examples: bool = typer.Option(
        False, "--examples", help="Add a few example memories of each kind."
    ),
    language: list[str] | None = typer.Option(
        None,
        "--language",
        "--languages",
        help="Languages the memories are written in: en, pt, ru, uk (repeat, or "
        "comma-separated). Anything beyond en picks the multilingual embedder.",
    ),
) -> None:
    """Create a vault: git repo, folders, config and README.

    Example: memvault init ~/memory --examples

    Example: memvault init ~/memory --language uk,ru
    """
    from .. import Vault

    languages = split_list(language)
    vault = Vault.init(path, examples=examples, languages=languages or None)
    info(f"Created a memvault vault in {vault.root}")
    info(f"Next: cd {vault.root} && memvault add fact 'Something worth remembering'")


@app.command()
@typer_parameters(options.ADD)
def add(**values: Any) -> None:
    """Write a new memory (one file, one commit).

    Examples:

      memvault add fact "The API rate limit is 100 req/s" --subject api.rate-limit --tag api

      memvault add episode "Deploy failed: migrations locked the users table" --outcome failure

      memvault add procedure "Release" --step "Run tests" --step "Tag" --trigger release

      echo "long text" | memvault add episode --title "Postmortem"
    """
    actions.add(**values)


@app.command()
@typer_parameters(options.LOG)
def log(**values: Any) -> None:
    """Append a conversation turn to a session's transcript (short-term memory).

    Example: memvault log --session 2026-11-29-deploy --role user "Why did the deploy fail?"
    """
    actions.log(**values)


@app.command()
def forget(
    memory_id: str = typer.Argument(..., metavar="ID", help="The memory's id."),
    reason: str = typer.Option(..., "--reason", help="Why: recorded in the commit message."),
    purge: bool = typer.Option(
        False,
        "--purge",
        help="Also remove it from git history, the index and the access log (rewrites history).",
    ),
    yes: bool = typer.Option(
        False, "--yes", "-y", help="Don't ask for confirmation (with --purge)."
    ),
) -> None:
    """Delete a memory (its file, with a commit that says why).

    Without --purge git history still holds it (that is the point of git); with --purge it
    is erased from every commit too.

    Example: memvault forget old-api-key-note --reason "wrong and misleading"
    """
    vault = open_vault()
    if purge:
        memory = vault.get(memory_id)
        if not yes:
            typer.confirm(
                f"This rewrites git history of {vault.root} to erase {memory.path}. Continue?",
                abort=True,
            )
        report = vault.purge(memory_id, reason)
        print(f"purged {memory_id}")
        for remote in report.remotes:
            info(
                f"warning: remote '{remote}' still holds the old history; "
                "force-push to erase it there"
            )
        return
    result = vault.forget(memory_id, reason)
    print(f"forgot {memory_id} ({result.memory.path})")


class Outcome(enum.StrEnum):
    success = "success"
    failure = "failure"


@app.command("procedure-used")
def procedure_used(
    memory_id: str = typer.Argument(..., metavar="ID", help="The procedure's id."),
    outcome: Outcome = typer.Option(..., "--outcome", help="How it went: success|failure."),
    note: str = typer.Option("", "--note", help="What happened (kept in the commit message)."),
    json_out: bool = typer.Option(False, "--json", help="Print the updated counters as JSON."),
) -> None:
    """Record that a procedure was followed and how it went: its times_used, success_rate
    and last_used are updated (one commit), and `procedure` ranks better-working procedures
    first. Also spelled `memvault procedure used ID ...`.

    Example: memvault procedure used roll-back --outcome failure --note "tag was gone"
    """
    result = open_vault().procedure_used(memory_id, outcome.value, note)
    meta = result.memory.meta
    counters = {k: meta.get(k) for k in ("times_used", "success_rate", "last_used")}
    if json_out:
        emit_json({"id": result.memory.id, **counters, "commit": result.commit})
        return
    print(
        f"{result.memory.id}\tused {counters['times_used']} time(s), success rate "
        f"{counters['success_rate']}"
    )


@app.command()
def edit(
    memory_id: str = typer.Argument(..., metavar="ID", help="The memory's id."),
    message: str = typer.Option(
        "edited by hand", "--message", "-m", help="Why: goes into the commit message."
    ),
) -> None:
    """Open a memory in $EDITOR; it is validated before it is committed.

    If the edited text is invalid, nothing changes and your edit is kept in a temp file.

    Example: EDITOR=nano memvault edit python-version
    """
    vault = open_vault()
    memory = vault.get(memory_id)
    original = vault.raw_text(memory)
    suffix = Path(memory.path).suffix
    fd, tmp = tempfile.mkstemp(prefix=f"memvault-{memory_id}-", suffix=suffix)
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
        handle.write(original)
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    import shlex

    proc = subprocess.run([*shlex.split(editor), tmp])
    if proc.returncode != 0:
        raise MemvaultError(
            f"editor exited with {proc.returncode}; nothing changed (your text: {tmp})", memory.path
        )
    try:
        new_text = Path(tmp).read_bytes().decode("utf-8")  # keep CRLF: no newline translation
    except UnicodeDecodeError as exc:
        raise MemvaultError(
            f"the edited text is not UTF-8 (byte {exc.start}); "
            f"nothing changed (your edit is in {tmp})",
            memory.path,
        ) from None
    if new_text == original:
        os.unlink(tmp)
        info("no changes")
        return
    try:
        vault.replace_text(memory_id, new_text, message)
    except ValidationError as exc:
        raise ValidationError(
            f"{exc.message} (nothing changed; your edit is in {tmp})", exc.path, exc.key
        ) from None
    os.unlink(tmp)
    print(f"updated {memory_id}")


@app.command("import")
def import_(
    file: Path = typer.Argument(
        ..., help="A JSONL export, a Markdown bundle, or a YAML file with an 'episodes:' list."
    ),
    format: str = typer.Option("auto", "--format", help="auto|jsonl|markdown|yaml-episodes."),
    allow_secrets: bool = typer.Option(
        False, "--allow-secrets", help="Store text that looks like a credential."
    ),
    skip_bad: bool = typer.Option(
        False, "--skip-bad", help="Import the good records even if some are bad."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the import report as JSON."),
) -> None:
    """Import memories (one commit). JSONL from 'memvault export' round-trips exactly.

    If any record is bad, nothing is written and each problem is listed (file:line: key:
    what is wrong); --skip-bad imports the good ones anyway.

    Example: memvault import backup.jsonl
    """

    vault = open_vault()
    report = _with_import_bar(
        lambda progress: vault.import_file(
            file, format, allow_secrets=allow_secrets, progress=progress, skip_bad=skip_bad
        )
    )
    failed = bool(report.problems) and not skip_bad
    if json_out:
        emit_json(report.as_dict())
    else:
        for problem in report.problems:
            print(f"Error: {problem}", file=sys.stderr)
        if failed:
            print(
                f"nothing imported: {len(report.problems)} bad record(s); "
                "fix them or pass --skip-bad",
                file=sys.stderr,
            )
        else:
            print(f"imported {report.added}, skipped {report.skipped} (already there)")
    if failed:
        raise typer.Exit(1)


def _with_import_bar(work: Any) -> Any:
    """Run ``work(progress)`` with a rich progress bar on stderr (bytes of the file read,
    memories so far); none with --quiet or when stderr is not a terminal."""
    if state.quiet or not sys.stderr.isatty():
        return work(None)
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )

    from .root import console

    bar = Progress(
        TextColumn("importing {task.fields[records]:,} records"),
        BarColumn(),
        TaskProgressColumn(),
        TimeRemainingColumn(),
        console=console(stderr=True),
        transient=True,
    )
    task = bar.add_task("import", total=None, records=0)

    def progress(records: int, done: int, total: int) -> None:
        bar.update(task, completed=done, total=total, records=records)

    with bar:
        return work(progress)


class Scope(enum.StrEnum):
    """The scopes, as a choice: an unknown one is a usage error that lists them (exit 2)."""

    self_ = "self"
    team = "team"
    global_ = "global"


_PAUSE_AGENT = typer.Option(None, "--agent", help="An agent whose capture is paused.")
_PAUSE_CHANNEL = typer.Option(None, "--channel", help="A channel (e.g. slack:#hr, claude-code).")
_PAUSE_SCOPE = typer.Option(None, "--scope", help="A scope: self|team|global.")
_PAUSE_WHY = typer.Option("", "--why", help="Why (kept in the commit message).")


@app.command()
def pause(
    agent: str | None = _PAUSE_AGENT,
    channel: str | None = _PAUSE_CHANNEL,
    scope: Scope | None = _PAUSE_SCOPE,
    why: str = _PAUSE_WHY,
    list_: bool = typer.Option(False, "--list", help="Show what is paused; change nothing."),
    json_out: bool = typer.Option(False, "--json", help="With --list: print the rules as JSON."),
) -> None:
    """Stop capture: every write (add, log, ingest, MCP, the Claude Code hooks) by that
    agent, from that channel or to that scope is refused until 'resume'. Options given
    together pause only what matches all of them. One commit to .memvault/config.yaml.

    Examples:

      memvault pause --agent support-bot --why "handling a customer's data"

      memvault pause --channel slack:#hr

      memvault pause --agent claude-code --scope team   # its own self memories go on

      memvault pause --list
    """
    vault = open_vault()
    if list_ or json_out:
        if agent or channel or scope:
            raise ValidationError("--list shows what is paused; give it no rule", key="list")
        rules = vault.paused()
        if json_out:
            emit_json([r.as_dict() for r in rules])
        elif not rules:
            print("nothing is paused")
        for each in [] if json_out else rules:
            print(f"paused: {each.describe()}\t(memvault resume {each.options()})")
        return
    sha = vault.pause(scope.value if scope else None, why, agent=agent, channel=channel)
    rule = vault.paused()[-1] if sha else None
    what = rule.describe() if rule else _words(agent, channel, scope)
    print(f"capture paused for {what}" + ("" if sha else " (it already was)"))


@app.command()
def resume(
    agent: str | None = _PAUSE_AGENT,
    channel: str | None = _PAUSE_CHANNEL,
    scope: Scope | None = _PAUSE_SCOPE,
    why: str = _PAUSE_WHY,
) -> None:
    """Resume capture paused with the same options ('memvault pause --list' shows them).

    Examples:

      memvault resume --agent support-bot

      memvault resume --scope self
    """
    vault = open_vault()
    sha = vault.resume(scope.value if scope else None, why, agent=agent, channel=channel)
    what = _words(agent, channel, scope)
    if sha:
        print(f"capture resumed for {what}")
        return
    print(f"capture for {what} was not paused: nothing to do")
    for rule in vault.paused():
        info(f"still paused: {rule.describe()} (memvault resume {rule.options()})")


def _words(agent: str | None, channel: str | None, scope: Scope | None) -> str:
    given = (("agent", agent), ("channel", channel), ("scope", scope.value if scope else None))
    return ", ".join(f"{key} {value}" for key, value in given if value)


@app.command()
def rescope(
    memory_id: str = typer.Argument(..., metavar="ID", help="The memory's id."),
    scope: Scope = typer.Option(..., "--scope", help="The new scope: self|team|global."),
    reason: str = typer.Option("", "--reason", help="Why (kept in the commit message)."),
    json_out: bool = typer.Option(False, "--json", help="Print the moved memory as JSON."),
) -> None:
    """Move a memory (a session transcript too) to another scope, as one commit.

    self: only you see it (it must be yours); team: your team; global: everyone, proposed
    in inbox/ for review unless you are a librarian.

    Example: memvault --agent alice rescope session-dm-bob --scope self --reason "a DM"
    """
    result = open_vault().rescope(memory_id, scope.value, reason)
    if json_out:
        emit_json(
            {
                **result.memory.to_dict(with_content=False),
                "commit": result.commit,
                "inbox": result.inbox,
            }
        )
        return
    if result.commit is None:
        print(f"{memory_id} already has scope {scope.value}: nothing to do")
        return
    print(f"{result.memory.id}\t{result.memory.path}")
    info(
        f"scope {scope.value}"
        + ("; proposed in inbox/ for review" if result.inbox else "")
        + f"; commit {result.commit[:10]}"
    )


@app.command("purge")
def purge_content(
    match: str | None = typer.Option(
        None, "--match", help="The text to erase (any case; any run of spaces matches any)."
    ),
    regex: str | None = typer.Option(
        None, "--regex", help="A Python regular expression to erase instead of --match."
    ),
    scope: str | None = typer.Option(
        None, "--scope", help="Only memories in this scope now: self|team|global."
    ),
    reason: str = typer.Option("", "--reason", help="Why (kept in purge.log and the commit)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Don't ask (for scripts; needs --reason)."),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Show what it would erase; change nothing."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the preview/result as JSON."),
) -> None:
    """Erase a text wherever the vault holds it: memories, transcript turns, git history, the
    index and the access log (librarian role; rewrites history).

    Shows the files, turns and commits first, then asks you to type 'purge'. A turn that is
    wholly the text goes; elsewhere the text becomes [purged]. .memvault/purge.log records who,
    when, why and how many hits, never the text.

    Examples:

      memvault --role librarian purge --match "+351 912 345 678" --reason "GDPR request 12"

      memvault --role librarian purge --regex "\\bACME-\\d{6}\\b" --scope team --dry-run

      memvault --role librarian purge --match "Ana Souza" --reason "left" --yes --json
    """
    if (match is None) == (regex is None):
        raise ValidationError("give exactly one of --match TEXT or --regex PATTERN", key="match")
    text = match if match is not None else str(regex)
    vault = open_vault()
    if not dry_run and not reason.strip():
        raise ValidationError("say why (--reason): purge.log records it", key="reason")
    preview = vault.purge_preview(text, regex=regex is not None, scope=scope)
    if dry_run or preview.empty:
        if json_out:
            emit_json(preview.as_dict())
        _show_preview(preview)
        if preview.empty:
            info("nothing holds it: nothing to purge")
        return
    _show_preview(preview)
    if not yes:
        typed = typer.prompt(
            f"This rewrites all of git history in {vault.root}. Type 'purge' to erase it",
            default="",
            show_default=False,
            err=True,
        )
        if typed.strip() != "purge":
            raise typer.Abort()
    done = vault.purge_text(text, reason, regex=regex is not None, scope=scope)
    if json_out:
        emit_json(done.as_dict())
    counts = done.counts()
    print(
        f"purged: {counts['files']} file(s), {counts['turns_removed']} turn(s) removed, "
        f"{counts['turns_redacted']} redacted, {counts['commits']} commit(s) rewritten",
        file=sys.stderr if json_out else sys.stdout,
    )
    for remote in done.remotes:
        info(f"warning: remote '{remote}' still holds the old history; force-push to erase it")


def _show_preview(preview: Any) -> None:
    """The preview on stderr: each file and what happens to it, then the commits."""
    counts = preview.counts()
    for hit in preview.files:
        turns = ""
        if hit.turns_removed or hit.turns_redacted:
            turns = (
                f", {len(hit.turns_removed)} turn(s) removed, {len(hit.turns_redacted)} redacted"
            )
        info(f"  {hit.path}: {hit.action} ({hit.spans} hit(s){turns})")
    info(
        f"{counts['files']} file(s), {counts['turns_removed']} turn(s) to remove, "
        f"{counts['turns_redacted']} to redact; {counts['commits']} commit(s) and "
        f"{counts['messages']} commit message(s) hold it"
        + (f": {', '.join(c[:10] for c in preview.commits[:8])}" if preview.commits else "")
        + ("…" if len(preview.commits) > 8 else "")
    )
