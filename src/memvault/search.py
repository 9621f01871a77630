"""Hybrid search over the vault: keyword (SQLite FTS5) + vectors (Chroma), fused, weighted.

Entry points (also on :class:`~memvault.vault.Vault`): :func:`search` (plain),
:func:`recall` (routed by intent), :func:`fact`, :func:`procedure`, and in their own
modules :func:`memvault.validation.validate` and :func:`memvault.context.context`.

How a query is scored (the recipe measured on LoCoMo, see ``bench/locomo.py``):

1. filters become SQL: what the reader may see, status, type, dates, tags;
2. keyword leg: the query's content words as an FTS5 OR-query (stemmed), BM25 over the
   memory's head, body and its session neighbours' text (weights 1, 1, 0.5);
3. vector leg: cosine of the query to each chunk (MiniLM by default);
4. each chunk of either leg's top list gets both scores; fused score =
   ``bm25 / best bm25 + 2.0 * cosine (+ 0.2 if the query names the memory's speaker)``;
   a memory scores as its best chunk;
5. boosts: importance, recency (episodes), relevance (decay), success rate (procedures),
   and the route's preference for one kind of memory.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import MemvaultError
from .memory import Memory, now_utc, parse_time
from .routing import Route, normalise_kind, route

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .index.handle import Index
    from .index.query import IndexFilter
    from .vault import Filters, Vault

DEFAULT_STATUSES = ("active", "disputed")

# Fusion and boost weights (config ``search.weights.*`` overrides them).
WEIGHTS: dict[str, float] = {
    "dense": 2.0,  # cosine weight against max-normalised BM25
    "speaker": 0.2,  # the query names who said it
    "date": 0.3,  # the memory is dated within a date the query names ("in May 2023")
    "importance": 0.05,  # per importance step away from 3
    "recency": 0.1,  # episodes: up to +10 % when brand new, half of it after half_life_days
    "half_life_days": 30.0,
    "relevance": 0.2,  # consolidation's decayed relevance (0..1): up to -20 %
    "success": 0.3,  # procedures: success_rate 1.0 -> +15 %, 0.0 -> -15 %
    "trigger": 0.3,  # procedures: a trigger keyword appears in the query
    "fallback": 0.7,  # kinds the route does not prefer
    "pool": 2.0,  # each leg contributes max(100, pool * limit) chunks
}


@dataclass(frozen=True)
class SearchHit:
    """One memory found: what it is, where it lives, why it matched."""

    id: str
    path: str
    type: str
    category: str
    title: str
    snippet: str
    score: float
    status: str
    scope: str
    created: str | None
    memory: Memory | None = field(default=None, compare=False, repr=False)
    explain: Mapping[str, Any] | None = field(default=None, compare=False)

    @property
    def kind(self) -> str:
        return self.type

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "path": self.path,
            "type": self.type,
            "kind": self.type,
            "category": self.category,
            "title": self.title,
            "snippet": self.snippet,
            "score": round(self.score, 4),
            "status": self.status,
            "scope": self.scope,
            "created": self.created,
        }
        meta = self.memory.meta if self.memory is not None else {}
        for key in (
            "subject",
            "valid_from",
            "valid_to",
            "superseded_by",
            "outcome",
            "success_rate",
            "confidence",
            "tags",
        ):
            if meta.get(key) not in (None, "", []):
                out[key] = meta[key]
        if self.explain is not None:
            out["explain"] = dict(self.explain)
        return out


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


@dataclass(frozen=True)
class Plan:
    """A query's resolved options (the public functions take keywords and build one)."""

    types: tuple[str, ...]
    filt: IndexFilter
    limit: int
    prefer: str | None = None  # kind the route prefers (others get the fallback weight)
    order: str = "relevance"
    explain: bool = False
    procedures: bool = False  # weigh success_rate and triggers
    window: tuple[float, float] | None = None  # a period the query names in passing (epoch s)


# --- options -----------------------------------------------------------------------------


def weights(vault: Vault) -> dict[str, float]:
    out = dict(WEIGHTS)
    custom = vault.config.get("search.weights") or {}
    if isinstance(custom, Mapping):
        for key, value in custom.items():
            if key in out and isinstance(value, (int, float)) and not isinstance(value, bool):
                out[key] = float(value)
    return out


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


# --- dates named in a query ------------------------------------------------------------------

_MONTH_NAMES = "january february march april may june july august september october november december"
_MONTHS = {m: i for i, m in enumerate(_MONTH_NAMES.split(), 1)}
_DATE_RE = re.compile(
    r"\b(?:(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?)?(january|february|march|april|may|june|july|august|september"
    r"|october|november|december)(?:\s+(\d{1,2})(?:st|nd|rd|th)?)?(?:,?\s+(\d{4}))?\b",
    re.I,
)
_ISO_RE = re.compile(r"\b(\d{4})-(\d{2})(?:-(\d{2}))?\b")
AFTER_DAYS = 14  # memories are often written days after what they tell


@dataclass(frozen=True)
class DateHint:
    """A date the query names: a month (and day, and year when given)."""

    month: int
    day: int | None
    year: int | None

    def matches(self, when: float | None) -> bool:
        """Is a memory dated ``when`` (epoch s) in [the date, its end + 14 days]? A missing
        year matches that date in any year."""
        import datetime as dt

        if when is None:
            return False
        created = dt.datetime.fromtimestamp(when, dt.UTC).date()
        for year in [self.year] if self.year else [created.year, created.year - 1]:
            try:
                start = dt.date(year, self.month, self.day or 1)
            except ValueError:
                return False
            if self.day:
                end = start
            else:
                end = dt.date(year + (self.month == 12), self.month % 12 + 1, 1) - dt.timedelta(
                    days=1
                )
            if start <= created <= end + dt.timedelta(days=AFTER_DAYS):
                return True
        return False


def date_hint(query: str) -> DateHint | None:
    """The first explicit date in ``query`` ("8 May 2023", "in March", "2024-03"); a bare
    "may" is the verb, not the month."""
    m = _ISO_RE.search(query)
    if m:
        month = int(m.group(2))
        if 1 <= month <= 12:
            return DateHint(month, int(m.group(3)) if m.group(3) else None, int(m.group(1)))
    m = _DATE_RE.search(query)
    if not m:
        return None
    d1, month, d2, year = m.groups()
    if month.lower() == "may" and not (d1 or d2 or year) and (month != "May" or m.start(2) == 0):
        return None  # "may" is the verb; "in May" (capitalised, mid-sentence) is the month
    day = d1 or d2
    return DateHint(_MONTHS[month.lower()], int(day) if day else None, int(year) if year else None)


# --- the engine -----------------------------------------------------------------------------


@dataclass
class _Doc:
    key: int
    rowid: int  # best chunk
    bm25: float = 0.0
    cosine: float = -1.0
    kw_rank: int | None = None
    vec_rank: int | None = None
    base: float = 0.0
    score: float = 0.0
    boosts: dict[str, float] = field(default_factory=dict)
    row: tuple[Any, ...] = ()
    own_cosine: float = 0.0
    context_cosine: float | None = None


_DOC_FIELDS = (
    "key",
    "path",
    "id",
    "type",
    "category",
    "scope",
    "status",
    "created",
    "importance",
    "relevance",
    "success_rate",
    "speakers",
    "title",
    "agent",
    "team",
    "triggers",
)


def query_vector(vault: Vault, query: str) -> np.ndarray:
    from .index.handle import embedder_for

    return embedder_for(vault).embed_query(query)


def run(
    vault: Vault,
    query: str,
    plan: Plan,
    *,
    index: Index | None = None,
    qvec: np.ndarray | None = None,
) -> tuple[list[SearchHit], str | None]:
    """Score ``query`` under ``plan``; the hits best first and a note (stale index, ...)."""
    import sqlite3

    from .index import ensure_fresh

    if not query or not query.strip():
        raise MemvaultError("empty query: say what to look for", key="query")
    pending = None
    if qvec is None:
        # Embed the query while the index is being checked: in a fresh process loading the
        # model is most of the wait, and it runs largely outside the GIL.
        pending = _Background(query_vector, vault, query)
    idx = index or ensure_fresh(vault)
    if pending is not None:
        qvec = pending.result()
    try:
        return _score(vault, idx, query, plan, qvec), idx.note
    except sqlite3.DatabaseError:
        # The index broke under us (deleted or garbled while open): rebuild once and retry.
        from .index.handle import forget_open_index

        forget_open_index(vault.root)
        _damaged(vault)
        idx = ensure_fresh(vault)
        return _score(vault, idx, query, plan, qvec), idx.note


class _Background:
    """Run ``fn(*args)`` in a thread; ``result()`` waits for it (and re-raises its error)."""

    def __init__(self, fn: Any, *args: Any) -> None:
        import threading

        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn, args), daemon=True)
        self._thread.start()

    def _run(self, fn: Any, args: tuple[Any, ...]) -> None:
        try:
            self._value = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            self._error = exc

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def _damaged(vault: Vault) -> None:
    from .index import store

    store.remove_all(vault.root)


def _score(
    vault: Vault, idx: Index, query: str, plan: Plan, qvec: np.ndarray | None
) -> list[SearchHit]:
    import numpy as np

    from .index import query as iq

    w = weights(vault)
    pool = max(100, int(w["pool"] * plan.limit))
    tokens = iq.query_tokens(query)
    expr = iq.match_expression(tokens)
    with idx.lock:
        kw = iq.keyword_leg(idx, expr, plan.filt, pool) if expr else []
        if qvec is None:
            qvec = query_vector(vault, query)
        try:
            vec, how = iq.vector_leg(idx, qvec, plan.filt, plan.types, pool)
        except Exception as exc:  # noqa: BLE001 - Chroma failing must not fail the search
            vec, how = (
                _exact_fallback(idx, qvec, plan, pool),
                f"exact (vector store error: {type(exc).__name__})",
            )
        chunks: dict[int, list[float]] = {}  # rowid -> [bm25, cosine]
        doc_of: dict[int, int] = {}
        for rowid, doc, score in kw:
            chunks[rowid] = [score, math.nan]
            doc_of[rowid] = doc
        for rowid, doc, cos in vec:
            chunks.setdefault(rowid, [0.0, math.nan])[1] = cos
            doc_of[rowid] = doc
        if not chunks:
            return []
        # A chunk outside the keyword leg's top list counts as no keyword match: scoring
        # those exactly costs a second FTS5 query and changed nothing on LoCoMo (71.8/89.0).
        missing_vec = [r for r, v in chunks.items() if math.isnan(v[1])]
        if missing_vec:
            stored = iq.vectors(idx, missing_vec)
            q = np.asarray(qvec, dtype=np.float32)
            for rowid in missing_vec:
                vec_r = stored.get(rowid)
                chunks[rowid][1] = float(vec_r @ q) if vec_r is not None else 0.0
        context = _context_cosines(idx, list(chunks), qvec)
        keys = sorted(set(doc_of.values()))
        rows = _doc_rows(idx, keys)
    best_bm25 = max((v[0] for v in chunks.values()), default=0.0)
    names = set(tokens)
    kw_rank_doc: dict[int, int] = {}
    for rank, (_, doc, _) in enumerate(kw, 1):
        kw_rank_doc.setdefault(doc, rank)
    vec_rank_doc: dict[int, int] = {}
    for rank, (_, doc, _) in enumerate(vec, 1):
        vec_rank_doc.setdefault(doc, rank)
    hint = date_hint(query)
    docs: dict[int, _Doc] = {}
    for rowid, (bm25, own) in chunks.items():
        # A memory with session neighbours also has a vector of itself in context: the
        # dense score is the mean of both (LoCoMo: +1.5 turn R@5).
        ctx_cos = context.get(rowid)
        cos = own if ctx_cos is None else (own + ctx_cos) / 2
        key = doc_of[rowid]
        row = rows.get(key)
        if row is None:
            continue
        speakers = row[11] or ""
        named = bool(speakers) and any(f"|{n}|" in speakers for n in names)
        created = row[7]
        dated = (hint is not None and hint.matches(created)) or (
            plan.window is not None
            and created is not None
            and plan.window[0] <= created <= plan.window[1] + 86400
        )
        # Cosine is clipped at 0 so that the multiplicative boosts below stay monotone.
        base = (
            (bm25 / best_bm25 if best_bm25 > 0 else 0.0)
            + w["dense"] * max(cos, 0.0)
            + (w["speaker"] if named else 0.0)
            + (w["date"] if dated else 0.0)
        )
        doc = docs.get(key)
        if doc is None or base > doc.base:
            docs[key] = _Doc(
                key, rowid, bm25, cos, kw_rank_doc.get(key), vec_rank_doc.get(key), base, row=row
            )
            docs[key].own_cosine, docs[key].context_cosine = own, ctx_cos
    # Nothing in common at all (no keyword, no positive similarity): not a result -- except
    # in a timeline ("what happened last week?"), where being in the window is the match.
    if plan.order != "time":
        docs = {k: d for k, d in docs.items() if d.base > 0}
    now = now_utc().timestamp()
    lowered = " ".join(query.lower().split())
    for doc in docs.values():
        doc.score = doc.base * _boosts(doc, plan, w, now, lowered)
    ranked = sorted(docs.values(), key=lambda d: (-d.score, d.row[1]))
    hits = _materialise(vault, idx, ranked, plan, tokens, best_bm25, how)
    if plan.order == "time":
        hits.sort(key=lambda h: h.created or "", reverse=True)
    return hits


def _exact_fallback(
    idx: Index, qvec: np.ndarray, plan: Plan, k: int
) -> list[tuple[int, int, float]]:
    import numpy as np

    from .index import query as iq

    out: list[tuple[int, int, float]] = []
    for doc_type in plan.types:
        pairs = iq.all_allowed_chunks(idx, plan.filt, doc_type)
        stored = iq.vectors(idx, [r for r, _ in pairs])
        for rowid, doc in pairs:
            v = stored.get(rowid)
            if v is not None:
                out.append((rowid, doc, float(v @ np.asarray(qvec, dtype=np.float32))))
    out.sort(key=lambda x: (-x[2], x[0]))
    return out[:k]


def _context_cosines(idx: Index, rowids: Sequence[int], qvec: np.ndarray) -> dict[int, float]:
    """Cosine of the query to each chunk's context vector (chunks that have one)."""
    import numpy as np

    out: dict[int, float] = {}
    q = np.asarray(qvec, dtype=np.float32)
    size = idx.dimensions * 4
    for start in range(0, len(rowids), 500):
        part = list(rowids[start : start + 500])
        sql = f"SELECT rowid, cvec FROM chunks WHERE rowid IN ({','.join('?' * len(part))}) AND cvec IS NOT NULL"
        for rowid, blob in idx.conn.execute(sql, part):
            if len(blob) == size:
                out[int(rowid)] = float(np.frombuffer(blob, dtype=np.float32) @ q)
    return out


def _doc_rows(idx: Index, keys: Sequence[int]) -> dict[int, tuple[Any, ...]]:
    out: dict[int, tuple[Any, ...]] = {}
    cols = ", ".join(_DOC_FIELDS)
    for start in range(0, len(keys), 500):
        part = list(keys[start : start + 500])
        sql = f"SELECT {cols} FROM docs WHERE key IN ({','.join('?' * len(part))})"
        for row in idx.conn.execute(sql, part):
            out[int(row[0])] = tuple(row)
    return out


def _boosts(doc: _Doc, plan: Plan, w: Mapping[str, float], now: float, query: str) -> float:
    row = doc.row
    doc_type, created, importance, relevance, success = row[3], row[7], row[8], row[9], row[10]
    factor = 1.0
    boosts = doc.boosts
    if importance is not None and importance != 3:
        boosts["importance"] = 1.0 + w["importance"] * (int(importance) - 3)
    if doc_type == "episodic" and created is not None:
        age_days = max(0.0, (now - float(created)) / 86400)
        bonus = w["recency"] * 0.5 ** (age_days / max(w["half_life_days"], 1e-6))
        if bonus > 1e-4:
            boosts["recency"] = 1.0 + bonus
    if relevance is not None:
        boosts["relevance"] = 1.0 - w["relevance"] * (1.0 - max(0.0, min(1.0, float(relevance))))
    if doc_type == "procedural" and (plan.procedures or success is not None):
        rate = 0.5 if success is None else max(0.0, min(1.0, float(success)))
        boosts["success_rate"] = 1.0 + w["success"] * (rate - 0.5)
        if plan.procedures and _trigger_hit(row, query):
            boosts["trigger"] = 1.0 + w["trigger"]
    if plan.prefer and doc_type != plan.prefer:
        boosts["route"] = w["fallback"]
    for value in boosts.values():
        factor *= value
    return factor


def _trigger_hit(row: tuple[Any, ...], query: str) -> bool:
    """A procedure's trigger keyword (or phrase) appears in the query."""
    triggers = row[15] or ""
    for word in triggers.strip("|").split("|"):
        word = " ".join(word.lower().split())
        if word and re.search(r"(?<!\w)" + re.escape(word) + r"(?!\w)", query):
            return True
    return False


def _materialise(
    vault: Vault,
    idx: Index,
    ranked: Sequence[_Doc],
    plan: Plan,
    tokens: Sequence[str],
    best_bm25: float,
    how: str,
) -> list[SearchHit]:
    """The top documents as hits. The memory comes from the index (as of its last update,
    like the ranking itself): parsing the files again would cost ~5 ms a hit."""
    import json

    top = list(ranked[: plan.limit])
    keys = [d.key for d in top]
    stored: dict[int, str] = {}
    bodies: dict[int, str] = {}
    with idx.lock:
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            marks = ",".join("?" * len(part))
            stored.update(
                idx.conn.execute(
                    f"SELECT key, doc FROM docs WHERE key IN ({marks})", part
                ).fetchall()
            )
        rowids = [d.rowid for d in top]
        for start in range(0, len(rowids), 500):
            part = rowids[start : start + 500]
            marks = ",".join("?" * len(part))
            bodies.update(
                idx.conn.execute(
                    f"SELECT rowid, body FROM fts WHERE rowid IN ({marks})", part
                ).fetchall()
            )
    hits: list[SearchHit] = []
    for doc in top:
        raw = stored.get(doc.key)
        if raw is None:
            continue
        data = json.loads(raw)
        memory = Memory(data["id"], data["type"], doc.row[1], data["meta"], data["content"])
        if not vault.identity.can_see(memory):
            continue  # belt and braces: the SQL filter already excluded it
        explain = None
        if plan.explain:
            explain = {
                "keyword": {
                    "rank": doc.kw_rank,
                    "bm25": round(doc.bm25, 4),
                    "normalised": round(doc.bm25 / best_bm25, 4) if best_bm25 > 0 else 0.0,
                },
                "vector": {
                    "rank": doc.vec_rank,
                    "cosine": round(doc.cosine, 4),
                    "own": round(doc.own_cosine, 4),
                    "in_context": None if doc.context_cosine is None else round(doc.context_cosine, 4),
                },
                "fusion": round(doc.base, 4),
                "boosts": {k: round(v, 4) for k, v in doc.boosts.items()},
                "score": round(doc.score, 4),
                "chunk": doc.rowid,
                "vector_search": how,
            }
        created = memory.created
        hits.append(
            SearchHit(
                id=memory.id,
                path=memory.path,
                type=memory.type,
                category=memory.category,
                title=memory.title,
                snippet=snippet(str(bodies.get(doc.rowid, "")), tokens),
                score=doc.score,
                status=memory.status,
                scope=memory.scope,
                created=created.strftime("%Y-%m-%dT%H:%M:%SZ") if created else None,
                memory=memory,
                explain=explain,
            )
        )
    return hits


_DATE_PREFIX = re.compile(r"^\[[^\]]{1,40}\]\s*")
_WORD = re.compile(r"\w+", re.UNICODE)


def snippet(text: str, tokens: Sequence[str], width: int = 32) -> str:
    """About ``width`` words of ``text`` around the first query word it contains."""
    text = _DATE_PREFIX.sub("", text.strip())
    words = text.split()
    if len(words) <= width:
        return " ".join(words)
    stems = [t[:5] for t in tokens if len(t) >= 3]
    at = 0
    for i, word in enumerate(words):
        lw = word.lower()
        if any(lw.startswith(s) or s in lw for s in stems):
            at = i
            break
    start = max(0, min(at - width // 4, len(words) - width))
    piece = " ".join(words[start : start + width])
    return ("… " if start > 0 else "") + piece + (" …" if start + width < len(words) else "")


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
        window=(the_route.window[0].timestamp(), the_route.window[1].timestamp()) if the_route.window else None,
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
    """Load the embedder, open the index and Chroma now (a server calls this at start)."""
    from .index import ensure_fresh
    from .index.handle import TYPES

    idx = ensure_fresh(vault)
    query_vector(vault, "warm up")
    for doc_type in TYPES:
        if idx.chunk_count(doc_type):
            idx.collection(doc_type)
