"""Pages that read: browse, search, a memory, its history, the inbox, scopes, export."""

from __future__ import annotations

import datetime as dt
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from .. import SCOPES, TYPES, Listing
from ..errors import NotFoundError
from . import details
from .params import (
    MAX_QUERY,
    choice,
    facet_filters,
    flag,
    memory_id,
    notice,
    number,
    session_of,
    text,
    url,
)
from .render import markdown, turns

SEARCH_MODES = ("recall", "search", "fact", "procedure")
EXPORT_FORMATS = {"jsonl": ("jsonl", "application/x-ndjson"), "markdown": ("md", "text/markdown")}


def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    session = session_of(request)
    html = session.render(name, notice=notice(request.query_params), **context)
    return HTMLResponse(html, status)


def browse(request: Request) -> Response:
    """Every memory the identity may see, filtered by facets, sorted, one page at a time."""
    session = session_of(request)
    query = request.query_params
    filters = facet_filters(query)
    sort = choice(query.get("sort"), Listing.sorts, "sort") or "date"
    number_ = number(query.get("page"), "page", 1, 1_000_000, 1)
    with session.using():
        snap = session.listing.snapshot()
    result = snap.select(filters, sort, number_)
    state = {**filters, "sort": "" if sort == "date" else sort}

    def link(**changes: Any) -> str:
        return url("/", {**state, "page": "", **changes})

    facet_links = {
        facet: [
            (value, count, link(**{facet: value}), filters[facet] == value)
            for value, count in result.facets[facet]
        ]
        for facet in Listing.facets
    }
    return page(
        request,
        "browse.html",
        result=result,
        filters=filters,
        sort=sort,
        sorts=Listing.sorts,
        facets=facet_links,
        clear={f: link(**{f: ""}) for f in Listing.facets},
        sort_links={s: link(sort="" if s == "date" else s) for s in Listing.sorts},
        prev_link=link(page=result.page - 1) if result.page > 1 else None,
        next_link=link(page=result.page + 1) if result.page < result.pages else None,
        total=len(snap.rows),
    )


def search(request: Request) -> Response:
    """recall / search / fact / procedure, as the CLI runs them, with the explanation."""
    session = session_of(request)
    query = request.query_params
    q = text(query.get("q"), "q", MAX_QUERY, free=False).strip()
    mode = choice(query.get("mode"), SEARCH_MODES, "mode") or "recall"
    kind = choice(query.get("kind"), TYPES, "kind")
    scope = choice(query.get("scope"), SCOPES, "scope")
    archive = flag(query.get("archive"))
    limit = number(query.get("limit"), "limit", 1, 100, 20)
    result = None
    if q:
        # A person browsing is not an agent using a memory: no read is logged, so the
        # inspector never moves read counts or relevance.
        options: dict[str, Any] = {
            "limit": limit,
            "explain": True,
            "include_archive": archive,
            "log": False,
        }
        if kind and mode in ("recall", "search"):
            options["kind"] = kind
        if scope:
            options["scope"] = scope
        with session.using() as vault:
            result = getattr(vault, mode)(q, **options)
    return page(
        request,
        "search.html",
        q=q,
        mode=mode,
        modes=SEARCH_MODES,
        kind=kind,
        kinds=TYPES,
        scope=scope,
        scopes=SCOPES,
        archive=archive,
        result=result,
    )


def memory(request: Request) -> Response:
    """One memory: its text, front matter, supersede chain, links, history and relevance."""
    session = session_of(request)
    mid = memory_id(request.path_params["memory_id"])
    with session.using() as vault:
        try:
            m = vault.get(mid)
        except NotFoundError:
            # A forgotten or purged memory: its record (when, by whom, why), never its text.
            record = vault.forgotten(mid, 10)
            if record is None:
                raise
            return page(request, "forgotten.html", record=record)
        related, hidden = details.links(vault, [str(i) for i in m.meta.get("related") or []])
        context: dict[str, Any] = {
            "m": m,
            "body": markdown(m.content),
            "turns": turns(m),
            "meta": sorted(m.meta.items(), key=lambda kv: str(kv[0])),
            "chain": details.chain(vault, m),
            "related": related,
            "hidden_related": hidden,
            "commits": details.history(vault, m, 10),
            "why": details.relevance(vault, m),
            "in_inbox": m.path.startswith("inbox/"),
        }
    return page(request, "memory.html", **context)


def history(request: Request) -> Response:
    """A memory's git history, each commit with its diff."""
    session = session_of(request)
    mid = memory_id(request.path_params["memory_id"])
    with session.using() as vault:
        m = vault.get(mid)
        commits = details.history(vault, m, diffs=True)
    return page(request, "history.html", m=m, commits=commits)


def inbox(request: Request) -> Response:
    """Proposals awaiting review and open disputes, oldest first."""
    session = session_of(request)
    with session.using() as vault:
        items = [(m, markdown(m.content)) for m in vault.inbox()]
        disputes = [(d, [(m, markdown(m.content)) for m in d.facts]) for d in vault.disputes()]
    return page(request, "inbox.html", items=items, disputes=disputes)


def scopes(request: Request) -> Response:
    session = session_of(request)
    with session.using() as vault:
        now = vault.paused()
    scope_only = {r.scope for r in now if r.scope and not (r.agent or r.channel)}
    others = [r for r in now if r.agent or r.channel]
    return page(
        request,
        "scopes.html",
        scopes=[(s, s in scope_only) for s in SCOPES],
        others=others,
    )


def export(request: Request) -> Response:
    """The export page, or (with ``format``) the download itself."""
    session = session_of(request)
    query = request.query_params
    fmt = choice(query.get("format"), tuple(EXPORT_FORMATS), "format")
    if not fmt:
        return page(request, "export.html")
    archive = query.get("archive", "1") != "0"
    with session.using() as vault:
        body = vault.export(fmt, include_archive=archive)
    suffix, media = EXPORT_FORMATS[fmt]
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    return Response(
        body,
        media_type=f"{media}; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="memvault-{stamp}.{suffix}"'},
    )
