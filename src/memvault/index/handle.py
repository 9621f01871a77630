"""The open index of a vault (SQLite connection, Chroma collections, caches), kept per
process so that a long-lived server reuses it."""

from __future__ import annotations

import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..paths import MEMORY_TYPES as TYPES
from ..store.catalog_tables import rows_in
from . import pending, store
from .coarse import Coarse
from .drift import DriftSweep, Stats

if TYPE_CHECKING:  # pragma: no cover
    from .filters import IndexFilter

Progress = Callable[[int, int], None]

# Seconds an old index replaced by a switch (see migrate.py) goes on answering the process
# that was reading it: a search may have embedded its query for it already (context()
# embeds once for four searches). Its files are deleted, but stay readable while open.
GRACE = 2.0
# Chunks up to which searches score every vector exactly (``index.exact_below``): with the
# vectors mapped from a flat file that beats loading Chroma's graphs well past 100,000.
EXACT_BELOW = 250_000


def say(message: str) -> None:
    print(f"memvault: {message}", file=sys.stderr)


# --- the open index -------------------------------------------------------------------


class Index:
    """One vault's open index (cached per process: a long-lived server reuses it)."""

    def __init__(
        self,
        root: Path,
        conn: sqlite3.Connection,
        manifest: dict[str, Any],
        url: str | None,
        exact_below: int = EXACT_BELOW,
        collection: str = store.COLLECTION,
        prune: bool = True,
        home: str = "",
    ) -> None:
        self.context_vectors = bool(manifest.get("context_vectors"))
        self.root = root
        self.home = home  # the build folder holding its files ("": the index folder)
        self.conn = conn
        self.manifest = manifest
        self.url = url
        # On a shared server: which collections, and whether this index deletes vectors
        # there (only the branch's indexer does; see docs/server-mode.md).
        self.collection_base = collection
        self.prune = prune or not url
        self.unpublished = False  # vectors still to be copied to a new shared collection
        self.exact_below = 0 if url else exact_below
        self.dimensions = int(manifest.get("dimensions") or 0)
        self.lock = threading.RLock()
        self.manifest_mtime = store.manifest_mtime(root)
        self.last_scan = 0.0
        self.seen_generation = int(manifest.get("generation") or 0)
        self.seen_head = manifest.get("commit")
        self._client: Any = None
        self._collections: dict[str, Any] = {}
        self._counts: dict[str, int] | None = None
        self._matrices: dict[str, tuple[Any, Any, Any]] = {}
        self.coarse = Coarse()  # reduced copies of the vectors, for a warm process (kept)
        self._chunk_docs: dict[int, int] | None = None
        self._allowed: dict[Any, tuple[frozenset[int], Any]] = {}
        self._term_docs: dict[str, int] = {}
        self._fts_rows: int | None = None
        self._positions: tuple[Any, Any, list[Any]] | None = None  # see mapped_vectors
        self.epoch = object()  # replaced after every write: a marker for caches of derived facts
        self._recorded: Stats | None = None
        self.sweep = DriftSweep(root)
        self.note: str | None = None  # for the reader, e.g. "another process is writing: ..."
        self.vectors_stale = False  # the vector store must be reloaded from the stored vectors
        # Why the vault's settings want another index: this one is served (with the
        # embedder that made its vectors) while the new one is built beside it.
        self.migrating: str | None = None
        self.superseded_at = 0.0  # when this process saw it replaced (see GRACE)
        self.closed = False

    # Chroma is imported only when a vector is needed: importing chromadb is a large part of
    # a new process's start.
    def client(self) -> Any:
        if self._client is None:
            self._client = store.chroma_client(self.root, self.url, self.home)
        return self._client

    def collection(self, doc_type: str) -> Any:
        """A collection to read (None when the type has none): the door every reader of
        Chroma goes through, so the writes queued for the vault's own Chroma are carried
        out first (:mod:`memvault.index.pending`)."""
        if not self.url:
            waiting = pending.waiting(self.conn)
            if waiting > 10_000:  # (long enough to be worth a word on stderr)
                say(f"writing {waiting:,} queued vectors to the vector store (once)")
            if waiting:
                pending.carry_out(self)
        return self.chroma_collection(doc_type)

    @property
    def defers(self) -> bool:
        """Chroma's writes are queued rather than made (the vault's own Chroma, while
        searches score vectors exactly and never open it)."""
        return not self.url and self.in_memory

    def chroma_collection(self, doc_type: str, create: bool = False) -> Any:
        """The Chroma collection of a type as it is (writers; readers use :meth:`collection`)."""
        col = self._collections.get(doc_type)
        if col is None:
            name = f"{self.collection_base}-{doc_type}"
            try:
                col = store.get_collection(self.client(), name, create=create)
            except Exception:  # noqa: BLE001 - chromadb raises several types for "not there"
                if not create:
                    return None
                raise
            self._collections[doc_type] = col
        return col

    def lock_path(self, name: str) -> Path:
        """A lock file beside this index's data (its own for an index built beside another)."""
        return store.data_dir(self.root, self.home) / name

    def drop_collections(self) -> None:
        client = self.client()
        for doc_type in TYPES:
            name = f"{self.collection_base}-{doc_type}"
            try:
                client.delete_collection(name)
            except Exception:  # noqa: BLE001 - not there is fine
                pass
        self._collections.clear()

    def vector_ids(self, rowids: Sequence[int]) -> list[str]:
        """Chroma ids of these chunks: the row number in the vault's own Chroma; on a shared
        server the hash of the embedded text, which every clone computes alike."""
        if not self.url:
            return [str(r) for r in rowids]
        found: dict[int, str] = {}
        for start in range(0, len(rowids), 900):
            part = list(rowids[start : start + 900])
            sql = f"SELECT rowid, hash FROM chunks WHERE rowid IN ({','.join('?' * len(part))})"
            found.update((int(r), str(h)) for r, h in self.conn.execute(sql, part))
        return [found[r] for r in rowids]

    def rows_for(self, doc_type: str, ids: Sequence[str]) -> dict[str, list[int]]:
        """``{vector id: [chunk rowid, ...]}`` for ids from a shared collection; ids of text
        this clone has no chunk for (not pulled yet, someone's unpushed edit) are absent."""
        if not self.url:
            return {i: [int(i)] for i in ids}
        out: dict[str, list[int]] = {}
        for start in range(0, len(ids), 900):
            part = list(ids[start : start + 900])
            sql = (
                "SELECT c.hash, c.rowid FROM chunks AS c JOIN docs AS d ON d.key = c.doc "
                f"WHERE d.type = ? AND c.hash IN ({','.join('?' * len(part))}) ORDER BY c.rowid"
            )
            for h, r in self.conn.execute(sql, [doc_type, *part]):
                out.setdefault(str(h), []).append(int(r))
        return out

    def chunk_count(self, doc_type: str) -> int:
        if self._counts is None:
            self._counts = {t: 0 for t in TYPES}
            rows = self.conn.execute(
                "SELECT d.type, count(*) FROM chunks AS c JOIN docs AS d ON d.key = c.doc "
                "GROUP BY d.type"
            )
            for t, n in rows:
                self._counts[str(t)] = int(n)
        return self._counts.get(doc_type, 0)

    def forget_counts(self) -> None:
        """After a write: counts, in-memory vectors and filter caches are rebuilt when needed."""
        self._counts = None
        self._matrices.clear()
        self._chunk_docs = None
        self._allowed.clear()
        self._term_docs.clear()
        self._fts_rows = None
        self._positions = None
        self.epoch = object()

    def fts_rows(self) -> int:
        """How many chunks the keyword index holds (cached until the next write)."""
        if self._fts_rows is None:
            self._fts_rows = int(self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        return self._fts_rows

    def term_docs(self, token: str) -> int:
        """How many chunks match one query word (cached until the next write)."""
        count = self._term_docs.get(token)
        if count is None:
            phrase = '"' + token.replace('"', '""') + '"'
            count = int(
                self.conn.execute(
                    "SELECT count(*) FROM fts WHERE fts MATCH ?", (phrase,)
                ).fetchone()[0]
            )
            if len(self._term_docs) > 10_000:
                self._term_docs.clear()
            self._term_docs[token] = count
        return count

    def chunk_docs(self) -> dict[int, int]:
        """``{chunk rowid: doc key}`` of every chunk (cached until the next write)."""
        if self._chunk_docs is None:
            self._chunk_docs = {
                int(r): int(d) for r, d in self.conn.execute("SELECT rowid, doc FROM chunks")
            }
        return self._chunk_docs

    def allowed_docs(self, filt: IndexFilter) -> tuple[frozenset[int], Any]:
        """The doc keys a filter lets through, as a set and as a boolean table indexed by key.

        Computed in SQLite once per filter (a reader's visibility and status rules are the
        same query after query) and kept until the next write, so that filtering the
        candidates of a search is a lookup, not a query.
        """
        import numpy as np

        cached = self._allowed.get(filt)
        if cached is None:
            where, params = filt.sql()
            keys = frozenset(
                int(k)
                for (k,) in self.conn.execute(f"SELECT key FROM docs AS d WHERE {where}", params)
            )
            table = np.zeros((max(keys) + 1) if keys else 1, dtype=bool)
            if keys:
                table[np.fromiter(keys, dtype=np.int64, count=len(keys))] = True
            if len(self._allowed) >= 32:
                self._allowed.pop(next(iter(self._allowed)))
            cached = self._allowed[filt] = (keys, table)
        return cached

    def allowed_among(self, filt: IndexFilter, keys: Iterable[int]) -> set[int]:
        """Which of the given doc keys ``filt`` lets through: from the filter's table when
        :meth:`allowed_docs` has it, else asked of SQLite for these keys only (a new process
        searching 100,000 memories would otherwise read every document's row to filter a
        few hundred candidates)."""
        wanted = sorted(set(keys))
        cached = self._allowed.get(filt)
        if cached is not None:
            return {k for k in wanted if k in cached[0]}
        where, params = filt.sql()
        out: set[int] = set()
        for start in range(0, len(wanted), 900):
            part = wanted[start : start + 900]
            marks = ",".join("?" * len(part))
            sql = f"SELECT key FROM docs AS d WHERE key IN ({marks}) AND {where}"
            out.update(int(k) for (k,) in self.conn.execute(sql, [*part, *params]))
        return out

    def has_allowed(self, filt: IndexFilter) -> bool:
        """Whether :meth:`allowed_docs` holds this filter's table already."""
        return filt in self._allowed

    def docs_of(self, rowids: Sequence[int]) -> dict[int, int]:
        """``{chunk rowid: doc key}`` of the given chunks (from :meth:`chunk_docs` when it is
        loaded, else from SQLite for these rows only)."""
        if self._chunk_docs is not None:
            docs = self._chunk_docs
            return {r: docs[r] for r in rowids if r in docs}
        out: dict[int, int] = {}
        wanted = sorted(set(rowids))
        for start in range(0, len(wanted), 900):
            part = wanted[start : start + 900]
            sql = f"SELECT rowid, doc FROM chunks WHERE rowid IN ({','.join('?' * len(part))})"
            out.update((int(r), int(d)) for r, d in self.conn.execute(sql, part))
        return out

    @property
    def in_memory(self) -> bool:
        """Score vectors exactly in memory (small index) rather than through Chroma.

        Below ``index.exact_below`` chunks (default 250,000; the vectors are mapped from
        :mod:`memvault.index.flat`) a numpy scan is as fast as Chroma, and spares a new
        process importing chromadb and loading its graphs, which were much of a cold search
        through Chroma (``docs/performance.md``, ``docs/scale.md``). The vault's own
        Chroma gets the vectors when it is next read (:mod:`memvault.index.pending`); a
        Chroma server gets them at once. ``index.exact_below: 0`` always asks Chroma.
        """
        # count(*) over chunks reads SQLite's narrowest index; the per-type counts join docs
        return self.fts_rows() <= self.exact_below

    def memory_vectors(self, doc_type: str) -> tuple[Any, Any, Any]:
        """``(rowids, doc keys, matrix)`` of every stored vector of a type (loaded once; rows
        of a vector since replaced have rowid -1 and a document no filter allows)."""
        import numpy as np

        cached = self._matrices.get(doc_type)
        if cached is None:
            from .flat import vectors

            cached = vectors(self, doc_type)  # mapped from the flat file, kept current
        if cached is None:
            rows = self.conn.execute(
                "SELECT c.rowid, c.doc, c.vec FROM chunks AS c JOIN docs AS d ON d.key = c.doc "
                "WHERE d.type = ? AND c.vec IS NOT NULL ORDER BY c.rowid",
                (doc_type,),
            ).fetchall()
            rows = [(r, d, b) for r, d, b in rows if len(b) == self.dimensions * 4]
            rowids = np.fromiter((r for r, _, _ in rows), dtype=np.int64, count=len(rows))
            docs = np.fromiter((d for _, d, _ in rows), dtype=np.int64, count=len(rows))
            matrix = np.frombuffer(b"".join(b for _, _, b in rows), dtype=np.float32).reshape(
                len(rows), self.dimensions
            )
            cached = (rowids, docs, matrix)
        self._matrices[doc_type] = cached
        return cached

    def mapped_vectors(self, rowids: Sequence[int]) -> dict[int, Any]:
        """The stored vectors of given chunks, from the in-memory matrices
        (:meth:`memory_vectors`; a chunk without a vector is left out, as in SQLite). Reading
        them from SQLite cost a warm search ~3-10 ms at 100,000 chunks: each row's vector
        sits in an overflow page of its own."""
        import numpy as np

        if self._positions is None:
            parts = [self.memory_vectors(t) for t in TYPES]
            every = np.concatenate([r for r, _, _ in parts])
            order = np.argsort(every, kind="stable")
            starts = np.cumsum([0] + [len(r) for r, _, _ in parts])
            self._positions = (
                every[order],
                order,
                [(int(a), m) for a, (_, _, m) in zip(starts[:-1], parts, strict=True)],
            )
        ordered, order, matrices = self._positions
        wanted = np.asarray(sorted(set(rowids)), dtype=np.int64)
        at = np.searchsorted(ordered, wanted)
        found = at < len(ordered)
        found[found] = ordered[at[found]] == wanted[found]
        out: dict[int, Any] = {}
        for rowid, where in zip(wanted[found].tolist(), order[at[found]].tolist(), strict=True):
            for start, matrix in reversed(matrices):
                if where >= start:
                    out[rowid] = np.array(matrix[where - start], dtype=np.float32)
                    break
        return out

    def recorded_files(self) -> Stats:
        """``{path: (mtime_ns, size)}`` of the files as last indexed (cached)."""
        if self._recorded is None:
            rows = self.conn.execute("SELECT path, mtime_ns, size FROM files")
            self._recorded = {p: (int(m), int(s)) for p, m, s in rows}
        return self._recorded

    def recorded_for(self, paths: list[str]) -> Stats:
        """The recorded ``(mtime_ns, size)`` of some files (a query for just those)."""
        if self._recorded is not None:
            return {p: self._recorded[p] for p in paths if p in self._recorded}
        sql = "SELECT path, mtime_ns, size FROM files WHERE path IN ({})"
        return {p: (int(m), int(s)) for p, m, s in rows_in(self.conn, sql, paths)}

    def set_recorded_files(self, files: Stats) -> None:
        """The files as just indexed (the caller wrote them to the ``files`` table)."""
        self._recorded = dict(files)

    def update_recorded_files(self, files: Stats, gone: list[str]) -> None:
        """Some files as just indexed, others gone (the caller wrote the ``files`` table)."""
        if self._recorded is not None:
            self._recorded.update(files)
            for path in gone:
                self._recorded.pop(path, None)

    def reset_chroma(self) -> None:
        """Start the vault's own Chroma afresh (its folder could not be written)."""
        import shutil

        self.drop_client()
        store.release_chroma(self.root)
        shutil.rmtree(store.data_dir(self.root, self.home) / store.CHROMA_DIR, ignore_errors=True)

    def drop_client(self) -> None:
        """Forget the Chroma client (its cached system was released): reopened when needed."""
        self._collections.clear()
        self._client = None

    def replaced_moments_ago(self) -> bool:
        """This is an old index (served while its replacement was built) that a switch
        replaced less than :data:`GRACE` seconds ago, as this process first noticed."""
        if not self.migrating or self.closed:
            return False
        if not self.superseded_at:
            try:
                live = store.read_manifest(self.root)
                if live is None or (
                    store.home_of(live) == self.home
                    and live.get("embedder") == self.manifest.get("embedder")
                ):
                    return False
            except store.CorruptIndex:
                return False
            self.superseded_at = time.monotonic()
        return time.monotonic() - self.superseded_at < GRACE

    def serving(self) -> bool:
        """Whether this process's searches read this index: the index on disk, or an old one
        replaced moments ago."""
        if self.closed:
            return False
        return store.manifest_mtime(self.root) == self.manifest_mtime or self.replaced_moments_ago()

    def close(self) -> None:
        self.closed = True
        try:
            self.conn.close()
        except sqlite3.Error:
            pass
        self.drop_client()


class OpenIndexes:
    """This process's open index of each vault, by vault root.

    Each entry is an :class:`Index` (SQLite connection, Chroma client, the caches derived
    from them), opened once so that a long-lived process -- the MCP server, the web
    inspector, the watcher -- reuses it search after search, and a one-shot command reuses
    it between the check before its search and the search. :mod:`memvault.index.service`
    opens, keeps and forgets entries; readers (the embedder of a query, the search engine)
    only look.

    An entry is dropped when another process rewrote the index (its manifest changed:
    :meth:`get` notices; Chroma clients cache their segments, so a changed index is
    reopened, not patched), when :meth:`keep` replaces it, and when :meth:`forget` is
    called (a rebuild, settings that want another index, an index broken under a search,
    tests acting as a new process). A dropped index is closed, unless it is an old one in
    its grace period (:meth:`Index.replaced_moments_ago`): a search may still be reading it.

    Per thread it also remembers the index that thread's last search read (:meth:`serve`):
    the next query is embedded with the embedder of that index's vectors.
    """

    def __init__(self) -> None:
        self._by_root: dict[Path, Index] = {}
        self._lock = threading.Lock()
        self._served = threading.local()

    def get(self, root: Path) -> Index | None:
        """The open index of ``root``; None when there is none, or when another process
        rewrote it since (the entry is then forgotten, with Chroma's cached system)."""
        with self._lock:
            idx = self._by_root.get(root)
        if idx is not None and store.manifest_mtime(root) != idx.manifest_mtime:
            self.forget(root, release_chroma=True)
            return None
        return idx

    def peek(self, root: Path) -> Index | None:
        """The open index of ``root`` if searches still read it (forgets nothing, unlike
        :meth:`get`)."""
        with self._lock:
            idx = self._by_root.get(root)
        return idx if idx is not None and idx.serving() else None

    def searched(self, root: Path) -> Index | None:
        """The index this thread's last search of ``root`` read (:meth:`serve`), else the
        open one, as long as searches still read it."""
        served: dict[Path, Index] = getattr(self._served, "by_root", {})
        idx = served.get(root)
        if idx is not None and idx.serving():
            return idx
        return self.peek(root)

    def keep(self, idx: Index) -> Index:
        """Keep ``idx`` as the open index of its vault (closing one it replaces)."""
        with self._lock:
            old = self._by_root.get(idx.root)
            self._by_root[idx.root] = idx
        if old is not None and old is not idx and not old.replaced_moments_ago():
            old.close()
        return idx

    def serve(self, idx: Index) -> Index:
        """Note ``idx`` as the index this thread's search reads: its query is embedded with
        the embedder of its vectors (:func:`memvault.index.manifest.embedder_for`)."""
        served: dict[Path, Index] | None = getattr(self._served, "by_root", None)
        if served is None:
            served = self._served.by_root = {}
        served[idx.root] = idx
        return idx

    def forget(self, root: Path, *, release_chroma: bool = False) -> None:
        """Drop (and close) the open index of ``root``, if there is one.

        ``release_chroma``: also forget Chroma's cached systems, as a new process would have
        none (the index was rewritten by another process, or deleted)."""
        root = Path(root)
        with self._lock:
            idx = self._by_root.pop(root, None)
        if idx is not None and not idx.replaced_moments_ago():
            idx.close()
        if release_chroma:
            store.release_chroma(root)


open_indexes = OpenIndexes()
