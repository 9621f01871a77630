"""The vector side of the index: embedding chunks in batches, and keeping the Chroma
collections (embedded, or shared on a server) in step with the vectors kept in SQLite."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import IndexError_
from ..paths import MEMORY_TYPES as TYPES
from ..values import Record, field
from . import pending, store
from .handle import Index, Progress
from .pending import STEP, upsert
from .plan import ApplyStats

if TYPE_CHECKING:  # pragma: no cover
    from ..embeddings import Embedder

EMBED_BATCH = 64


class ChromaOps(Record):
    """Vector writes collected while SQLite is updated, sent to Chroma per type.

    ``vector_ids`` turns chunk rowids into Chroma ids (:meth:`Index.vector_ids`): call
    :meth:`delete` before the chunks' rows go."""

    vector_ids: Callable[[Sequence[int]], list[str]]
    deletes: dict[str, list[str]] = field(default_factory=dict)
    upserts: dict[str, tuple[list[str], list[Any]]] = field(default_factory=dict)

    def delete(self, doc_type: str, rowids: Iterable[int]) -> None:
        self.deletes.setdefault(doc_type, []).extend(self.vector_ids(list(rowids)))

    def upsert(self, doc_type: str, rowid: int, vec: Any) -> None:
        ids, vecs = self.upserts.setdefault(doc_type, ([], []))
        ids.append(self.vector_ids([rowid])[0])
        vecs.append(vec)

    def spare(self, items: list[tuple[int, str, str]]) -> None:
        """Chunks about to be embedded, ``(rowid, type, text)``: a removed chunk's vector id
        taken again by a new chunk of the same type (SQLite reuses the highest row number) is
        written again, not deleted after the new vector was sent or queued."""
        again: dict[str, set[str]] = {}
        vids = self.vector_ids([rowid for rowid, _, _ in items])
        for (_, doc_type, _), vid in zip(items, vids, strict=True):
            again.setdefault(doc_type, set()).add(vid)
        for doc_type, ids in self.deletes.items():
            if doc_type in again:
                self.deletes[doc_type] = [i for i in ids if i not in again[doc_type]]

    def queue(self, conn: sqlite3.Connection) -> None:
        """Queue these writes for the vault's own Chroma (:mod:`memvault.index.pending`);
        an upsert after a delete of the same id wins, as when they are sent."""
        for doc_type, ids in self.deletes.items():
            pending.queue(conn, doc_type, "delete", ids)
        for doc_type, (ids, _) in self.upserts.items():
            pending.queue(conn, doc_type, "upsert", ids)


def embed_into(
    conn: sqlite3.Connection,
    idx: Index,
    items: list[tuple[int, str, str]],
    embedder: Embedder,
    progress: Progress | None,
    defer: bool = False,
) -> None:
    """Embed ``items`` in batches; vectors go to SQLite now and to Chroma from a second
    thread, so Chroma's writes overlap the next batch's embedding (``defer``: into
    Chroma's queue instead, :mod:`memvault.index.pending`)."""
    import queue

    import numpy as np

    if progress is not None:
        progress(0, len(items))
    if not items:
        return
    # Similar lengths batch together: less padding, faster embedding.
    order = sorted(range(len(items)), key=lambda i: len(items[i][2]))
    jobs: queue.Queue[tuple[str, list[str], Any] | None] = queue.Queue(maxsize=4)
    failure: list[BaseException] = []
    # Set when the embedding loop is interrupted (Ctrl-C, a cancelled reindex): queued writes
    # are dropped, not waited for; the manifest stays dirty, so the next open reloads Chroma.
    abandoned = threading.Event()

    def writer() -> None:
        while True:
            job = jobs.get()
            if job is None:
                return
            if failure or abandoned.is_set() or idx.unpublished:
                continue
            doc_type, ids, vecs = job
            try:
                upsert(idx.chroma_collection(doc_type, create=True), ids, vecs)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
                if idx.url and isinstance(exc, Exception):
                    idx.unpublished = True  # a shared server that is away: sent later (sync)
                else:
                    failure.append(exc)

    thread = threading.Thread(target=writer, name="memvault-chroma-writer", daemon=True)
    thread.start()
    done = 0
    try:
        for start in range(0, len(order), EMBED_BATCH):
            batch = [items[i] for i in order[start : start + EMBED_BATCH]]
            matrix = np.asarray(
                embedder.embed_documents([text for _, _, text in batch]), dtype=np.float32
            )
            if matrix.shape != (len(batch), idx.dimensions):
                raise IndexError_(
                    f"the embedder returned vectors of shape {matrix.shape}, "
                    f"expected ({len(batch)}, {idx.dimensions})"
                )
            conn.executemany(
                "UPDATE chunks SET vec = ? WHERE rowid = ?",
                [(matrix[i].tobytes(), rowid) for i, (rowid, _, _) in enumerate(batch)],
            )
            for doc_type, (ids, vecs) in _by_type(idx, batch, matrix).items():
                if defer:
                    pending.queue(conn, doc_type, "upsert", ids)
                else:
                    jobs.put((doc_type, ids, vecs))
            done += len(batch)
            if failure:
                raise failure[0]
            if progress is not None:
                progress(done, len(items))
    except BaseException:
        abandoned.set()
        raise
    finally:
        jobs.put(None)
        thread.join()
    if failure:
        raise failure[0]


def _by_type(
    idx: Index, batch: list[tuple[int, str, str]], matrix: Any
) -> dict[str, tuple[list[str], Any]]:
    """A batch's vector ids and vectors, per memory type."""
    import numpy as np

    rows: dict[str, list[int]] = {}
    for i, (_, doc_type, _) in enumerate(batch):
        rows.setdefault(doc_type, []).append(i)
    vids = idx.vector_ids([rowid for rowid, _, _ in batch])
    return {t: ([vids[i] for i in at], matrix[np.asarray(at)]) for t, at in rows.items()}


def take_shared(
    idx: Index, items: list[tuple[int, str, str]], stats: ApplyStats
) -> list[tuple[int, str, str]]:
    """On a shared server, chunks whose text is there already (pushed through the branch's
    indexer, or written by another clone) take their vector from it instead of being
    embedded here; returns the items still to embed."""
    import numpy as np

    if not idx.url or not items:
        return items
    store.ensure_hash_index(idx.conn)
    left: list[tuple[int, str, str]] = []
    for doc_type in dict.fromkeys(t for _, t, _ in items):
        group = [item for item in items if item[1] == doc_type]
        col = idx.collection(doc_type)
        vids = idx.vector_ids([rowid for rowid, _, _ in group])
        found: dict[str, Any] = {}
        try:
            for start in range(0, len(vids) if col is not None else 0, 1000):
                part = list(dict.fromkeys(vids[start : start + 1000]))
                got = col.get(ids=part, include=["embeddings"])
                vecs = got["embeddings"] if got["embeddings"] is not None else []
                for vid, vec in zip(got["ids"], vecs, strict=False):
                    found[vid] = np.asarray(vec, dtype=np.float32)
        except Exception:  # noqa: BLE001 - the server is away: embed here, send later
            idx.unpublished = True
        rows = []
        for item, vid in zip(group, vids, strict=True):
            vec = found.get(vid)
            if vec is None or vec.shape != (idx.dimensions,):
                left.append(item)
            else:
                rows.append((vec.tobytes(), item[0]))
        idx.conn.executemany("UPDATE chunks SET vec = ? WHERE rowid = ?", rows)
        stats.fetched += len(rows)
    return left


def send_ops(idx: Index, ops: ChromaOps) -> None:
    import numpy as np

    for doc_type, ids in ops.deletes.items():
        if idx.url:
            # A shared collection: only the branch's indexer deletes, and never a vector
            # some chunk of this index still uses (identical text in another memory).
            ids = unused_ids(idx, doc_type, ids) if idx.prune else []
        col = idx.chroma_collection(doc_type)
        if col is not None and ids:
            for start in range(0, len(ids), STEP):
                col.delete(ids=ids[start : start + STEP])
    for doc_type, (ids, vecs) in ops.upserts.items():
        if ids:
            upsert(idx.chroma_collection(doc_type, create=True), ids, np.stack(vecs))


def unused_ids(idx: Index, doc_type: str, ids: list[str]) -> list[str]:
    used: set[str] = set()
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), 900):
        part = unique[start : start + 900]
        sql = (
            "SELECT c.hash FROM chunks AS c JOIN docs AS d ON d.key = c.doc "
            f"WHERE d.type = ? AND c.hash IN ({','.join('?' * len(part))})"
        )
        used.update(str(h) for (h,) in idx.conn.execute(sql, [doc_type, *part]))
    return [i for i in unique if i not in used]


def reload_chroma(idx: Index, progress: Progress | None = None) -> int:
    """Rebuild the Chroma collections from the vectors kept in SQLite (no embedding); while
    the index defers Chroma's writes, only queued (:mod:`memvault.index.pending`)."""
    if idx.url:
        return publish(idx, progress)
    with store.transaction(idx.conn):
        store.upgrade(idx.conn)
        pending.queue_reload(idx.conn)
    if idx.defers:
        return 0
    return pending.carry_out(idx, progress)


def publish(idx: Index, progress: Progress | None = None) -> int:
    """Server mode: see that the shared collections hold a vector for every chunk of this
    index, sending the missing ones from SQLite. Nothing is embedded, nothing is dropped
    (other clones search these collections)."""
    import numpy as np

    store.ensure_hash_index(idx.conn)
    total = idx.conn.execute("SELECT count(*) FROM chunks WHERE vec IS NOT NULL").fetchone()[0]
    done = sent = 0
    for doc_type in TYPES:
        rows = idx.conn.execute(
            "SELECT c.hash, c.vec FROM chunks AS c JOIN docs AS d ON d.key = c.doc "
            "WHERE d.type = ? AND c.vec IS NOT NULL ORDER BY c.hash",
            (doc_type,),
        ).fetchall()
        if not rows:
            continue
        col = idx.chroma_collection(doc_type, create=True)
        for start in range(0, len(rows), 2000):
            batch = dict(rows[start : start + 2000])
            have = set(col.get(ids=list(batch), include=[])["ids"])
            missing = [h for h in batch if h not in have and len(batch[h]) == idx.dimensions * 4]
            if missing:
                vecs = np.stack([np.frombuffer(batch[h], dtype=np.float32) for h in missing])
                upsert(col, missing, vecs)
                sent += len(missing)
            done += min(2000, len(rows) - start)
            if progress is not None:
                progress(done, total)
    idx.forget_counts()
    return int(sent)
