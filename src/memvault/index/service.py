"""Keeping the index in step with the files: open, check, plan, apply, rebuild.

The index is a cache. Whatever is wrong with it -- missing, damaged, built by another
version of memvault -- the answer is the same: say so in one line on stderr and rebuild it
from the files. Built by another embedder (or with another chunk size or text format), it
keeps serving searches while a new one is built beside it and switched to atomically
(:mod:`memvault.index.migrate`). Writes happen under the vault lock; a reader that finds
the lock taken searches the index as it is rather than wait.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import IndexError_
from ..memory import format_time, now_utc
from ..paths import INDEX_DIR, LOCK_PATH
from ..store.git.early import drop_early
from ..store.git.ops import read_head
from ..store.git.status import git_view
from ..store.lock import try_lock
from . import migrate, store
from .drift import Stats, differ, generation, stat_files
from .handle import Index, Progress, open_indexes, say
from .manifest import (
    configured_embedder,
    expected_header,
    keyword_only,
    mismatch,
    servable,
    vectors_embedder,
)
from .store import CorruptIndex
from .update import (
    EMBEDDED,
    ReindexReport,
    exact_below,
    make_handle,
    moved_home,
    scan_files,
    sync,
    vector_home,
    vectors_at,
    write_manifest,
)
from .vectors import reload_chroma

if TYPE_CHECKING:  # pragma: no cover
    from ..embeddings import Embedder
    from ..store.repository import Repository

__all__ = [
    "ReindexReport",
    "ensure_fresh",
    "exact_below",
    "health",
    "open_for_write",
    "rebuild",
    "reindex",
    "sync",
    "update_locked",
    "vector_home",
]


# --- opening -----------------------------------------------------------------------------


def _open_existing(
    vault: Repository, header: Mapping[str, Any], old_ok: bool = False
) -> tuple[Index | None, str | None]:
    """The index on disk if it can serve ``header``; else None and why.

    ``old_ok``: an index built for other settings is opened too, to serve searches while
    its replacement is built (``Index.migrating`` says why). The manifest is read again
    after the database is opened: if the index was switched meanwhile, the new one is
    opened instead, so a handle never pairs one index's manifest with another's files.
    """
    root = vault.root
    for _ in range(3):
        stamp = store.manifest_stamp(root)
        try:
            manifest = store.read_manifest(root)
            if manifest is None:
                exists = (store.index_dir(root) / store.DB_NAME).exists()
                return None, "the search index is incomplete (no manifest)" if exists else ""
            why = mismatch(manifest, header)
            if why and not (old_ok and servable(root, manifest)):
                return None, why
            home = store.home_of(manifest)
            conn = store.connect(root, create=False, home=home)
        except CorruptIndex as exc:
            if store.manifest_stamp(root) != stamp:
                continue  # switched to a new index meanwhile: open that one
            return None, f"the search index is damaged ({exc})"
        if store.manifest_stamp(root) != stamp:
            conn.close()
            continue
        idx = make_handle(vault, conn, manifest, home)
        if why:
            migrate.serve_old(idx, why)
        elif manifest.get("dirty") or manifest.get("vectors", EMBEDDED) != vectors_at(idx):
            # Also when the vectors belong elsewhere now (index.url set or changed, another
            # branch's shared collection): the stored ones are copied there, never re-embedded.
            idx.vectors_stale = True
        return idx, None
    return None, "the search index kept changing while it was opened"


# --- entry points ------------------------------------------------------------------------


def _create(vault: Repository, embedder: Embedder) -> Index:
    store.remove_all(vault.root)
    conn = store.connect(vault.root, create=True, home="")
    manifest = dict(expected_header(vault, embedder))
    manifest["built"] = format_time(now_utc())
    idx = make_handle(vault, conn, manifest)
    if idx.url:
        # A shared collection is never dropped: other clones search it, and this rebuild
        # takes the vectors it already holds instead of embedding them again.
        store.ensure_hash_index(conn)
    return idx


def rebuild(
    vault: Repository, embedder: Embedder, reason: str, progress: Progress | None = None
) -> ReindexReport:
    """Build the index from scratch, in place (an index being built beside it is dropped).
    Call with the vault lock held."""
    open_indexes.forget(vault.root)
    if reason:
        say(f"{reason}; rebuilding the search index")
    try:
        idx = _create(vault, embedder)
    except CorruptIndex as exc:
        raise IndexError_(f"cannot create the search index: {exc}", INDEX_DIR) from None
    report = sync(vault, idx, embedder=embedder, progress=progress, rebuilt=True, reason=reason)
    idx.last_scan = time.monotonic()
    open_indexes.keep(idx)
    return report


def open_for_write(
    vault: Repository, embedder: Embedder, progress: Progress | None = None
) -> tuple[Index | None, str]:
    """An index that can be updated in place, or None and the reason it must be rebuilt."""
    idx = open_indexes.get(vault.root)
    header = expected_header(vault, embedder)
    if idx is not None and mismatch(idx.manifest, header) is None and not moved_home(vault, idx):
        if not idx.migrating:
            return idx, ""
        open_indexes.forget(vault.root)  # opened as an old index; the settings went back to it
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
    return open_indexes.keep(idx), ""


def reindex(
    vault: Repository, full: bool = False, progress: Progress | None = None
) -> ReindexReport:
    """Bring the index up to date with the files (``full``: rebuild it from scratch).

    Incremental by default: only new, changed, moved and deleted files are touched and
    unchanged text is never embedded again. Takes the vault lock (waits for it) -- except
    to build a new index for another embedder, which takes it only for the switch, so that
    writers and searches go on meanwhile (``full``: that build starts from zero).
    """
    report = _migrate_if_pending(vault, "wait", full, progress)
    if report is not None:
        return report
    with vault.locked():
        return update_locked(vault, full, progress)


def _migrate_if_pending(
    vault: Repository, vault_lock: str, full: bool, progress: Progress | None
) -> ReindexReport | None:
    """The build of a new index for another embedder, when one is due (else None)."""
    embedder = configured_embedder(vault)
    header = expected_header(vault, embedder)
    why = migrate.pending(vault, header)
    if not why:
        return None
    return migrate.run(
        vault, embedder, header, why, vault_lock=vault_lock, fresh=full, progress=progress
    )


def update_locked(
    vault: Repository, full: bool = False, progress: Progress | None = None
) -> ReindexReport:
    """:func:`reindex` for a caller that already holds the vault lock."""
    report = _migrate_if_pending(vault, "held", full, progress)
    if report is not None:
        return report
    embedder = configured_embedder(vault)
    header = expected_header(vault, embedder)
    if full:
        return rebuild(vault, embedder, "", progress)
    try:
        idx, why = open_for_write(vault, embedder, progress)
        if idx is None:
            return rebuild(vault, embedder, why or "", progress)
        migrate.drop_stale(vault, header)
        git = git_view(vault.root, idx.manifest)
        report = sync(vault, idx, embedder=embedder, progress=progress, git=git)
        idx.last_scan = time.monotonic()
        return report
    except (CorruptIndex, sqlite3.DatabaseError) as exc:
        store.raise_if_busy(exc)
        return rebuild(vault, embedder, f"the search index is damaged ({exc})", progress)


# Files checked for hand edits per search in a long-lived process without a file watcher
# (see DriftSweep): at most SWEEP_BUDGET, and SWEEP_RATE a second of the time since the last
# search, so that a burst of searches shares one pass instead of each walking a hundred files
# (docs/performance.md); never fewer than SWEEP_LEAST, so a small vault is checked whole.
SWEEP_BUDGET = 100
SWEEP_RATE = 2000.0
SWEEP_LEAST = 16


def ensure_fresh(vault: Repository) -> Index:
    """The index, brought up to date first when the files changed.

    Cheap when nothing changed: a look at the write generation and HEAD, a stat of every
    memory file on a handle's first search, and after that a few hundred files per search
    (hand edits; see :class:`DriftSweep`). Never waits for another writer: if
    the vault lock is taken, the index is used as it is (``Index.note`` says so).

    While a new index is built for another embedder, the old one is returned (and its
    query embedder with it: :func:`memvault.index.manifest.embedder_for`), and the search
    gives the build a slice of time.
    """
    return open_indexes.serve(_fresh(vault))


def _fresh(vault: Repository) -> Index:
    kept = open_indexes.searched(vault.root)
    if kept is not None and kept.superseded_at and kept.replaced_moments_ago():
        kept.note = None  # an old index just replaced: see handle.GRACE
        return kept
    embedder = configured_embedder(vault)
    header = expected_header(vault, embedder)
    idx = open_indexes.get(vault.root)
    if idx is not None and (moved_home(vault, idx) or _unwanted(idx, header)):
        open_indexes.forget(vault.root)
        idx = None
    if idx is None:
        idx, why = _open_existing(vault, header, old_ok=True)
        if idx is None or idx.vectors_stale:
            return _repair(vault, embedder, why, idx)
        open_indexes.keep(idx)
    if idx.migrating:
        return _serve_old(vault, idx, embedder, header)
    return _catch_up(vault, idx, embedder)


def _unwanted(idx: Index, header: Mapping[str, Any]) -> bool:
    """An open handle that no longer fits the settings (or fits them again, having been
    opened as an old index)."""
    why = mismatch(idx.manifest, header)
    return why != idx.migrating


def _serve_old(vault: Repository, idx: Index, embedder: Embedder, header: dict[str, Any]) -> Index:
    """The old index, kept up to date with its own embedder when it can be loaded, while
    the search gives the new one a slice of time (and switches to it once it is ready: the
    next search reads it)."""
    old = vectors_embedder(idx.manifest)
    if not keyword_only(old):
        idx = _catch_up(vault, idx, old)
        if not idx.migrating:
            return idx  # damaged, and rebuilt
    why = idx.migrating or ""
    try:
        outcome = migrate.advance(
            vault,
            embedder,
            header,
            why,
            budget=migrate.search_budget(vault),
            batch=migrate.SEARCH_BATCH,
            vault_lock="try",
        )
    except Exception as exc:  # noqa: BLE001 - the old index still answers
        say(f"building the new search index failed ({type(exc).__name__}: {exc}); it resumes later")
        outcome = migrate.Outcome(migrate.Shadow.read(vault.root))
    if outcome.index is not None:
        outcome.index.close()  # searches open it as the live index after the grace period
        idx.superseded_at = time.monotonic()
    idx.note = migrate.note(outcome, old)
    return idx


def _catch_up(vault: Repository, idx: Index, embedder: Embedder) -> Index:
    """``idx`` brought up to date with the files (with ``embedder``) if they moved on."""
    idx.note = None
    gen, head = generation(vault.root), read_head(vault.root)
    moved = gen != idx.seen_generation or head != idx.seen_head
    files: Stats | None = None
    git = None
    if moved or idx.last_scan == 0.0:
        # memvault or git changed files, or it is the handle's first search (a fresh
        # process must see edits made while it was not running): git names the files that
        # can differ from the index, so that only those are stat-ed and read.
        git = git_view(vault.root, idx.manifest, early_ok=True)
    drop_early(vault.root)  # a git status begun for this check answers nothing after it
    if git is not None and git.suspects is not None:
        drift = differ(vault.root, git.suspects, idx.recorded_for)
        idx.last_scan = time.monotonic()
        idx.sweep.reset()
    elif moved or idx.last_scan == 0.0:
        # memvault or git changed files, or git can't tell: compare every file.
        files = stat_files(vault.root)
        drift = files != idx.recorded_files()
        idx.last_scan = time.monotonic()
        idx.sweep.reset()
    else:
        drift = idx.sweep.step(idx.recorded_files(), SWEEP_BUDGET, SWEEP_RATE, SWEEP_LEAST)
    if not drift and not moved:
        return idx
    with try_lock(vault.root / LOCK_PATH) as got:
        if got and vault.recover_interrupted():
            # A writer died half-way: its files are gone again, so look at all of the disk.
            files, git, drift = None, None, True
        if not got:
            if drift:
                idx.note = "another memvault process is writing: searched the index as it was"
            else:  # nothing to catch up: remember that, the manifest can wait
                idx.seen_generation, idx.seen_head = gen, head
            return idx
        if drift:
            try:
                sync(vault, idx, embedder=embedder, files=files, git=git)
            except (CorruptIndex, sqlite3.DatabaseError) as exc:
                store.raise_if_busy(exc)
                wanted = configured_embedder(vault)
                rebuild(vault, wanted, f"the search index is damaged ({exc})")
                fresh = open_indexes.get(vault.root)
                assert fresh is not None
                return fresh
        else:
            write_manifest(vault, idx, embedder, dirty=idx.unpublished, git=git)
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
                fresh = open_indexes.get(vault.root)
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
    """Notes for ``memvault doctor``: how far behind the index is, why it can't be used,
    and how far a new index being built beside it got."""
    notes: list[str] = []
    try:
        header = expected_header(vault, configured_embedder(vault))
    except Exception as exc:  # noqa: BLE001 - doctor reports, never crashes
        return [f"embedder {vault.config.get('embedder')!r} is not available: {exc}"]
    try:
        manifest = store.read_manifest(vault.root)
        if manifest is None:
            return [
                "search index not built yet; the first search builds it (or run 'memvault reindex')"
            ]
        why = mismatch(manifest, header)
        if why:
            return migrate.health_notes(vault, manifest, why, header)
        home = store.home_of(manifest)
    except CorruptIndex as exc:
        return [
            f"search index is damaged ({exc}); the next search or 'memvault reindex' rebuilds it"
        ]
    if manifest.get("dirty"):
        notes.append("the vector store missed the end of an update; the next search reloads it")
    try:
        conn = store.connect(vault.root, create=False, home=home)
    except CorruptIndex as exc:
        return [f"search index is damaged ({exc}); the next search rebuilds it"]
    try:
        indexed = {p: s for p, s in conn.execute("SELECT path, sha FROM docs")}
    finally:
        conn.close()
    scan = scan_files(vault)
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
    return notes + migrate.leftover_notes(vault, header)
