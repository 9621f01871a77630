"""Scoring a query against the index: the two legs, their fusion and the boosts.

The recipe measured on LoCoMo (``bench/locomo.py``; research notes in FINDINGS.md):

1. filters are SQL (:class:`memvault.index.query.IndexFilter`): what the reader may see,
   status, type, dates, tags -- applied inside both legs, before ranking;
2. keyword leg: the query's content words as an FTS5 OR-query (porter-stemmed), BM25 over
   the memory's head, body and its session neighbours' text (weights 1, 1, 0.5);
3. vector leg: cosine of the query to each chunk; a memory with session neighbours also
   has a vector of itself in context, and its dense score is the mean of both;
4. the union of both legs' top lists is fused:
   ``bm25 / best bm25 + 2.0 * cosine + 0.2 (query names the speaker) + 0.3 (dated within
   a date or period the query names)``; a memory scores as its best chunk;
5. boosts multiply that: importance, recency (episodes), decayed relevance, success rate
   and trigger words (procedures), and the route's preference for one kind of memory.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import MemvaultError
from .memory import Memory, now_utc

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .index.handle import Index
    from .index.query import IndexFilter
    from .vault import Vault

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
    "pool": 2.0,  # each leg contributes max(50, pool * limit) chunks
    # A query word found in more than this share of a large index is left out of the
    # keyword leg: its BM25 weight is small (idf < 1.4) and its long posting list is most
    # of the cost of the query (100k chunks: p95 93 -> 69 ms).
    "common_share": 0.2,
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


def weights(vault: Vault) -> dict[str, float]:
    out = dict(WEIGHTS)
    custom = vault.config.get("search.weights") or {}
    if isinstance(custom, Mapping):
        for key, value in custom.items():
            if key in out and isinstance(value, (int, float)) and not isinstance(value, bool):
                out[key] = float(value)
    return out


# --- dates named in a query ------------------------------------------------------------------

_MONTH_NAMES = (
    "january february march april may june july august september october november december"
)
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
    iso = _ISO_RE.search(query)
    if iso:
        number = int(iso.group(2))
        if 1 <= number <= 12:
            return DateHint(number, int(iso.group(3)) if iso.group(3) else None, int(iso.group(1)))
    m = _DATE_RE.search(query)
    if not m:
        return None
    d1, name, d2, year = m.groups()
    if name.lower() == "may" and not (d1 or d2 or year) and (name != "May" or m.start(2) == 0):
        return None  # "may" is the verb; "in May" (capitalised, mid-sentence) is the month
    day = d1 or d2
    return DateHint(_MONTHS[name.lower()], int(day) if day else None, int(year) if year else None)


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

    embedder = embedder_for(vault)
    vec = embedder.embed_query(query)
    _warm_embedders.add(embedder.identity)
    return vec


# Embedders this process has already used: loaded, so a query costs milliseconds.
_warm_embedders: set[str] = set()


def _cold(vault: Vault) -> bool:
    from .index.handle import embedder_for

    return embedder_for(vault).identity not in _warm_embedders


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
    if qvec is None and _cold(vault):
        # Load the model and embed the query while the index is being checked: in a fresh
        # process loading the model is most of the wait, and it runs largely outside the GIL.
        pending = _Background(query_vector, vault, query)
    idx = index or ensure_fresh(vault)
    if pending is not None:
        qvec = pending.result()
    elif qvec is None:
        qvec = query_vector(vault, query)
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
    pool = max(50, int(w["pool"] * plan.limit))
    tokens = iq.query_tokens(query)
    with idx.lock:
        expr = iq.match_expression(iq.drop_common(idx, tokens, w["common_share"]))
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
    for rank, (_, key, _) in enumerate(kw, 1):
        kw_rank_doc.setdefault(key, rank)
    vec_rank_doc: dict[int, int] = {}
    for rank, (_, key, _) in enumerate(vec, 1):
        vec_rank_doc.setdefault(key, rank)
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
        best = docs.get(key)
        if best is None or base > best.base:
            best = docs[key] = _Doc(
                key, rowid, bm25, cos, kw_rank_doc.get(key), vec_rank_doc.get(key), base, row=row
            )
            best.own_cosine, best.context_cosine = own, ctx_cos
    # Nothing in common at all (no keyword, no positive similarity): not a result -- except
    # in a timeline ("what happened last week?"), where being in the window is the match.
    if plan.order != "time":
        docs = {k: d for k, d in docs.items() if d.base > 0}
    now = now_utc().timestamp()
    lowered = " ".join(query.lower().split())
    for found in docs.values():
        found.score = found.base * _boosts(found, plan, w, now, lowered)
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
        marks = ",".join("?" * len(part))
        sql = f"SELECT rowid, cvec FROM chunks WHERE rowid IN ({marks}) AND cvec IS NOT NULL"
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
    with idx.lock:
        stored = _rows_by_id(idx.conn, "SELECT key, doc FROM docs WHERE key IN ({})", keys)
        bodies = _rows_by_id(idx.conn, "SELECT rowid, body FROM fts WHERE rowid IN ({})", [d.rowid for d in top])
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
                    "in_context": None
                    if doc.context_cosine is None
                    else round(doc.context_cosine, 4),
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


def _rows_by_id(conn: Any, sql: str, ids: Sequence[int]) -> dict[int, str]:
    """``{id: value}`` for an ``IN (...)`` query, in chunks below SQLite's variable limit."""
    out: dict[int, str] = {}
    for start in range(0, len(ids), 500):
        part = list(ids[start : start + 500])
        out.update(conn.execute(sql.format(",".join("?" * len(part))), part).fetchall())
    return out

