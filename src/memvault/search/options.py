"""A query's options: the keywords every search entry point takes, checked and turned into
an index filter (what the reader may see, status, kind, dates, tags)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from ..errors import MemvaultError
from ..memory import SCOPES, parse_time
from ..paths import MEMORY_TYPES
from .routing import Route, normalise_kind

if TYPE_CHECKING:  # pragma: no cover
    from ..index.filters import IndexFilter
    from ..scopes import Filters
    from ..store.repository import Repository

DEFAULT_STATUSES = ("active", "disputed")
ORDERS = ("relevance", "time")


class FilterOptions(TypedDict, total=False):
    """Which memories a query may return (all optional)."""

    filters: Filters | None  # a Filters value, merged with the keywords below
    type: str | None  # episodic|semantic|procedural (or episode|fact|procedure)
    category: str | None
    tags: Sequence[str] | str | None  # has all of these
    tag: Sequence[str] | str | None  # the same as ``tags``
    scope: str | None  # self|team|global, among those the reader may see
    agent: str | None  # written by this agent
    status: str | None  # one status, or "any"
    since: Any  # created on/after: a datetime, ISO text or epoch seconds
    until: Any  # created on/before
    as_of: Any  # facts valid at that time (superseded ones included)
    include_archive: bool
    include_superseded: bool
    include_inbox: bool
    ids: Sequence[str]  # only these ids


class SearchOptions(FilterOptions, total=False):
    """The keywords of ``search``, ``recall``, ``fact``, ``procedure`` and ``context``."""

    limit: int | None  # at most this many hits (default ``search.limit``)
    kind: str | None  # recall: force one kind of memory; search: same as ``type``
    explain: bool  # attach the score breakdown to every hit
    order: str | None  # relevance|time
    log: bool  # append the read to the access log (default True)
    route: Route | None  # recall: a route already computed for this query
    speaker: str | None  # only what this speaker said (a transcript turn's name, any case)
    role: str | None  # only transcript turns of this role: user|assistant|system|tool
    min_score: float | None  # relevance floor 0..1 (default search.min_score, else the model's)


class ValidateOptions(FilterOptions, total=False):
    """The keywords of ``validate``."""

    limit: int | None  # facts weighed (default 8)
    kind: str | None  # ignored: validate weighs facts
    explain: bool
    log: bool
    judge: bool  # False: don't ask validate.judge_command


FILTER_KEYS = frozenset(FilterOptions.__annotations__)
SEARCH_KEYS = frozenset(SearchOptions.__annotations__) | FILTER_KEYS


def check_keys(options: object, allowed: frozenset[str]) -> None:
    """A misspelt keyword is a programming error: say which, like a Python call would."""
    unknown = set(options if isinstance(options, dict) else ()) - allowed
    if unknown:
        raise TypeError(f"unknown search option(s): {', '.join(sorted(unknown))}")


def split_options(options: SearchOptions) -> tuple[FilterOptions, SearchOptions]:
    """The filter keywords (``tag`` folded into ``tags``) and the rest."""
    check_keys(options, SEARCH_KEYS)
    fopts: dict[str, Any] = {k: v for k, v in options.items() if k in FILTER_KEYS}
    if "tag" in fopts:
        tag = fopts.pop("tag")
        fopts["tags"] = [tag] if isinstance(tag, str) else list(tag or [])
    rest: dict[str, Any] = {k: v for k, v in options.items() if k not in FILTER_KEYS}
    return FilterOptions(**fopts), SearchOptions(**rest)  # type: ignore[typeddict-item]


def check_limit(vault: Repository, limit: int | None) -> int:
    """``limit`` (default ``search.limit``) within 1..``limits.max_limit``."""
    if limit is None:
        limit = int(vault.config.get("search.limit", 10))
    top = int(vault.config.get("limits.max_limit", 1000))
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= top:
        raise MemvaultError(f"expected 1-{top} (limits.max_limit), got {limit!r}", key="limit")
    return limit


def check_min_score(vault: Repository, given: float | None) -> float:
    """The relevance floor: ``given``, else config ``search.min_score``, else the vault
    embedder's ``relevance_floor`` (measured per model: ``docs/retrieval.md``), else 0."""
    from ..paths import CONFIG_PATH

    if given is not None:
        value, where, key = given, None, "min_score"
    elif vault.config.get("search.min_score") is not None:
        value, where, key = vault.config.get("search.min_score"), CONFIG_PATH, "search.min_score"
    else:
        from ..index.manifest import embedder_for

        return float(getattr(embedder_for(vault), "relevance_floor", 0.0))
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or not 0.0 <= float(value) <= 1.0:
        raise MemvaultError(f"expected a number from 0 to 1, got {value!r}", where, key)
    return float(value)


ROLES = ("user", "assistant", "system", "tool")


def check_role(role: str | None) -> str | None:
    if role is not None and role not in ROLES:
        raise MemvaultError(f"expected {'|'.join(ROLES)}, got {role!r}", key="role")
    return role


def check_order(order: str | None) -> str:
    if order not in ORDERS:
        raise MemvaultError(f"expected {'|'.join(ORDERS)}, got {order!r}", key="order")
    return order


def epoch(value: Any, key: str) -> float | None:
    """A time option as epoch seconds (None when not given)."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:
        parsed = parse_time(value)
    except ValueError as exc:
        raise MemvaultError(str(exc), key=key) from None
    return parsed.timestamp() if parsed else None


def _statuses(opts: FilterOptions) -> tuple[str, ...]:
    status = opts.get("status")
    if status == "any":
        return ()
    if status:
        return (status,)
    allowed = list(DEFAULT_STATUSES)
    if opts.get("include_superseded") or opts.get("as_of") is not None:
        allowed.append("superseded")
    if opts.get("include_archive"):
        allowed.append("archived")
    if opts.get("include_inbox"):
        allowed.append("proposed")
    return tuple(allowed)


def _merge_filters(opts: FilterOptions) -> FilterOptions:
    """Keywords win over the fields of a :class:`~memvault.scopes.Filters` value."""
    merged = FilterOptions(**opts)
    tags = merged.get("tags")
    merged["tags"] = [tags] if isinstance(tags, str) else list(tags or [])
    filters = merged.pop("filters", None)
    if filters is None:
        return merged
    merged["type"] = merged.get("type") or filters.type
    merged["category"] = merged.get("category") or filters.category
    merged["tags"] = [*(merged.get("tags") or ()), *filters.tags]
    merged["scope"] = merged.get("scope") or filters.scope
    merged["agent"] = merged.get("agent") or filters.agent
    merged["status"] = merged.get("status") or filters.status
    if merged.get("since") is None:
        merged["since"] = filters.since
    if merged.get("until") is None:
        merged["until"] = filters.until
    merged["include_archive"] = bool(merged.get("include_archive")) or filters.include_archive
    merged["include_inbox"] = bool(merged.get("include_inbox")) or filters.include_inbox
    merged["ids"] = (*merged.get("ids", ()), *filters.ids)
    return merged


def build_filter(
    vault: Repository,
    opts: FilterOptions,
    *,
    types: Sequence[str] = (),
    exclude_category: str | None = None,
) -> tuple[tuple[str, ...], IndexFilter]:
    """The kinds to search and the index filter for ``opts``, seen as ``vault``'s reader."""
    from ..index.filters import IndexFilter

    opts = _merge_filters(opts)
    wanted = normalise_kind(opts.get("type"))
    chosen = tuple(types) if types else MEMORY_TYPES
    if wanted is not None:
        chosen = tuple(t for t in chosen if t == wanted)
    scope = opts.get("scope")
    if scope is not None and scope not in SCOPES:
        raise MemvaultError(f"expected {'|'.join(SCOPES)}, got {scope!r}", key="scope")
    identity = vault.identity
    filt = IndexFilter(
        types=chosen,
        category=opts.get("category") or None,
        exclude_category=exclude_category,
        tags=tuple(opts.get("tags") or ()),
        scope=scope,
        author=opts.get("agent"),
        statuses=_statuses(opts),
        since=epoch(opts.get("since"), "since"),
        until=epoch(opts.get("until"), "until"),
        as_of=epoch(opts.get("as_of"), "as_of"),
        ids=tuple(opts.get("ids") or ()),
        viewer_agent=identity.agent,
        viewer_team=identity.team,
    )
    return chosen, filt
