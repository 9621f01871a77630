"""Scoring a query against the index: the two legs, their fusion and the boosts.

1. filters are SQL (:class:`memvault.index.filters.IndexFilter`): what the reader may see,
   status, type, dates, tags -- applied inside both legs, before ranking;
2. keyword leg: the query's content words as an FTS5 OR-query (porter-stemmed), BM25 over
   the memory's head, body and its session neighbours' text (weights 1, 1, 0.5);
3. vector leg: cosine of the query to each chunk; a memory with session neighbours also
   has a vector of itself in context, and its dense score mixes both: half and half, less of
   the context for a turn longer than ``context_words`` (30) words. The query
   is embedded without the names of the vault's speakers: who said a turn is the speaker
   term's job (:func:`memvault.index.query.dense_query`);
4. the union of both legs' top lists is fused:
   ``bm25 / max(best bm25, full match) + 2.0 * cosine + 0.5 (query names the speaker) + 0.3
   (dated within a date or period the query names) - 0.15 x the share of a named speaker's
   turn's sentences that are questions``, the cosine rescaled from the embedder's floor (a
   lower one for a query and a memory in two scripts: :func:`pair_floor`), where a full
   match is the BM25 of a chunk of average length holding each query word once (the sum of
   their idf); a memory scores as its best chunk, a transcript turn cut in pieces as the
   mean of its pieces;
5. boosts multiply that: importance, recency (episodes), decayed relevance, success rate
   and trigger words (procedures), and the route's preference for one kind of memory.

How these weights were chosen, and what each is worth on LoCoMo: ``docs/retrieval.md``.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .. import debug
from ..errors import MemvaultError
from ..language import detect
from ..memory import Memory, now_utc
from ..paths import CONFIG_PATH
from ..store.usage import Usage
from ..store.usage import load as load_usage
from ..values import Record, field
from .dates import date_hint
from .results import SearchHit, TurnRef, snippet

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..index.filters import IndexFilter
    from ..index.handle import Index
    from ..index.query import DocRow, TurnRow
    from ..store.repository import Repository

# Fusion and boost weights (config ``search.weights.*`` overrides them).
WEIGHTS: dict[str, float] = {
    "dense": 2.0,  # cosine weight against BM25 scaled to the best (or a full) match
    # The cosine an embedder gives unrelated texts, scaled out of the dense term (default:
    # the embedder's own ``similarity_floor``; 0 for MiniLM, whose cosines spread from 0).
    "dense_floor": 0.0,
    # The same, for a query and a memory in two scripts (an English question about a
    # Russian passage): a multilingual embedder gives such pairs lower cosines, related or
    # not (default: the embedder's ``cross_language_floor``, else dense_floor's).
    "dense_floor_across": 0.0,
    # The query names who said it. The name is left out of the embedded query, so this term
    # carries it alone (``docs/retrieval.md``).
    "speaker": 0.5,
    "date": 0.3,  # the memory is dated within a date the query names ("in May 2023")
    # A transcript turn that asks ("Have you been to Lisbon?") holds the answer less often
    # than one that tells: minus this times the share of its sentences that are questions.
    "question": 0.15,
    # A turn's cosine in context counts half up to this many words, less for longer turns.
    "context_words": 30.0,
    "importance": 0.05,  # per importance step away from 3
    "recency": 0.1,  # episodes: up to +10 % when brand new, half of it after half_life_days
    "half_life_days": 30.0,
    "relevance": 0.2,  # consolidation's decayed relevance (0..1): up to -20 %
    "success": 0.3,  # procedures: success_rate 1.0 -> +15 %, 0.0 -> -15 %
    "trigger": 0.3,  # procedures: a trigger keyword appears in the query
    "fallback": 0.7,  # kinds the route does not prefer
    "pool": 2.0,  # each leg contributes max(50, pool * limit) chunks
    # A query word found in more than this share of a large index is left out of the
    # keyword leg: its BM25 weight is small and its long posting list is most of the
    # cost of the query.
    "common_share": 0.2,
}


class Plan(Record, frozen=True):
    """A query's resolved options (the public functions take keywords and build one)."""

    types: tuple[str, ...]
    filt: IndexFilter
    limit: int
    prefer: str | None = None  # kind the route prefers (others get the fallback weight)
    order: str = "relevance"
    explain: bool = False
    procedures: bool = False  # weigh success_rate and triggers
    window: tuple[float, float] | None = None  # a period the query names in passing (epoch s)
    speaker: str | None = None  # only what this speaker said (a name, any case)
    role: str | None = None  # only turns of this role (user|assistant|system|tool)
    # When no candidate's evidence (:func:`evidence`) reaches this, nothing is relevant: no hit.
    min_score: float = 0.0


def weights(vault: Repository) -> dict[str, float]:
    """The fusion and boost weights, with ``search.weights.*`` from the config applied."""
    from ..index.manifest import embedder_for

    out = dict(WEIGHTS)
    embedder = embedder_for(vault)  # its calibration, when it has one, before the config's
    out["dense_floor"] = float(getattr(embedder, "similarity_floor", 0.0))
    across = getattr(embedder, "cross_language_floor", None)
    out["dense"] = float(getattr(embedder, "dense_weight", out["dense"]))
    custom = vault.config.get("search.weights") or {}
    if not isinstance(custom, Mapping):
        raise MemvaultError("must be a mapping of weight names to numbers", CONFIG_PATH, _KEY)
    for key, value in custom.items():
        if key not in WEIGHTS:
            raise MemvaultError(
                f"unknown weight {key!r}; expected one of {', '.join(sorted(WEIGHTS))}",
                CONFIG_PATH,
                f"{_KEY}.{key}",
            )
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not math.isfinite(float(value)):
            raise MemvaultError(
                f"must be a finite number, not {value!r}", CONFIG_PATH, f"{_KEY}.{key}"
            )
        out[key] = float(value)
    if "dense_floor_across" not in custom:  # the embedder's, or one floor for any pair
        out["dense_floor_across"] = out["dense_floor"] if across is None else float(across)
    return out


_KEY = "search.weights"


class Ranked(Record):
    """A query's hits and the best evidence (:func:`evidence`) of any candidate, returned or
    not: below the floor, it says how far the best match was from relevant."""

    hits: list[SearchHit]
    best: float
    note: str | None = None  # the index's note (stale, rebuilt, ...)


class Found(Record):
    """One memory (or one turn of a transcript) among the candidates, scored as its best chunk."""

    key: int
    rowid: int  # its best chunk
    row: DocRow
    turn: TurnRow | None = None
    created: float | None = None  # the memory's time, or the turn's
    bm25: float = 0.0
    cosine: float = -1.0
    own_cosine: float = 0.0
    context_cosine: float | None = None
    kw_rank: int | None = None
    vec_rank: int | None = None
    base: float = 0.0
    score: float = 0.0
    evidence: float = 0.0  # how plainly it matches the query, 0..1 (:func:`evidence`)
    boosts: dict[str, float] = field(default_factory=dict)


class Legs(Record):
    """What both legs found for one query: per chunk its BM25 and cosines, per memory its row."""

    keyword: list[tuple[int, int, float]]  # (chunk rowid, doc key, bm25) best first
    vector: list[tuple[int, int, float]]  # (chunk rowid, doc key, cosine) best first
    how: str  # how the vector leg searched (shown by --explain)
    bm25: dict[int, float] = field(default_factory=dict)  # chunk -> bm25 (0: no match)
    cosine: dict[int, float] = field(default_factory=dict)  # chunk -> cosine to the query
    context: dict[int, float] = field(default_factory=dict)  # chunk -> cosine in context
    doc_of: dict[int, int] = field(default_factory=dict)  # chunk -> doc key
    rows: dict[int, DocRow] = field(default_factory=dict)  # doc key -> its columns
    turns: dict[int, TurnRow] = field(default_factory=dict)  # chunk -> its turn (transcripts)
    dense_query: str = ""  # the text the vector leg embedded (shown by --explain)
    # BM25 of a chunk of average length holding each query word once (index.query.full_match)
    full_match: float = 0.0
    # chunk -> every chunk of its turn, for a transcript turn cut in several pieces
    pieces: dict[int, tuple[int, ...]] = field(default_factory=dict)

    @property
    def best_bm25(self) -> float:
        return max(self.bm25.values(), default=0.0)

    def keyword_term(self, bm25: float) -> float:
        """A chunk's BM25 on the fusion's scale: divided by the best match's, or by a full
        match of the query (each word once, average length) when the best falls short of
        one. A weak best match (one rare word of the question) no longer counts as a full
        point against the vector leg (``docs/retrieval.md``)."""
        scale = max(self.best_bm25, self.full_match)
        return bm25 / scale if scale > 0 else 0.0

    def keyword_share(self, bm25: float) -> float:
        """A chunk's BM25 as a share of a full match of the query (capped at 1): the same
        scale for every query, unlike :meth:`keyword_term` (``docs/retrieval.md``)."""
        return min(bm25 / self.full_match, 1.0) if self.full_match > 0 else 0.0


def gather(
    idx: Index,
    tokens: Sequence[str],
    vector: np.ndarray | Callable[[], np.ndarray],
    plan: Plan,
    w: Mapping[str, float],
) -> Legs:
    """Run both legs under ``plan``'s filter and read what the fusion needs. Hold ``idx.lock``.
    ``vector``: the query vector, or a function giving it (asked after the keyword leg)."""
    import numpy as np

    from ..index import query as iq

    pool = max(50, int(w["pool"] * plan.limit))
    if plan.speaker or plan.role:
        pool *= 4  # filtered after the legs: look further down their lists
    kept = iq.drop_common(idx, tokens, w["common_share"])
    expr = iq.match_expression(kept)
    kw = iq.keyword_leg(idx, expr, plan.filt, pool) if expr else []
    debug.lap("keyword leg")  # debug mode's timings (a no-op when it is off)
    # What the fusion reads of the keyword leg's chunks is read now: a warm search is still
    # embedding its query in a thread (search.engine.run), and these reads fill that wait.
    stored = _Stored()
    stored.read(idx, [rowid for rowid, _, _ in kw], {doc for _, doc, _ in kw})
    qvec = vector() if callable(vector) else vector
    try:
        vec, how = iq.vector_leg(idx, qvec, plan.filt, plan.types, pool)
    except Exception as exc:  # noqa: BLE001 - Chroma failing must not fail the search
        vec = exact_vector_leg(idx, qvec, plan.types, plan.filt, pool)
        how = f"exact (vector store error: {type(exc).__name__})"
    debug.lap("vector leg")
    legs = Legs(kw, vec, how, full_match=iq.full_match(idx, kept) if kw else 0.0)
    for rowid, doc, score in kw:
        legs.bm25[rowid] = score
        legs.doc_of[rowid] = doc
    for rowid, doc, cos in vec:
        legs.bm25.setdefault(rowid, 0.0)
        legs.cosine[rowid] = cos
        legs.doc_of[rowid] = doc
    if not legs.doc_of:
        return legs
    # A turn cut in pieces scores as the mean of all its pieces (see fuse): the pieces
    # neither leg found join the candidates with no keyword match.
    for rowid, group in iq.turn_pieces(idx, list(legs.doc_of)).items():
        for sibling in group:
            legs.pieces[sibling] = group
            if sibling not in legs.doc_of:
                legs.bm25[sibling] = 0.0
                legs.doc_of[sibling] = legs.doc_of[rowid]
    stored.read(idx, list(legs.doc_of), set(legs.doc_of.values()))
    q = np.asarray(qvec, dtype=np.float32)
    # A keyword match outside the vector leg's top list still needs its cosine. (A chunk
    # outside the keyword leg's top list counts as no keyword match.)
    for rowid in legs.doc_of:
        if rowid not in legs.cosine:
            vec_r = stored.vectors.get(rowid)
            legs.cosine[rowid] = float(vec_r @ q) if vec_r is not None else 0.0
    legs.context = {
        rowid: float(cvec @ q)
        for rowid in legs.doc_of
        if (cvec := stored.context.get(rowid)) is not None
    }
    legs.rows = {
        key: stored.rows[key] for key in sorted(set(legs.doc_of.values())) if key in stored.rows
    }
    legs.turns = {
        rowid: turn for rowid in legs.doc_of if (turn := stored.turns.get(rowid)) is not None
    }
    debug.lap("candidate rows")
    return legs


class _Stored:
    """What the fusion reads of candidate chunks and their memories, read once per chunk:
    stored vectors, context vectors, transcript turns, memory rows."""

    def __init__(self) -> None:
        self.vectors: dict[int, np.ndarray] = {}
        self.context: dict[int, np.ndarray] = {}
        self.turns: dict[int, TurnRow] = {}
        self.rows: dict[int, DocRow] = {}
        self._chunks: set[int] = set()
        self._docs: set[int] = set()

    def read(self, idx: Index, rowids: Sequence[int], docs: set[int]) -> None:
        """Read the given chunks and memories not read yet."""
        from ..index import query as iq

        chunks = [r for r in rowids if r not in self._chunks]
        keys = sorted(docs - self._docs)
        self._chunks.update(chunks)
        self._docs.update(keys)
        if chunks:
            self.vectors.update(iq.vectors(idx, chunks))
            self.context.update(iq.context_vectors(idx, chunks))
            self.turns.update(iq.turn_rows(idx, chunks))
        if keys:
            self.rows.update(iq.doc_rows(idx, keys))


def exact_vector_leg(
    idx: Index, qvec: np.ndarray, types: Sequence[str], filt: IndexFilter, k: int
) -> list[tuple[int, int, float]]:
    """The vector leg scored exactly from the vectors kept in SQLite (the vector store failed)."""
    import numpy as np

    from ..index import query as iq

    q = np.asarray(qvec, dtype=np.float32)
    out: list[tuple[int, int, float]] = []
    for doc_type in types:
        pairs = iq.all_allowed_chunks(idx, filt, doc_type)
        stored = iq.vectors(idx, [r for r, _ in pairs])
        for rowid, doc in pairs:
            v = stored.get(rowid)
            if v is not None:
                out.append((rowid, doc, float(v @ q)))
    out.sort(key=lambda x: (-x[2], x[0]))
    return out[:k]


def fuse(
    legs: Legs, tokens: Sequence[str], query: str, plan: Plan, w: Mapping[str, float]
) -> list[Found]:
    """Every memory's fused score (its best chunk's), before boosts. A transcript turn cut
    in several pieces scores as the mean of its pieces' scores: as its best piece, a long
    turn got one draw per piece and outranked the short turns that hold what was asked
    (``docs/retrieval.md``, "Conversations beyond LoCoMo")."""
    names = set(tokens)
    kw_rank: dict[int, int] = {}
    for rank, (_, key, _) in enumerate(legs.keyword, 1):
        kw_rank.setdefault(key, rank)
    vec_rank: dict[int, int] = {}
    for rank, (_, key, _) in enumerate(legs.vector, 1):
        vec_rank.setdefault(key, rank)
    hint = date_hint(query)
    lowered = " ".join(query.lower().split())
    language = detect(query)
    docs: dict[tuple[int, str], Found] = {}
    total: dict[tuple[int, str], float] = {}  # the sum of a cut turn's pieces' scores
    for rowid, key in legs.doc_of.items():
        row = legs.rows.get(key)
        if row is None:
            continue
        turn = legs.turns.get(rowid)
        speakers = f"|{turn.speaker.lower()}|" if turn is not None else (row.speakers or "")
        if not _passes(plan, speakers, turn):
            continue
        own = legs.cosine[rowid]
        ctx_cos = legs.context.get(rowid)
        cos = own if ctx_cos is None else _in_context(own, ctx_cos, turn, w)
        bm25 = legs.bm25[rowid]
        named = speaker_named(speakers, names, lowered)
        created = turn.at if turn is not None and turn.at is not None else row.created
        dated = (hint is not None and hint.matches(created)) or (
            plan.window is not None
            and created is not None
            and plan.window[0] <= created <= plan.window[1] + 86400
        )
        floor = pair_floor(language, row.lang, w)
        # Cosine is clipped at 0 so that the multiplicative boosts stay monotone.
        base = (
            legs.keyword_term(bm25)
            + w["dense"] * dense_term(cos, floor)
            + (w["speaker"] if named else 0.0)
            + (w["date"] if dated else 0.0)
            - (w["question"] * turn.asks if turn is not None and _named(turn) else 0.0)
        )
        unit = (key, turn.turn if turn is not None else "")
        if rowid in legs.pieces:
            total[unit] = total.get(unit, 0.0) + base
        best = docs.get(unit)
        if best is None or base > best.base:
            docs[unit] = found = Found(
                key,
                rowid,
                row,
                turn,
                created,
                bm25,
                cos,
                own,
                ctx_cos,
                kw_rank.get(key),
                vec_rank.get(key),
                base,
            )
            found.evidence = evidence(legs, bm25, own, floor)
    for unit, summed in total.items():
        found = docs[unit]
        found.base = summed / len(legs.pieces[found.rowid])
    # Nothing in common at all (no keyword, no positive similarity): not a result -- except
    # in a timeline ("what happened last week?"), where being in the window is the match.
    return [d for d in docs.values() if plan.order == "time" or d.base > 0]


def evidence(legs: Legs, bm25: float, own_cosine: float, dense_floor: float) -> float:
    """How plainly a chunk matches the query, on a scale that means the same for every
    query (0..1): the larger of its own cosine on the embedder's common scale and its BM25
    as a share of a full match. The fused score can't say "nothing relevant": the best
    keyword match of a query counts a full point however weak it is. ``search.min_score``
    (the embedder's ``relevance_floor`` by default) is a floor on this."""
    return max(dense_term(own_cosine, dense_floor), legs.keyword_share(bm25))


def pair_floor(query_language: str, memory_language: str | None, w: Mapping[str, float]) -> float:
    """The similarity floor of :func:`dense_term` for a query in ``query_language`` and a
    memory in ``memory_language`` (:func:`memvault.language.detect`'s): ``dense_floor_across``
    when one is written in Cyrillic and the other in Latin letters. Across scripts the two
    share no word but names and numbers, and a multilingual embedder's cosines sit lower,
    related or not: measured against the same-language floor, an English question's right
    Russian paragraph could fall under it and count as unrelated, while a passage sharing
    one name with the question outranked it. A memory labelled English does not count:
    English is detect's answer when nothing says otherwise, Russian prose full of English
    terms included, whose cosines to a Russian question are as high as any Russian text's.
    Ukrainian and Russian share a script and most cosines (``docs/retrieval.md``, "Across
    languages: the similarity floor of the pair")."""
    if memory_language in (None, "", "en"):
        return w["dense_floor"]
    if (query_language in _CYRILLIC) != (memory_language in _CYRILLIC):
        return w["dense_floor_across"]
    return w["dense_floor"]


_CYRILLIC = frozenset({"ru", "uk"})  # the languages (memvault.config.LANGUAGES) in Cyrillic


def dense_term(cos: float, floor: float) -> float:
    """The cosine on a common scale: 0 at the embedder's floor (what unrelated texts score)
    or below, 1 for the same text. Clipped at 0 so that the boosts stay monotone."""
    if floor <= 0.0:
        return max(cos, 0.0)
    return max((cos - floor) / (1.0 - floor), 0.0)


def _in_context(own: float, context: float, turn: TurnRow | None, w: Mapping[str, float]) -> float:
    """A chunk's cosine with its cosine in context mixed in: half and half for a memory and
    for a turn of up to ``context_words`` words, less for a longer turn (share 0.5 x
    context_words / words). A short reply ("yes, Tuesday") means what its neighbours say; a
    turn that says it all is not diluted by them (``docs/retrieval.md``, BEAM)."""
    share = 0.5
    if turn is not None and turn.words > w["context_words"]:
        share *= w["context_words"] / turn.words
    return (1.0 - share) * own + share * context


def _named(turn: TurnRow) -> bool:
    """A turn of someone the transcript names (a person in a conversation), not a bare role:
    asking says something there (the answer is in another turn), while a user's turns to an
    assistant are requests whatever they hold (``docs/retrieval.md``, BEAM)."""
    return bool(turn.speaker) and turn.speaker.lower() != turn.role.lower()


def _passes(plan: Plan, speakers: str, turn: TurnRow | None) -> bool:
    """The speaker and role filters (applied to the chunks both legs found)."""
    if plan.role and (turn is None or turn.role != plan.role):
        return False
    if plan.speaker:
        wanted = " ".join(plan.speaker.lower().split())
        return f"|{wanted}|" in speakers
    return True


_NAME_SPLIT = re.compile(r"[\s_.-]+")


def speaker_named(speakers: str, tokens: set[str], query: str) -> bool:
    """Does the (lower-cased) query name one of ``speakers`` ("|caroline|claude-code|")?

    A name counts when the query holds it whole ("claude-code", "Anna Maria") or its first
    word as a word of its own ("what did Anna say?" names "anna maria").
    """
    for name in speakers.strip("|").split("|"):
        if not name:
            continue
        if re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", query):
            return True
        first = _NAME_SPLIT.split(name, maxsplit=1)[0]
        if len(first) >= 3 and first in tokens:
            return True
    return False


def boost(
    found: Found,
    plan: Plan,
    w: Mapping[str, float],
    now: float,
    query: str,
    usage: Mapping[str, Usage] | None = None,
) -> float:
    """The product of ``found``'s boosts (each recorded in ``found.boosts`` for --explain).
    ``usage``: the vault's usage records, whose decayed relevance is newer than the one the
    index read from a memory's file (:mod:`memvault.usage`)."""
    row = found.row
    used = usage.get(row.id) if usage else None
    stored = used.relevance if used is not None and used.relevance is not None else row.relevance
    boosts = found.boosts
    if row.importance is not None and row.importance != 3:
        boosts["importance"] = 1.0 + w["importance"] * (int(row.importance) - 3)
    if row.type == "episodic" and found.created is not None:
        age_days = max(0.0, (now - float(found.created)) / 86400)
        bonus = w["recency"] * 0.5 ** (age_days / max(w["half_life_days"], 1e-6))
        if bonus > 1e-4:
            boosts["recency"] = 1.0 + bonus
    if stored is not None:
        kept = max(0.0, min(1.0, float(stored)))
        boosts["relevance"] = 1.0 - w["relevance"] * (1.0 - kept)
    success = row.success_rate
    if row.type == "procedural" and (plan.procedures or success is not None):
        rate = 0.5 if success is None else max(0.0, min(1.0, float(success)))
        boosts["success_rate"] = 1.0 + w["success"] * (rate - 0.5)
        if plan.procedures and trigger_hit(row.triggers or "", query):
            boosts["trigger"] = 1.0 + w["trigger"]
    if plan.prefer and row.type != plan.prefer:
        boosts["route"] = w["fallback"]
    return math.prod(boosts.values())


def trigger_hit(triggers: str, query: str) -> bool:
    """A procedure's trigger keyword (or phrase) appears in the (lower-cased) query."""
    for word in triggers.strip("|").split("|"):
        word = " ".join(word.lower().split())
        if word and re.search(r"(?<!\w)" + re.escape(word) + r"(?!\w)", query):
            return True
    return False


def rank(
    vault: Repository,
    idx: Index,
    query: str,
    plan: Plan,
    qvec: np.ndarray | Callable[[], np.ndarray],
) -> Ranked:
    """The hits for ``query`` under ``plan``, best first (newest first for a timeline),
    and the best evidence among the candidates: under ``plan.min_score``, no hit at all.
    (The floor holds the answer, not each hit: a question's answer is often a weak match,
    a short reply that says "yes, Tuesday", beside strong ones about the same thing.)
    ``qvec``: the vector leg's query vector, or a function giving it (called once the
    keyword leg has run)."""
    from ..index import query as iq

    w = weights(vault)
    tokens = iq.query_tokens(query)
    with idx.lock:
        legs = gather(idx, tokens, qvec, plan, w)
        if plan.explain:
            legs.dense_query = iq.dense_query(idx, query)
    debug.keep("legs", legs)
    if not legs.doc_of:
        return Ranked([], 0.0)
    found = fuse(legs, tokens, query, plan, w)
    now = now_utc().timestamp()
    lowered = " ".join(query.lower().split())
    usage = load_usage(vault.root)
    for item in found:
        item.score = item.base * boost(item, plan, w, now, lowered, usage)
    best = max((item.evidence for item in found), default=0.0)
    if best < plan.min_score and plan.order != "time":  # a timeline's match is its window
        found = []  # nothing plainly matches: no answer is better than a wrong one
    found.sort(key=lambda d: (-d.score, d.row.path, d.rowid))
    debug.keep("found", found)
    debug.lap("fuse and boost")
    hits = materialise(vault, idx, found[: plan.limit], plan, tokens, legs)
    debug.lap("materialise")
    if plan.order == "time":
        hits.sort(key=lambda h: h.created or "", reverse=True)
    else:
        newer_first_in_disputes(hits)
    return Ranked(hits, best)


def newer_first_in_disputes(hits: list[SearchHit]) -> None:
    """Until a dispute is resolved (``dispute keep``, or consolidation's newer-wins after
    ``disputes.newer_wins_after``), its newer fact is the one an answer should lead with:
    when both facts of a dispute are among the hits, the newer takes the older's place if
    it ranked below it (in place; the rest keep their order)."""
    for _ in range(len(hits)):  # each move settles one pair; bounded, no cycle possible
        if not _move_newer_up(hits):
            return


def _move_newer_up(hits: list[SearchHit]) -> bool:
    position = {h.id: k for k, h in enumerate(hits)}
    for i, hit in enumerate(hits):
        if hit.status != "disputed" or hit.memory is None:
            continue
        related = hit.memory.meta.get("related") or []
        for other_id in related if isinstance(related, list) else [related]:
            j = position.get(str(other_id), -1)
            newer = j > i and (hits[j].created or "") > (hit.created or "")
            if newer and hits[j].status == "disputed":
                hits.insert(i, hits.pop(j))  # the newer takes the older's place
                return True
    return False


def explanation(found: Found, legs: Legs) -> dict[str, Any]:
    """The score breakdown ``--explain`` shows."""
    ctx = found.context_cosine
    return {
        "keyword": {
            "rank": found.kw_rank,
            "bm25": round(found.bm25, 4),
            "normalised": round(legs.keyword_term(found.bm25), 4),
        },
        "vector": {
            "rank": found.vec_rank,
            "cosine": round(found.cosine, 4),
            "own": round(found.own_cosine, 4),
            "in_context": None if ctx is None else round(ctx, 4),
            "query": legs.dense_query,
        },
        "asks": None if found.turn is None else round(found.turn.asks, 4),
        "fusion": round(found.base, 4),
        "evidence": round(found.evidence, 4),
        "boosts": {k: round(v, 4) for k, v in found.boosts.items()},
        "score": round(found.score, 4),
        "chunk": found.rowid,
        "vector_search": legs.how,
    }


def materialise(
    vault: Repository,
    idx: Index,
    top: Sequence[Found],
    plan: Plan,
    tokens: Sequence[str],
    legs: Legs,
) -> list[SearchHit]:
    """The top memories as hits. The memory comes from the index (as of its last update,
    like the ranking itself), not from parsing its file again."""
    from ..index import query as iq

    with idx.lock:
        stored = iq.stored_docs(idx, [d.key for d in top])
        bodies = iq.chunk_bodies(idx, [d.rowid for d in top])
    hits: list[SearchHit] = []
    for found in top:
        raw = stored.get(found.key)
        if raw is None:
            continue
        data = json.loads(raw)
        memory = Memory(data["id"], data["type"], found.row.path, data["meta"], data["content"])
        if not vault.identity.can_see(memory):
            continue  # belt and braces: the SQL filter already excluded it
        created = memory.created
        turn = None
        if found.turn is not None:
            at = found.turn.at
            created = dt.datetime.fromtimestamp(at, dt.UTC) if at is not None else created
            stamp = created.strftime("%Y-%m-%dT%H:%M:%SZ") if created else None
            turn = TurnRef(found.turn.turn, found.turn.speaker, found.turn.role, stamp)
        hits.append(
            SearchHit(
                id=memory.id,
                path=memory.path,
                type=memory.type,
                category=memory.category,
                title=memory.title,
                snippet=snippet(bodies.get(found.rowid, ""), tokens),
                score=found.score,
                relevance=found.evidence,
                status=memory.status,
                scope=memory.scope,
                created=created.strftime("%Y-%m-%dT%H:%M:%SZ") if created else None,
                memory=memory,
                explain=explanation(found, legs) if plan.explain else None,
                turn=turn,
            )
        )
    return hits
