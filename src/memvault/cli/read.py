"""Commands that read: show, list, episodes, stats, history, export, doctor, check."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from .. import debug, parse_when
from ..errors import MemvaultError, NotFoundError
from . import actions, options
from .common import emit_json, open_vault, print_table, split_list
from .options import typer_parameters
from .root import app


@app.command()
@typer_parameters(options.SHOW)
def show(**values: Any) -> None:
    """Show one memory.

    Example: memvault show python-version --json
    """
    actions.show(**values)


@app.command("list")
def list_(
    type: str | None = typer.Option(None, "--type", help="episodic|semantic|procedural."),
    category: str | None = typer.Option(None, "--category", "-c", help="Category."),
    tag: list[str] | None = typer.Option(None, "--tag", help="Has all these tags."),
    scope: str | None = typer.Option(None, "--scope", help="self|team|global."),
    agent: str | None = typer.Option(None, "--by-agent", help="Written by this agent."),
    status: str | None = typer.Option(
        None, "--status", help="active|superseded|archived|proposed|disputed|any."
    ),
    since: str | None = typer.Option(
        None, "--since", help="Created on/after (2026-01-31, or 7d, 2w)."
    ),
    until: str | None = typer.Option(None, "--until", help="Created on/before."),
    include_archive: bool = typer.Option(
        False, "--include-archive", help="Include archived memories."
    ),
    limit: int = typer.Option(
        0, "--limit", "-n", min=0, max=10_000_000, help="At most N (0 = all)."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON (a list)."),
) -> None:
    """List memories visible to you (active ones unless --status says otherwise).

    Example: memvault list --type semantic --tag api --json
    """
    from .. import Filters

    vault = open_vault()
    filters = Filters(
        type=type,
        category=category,
        tags=split_list(tag),
        scope=scope,
        agent=agent,
        status=status,
        since=parse_when(since, "since"),
        until=parse_when(until, "until"),
        include_archive=include_archive,
        include_inbox=status in ("proposed", "any"),
    )
    items = sorted(
        vault.memories(filters), key=lambda m: (m.get("created", ""), m.id), reverse=True
    )
    if limit:
        items = items[:limit]
    debug.note("filters", debug.plain(filters))
    debug.note("found", f"{len(items)} memories")
    if json_out:
        emit_json([m.to_dict(with_content=False) for m in items])
        return
    print_table(
        [
            {
                "id": m.id,
                "type": m.type,
                "category": m.category,
                "status": m.status,
                "created": str(m.get("created", ""))[:10],
                "title": m.title,
            }
            for m in items
        ],
        ["id", "type", "category", "status", "created", "title"],
    )


@app.command()
@typer_parameters(options.EPISODES)
def episodes(**values: Any) -> None:
    """The most recent episodes, newest first.

    Example: memvault episodes --last 5
    """
    actions.episodes(**values)


@app.command()
def stats(
    days: int = typer.Option(
        30, "--days", "-d", help="Measure usage and rates over the last N days (1-90)."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Counts per kind, category, status and scope; oldest/newest; archive and inbox; usage
    (queries per day over the window, hit rate, query time) and seed 004's metrics:
    consolidation rate, decay rate, validation rate, patterns discovered, procedures
    optimized. The window is the last --days days, or the vault's life if it is younger;
    each rate's numerator and denominator are under "basis" in --json.

    Example: memvault stats --days 7 --json
    """

    data = open_vault().stats(days=days)
    if json_out:
        emit_json(data)
        return
    print(
        f"memories: {data['total']} (archive {data['archive']}, inbox {data['inbox']}, "
        f"invalid files {data['invalid']})"
    )
    for key in ("by_type", "by_category", "by_status", "by_scope"):
        items = ", ".join(f"{k} {v}" for k, v in sorted(data[key].items()))
        print(f"{key.replace('by_', 'by ')}: {items or '-'}")
    print(f"oldest: {data['oldest'] or '-'}   newest: {data['newest'] or '-'}")
    for line in _metric_lines(data):
        print(line)


def _metric_lines(data: dict[str, Any]) -> list[str]:
    """Usage and seed 004's metrics, as ``stats`` prints them."""
    win = data["window"]
    usage, m = data["usage"], data["metrics"]
    basis = m["basis"]
    lines = [f"window: the last {win['days']} days, since {win['start']}"]
    if win["span_days"] < win["days"]:  # clipped to the vault's age
        lines[0] = f"window: the vault's life, {win['span_days']:g} day(s) since {win['start']}"
    lines.append(
        f"queries: {usage['queries']} ({usage['queries_per_day']:.2f}/day), "
        f"hit rate {usage['recall_hit_rate']:.0%}, avg {usage['avg_query_ms']:.0f} ms"
    )
    c, d, v = basis["consolidation_rate"], basis["decay_rate"], basis["validation_rate"]
    lines.append(
        f"consolidation rate: {m['consolidation_rate']:.0%} "
        f"({c['consolidated']} of {c['episodes']} episodes promoted to facts or procedures)"
    )
    lines.append(
        f"decay rate: {m['decay_rate']:.1%}/week ({d['archived_by_decay']} of "
        f"{d['decaying']} decaying memories archived in {d['weeks']:g} weeks)"
    )
    lines.append(
        f"validation rate: {m['validation_rate']:.0%} ({v['validated']} of {v['facts']} "
        "facts weighed by validate)"
    )
    lines.append(
        f"patterns discovered: {m['patterns_discovered']}   "
        f"procedures optimized: {m['procedures_optimized']}"
    )
    return lines


@app.command()
def history(
    memory_id: str = typer.Argument(..., metavar="ID", help="The memory's id."),
    limit: int = typer.Option(50, "--limit", "-n", min=1, max=100_000, help="At most N commits."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON (a list)."),
) -> None:
    """The git history of one memory (follows moves to archive/).

    A forgotten or purged memory shows its record first: when, by whom and why (a purged
    one shows nothing of what it held); with --json that is an object with 'forgotten'
    and 'commits'.

    Example: memvault history python-version
    """
    vault = open_vault()
    try:
        changes = vault.history(memory_id, limit)
    except NotFoundError:
        record = vault.forgotten(memory_id, limit)
        if record is None:
            raise
        if json_out:
            data = record.as_dict()
            emit_json({"forgotten": data, "commits": data.pop("commits")})
            return
        print(f"{record.action} {record.when[:19]} by {record.by}: {record.reason}")
        if record.path:
            print(f"it was {record.path}; git history still holds it")
        else:
            print("purged: nothing of what it held is kept, in files or in git history")
        changes = record.commits
    if json_out:
        emit_json([c.as_dict() for c in changes])
        return
    for change in changes:
        print(f"{change.sha[:10]}  {change.date[:19]}  {change.author}  {change.message}")


@app.command()
def export(
    format: str = typer.Option("jsonl", "--format", help="jsonl|markdown."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Write here instead of stdout."
    ),
    include_archive: bool = typer.Option(
        True, "--archive/--no-archive", help="Include archive/ and inbox/."
    ),
) -> None:
    """Export memories visible to you as JSONL (one object per memory) or one Markdown bundle.

    Example: memvault export -o backup.jsonl
    """

    vault = open_vault()
    text = vault.export(format, include_archive=include_archive)
    if output is None:
        sys.stdout.write(text)
    else:
        from .. import atomic_write

        if output.is_dir():
            raise MemvaultError("is a folder: give a file name to export to", str(output), "output")
        try:
            atomic_write(output, text)
        except OSError as exc:
            raise MemvaultError(
                f"cannot write: {exc.strerror or exc}", str(output), "output"
            ) from None
        print(f"exported to {output}", file=sys.stderr)


@app.command()
def doctor(
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    repair: bool = typer.Option(
        False,
        "--repair",
        help="Undo a write that died half-way and could not be undone (sets aside the rest).",
    ),
) -> None:
    """Check the vault: schema, duplicate ids, dangling links, stray files, index health.

    Exits 1 when it finds a problem. Examples: memvault doctor; memvault doctor --repair
    """

    vault = open_vault()
    report = vault.doctor(repair=repair)
    if json_out:
        emit_json(report)
    else:
        for problem in report["problems"]:
            print(problem["text"])
        for note in report["notes"]:
            print(f"note: {note}", file=sys.stderr)
        print(
            f"{report['checked']} files checked, {len(report['problems'])} problem(s)",
            file=sys.stderr,
        )
    if report["problems"]:
        raise typer.Exit(1)


@app.command()
def check(
    paths: list[Path] | None = typer.Argument(
        None, help="Files to check (default: the whole vault)."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Validate memory files (schema, YAML, secrets); exit 1 on any problem.

    Used by the pre-commit hook. Example: memvault check semantic/facts/x.md
    """

    vault = open_vault()
    problems = vault.check(paths or [])
    if json_out:
        emit_json([p.as_dict() for p in problems])
    else:
        for p in problems:
            print(f"Error: {p}", file=sys.stderr)
    if problems:
        raise typer.Exit(1)
