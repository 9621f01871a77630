"""Keeping the index in step with the files: open, check, plan, apply, rebuild.

The index is a cache. Whatever is wrong with it -- missing, damaged, built by another
embedder or another version of memvault -- the answer is the same: say so in one line
on stderr and rebuild it from the files. Writes happen under the vault lock; a reader that
finds the lock taken searches the index as it is rather than wait.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..catalog import ScanResult
from ..errors import IndexError_
from ..gitstore import current_branch, read_head
from ..lock import try_lock
from ..memory import format_time, now_utc
from ..paths import INDEX_DIR, LOCK_PATH
from . import store
from .apply import IndexedRow, apply_changes
from .drift import Stats, generation, stat_files
from .handle import Index, Progress, current_index, forget_index, remember_index, say
from .manifest import embedder_for, expected_header, mismatch
from .plan import ChangeReport, DiskDoc, IndexedDoc, plan_changes
from .store import CorruptIndex, transaction
from .text import DocInfo, doc_info
from .vectors import reload_chroma

if TYPE_CHECKING:  # pragma: no cover
    from ..embeddings import Embedder
    from ..repository import Repository


# --- reports -----------------------------------------------------------------------------


@dataclass
class ReindexReport:
    """What a reindex did. ``summary()`` is one line for people."""

    changes: ChangeReport = field(default_factory=ChangeReport)
    embedded: int = 0
    context_embedded: int = 0
    reused: int = 0
    fetched: int = 0  # vectors taken from the shared Chroma server instead of embedded here
    seconds: float = 0.0
    rebuilt: bool = False
    reason: str = ""
    memories: int = 0
    chunks: int = 0
    busy: bool = False

    @property
    def added(self) -> tuple[str, ...]:
        return self.changes.added

    @property
    def changed(self) -> tuple[str, ...]:
        return self.changes.changed

    @property
    def updated(self) -> tuple[str, ...]:
        return self.changes.updated

    @property
    def moved(self) -> tuple[tuple[str, str], ...]:
        return self.changes.moved

    @property
    def removed(self) -> tuple[str, ...]:
        return self.changes.removed

    @property
    def unchanged(self) -> int:
        return self.changes.unchanged

    def summary(self) -> str:
        if self.busy:
            return (
                "index busy (another memvault process is writing); it catches up on the next search"
            )
        head = "rebuilt" if self.rebuilt else self.changes.summary()
        return (
            f"{head}: {self.memories} memories, {self.chunks} chunks; embedded {self.embedded}"
            + (f" (+{self.context_embedded} context)" if self.context_embedded else "")
            + (f", fetched {self.fetched} from the server" if self.fetched else "")
            + f", reused {self.reused} ({self.seconds:.2f} s)"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.changes.as_dict(),
            "embedded": self.embedded,
            "context_embedded": self.context_embedded,
            "reused": self.reused,
            "fetched": self.fetched,
            "seconds": round(self.seconds, 3),
            "rebuilt": self.rebuilt,
            "reason": self.reason,
            "memories": self.memories,
            "chunks": self.chunks,
        }


# --- opening -----------------------------------------------------------------------------


def _open_existing(vault: Repository, header: Mapping[str, Any]) -> tuple[Index | None, str | None]:
    """The index on disk if it can serve ``header``; else None and why."""
    root = vault.root
    try:
        manifest = store.read_manifest(root)
    except CorruptIndex as exc:
        return None, f"the search index is damaged ({exc})"
    if manifest is None:
        exists = (store.index_dir(root) / store.DB_NAME).exists()
        return None, "the search index is incomplete (no manifest)" if exists else ""
    why = mismatch(manifest, header)
    if why:
        return None, why
    try:
        conn = store.connect(root, create=False)
    except CorruptIndex as exc:
        return None, f"the search index is damaged ({exc})"
    idx = _handle(vault, conn, manifest)
    if manifest.get("dirty") or manifest.get("vectors", _EMBEDDED) != _vectors_at(idx):
        # Also when the vectors belong elsewhere now (index.url set or changed, another
        # branch's shared collection): the stored ones are copied there, never re-embedded.
        idx.vectors_stale = True
    return idx, None


def _handle(vault: Repository, conn: sqlite3.Connection, manifest: Mapping[str, Any]) -> Index:
    url = vault.config.get("index.url")
    return Index(
        vault.root,
        conn,
        dict(manifest),
        url,
        exact_below(vault),
        collection=vector_home(vault, manifest),
        prune=vault.config.get("index.prune") is True,
    )


_EMBEDDED = f"#{store.COLLECTION}"  # where manifests written before server mode kept vectors
_root_commits: dict[Any, str | None] = {}


def _moved_home(vault: Repository, idx: Index) -> bool:
    """A long-lived handle whose vectors belong elsewhere now (``index.url`` changed, or the
    checkout switched branch): reopened, which copies the stored vectors there."""
    if (idx.url or None) != (vault.config.get("index.url") or None):
        return True
    return bool(idx.url) and vector_home(vault, idx.manifest) != idx.collection_base


def _vectors_at(idx: Index) -> str:
    return f"{idx.url or ''}#{idx.collection_base}"


def vector_home(vault: Repository, manifest: Mapping[str, Any]) -> str:
    """The stem of the vault's Chroma collections (see :func:`store.collection_name`).

    On a server: the vault (``index.vault_id``, set by ``init``; else the root commit, the
    same in every clone), the branch (``index.branch``, set by the post-receive hook; else
    the checked-out one; a detached HEAD stays where the index was) and the embedder.
    """
    url = vault.config.get("index.url")
    if not url:
        return store.COLLECTION
    vault_id = vault.config.get("index.vault_id")
    if not vault_id:
        if vault.root not in _root_commits:
            from ..gitstore import root_commit

            _root_commits[vault.root] = root_commit(vault.root)
        vault_id = _root_commits[vault.root] or f"path-{vault.root}"
    branch = vault.config.get("index.branch") or current_branch(vault.root)
    if not branch:
        recorded = str(manifest.get("vectors") or "")
        if recorded.startswith(f"{url}#") and manifest.get("branch"):
            branch = str(manifest["branch"])
    embedder = f"{manifest.get('embedder')}:{manifest.get('dimensions')}"
    return store.collection_name(url, str(vault_id), str(branch or "HEAD"), embedder)


# --- the work -------------------------------------------------------------------------------


def _scan(vault: Repository) -> ScanResult:
    try:
        return vault.scan()
    except sqlite3.DatabaseError:
        # The catalog is a cache beside ours: damaged means rebuilt, never a stack trace.
        vault.catalog.clear()
        return vault.scan()


def _indexed(idx: Index) -> dict[str, IndexedRow]:
    """``{path: IndexedRow}`` of every indexed memory."""
    rows = idx.conn.execute("SELECT key, path, sha, text_hash, type, session FROM docs")
    return {p: IndexedRow(int(k), s, t, ty, se) for k, p, s, t, ty, se in rows}


def sync(
    vault: Repository,
    idx: Index,
    *,
    embedder: Embedder,
    progress: Progress | None = None,
    rebuilt: bool = False,
    reason: str = "",
    files: Stats | None = None,
) -> ReindexReport:
    """Plan and apply the changes between the files and ``idx``. Call with the vault lock held."""
    started = time.perf_counter()
    files = stat_files(vault.root) if files is None else files  # before the scan: see below
    scan = _scan(vault)
    chunk_words = int(vault.config.get("index.chunk_words", 180))
    indexed = _indexed(idx)
    infos: dict[str, DocInfo] = {}
    disk: dict[str, DiskDoc] = {}
    for path, entry in scan.entries.items():
        memory = entry.memory
        if memory is None:
            continue
        before = indexed.get(path)
        if before is not None and before.sha == entry.sha:
            disk[path] = DiskDoc(entry.sha, None)
            continue
        info = doc_info(memory, chunk_words)
        infos[path] = info
        disk[path] = DiskDoc(entry.sha, info.text_hash)
    plan = plan_changes(disk, {p: IndexedDoc(v.sha, v.text_hash) for p, v in indexed.items()})
    shas = {p: e.sha for p, e in scan.entries.items()}
    stats = apply_changes(idx, plan, infos, shas, indexed, embedder, progress)
    if idx.unpublished:  # see open_for_write
        try:
            reload_chroma(idx, progress)
            idx.unpublished = False
        except Exception as exc:  # noqa: BLE001 - the index stays usable without the server
            say(
                f"the Chroma server at {idx.url} did not answer ({type(exc).__name__}); the index "
                "is up to date here and sends its vectors there on the next update"
            )
    # Files are recorded as seen *before* the scan read them: an edit racing the scan
    # leaves a newer mtime behind, found by the next check.
    _record_files(idx, files)
    _write_manifest(vault, idx, embedder, dirty=idx.unpublished)
    memories, chunks = idx.conn.execute(
        "SELECT (SELECT count(*) FROM docs), (SELECT count(*) FROM chunks)"
    ).fetchone()
    return ReindexReport(
        changes=plan,
        embedded=stats.embedded,
        context_embedded=stats.context_embedded,
        reused=stats.reused,
        fetched=stats.fetched,
        seconds=time.perf_counter() - started,
        rebuilt=rebuilt,
        reason=reason,
        memories=int(memories),
        chunks=int(chunks),
    )


def _record_files(idx: Index, files: Stats) -> None:
    old = idx.recorded_files()
    upserts = [(p, m, s) for p, (m, s) in files.items() if old.get(p) != (m, s)]
    gone = [(p,) for p in old if p not in files]
    if upserts or gone:
        with transaction(idx.conn):
            idx.conn.executemany(
                "INSERT OR REPLACE INTO files (path, mtime_ns, size) VALUES (?,?,?)", upserts
            )
            idx.conn.executemany("DELETE FROM files WHERE path = ?", gone)
    idx.set_recorded_files(files)


def _write_manifest(vault: Repository, idx: Index, embedder: Embedder, dirty: bool = False) -> None:
    manifest = dict(idx.manifest)
    manifest.update(expected_header(vault, embedder))
    manifest["commit"] = read_head(vault.root)
    manifest["generation"] = generation(vault.root)
    manifest["updated"] = format_time(now_utc())
    manifest.setdefault("built", manifest["updated"])
    manifest["dirty"] = dirty
    manifest["vectors"] = _vectors_at(idx)
    branch = idx.url and (vault.config.get("index.branch") or current_branch(vault.root))
    if branch:  # a detached HEAD keeps the branch it came from (see vector_home)
        manifest["branch"] = branch
    if not dirty:
        memories, chunks = idx.conn.execute(
            "SELECT (SELECT count(*) FROM docs), (SELECT count(*) FROM chunks)"
        ).fetchone()
        manifest["memories"], manifest["chunks"] = int(memories), int(chunks)
    store.write_manifest(vault.root, manifest)
    idx.manifest = manifest
    idx.manifest_mtime = store.manifest_mtime(vault.root)
    idx.seen_generation = int(manifest["generation"])
    idx.seen_head = manifest["commit"]


# --- entry points ------------------------------------------------------------------------


def _create(vault: Repository, embedder: Embedder) -> Index:
    store.remove_all(vault.root)
    conn = store.connect(vault.root, create=True)
    manifest = dict(expected_header(vault, embedder))
    manifest["built"] = format_time(now_utc())
    idx = _handle(vault, conn, manifest)
    if idx.url:
        # A shared collection is never dropped: other clones search it, and this rebuild
        # takes the vectors it already holds instead of embedding them again.
        store.ensure_hash_index(conn)
    return idx


def rebuild(
    vault: Repository, embedder: Embedder, reason: str, progress: Progress | None = None
) -> ReindexReport:
    """Build the index from scratch. Call with the vault lock held."""
    forget_index(vault.root)
    if reason:
        say(f"{reason}; rebuilding the search index")
    try:
        idx = _create(vault, embedder)
    except CorruptIndex as exc:
        raise IndexError_(f"cannot create the search index: {exc}", INDEX_DIR) from None
    report = sync(vault, idx, embedder=embedder, progress=progress, rebuilt=True, reason=reason)
    idx.last_scan = time.monotonic()
    remember_index(idx)
    return report


def open_for_write(
    vault: Repository, embedder: Embedder, progress: Progress | None = None
) -> tuple[Index | None, str]:
    """An index that can be updated in place, or None and the reason it must be rebuilt."""
    idx = current_index(vault.root)
    header = expected_header(vault, embedder)
    if idx is not None and mismatch(idx.manifest, header) is None and not _moved_home(vault, idx):
        return idx, ""
    idx, why = _open_existing(vault, header)
    if idx is None:
        return None, why or ""
    if idx.vectors_stale:
        if idx.manifest.get("dirty") and not idx.url:  # else the vectors just move
            say("the vector store missed the end of an update; reloading it from stored vectors")
        if idx.url:
            # A shared collection gets this index's vectors after the sync that follows,
            # so that only what the files hold now is sent.
            idx.unpublished = True
        else:
            try:
                reload_chroma(idx, progress)
            except Exception as exc:  # noqa: BLE001 - a broken Chroma folder: rebuild all
                idx.close()
                return None, f"the vector store is damaged ({type(exc).__name__})"
        idx.vectors_stale = False
    return remember_index(idx), ""


def reindex(
    vault: Repository, full: bool = False, progress: Progress | None = None
) -> ReindexReport:
    """Bring the index up to date with the files (``full``: rebuild it from scratch).

    Incremental by default: only new, changed, moved and deleted files are touched and
    unchanged text is never embedded again. Takes the vault lock (waits for it).
    """
    with vault.locked():
        return update_locked(vault, full, progress)


def update_locked(
    vault: Repository, full: bool = False, progress: Progress | None = None
) -> ReindexReport:
    """:func:`reindex` for a caller that already holds the vault lock."""
    embedder = embedder_for(vault)
    if full:
        return rebuild(vault, embedder, "", progress)
    try:
        idx, why = open_for_write(vault, embedder, progress)
        if idx is None:
            return rebuild(vault, embedder, why, progress)
        report = sync(vault, idx, embedder=embedder, progress=progress)
        idx.last_scan = time.monotonic()
        return report
    except (CorruptIndex, sqlite3.DatabaseError) as exc:
        return rebuild(vault, embedder, f"the search index is damaged ({exc})", progress)


def exact_below(vault: Repository) -> int:
    value = vault.config.get("index.exact_below", 20_000)
    return (
        int(value)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0
        else 20_000
    )


# Files checked for hand edits per search in a long-lived process (see DriftSweep).
SWEEP_BUDGET = 100


def ensure_fresh(vault: Repository) -> Index:
    """The index, brought up to date first when the files changed.

    Cheap when nothing changed: a look at the write generation and HEAD, a stat of every
    memory file on a handle's first search, and after that a few hundred files per search
    (hand edits; see :class:`DriftSweep`). Never waits for another writer: if
    the vault lock is taken, the index is used as it is (``Index.note`` says so).
    """
    embedder = embedder_for(vault)
    header = expected_header(vault, embedder)
    idx = current_index(vault.root)
    if idx is not None and (mismatch(idx.manifest, header) is not None or _moved_home(vault, idx)):
        forget_index(vault.root)
        idx = None
    if idx is None:
        idx, why = _open_existing(vault, header)
        if idx is None or idx.vectors_stale:
            return _repair(vault, embedder, why, idx)
        remember_index(idx)
    idx.note = None
    gen, head = generation(vault.root), read_head(vault.root)
    moved = gen != idx.seen_generation or head != idx.seen_head
    files: Stats | None = None
    if moved or idx.last_scan == 0.0:
        # memvault or git changed files, or this is the handle's first search (a fresh
        # process must see edits made while it was not running): compare every file.
        files = stat_files(vault.root)
        drift = files != idx.recorded_files()
        idx.last_scan = time.monotonic()
        idx.sweep.reset()
    else:
        drift = idx.sweep.step(idx.recorded_files(), SWEEP_BUDGET)
    if not drift and not moved:
        return idx
    with try_lock(vault.root / LOCK_PATH) as got:
        if got and vault.recover_interrupted():
            # A writer died half-way: its files are gone again, so look at the disk anew.
            files, drift = None, True
        if not got:
            if drift:
                idx.note = "another memvault process is writing: searched the index as it was"
            else:  # nothing to catch up: remember that, the manifest can wait
                idx.seen_generation, idx.seen_head = gen, head
            return idx
        if drift:
            try:
                sync(vault, idx, embedder=embedder, files=files)
            except (CorruptIndex, sqlite3.DatabaseError) as exc:
                rebuild(vault, embedder, f"the search index is damaged ({exc})")
                fresh = current_index(vault.root)
                assert fresh is not None
                return fresh
        else:
            _write_manifest(vault, idx, embedder, dirty=idx.unpublished)
    return idx


def _repair(vault: Repository, embedder: Embedder, why: str | None, stale: Index | None) -> Index:
    """No usable index: build one (or reload Chroma), waiting a few seconds at most for a writer.

    ``stale`` is an index whose vector store another process is updating (its manifest
    says so). If that writer keeps the lock past a short wait, the search is served from
    ``stale`` anyway: its SQLite side (text, stored vectors) is consistent, and the vector
    leg is computed exactly from the stored vectors instead of Chroma's. A reader never
    waits long behind a writer, and never fails because of one.
    """
    deadline = time.monotonic() + (1.5 if stale is not None else 5.0)
    while True:
        with try_lock(vault.root / LOCK_PATH) as got:
            if got:
                vault.recover_interrupted()
                if stale is not None:
                    stale.close()
                    stale = None
                idx, why2 = open_for_write(vault, embedder)
                if idx is None:
                    rebuild(vault, embedder, why2 or why or "")
                else:
                    sync(vault, idx, embedder=embedder)
                    idx.last_scan = time.monotonic()
                fresh = current_index(vault.root)
                if fresh is None:
                    raise IndexError_(
                        "the search index could not be opened after a rebuild", INDEX_DIR
                    )
                return fresh
        if time.monotonic() > deadline:
            if stale is not None:
                stale.exact_below = max(stale.exact_below, 1 << 62)  # not Chroma: it is mid-update
                stale.note = "another memvault process is updating the index: searched it as it was"
                return stale
            raise IndexError_(
                "the search index is being built by another memvault process; "
                "try again in a moment",
                INDEX_DIR,
            )
        time.sleep(0.05)


def health(vault: Repository) -> list[str]:
    """Notes for ``memvault doctor``: how far behind the index is, and why it can't be used."""
    notes: list[str] = []
    try:
        embedder = embedder_for(vault)
        header = expected_header(vault, embedder)
    except Exception as exc:  # noqa: BLE001 - doctor reports, never crashes
        return [f"embedder {vault.config.get('embedder')!r} is not available: {exc}"]
    try:
        manifest = store.read_manifest(vault.root)
    except CorruptIndex as exc:
        return [
            f"search index is damaged ({exc}); the next search or 'memvault reindex' rebuilds it"
        ]
    if manifest is None:
        return [
            "search index not built yet; the first search builds it (or run 'memvault reindex')"
        ]
    why = mismatch(manifest, header)
    if why:
        return [f"{why}: the next search rebuilds the index"]
    if manifest.get("dirty"):
        notes.append("the vector store missed the end of an update; the next search reloads it")
    try:
        conn = store.connect(vault.root, create=False)
    except CorruptIndex as exc:
        return [f"search index is damaged ({exc}); the next search rebuilds it"]
    try:
        indexed = {p: s for p, s in conn.execute("SELECT path, sha FROM docs")}
    finally:
        conn.close()
    scan = _scan(vault)
    live = {p: e.sha for p, e in scan.entries.items() if e.memory is not None}
    behind = sum(1 for p, s in live.items() if indexed.get(p) != s) + sum(
        1 for p in indexed if p not in live
    )
    if behind:
        notes.append(
            f"search index is {behind} memor{'y' if behind == 1 else 'ies'} behind the files "
            "(the next search catches up)"
        )
    head = read_head(vault.root)
    if manifest.get("commit") and head and manifest["commit"] != head and not behind:
        notes.append(
            f"index manifest reflects commit {str(manifest['commit'])[:10]}, "
            f"HEAD is {head[:10]} (same files)"
        )
    return notes
