"""Reading the index: filters as SQL, the keyword leg (FTS5) and the vector leg (Chroma).

Filters are decided in SQLite, before ranking: a reader's visibility (another agent's
``self`` memories never match), status, type, dates, tags. The keyword leg applies them
inside the FTS5 query. The vector leg asks Chroma (one collection per memory type) for
the nearest chunks *without* a ``where`` clause -- at scale a filtered Chroma query costs
tens of times an unfiltered one (``docs/performance.md``) -- and keeps the allowed ones;
when a filter is so selective that too few survive, it scores the allowed chunks exactly
from the vectors kept in SQLite instead. Either way the result is the true top-k of what
the reader may see: nothing hidden comes back, and hidden memories never starve the
results. (One exception to "true": above 50,000 vectors a process that keeps searching
scores only a shortlist exactly, picked from a reduced copy of the vectors:
:mod:`memvault.index.coarse`.)
"""

from __future__ import annotations

import contextvars
import math
import re
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from ..language import CYRILLIC, WORD, detect, keyword_words, normalise
from ..store.catalog_tables import rows_in
from ..values import Record
from .blas import dot_rows
from .filters import IndexFilter

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .handle import Index

# English function words plus the question words people start queries with; short lists
# for the other languages of the seeds. Dropping them from the keyword OR-query keeps
# BM25 from rewarding matches on "what", "did", "the" (``docs/retrieval.md``).
_STOPWORD_TEXT = """
a about above after again against all am an and any are aren't as at be because been before being
below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't
down
during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her
here here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's
its itself let's me more most mustn't my myself no nor not of off on once only or other ought our
ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some such than
that that's the their theirs them themselves then there there's these they they'd they'll they're
they've this those through to too under until up very was wasn't we we'd we'll we're we've were
weren't what what's when when's where where's which while who who's whom why why's with won't would
wouldn't you you'd you'll you're you've your yours yourself yourselves
s t d ll m re ve just also will shall might must
o a os as um uma de da do das dos em no na nos nas por para com que qual quais quando como onde é
foi são eu tu ele ela nós vós eles elas se ao aos à às e ou mas meu minha seu sua nosso nossa isso
isto este esta
и в во не на я что тот быть с а весь как он она оно они мы вы ты к у же по из за от о об для это
этот когда где какой какая какие который ли или но да так бы был была были есть мне нам нас вас
их его её
і й та що це цей ця як де коли який яка які чи або але з із до від для про на у в ми ви ти він
вона воно вони
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_TOKEN_RE = re.compile(r"\w+", re.UNICODE)
# English phrases that frame a question without saying what it is about ("what kind of
# pets", "how many turtles"). Their words are content elsewhere ("so kind of you",
# "mypy type errors", "thanks so much" is chat noise), so only the framing phrase is left
# out of the keyword query, not the words (``docs/retrieval.md``).
_FRAMES = re.compile(
    r"\b(?:what|which)\s+(?:kinds?|types?|sorts?)\s+of\b|\bhow\s+(?:many|much)\b", re.IGNORECASE
)


def query_tokens(text: str) -> list[str]:
    """The query's words in keyword form (lemmas for Portuguese, Russian and Ukrainian:
    :mod:`memvault.language`), stopwords and English question frames dropped (all kept if
    nothing else is left)."""
    text = normalise(text).replace("'s ", " ")
    lang = detect(text)
    if lang == "en" and not CYRILLIC.search(text):
        tokens = [t.lower() for t in _TOKEN_RE.findall(text)]
        framed = [t.lower() for t in _TOKEN_RE.findall(_FRAMES.sub(" ", text))]
        kept = list(dict.fromkeys(t for t in framed if t not in STOPWORDS))
        return kept or list(dict.fromkeys(tokens))
    words = [w.lower() for w in WORD.findall(text)]
    kept = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(w.lower() for w in keyword_words(" ".join(kept), lang)))


# Below this many chunks every query word is kept: dropping common words costs a little
# quality and only pays (in speed) at scale.
COMMON_MIN_CHUNKS = 50_000


def drop_common(index: Index, tokens: Sequence[str], share: float) -> list[str]:
    """``tokens`` without those found in more than ``share`` of the chunks of a large index
    (the rarest one is always kept)."""
    if len(tokens) <= 1 or share >= 1.0:
        return list(tokens)
    total = index.fts_rows()
    if total < COMMON_MIN_CHUNKS:
        return list(tokens)
    counts = {t: index.term_docs(t) for t in tokens}
    kept = [t for t in tokens if counts[t] <= share * total]
    return kept or [min(tokens, key=lambda t: counts[t])]


# Who speaks in each index: (the chunk map it was read with, the pattern matching their
# names). The chunk map is rebuilt after every write: a new one means the names are re-read.
_SPEAKERS: weakref.WeakKeyDictionary[Index, tuple[object, re.Pattern[str] | None]] = (
    weakref.WeakKeyDictionary()
)
# Roles stand for the speaker in a transcript that names nobody. They, and names that are
# also function words ("Will"), stay in the embedded query: they may carry the question.
ROLES = frozenset({"user", "assistant", "system", "tool"})


def speaker_pattern(index: Index) -> re.Pattern[str] | None:
    """A pattern matching, in a query, the name of anyone who speaks in the index's memories
    (None when nobody does), as :func:`memvault.search.ranking.speaker_named` counts a name:
    whole ("Anna Maria", "jean-luc", any case, with a possessive "'s"), or the first word of
    a longer name when it has 3 letters or more ("Anna")."""
    marker = index.epoch
    cached = _SPEAKERS.get(index)
    if cached is not None and cached[0] is marker:
        return cached[1]
    names: set[str] = set()
    sql = "SELECT DISTINCT speakers FROM docs WHERE speakers IS NOT NULL AND speakers <> ''"
    for (value,) in index.conn.execute(sql):
        for name in str(value).strip("|").split("|"):
            name = " ".join(name.split())
            if name and name not in ROLES and name not in STOPWORDS:
                names.add(name)
            first = re.split(r"[\s_.-]+", name, maxsplit=1)[0]
            if len(first) >= 3 and first not in ROLES and first not in STOPWORDS:
                names.add(first)
    pattern = None
    if names:
        alternatives = "|".join(
            r"\s+".join(re.escape(part) for part in name.split())
            for name in sorted(names, key=lambda n: (-len(n), n))
        )
        pattern = re.compile(rf"(?<!\w)(?:{alternatives})(?:['’]s)?(?!\w)", re.IGNORECASE)
    _SPEAKERS[index] = (marker, pattern)
    return pattern


def dense_query(index: Index, query: str) -> str:
    """The query as the vector leg embeds it: without the names of the index's speakers.

    Who said a turn is the speaker signal's job (:mod:`memvault.search.ranking`). Left in the
    embedded text, a name draws the query towards every turn that merely greets that person
    ("Hey Jon!") or is headed with the name (``docs/retrieval.md``). The query is kept whole
    when nothing but names would be left.
    """
    pattern = speaker_pattern(index)
    if pattern is None:
        return query
    stripped = " ".join(pattern.sub(" ", query).split())
    return stripped if WORD.search(stripped) else query


MAX_QUERY_WORDS = 64  # words of the keyword OR-query (the rest are left out)


def match_expression(tokens: Sequence[str], limit: int = MAX_QUERY_WORDS) -> str | None:
    """An FTS5 OR-query of quoted tokens: valid whatever characters the query holds."""
    if not tokens:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens[:limit])


def full_match(index: Index, tokens: Sequence[str]) -> float:
    """The BM25 score, as FTS5 computes it for :func:`match_expression` of ``tokens``, of a
    chunk of average length that holds each of the words once: the sum of their idf.

    The fusion divides the keyword leg's scores by the best match's or by this, whichever is
    larger (:mod:`memvault.search.ranking`): a best match on one rare word of the question
    is then worth its share of a full match, not a full point (``docs/retrieval.md``). The
    counts come from the index (cached until its next write).
    """
    rows = index.fts_rows()
    total = 0.0
    for token in tokens[:MAX_QUERY_WORDS]:
        hits = index.term_docs(token)
        # The row count is cached and a concurrent write may have added rows since: a count
        # under the term's would make the log's argument negative (a reader crashed on it).
        total_rows = max(rows, hits)
        # FTS5's own idf, floored as FTS5 floors it (sqlite/ext/fts5/fts5_aux.c)
        total += max(math.log((total_rows - hits + 0.5) / (hits + 0.5)), 1e-6)
    return total


class Candidate(Record):
    """One chunk found by either leg."""

    rowid: int
    doc: int
    bm25: float = 0.0  # -bm25: higher is better, 0 when the keywords don't match
    kw_rank: int | None = None
    cosine: float | None = None
    vec_rank: int | None = None


# Keyword weights per FTS5 column: head (title, tags, subject, triggers), body, neighbours.
COLUMN_WEIGHTS = (1.0, 1.0, 0.5)


# Within ``shared_keyword_rows()``: the plain FTS5 query's rows per expression, so that the
# searches of one ``context`` (a section each, the same words) score the matches once.
_shared_rows: contextvars.ContextVar[dict[str, tuple[Index, list[Any], bool]] | None] = (
    contextvars.ContextVar("memvault_shared_keyword_rows", default=None)
)


@contextmanager
def shared_keyword_rows() -> Iterator[None]:
    """Let the keyword legs run inside share their plain FTS5 query (same index, same
    words): its best ``n`` rows in order are a prefix of its best ``m > n``."""
    token = _shared_rows.set({})
    try:
        yield
    finally:
        _shared_rows.reset(token)


def _plain_rows(index: Index, expr: str, fetch: int, score: str) -> list[Any]:
    """The best ``fetch`` matches of ``expr``: ``(rowid, bm25)``, best first."""
    shared = _shared_rows.get()
    if shared is not None and expr in shared:
        held, rows, every = shared[expr]
        if held is index and (every or len(rows) >= fetch):
            return rows[:fetch]
    rows = index.conn.execute(
        f"SELECT rowid, {score} AS s FROM fts WHERE fts MATCH ? ORDER BY s, rowid LIMIT ?",
        (expr, fetch),
    ).fetchall()
    if shared is not None:
        shared[expr] = (index, rows, len(rows) < fetch)  # fewer: every match is there
    return rows


def keyword_leg(
    index: Index, expr: str, filt: IndexFilter, limit: int
) -> list[tuple[int, int, float]]:
    """``(chunk rowid, doc key, score)`` of the best keyword matches allowed by ``filt``.

    The plain FTS5 query is cheapest; its best matches are filtered in SQLite, and only if
    too few survive is the filter joined into the FTS5 query itself -- unless the filter is
    known to let no document through at all.
    """
    w = COLUMN_WEIGHTS
    score = f"bm25(fts, {w[0]}, {w[1]}, {w[2]})"
    fetch = 2 * limit
    rows = _plain_rows(index, expr, fetch, score)
    allowed = allowed_chunks(index, [int(r) for r, _ in rows], filt)
    kept = [(int(r), allowed[int(r)], -float(s)) for r, s in rows if int(r) in allowed]
    if len(kept) >= limit or len(rows) < fetch:
        return kept[:limit]
    if index.has_allowed(filt) and not index.allowed_docs(filt)[0]:
        return kept  # no document passes the filter: the joined query would find none
    where, params = filt.sql()
    sql = (
        f"SELECT f.rowid, c.doc, {score} AS s "
        "FROM fts AS f JOIN chunks AS c ON c.rowid = f.rowid JOIN docs AS d ON d.key = c.doc "
        f"WHERE fts MATCH ? AND {where} ORDER BY s, f.rowid LIMIT ?"
    )
    found = index.conn.execute(sql, [expr, *params, limit]).fetchall()
    return [(int(r), int(d), -float(s)) for r, d, s in found]


def allowed_chunks(index: Index, rowids: Sequence[int], filt: IndexFilter) -> dict[int, int]:
    """``{chunk rowid: doc key}`` for the given chunks that pass ``filt``."""
    docs = index.docs_of(rowids)
    keys = index.allowed_among(filt, docs.values())
    return {rowid: doc for rowid, doc in docs.items() if doc in keys}


def all_allowed_chunks(index: Index, filt: IndexFilter, doc_type: str) -> list[tuple[int, int]]:
    where, params = filt.sql()
    sql = (
        "SELECT c.rowid, c.doc FROM chunks AS c JOIN docs AS d ON d.key = c.doc "
        f"WHERE d.type = ? AND {where}"
    )
    return [(int(r), int(d)) for r, d in index.conn.execute(sql, [doc_type, *params])]


def vectors(index: Index, rowids: Sequence[int]) -> dict[int, np.ndarray]:
    """The stored vectors of given chunks (from the mapped flat files when the index scores
    its vectors in memory, else from SQLite)."""
    import numpy as np

    if index.in_memory:
        return index.mapped_vectors(rowids)
    out: dict[int, np.ndarray] = {}
    dims = index.dimensions
    for start in range(0, len(rowids), 900):
        part = list(rowids[start : start + 900])
        sql = f"SELECT rowid, vec FROM chunks WHERE rowid IN ({','.join('?' * len(part))})"
        for rowid, blob in index.conn.execute(sql, part):
            if blob is not None and len(blob) == dims * 4:
                out[int(rowid)] = np.frombuffer(blob, dtype=np.float32)
    return out


# Exact scoring beats Chroma for small allowed sets (fetching <= this many vectors from
# SQLite is cheaper than a restricted Chroma query).
EXACT_LIMIT = 20_000


def _nearest(
    index: Index, doc_type: str, qvec: np.ndarray, n: int
) -> tuple[list[int], list[float]]:
    """The ``n`` chunks of a type nearest to ``qvec`` (Chroma, unfiltered): rowids, cosines."""
    col = index.collection(doc_type)
    if col is None:
        raise LookupError(f"no vector collection for {doc_type}")
    if index.url:
        return _nearest_shared(index, col, doc_type, qvec, n)
    result = col.query(query_embeddings=[qvec], n_results=n, include=["distances"])
    return [int(x) for x in result["ids"][0]], [1.0 - float(d) for d in result["distances"][0]]


def _nearest_shared(
    index: Index, col: Any, doc_type: str, qvec: np.ndarray, n: int
) -> tuple[list[int], list[float]]:
    """:func:`_nearest` on a shared server, whose ids are text hashes: mapped back to this
    index's chunks. Vectors of text this clone doesn't have (not pulled yet, another clone's
    unpushed edit) are passed over, fetching deeper until ``n`` of ours are found."""
    ask = n
    while True:
        result = col.query(query_embeddings=[qvec], n_results=ask, include=["distances"])
        ids, dists = result["ids"][0], result["distances"][0]
        rows = index.rows_for(doc_type, ids)
        pairs = zip(ids, dists, strict=True)
        hits = [(r, 1.0 - float(d)) for v, d in pairs for r in rows.get(v, ())]
        if len(hits) >= n or len(ids) < ask or ask >= 16 * n:
            break
        ask *= 4
    hits = hits[:n]
    return [r for r, _ in hits], [c for _, c in hits]


def vector_leg(
    index: Index, qvec: np.ndarray, filt: IndexFilter, types: Sequence[str], k: int
) -> tuple[list[tuple[int, int, float]], str]:
    """The ``k`` nearest allowed chunks: ``[(rowid, doc, cosine)]`` best first, and how.

    Nearest chunks are fetched unfiltered and filtered in SQLite; if too few survive,
    more are fetched (up to a few thousand), and for very selective filters the allowed
    chunks are scored exactly instead. Nothing hidden is ever returned, and hidden chunks
    never push allowed ones out of the top ``k``.
    """
    import numpy as np

    if index.in_memory:
        return _vector_leg_in_memory(index, qvec, filt, types, k)
    found: list[tuple[int, int, float]] = []
    how: list[str] = []
    mode = "ann"
    for doc_type in types:
        total = index.chunk_count(doc_type)
        if total == 0:
            continue
        n = min(total, max(4 * k, 100))
        kept: dict[int, tuple[int, float]] = {}
        selective = False
        while True:
            ids, sims = _nearest(index, doc_type, qvec, n)
            allowed = allowed_chunks(index, ids, filt)
            kept = {r: (allowed[r], c) for r, c in zip(ids, sims, strict=True) if r in allowed}
            if len(kept) >= k or len(ids) < n or n >= total:
                how.append(f"{doc_type}: {mode} n={n}")
                break
            share = max(len(kept), 1) / len(ids)
            if n >= 4000 or share < 0.05:
                selective = True  # too selective for over-fetching: score the allowed set exactly
                break
            n = min(total, int(n * min(8.0, 1.5 / share)) + k)
        if selective:
            pairs = all_allowed_chunks(index, filt, doc_type)
            doc_of = dict(pairs)
            if len(pairs) > EXACT_LIMIT and not index.in_memory:
                # Large allowed set but the nearest ones are hidden: ask Chroma with ids.
                result = index.collection(doc_type).query(
                    query_embeddings=[qvec],
                    n_results=min(k, len(pairs)),
                    ids=list(dict.fromkeys(index.vector_ids([r for r, _ in pairs]))),
                    include=["distances"],
                )
                local = index.rows_for(doc_type, result["ids"][0])
                kept = {
                    r: (doc_of[r], 1.0 - float(d))
                    for v, d in zip(result["ids"][0], result["distances"][0], strict=True)
                    for r in local.get(v, ())
                    if r in doc_of
                }
                how.append(f"{doc_type}: restricted ann over {len(pairs)}")
            else:
                vecs = vectors(index, [r for r, _ in pairs])
                rows = [r for r, _ in pairs if r in vecs]
                kept = {}
                if rows:
                    matrix = np.stack([vecs[r] for r in rows])
                    sims_all = dot_rows([matrix], np.asarray(qvec, dtype=np.float32))[0]
                    for i in np.argsort(-sims_all, kind="stable")[:k]:
                        kept[rows[i]] = (doc_of[rows[i]], float(sims_all[i]))
                how.append(f"{doc_type}: exact over {len(rows)} allowed")
        found.extend((r, d, c) for r, (d, c) in kept.items())
    found.sort(key=lambda x: (-x[2], x[0]))
    return found[: max(k, 0)], "; ".join(how)


def _vector_leg_in_memory(
    index: Index, qvec: np.ndarray, filt: IndexFilter, types: Sequence[str], k: int
) -> tuple[list[tuple[int, int, float]], str]:
    """Every chunk of the wanted types scored exactly (a matrix product); hidden ones are
    masked out before the top ``k`` is taken, so the filter is exact and never starves."""
    import numpy as np

    from .coarse import shortlist

    q = np.asarray(qvec, dtype=np.float32)
    typed = [(t, *index.memory_vectors(t)) for t in types]
    typed = [p for p in typed if len(p[1])]
    if not typed:
        return [], "exact in memory: empty"
    short = shortlist(index, typed, q, k)
    if short is not None:
        # the k best allowed rows among the shortlist's best 2k (else every row is scored)
        top = _top_of_best(index, *short, filt, k, within=2 * k)
        if top is not None:
            rows, docs, sims = short
            found = [(int(rows[i]), int(docs[i]), float(sims[i])) for i in top]
            total = sum(len(p[1]) for p in typed)
            return found, f"shortlist of {len(sims)} of {total} from a reduced copy, exact"
    parts = [p[1:] for p in typed]
    rowids = np.concatenate([r for r, _, _ in parts])
    docs = np.concatenate([d for _, d, _ in parts])
    sims = np.concatenate(dot_rows([m for _, _, m in parts], q))
    if len(sims) > PREFILTER_ABOVE and not index.has_allowed(filt):
        top = _top_of_best(index, rowids, docs, sims, filt, k)
        if top is not None:
            found = [(int(rowids[i]), int(docs[i]), float(sims[i])) for i in top]
            return found, f"exact in memory over {len(rowids)}, filtered among the best"
    _, table = index.allowed_docs(filt)
    allowed = np.zeros(len(docs), dtype=bool)
    inside = docs < len(table)
    allowed[inside] = table[docs[inside]]
    candidates = np.flatnonzero(allowed)
    if len(candidates) == 0:
        return [], f"exact in memory over 0 of {len(rowids)}"
    n = min(k, len(candidates))
    top = candidates
    if n < len(candidates):
        # every row scoring at least the n-th best, so that ties at the cut go by rowid
        kth = np.partition(sims[candidates], len(candidates) - n)[len(candidates) - n]
        top = candidates[sims[candidates] >= kth]
    top = top[np.lexsort((rowids[top], -sims[top]))][:n]  # best first, ties by rowid
    found = [(int(rowids[i]), int(docs[i]), float(sims[i])) for i in top]
    return found, f"exact in memory over {len(candidates)} of {len(rowids)}"


# Above this many vectors a search that has no filter table yet filters the best-scoring
# chunks only (:func:`_top_of_best`) rather than building the table from every document.
PREFILTER_ABOVE = 20_000


def _top_of_best(
    index: Index,
    rowids: np.ndarray,
    docs: np.ndarray,
    sims: np.ndarray,
    filt: IndexFilter,
    k: int,
    within: int | None = None,
) -> np.ndarray | None:
    """Positions of the ``k`` best allowed rows, best first (ties by rowid), found among the
    best-scoring ``within`` (default ``max(20k, 500)``) rows; None when fewer than ``k``
    allowed rows score above the lowest of those (a row outside could then tie or belong):
    the caller filters all. Every row outside scores at most that lowest score, so the
    answer is exact."""
    import numpy as np

    m = min(len(sims), within or max(20 * k, 500))
    best = np.argpartition(-sims, m - 1)[:m]
    floor = sims[best].min()
    live = best[sims[best] > floor]
    keys = index.allowed_among(filt, (int(d) for d in np.unique(docs[live])))
    if not keys:
        return None
    ok = live[np.isin(docs[live], np.fromiter(keys, dtype=np.int64, count=len(keys)))]
    if len(ok) < k:
        return None
    ordered: np.ndarray = ok[np.lexsort((rowids[ok], -sims[ok]))]
    return ordered[:k]


# --- what the ranking reads about the chunks and documents it found ------------------------


class DocRow(NamedTuple):
    """The ``docs`` columns the ranking weighs, by name."""

    key: int
    path: str
    id: str
    type: str
    category: str | None
    scope: str | None
    status: str | None
    created: float | None
    importance: int | None
    relevance: float | None
    success_rate: float | None
    speakers: str | None  # "|name|name|": who speaks in the memory
    title: str | None
    agent: str | None
    team: str | None
    triggers: str | None  # "|word|phrase|": a procedure's trigger keywords
    lang: str | None  # the language it is written in (memvault.language.detect)


def _in_batches(
    index: Index, sql: str, ids: Sequence[int], size: int = 500
) -> Iterator[tuple[Any, ...]]:
    """Rows of an ``IN ({})`` query, in batches below SQLite's variable limit."""
    yield from rows_in(index.conn, sql, ids, size)


def doc_rows(index: Index, keys: Sequence[int]) -> dict[int, DocRow]:
    """``{doc key: DocRow}`` of the given documents."""
    sql = f"SELECT {', '.join(DocRow._fields)} FROM docs WHERE key IN ({{}})"
    return {int(row[0]): DocRow(*row) for row in _in_batches(index, sql, keys)}


class TurnRow(NamedTuple):
    """A chunk that is (part of) a transcript turn: which turn, who said it, when, and the
    share of its sentences that are questions (``asks``)."""

    turn: str
    speaker: str
    role: str
    at: float | None
    asks: float = 0.0
    words: int = 0  # words of the chunk's indexed text


def turn_pieces(index: Index, rowids: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """``{chunk rowid: every chunk rowid of its turn}`` for the given chunks that are a piece
    of a transcript turn cut in several (a turn longer than ``index.chunk_words``)."""
    sql = (
        "SELECT c.rowid, s.rowid FROM chunks c JOIN chunks s ON s.doc = c.doc AND s.turn = c.turn "
        "WHERE c.rowid IN ({}) AND c.turn IS NOT NULL"
    )
    pieces: dict[int, list[int]] = {}
    for rowid, sibling in _in_batches(index, sql, rowids):
        pieces.setdefault(int(rowid), []).append(int(sibling))
    return {r: tuple(sorted(group)) for r, group in pieces.items() if len(group) > 1}


def turn_rows(index: Index, rowids: Sequence[int]) -> dict[int, TurnRow]:
    """``{chunk rowid: TurnRow}`` for the given chunks that are transcript turns."""
    sql = (
        "SELECT rowid, turn, speaker, role, at, text FROM chunks "
        "WHERE rowid IN ({}) AND turn IS NOT NULL"
    )
    return {
        int(r): TurnRow(
            str(t), str(s or ""), str(ro or ""), a, question_share(text), len(str(text).split())
        )
        for r, t, s, ro, a, text in _in_batches(index, sql, rowids)
    }


_LEADING_DATE = re.compile(r"^\[[^\]\n]*\]\s*")
_MARKS = ".!?？؟。！"  # sentence ends: Latin, full-width (CJK), Arabic
_QUESTION = "?？؟"
# A sentence ends at a mark followed by a space (so "3.5" and "e.g.x" stay whole), or a
# closing quote or bracket and a space, or right after a CJK mark (no space is written).
_SENTENCE_END = re.compile(r"(?<=[.!?؟])\s+|(?<=[.!?؟][\"'”’»)\]])\s+|(?<=[？。！])")


def question_share(text: str | None) -> float:
    """The share of a turn's sentences that end with a question mark ("Hey! How are you?":
    0.5), its leading ``[date]`` left out. A turn that asks holds the answer less often
    than one that tells (``docs/retrieval.md``)."""
    found = _SENTENCE_END.split(_LEADING_DATE.sub("", text or "").strip())
    parts = [p for p in found if any(c.isalnum() for c in p)]  # not a lone emoji or quote
    if not parts:
        return 0.0
    asked = sum(_asks(p) for p in parts)
    return asked / len(parts)


def _asks(sentence: str) -> bool:
    """Whether the run of marks ending ``sentence`` (after closing quotes, brackets, emoji)
    holds a question mark: "Really?!", "you?\"" and "ok? 😊" ask. Walks back from the end
    once (a regex anchored at the end would retry from every position)."""
    end = len(sentence)
    while end and not (sentence[end - 1].isalnum() or sentence[end - 1] in _MARKS):
        end -= 1
    start = end
    while start and sentence[start - 1] in _MARKS:
        start -= 1
    return any(c in _QUESTION for c in sentence[start:end])


def stored_docs(index: Index, keys: Sequence[int]) -> dict[int, str]:
    """``{doc key: the memory as JSON}`` (id, type, meta, content as last indexed)."""
    sql = "SELECT key, doc FROM docs WHERE key IN ({})"
    return {int(k): str(doc) for k, doc in _in_batches(index, sql, keys)}


def chunk_bodies(index: Index, rowids: Sequence[int]) -> dict[int, str]:
    """``{chunk rowid: its indexed body text}``."""
    sql = "SELECT rowid, text FROM chunks WHERE rowid IN ({})"
    return {int(r): str(body) for r, body in _in_batches(index, sql, rowids)}


def context_vectors(index: Index, rowids: Sequence[int]) -> dict[int, np.ndarray]:
    """The context vector of each given chunk that has one."""
    import numpy as np

    size = index.dimensions * 4
    sql = "SELECT rowid, cvec FROM chunks WHERE rowid IN ({}) AND cvec IS NOT NULL"
    return {
        int(rowid): np.frombuffer(blob, dtype=np.float32)
        for rowid, blob in _in_batches(index, sql, rowids)
        if len(blob) == size
    }
