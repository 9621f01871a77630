"""The search entry points: plain hybrid search, intent-routed recall, fact and procedure
lookups. Every call appends one line to the access log (``log=False`` to skip it)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Unpack

from .. import debug
from .accesslog import counted, log_read, strengths
from .engine import run
from .options import (
    SearchOptions,
    build_filter,
    check_limit,
    check_min_score,
    check_order,
    check_role,
    split_options,
)
from .ranking import Plan, Ranked
from .results import SearchResult
from .routing import Route, normalise_kind, route

if TYPE_CHECKING:  # pragma: no cover
    from ..store.repository import Repository


def _execute(
    vault: Repository,
    command: str,
    query: str,
    the_route: Route,
    options: SearchOptions,
    *,
    types: Sequence[str] = (),
    prefer: str | None = None,
    procedures: bool = False,
) -> SearchResult:
    started = time.perf_counter()
    if debug.current() is not None:  # debug mode traces this read
        debug.note("route", the_route.as_dict())
        debug.note("options", debug.plain({k: v for k, v in options.items() if v is not None}))
    fopts, rest = split_options(options)
    if the_route.since is not None and fopts.get("since") is None:
        fopts["since"] = the_route.since
    if the_route.until is not None and fopts.get("until") is None:
        fopts["until"] = the_route.until
    chosen, filt = build_filter(vault, fopts, types=types)
    window = the_route.window
    plan = Plan(
        types=chosen,
        filt=filt,
        limit=check_limit(vault, rest.get("limit")),
        prefer=prefer,
        order=check_order(rest.get("order") or the_route.order),
        explain=bool(rest.get("explain")),
        procedures=procedures,
        window=(window[0].timestamp(), window[1].timestamp()) if window else None,
        speaker=rest.get("speaker") or None,
        role=check_role(rest.get("role")),
        min_score=check_min_score(vault, rest.get("min_score")),
    )
    ranked = run(vault, query, plan) if chosen else Ranked([], 0.0)
    hits = ranked.hits
    ms = (time.perf_counter() - started) * 1000
    if rest.get("log", True):
        floor = plan.min_score
        log_read(vault, command, query, counted(hits, floor), ms, strengths(hits, floor))
    return SearchResult(
        query, command, the_route, tuple(hits), ms, ranked.note, plan.min_score, ranked.best
    )


def search(vault: Repository, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
    """Plain hybrid search over every kind of memory (no intent routing).

    Options (all keywords, see :class:`~memvault.search.options.SearchOptions`): ``limit``,
    ``kind``/``type``, ``category``, ``tags``, ``scope``, ``agent``, ``since``, ``until``,
    ``as_of``, ``include_archive``, ``include_superseded``, ``include_inbox``, ``status``,
    ``filters`` (a :class:`~memvault.scopes.Filters`), ``explain``, ``order``
    (relevance|time), ``log`` (write the access log, default True).
    """
    kind = normalise_kind(options.pop("kind", None))
    if kind and options.get("type") is None:
        options["type"] = kind
    the_route = Route("general", kind, cue=f"--kind {kind}" if kind else None)
    return _execute(vault, "search", query, the_route, options)


def recall(vault: Repository, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
    """Intent-routed recall: episodes first for "when/what happened", facts for "what is",
    procedures for "how do I"; other kinds still come back when they match much better.

    A "when"/"what happened" question with a time window ("last week") lists the episodes
    of that window newest first. ``kind`` forces one kind of memory. (A "Is it true that ..."
    question is validate's: :func:`memvault.validate.recall` routes it there first.)
    """
    kind = options.pop("kind", None)
    the_route = options.pop("route", None) or route(query, kind)
    if kind is not None:
        if options.get("type") is None:
            options["type"] = the_route.kind
        return _execute(vault, "recall", query, the_route, options)
    prefer = the_route.kind if the_route.intent != "general" else "episodic"
    procedures = the_route.intent == "procedural"
    return _execute(
        vault, "recall", query, the_route, options, prefer=prefer, procedures=procedures
    )


def fact(vault: Repository, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
    """Semantic lookup: facts, decisions, definitions, relationships, constraints.

    Superseded facts are left out unless ``include_superseded``; ``as_of`` answers with the
    facts valid at that time (``valid_from <= as_of < valid_to``).
    """
    options.pop("kind", None)
    the_route = Route("semantic", "semantic", cue="fact")
    return _execute(vault, "fact", query, the_route, options, types=("semantic",))


def procedure(vault: Repository, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
    """Procedures matched by trigger keywords and similarity, ranked by match and success rate."""
    options.pop("kind", None)
    the_route = Route("procedural", "procedural", cue="procedure")
    return _execute(
        vault, "procedure", query, the_route, options, types=("procedural",), procedures=True
    )
