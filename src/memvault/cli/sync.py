"""Keeping a vault in step: ``sync`` with its remote, ``watch`` for hand edits, and the
``merge-driver`` git calls for memory files."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from .common import emit_json, info, open_vault, state
from .root import app

if TYPE_CHECKING:
    import threading

    from .. import SyncReport


@app.command()
def watch(
    commit: bool = typer.Option(
        False, "--commit", help="Also commit hand edits after a quiet period."
    ),
    quiet_period: float = typer.Option(
        10.0,
        "--quiet-period",
        min=0.5,
        max=86_400,
        help="Seconds without changes before --commit commits.",
    ),
    debounce: float = typer.Option(
        0.4, "--debounce", min=0.05, max=60, help="Seconds of quiet before reindexing."
    ),
    json_out: bool = typer.Option(
        False, "--json", help="Print one JSON object per reindex/commit on stdout."
    ),
) -> None:
    """Watch the memory folders and reindex hand edits as they happen (Ctrl-C stops).

    Edits, new files, moves, deletes and editors' save-by-rename reach the index within
    about a second; an invalid file is reported once and left out of the index.

    Example: memvault watch --commit --quiet-period 30
    """
    import threading

    from ..watch import json_line
    from ..watch import watch as run_watch

    vault = open_vault()
    stop = threading.Event()
    say = _say_unless_quiet()

    def ready() -> None:
        extra = f"; committing hand edits after {quiet_period:g} s of quiet" if commit else ""
        say(f"memvault watch: watching {vault.root} (Ctrl-C to stop){extra}")

    with _sigterm_sets(stop):
        stats = run_watch(
            vault,
            debounce=debounce,
            commit_after=quiet_period if commit else None,
            say=say,
            emit=json_line if json_out else _watch_text(say),
            stop=stop,
            ready=ready,
        )
    say(
        f"memvault watch: done ({stats.reindexes} reindex(es), {stats.commits} commit(s), "
        f"{stats.errors} error(s))"
    )
    # After Ctrl-C the process ends at once (an interrupted reindex was rolled back or, if
    # abandoned, is recovered from like a crash on the next open).
    state.exit_now = stats.interrupted or stats.abandoned


def _say_unless_quiet() -> Callable[[str], None]:
    """A line on stderr, flushed at once (the watcher runs for long); nothing with -q."""
    if state.quiet:
        return lambda line: None
    return lambda line: print(line, file=sys.stderr, flush=True)


def _watch_text(say: Callable[[str], None]) -> Callable[[dict[str, Any]], None]:
    """The watcher's events as lines for people (without --json)."""

    def emit_text(event: dict[str, Any]) -> None:
        if event.get("event") == "reindex":
            say(
                f"memvault watch: reindexed {len(event['paths'])} change(s): "
                f"{event.get('summary', '')}"
            )
        elif event.get("event") == "commit":
            n = len(event.get("added", [])) + len(event.get("removed", []))
            say(
                f"memvault watch: committed {n} hand-edited file(s) "
                f"as {str(event.get('commit'))[:10]}"
            )

    return emit_text


@contextmanager
def _sigterm_sets(stop: threading.Event) -> Iterator[None]:
    """SIGTERM (e.g. from a service manager) stops the watcher as Ctrl-C does, cleanly."""
    import signal

    def _term(signum: int, frame: Any) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, _term)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@app.command()
def sync(
    remote: str | None = typer.Option(
        None, "--remote", help="Remote to sync with (default: the branch's, or origin)."
    ),
    commit: bool = typer.Option(False, "--commit", help="First commit hand edits of memory files."),
    push: bool = typer.Option(True, "--push/--no-push", help="Push local commits after pulling."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Pull (rebase) and push, merging concurrent edits of a memory key by key.

    When both sides changed the same memory, front matter is merged (lists unioned,
    newer 'updated' wins) and overlapping body edits are both kept as status: disputed.
    A conflict the merge driver cannot settle aborts the rebase, leaving the vault as it was.

    Example: memvault sync --commit
    """

    vault = open_vault()
    report = vault.sync(remote=remote, commit=commit, push=push)
    if json_out:
        emit_json(report.as_dict())
    else:
        _print_sync(report)


def _print_sync(report: SyncReport) -> None:
    if report.hand_edits and report.hand_edits.commit:
        n = len(report.hand_edits.added) + len(report.hand_edits.removed)
        print(f"committed {n} hand-edited file(s) as {report.hand_edits.commit[:10]}")
    if report.incoming:
        print(f"pulled {len(report.incoming)} commit(s) from {report.remote}/{report.branch}:")
        for c in report.incoming:
            print(f"  {c.sha[:10]}  {c.subject}  ({c.author})")
        print(f"{len(report.changed)} file(s) changed")
    else:
        print(f"already up to date with {report.remote}/{report.branch}")
    for path in report.disputed:
        print(f"disputed: {path} (both versions kept)")
    print(f"pushed {report.pushed} commit(s)" if report.pushed else "nothing to push")
    if report.reindex:
        info(f"index: {report.reindex}")
    for note in report.notes:
        info(f"note: {note}")


@app.command("merge-driver")
def merge_driver(
    base: Path = typer.Argument(..., help="%O: the common ancestor's version (temp file)."),
    ours: Path = typer.Argument(..., help="%A: our version; the result is written here."),
    theirs: Path = typer.Argument(..., help="%B: their version."),
    path: str = typer.Argument("", help="%P: the file's path in the repository."),
) -> None:
    """Git merge driver for memory files: merge front matter key by key, never conflict markers.

    Lists are unioned, other keys take the side with the newer 'updated'; overlapping
    body edits are both kept and the memory marked status: disputed. Registered by
    'memvault hooks install' (and init); selected by .gitattributes.

    Example: git config merge.memvault.driver "memvault merge-driver %O %A %B %P"
    """
    from .. import run_driver

    code = run_driver(base, ours, theirs, path or str(ours))
    if code:
        raise typer.Exit(code)
