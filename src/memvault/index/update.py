"""Bringing one open index in line with the files: plan the changes, apply them, write
the manifest. :mod:`memvault.index.service` decides which index and when (and under which
lock); :mod:`memvault.index.migrate` uses the same steps for an index built beside the
live one."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..memory import format_time, now_utc
from ..store import journal
from ..store.catalog import ScanResult, changed_since
from ..store.catalog_tables import rows_in
from ..store.git.ops import current_branch
from ..store.git.status import DIRTY_LIMIT, GitView, git_view
from ..values import Record, field
from . import store
from .apply import IndexedRow, apply_changes
from .drift import Stats, generation
from .handle import EXACT_BELOW, Index, Progress, say
from .manifest import expected_header, spec_for
from .plan import ChangeReport, DiskDoc, IndexedDoc, plan_changes
from .store import transaction
from .text import DocInfo, doc_info
from .vectors import reload_chroma

if TYPE_CHECKING:  # pragma: no cover
    from ..embeddings import Embedder
    from ..store.repository import Repository


class ReindexReport(Record):
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
            return self.reason or (
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


# --- handles ------------------------------------------------------------------------------


def make_handle(
    vault: Repository, conn: sqlite3.Connection, manifest: Mapping[str, Any], home: str = ""
) -> Index:
    url = vault.config.get("index.url")
    return Index(
        vault.root,
        conn,
        dict(manifest),
        url,
        exact_below(vault),
        collection=vector_home(vault, manifest),
        prune=vault.config.get("index.prune") is True,
        home=home,
    )


EMBEDDED = f"#{store.COLLECTION}"  # where manifests written before server mode kept vectors
_root_commits: dict[Any, str | None] = {}


def moved_home(vault: Repository, idx: Index) -> bool:
    """A long-lived handle whose vectors belong elsewhere now (``index.url`` changed, or the
    checkout switched branch): reopened, which copies the stored vectors there."""
    if (idx.url or None) != (vault.config.get("index.url") or None):
        return True
    return bool(idx.url) and vector_home(vault, idx.manifest) != idx.collection_base


def vectors_at(idx: Index) -> str:
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
            from ..store.git.ops import root_commit

            _root_commits[vault.root] = root_commit(vault.root)
        vault_id = _root_commits[vault.root] or f"path-{vault.root}"
    branch = vault.config.get("index.branch") or current_branch(vault.root)
    if not branch:
        recorded = str(manifest.get("vectors") or "")
        if recorded.startswith(f"{url}#") and manifest.get("branch"):
            branch = str(manifest["branch"])
    embedder = f"{manifest.get('embedder')}:{manifest.get('dimensions')}"
    return store.collection_name(url, str(vault_id), str(branch or "HEAD"), embedder)


def exact_below(vault: Repository) -> int:
    value = vault.config.get("index.exact_below", EXACT_BELOW)
    return (
        int(value)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0
        else EXACT_BELOW
    )


# --- planning and applying ------------------------------------------------------------------


def scan_files(vault: Repository, paths: list[str] | None = None) -> ScanResult:
    """Every memory file (``paths``: only those) as the catalog sees it now."""
    try:
        return vault.scan() if paths is None else vault.scan_paths(paths)
    except sqlite3.DatabaseError:
        # The catalog is a cache beside ours: damaged means rebuilt, never a stack trace.
        vault.catalog.clear()
        return vault.scan() if paths is None else vault.scan_paths(paths)


def indexed_rows(idx: Index, paths: list[str] | None = None) -> dict[str, IndexedRow]:
    """``{path: IndexedRow}`` of every indexed memory (``paths``: of those only)."""
    sql = "SELECT key, path, sha, text_hash, type, session FROM docs"
    rows = (
        idx.conn.execute(sql)
        if paths is None
        else rows_in(idx.conn, sql + " WHERE path IN ({})", paths)
    )
    return {p: IndexedRow(int(k), s, t, ty, se) for k, p, s, t, ty, se in rows}


class Planned(Record):
    """A plan and what applying it needs: the text of what it (re)indexes (``infos``; for
    a ``lazy`` plan not yet of the added files), every file's sha, the index's rows."""

    plan: ChangeReport
    infos: dict[str, DocInfo]
    shas: dict[str, str]
    indexed: dict[str, IndexedRow]


def plan_for(
    vault: Repository,
    idx: Index,
    scan: ScanResult,
    *,
    lazy: bool = False,
    paths: list[str] | None = None,
) -> Planned:
    """The changes between the files and ``idx``. ``lazy``: the text of a file the index
    does not hold yet is left for :func:`infos_for` (building it for 10,000 files at once
    costs seconds; moves are then seen as a removal and an addition). ``paths``: ``scan``
    covers only those, and so does the plan."""
    chunk_words = chunk_words_of(vault, idx)
    indexed = indexed_rows(idx, paths)
    infos: dict[str, DocInfo] = {}
    disk: dict[str, DiskDoc] = {}
    for path, entry in scan.entries.items():
        before = indexed.get(path)
        if lazy and before is None:
            if entry.valid:
                disk[path] = DiskDoc(entry.sha, None)
            continue
        if not entry.valid:
            continue
        if before is not None and before.sha == entry.sha:
            disk[path] = DiskDoc(entry.sha, None)  # unchanged: never decoded (100,000: seconds)
            continue
        memory = entry.memory
        if memory is None:
            continue
        info = doc_info(memory, chunk_words)
        infos[path] = info
        disk[path] = DiskDoc(entry.sha, info.text_hash)
    plan = plan_changes(disk, {p: IndexedDoc(v.sha, v.text_hash) for p, v in indexed.items()})
    shas = {p: e.sha for p, e in scan.entries.items()}
    return Planned(plan, infos, shas, indexed)


def infos_for(
    vault: Repository,
    idx: Index,
    scan: ScanResult,
    paths: tuple[str, ...],
    infos: dict[str, DocInfo],
) -> None:
    """Fill in ``infos`` for ``paths`` (see :func:`plan_for`)."""
    chunk_words = chunk_words_of(vault, idx)
    for path in paths:
        if path not in infos:
            memory = scan.entries[path].memory
            assert memory is not None  # listed as valid by the plan
            infos[path] = doc_info(memory, chunk_words)


def chunk_words_of(vault: Repository, idx: Index) -> int:
    """The chunk size ``idx`` was built with (the config's for a new one)."""
    recorded = idx.manifest.get("chunk_words")
    if isinstance(recorded, int) and not isinstance(recorded, bool) and recorded > 0:
        return recorded
    return int(vault.config.get("index.chunk_words", 180))


def sync(
    vault: Repository,
    idx: Index,
    *,
    embedder: Embedder,
    progress: Progress | None = None,
    rebuilt: bool = False,
    reason: str = "",
    files: Stats | None = None,
    git: GitView | None = None,
) -> ReindexReport:
    """Plan and apply the changes between the files and ``idx``, then write the manifest
    (for an index built beside the live one, that is the switch to it). Call with the vault
    lock held. ``git``: only the files git says can differ are read (see
    :func:`memvault.store.git.status.git_view`)."""
    started = time.perf_counter()
    if git is None or journal.pending(vault.root):
        # (the scan first undoes a write that died half-way: then read every file)
        git = git_view(vault.root)
    paths = git.suspects if git is not None else None
    scan = scan_files(vault, paths)
    # Files are recorded as stat-ed before they were read (the scan stats, then parses).
    files = scan.stats if files is None else files
    planned = plan_for(vault, idx, scan, paths=paths)
    plan = planned.plan
    stats = apply_changes(
        idx, plan, planned.infos, planned.shas, planned.indexed, embedder, progress
    )
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
    record_files(idx, files, paths)
    git = with_touched(vault.root, git, plan)
    write_manifest(vault, idx, embedder, dirty=idx.unpublished, git=git)
    memories, chunks = idx.conn.execute(
        "SELECT (SELECT count(*) FROM docs), (SELECT count(*) FROM chunks)"
    ).fetchone()
    if paths is not None:  # the plan saw the suspects only: the others are unchanged too
        touched = len(plan.added) + len(plan.changed) + len(plan.updated) + len(plan.moved)
        plan = plan.replace(unchanged=max(0, int(memories) - touched))
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


def with_touched(root: Path, git: GitView | None, plan: ChangeReport) -> GitView | None:
    """``git`` with the paths whose text the index just changed since ``git status`` ran
    among its differing ones: one edited after it and put back later would otherwise be
    named by no git answer, though the index holds the edit. (Files written before it -- an
    import, a rebuild -- are not added: git's answer covers them.) A removal can't be dated:
    every path the index dropped is added."""
    if git is None or git.differing is None or plan.empty:
        return git
    written = {*plan.added, *plan.changed, *plan.updated, *(new for _, new in plan.moved)}
    late = {p for p in written if changed_since(root, p, git.taken_ns)}
    late.update(plan.removed, (old for old, _ in plan.moved))
    differing = sorted(late.union(git.differing))
    kept = differing if len(differing) <= DIRTY_LIMIT else None
    return GitView(git.head, kept, git.suspects, git.taken_ns)


def record_files(idx: Index, files: Stats, paths: list[str] | None = None) -> None:
    """Note the files as indexed: ``files`` is every memory file (``paths``: ``files`` is
    what of those is on disk; the others keep their record)."""
    old = idx.recorded_files() if paths is None else idx.recorded_for(paths)
    gone = [(p,) for p in old if p not in files]
    upserts = [(p, m, s) for p, (m, s) in files.items() if old.get(p) != (m, s)]
    if upserts or gone:
        with transaction(idx.conn):
            idx.conn.executemany(
                "INSERT OR REPLACE INTO files (path, mtime_ns, size) VALUES (?,?,?)", upserts
            )
            idx.conn.executemany("DELETE FROM files WHERE path = ?", gone)
    if paths is None:
        idx.set_recorded_files(files)
    else:
        idx.update_recorded_files(files, [p for (p,) in gone])


def write_manifest(
    vault: Repository,
    idx: Index,
    embedder: Embedder,
    dirty: bool = False,
    git: GitView | None = None,
) -> None:
    """Write the live manifest for ``idx`` (atomically: a reader sees the old or the new).

    An index served while its replacement is built (``idx.migrating``) keeps its own
    header: it still holds what it was built with. ``git``: what git said before the files
    were read (HEAD, what differed from it); asked now when not given."""
    manifest = dict(idx.manifest)
    if not idx.migrating:
        manifest.update(expected_header(vault, embedder))
        spec = spec_for(embedder.identity)
        if spec:
            manifest["embedder_spec"] = spec
    # The commit and what differs from it: the next drift check stats only these (and
    # what changed since). Asked before the files were read, when the caller did: a file
    # changed meanwhile is then among them (or in a later commit), never between.
    if git is None:
        git = git_view(vault.root)
    manifest["commit"] = git.head if git is not None else None
    manifest["dirty_paths"] = git.differing if git is not None else None
    manifest["generation"] = generation(vault.root)
    manifest["updated"] = format_time(now_utc())
    manifest.setdefault("built", manifest["updated"])
    manifest["dirty"] = dirty
    manifest["vectors"] = vectors_at(idx)
    if idx.home:
        manifest["home"] = idx.home
    else:
        manifest.pop("home", None)
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
