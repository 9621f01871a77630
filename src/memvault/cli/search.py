"""Commands that search: recall, fact, procedure, search, validate, context, reindex."""

from __future__ import annotations

import sys
from typing import Any

import typer

from . import options, search_actions
from .common import emit_json, open_vault, state
from .options import typer_parameters
from .root import app, console

_JSON = typer.Option(False, "--json", help="Print JSON.")


@app.command()
@typer_parameters(options.RECALL)
def recall(**values: Any) -> None:
    """Recall memories, routed by intent: "when/what happened" -> episodes, "what is" ->
    facts, "how do I" -> procedures, "is it true that" -> validation (English, Portuguese,
    Russian, Ukrainian cues). --kind overrides the routing.

    Inside conversation transcripts each turn is a hit of its own, named
    <transcript id>#<turn id> (memvault show takes it); --speaker and --role keep one side.

    Example: memvault recall "when did we last deploy billing?"
    """
    search_actions.recall(**values)


@app.command()
@typer_parameters(options.FACT)
def fact(**values: Any) -> None:
    """Look up known facts, decisions, definitions, relationships and constraints.

    Superseded facts are left out unless --include-superseded; --as-of answers with what
    was valid at that date. Example: memvault fact "api rate limit" --as-of 2026-01-01
    """
    search_actions.fact(**values)


@app.command()
@typer_parameters(options.PROCEDURE)
def procedure(**values: Any) -> None:
    """Find how-to knowledge (workflows, templates, patterns, heuristics), matched by trigger
    keywords and similarity and ranked by match and success rate.

    Example: memvault procedure "release a new version" --limit 3
    """
    search_actions.procedure(**values)


@app.command("search")
@typer_parameters(options.SEARCH)
def search_(**values: Any) -> None:
    """Plain hybrid search (keywords + meaning) over every kind of memory, no intent routing.

    Example: memvault search "postgres jsonb" --type semantic --explain
    """
    search_actions.search(**values)


@app.command()
@typer_parameters(options.CONTEXT)
def context(**values: Any) -> None:
    """Print a block of relevant memory to put in an agent's prompt: previous episodes, known
    facts, applicable procedures, active constraints -- most useful first, within the budget,
    saying what was left out.

    Examples:

      memvault context "migrate billing to postgres" --budget 800

      memvault -q context --hook --budget 800   # a Claude Code UserPromptSubmit/SessionStart hook
    """
    search_actions.context(**values)


@app.command()
@typer_parameters(options.VALIDATE)
def validate(**values: Any) -> None:
    """Check a statement against known facts: supported, contradicted or unknown, with the
    fact and the slot that decide it.

    The statement and the facts are compared on their subject and slots: names and the
    alternatives a fact rejects ("PostgreSQL over MySQL"), numbers with units (200 ms is
    not 200 s), dates, times, weekdays, versions, permission (frozen vs preferred). Only
    facts in force decide; a statement of a superseded value is contradicted by the newer
    fact. "unknown" means no fact decides it, not "false". See docs/validate.md.

    Example: memvault validate "we deploy on Fridays"
    """
    search_actions.validate(**values)


@app.command()
def reindex(
    full: bool = typer.Option(
        False, "--full", help="Rebuild the index from scratch (re-embeds everything)."
    ),
    json_out: bool = _JSON,
) -> None:
    """Bring the search index up to date with the files (only what changed is re-embedded).

    Searches do this by themselves; run it after big imports, or with --full to start over.
    In a git repository only the files git names are read (changed in commits since the
    index's last update, or differing from HEAD now); --full reads every file.
    Example: memvault reindex --full
    """
    vault = open_vault()
    report = _with_progress(lambda progress: vault.reindex(full=full, progress=progress))
    if json_out:
        emit_json(report.as_dict())
    else:
        print(report.summary(), file=sys.stderr)


def _with_progress(work: Any) -> Any:
    """Run ``work(progress)`` with a rich progress bar on stderr (hidden with --quiet or when
    there is nothing to embed)."""
    if state.quiet or not sys.stderr.isatty():
        return work(None)
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    bar = Progress(
        TextColumn("embedding"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console(stderr=True),
        transient=True,
    )
    task = None

    def progress(done: int, total: int) -> None:
        nonlocal task
        if total <= 0:
            return
        if task is None:
            bar.start()
            task = bar.add_task("embed", total=total)
        bar.update(task, completed=done, total=total)

    try:
        return work(progress)
    finally:
        if task is not None:
            bar.stop()
