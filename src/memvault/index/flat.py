"""Each memory type's stored vectors as one flat file, mapped into memory by every search.

Exact search (:attr:`memvault.index.handle.Index.in_memory`) scores every vector with one
matrix product. Reading the vectors out of SQLite costs a new process a pass over every
row of ``chunks`` (text, vector, context vector), and Chroma's HNSW graphs cost more
(importing chromadb comes first). Here they are read once into
``flat/<type>-<gen>.f32`` (float32 rows, append-only) and ``flat/<type>.rows`` (per row:
chunk rowid and document; a header with the log position it reflects). A new process
maps the file: the page cache serves it, and scoring every row is a small part of a search
(figures: ``docs/performance.md``).

Keeping it current without a pass over SQLite: triggers on ``chunks`` (and on a document's
type) log every chunk whose vector may have changed in ``vec_log``. A reader applies the
entries past its file's position -- marks those rows dead, appends their current vectors
-- and rewrites the small rows file; the big file is only appended to, and rewritten
(a new ``gen``) when dead rows outnumber live ones. A random ``token`` in the database
tells a file built from another database (a rebuild) to start over. Whatever goes wrong
(a busy lock, a torn file) falls back to reading SQLite: the file is a cache of a cache.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from ..store.lock import try_lock
from . import store


class Index(Protocol):
    """What this module reads of :class:`memvault.index.handle.Index` (which imports it)."""

    root: Path
    home: str
    conn: sqlite3.Connection
    dimensions: int


FLAT_DIR = "flat"
VERSION = 1
HEADER = 3  # header rows of a rows file: (VERSION, dims), (log seq, token), (gen, slots)
DEAD_DOC = 1 << 62  # a dead row's document: past every filter's table, so never allowed
LOG_DDL = (
    "CREATE TABLE IF NOT EXISTS vec_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, chunk INTEGER)",
    "CREATE TABLE IF NOT EXISTS vec_log_id (token INTEGER NOT NULL)",
    "CREATE TRIGGER IF NOT EXISTS vec_log_insert AFTER INSERT ON chunks "
    "BEGIN INSERT INTO vec_log (chunk) VALUES (NEW.rowid); END",
    "CREATE TRIGGER IF NOT EXISTS vec_log_update AFTER UPDATE OF vec, doc ON chunks "
    "BEGIN INSERT INTO vec_log (chunk) VALUES (NEW.rowid); END",
    "CREATE TRIGGER IF NOT EXISTS vec_log_delete AFTER DELETE ON chunks "
    "BEGIN INSERT INTO vec_log (chunk) VALUES (OLD.rowid); END",
    "CREATE TRIGGER IF NOT EXISTS vec_log_type AFTER UPDATE OF type ON docs "
    "BEGIN INSERT INTO vec_log (chunk) SELECT rowid FROM chunks WHERE doc = NEW.key; END",
)
Vectors = tuple[Any, Any, Any]  # (chunk rowids, document keys, matrix), row-aligned


class Flat(NamedTuple):
    """A type's rows file: the log position it reflects, its vector file, its rows."""

    seq: int
    gen: int
    rows: Any  # int64 [n, 2]: chunk rowid, document key (dead: -1, DEAD_DOC)


def vectors(idx: Index, doc_type: str) -> Vectors | None:
    """``(rowids, docs, matrix)`` of every stored vector of a type, from the flat file
    brought up to date first. Dead rows have rowid -1 and document :data:`DEAD_DOC`. None
    when the file can't be used now (the caller reads SQLite)."""
    try:
        token = _log_token(idx.conn)
        if token is None or not idx.dimensions:
            return None
        folder = store.data_dir(idx.root, idx.home) / FLAT_DIR
        return _current(idx, folder, doc_type, token)
    except (OSError, ValueError, sqlite3.Error):
        return None


def _log_token(conn: sqlite3.Connection) -> int | None:
    """The database's token, installing the change log first if it isn't there (needs the
    write lock for a moment: None when a writer holds it)."""
    try:
        row = conn.execute("SELECT token FROM vec_log_id").fetchone()
        if row is not None:
            return int(row[0])
    except sqlite3.OperationalError:
        pass
    with _no_wait(conn):
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return None
        try:
            for sql in LOG_DDL:
                conn.execute(sql)
            row = conn.execute("SELECT token FROM vec_log_id").fetchone()
            if row is None:
                row = (secrets.randbits(62),)
                conn.execute("INSERT INTO vec_log_id (token) VALUES (?)", row)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return int(row[0])


@contextlib.contextmanager
def _no_wait(conn: sqlite3.Connection) -> Iterator[None]:
    """A reader never waits for the index's writer: busy means "not now"."""
    before = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(before)}")


def _current(idx: Index, folder: Path, doc_type: str, token: int) -> Vectors | None:
    dims = idx.dimensions
    got = _read(folder, doc_type, dims, token)
    if got is not None and not _changes(idx.conn, got[0]):
        return _mapped(folder, doc_type, got, dims)
    folder.mkdir(parents=True, exist_ok=True)
    with try_lock(folder / "lock") as locked:
        if not locked:
            return None  # another process is updating the files: read SQLite this time
        got = _read(folder, doc_type, dims, token)  # it may just have done so
        patched = _patch(idx, folder, doc_type, token, got) if got is not None else None
        return _mapped(folder, doc_type, patched or _build(idx, folder, doc_type, token), dims)


def _read(folder: Path, doc_type: str, dims: int, token: int) -> Flat | None:
    """A type's rows file (None: missing, torn, or another database's or dimension's)."""
    import numpy as np

    try:
        rows = np.load(folder / f"{doc_type}.rows", allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    if rows.ndim != 2 or rows.shape[1] != 2 or len(rows) < HEADER:
        return None
    (version, width), (seq, tok), (gen, slots) = (tuple(int(v) for v in r) for r in rows[:3])
    if version != VERSION or width != dims or tok != token or slots != len(rows) - HEADER:
        return None
    return Flat(seq, gen, rows[HEADER:])


def _changes(conn: sqlite3.Connection, seq: int) -> bool:
    row = conn.execute("SELECT 1 FROM vec_log WHERE seq > ? LIMIT 1", (seq,)).fetchone()
    return row is not None


def _mapped(folder: Path, doc_type: str, got: Flat, dims: int) -> Vectors:
    import numpy as np

    if len(got.rows) == 0:
        matrix = np.zeros((0, dims), dtype=np.float32)
    else:
        path = folder / f"{doc_type}-{got.gen}.f32"
        matrix = np.memmap(path, dtype=np.float32, mode="r", shape=(len(got.rows), dims))
    return got.rows[:, 0], got.rows[:, 1], matrix


@contextlib.contextmanager
def _snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction: the log position and the rows read agree."""
    if conn.in_transaction:
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        conn.execute("COMMIT")


def _build(idx: Index, folder: Path, doc_type: str, token: int) -> Flat:
    """Write a type's files from SQLite (one consistent read of its vectors)."""
    import numpy as np

    dims = idx.dimensions
    with _snapshot(idx.conn):
        seq = int(idx.conn.execute("SELECT coalesce(max(seq), 0) FROM vec_log").fetchone()[0])
        found = list(_rows_of(idx.conn, doc_type, None, dims))
    gen = secrets.randbits(40)
    _write_vectors(folder / f"{doc_type}-{gen}.f32", (b for _, _, b in found), "wb")
    rows = np.array([(r, d) for r, d, _ in found], dtype=np.int64).reshape(-1, 2)
    _write_rows(folder, doc_type, dims, Flat(seq, gen, rows), token)
    _drop_old(folder, doc_type, gen)
    return Flat(seq, gen, rows)


def _patch(idx: Index, folder: Path, doc_type: str, token: int, got: Flat) -> Flat | None:
    """Apply the log past the file's position: changed chunks' rows die, their current
    vectors are appended. None when the file is better built anew (the log was cut, or
    most rows would be dead)."""
    import numpy as np

    conn = idx.conn
    with _snapshot(conn):
        lowest, newest = conn.execute("SELECT min(seq), max(seq) FROM vec_log").fetchone()
        if newest is None or newest <= got.seq:
            return got
        if lowest is None or lowest > got.seq + 1:
            return None
        sql = "SELECT DISTINCT chunk FROM vec_log WHERE seq > ?"
        changed = sorted(int(c) for (c,) in conn.execute(sql, (got.seq,)))
        fresh = list(_rows_of(conn, doc_type, changed, idx.dimensions))
    rows = got.rows.copy()
    rows[np.isin(rows[:, 0], np.asarray(changed, dtype=np.int64))] = (-1, DEAD_DOC)
    if int(np.count_nonzero(rows[:, 0] < 0)) > max(1000, len(rows) // 2):
        return None
    if not _append_vectors(folder / f"{doc_type}-{got.gen}.f32", got, idx.dimensions, fresh):
        return None
    added = np.array([(r, d) for r, d, _ in fresh], dtype=np.int64).reshape(-1, 2)
    patched = Flat(int(newest), got.gen, np.concatenate([rows, added]))
    _write_rows(folder, doc_type, idx.dimensions, patched, token)
    return patched


def _rows_of(
    conn: sqlite3.Connection, doc_type: str, chunks: Sequence[int] | None, dims: int
) -> Iterator[tuple[int, int, bytes]]:
    """``(rowid, doc, vector bytes)`` of a type's chunks (``chunks``: only those)."""
    sql = (
        "SELECT c.rowid, c.doc, c.vec FROM chunks AS c JOIN docs AS d ON d.key = c.doc "
        "WHERE d.type = ? AND c.vec IS NOT NULL"
    )
    parts = [None] if chunks is None else [chunks[i : i + 500] for i in range(0, len(chunks), 500)]
    for part in parts:
        args: list[object]
        query, args = sql + " ORDER BY c.rowid", [doc_type]
        if part is not None:
            query = f"{sql} AND c.rowid IN ({','.join('?' * len(part))}) ORDER BY c.rowid"
            args += list(part)
        for r, d, b in conn.execute(query, args):
            if len(b) == dims * 4:
                yield int(r), int(d), b


def _write_vectors(path: Path, blobs: Iterator[bytes], mode: str) -> None:
    with open(path, mode) as out:
        for blob in blobs:
            out.write(blob)


def _append_vectors(
    path: Path, got: Flat, dims: int, fresh: Sequence[tuple[int, int, bytes]]
) -> bool:
    """Append ``fresh``'s vectors after the ones ``got``'s rows vouch for. A process killed
    between appending and writing its rows file leaves vectors past that end: they are cut
    first, or the new rows would map to them (no reader maps past its rows file's count).
    False when the file holds fewer vectors than the rows say (build it anew)."""
    end = len(got.rows) * dims * 4
    try:
        with open(path, "r+b") as out:
            if out.seek(0, os.SEEK_END) < end:
                return False
            out.truncate(end)
            out.seek(end)
            for _, _, blob in fresh:
                out.write(blob)
    except OSError:
        return False
    return True


def _write_rows(folder: Path, doc_type: str, dims: int, flat: Flat, token: int) -> None:
    import numpy as np

    head = np.array(
        [(VERSION, dims), (flat.seq, token), (flat.gen, len(flat.rows))], dtype=np.int64
    )
    tmp = folder / f".{doc_type}.rows.{os.getpid()}.tmp"
    with open(tmp, "wb") as out:
        np.save(out, np.concatenate([head, flat.rows]) if len(flat.rows) else head)
    os.replace(tmp, folder / f"{doc_type}.rows")


def _drop_old(folder: Path, doc_type: str, keep: int) -> None:
    """Older generations of a type's vectors (a reader that mapped one keeps its pages)."""
    for path in folder.glob(f"{doc_type}-*.f32"):
        if path.name != f"{doc_type}-{keep}.f32":
            with contextlib.suppress(OSError):
                path.unlink()
