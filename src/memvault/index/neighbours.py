"""Nearest neighbours *between memories*, from the vectors the index already holds.

Search asks "which chunks are nearest to this query"; consolidation asks, for every
memory, "which memories of the same group (type, category, owner) are among its ``k``
nearest with a cosine of at least ``threshold``". Both read the same vectors, so nothing
is embedded again unless the index is behind the files.

A memory's vector is its chunk's vector (the mean of its chunks' vectors, re-normalised,
for the rare memory longer than ``index.chunk_words``). Two ways to find the neighbours,
chosen like search chooses (:attr:`memvault.index.handle.Index.in_memory`):

* **exact**, while the groups hold at most ``EXACT_PAIRS`` pairs in all (the sum of
  their sizes squared: one group of ~55,000) and ``index.exact_below`` is not 0: per
  group, a blockwise matrix product, and per row the best ``k`` of the few scores that
  reach the threshold. Quadratic, yet up to that bound several times faster than an HNSW
  query per memory (``docs/performance.md``).
* **ann**: Chroma's HNSW collection of the type, queried in batches with every memory's
  vector. The collections hold no metadata (filters are SQLite's job, see
  :mod:`memvault.index.query`), so the nearest chunks come back unfiltered and are kept when
  they belong to the same group; a memory whose fetched neighbours could still hide an
  in-group one above the threshold (the farthest fetched is still above it) is asked
  again, deeper. Cost per memory is one HNSW query: near-linear in the vault's size.

Memories whose indexed text is not their current text (the index is behind the files, a
writer raced us) are embedded on the fly and compared exactly with their group.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any

from ..values import Record, field
from .text import chunk_memory

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..memory import Memory
    from ..store.repository import Repository
    from .handle import Index

Progress = Callable[[str, int, int], None]
# Chunk-level cosine a candidate may fall short of the threshold by and still be rescored
# with memory-level vectors (only differs for memories of several chunks).
MARGIN = 0.05
BATCH = 256


class MemoryVectors(Record):
    """One L2-normalised vector per memory, and where it came from."""

    matrix: np.ndarray
    rowids: list[tuple[int, ...]]  # current chunk rowids in the index (empty: embedded now)
    stale: list[int]  # positions embedded on the fly

    def __len__(self) -> int:
        return len(self.rowids)


class NeighbourReport(Record):
    """How the neighbours were found (for the consolidation report and the benchmark)."""

    mode: str = "exact"
    memories: int = 0
    queries: int = 0
    deepened: int = 0
    stale: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "memories": self.memories,
            "queries": self.queries,
            "deepened": self.deepened,
            "stale": self.stale,
            "seconds": round(self.seconds, 3),
            "notes": self.notes,
        }


def open_index(vault: Repository, writer: bool) -> Index:
    """The vault's index, up to date with the files.

    ``writer``: the caller holds the vault lock (a real consolidation), so the index is
    brought up to date here as ``memvault reindex`` would; otherwise (``--dry-run``) as a
    search would, never waiting for another writer.
    """
    from .handle import open_indexes
    from .service import ensure_fresh, update_locked

    if not writer:
        return ensure_fresh(vault)
    update_locked(vault)
    fresh = open_indexes.get(vault.root)
    if fresh is None:  # pragma: no cover - an update always leaves an open handle
        raise RuntimeError("the search index could not be opened after a rebuild")
    return fresh


def memory_vectors(
    idx: Index | None,
    memories: Sequence[Memory],
    embed: Callable[[list[str]], np.ndarray],
    progress: Progress | None = None,
    current: bool = False,
) -> MemoryVectors:
    """The stored vector of each memory; memories the index holds other text for are embedded.

    ``current``: the index was brought up to date with these very files under the vault
    lock, so its vectors are taken as they are (no chunk hashes to compare).
    """
    import numpy as np

    dims = idx.dimensions if idx is not None else 0
    chunk_words = int(idx.manifest.get("chunk_words") or 180) if idx is not None else 180
    stored: dict[str, dict[int, tuple[int, str, bytes | None]]] = defaultdict(dict)
    paths = [m.path for m in memories] if idx is not None else []
    for start in range(0, len(paths), 900):
        assert idx is not None
        part = paths[start : start + 900]
        sql = (
            "SELECT d.path, c.n, c.rowid, c.hash, c.vec "
            "FROM chunks AS c JOIN docs AS d ON d.key = c.doc "
            f"WHERE d.path IN ({','.join('?' * len(part))})"
        )
        for path, n, rowid, chash, blob in idx.conn.execute(sql, part):
            stored[str(path)][int(n)] = (int(rowid), str(chash), blob)
    rowids: list[tuple[int, ...]] = []
    stale: list[int] = []
    todo: list[tuple[int, list[str]]] = []
    found: dict[int, np.ndarray] = {}
    for i, m in enumerate(memories):
        have = stored.get(m.path, {})
        blobs = [have[n][2] for n in sorted(have)]
        if current and blobs and all(b is not None and len(b) == dims * 4 for b in blobs):
            vecs = [np.frombuffer(b, dtype=np.float32) for b in blobs if b is not None]
            found[i] = vecs[0] if len(vecs) == 1 else np.mean(vecs, axis=0)
            rowids.append(tuple(have[n][0] for n in sorted(have)))
            continue
        chunks = chunk_memory(m, chunk_words)
        rows = [have.get(c.n) for c in chunks]
        if len(have) == len(chunks) and all(
            r is not None and r[1] == c.hash and r[2] is not None and len(r[2]) == dims * 4
            for r, c in zip(rows, chunks, strict=True)
        ):
            vecs = [np.frombuffer(r[2], dtype=np.float32) for r in rows if r is not None and r[2]]
            found[i] = vecs[0] if len(vecs) == 1 else np.mean(vecs, axis=0)
            rowids.append(tuple(r[0] for r in rows if r is not None))
        else:
            rowids.append(())
            stale.append(i)
            todo.append((i, [c.embed_text for c in chunks]))
    if todo:
        texts = [t for _, ts in todo for t in ts]
        embedded: list[np.ndarray] = []
        for start in range(0, len(texts), BATCH):
            embedded.extend(np.asarray(embed(texts[start : start + BATCH]), dtype=np.float32))
            if progress:
                progress("embedding", min(start + BATCH, len(texts)), len(texts))
        at = 0
        for i, ts in todo:
            found[i] = np.mean(embedded[at : at + len(ts)], axis=0)
            at += len(ts)
    if not found:
        return MemoryVectors(np.zeros((0, max(dims, 1)), dtype=np.float32), rowids, stale)
    matrix = np.vstack([found[i] for i in range(len(memories))]).astype(np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix /= np.where(norms > 0, norms, 1.0)
    return MemoryVectors(matrix, rowids, stale)


# Pairs (sum over groups of size squared) up to which neighbours are found by comparing
# every pair of a group: a pair in a matrix product costs a tiny fraction of one HNSW query
# per memory, so exact wins up to groups larger than this bound allows; the bound stops
# the quadratic cost before it catches up with the queries (``docs/performance.md``).
EXACT_PAIRS = 3_000_000_000


def _few(idx: Index, members: dict[Hashable, list[int]]) -> bool:
    if idx.exact_below <= 0:
        return False  # the vault asks Chroma always (``index.exact_below: 0``)
    return sum(len(g) ** 2 for g in members.values()) <= EXACT_PAIRS


def similar_pairs(
    idx: Index | None,
    vecs: MemoryVectors,
    types: Sequence[str],
    groups: Sequence[Hashable],
    k: int,
    threshold: float,
    progress: Progress | None = None,
    mode: str | None = None,
    cache: dict[Any, Any] | None = None,
) -> tuple[dict[tuple[int, int], float], NeighbourReport]:
    """``{(i, j): cosine}`` (i < j) such that j is among i's ``k`` nearest memories of the
    same group with cosine ≥ ``threshold``, or i among j's.

    ``types[i]`` is memory i's type (its Chroma collection), ``groups[i]`` its group: pairs
    never cross groups. ``mode`` forces ``"exact"`` or ``"ann"`` (default: as search does).
    ``cache`` keeps the vector store's answers for another call on the same index (dedup
    and promotion ask about the same episodes: the second asks nothing the first asked).
    """
    started = time.perf_counter()
    report = NeighbourReport(memories=len(vecs), stale=len(vecs.stale))
    pairs: dict[tuple[int, int], float] = {}
    if len(vecs) < 2 or k <= 0:
        report.seconds = time.perf_counter() - started
        return pairs, report
    members: dict[Hashable, list[int]] = defaultdict(list)
    for i, g in enumerate(groups):
        members[g].append(i)
    chosen = mode or ("exact" if idx is None or _few(idx, members) else "ann")
    if idx is None:
        chosen = "exact"
    if chosen == "ann" and idx is not None:
        try:
            ask = _Asker(idx, {} if cache is None else cache)
            _ann(ask, vecs, types, groups, members, k, threshold, pairs, report, progress)
        except Exception as exc:  # noqa: BLE001 - Chroma unreachable or damaged: exact works
            report.notes.append(f"vector store unavailable ({type(exc).__name__}): exact instead")
            chosen = "exact"
    report.mode = chosen
    if chosen == "exact":
        for group in members.values():
            _exact(vecs.matrix, group, group, k, threshold, pairs)
    else:
        # Memories the index has other text for were not in Chroma's answers: compare them
        # exactly with their group (few: the index is normally current).
        stale_by_group: dict[Hashable, list[int]] = defaultdict(list)
        for i in vecs.stale:
            stale_by_group[groups[i]].append(i)
        for g, rows in stale_by_group.items():
            _exact(vecs.matrix, rows, members[g], k, threshold, pairs)
    report.seconds = time.perf_counter() - started
    return pairs, report


CELLS = 16_000_000  # scores per block of :func:`_exact` (float32: 64 MB)


def _exact(
    matrix: np.ndarray,
    rows: Sequence[int],
    cols: Sequence[int],
    k: int,
    threshold: float,
    pairs: dict[tuple[int, int], float],
    block: int = 1024,
) -> None:
    """Each row's ``k`` most similar columns at or above ``threshold``, by blocks of rows
    scored against every column at once (one matrix product). Only the scores that reach
    the threshold are sorted -- a handful per row -- rather than every row's whole line."""
    import numpy as np

    if len(cols) < 2:
        return
    col_idx = np.asarray(cols, dtype=np.int64)
    sub = matrix[col_idx]
    where = np.full(len(matrix), -1, dtype=np.int64)  # a memory's column, if it has one
    where[col_idx] = np.arange(len(col_idx))
    take = min(k, len(cols) - 1)
    block = max(16, min(block, CELLS // len(cols)))  # a block holds at most CELLS scores
    for start in range(0, len(rows), block):
        row_idx = np.asarray(rows[start : start + block], dtype=np.int64)
        sims = matrix[row_idx] @ sub.T
        own = where[row_idx]
        mine = np.flatnonzero(own >= 0)
        sims[mine, own[mine]] = -np.inf  # not its own neighbour
        if take < sims.shape[1]:
            # scores below each row's best ``take`` can't count: mask them when many pass
            passing = np.count_nonzero(sims >= threshold)
            if passing > 8 * take * len(row_idx):
                cut = np.partition(sims, -take, axis=1)[:, -take][:, None]
                sims[sims < cut] = -np.inf
                if np.count_nonzero(sims >= threshold) > 8 * take * len(row_idx):
                    # rows of identical vectors tie past ``take``: any ``take`` of the tied
                    ties = np.argpartition(-sims, take - 1, axis=1)[:, :take]
                    kept = np.full_like(sims, -np.inf)
                    np.put_along_axis(kept, ties, np.take_along_axis(sims, ties, axis=1), axis=1)
                    sims = kept
        rr, cc = np.nonzero(sims >= threshold)
        if len(rr) == 0:
            continue
        vals = sims[rr, cc]
        order = np.lexsort((cc, -vals, rr))  # by row, best first, ties by column
        rr, cc, vals = rr[order], cc[order], vals[order]
        rank = np.arange(len(rr)) - np.searchsorted(rr, rr, side="left")
        keep = rank < take
        for r, c, sim in zip(
            row_idx[rr[keep]].tolist(), col_idx[cc[keep]].tolist(), vals[keep].tolist(), strict=True
        ):
            pairs[(min(r, c), max(r, c))] = float(sim)


class _Asker:
    """Queries to the vector store, each answered once (by the memory's indexed chunks and
    the depth asked: the same memory's vector, whoever asks)."""

    def __init__(self, idx: Index, answers: dict[Any, Any]) -> None:
        self.idx = idx
        self.answers = answers

    def nearest(
        self, doc_type: str, vecs: MemoryVectors, batch: list[int], n: int
    ) -> list[tuple[list[str], list[float]]]:
        import numpy as np

        keys = [(doc_type, n, vecs.rowids[i]) if vecs.rowids[i] else None for i in batch]
        ask = [i for i, key in zip(batch, keys, strict=True) if key not in self.answers]
        fresh: dict[int, tuple[list[str], list[float]]] = {}
        if ask:
            col = self.idx.collection(doc_type)
            result = col.query(
                query_embeddings=vecs.matrix[ask], n_results=n, include=["distances"]
            )
            for i, ids, dists in zip(ask, result["ids"], result["distances"], strict=True):
                fresh[i] = (list(ids), list(dists))
                if vecs.rowids[i] and not self.idx.url:  # kept compact: local ids are rowids
                    answer = (np.asarray(ids, dtype=np.int64), np.asarray(dists, np.float32))
                    self.answers[(doc_type, n, vecs.rowids[i])] = answer
        out = []
        for i, key in zip(batch, keys, strict=True):
            if i in fresh:
                out.append(fresh[i])
            else:
                ids, dists = self.answers[key]
                out.append(([str(v) for v in ids.tolist()], dists.tolist()))
        return out


def _ann(
    ask: _Asker,
    vecs: MemoryVectors,
    types: Sequence[str],
    groups: Sequence[Hashable],
    members: dict[Hashable, list[int]],
    k: int,
    threshold: float,
    pairs: dict[tuple[int, int], float],
    report: NeighbourReport,
    progress: Progress | None,
) -> None:
    idx = ask.idx
    owner: dict[int, int] = {r: i for i, rows in enumerate(vecs.rowids) for r in rows}
    by_type: dict[str, list[int]] = defaultdict(list)
    for i, t in enumerate(types):
        if len(members[groups[i]]) > 1:  # a memory alone in its group has no neighbour to find
            by_type[t].append(i)
    done = 0
    todo_total = sum(len(v) for v in by_type.values())
    for doc_type, queue in sorted(by_type.items()):
        col = idx.collection(doc_type)
        total = idx.chunk_count(doc_type)
        if col is None or total == 0:
            raise LookupError(f"no vector collection for {doc_type}")
        n = min(total, 2 * k + 1)
        first = True
        while queue and n > 0:
            deeper: list[int] = []
            for start in range(0, len(queue), BATCH):
                batch = queue[start : start + BATCH]
                answers = ask.nearest(doc_type, vecs, batch, n)
                report.queries += len(batch)
                for i, (ids, dists) in zip(batch, answers, strict=True):
                    rows = _rowids(idx, doc_type, ids)
                    found: dict[int, float] = {}
                    for rowset, dist in zip(rows, dists, strict=True):
                        if 1.0 - float(dist) < threshold - MARGIN:
                            continue
                        for r in rowset:
                            j = owner.get(r)
                            if j is None or j == i or j in found or groups[j] != groups[i]:
                                continue
                            found[j] = float(vecs.matrix[i] @ vecs.matrix[j])
                    close = [(s, j) for j, s in found.items() if s >= threshold]
                    kept = sorted(close, reverse=True)[:k]
                    for sim, j in kept:
                        pairs[(min(i, j), max(i, j))] = sim
                    # Everything fetched was close: an in-group neighbour may be further down.
                    full = len(ids) >= n and n < total and len(kept) < k
                    if full and dists and 1.0 - float(dists[-1]) >= threshold - MARGIN:
                        deeper.append(i)
                if first:
                    done += len(batch)
                    if progress:
                        progress("neighbours", done, todo_total)
            first = False
            report.deepened += len(deeper)
            queue = deeper
            n = min(total, n * 4) if deeper and n < total else 0


def _rowids(idx: Index, doc_type: str, ids: Sequence[str]) -> list[tuple[int, ...]]:
    """Chunk rowids of Chroma ids, in order (a shared server's ids are text hashes)."""
    if not idx.url:
        return [(int(v),) for v in ids]
    local = idx.rows_for(doc_type, list(ids))
    return [tuple(local.get(v, ())) for v in ids]
