"""Consolidation and review commands: consolidate, why, review, dispute."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from .. import parse_when
from .common import emit_json, open_vault, split_list, state
from .root import app, console

if TYPE_CHECKING:  # pragma: no cover
    from .. import Plan

review_app = typer.Typer(
    help="Review proposed memories in inbox/.\n\nExample: memvault review list",
    no_args_is_help=False,
    invoke_without_command=True,
)
app.add_typer(review_app, name="review")
dispute_app = typer.Typer(
    help="Review disputed facts: facts in force that may state different values of one "
    "thing.\n\nExample: memvault dispute list",
    no_args_is_help=False,
    invoke_without_command=True,
)
app.add_typer(dispute_app, name="dispute")


@app.command()
def consolidate(
    dry_run: bool = typer.Option(
        False, "--dry-run", "-n", help="Show the plan and the diff; write nothing."
    ),
    now: str | None = typer.Option(
        None, "--now", help="Pretend it is this time (deterministic runs, time travel)."
    ),
    only: list[str] | None = typer.Option(
        None,
        "--only",
        help="Steps: fold,decay,retention,dedup,supersede,promote,distill (comma-separated).",
    ),
    show_diff: bool = typer.Option(
        True, "--diff/--no-diff", help="With --dry-run, print the file diff."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the plan/report as JSON."),
) -> None:
    """Run the sleep job: fold reads, decay, archive, merge duplicates, resolve subjects,
    propose patterns, distill old transcripts. One commit per run; --dry-run writes nothing.

    Example: memvault consolidate --dry-run
    """

    vault = open_vault()
    when = parse_when(now, "now")
    progress = None if state.quiet or json_out else _progress()
    steps = split_list(only) or None
    texts = not json_out and show_diff  # a dry run renders files only to show their diff
    result, sha = vault.consolidate(when, dry_run, only=steps, progress=progress, texts=texts)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    if json_out:
        emit_json({**result.as_dict(), "commit": sha, "dry_run": dry_run})
        return
    _render_plan(result)
    if result.held:
        shown = ", ".join(result.held[:5]) + (", ..." if len(result.held) > 5 else "")
        print(
            f"{len(result.held)} memory file(s) have uncommitted edits ({shown}): the run "
            "will not be applied until they are committed or discarded",
            file=sys.stderr,
        )
    if dry_run:
        if show_diff:
            sys.stdout.write(vault.consolidation_diff(result))
        print("(dry run: nothing written)", file=sys.stderr)
    elif sha:
        print(f"committed {sha[:10]}: {result.summary()}", file=sys.stderr)
    else:
        print("nothing to do", file=sys.stderr)


def _progress() -> Callable[[str, int, int], None]:
    def report(stage: str, done: int, total: int) -> None:
        print(f"\r{stage}: {done}/{total}", end="" if done < total else "\n", file=sys.stderr)

    return report


def _render_plan(result: Plan) -> None:
    from rich.table import Table

    if not result.actions:
        return
    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("step", "id", "what", "why"):
        table.add_column(col, overflow="fold")
    for a in result.actions:
        table.add_row(a.step, a.memory_id, a.what + (f" → {a.move_to}" if a.move_to else ""), a.why)
    console().print(table)


@app.command()
def why(
    memory_id: str = typer.Argument(..., metavar="ID", help="The memory's id."),
    now: str | None = typer.Option(None, "--now", help="Evaluate at this time."),
) -> None:
    """Explain a memory's relevance (decay formula with its numbers).

    Example: memvault why first-session
    """

    print(open_vault().why(memory_id, parse_when(now, "now")))


@review_app.callback()
def review_default(
    ctx: typer.Context,
    json_out: bool = typer.Option(False, "--json", help="Print JSON (a list)."),
) -> None:
    """List proposed memories waiting in inbox/ (same as 'review list').

    Example: memvault review
    """
    if ctx.invoked_subcommand is None:
        _list(json_out)


@review_app.command("list")
def review_list(
    json_out: bool = typer.Option(False, "--json", help="Print JSON (a list)."),
) -> None:
    """List proposed memories waiting in inbox/.

    Example: memvault review list --json
    """
    _list(json_out)


def _list(json_out: bool) -> None:

    items = open_vault().inbox()
    if json_out:
        emit_json([m.to_dict() for m in items])
        return
    for m in items:
        print(f"{m.id}\t{m.type}/{m.category}\t{m.title}")
    if not items:
        print("inbox is empty", file=sys.stderr)


@review_app.command("accept")
def review_accept(
    memory_id: str = typer.Argument(..., metavar="ID"),
    note: str = typer.Option("", "--note", "-m", help="Goes into the commit message."),
) -> None:
    """Accept a proposal: move it into place as an active memory (one commit).

    Example: memvault review accept learned-deploys-fail-on-fridays
    """

    result = open_vault().accept(memory_id, note)
    print(f"accepted {memory_id} ({result.memory.path.removeprefix('inbox/')})")


@review_app.command("reject")
def review_reject(
    memory_id: str = typer.Argument(..., metavar="ID"),
    reason: str = typer.Option("", "--reason", "-m", help="Goes into the commit message."),
) -> None:
    """Reject a proposal: remove it from inbox/ (one commit; git history keeps it).

    Example: memvault review reject learned-something-wrong --reason "coincidence"
    """

    open_vault().reject(memory_id, reason)
    print(f"rejected {memory_id}")


@dispute_app.callback()
def dispute_default(
    ctx: typer.Context,
    json_out: bool = typer.Option(False, "--json", help="Print JSON (a list)."),
) -> None:
    """List open disputes (same as 'dispute list').

    Example: memvault dispute
    """
    if ctx.invoked_subcommand is None:
        _disputes(json_out)


@dispute_app.command("list")
def dispute_list(
    json_out: bool = typer.Option(False, "--json", help="Print JSON (a list)."),
) -> None:
    """List open disputes: each line the disputed facts, oldest first, the newest marked.
    A write that was unsure records one, and so do consolidation and a merge; unresolved,
    the newer wins at the first consolidation after disputes.newer_wins_after (14d).

    Example: memvault dispute list --json
    """
    _disputes(json_out)


def _disputes(json_out: bool) -> None:
    items = open_vault().disputes()
    if json_out:
        emit_json([d.as_dict() for d in items])
        return
    for d in items:
        newest = d.newest.id
        print(
            "\t".join(
                f"{m.id}{' (newest)' if m.id == newest and len(d.facts) > 1 else ''}"
                for m in d.facts
            )
        )
        for m in d.facts:
            print(f"  {m.id}: {' '.join(m.content.split())[:100]}")
    if not items:
        print("no open disputes", file=sys.stderr)


@dispute_app.command("keep")
def dispute_keep(
    memory_id: str = typer.Argument(..., metavar="ID", help="The fact to keep in force."),
    note: str = typer.Option("", "--note", "-m", help="Goes into the commit message."),
) -> None:
    """Resolve a dispute: keep ID in force; the other facts of its dispute are superseded
    by it (kept as tombstones, linked both ways). One commit.

    Example: memvault dispute keep api-rate-limit-500 --note "checked the gateway"
    """

    result = open_vault().resolve_dispute(memory_id, note)
    print(f"kept {memory_id}")
    if result.superseded:
        print(f"supersedes {', '.join(result.superseded)}", file=sys.stderr)
