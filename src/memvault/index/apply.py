"""Applying a :class:`~memvault.index.plan.ChangeReport`: SQLite in one transaction, then
Chroma; vectors are embedded in batches while a second thread writes them to Chroma."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import IndexError_
from ..paths import MEMORY_TYPES as TYPES
from . import store
from .handle import Index, Progress
from .plan import ApplyStats, ChangeReport
from .text import Chunk, DocInfo, neighbour_text

if TYPE_CHECKING:  # pragma: no cover
    from ..embeddings import Embedder

EMBED_BATCH = 64
DOC_COLUMNS = (
    "id",
    "type",
    "category",
    "scope",
    "agent",
    "team",
    "status",
    "created",
    "valid_from",
    "valid_to",
    "importance",
    "relevance",
    "success_rate",
    "session",
    "subject",
    "tags",
    "title",
    "speakers",
    "triggers",
    "lead",
    "doc",
)


def doc_values(info: DocInfo) -> list[Any]:
    return [getattr(info, c) for c in DOC_COLUMNS]


class IndexedRow(NamedTuple):
    """What the index holds about one memory file."""

    key: int
    sha: str
    text_hash: str
    type: str
    session: str | None


@dataclass
class _ChromaOps:
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


@dataclass
class _Batch:
    """One application of a plan: the SQLite connection (inside its transaction), the
    Chroma writes to send afterwards, and what is left to embed."""

    idx: Index
    ops: _ChromaOps
    stats: ApplyStats
    sessions: set[str] = field(default_factory=set)  # sessions whose context must be redone
    to_embed: list[tuple[int, str, str]] = field(default_factory=list)  # (rowid, type, text)

    @property
    def conn(self) -> sqlite3.Connection:
        return self.idx.conn

    def chunk_rowids(self, key: int) -> list[int]:
        return [r for (r,) in self.conn.execute("SELECT rowid FROM chunks WHERE doc = ?", (key,))]

    def touched(self, *sessions: str | None) -> None:
        self.sessions.update(s for s in sessions if s)


_PLACEHOLDERS = ",".join("?" * len(DOC_COLUMNS))
_ASSIGNMENTS = ",".join(f"{c} = ?" for c in DOC_COLUMNS)


def apply_changes(
    idx: Index,
    plan: ChangeReport,
    infos: Mapping[str, DocInfo],
    shas: Mapping[str, str],
    indexed: Mapping[str, IndexedRow],
    embedder: Embedder,
    progress: Progress | None = None,
) -> ApplyStats:
    """Carry out ``plan``: SQLite first (one transaction), then Chroma.

    The manifest is marked dirty while Chroma is being written; a crash in between is
    repaired on the next open by reloading Chroma from the vectors kept in SQLite.
    """
    stats = ApplyStats()
    if plan.empty:
        return stats
    batch = _Batch(idx, _ChromaOps(idx.vector_ids), stats)
    if idx.manifest.get("dirty") is not True:
        idx.manifest["dirty"] = True
        store.write_manifest(idx.root, idx.manifest)
    with store.transaction(idx.conn):
        for path in plan.removed:
            _remove(batch, indexed[path])
        relabel = [(old, new) for old, new in plan.moved] + [(p, p) for p in plan.updated]
        for old, new in relabel:
            _relabel(batch, indexed[old], new, infos[new], shas[new])
        for path in plan.added:
            _add(batch, path, infos[path], shas[path])
        for path in plan.changed:
            _change(batch, indexed[path], infos[path], shas[path])
        batch.to_embed = _take_shared(idx, batch.to_embed, stats)
        stats.embedded = len(batch.to_embed)
        _embed_into(idx.conn, idx, batch.to_embed, embedder, progress)
        context_embedder = embedder if idx.context_vectors else None
        stats.context_embedded = _refresh_context(
            idx.conn, batch.sessions, context_embedder, progress
        )
    idx.forget_counts()
    try:
        _flush_chroma(idx, batch.ops)
    except Exception:  # noqa: BLE001 - a shared server that is away: the next sync sends them
        if not idx.url:
            raise
        idx.unpublished = True
    idx.manifest["dirty"] = False
    return stats


def _remove(batch: _Batch, old: IndexedRow) -> None:
    conn = batch.conn
    rowids = batch.chunk_rowids(old.key)
    batch.ops.delete(old.type, rowids)
    conn.executemany("DELETE FROM fts WHERE rowid = ?", [(r,) for r in rowids])
    conn.execute("DELETE FROM chunks WHERE doc = ?", (old.key,))
    conn.execute("DELETE FROM docs WHERE key = ?", (old.key,))
    batch.touched(old.session)


def _relabel(batch: _Batch, old: IndexedRow, path: str, info: DocInfo, sha: str) -> None:
    """Same text, new path or metadata: the row changes, the vectors stay."""
    batch.conn.execute(
        f"UPDATE docs SET path = ?, {_ASSIGNMENTS}, sha = ? WHERE key = ?",
        [path, *doc_values(info), sha, old.key],
    )
    if old.type != info.type:
        _move_vectors(batch.conn, batch.chunk_rowids(old.key), old.type, info.type, batch.ops)
    if not info.session and old.session:
        _clear_context(batch.conn, old.key)
    batch.touched(old.session, info.session)


def _add(batch: _Batch, path: str, info: DocInfo, sha: str) -> None:
    cur = batch.conn.execute(
        f"INSERT INTO docs (path, {','.join(DOC_COLUMNS)}, sha, text_hash, nchunks) "
        f"VALUES (?, {_PLACEHOLDERS}, ?, ?, ?)",
        [path, *doc_values(info), sha, info.text_hash, len(info.chunks)],
    )
    key = int(cur.lastrowid or 0)
    for chunk in info.chunks:
        rowid = _insert_chunk(batch.conn, key, chunk)
        batch.to_embed.append((rowid, info.type, chunk.embed_text))
    batch.touched(info.session)


def _change(batch: _Batch, old: IndexedRow, info: DocInfo, sha: str) -> None:
    """New text: chunks whose hash is unchanged keep their vectors, the others are redone."""
    conn, key = batch.conn, old.key
    conn.execute(
        f"UPDATE docs SET {_ASSIGNMENTS}, sha = ?, text_hash = ?, nchunks = ? WHERE key = ?",
        [*doc_values(info), sha, info.text_hash, len(info.chunks), key],
    )
    rows = conn.execute("SELECT rowid, n, hash FROM chunks WHERE doc = ?", (key,))
    existing = {int(n): (int(r), h) for r, n, h in rows}
    kept: list[int] = []
    for chunk in info.chunks:
        have = existing.pop(chunk.n, None)
        if have is not None and have[1] == chunk.hash:
            batch.stats.reused += 1
            kept.append(have[0])
            continue
        if have is None:
            rowid = _insert_chunk(conn, key, chunk)
        else:
            rowid = have[0]
            if old.type != info.type or batch.idx.url:  # shared ids are text hashes
                batch.ops.delete(old.type, [rowid])
            _rewrite_chunk(conn, rowid, chunk)
        batch.to_embed.append((rowid, info.type, chunk.embed_text))
    for rowid, _ in existing.values():  # the memory got shorter
        batch.ops.delete(old.type, [rowid])
        conn.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
        conn.execute("DELETE FROM chunks WHERE rowid = ?", (rowid,))
    if old.type != info.type:
        _move_vectors(conn, kept, old.type, info.type, batch.ops)
    conn.execute("UPDATE docs SET ctx_hash = NULL WHERE key = ?", (key,))
    if not info.session:
        _clear_context(conn, key)
    batch.touched(old.session, info.session)


def _rewrite_chunk(conn: sqlite3.Connection, rowid: int, chunk: Chunk) -> None:
    """A chunk's text changed: new hash and keywords, its vector to be embedded again."""
    conn.execute("UPDATE chunks SET hash = ?, vec = NULL WHERE rowid = ?", (chunk.hash, rowid))
    conn.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
    conn.execute(
        "INSERT INTO fts (rowid, head, body, ctx) VALUES (?, ?, ?, '')",
        (rowid, chunk.head, chunk.body),
    )


def _insert_chunk(conn: sqlite3.Connection, key: int, chunk: Chunk) -> int:
    cur = conn.execute(
        "INSERT INTO chunks (doc, n, hash) VALUES (?, ?, ?)", (key, chunk.n, chunk.hash)
    )
    rowid = int(cur.lastrowid or 0)
    conn.execute(
        "INSERT INTO fts (rowid, head, body, ctx) VALUES (?, ?, ?, '')",
        (rowid, chunk.head, chunk.body),
    )
    return rowid


def _move_vectors(
    conn: sqlite3.Connection, rowids: list[int], old_type: str, new_type: str, ops: _ChromaOps
) -> None:
    """A memory changed type: its vectors change collection (no re-embedding)."""
    import numpy as np

    for rowid in rowids:
        row = conn.execute("SELECT vec FROM chunks WHERE rowid = ?", (rowid,)).fetchone()
        ops.delete(old_type, [rowid])
        if row is not None and row[0] is not None:
            ops.upsert(new_type, rowid, np.frombuffer(row[0], dtype=np.float32))


def _clear_context(conn: sqlite3.Connection, key: int) -> None:
    """A memory left its session: its neighbours' text goes."""
    rows = conn.execute(
        "SELECT c.rowid, f.head, f.body FROM chunks AS c JOIN fts AS f ON f.rowid = c.rowid "
        "WHERE c.doc = ?",
        (key,),
    ).fetchall()
    for rowid, head, body in rows:
        conn.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
        conn.execute(
            "INSERT INTO fts (rowid, head, body, ctx) VALUES (?, ?, ?, '')", (rowid, head, body)
        )
    conn.execute("UPDATE docs SET ctx_hash = NULL WHERE key = ?", (key,))
    conn.execute("UPDATE chunks SET chash = NULL, cvec = NULL WHERE doc = ?", (key,))


def _embed_into(
    conn: sqlite3.Connection,
    idx: Index,
    items: list[tuple[int, str, str]],
    embedder: Embedder,
    progress: Progress | None,
) -> None:
    """Embed ``items`` in batches; vectors go to SQLite now and to Chroma from a second
    thread, so Chroma's writes overlap the next batch's embedding."""
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

    def writer() -> None:
        while True:
            job = jobs.get()
            if job is None:
                return
            if failure or idx.unpublished:
                continue
            doc_type, ids, vecs = job
            try:
                _upsert(idx.collection(doc_type, create=True), ids, vecs)
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
            by_type: dict[str, tuple[list[str], list[Any]]] = {}
            vids = idx.vector_ids([rowid for rowid, _, _ in batch])
            for i, (_, doc_type, _) in enumerate(batch):
                ids, vecs = by_type.setdefault(doc_type, ([], []))
                ids.append(vids[i])
                vecs.append(matrix[i])
            for doc_type, (ids, vecs) in by_type.items():
                jobs.put((doc_type, ids, np.stack(vecs)))
            done += len(batch)
            if failure:
                raise failure[0]
            if progress is not None:
                progress(done, len(items))
    finally:
        jobs.put(None)
        thread.join()
    if failure:
        raise failure[0]


def _take_shared(
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


def _upsert(col: Any, ids: list[str], vecs: Any) -> None:
    step = 5000
    for start in range(0, len(ids), step):
        col.upsert(ids=ids[start : start + step], embeddings=vecs[start : start + step])


def _flush_chroma(idx: Index, ops: _ChromaOps) -> None:
    import numpy as np

    for doc_type, ids in ops.deletes.items():
        if idx.url:
            # A shared collection: only the branch's indexer deletes, and never a vector
            # some chunk of this index still uses (identical text in another memory).
            ids = _unused(idx, doc_type, ids) if idx.prune else []
        col = idx.collection(doc_type)
        if col is not None and ids:
            for start in range(0, len(ids), 5000):
                col.delete(ids=ids[start : start + 5000])
    for doc_type, (ids, vecs) in ops.upserts.items():
        if ids:
            _upsert(idx.collection(doc_type, create=True), ids, np.stack(vecs))


def _unused(idx: Index, doc_type: str, ids: list[str]) -> list[str]:
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


def _refresh_context(
    conn: sqlite3.Connection,
    sessions: Iterable[str],
    embedder: Embedder | None = None,
    progress: Progress | None = None,
) -> int:
    """Give each memory of these sessions its neighbours' text: the FTS ``ctx`` column
    (two on each side) and, with ``embedder``, a context vector of the memory followed by
    the one before and the one after it (one-chunk memories only). Returns how many
    context vectors were embedded: only those whose text changed."""
    import hashlib

    import numpy as np

    pending: list[tuple[int, str, str]] = []  # (chunk rowid, text, hash)
    for session in sorted(sessions):
        members = conn.execute(
            "SELECT key, lead, ctx_hash, nchunks FROM docs WHERE session = ? "
            "ORDER BY created IS NULL, created, path",
            (session,),
        ).fetchall()
        leads = [m[1] or "" for m in members]
        for i, (key, _, old_hash, nchunks) in enumerate(members):
            ctx = neighbour_text(leads, i)
            digest = hashlib.sha1(ctx.encode("utf-8", "surrogatepass")).hexdigest()
            rows = conn.execute(
                "SELECT c.rowid, f.head, f.body, c.chash "
                "FROM chunks AS c JOIN fts AS f ON f.rowid = c.rowid WHERE c.doc = ?",
                (key,),
            ).fetchall()
            if digest != old_hash:
                for rowid, head, body, _ in rows:
                    conn.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
                    conn.execute(
                        "INSERT INTO fts (rowid, head, body, ctx) VALUES (?, ?, ?, ?)",
                        (rowid, head, body, ctx),
                    )
                conn.execute("UPDATE docs SET ctx_hash = ? WHERE key = ?", (digest, key))
            if embedder is None:
                continue
            around = [leads[j] for j in (i - 1, i + 1) if 0 <= j < len(leads) and leads[j]]
            for rowid, head, body, chash in rows:
                if nchunks != 1 or not around:
                    if chash is not None:
                        conn.execute(
                            "UPDATE chunks SET chash = NULL, cvec = NULL WHERE rowid = ?", (rowid,)
                        )
                    continue
                # The memory first: a 256-token cut then drops context, not the memory.
                text = "\n".join([f"{head}\n{body}" if head else body, *around])
                text_hash = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
                if text_hash != chash:
                    pending.append((rowid, text, text_hash))
    if not pending or embedder is None:
        return 0
    order = sorted(range(len(pending)), key=lambda i: len(pending[i][1]))
    if progress is not None:
        progress(0, len(pending))
    for start in range(0, len(order), EMBED_BATCH):
        batch = [pending[i] for i in order[start : start + EMBED_BATCH]]
        matrix = np.asarray(embedder.embed_documents([t for _, t, _ in batch]), dtype=np.float32)
        conn.executemany(
            "UPDATE chunks SET cvec = ?, chash = ? WHERE rowid = ?",
            [(matrix[i].tobytes(), h, rowid) for i, (rowid, _, h) in enumerate(batch)],
        )
        if progress is not None:
            progress(min(start + EMBED_BATCH, len(order)), len(pending))
    return len(pending)


def reload_chroma(idx: Index, progress: Progress | None = None) -> int:
    """Rebuild the Chroma collections from the vectors kept in SQLite (no embedding)."""
    import numpy as np

    if idx.url:
        return _publish(idx, progress)
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
            batch = rows.fetchmany(5000)
            if not batch:
                break
            ids = [str(r) for r, _ in batch]
            vecs = np.stack([np.frombuffer(b, dtype=np.float32) for _, b in batch])
            _upsert(idx.collection(doc_type, create=True), ids, vecs)
            done += len(batch)
            if progress is not None:
                progress(done, total)
    idx.forget_counts()
    return int(total)


def _publish(idx: Index, progress: Progress | None = None) -> int:
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
        col = idx.collection(doc_type, create=True)
        for start in range(0, len(rows), 2000):
            batch = dict(rows[start : start + 2000])
            have = set(col.get(ids=list(batch), include=[])["ids"])
            missing = [h for h in batch if h not in have and len(batch[h]) == idx.dimensions * 4]
            if missing:
                vecs = np.stack([np.frombuffer(batch[h], dtype=np.float32) for h in missing])
                _upsert(col, missing, vecs)
                sent += len(missing)
            done += min(2000, len(rows) - start)
            if progress is not None:
                progress(done, total)
    idx.forget_counts()
    return int(sent)
