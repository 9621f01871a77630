"""The open index of a vault, cached per process, and the cheap checks that tell whether
the files moved on since it was last brought up to date."""

from __future__ import annotations

import os
import sqlite3
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..catalog import ALL_TREES
from ..files import is_memory_file
from . import store
from .text import TEXT_FORMAT

if TYPE_CHECKING:  # pragma: no cover
    from ..vault import Vault

Progress = Callable[[int, int], None]
TYPES = ("episodic", "semantic", "procedural")
GENERATION_PATH = ".memvault/index/generation"
LOCK_PATH = ".memvault/lock"


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
        exact_below: int = 20_000,
        collection: str = store.COLLECTION,
        prune: bool = True,
    ) -> None:
        self.context_vectors = bool(manifest.get("context_vectors"))
        self.root = root
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
        self._chunk_docs: dict[int, int] | None = None
        self._allowed: dict[Any, tuple[frozenset[int], Any]] = {}
        self._term_docs: dict[str, int] = {}
        self._fts_rows: int | None = None
        self._recorded: dict[str, tuple[int, int]] | None = None
        self.sweep = DriftSweep(root)
        self.note: str | None = None  # e.g. "index busy: results may miss the latest change"

    # Chroma is imported only when a vector is needed (about 1 s of imports).
    def client(self) -> Any:
        if self._client is None:
            self._client = store.chroma_client(self.root, self.url)
        return self._client

    def collection(self, doc_type: str, create: bool = False) -> Any:
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
                "SELECT d.type, count(*) FROM chunks AS c JOIN docs AS d ON d.key = c.doc GROUP BY d.type"
            )
            for t, n in rows:
                self._counts[str(t)] = int(n)
        return self._counts.get(doc_type, 0)

    def forget_counts(self) -> None:
        """After a write: counts, in-memory vectors and filter caches are rebuilt when next needed."""
        self._counts = None
        self._matrices.clear()
        self._chunk_docs = None
        self._allowed.clear()
        self._term_docs.clear()
        self._fts_rows = None

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
            count = int(self.conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (phrase,)).fetchone()[0])
            if len(self._term_docs) > 10_000:
                self._term_docs.clear()
            self._term_docs[token] = count
        return count

    def chunk_docs(self) -> dict[int, int]:
        """``{chunk rowid: doc key}`` of every chunk (cached until the next write)."""
        if self._chunk_docs is None:
            self._chunk_docs = {int(r): int(d) for r, d in self.conn.execute("SELECT rowid, doc FROM chunks")}
        return self._chunk_docs

    def allowed_docs(self, filt: Any) -> tuple[frozenset[int], Any]:
        """The doc keys a filter lets through, as a set and as a boolean table indexed by key.

        Computed in SQLite once per filter (a reader's visibility and status rules are the
        same query after query) and kept until the next write, so that filtering the
        candidates of a search is a lookup, not a query.
        """
        import numpy as np

        cached = self._allowed.get(filt)
        if cached is None:
            where, params = filt.sql()
            keys = frozenset(int(k) for (k,) in self.conn.execute(f"SELECT key FROM docs AS d WHERE {where}", params))
            table = np.zeros((max(keys) + 1) if keys else 1, dtype=bool)
            if keys:
                table[np.fromiter(keys, dtype=np.int64, count=len(keys))] = True
            if len(self._allowed) >= 32:
                self._allowed.pop(next(iter(self._allowed)))
            cached = self._allowed[filt] = (keys, table)
        return cached

    @property
    def in_memory(self) -> bool:
        """Score vectors exactly in memory (small index) rather than through Chroma.

        Below ``index.exact_below`` chunks (default 20,000: 30 MB of vectors) a numpy scan is
        as fast as Chroma and saves a process the ~1 s it takes to import chromadb; the
        vectors still live in Chroma too (a Chroma server, or the index growing past the
        threshold, uses them). ``index.exact_below: 0`` always asks Chroma.
        """
        total = sum(self.chunk_count(t) for t in TYPES)
        return total <= self.exact_below

    def memory_vectors(self, doc_type: str) -> tuple[Any, Any, Any]:
        """``(rowids, doc keys, matrix)`` of every stored vector of a type, loaded once from SQLite."""
        import numpy as np

        cached = self._matrices.get(doc_type)
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
            cached = self._matrices[doc_type] = (rowids, docs, matrix)
        return cached

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass
        self._collections.clear()
        self._client = None


_open: dict[Path, Index] = {}
_open_lock = threading.Lock()


def _forget(root: Path) -> None:
    with _open_lock:
        idx = _open.pop(root, None)
    if idx is not None:
        idx.close()


def forget_open_index(root: Path) -> None:
    """Drop this process's handle on a vault's index (tests; after deleting the folder)."""
    _forget(Path(root))
    store.release_chroma(Path(root))


# --- identity of what the index must be ----------------------------------------------


def embedder_for(vault: Vault) -> Any:
    from ..embeddings import get_embedder

    return get_embedder(str(vault.config.get("embedder") or "default"))


def expected_header(vault: Vault, embedder: Any) -> dict[str, Any]:
    return {
        "schema": store.SCHEMA,
        "embedder": embedder.identity,
        "dimensions": int(embedder.dimensions),
        "chunk_words": int(vault.config.get("index.chunk_words", 180)),
        "text_format": TEXT_FORMAT,
        "context_vectors": bool(vault.config.get("index.context_vectors", True)),
    }


def mismatch(manifest: Mapping[str, Any], header: Mapping[str, Any]) -> str | None:
    """Why an index with ``manifest`` can't serve ``header`` (None: it can)."""
    if manifest.get("schema") != header["schema"]:
        return (
            f"the index has schema {manifest.get('schema')}, this memvault uses {header['schema']}"
        )
    if manifest.get("embedder") != header["embedder"]:
        return f"the index was built with embedder {manifest.get('embedder')!r}, the vault now uses {header['embedder']!r}"
    if manifest.get("dimensions") != header["dimensions"]:
        return f"the index holds {manifest.get('dimensions')}-d vectors, the embedder makes {header['dimensions']}-d"
    if manifest.get("chunk_words") != header["chunk_words"]:
        return (
            f"index.chunk_words changed ({manifest.get('chunk_words')} -> {header['chunk_words']})"
        )
    if manifest.get("text_format") != header["text_format"]:
        return "the indexed text format changed in this memvault version"
    if bool(manifest.get("context_vectors")) != header["context_vectors"]:
        return "index.context_vectors changed"
    return None


# --- cheap change detection ------------------------------------------------------------


def generation(root: Path) -> int:
    """How many writes memvault made (``Vault.bump_generation`` appends a byte per write)."""
    try:
        return (root / GENERATION_PATH).stat().st_size
    except FileNotFoundError:
        return 0


def read_head(root: Path) -> str | None:
    """HEAD's commit read straight from ``.git`` (no git process: this runs before every search)."""
    git = root / ".git"
    try:
        if git.is_file():  # a worktree: "gitdir: <path>"
            text = git.read_text(encoding="utf-8").strip()
            if text.startswith("gitdir:"):
                git = (root / text[7:].strip()).resolve()
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref:"):
            return head or None
        ref = head[4:].strip()
        for base in (git, _common_dir(git)):
            path = base / ref
            if path.is_file():
                return path.read_text(encoding="utf-8").strip() or None
            packed = base / "packed-refs"
            if packed.is_file():
                for line in packed.read_text(encoding="utf-8").splitlines():
                    if line.endswith(" " + ref):
                        return line.split(" ", 1)[0]
    except OSError:
        return None
    return None


def current_branch(root: Path) -> str | None:
    """The checked-out branch's name read from ``.git`` (None when HEAD is detached)."""
    git = root / ".git"
    try:
        if git.is_file():
            text = git.read_text(encoding="utf-8").strip()
            if text.startswith("gitdir:"):
                git = (root / text[7:].strip()).resolve()
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    prefix = "ref: refs/heads/"
    return (head[len(prefix) :] or None) if head.startswith(prefix) else None


def _common_dir(git: Path) -> Path:
    try:
        text = (git / "commondir").read_text(encoding="utf-8").strip()
        return (git / text).resolve()
    except OSError:
        return git


def walk_stats(root: Path) -> Iterator[tuple[str, tuple[int, int] | None]]:
    """``(path, (mtime_ns, size))`` of every memory file, the same files as
    :func:`memvault.files.iter_memory_files` but with ``os.scandir`` and plain strings:
    this runs on every search, where pathlib's overhead would be most of the cost."""
    base = str(root)
    for tree in ALL_TREES:
        top = os.path.join(base, tree)
        if not os.path.isdir(top) or os.path.islink(top):
            continue
        stack = [(top, tree)]
        while stack:
            folder, rel_folder = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            subdirs = []
            for entry in entries:
                name = entry.name
                if name.startswith("."):
                    continue
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                if is_dir:
                    subdirs.append((entry.path, f"{rel_folder}/{name}"))
                elif is_memory_file(name) and not name.endswith("~"):
                    try:
                        st = entry.stat(follow_symlinks=False)
                        yield f"{rel_folder}/{name}", (st.st_mtime_ns, st.st_size)
                    except FileNotFoundError:
                        yield f"{rel_folder}/{name}", None
            stack.extend(reversed(subdirs))


def stat_files(root: Path) -> dict[str, tuple[int, int]]:
    """``{path: (mtime_ns, size)}`` of every memory file: the drift check's view of the disk."""
    return {rel: st for rel, st in walk_stats(root) if st is not None}


def recorded_files(idx: Index) -> dict[str, tuple[int, int]]:
    """``{path: (mtime_ns, size)}`` of the files as last indexed (cached on the handle)."""
    if idx._recorded is None:
        idx._recorded = _read_recorded(idx)
    return idx._recorded


def _read_recorded(idx: Index) -> dict[str, tuple[int, int]]:
    return {
        p: (int(m), int(s))
        for p, m, s in idx.conn.execute("SELECT path, mtime_ns, size FROM files")
    }


def current_index(vault: Vault) -> Index | None:
    """This process's open index for the vault; None when another process rewrote it since
    (Chroma clients cache their segments, so a changed index is reopened, not patched)."""
    with _open_lock:
        idx = _open.get(vault.root)
    if idx is not None and store.manifest_mtime(vault.root) != idx.manifest_mtime:
        _forget(vault.root)
        store.release_chroma(vault.root)
        return None
    return idx


def _remember(idx: Index) -> Index:
    with _open_lock:
        old = _open.get(idx.root)
        _open[idx.root] = idx
    if old is not None and old is not idx:
        old.close()
    return idx


class ChangeFeed(Protocol):
    """File-system events of a vault's memory trees (:class:`memvault.watch.ChangeFeed`)."""

    started: float  # time.monotonic() when it began to watch

    def alive(self) -> bool: ...

    def take(self) -> tuple[set[str], bool]:
        """Paths changed since the last call, and whether something needs a full check
        (a folder moved or removed, events lost)."""
        ...


_feeds: dict[Path, ChangeFeed] = {}


def set_change_feed(root: Path, feed: ChangeFeed | None) -> None:
    """Let searches of ``root`` in this process learn of hand edits from ``feed`` (None: stop)."""
    with _open_lock:
        if feed is None:
            _feeds.pop(Path(root), None)
        else:
            _feeds[Path(root)] = feed


def change_feed(root: Path) -> ChangeFeed | None:
    return _feeds.get(Path(root))


def _listed(root: str, rel: str) -> tuple[int, int] | None:
    """``(mtime_ns, size)`` of one file as :func:`walk_stats` would see it (None: it would not
    list it -- missing, under a hidden or symlinked folder, not a memory file name)."""
    parts = rel.split("/")
    name = parts[-1]
    if (
        len(parts) < 2
        or parts[0] not in ALL_TREES
        or any(p.startswith(".") for p in parts)
        or not is_memory_file(name)
        or name.endswith("~")
    ):
        return None
    folder = root
    try:
        for part in parts[:-1]:
            folder = os.path.join(folder, part)
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return None
        st = os.lstat(os.path.join(folder, name))
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return None
    return st.st_mtime_ns, st.st_size


class DriftSweep:
    """Looks for hand edits without statting the whole vault on every search.

    With a :class:`ChangeFeed` (a long-running server watches the trees): only the files
    it reported are compared with the index, so a warm search costs a query, and an edit
    is seen by the next search. A reported file stays suspect until the index has caught up
    with it (if the vault lock was busy, the next search tries again).

    Without one: a few hundred files per search, so that a long-lived process never pays
    for a stat of the whole vault in one query (at 100,000 files that is a third of a
    second); a full pass completes every few dozen searches.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: Iterator[tuple[str, tuple[int, int] | None]] | None = None
        self._seen: set[str] = set()
        self._suspects: set[str] = set()
        self._compare_all = False
        self._compared_at = float("-inf")  # last time every file was compared

    def reset(self) -> None:
        """Every file was just compared with the index (the caller did a full check)."""
        self._restart()
        self._compared_at = time.monotonic()

    def _restart(self) -> None:
        self._files = None
        self._seen = set()

    def step(self, recorded: Mapping[str, tuple[int, int]], budget: int) -> bool:
        """Check the files the feed reported, or up to ``budget`` more files; True when one
        differs from the index."""
        feed = change_feed(self.root)
        if feed is not None and feed.alive():
            return self._check_reported(feed, recorded)
        if self._files is None:
            self._files = walk_stats(self.root)
            self._seen = set()
        for _ in range(budget):
            try:
                rel, st = next(self._files)
            except StopIteration:
                gone = len(self._seen) != len(recorded) or not self._seen.issuperset(recorded)
                self.reset()
                return gone
            self._seen.add(rel)
            if st is None or recorded.get(rel) != st:
                self._restart()
                return True
        return False

    def _check_reported(self, feed: ChangeFeed, recorded: Mapping[str, tuple[int, int]]) -> bool:
        paths, everything = feed.take()
        self._suspects.update(paths)
        if everything or self._compare_all or feed.started > self._compared_at:
            # A folder moved, events were lost, or the feed began after the last full check.
            self._compare_all = stat_files(self.root) != recorded
            if not self._compare_all:
                self._suspects.clear()
                self._compared_at = time.monotonic()
            return self._compare_all
        drift = False
        root = str(self.root)
        for rel in list(self._suspects):
            if _listed(root, rel) != recorded.get(rel):
                drift = True
            else:
                self._suspects.discard(rel)
        return drift
