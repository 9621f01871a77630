"""Browsing (:meth:`memvault.Vault.browse`, the inspector's list page): a snapshot of every
memory the reader may see, as
small rows, kept in step with the vault without reading it whole on every request.

A snapshot is built from the catalog (:meth:`Repository.scan`: parsed files cached in
SQLite, so only files that changed are parsed again) and rows are reused by file sha, so a
rebuild after one write decodes one memory. It is rebuilt when memvault or git changed
the files (the write counter or HEAD moved: a cheap stat and one small read per request),
and a background sweep rescans every few seconds for hand edits. A page is then a filter
over a list in memory, with facet counts, sorted orders computed once per snapshot.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .index.drift import Stats, generation, stat_files
from .store.git.ops import read_head
from .values import Record

if TYPE_CHECKING:  # pragma: no cover
    from .core import Core
    from .memory import Memory

# Facets of the browse page: the query parameter, and how a row's value is read.
FACETS = ("type", "category", "channel", "scope", "tag", "status")
SORTS = ("date", "relevance", "updated")
PAGE_SIZE = 50
LIVE = ("active", "disputed")  # shown when no status is chosen (as ``memvault list`` does)


class Row(Record, frozen=True):
    """What the list shows of one memory, and what its filters read."""

    id: str
    path: str
    type: str
    category: str
    topic: str  # type/category: the "category" facet (a category name means little alone)
    channel: str
    scope: str
    agent: str
    tags: tuple[str, ...]
    status: str
    created: str
    updated: str
    title: str
    summary: str
    relevance: float

    def value(self, facet: str) -> str | tuple[str, ...]:
        if facet == "tag":
            return self.tags
        if facet == "category":
            return self.topic
        return str(getattr(self, facet))


def row_of(memory: Memory, now: dt.datetime, rates: Any, records: Any = None) -> Row:
    """``records``: the vault's usage records (a memory's last read decays from there)."""
    from .consolidate.decay import last_use, relevance

    summary = " ".join(memory.content.split())[:160]
    return Row(
        id=memory.id,
        path=memory.path,
        type=memory.type,
        category=memory.category,
        topic=f"{memory.type}/{memory.category}",
        channel=str(memory.get("channel", "")),
        scope=memory.scope,
        agent=str(memory.agent or ""),
        tags=tuple(str(t) for t in memory.tags),
        status=memory.status,
        created=str(memory.get("created", "")),
        updated=str(memory.get("updated", "") or memory.get("created", "")),
        title=memory.title,
        summary=summary,
        relevance=round(
            relevance(memory, now, rates[0], rates[1], last_use(memory, records or {})).value, 3
        ),
    )


class Snapshot:
    """Every visible memory as a row, with its facets as columns of codes (numpy), so that a
    page -- filter, facet counts, sort, slice -- is a handful of array operations."""

    def select(
        self, filters: Mapping[str, str], sort: str, page: int, size: int = PAGE_SIZE
    ) -> Page:
        """One page of rows: see :func:`select`."""
        return select(self, filters, sort, page, size)

    def __init__(self, rows: list[Row], shas: dict[str, tuple[str, Row | None]]) -> None:
        import numpy as np

        def column(values: list[Any]) -> Any:
            return np.array(values, dtype=str) if values else np.array([], dtype=str)

        # rows newest first (created, then id, descending): the "date" order is the rows'
        created = column([r.created for r in rows])
        ids = column([r.id for r in rows])
        newest = np.lexsort((ids, created))[::-1]
        self.rows = [rows[i] for i in newest]
        self.shas = shas  # path -> (sha, its row; None: a memory this identity may not see)
        self.by_id = {r.id: r for r in self.rows}
        self.built = time.monotonic()
        self.values: dict[str, dict[str, int]] = {}
        self.codes: dict[str, Any] = {}
        for facet in FACETS:
            if facet == "tag":
                continue
            attribute = "topic" if facet == "category" else facet
            found, codes = np.unique(
                column([getattr(r, attribute) for r in self.rows]), return_inverse=True
            )
            self.values[facet] = {str(v): i for i, v in enumerate(found)}
            self.codes[facet] = codes.astype(np.int32).reshape(-1)
        tags: dict[str, int] = {}
        pairs = [
            (i, tags.setdefault(t, len(tags))) for i, r in enumerate(self.rows) for t in r.tags
        ]
        self.values["tag"] = tags
        self.tag_rows = np.array([p[0] for p in pairs], dtype=np.int32)
        self.tag_codes = np.array([p[1] for p in pairs], dtype=np.int32)
        ids, created = ids[newest], created[newest]
        updated = column([r.updated for r in self.rows])
        relevance = np.array([r.relevance for r in self.rows], dtype=float)
        self.orders = {
            "date": np.arange(len(self.rows), dtype=np.int32),
            "updated": np.lexsort((ids, updated))[::-1].astype(np.int32),
            "relevance": np.lexsort((created, relevance))[::-1].astype(np.int32),
        }

    def mask(self, facet: str, wanted: str) -> Any:
        """Which rows a filter keeps (None: all of them)."""
        import numpy as np

        values = self.values[facet]
        if facet == "status":
            if wanted == "any":
                return None
            keep = [values[v] for v in ((wanted,) if wanted else LIVE) if v in values]
            return np.isin(self.codes[facet], keep)
        if not wanted:
            return None
        code = values.get(wanted, -1)
        if facet != "tag":
            return self.codes[facet] == code
        out = np.zeros(len(self.rows), dtype=bool)
        out[self.tag_rows[self.tag_codes == code]] = True
        return out

    def count(self, facet: str, keep: Any) -> list[tuple[str, int]]:
        """How many of the rows in ``keep`` (None: all) have each value of ``facet``."""
        import numpy as np

        values = self.values[facet]
        if facet == "tag":
            codes = self.tag_codes if keep is None else self.tag_codes[keep[self.tag_rows]]
        else:
            codes = self.codes[facet] if keep is None else self.codes[facet][keep]
        counts = np.bincount(codes, minlength=len(values))
        names = list(values)
        return [(names[i], int(c)) for i, c in enumerate(counts) if c and names[i]]


class Page(Record, frozen=True):
    """One page of the list: its rows, the total that matched, and the facet counts."""

    rows: Sequence[Row]
    total: int
    page: int
    pages: int
    facets: Mapping[str, list[tuple[str, int]]]


class Listing:
    """The snapshot of one vault for one identity, rebuilt when the files move on.

    After a write by memvault (the write counter moved; the writer already updated the
    catalog) only the files whose sha changed are read again; when git alone moved HEAD
    (a pull, a checkout) the catalog is brought up to date with a full scan first. Hand
    edits move neither: the sweep stats every file every ``rescan_seconds`` and rescans
    when one changed.
    """

    facets = FACETS  # the filters a page takes
    sorts = SORTS  # the orders a page comes in

    def __init__(self, vault: Core, rescan_seconds: float = 10.0) -> None:
        self.vault = vault
        self.rescan_seconds = rescan_seconds
        self._lock = threading.Lock()
        self._snapshot: Snapshot | None = None
        self._key: tuple[int, str | None] | None = None
        self._stats: Stats | None = None
        self._stop = threading.Event()
        self._sweeper: threading.Thread | None = None
        self._usage: Any = None  # the usage records the rows were built with

    def _current_key(self) -> tuple[int, str | None]:
        return generation(self.vault.root), read_head(self.vault.root)

    def snapshot(self) -> Snapshot:
        """The rows as the files are now (as of memvault's and git's last write)."""
        key = self._current_key()
        snap = self._snapshot
        if snap is not None and key == self._key:
            return snap
        with self._lock:
            if self._snapshot is None or self._key != key:
                full = self._key is None or self._key[0] == key[0]  # git moved HEAD, not us
                self._rebuild(key, full)
            assert self._snapshot is not None
            return self._snapshot

    def _rebuild(self, key: tuple[int, str | None], full: bool) -> None:
        """Rows from the catalog; a file whose sha did not change keeps its row (unless the
        usage records changed)."""
        from .consolidate.decay import config_rates
        from .memory import now_utc
        from .store.usage import load as load_usage

        catalog = self.vault.catalog
        entries: dict[str, Any] = {}
        if full:
            entries = dict(self.vault.scan().entries)
            found = {p: e.sha for p, e in entries.items() if e.valid}
        else:
            catalog.quick_sync()  # files created or removed by hand since the last look
            found = catalog.shas()
        old = self._snapshot.shas if self._snapshot is not None else {}
        now, rates = now_utc(), config_rates(self.vault.config)
        records = load_usage(self.vault.root)
        same_usage = records is self._usage  # else a consolidation rewrote it: rows decay anew
        self._usage = records
        shas: dict[str, tuple[str, Row | None]] = {}
        can_see = self.vault.identity.can_see
        for path, sha in found.items():
            kept = old.get(path)
            if sha and kept is not None and kept[0] == sha and same_usage:
                shas[path] = kept
                continue
            entry = entries.get(path) or catalog.entry(path)
            memory = entry.memory if entry is not None and entry.valid else None
            if memory is not None:
                row = row_of(memory, now, rates, records) if can_see(memory) else None
                shas[path] = (entry.sha if entry is not None else sha, row)
        self._snapshot = Snapshot([r for _, r in shas.values() if r is not None], shas)
        self._key = key

    def refresh(self) -> None:
        """Rescan the files now (hand edits in place move neither the counter nor HEAD)."""
        with self._lock:
            self._rebuild(self._current_key(), full=True)

    def sweep_once(self) -> bool:
        """Stat every file; rescan when one changed since the last sweep. True: it did."""
        stats = stat_files(self.vault.root)
        changed = self._stats is not None and stats != self._stats
        self._stats = stats
        if changed:
            self.refresh()
        return changed

    def start_sweep(self) -> None:
        """Build the first snapshot now, then sweep every ``rescan_seconds`` (a daemon)."""

        def sweep() -> None:
            try:
                self.snapshot()
            except Exception:  # noqa: BLE001 - the first request builds it again, and says why
                pass
            while not self._stop.wait(self.rescan_seconds):
                try:
                    self.sweep_once()
                except Exception:  # noqa: BLE001 - retried next time; requests still rebuild
                    pass

        self._sweeper = threading.Thread(target=sweep, name="memvault-ui-sweep", daemon=True)
        self._sweeper.start()

    def stop(self) -> None:
        self._stop.set()


def select(
    snap: Snapshot, filters: Mapping[str, str], sort: str, page: int, size: int = PAGE_SIZE
) -> Page:
    """The rows matching every filter, in ``sort`` order, page ``page`` (from 1); each facet
    counted over the rows matching every *other* filter (so a count says what a click gives)."""
    import numpy as np

    masks = {f: snap.mask(f, filters.get(f, "")) for f in FACETS}
    every = [m for m in masks.values() if m is not None]
    keep = np.logical_and.reduce(every) if every else np.ones(len(snap.rows), dtype=bool)
    facets: dict[str, list[tuple[str, int]]] = {}
    for facet in FACETS:
        others = [m for f, m in masks.items() if m is not None and f != facet]
        counted = snap.count(facet, np.logical_and.reduce(others) if others else None)
        facets[facet] = _ordered(facet, counted)
    order = snap.orders[sort]
    chosen = order[keep[order]]
    pages = max(1, -(-len(chosen) // size))
    page = min(max(1, page), pages)
    rows = [snap.rows[i] for i in chosen[(page - 1) * size : page * size]]
    return Page(rows, len(chosen), page, pages, facets)


def _ordered(facet: str, counted: list[tuple[str, int]], top: int = 40) -> list[tuple[str, int]]:
    if facet in ("tag", "channel", "category"):
        return sorted(counted, key=lambda vc: (-vc[1], vc[0]))[:top]
    return sorted(counted)
