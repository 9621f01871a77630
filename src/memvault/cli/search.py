"""Commands that search: recall, fact, procedure, search, validate, context, reindex."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, cast

import typer

from .common import emit_json, open_vault, parse_when, split_list, state
from .root import app, console

if TYPE_CHECKING:  # pragma: no cover
    from ..search import SearchOptions, SearchResult

# Options shared by the search commands: each command lists the ones it takes.
_LIMIT = typer.Option(
    None, "--limit", "-n", help="At most N results (default: search.limit; max: limits.max_limit)."
)
_KIND = typer.Option(
    None,
    "--kind",
    "-k",
    help="Only this kind: episodic|semantic|procedural (episode|fact|procedure).",
)
_TYPE = typer.Option(None, "--type", help="Only this memory type (same as --kind).")
_CATEGORY = typer.Option(
    None, "--category", "-c", help="Only this category (facts, decisions, workflows, ...)."
)
_TAG = typer.Option(None, "--tag", help="Has all these tags (repeat, or comma-separated).")
_SCOPE = typer.Option(
    None, "--scope", help="Only self|team|global memories (among those you can see)."
)
_BY_AGENT = typer.Option(None, "--by-agent", help="Only memories written by this agent.")
_SINCE = typer.Option(None, "--since", help="Created on/after (2026-01-31, or 7d, 2w).")
_UNTIL = typer.Option(None, "--until", help="Created on/before.")
_AS_OF = typer.Option(
    None, "--as-of", help="What was true then: facts valid at that date (superseded ones included)."
)
_ARCHIVE = typer.Option(False, "--include-archive", help="Also search archived (decayed) memories.")
_SUPERSEDED = typer.Option(False, "--include-superseded", help="Also return superseded facts.")
_INBOX = typer.Option(
    False, "--include-inbox", help="Also return proposed memories awaiting review."
)
_EXPLAIN = typer.Option(
    False, "--explain", help="Show the score breakdown: keyword rank, vector rank, fusion, boosts."
)
_ORDER = typer.Option(None, "--order", help="relevance (default) or time (newest first).")
_SPEAKER = typer.Option(
    None, "--speaker", help="Only what this speaker said (a name in a transcript, any case)."
)
_TURN_ROLE = typer.Option(
    None,
    "--role",
    help="Only conversation turns of this role: user|assistant|system|tool "
    "(the global --role, before the command, is the reader's role).",
)
_JSON = typer.Option(False, "--json", help="Print JSON.")


_RENAMED = {"tag": "tags", "by_agent": "agent", "turn_role": "role"}
_TIMES = {"since": "since", "until": "until", "as_of": "as-of"}


def _given(**values: Any) -> SearchOptions:
    """The search keywords from a command's option values (by their parameter names: ``tag``
    becomes ``tags``, times are parsed, ...). Options left at their "not given" value (None,
    an empty list or string, False) are left out, so that the search functions apply their
    own defaults (``recall --kind`` filters by kind only when no ``type`` is passed)."""
    given: dict[str, Any] = {}
    for name, value in values.items():
        if name == "tag":
            value = split_list(value)
        elif name in _TIMES:
            value = parse_when(value, _TIMES[name])
        if value not in (None, [], False, ""):
            given[_RENAMED.get(name, name)] = value
    return cast("SearchOptions", given)  # SearchOptions' keys, fewer of them


def _show(result: SearchResult, json_out: bool, explain: bool) -> None:
    if json_out:
        emit_json(result.as_dict())
        return
    if result.note:
        print(f"note: {result.note}", file=sys.stderr)
    if explain:
        route = result.route
        bits = [f"route: {route.intent}"]
        if route.cue:
            bits.append(f"cue {route.cue!r}")
        if route.kind:
            bits.append(f"prefers {route.kind}")
        bits.append(f"{route.order} order")
        print(", ".join(bits) + f"; {result.ms:.0f} ms", file=sys.stderr)
    if not result.hits:
        print("no matching memories", file=sys.stderr)
        return
    out = console()
    for n, hit in enumerate(result.hits, 1):
        date = f"  {hit.created[:10]}" if hit.created and hit.type == "episodic" else ""
        status = f"  [{hit.status}]" if hit.status not in ("active",) else ""
        out.print(
            f"{n:>2}. {hit.score:6.3f}  {hit.type}/{hit.category}  {hit.address}{date}{status}",
            markup=False,
        )
        heading = f"{hit.turn.speaker} ({hit.title})" if hit.turn is not None else hit.title
        out.print(f"      {heading}", markup=False)
        if hit.snippet and hit.snippet != hit.title:
            out.print(f"      {hit.snippet}", markup=False, style="dim")
        if explain and hit.explain:
            out.print("      " + _explain_line(hit.explain), markup=False, style="cyan")


def _explain_line(ex: Any) -> str:
    kw, vec = ex.get("keyword", {}), ex.get("vector", {})
    parts = [
        f"keyword #{kw.get('rank')} (bm25 {kw.get('bm25')} -> {kw.get('normalised')})"
        if kw.get("rank") or kw.get("bm25")
        else "keyword: no match",
        f"vector #{vec.get('rank')} (cos {vec.get('cosine')})"
        if vec.get("rank")
        else f"vector: cos {vec.get('cosine')}",
        f"fusion {ex.get('fusion')}",
    ]
    boosts = ex.get("boosts") or {}
    if boosts:
        parts.append("boosts " + " ".join(f"{k} x{v}" for k, v in boosts.items()))
    parts.append(f"= {ex.get('score')}")
    return " · ".join(parts)


@app.command()
def recall(
    query: str = typer.Argument(..., help="What to remember: a question or a few words."),
    kind: str | None = _KIND,
    limit: int | None = _LIMIT,
    type: str | None = _TYPE,
    category: str | None = _CATEGORY,
    tag: list[str] | None = _TAG,
    scope: str | None = _SCOPE,
    by_agent: str | None = _BY_AGENT,
    since: str | None = _SINCE,
    until: str | None = _UNTIL,
    as_of: str | None = _AS_OF,
    include_archive: bool = _ARCHIVE,
    include_superseded: bool = _SUPERSEDED,
    include_inbox: bool = _INBOX,
    explain: bool = _EXPLAIN,
    order: str | None = _ORDER,
    speaker: str | None = _SPEAKER,
    turn_role: str | None = _TURN_ROLE,
    json_out: bool = _JSON,
) -> None:
    """Recall memories, routed by intent: "when/what happened" -> episodes, "what is" ->
    facts, "how do I" -> procedures, "is it true that" -> validation (English, Portuguese,
    Russian, Ukrainian cues). --kind overrides the routing.

    Inside conversation transcripts each turn is a hit of its own, named
    <transcript id>#<turn id> (memvault show takes it); --speaker and --role keep one side.

    Example: memvault recall "when did we last deploy billing?"
    """
    vault = open_vault()
    result = vault.recall(
        query,
        **_given(
            kind=kind,
            limit=limit,
            type=type,
            category=category,
            tag=tag,
            scope=scope,
            by_agent=by_agent,
            since=since,
            until=until,
            as_of=as_of,
            include_archive=include_archive,
            include_superseded=include_superseded,
            include_inbox=include_inbox,
            explain=explain,
            order=order,
            speaker=speaker,
            turn_role=turn_role,
        ),
    )
    _show(result, json_out, explain)


@app.command()
def fact(
    query: str = typer.Argument(..., help="What to look up."),
    limit: int | None = _LIMIT,
    category: str | None = _CATEGORY,
    tag: list[str] | None = _TAG,
    scope: str | None = _SCOPE,
    by_agent: str | None = _BY_AGENT,
    since: str | None = _SINCE,
    until: str | None = _UNTIL,
    as_of: str | None = _AS_OF,
    include_archive: bool = _ARCHIVE,
    include_superseded: bool = _SUPERSEDED,
    include_inbox: bool = _INBOX,
    explain: bool = _EXPLAIN,
    json_out: bool = _JSON,
) -> None:
    """Look up known facts, decisions, definitions, relationships and constraints.

    Superseded facts are left out unless --include-superseded; --as-of answers with what
    was valid at that date. Example: memvault fact "api rate limit" --as-of 2026-01-01
    """
    vault = open_vault()
    result = vault.fact(
        query,
        **_given(
            limit=limit,
            category=category,
            tag=tag,
            scope=scope,
            by_agent=by_agent,
            since=since,
            until=until,
            as_of=as_of,
            include_archive=include_archive,
            include_superseded=include_superseded,
            include_inbox=include_inbox,
            explain=explain,
        ),
    )
    _show(result, json_out, explain)


@app.command()
def procedure(
    query: str = typer.Argument(..., help="The task you want to do."),
    limit: int | None = _LIMIT,
    category: str | None = _CATEGORY,
    tag: list[str] | None = _TAG,
    scope: str | None = _SCOPE,
    by_agent: str | None = _BY_AGENT,
    include_archive: bool = _ARCHIVE,
    include_inbox: bool = _INBOX,
    explain: bool = _EXPLAIN,
    json_out: bool = _JSON,
) -> None:
    """Find how-to knowledge (workflows, templates, patterns, heuristics), matched by trigger
    keywords and similarity and ranked by match and success rate.

    Example: memvault procedure "release a new version" --limit 3
    """
    vault = open_vault()
    result = vault.procedure(
        query,
        **_given(
            limit=limit,
            category=category,
            tag=tag,
            scope=scope,
            by_agent=by_agent,
            include_archive=include_archive,
            include_inbox=include_inbox,
            explain=explain,
        ),
    )
    _show(result, json_out, explain)


@app.command("search")
def search_(
    query: str = typer.Argument(..., help="Words or a question."),
    kind: str | None = _KIND,
    limit: int | None = _LIMIT,
    type: str | None = _TYPE,
    category: str | None = _CATEGORY,
    tag: list[str] | None = _TAG,
    scope: str | None = _SCOPE,
    by_agent: str | None = _BY_AGENT,
    since: str | None = _SINCE,
    until: str | None = _UNTIL,
    as_of: str | None = _AS_OF,
    include_archive: bool = _ARCHIVE,
    include_superseded: bool = _SUPERSEDED,
    include_inbox: bool = _INBOX,
    explain: bool = _EXPLAIN,
    order: str | None = _ORDER,
    speaker: str | None = _SPEAKER,
    turn_role: str | None = _TURN_ROLE,
    json_out: bool = _JSON,
) -> None:
    """Plain hybrid search (keywords + meaning) over every kind of memory, no intent routing.

    Example: memvault search "postgres jsonb" --type semantic --explain
    """
    vault = open_vault()
    result = vault.search(
        query,
        **_given(
            limit=limit,
            type=type or kind,
            category=category,
            tag=tag,
            scope=scope,
            by_agent=by_agent,
            since=since,
            until=until,
            as_of=as_of,
            include_archive=include_archive,
            include_superseded=include_superseded,
            include_inbox=include_inbox,
            explain=explain,
            order=order,
            speaker=speaker,
            turn_role=turn_role,
        ),
    )
    _show(result, json_out, explain)


@app.command()
def validate(
    statement: str = typer.Argument(
        ..., metavar="STATEMENT", help="The claim to check, as one sentence."
    ),
    as_of: str | None = _AS_OF,
    scope: str | None = _SCOPE,
    tag: list[str] | None = _TAG,
    explain: bool = _EXPLAIN,
    judge: bool = typer.Option(
        True,
        "--judge/--no-judge",
        help="Ask validate.judge_command, when one is set, for the verdict (default); "
        "--no-judge: the built-in rules only.",
    ),
    json_out: bool = _JSON,
) -> None:
    """Check a statement against known facts: supported, contradicted or unknown, with the
    fact and the slot that decide it.

    The statement and the facts are compared on their subject and slots: names and the
    alternatives a fact rejects ("PostgreSQL over MySQL"), numbers with units (200 ms is
    not 200 s), dates, times, weekdays, versions, permission (frozen vs preferred). Only
    facts in force decide; a statement of a superseded value is contradicted by the newer
    fact. "unknown" means no fact decides it, not "false". See docs/validate.md.

    Example: memvault validate "we deploy on Fridays"
    """
    vault = open_vault()
    result = vault.validate(
        statement,
        explain=explain,
        as_of=parse_when(as_of or None, "as-of"),
        scope=scope or None,
        tags=split_list(tag),
        judge=judge,
    )
    if json_out:
        emit_json(result.as_dict())
        return
    out = console()
    out.print(f"{result.verdict}: {result.why}", markup=False)
    for ev in result.evidence:
        out.print(f"  {ev.relation:11s} [{ev.hit.id}] {ev.hit.snippet}", markup=False)
        out.print(f"              {ev.why}", markup=False, style="dim")


@app.command()
def context(
    query: str = typer.Argument(..., metavar="QUERY", help="The task at hand, in a few words."),
    budget: int = typer.Option(
        1500, "--budget", "-b", help="Token budget for the block (~4 characters a token)."
    ),
    scope: str | None = _SCOPE,
    tag: list[str] | None = _TAG,
    since: str | None = _SINCE,
    until: str | None = _UNTIL,
    as_of: str | None = _AS_OF,
    include_archive: bool = _ARCHIVE,
    json_out: bool = _JSON,
) -> None:
    """Print a block of relevant memory to put in an agent's prompt: previous episodes, known
    facts, applicable procedures, active constraints -- most useful first, within the budget,
    saying what was left out.

    Example: memvault context "migrate billing to postgres" --budget 800
    """
    vault = open_vault()
    block = vault.context(
        query,
        budget=budget,
        **_given(
            scope=scope,
            tag=tag,
            since=since,
            until=until,
            as_of=as_of,
            include_archive=include_archive,
        ),
    )
    if json_out:
        emit_json(block.as_dict())
        return
    sys.stdout.write(block.text)


@app.command()
def reindex(
    full: bool = typer.Option(
        False, "--full", help="Rebuild the index from scratch (re-embeds everything)."
    ),
    json_out: bool = _JSON,
) -> None:
    """Bring the search index up to date with the files (only what changed is re-embedded).

    Searches do this by themselves; run it after big imports, or with --full to start over.
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
