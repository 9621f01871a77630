"""Running a query: load the embedder and the index (in parallel when both are cold), score
with :mod:`memvault.search.ranking`, and rebuild once if the index breaks underneath."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import debug
from ..errors import MemvaultError
from ..paths import MEMORY_TYPES
from ..threads import Background
from .ranking import Plan, Ranked, rank

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..embeddings import Embedder
    from ..index.handle import Index
    from ..store.repository import Repository

# Embedders this process has already used: loaded, so a query costs milliseconds.
_warm_embedders: set[str] = set()


def query_vector(vault: Repository, query: str, embedder: Embedder | None = None) -> np.ndarray:
    """The query's embedding with the vault's embedder (``embedder``: the one the caller's
    thread resolved; a worker thread has no searched index of its own, and during an
    embedder switch it would pick the index being built rather than the one searched)."""
    from ..index.manifest import embedder_for

    embedder = embedder or embedder_for(vault)
    vec = embedder.embed_query(query)
    _warm_embedders.add(embedder.identity)
    return vec


def _dense_text(vault: Repository, index: Index | None, query: str) -> tuple[str, Embedder] | None:
    """The text the vector leg embeds and the embedder it embeds with, for a search of
    ``index`` (None: the index this thread's last search read, else the open one); None
    when there is none to ask, or asking it failed (a handle closed meanwhile)."""
    from ..index import open_indexes
    from ..index.manifest import embedder_for
    from ..index.query import dense_query

    idx = index or open_indexes.searched(vault.root)
    if idx is None:
        return None
    try:
        return dense_query(idx, query), embedder_for(vault)
    except Exception:  # noqa: BLE001 - only a head start: the search asks again
        return None


def _recheck(
    vault: Repository,
    idx: Index,
    query: str,
    early: tuple[str, Embedder] | None,
    dense: Background[np.ndarray] | None,
) -> Background[np.ndarray]:
    """The embedding begun before the index check (``dense``, of ``early``: the text and
    embedder of the index the last search read) if the index searched now wants the same;
    else the query embedded again. The check may have changed the index (who speaks in it,
    the embedder of its vectors); the first embedding then runs on, unused."""
    from ..index.manifest import embedder_for
    from ..index.query import dense_query

    text, embedder = dense_query(idx, query), embedder_for(vault)
    if dense is None or early is None or early[0] != text:
        return Background(query_vector, vault, text, embedder)
    if early[1].identity != embedder.identity:
        return Background(query_vector, vault, text, embedder)
    return dense


def _cold(vault: Repository) -> bool:
    from ..index.manifest import embedder_for

    return embedder_for(vault).identity not in _warm_embedders


def run(
    vault: Repository,
    query: str,
    plan: Plan,
    *,
    index: Index | None = None,
    qvec: np.ndarray | None = None,
) -> Ranked:
    """Score ``query`` under ``plan``: the hits best first, the best evidence of any
    candidate, and the index's note (stale index, ...)."""
    import sqlite3

    from ..index import ensure_fresh, open_indexes, store

    if not query or not query.strip():
        raise MemvaultError("empty query: say what to look for", key="query")
    entry = _trace_query(query, plan)
    # this process's first search of the vault?
    first = index is None and open_indexes.peek(vault.root) is None
    if first:
        from ..store.git.early import start_early

        start_early(vault.root)  # git's look at the files runs while the model loads
    pending: Background[np.ndarray] | None = None
    dense: Background[np.ndarray] | None = None
    early: tuple[str, Embedder] | None = None
    if qvec is None and (first or _cold(vault)):
        # Load the model and embed the query while the index is being checked: in a fresh
        # process loading the model is most of the wait, and it runs largely outside the GIL.
        pending = Background(query_vector, vault, query)
    elif qvec is None:
        # A warm process: embed the text the vector leg searches with while the index is
        # checked and the keyword leg runs (the model, SQLite and the file checks all work
        # largely outside the GIL).
        early = _dense_text(vault, index, query)
        dense = Background(query_vector, vault, *early) if early is not None else None
    try:
        idx = index or ensure_fresh(vault)
    finally:
        if first:
            from ..store.git.early import drop_early

            drop_early(vault.root)  # unused (another path was taken): never read later
    debug.lap("index check")
    got: list[np.ndarray] = []
    if qvec is None and pending is None:
        dense = _recheck(vault, idx, query, early, dense)

    def vector() -> np.ndarray:
        # Asked by the ranking once its keyword leg ran (that leg needs no vector: in a new
        # process it runs while the model is still loading).
        nonlocal qvec
        if not got and dense is not None:
            got.append(dense.result())
            debug.lap("embed query (beside the keyword leg)")
        if not got:
            if pending is not None and qvec is None:
                qvec = pending.result()
                debug.lap("wait for the query vector")
                if entry is not None:  # it was embedded in a thread, while the index was checked
                    entry.stages.append(("embed query (in parallel)", pending.ms))
            got.append(dense_vector(vault, idx, query, qvec))
            debug.lap("embed query")
        return got[0]

    try:
        ranked = rank(vault, idx, query, plan, vector)
    except sqlite3.DatabaseError:
        # The index broke under us (deleted or garbled while open): rebuild once and retry.
        open_indexes.forget(vault.root, release_chroma=True)
        store.remove_all(vault.root)
        idx = ensure_fresh(vault)
        got.clear()
        ranked = rank(vault, idx, query, plan, vector)
    if entry is not None:
        from .tracing import summarise

        summarise(entry)
    ranked.note = idx.note
    return ranked


# The last query re-embedded without speaker names: (the vector it replaced, the text, its
# vector). ``context`` runs one query per section with the same vector, embedded once so.
_last_dense: tuple[object, str, np.ndarray] | None = None


def dense_vector(
    vault: Repository, idx: Index, query: str, qvec: np.ndarray | None = None
) -> np.ndarray:
    """The vector the vector leg searches with: the query's own (``qvec``, the embedding of
    ``query`` as written, when given) or, when the query names someone who speaks in the
    vault, the embedding of the query without those names
    (:func:`memvault.index.query.dense_query`)."""
    global _last_dense
    from ..index.query import dense_query

    text = dense_query(idx, query)
    if text == query:
        return qvec if qvec is not None else query_vector(vault, query)
    last = _last_dense
    if last is not None and qvec is not None and last[0] is qvec and last[1] == text:
        return last[2]
    vec = query_vector(vault, text)
    _last_dense = (qvec, text, vec)
    return vec


def _trace_query(query: str, plan: Plan) -> debug.QueryTrace | None:
    """Start recording this query when debug mode traces the read (else None, for free)."""
    if debug.current() is None:
        return None
    from .tracing import plan_info

    return debug.begin_query(query, plan_info(plan))


def warm(vault: Repository) -> None:
    """Load the embedder and open the index now (a server calls this at start): the vectors
    into memory for a small index (and their reduced copies above
    :data:`memvault.index.coarse.COARSE_ABOVE`), the Chroma collections for a large one."""
    from ..index import ensure_fresh

    idx = ensure_fresh(vault)
    query_vector(vault, "warm up")
    with idx.lock:
        for doc_type in MEMORY_TYPES:
            if not idx.chunk_count(doc_type):
                continue
            if idx.in_memory:
                idx.memory_vectors(doc_type)
            else:
                idx.collection(doc_type)
        if idx.in_memory:
            from ..index.coarse import prepare

            prepare(idx)  # the reduced copies of a large index (index/coarse.py)
        idx.chunk_docs()
