"""Hybrid search over the vault: keyword (SQLite FTS5) + vectors (Chroma), fused, weighted.

Entry points (also on :class:`~memvault.vault.Vault`): :func:`search` (plain),
:func:`recall` (routed by intent, :mod:`memvault.routing`), :func:`fact`,
:func:`procedure`, :func:`validate` (:mod:`memvault.validation`) and :func:`context`
(:mod:`memvault.context`). How a query is scored is in :mod:`memvault.ranking`.
Every call appends one line to the access log (``log=False`` to skip it).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import MemvaultError
from .memory import parse_time
from .ranking import WEIGHTS, Plan, SearchHit, query_vector, run, snippet, weights
from .routing import Route, normalise_kind, route

if TYPE_CHECKING:  # pragma: no cover
    from .index.query import IndexFilter
    from .vault import Filters, Vault

__all__ = [
    "WEIGHTS",
    "Plan",
    "SearchHit",
    "SearchResult",
    "build_filter",
    "check_limit",
    "context",
    "fact",
    "log_read",
    "procedure",
    "query_vector",
    "recall",
    "run",
    "search",
    "snippet",
    "validate",
    "warm",
    "weights",
]

DEFAULT_STATUSES = ("active", "disputed")


@dataclass(frozen=True)
class SearchResult:
    """The hits of one query (iterable), with the route taken and how long it took."""

    query: str
    command: str
    route: Route
    hits: tuple[SearchHit, ...]
    ms: float
    note: str | None = None

    def __iter__(self) -> Iterator[SearchHit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, i: int) -> SearchHit:
        return self.hits[i]

    @property
    def ids(self) -> list[str]:
        return [h.id for h in self.hits]

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query,
            "command": self.command,
            "route": self.route.as_dict(),
            "hits": [h.as_dict() for h in self.hits],
            "ms": round(self.ms, 1),
        }
        if self.note:
            out["note"] = self.note
        return out


# --- options -----------------------------------------------------------------------------


def check_limit(vault: Vault, limit: int | None) -> int:
    """``limit`` (default ``search.limit``) within 1..``limits.max_limit``."""
    if limit is None:
        limit = int(vault.config.get("search.limit", 10))
    top = int(vault.config.get("limits.max_limit", 1000))
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= top:
        raise MemvaultError(f"expected 1-{top} (limits.max_limit), got {limit!r}", key="limit")
    return limit


def _epoch(value: Any, key: str) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:
        parsed = parse_time(value)
    except ValueError as exc:
        raise MemvaultError(str(exc), key=key) from None
    return parsed.timestamp() if parsed else None


def build_filter(
    vault: Vault,
    *,
    types: Sequence[str] = (),
    filters: Filters | None = None,
    type: str | None = None,
    category: str | None = None,
    tags: Sequence[str] | str | None = None,
    scope: str | None = None,
    agent: str | None = None,
    status: str | None = None,
    since: Any = None,
    until: Any = None,
    as_of: Any = None,
    include_archive: bool = False,
    include_superseded: bool = False,
    include_inbox: bool = False,
    ids: Sequence[str] = (),
    extra: Sequence[tuple[str, tuple[Any, ...]]] = (),
) -> tuple[tuple[str, ...], IndexFilter]:
    """Merge keyword options and a :class:`~memvault.vault.Filters` into an index filter."""
    from .index.query import IndexFilter

    if filters is not None:
        type = type or filters.type
        category = category or filters.category
        tags = list(tags or []) + list(filters.tags)
        scope = scope or filters.scope
        agent = agent or filters.agent
        status = status or filters.status
        since = since if since is not None else filters.since
        until = until if until is not None else filters.until
        include_archive = include_archive or filters.include_archive
        include_inbox = include_inbox or filters.include_inbox
        ids = tuple(ids) + tuple(filters.ids)
    if isinstance(tags, str):
        tags = [tags]
    wanted = normalise_kind(type)
    chosen = tuple(types) if types else ("episodic", "semantic", "procedural")
    if wanted is not None:
        chosen = tuple(t for t in chosen if t == wanted)
    if status == "any":
        statuses: tuple[str, ...] = ()
    elif status:
        statuses = (status,)
    else:
        allowed = list(DEFAULT_STATUSES)
        if include_superseded or as_of is not None:
            allowed.append("superseded")
        if include_archive:
            allowed.append("archived")
        if include_inbox:
            allowed.append("proposed")
        statuses = tuple(allowed)
    if scope is not None and scope not in ("self", "team", "global"):
        raise MemvaultError(f"expected self|team|global, got {scope!r}", key="scope")
    identity = vault.identity
    filt = IndexFilter(
        types=chosen,
        category=category or None,
        tags=tuple(tags or ()),
        scope=scope,
        author=agent,
        statuses=statuses,
        since=_epoch(since, "since"),
        until=_epoch(until, "until"),
        as_of=_epoch(as_of, "as_of"),
        ids=tuple(ids),
        viewer_agent=identity.agent,
        viewer_team=identity.team,
        extra=tuple(extra),
    )
    return chosen, filt


# --- logging ---------------------------------------------------------------------------------


def log_read(vault: Vault, cmd: str, query: str, ids: Sequence[str], ms: float) -> None:
    from .accesslog import log_access

    log_access(vault.root, cmd, query, ids, ms, vault.identity.agent)


# --- public entry points --------------------------------------------------------------------


def _options(
    vault: Vault,
    options: Mapping[str, Any],
    types: Sequence[str] = (),
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split keyword options into filter options and the rest."""
    filter_keys = {
        "filters",
        "type",
        "category",
        "tags",
        "tag",
        "scope",
        "agent",
        "status",
        "since",
        "until",
        "as_of",
        "include_archive",
        "include_superseded",
        "include_inbox",
        "ids",
    }
    known = filter_keys | {"limit", "explain", "order", "log", "kind", "route"}
    unknown = set(options) - known
    if unknown:
        raise TypeError(f"unknown search option(s): {', '.join(sorted(unknown))}")
    fopts = {k: v for k, v in options.items() if k in filter_keys}
    if "tag" in fopts:
        tag = fopts.pop("tag")
        fopts["tags"] = [tag] if isinstance(tag, str) else list(tag or [])
    rest = {k: v for k, v in options.items() if k not in filter_keys}
    return fopts, rest


def _execute(
    vault: Vault,
    command: str,
    query: str,
    the_route: Route,
    options: Mapping[str, Any],
    *,
    types: Sequence[str] = (),
    prefer: str | None = None,
    procedures: bool = False,
) -> SearchResult:
    started = time.perf_counter()
    fopts, rest = _options(vault, options)
    if the_route.since is not None and fopts.get("since") is None:
        fopts["since"] = the_route.since
    if the_route.until is not None and fopts.get("until") is None:
        fopts["until"] = the_route.until
    chosen, filt = build_filter(vault, types=types, **fopts)
    order = rest.get("order") or the_route.order
    if order not in ("relevance", "time"):
        raise MemvaultError(f"expected relevance|time, got {order!r}", key="order")
    plan = Plan(
        types=chosen,
        filt=filt,
        limit=check_limit(vault, rest.get("limit")),
        prefer=prefer,
        order=order,
        explain=bool(rest.get("explain")),
        procedures=procedures,
        window=(the_route.window[0].timestamp(), the_route.window[1].timestamp())
        if the_route.window
        else None,
    )
    hits, note = run(vault, query, plan) if chosen else ([], None)
    ms = (time.perf_counter() - started) * 1000
    if rest.get("log", True):
        log_read(vault, command, query, [h.id for h in hits], ms)
    return SearchResult(query, command, the_route, tuple(hits), ms, note)


def search(vault: Vault, query: str, **options: Any) -> SearchResult:
    """Plain hybrid search over every kind of memory (no intent routing).

    Options: ``limit``, ``kind``/``type``, ``category``, ``tags``, ``scope``, ``agent``,
    ``since``, ``until``, ``as_of``, ``include_archive``, ``include_superseded``,
    ``include_inbox``, ``status``, ``filters`` (a :class:`~memvault.vault.Filters`),
    ``explain``, ``order`` (relevance|time), ``log`` (write the access log, default True).
    """
    kind = normalise_kind(options.pop("kind", None))
    if kind:
        options.setdefault("type", kind)
    the_route = Route("general", kind, cue=f"--kind {kind}" if kind else None)
    return _execute(vault, "search", query, the_route, options)


def recall(vault: Vault, query: str, **options: Any) -> SearchResult:
    """Intent-routed recall: episodes first for "when/what happened", facts for "what is",
    procedures for "how do I"; other kinds still come back when they match much better.

    A "when"/"what happened" question with a time window ("last week") lists the episodes
    of that window newest first. "Is it true that ..." runs :func:`validate` and returns
    its evidence as hits (the verdict is in the note). ``kind`` forces one kind of memory.
    """
    kind = options.pop("kind", None)
    the_route = options.pop("route", None) or route(query, kind)
    if the_route.intent == "validate" and kind is None:
        from .validation import validate as run_validate

        verdict = run_validate(
            vault, query, **{k: v for k, v in options.items() if k in ("explain", "as_of", "log")}
        )
        return SearchResult(
            query,
            "recall",
            the_route,
            verdict.hits,
            verdict.ms,
            f"{verdict.verdict}: {verdict.why}",
        )
    if kind is not None:
        options.setdefault("type", the_route.kind)
        return _execute(vault, "recall", query, the_route, options)
    prefer = the_route.kind if the_route.intent != "general" else "episodic"
    return _execute(
        vault,
        "recall",
        query,
        the_route,
        options,
        prefer=prefer,
        procedures=the_route.intent == "procedural",
    )


def fact(vault: Vault, query: str, **options: Any) -> SearchResult:
    """Semantic lookup: facts, decisions, definitions, relationships, constraints.

    Superseded facts are left out unless ``include_superseded``; ``as_of`` answers with the
    facts valid at that time (``valid_from <= as_of < valid_to``).
    """
    options.pop("kind", None)
    the_route = Route("semantic", "semantic", cue="fact")
    return _execute(vault, "fact", query, the_route, options, types=("semantic",))


def procedure(vault: Vault, query: str, **options: Any) -> SearchResult:
    """Procedures matched by trigger keywords and similarity, ranked by match and success rate."""
    options.pop("kind", None)
    the_route = Route("procedural", "procedural", cue="procedure")
    return _execute(
        vault, "procedure", query, the_route, options, types=("procedural",), procedures=True
    )


def validate(vault: Vault, statement: str, **options: Any) -> Any:
    """Does ``statement`` agree with, contradict, or lack support in known facts?
    See :func:`memvault.validation.validate`."""
    from .validation import validate as run_validate

    return run_validate(vault, statement, **options)


def context(vault: Vault, query: str, budget: int = 1500, **options: Any) -> Any:
    """A prompt block of the most useful memories within ``budget`` tokens.
    See :func:`memvault.context.context`."""
    from .context import context as run_context

    return run_context(vault, query, budget=budget, **options)


def warm(vault: Vault) -> None:
    """Load the embedder and open the index now (a server calls this at start): the vectors
    into memory for a small index, the Chroma collections for a large one."""
    from .index import ensure_fresh
    from .index.handle import TYPES

    idx = ensure_fresh(vault)
    query_vector(vault, "warm up")
    with idx.lock:
        for doc_type in TYPES:
            if not idx.chunk_count(doc_type):
                continue
            if idx.in_memory:
                idx.memory_vectors(doc_type)
            else:
                idx.collection(doc_type)
        idx.chunk_docs()
