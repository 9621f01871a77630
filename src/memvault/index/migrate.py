"""Moving the index to another embedder (or chunk size, or text format) without a gap.

The new index is built beside the live one, in a ``build-<hex>/`` folder of the index
folder (git-ignored with it), while searches go on reading the old one with the embedder
that made its vectors (:func:`memvault.index.manifest.embedder_for`). ``shadow.json`` says
which folder, for which header, and how far the build got.

* **Resumable.** The build commits every 256 memories (16 in a search's slice); a build
  that is killed goes on from there the next time, never from zero.
  ``memvault reindex --full`` drops it and starts again.
* **Unlocked.** The build holds its own lock (``build.lock``), not the vault's: writers
  and searches go on. The vault lock is taken only for the end: catching up with the
  files written meanwhile, filling Chroma from the stored vectors, and the switch.
* **Atomic.** The switch is the replacement (a rename) of ``manifest.json`` by one that
  names the new folder: a reader sees the old index or the new one, never a mix. The old
  files are deleted after; a reader that still has them open keeps reading them.

Who builds: ``memvault reindex`` (and the git hooks' background reindex) to the end, and
every search a slice of ``index.migrate_budget`` seconds (default 1; 0: one batch), so
that a vault nobody reindexes gets there too.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..memory import format_time, now_utc
from ..paths import LOCK_PATH
from ..store.catalog import ScanResult
from ..store.lock import try_lock
from ..values import Record, field
from . import store
from .apply import apply_changes
from .handle import Index, Progress, open_indexes, say
from .manifest import keyword_only, mismatch, servable, spec_for, vectors_embedder
from .plan import ApplyStats, ChangeReport
from .update import (
    EMBEDDED,
    ReindexReport,
    infos_for,
    make_handle,
    plan_for,
    scan_files,
    sync,
    vectors_at,
)

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from ..embeddings import Embedder
    from ..store.repository import Repository

BATCH = 256  # memories per transaction in `memvault reindex`
SEARCH_BATCH = 16  # ... in a search's slice
SEARCH_BUDGET = 1.0  # seconds a search gives the new index (index.migrate_budget)
REINDEX_WAIT = 30.0  # seconds `memvault reindex` waits for another builder
WRITER_WAIT = 4.0  # ... a caller holding the vault lock (longer: that builder waits for it)


class Shadow(Record):
    """The index being built beside the live one (``shadow.json``)."""

    home: str
    header: dict[str, Any]
    reason: str
    started: str
    spec: str = ""
    done: int = 0
    total: int = 0

    @classmethod
    def read(cls, root: Path) -> Shadow | None:
        data = store.read_shadow(root)
        try:
            if data is None or not isinstance(data.get("header"), dict):
                return None
            store.data_dir(root, str(data.get("home") or "-"))  # a build folder's name
            return cls(
                str(data["home"]),
                dict(data["header"]),
                str(data.get("reason") or ""),
                str(data.get("started") or ""),
                str(data.get("spec") or ""),
                int(data.get("done") or 0),
                int(data.get("total") or 0),
            )
        except (store.CorruptIndex, KeyError, TypeError, ValueError):
            return None

    @property
    def embedder(self) -> str:
        return str(self.header.get("embedder"))

    def progress(self) -> str:
        return f"{self.done} of {self.total} memories done"


class Dropped(Exception):
    """The shadow index went away while it was being built (``reindex --full``, damage)."""


class Outcome(Record):
    """What one call of :func:`advance` did."""

    shadow: Shadow | None
    report: ReindexReport | None = None  # set when it switched to the new index
    index: Index | None = None  # ... which is then this
    busy: str = ""  # why it did nothing
    stats: ApplyStats = field(default_factory=ApplyStats)


def pending(vault: Repository, header: dict[str, Any]) -> str | None:
    """Why the vault needs a new index while the live one can keep serving (None: it
    does not, or the live one can't serve: missing, damaged, another schema)."""
    try:
        manifest = store.read_manifest(vault.root)
    except store.CorruptIndex:
        return None
    if manifest is None:
        return None
    why = mismatch(manifest, header)
    return why if why and servable(vault.root, manifest) else None


def serve_old(idx: Index, why: str) -> None:
    """Mark ``idx`` as the old index searches read until the new one is ready. Its vector
    store is not repaired here (not this index's future): when it can't be trusted, or the
    old embedder can't be loaded, vectors are scored from SQLite, never from Chroma."""
    idx.migrating = why
    manifest = idx.manifest
    stale = bool(manifest.get("dirty")) or manifest.get("vectors", EMBEDDED) != vectors_at(idx)
    if stale or keyword_only(vectors_embedder(manifest)):
        idx.exact_below = max(idx.exact_below, 1 << 62)


@contextmanager
def _build_lock(root: Path, wait: float) -> Iterator[bool]:
    path = store.index_dir(root) / store.BUILD_LOCK
    deadline = time.monotonic() + wait
    while True:
        with try_lock(path) as got:
            if got or time.monotonic() >= deadline:
                yield got
                return
        time.sleep(0.05)


def advance(
    vault: Repository,
    embedder: Embedder,
    header: dict[str, Any],
    why: str,
    *,
    budget: float | None,
    batch: int | None = None,
    vault_lock: str = "try",
    wait: float = 0.0,
    fresh: bool = False,
    progress: Progress | None = None,
) -> Outcome:
    """Build the new index for ``header`` (resuming one in progress; ``fresh``: from zero)
    for ``budget`` seconds (None: to the end), and switch to it once it is complete.

    ``vault_lock``: ``held`` (the caller has it), ``wait`` (take it for the switch) or
    ``try`` (switch only if it is free: a search never waits for a writer).
    """
    with _build_lock(vault.root, wait) as got:
        if not got:
            return Outcome(Shadow.read(vault.root), busy="another memvault process is building it")
        sidx, shadow = _open(vault, embedder, header, why, fresh)
        outcome = Outcome(shadow)
        report = None
        try:
            deadline = None if budget is None else time.monotonic() + budget
            size = batch or BATCH
            complete = _fill(vault, sidx, shadow, embedder, deadline, size, progress, outcome.stats)
            if complete:
                report = _switch_when_free(vault, sidx, shadow, embedder, vault_lock, progress)
        except Dropped:
            sidx.close()
            return Outcome(None, busy="the new index was dropped while it was being built")
        except BaseException:
            sidx.close()
            raise
        if report is None:
            sidx.close()
            if complete:
                outcome.busy = "another memvault process is writing; the switch waits for it"
            return outcome
        _add(report, outcome.stats)
        outcome.report, outcome.index, outcome.shadow = report, sidx, None
        return outcome


def _open(
    vault: Repository, embedder: Embedder, header: dict[str, Any], why: str, fresh: bool
) -> tuple[Index, Shadow]:
    shadow = _start(vault, embedder, header, why, fresh)
    try:
        return _open_shadow(vault, shadow, header), shadow
    except store.CorruptIndex:  # a damaged half-built index: start it again
        shadow = _start(vault, embedder, header, why, fresh=True)
        return _open_shadow(vault, shadow, header), shadow


def run(
    vault: Repository,
    embedder: Embedder,
    header: dict[str, Any],
    why: str,
    *,
    vault_lock: str,
    fresh: bool = False,
    progress: Progress | None = None,
) -> ReindexReport:
    """Build the new index to the end and switch to it (``memvault reindex``)."""
    started = time.perf_counter()
    outcome = advance(
        vault,
        embedder,
        header,
        why,
        budget=None,
        vault_lock=vault_lock,
        wait=WRITER_WAIT if vault_lock == "held" else REINDEX_WAIT,
        fresh=fresh,
        progress=progress,
    )
    if outcome.report is None or outcome.index is None:
        where = f" ({outcome.shadow.progress()})" if outcome.shadow else ""
        return ReindexReport(
            busy=True, reason=f"new index for the new embedder: {outcome.busy}{where}"
        )
    outcome.index.last_scan = time.monotonic()
    open_indexes.keep(outcome.index)
    outcome.report.seconds = time.perf_counter() - started
    return outcome.report


def _add(report: ReindexReport, stats: ApplyStats) -> None:
    report.embedded += stats.embedded
    report.context_embedded += stats.context_embedded
    report.reused += stats.reused
    report.fetched += stats.fetched


# --- the build ---------------------------------------------------------------------------


def _start(
    vault: Repository, embedder: Embedder, header: dict[str, Any], why: str, fresh: bool
) -> Shadow:
    """The shadow index to build for ``header``: the one in progress, or a new one (an
    unfinished one for another header, or any with ``fresh``, is dropped). Build lock held."""
    root = vault.root
    shadow = Shadow.read(root)
    if shadow is not None and (
        fresh
        or shadow.header != header
        or not (store.data_dir(root, shadow.home) / store.DB_NAME).exists()
    ):
        store.remove_data(root, shadow.home)
        shadow = None
    if shadow is not None:
        return shadow
    _remove_orphans(root, keep=())
    shadow = Shadow(
        store.new_home(),
        dict(header),
        why,
        format_time(now_utc()),
        spec_for(embedder.identity) or "",
    )
    store.write_shadow(root, shadow.as_dict())
    say(f"{why}; rebuilding the search index beside the old one, which serves until it is ready")
    return shadow


def _remove_orphans(root: Path, keep: tuple[str, ...]) -> None:
    """Delete build folders that are neither the live index nor in ``keep``."""
    live = store.live_home(root)
    for home in store.builds(root):
        if home != live and home not in keep:
            store.remove_data(root, home)


def _open_shadow(vault: Repository, shadow: Shadow, header: dict[str, Any]) -> Index:
    conn = store.connect(vault.root, create=True, home=shadow.home)
    manifest = {**header, "built": shadow.started, "home": shadow.home, "dirty": True}
    if shadow.spec:
        manifest["embedder_spec"] = shadow.spec
    sidx = make_handle(vault, conn, manifest, shadow.home)
    if sidx.url:
        store.ensure_hash_index(conn)
    # Vectors go to SQLite only; Chroma gets them all at the switch (a killed build
    # never leaves Chroma ahead of or behind SQLite).
    sidx.unpublished = True
    return sidx


def _fill(
    vault: Repository,
    sidx: Index,
    shadow: Shadow,
    embedder: Embedder,
    deadline: float | None,
    batch: int,
    progress: Progress | None,
    stats: ApplyStats,
) -> bool:
    """Index the files into ``sidx`` a batch (one transaction) at a time, until done or
    ``deadline``; True when it holds every file."""
    scan = scan_files(vault)
    planned = plan_for(vault, sidx, scan, lazy=True)
    shadow.total = sum(1 for e in scan.entries.values() if e.valid)
    groups = list(_batches(planned.plan, scan, batch))
    _save(vault.root, sidx, shadow, progress)
    for n, group in enumerate(groups, 1):
        infos_for(vault, sidx, scan, group.added, planned.infos)
        got = apply_changes(sidx, group, planned.infos, planned.shas, planned.indexed, embedder)
        sidx.manifest["dirty"] = True  # keeps apply_changes off the live manifest
        for name in ("embedded", "context_embedded", "reused", "fetched"):
            setattr(stats, name, getattr(stats, name) + getattr(got, name))
        _save(vault.root, sidx, shadow, progress)
        if deadline is not None and time.monotonic() >= deadline and n < len(groups):
            return False
    return True


def _save(root: Path, sidx: Index, shadow: Shadow, progress: Progress | None) -> None:
    current = Shadow.read(root)
    if current is None or current.home != shadow.home:
        raise Dropped
    shadow.done = int(sidx.conn.execute("SELECT count(*) FROM docs").fetchone()[0])
    store.write_shadow(root, shadow.as_dict())
    if progress is not None:
        progress(shadow.done, shadow.total)


def _batches(plan: ChangeReport, scan: ScanResult, size: int) -> Iterator[ChangeReport]:
    """``plan`` in parts: removals, then metadata, then ``size`` memories to embed at a time,
    a session's memories together (their context is redone when a neighbour joins)."""
    if plan.removed:
        yield ChangeReport(removed=plan.removed)
    if plan.moved or plan.updated:
        yield ChangeReport(moved=plan.moved, updated=plan.updated)
    added = set(plan.added)

    def session(path: str) -> str:
        memory = scan.entries[path].memory
        return str(memory.meta.get("session") or "") if memory is not None else ""

    work = sorted((*plan.added, *plan.changed), key=lambda p: (session(p), p))
    for start in range(0, len(work), max(1, size)):
        part = work[start : start + size]
        yield ChangeReport(
            added=tuple(p for p in part if p in added),
            changed=tuple(p for p in part if p not in added),
        )


# --- the switch --------------------------------------------------------------------------


def _switch_when_free(
    vault: Repository,
    sidx: Index,
    shadow: Shadow,
    embedder: Embedder,
    vault_lock: str,
    progress: Progress | None,
) -> ReindexReport | None:
    if vault_lock == "held":
        return _switch(vault, sidx, shadow, embedder, progress)
    if vault_lock == "wait":
        with vault.locked():
            return _switch(vault, sidx, shadow, embedder, progress)
    with try_lock(vault.root / LOCK_PATH) as got:
        if not got:
            return None
        vault.recover_interrupted()
        return _switch(vault, sidx, shadow, embedder, progress)


def _switch(
    vault: Repository,
    sidx: Index,
    shadow: Shadow,
    embedder: Embedder,
    progress: Progress | None,
) -> ReindexReport:
    """Catch up with the files, fill Chroma, and make the new index the live one (its
    manifest replaces the old); then delete the old files. Both locks held."""
    root = vault.root
    current = Shadow.read(root)
    if current is None or current.home != shadow.home:
        raise Dropped
    old_home = store.live_home(root)
    report = sync(
        vault, sidx, embedder=embedder, progress=progress, rebuilt=True, reason=shadow.reason
    )
    if old_home != sidx.home:
        store.remove_data(root, old_home)  # releases every cached Chroma system
    sidx.drop_client()
    try:
        (store.index_dir(root) / store.SHADOW_NAME).unlink()
    except FileNotFoundError:
        pass
    _remove_orphans(root, keep=())
    return report


# --- reporting ---------------------------------------------------------------------------


def search_budget(vault: Repository) -> float:
    value = vault.config.get("index.migrate_budget", SEARCH_BUDGET)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return SEARCH_BUDGET


def note(outcome: Outcome, old: Embedder) -> str | None:
    """The one line a search served by the old index carries (None: it switched)."""
    if outcome.report is not None:
        return None
    shadow = outcome.shadow
    where = f" ({shadow.progress()})" if shadow is not None else ""
    target = repr(shadow.embedder) if shadow is not None else "the new settings"
    if keyword_only(old):
        return (
            f"the index is being rebuilt for embedder {target}{where}; the old index's "
            f"embedder {old.identity!r} can't be loaded here, so this search used keywords only"
        )
    return (
        f"the index is being rebuilt for embedder {target}{where}; searched the old index "
        f"(embedder {old.identity!r}); 'memvault reindex' finishes it"
    )


def health_notes(
    vault: Repository, manifest: dict[str, Any], why: str, header: dict[str, Any]
) -> list[str]:
    """``memvault doctor`` while the live index is not what the vault wants (``header``)."""
    if not servable(vault.root, manifest):
        return [f"{why}: the next search rebuilds the index"]
    shadow = Shadow.read(vault.root)
    if shadow is None or shadow.header != header:
        return [
            f"{why}: the next search or 'memvault reindex' builds a new index beside the old "
            "one, which serves searches meanwhile"
        ]
    state = "being built" if building(vault.root) else "half built (it resumes)"
    return [
        f"the index uses embedder {manifest.get('embedder')!r}; a new index for "
        f"{shadow.embedder!r} is {state}: {shadow.progress()} ('memvault reindex' finishes it)"
    ]


def building(root: Path) -> bool:
    """Whether a process is building a shadow index right now (it holds the build lock)."""
    with try_lock(store.index_dir(root) / store.BUILD_LOCK) as got:
        return not got


def leftover_notes(vault: Repository, header: dict[str, Any]) -> list[str]:
    """A shadow index for settings the vault no longer wants (changed back meanwhile)."""
    shadow = Shadow.read(vault.root)
    if shadow is None or shadow.header == header:
        return []
    return [
        f"an unfinished index for embedder {shadow.embedder!r} is left over "
        f"({shadow.progress()}); the next 'memvault reindex' deletes it"
    ]


def drop_stale(vault: Repository, header: dict[str, Any]) -> None:
    """Delete a shadow index for settings the vault no longer wants (if no one builds it)."""
    shadow = Shadow.read(vault.root)
    if shadow is None or shadow.header == header:
        return
    with _build_lock(vault.root, 0.0) as got:
        if got:
            store.remove_data(vault.root, shadow.home)
            try:
                (store.index_dir(vault.root) / store.SHADOW_NAME).unlink()
            except FileNotFoundError:
                pass


def describe(vault: Repository) -> dict[str, Any]:
    """Which embedder the live index uses, and the index being built beside it (doctor)."""
    try:
        manifest = store.read_manifest(vault.root) or {}
    except store.CorruptIndex:
        manifest = {}
    info: dict[str, Any] = {
        "embedder": manifest.get("embedder"),
        "dimensions": manifest.get("dimensions"),
        "memories": manifest.get("memories"),
        "chunks": manifest.get("chunks"),
        "built": manifest.get("built"),
        "shadow": None,
    }
    shadow = Shadow.read(vault.root)
    if shadow is not None:
        info["shadow"] = {
            "embedder": shadow.embedder,
            "dimensions": shadow.header.get("dimensions"),
            "done": shadow.done,
            "total": shadow.total,
            "started": shadow.started,
            "building": building(vault.root),
            "reason": shadow.reason,
        }
    return info
