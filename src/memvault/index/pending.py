"""Chroma's writes, queued in SQLite while searches score vectors exactly.

Below ``index.exact_below`` chunks a vault's own searches score the vectors kept in SQLite
(:attr:`memvault.index.handle.Index.in_memory`) and don't open Chroma; importing chromadb
and writing to it was most of the first search after a write. So for a vault's
own (embedded) Chroma an update writes what Chroma should do into ``chroma_pending`` in the
same transaction as the chunks, and :func:`carry_out` does it when a collection is opened
to be read (the index grew past the threshold, ``index.exact_below: 0``, consolidation
asking Chroma's graph for neighbours), or when an update finds the index above the
threshold. After a rebuild the queue holds every chunk: the first read loads them all.

A row is the last word on one vector: ``(type, vector id, "upsert" | "delete")``, replaced
by a later op on the same id (which gets a new, higher ``seq``); ``("*", "*", "reload")``
means "drop the collections and load every stored vector". An upsert reads the chunk's
vector from SQLite when it is carried out. One process carries out the queue at a time (a
file lock, not SQLite's: writers go on meanwhile); it deletes the rows it read, by ``seq``,
once Chroma has them, so an op queued meanwhile stays for the next time, and one that dies
half-way leaves the queue as it was (every op can be done again). A shared server
(``index.url``) is written at once, as other clones search it.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from ..errors import MemvaultError
from ..paths import MEMORY_TYPES as TYPES
from ..store.catalog_tables import rows_in
from ..store.lock import file_lock
from .store import CorruptIndex, transaction

STEP = 5000  # vectors per Chroma call
Progress = Callable[[int, int], None]


class Index(Protocol):
    """What this module needs of :class:`memvault.index.handle.Index` (which calls it)."""

    conn: sqlite3.Connection
    url: str | None
    dimensions: int

    def lock_path(self, name: str) -> Path: ...
    def reset_chroma(self) -> None: ...
    def chroma_collection(self, doc_type: str, create: bool = False) -> Any: ...
    def drop_collections(self) -> None: ...
    def forget_counts(self) -> None: ...


def queue(conn: sqlite3.Connection, doc_type: str, op: str, vids: Iterable[str]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO chroma_pending (type, vid, op) VALUES (?, ?, ?)",
        [(doc_type, vid, op) for vid in vids],
    )


def queue_reload(conn: sqlite3.Connection) -> None:
    queue(conn, "*", "reload", ["*"])


def waiting(conn: sqlite3.Connection) -> int:
    """How many ops wait (0: Chroma is in step with SQLite)."""
    try:
        return int(conn.execute("SELECT count(*) FROM chroma_pending").fetchone()[0])
    except sqlite3.OperationalError:  # an index from before the queue, not written since
        return 0


def upsert(col: Any, ids: list[str], vecs: Any) -> None:
    for start in range(0, len(ids), STEP):
        col.upsert(ids=ids[start : start + STEP], embeddings=vecs[start : start + STEP])


def carry_out(idx: Index, progress: Progress | None = None) -> int:
    """Do the queued ops on the vault's own Chroma; returns how many vectors it wrote or
    deleted. A Chroma folder that can't be written is started afresh and loaded from the
    vectors kept in SQLite (it is a copy of them); if that fails too, the index is damaged."""
    for afresh in (False, True):
        try:
            return _carry_out(idx, progress)
        except MemvaultError:
            raise  # (a lock not got in time: not damage)
        except Exception as exc:  # noqa: BLE001 - chromadb raises many kinds for a bad folder
            if afresh:
                raise CorruptIndex(
                    f"the vector store can't be written ({type(exc).__name__})"
                ) from None
            print(
                f"memvault: the vector store could not be written ({type(exc).__name__}); "
                "rebuilding it from stored vectors",
                file=sys.stderr,
            )
        idx.reset_chroma()
        if idx.conn.in_transaction:
            queue_reload(idx.conn)
        else:
            with transaction(idx.conn):
                queue_reload(idx.conn)
    raise AssertionError("unreachable")  # (the second pass returns or raises)


def _carry_out(idx: Index, progress: Progress | None) -> int:
    conn = idx.conn
    if idx.url or not waiting(conn):
        return 0
    # Up to a reload of every vector by another process (minutes at the threshold).
    with file_lock(idx.lock_path("chroma.lock"), timeout=1800, label="vector store"):
        rows = conn.execute("SELECT seq, type, vid, op FROM chroma_pending ORDER BY seq").fetchall()
        if not rows:
            return 0  # carried out by another process meanwhile
        if any(op == "reload" for _, _, _, op in rows):
            done = load_all(idx, progress)
        else:
            done = _apply(idx, [(str(t), str(v), str(op)) for _, t, v, op in rows], progress)
        sql, last = "DELETE FROM chroma_pending WHERE seq <= ?", (rows[-1][0],)
        if conn.in_transaction:
            conn.execute(sql, last)
        else:
            with transaction(conn):
                conn.execute(sql, last)
    return done


def _apply(idx: Index, rows: list[tuple[str, str, str]], progress: Progress | None) -> int:
    import numpy as np

    total, done = len(rows), 0
    for doc_type in TYPES:
        deletes = [vid for t, vid, op in rows if t == doc_type and op == "delete"]
        upserts = [int(vid) for t, vid, op in rows if t == doc_type and op == "upsert"]
        if deletes:
            col = idx.chroma_collection(doc_type)
            for start in range(0, len(deletes) if col is not None else 0, STEP):
                col.delete(ids=deletes[start : start + STEP])
        done += len(deletes)
        for start in range(0, len(upserts), STEP):
            sql = "SELECT rowid, vec FROM chunks WHERE vec IS NOT NULL AND rowid IN ({})"
            found = [
                (str(r), np.frombuffer(v, dtype=np.float32))
                for r, v in rows_in(idx.conn, sql, upserts[start : start + STEP])
            ]
            # (a chunk gone since its op was queued has a delete queued after it, which
            # replaced the upsert: found here only when carried out meanwhile)
            found = [(r, v) for r, v in found if v.shape == (idx.dimensions,)]
            if found:
                col = idx.chroma_collection(doc_type, create=True)
                upsert(col, [r for r, _ in found], np.stack([v for _, v in found]))
            done += min(STEP, len(upserts) - start)
            if progress is not None:
                progress(done, total)
    return done


def load_all(idx: Index, progress: Progress | None = None) -> int:
    """Drop the vault's own collections and load every vector kept in SQLite."""
    import numpy as np

    idx.drop_collections()
    total = idx.conn.execute("SELECT count(*) FROM chunks WHERE vec IS NOT NULL").fetchone()[0]
    done = 0
    for doc_type in TYPES:
        rows = idx.conn.execute(
            "SELECT c.rowid, c.vec FROM chunks AS c JOIN docs AS d ON d.key = c.doc "
            "WHERE d.type = ? AND c.vec IS NOT NULL",
            (doc_type,),
        )
        while True:
            batch = rows.fetchmany(STEP)
            if not batch:
                break
            ids = [str(r) for r, _ in batch]
            vecs = np.stack([np.frombuffer(b, dtype=np.float32) for _, b in batch])
            upsert(idx.chroma_collection(doc_type, create=True), ids, vecs)
            done += len(batch)
            if progress is not None:
                progress(done, total)
    idx.forget_counts()
    return int(total)
