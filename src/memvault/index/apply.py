"""Applying a :class:`~memvault.index.plan.ChangeReport`: SQLite in one transaction, then
Chroma; vectors are embedded in batches while a second thread writes them to Chroma (or
Chroma's writes are queued in the same transaction: :mod:`memvault.index.pending`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from ..values import Record, field
from . import pending, store
from .handle import Index, Progress
from .plan import ApplyStats, ChangeReport
from .text import Chunk, DocInfo, neighbour_text
from .vectors import EMBED_BATCH, ChromaOps, embed_into, send_ops, take_shared

if TYPE_CHECKING:  # pragma: no cover
    from ..embeddings import Embedder

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
    "lang",
    "kw_lead",
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


class _Batch(Record):
    """One application of a plan: the SQLite connection (inside its transaction), the
    Chroma writes to send afterwards, and what is left to embed."""

    idx: Index
    ops: ChromaOps
    stats: ApplyStats
    sessions: set[str] = field(default_factory=set)  # sessions whose context must be redone
    to_embed: list[tuple[int, str, str]] = field(default_factory=list)  # (rowid, type, text)
    # transcript turns whose context vector must be embedded: (rowid, text, context hash)
    turn_context: list[tuple[int, str, str]] = field(default_factory=list)

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

    Written at once, Chroma lags SQLite's commit: the manifest is marked dirty meanwhile,
    and a crash in between is repaired on the next open by reloading Chroma from the vectors
    kept in SQLite. Queued, Chroma's writes commit (or not) with the chunks.
    """
    stats = ApplyStats()
    if plan.empty:
        return stats
    batch = _Batch(idx, ChromaOps(idx.vector_ids), stats)
    # Below index.exact_below the vault's own Chroma is written when it is next read
    # (memvault.index.pending); above it, queued writes go first, then these at once.
    defer = idx.defers
    if not defer:
        pending.carry_out(idx, progress)
    with store.transaction(idx.conn):
        # (marked once SQLite's lock is held: an update that could not begin leaves no mark)
        lags = not defer and idx.manifest.get("dirty") is not True
        if lags or idx.manifest.get("dirty_paths") is not None:
            idx.manifest["dirty"] = idx.manifest.get("dirty") is True or not defer
            # SQLite is about to hold newer text than the commit the manifest names: if this
            # process dies before the manifest is written again, git can't say what differs
            # (the next check compares every file).
            idx.manifest["dirty_paths"] = None
            store.write_manifest(idx.root, idx.manifest)
        store.upgrade(idx.conn)
        for sql in store.READ_INDEXES:
            idx.conn.execute(sql)
        for path in plan.removed:
            _remove(batch, indexed[path])
        relabel = [(old, new) for old, new in plan.moved] + [(p, p) for p in plan.updated]
        for old, new in relabel:
            _relabel(batch, indexed[old], new, infos[new], shas[new])
        for path in plan.added:
            _add(batch, path, infos[path], shas[path])
        for path in plan.changed:
            _change(batch, indexed[path], infos[path], shas[path])
        batch.to_embed = take_shared(idx, batch.to_embed, stats)
        batch.ops.spare(batch.to_embed)
        stats.embedded = len(batch.to_embed)
        embed_into(idx.conn, idx, batch.to_embed, embedder, progress, defer=defer)
        context_embedder = embedder if idx.context_vectors else None
        stats.context_embedded = _refresh_context(
            idx.conn, batch.sessions, context_embedder, progress
        )
        if context_embedder is not None:
            stats.context_embedded += _embed_context(
                idx.conn, batch.turn_context, context_embedder, progress
            )
        if defer:
            batch.ops.queue(idx.conn)
    idx.forget_counts()
    try:
        if not defer:
            send_ops(idx, batch.ops)
        elif not idx.in_memory:  # grew past index.exact_below: searches read Chroma now
            pending.carry_out(idx, progress)
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
    if not info.session and old.session and not info.turns:
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
    if info.turns:
        _refresh_turn_context(batch, key, info.chunks)
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
            if chunk.turn:
                _set_turn(conn, have[0], chunk)
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
    if info.turns:
        _refresh_turn_context(batch, key, info.chunks)
    elif not info.session:
        _clear_context(conn, key)
    batch.touched(old.session, info.session)


def _rewrite_chunk(conn: sqlite3.Connection, rowid: int, chunk: Chunk) -> None:
    """A chunk's text changed: new hash and keywords, its vector to be embedded again."""
    conn.execute(
        "UPDATE chunks SET hash = ?, text = ?, vec = NULL WHERE rowid = ?",
        (chunk.hash, chunk.body, rowid),
    )
    _set_turn(conn, rowid, chunk)
    conn.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
    conn.execute(
        "INSERT INTO fts (rowid, head, body, ctx) VALUES (?, ?, ?, ?)", (rowid, *chunk.keywords)
    )


def _set_turn(conn: sqlite3.Connection, rowid: int, chunk: Chunk) -> None:
    conn.execute(
        "UPDATE chunks SET turn = ?, speaker = ?, role = ?, at = ? WHERE rowid = ?",
        (chunk.turn, chunk.speaker, chunk.role, chunk.at, rowid),
    )


def _refresh_turn_context(batch: _Batch, key: int, chunks: Sequence[Chunk]) -> None:
    """A transcript's turns: where a turn's neighbours changed, its keyword context is
    rewritten and its context vector queued (``batch.turn_context``)."""
    conn = batch.conn
    rows = conn.execute(
        "SELECT c.rowid, c.n, c.chash, f.head, f.body, f.ctx "
        "FROM chunks AS c JOIN fts AS f ON f.rowid = c.rowid WHERE c.doc = ?",
        (key,),
    ).fetchall()
    by_n = {int(row[1]): row for row in rows}
    for chunk in chunks:
        found = by_n.get(chunk.n)
        if found is None or not chunk.turn:
            continue
        rowid, _, chash, head, body, ctx = found
        keyword_ctx = chunk.keywords[2]
        if ctx != keyword_ctx:  # two turns each side: the keyword column
            conn.execute("DELETE FROM fts WHERE rowid = ?", (rowid,))
            conn.execute(
                "INSERT INTO fts (rowid, head, body, ctx) VALUES (?, ?, ?, ?)",
                (rowid, head, body, keyword_ctx),
            )
        if chash != chunk.ctx_hash:  # one turn each side: the context vector
            conn.execute(
                "UPDATE chunks SET chash = ?, cvec = NULL WHERE rowid = ?", (chunk.ctx_hash, rowid)
            )
            if chunk.ctx_embed:
                batch.turn_context.append((rowid, chunk.ctx_embed, chunk.ctx_hash))


def _insert_chunk(conn: sqlite3.Connection, key: int, chunk: Chunk) -> int:
    cur = conn.execute(
        "INSERT INTO chunks (doc, n, hash, text, turn, speaker, role, at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (key, chunk.n, chunk.hash, chunk.body, chunk.turn, chunk.speaker, chunk.role, chunk.at),
    )
    rowid = int(cur.lastrowid or 0)
    conn.execute(
        "INSERT INTO fts (rowid, head, body, ctx) VALUES (?, ?, ?, ?)", (rowid, *chunk.keywords)
    )
    return rowid


def _move_vectors(
    conn: sqlite3.Connection, rowids: list[int], old_type: str, new_type: str, ops: ChromaOps
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

    todo: list[tuple[int, str, str]] = []  # (chunk rowid, text, hash)
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
                    todo.append((rowid, text, text_hash))
    if embedder is None:
        return 0
    return _embed_context(conn, todo, embedder, progress)


def _embed_context(
    conn: sqlite3.Connection,
    todo: Sequence[tuple[int, str, str]],
    embedder: Embedder,
    progress: Progress | None = None,
) -> int:
    """Embed context vectors: ``(chunk rowid, text, context hash)`` each; returns how many."""
    import numpy as np

    if not todo:
        return 0
    order = sorted(range(len(todo)), key=lambda i: len(todo[i][1]))
    if progress is not None:
        progress(0, len(todo))
    for start in range(0, len(order), EMBED_BATCH):
        batch = [todo[i] for i in order[start : start + EMBED_BATCH]]
        matrix = np.asarray(embedder.embed_documents([t for _, t, _ in batch]), dtype=np.float32)
        conn.executemany(
            "UPDATE chunks SET cvec = ?, chash = ? WHERE rowid = ?",
            [(matrix[i].tobytes(), h, rowid) for i, (rowid, _, h) in enumerate(batch)],
        )
        if progress is not None:
            progress(min(start + EMBED_BATCH, len(order)), len(todo))
    return len(todo)
