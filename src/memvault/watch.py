"""``memvault watch``: keep the index in step with hand edits, debounced.

:class:`WatchHandler` holds all the logic and is driven by plain calls, so tests feed it
events directly: :meth:`WatchHandler.dispatch` takes watchdog-style events (from the
observer thread), :meth:`WatchHandler.poll` runs due work (from the main loop). The
loop in :func:`watch` is a thin wrapper around a watchdog ``Observer``.

* Events under the memory folders (:data:`memvault.paths.ALL_TREES`) count; ``.git/`` and
  ``.memvault/`` are never watched; hidden files, ``~`` backups and non-memory names are
  ignored, so an editor's temp file only counts when it is renamed onto a memory file.
* A change is indexed after ``debounce`` seconds of quiet (0.4 s), and never later than
  ``max_delay`` (1.5 s) after it happened, even while events keep coming.
* An invalid file is reported once (again only if its problem changes); the reindex
  drops its entry from the index. Errors never stop the loop.
* ``commit_after`` (``--commit``) commits hand edits after that many quiet seconds.
* Ctrl-C ends the watcher within about a second even in the middle of a large reindex:
  the work runs in a worker thread, the reindex stops at its next batch (its SQLite
  transaction rolls back; the index is left as a crash would leave it, and repaired on
  the next open), and watchdog's threads are not waited for beyond a bound.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import ALL_TREES
from .values import Record, field

if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver, ObservedWatch

    from . import HandEdits, ReindexReport, Vault

EVENT_TYPES = frozenset(("created", "modified", "deleted", "moved", "closed"))
DEFAULT_DEBOUNCE = 0.4
DEFAULT_MAX_DELAY = 1.5
DEFAULT_COMMIT_AFTER = 10.0
# After Ctrl-C: how long the worker may take to reach a stopping point, and how long
# watchdog's stop (which joins its threads without a timeout) is waited for.
STOP_GRACE = 1.0
OBSERVER_GRACE = 0.5


class WatchStopped(BaseException):
    """Raised inside a reindex (from its progress callback) once Ctrl-C stopped the watcher,
    so that the reindex rolls back at its next batch instead of running to its end. Not an
    ``Exception``: the handler's error handling must not retry it."""


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def relevant_path(root: Path, path: str | bytes | None, is_directory: bool = False) -> str | None:
    """The path relative to vault ``root`` if an event on ``path`` matters, else None."""
    if not path:
        return None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    try:
        rel = Path(os.path.abspath(path)).relative_to(root).as_posix()
    except ValueError:
        return None
    parts = rel.split("/")
    if not parts or parts[0] not in ALL_TREES:
        return None
    if any(p.startswith(".") for p in parts):
        return None  # .git/.memvault are outside the trees; this skips editor temp files
    if is_directory:
        return rel
    name = parts[-1]
    from . import is_memory_file

    if len(parts) < 2 or not is_memory_file(name) or name.endswith("~"):
        return None
    return rel


class WatchStats(Record):
    reindexes: int = 0
    commits: int = 0
    errors: int = 0
    reported: dict[str, str] = field(default_factory=dict)  # path -> problem text
    interrupted: bool = False  # stopped by Ctrl-C
    # Ctrl-C came during work that had not stopped after STOP_GRACE: the worker thread is
    # still running it (a process should end now; the index recovers as after a crash).
    abandoned: bool = False


class WatchHandler:
    """Debounces file events into reindexes (and optional commits) for one vault."""

    def __init__(
        self,
        vault: Vault,
        *,
        debounce: float = DEFAULT_DEBOUNCE,
        max_delay: float = DEFAULT_MAX_DELAY,
        commit_after: float | None = None,
        reindex: Callable[[], ReindexReport | None] | None = None,
        commit: Callable[[], HandEdits] | None = None,
        say: Callable[[str], None] = _stderr,
        emit: Callable[[dict[str, Any]], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        cancel: threading.Event | None = None,
    ) -> None:
        self.vault = vault
        self.root = Path(vault.root)
        self.debounce = debounce
        self.max_delay = max(max_delay, debounce)
        self.commit_after = commit_after
        self.cancel = cancel or threading.Event()  # set: the reindex in progress stops
        self._reindex = reindex or self._reindex_until_cancelled
        self._commit = commit or self._commit_hand_edits
        self.say = say
        self.emit = emit
        self.clock = clock
        self.stats = WatchStats()
        self._lock = threading.Lock()
        self._pending: set[str] = set()
        self._first: float | None = None  # when the oldest pending change happened
        self._last: float | None = None  # when the newest one happened
        self._uncommitted_since: float | None = None
        self._retry_at: float | None = None  # after a failed reindex: back off until then
        self._backoff = 0.0
        self._last_error: str | None = None

    # --- events (observer thread) ---------------------------------------------------

    def relevant(self, path: str | bytes | None, is_directory: bool = False) -> str | None:
        """The vault-relative path if an event on ``path`` matters, else None."""
        return relevant_path(self.root, path, is_directory)

    def dispatch(self, event: Any) -> None:
        """Watchdog's entry point (duck-typed: ``event_type``, ``src_path``, ``dest_path``)."""
        kind = getattr(event, "event_type", None)
        if kind not in EVENT_TYPES:
            return  # opened / closed_no_write: our own reads must not feed back
        is_dir = bool(getattr(event, "is_directory", False))
        if is_dir and kind == "modified":
            return  # a folder's mtime changes with every file event inside it
        paths = [self.relevant(event.src_path, is_dir)]
        if kind == "moved":
            paths.append(self.relevant(getattr(event, "dest_path", None), is_dir))
        hits = [p for p in paths if p]
        if hits:
            self.touch(*hits)

    def touch(self, *rels: str) -> None:
        """Record changed vault-relative paths (thread-safe)."""
        now = self.clock()
        with self._lock:
            self._pending.update(rels)
            if self._first is None:
                self._first = now
            self._last = now
            self._uncommitted_since = now

    # --- work (main loop) ---------------------------------------------------------

    @property
    def pending(self) -> set[str]:
        with self._lock:
            return set(self._pending)

    def due(self, now: float | None = None) -> bool:
        now = self.clock() if now is None else now
        with self._lock:
            if not self._pending or self._first is None or self._last is None:
                return False
            if self._retry_at is not None:
                return now >= self._retry_at
            return now - self._last >= self.debounce or now - self._first >= self.max_delay

    def poll(self, now: float | None = None) -> dict[str, Any] | None:
        """Do whatever is due: a reindex, then possibly a commit. Returns the reindex event."""
        now = self.clock() if now is None else now
        event = self.flush() if self.due(now) else None
        if self.commit_after is not None:
            with self._lock:
                since = self._uncommitted_since
                quiet = not self._pending and since is not None and now - since >= self.commit_after
            if quiet:
                self.commit_now()
        return event

    def flush(self, kind: str = "reindex") -> dict[str, Any] | None:
        """Reindex now for whatever is pending; report newly invalid files once."""
        with self._lock:
            paths = sorted(self._pending)
            self._pending.clear()
            self._first = self._last = None
        if not paths:
            return None
        started = time.monotonic()
        event: dict[str, Any] = {"event": kind, "paths": paths}
        try:
            report = self._reindex()
            from . import reindex_summary

            event["summary"] = reindex_summary(report)
            self.stats.reindexes += 1
            with self._lock:
                self._retry_at, self._backoff, self._last_error = None, 0.0, None
        except Exception as exc:  # noqa: BLE001 - the loop must survive anything
            self.stats.errors += 1
            event["event"] = "error"
            event["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
            now = self.clock()
            with self._lock:
                # Keep the changes and try again later, backing off (1, 2, 4 ... 30 s).
                self._pending.update(paths)
                self._first = self._first or now
                self._last = self._last or now
                self._backoff = min(max(1.0, self._backoff * 2), 30.0)
                self._retry_at = now + self._backoff
                repeated = self._last_error == event["error"]
                self._last_error = event["error"]
            if not repeated:  # one line per distinct failure, not one per retry
                self.say(f"memvault watch: reindex failed ({event['error']}); will keep retrying")
        event["invalid"] = self._report_invalid()
        event["ms"] = round((time.monotonic() - started) * 1000, 1)
        if self.emit:
            self.emit(event)
        return event

    def _reindex_until_cancelled(self) -> ReindexReport:
        def check(done: int, total: int) -> None:
            if self.cancel.is_set():
                raise WatchStopped

        return self.vault.reindex(progress=check)

    def _report_invalid(self) -> list[str]:
        """Report each invalid memory file once (and again only if its problem changes)."""
        try:
            invalid = self.vault.invalid_files()
        except Exception as exc:  # noqa: BLE001
            self.say(f"memvault watch: cannot scan the vault ({type(exc).__name__}: {exc})")
            return []
        current: dict[str, str] = {}
        for path, problems in invalid.items():
            current[path] = "; ".join(str(p) for p in problems) or f"{path}: invalid"
        newly = []
        for path, text in sorted(current.items()):
            if self.stats.reported.get(path) != text:
                self.say(f"memvault watch: {text} (not indexed until fixed)")
                newly.append(path)
        self.stats.reported = current
        return newly

    def catch_up(self) -> dict[str, Any] | None:
        """Index whatever changed while nobody was watching (called once at start)."""
        self.touch(".")
        with self._lock:
            self._uncommitted_since = None
        return self.flush("catch-up")

    def _commit_hand_edits(self) -> HandEdits:
        return self.vault.commit_hand_edits()

    def commit_now(self) -> HandEdits | None:
        """Commit hand edits (``--commit``), reporting but surviving any failure."""
        with self._lock:
            self._uncommitted_since = None
        try:
            result = self._commit()
        except Exception as exc:  # noqa: BLE001
            self.stats.errors += 1
            self.say(
                f"memvault watch: commit failed ({type(exc).__name__}: {exc}); "
                "will retry after the next change"
            )
            return None
        sha = result.commit
        if sha:
            self.stats.commits += 1
            if self.emit:
                self.emit({"event": "commit", **result.as_dict()})
            else:
                n = len(result.added) + len(result.removed)
                self.say(f"memvault watch: committed {n} hand-edited file(s) as {sha[:10]}")
        return result


def watch(
    vault: Vault,
    *,
    debounce: float = DEFAULT_DEBOUNCE,
    max_delay: float = DEFAULT_MAX_DELAY,
    commit_after: float | None = None,
    say: Callable[[str], None] = _stderr,
    emit: Callable[[dict[str, Any]], None] | None = None,
    stop: threading.Event | None = None,
    ready: Callable[[], None] | None = None,
    tick: float = 0.1,
) -> WatchStats:
    """Watch the vault until ``stop`` is set or Ctrl-C; returns what was done."""
    from watchdog.observers import Observer

    stop = stop or threading.Event()
    handler = WatchHandler(
        vault, debounce=debounce, max_delay=max_delay, commit_after=commit_after, say=say, emit=emit
    )
    cancel = handler.cancel
    observer = Observer()
    watches: dict[str, ObservedWatch] = {}

    def schedule_trees() -> None:
        for tree in ALL_TREES:
            folder = handler.root / tree
            if tree in watches and not folder.is_dir():
                observer.unschedule(watches.pop(tree))
                handler.touch(tree)
            elif tree not in watches and folder.is_dir() and not folder.is_symlink():
                # Duck-typed: the Observer only calls ``dispatch``.
                watches[tree] = observer.schedule(handler, str(folder), recursive=True)  # type: ignore[arg-type]
                if observer.is_alive():
                    handler.touch(tree)  # appeared while watching: index what it holds

    done = threading.Event()
    failure: list[BaseException] = []

    def work() -> None:
        try:
            handler.catch_up()
            if ready:
                ready()
            while not stop.is_set():
                stop.wait(tick)
                schedule_trees()
                handler.poll()
            if not cancel.is_set():
                handler.flush()  # stopped (SIGTERM, ``stop``): index what is pending first
        except WatchStopped:
            pass
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
            failure.append(exc)
        finally:
            done.set()

    schedule_trees()
    observer.start()
    # The main thread only waits, so Ctrl-C reaches it at once: a KeyboardInterrupt raised
    # in the thread that is embedding would wait for the batch in native code to end.
    worker = threading.Thread(target=work, name="memvault-watch", daemon=True)
    worker.start()
    try:
        while not done.wait(tick):
            pass
    except KeyboardInterrupt:
        cancel.set()
        stop.set()
        handler.stats.interrupted = True
        say("memvault watch: stopped")
        handler.stats.abandoned = not done.wait(STOP_GRACE)
    finally:
        stop_observer(observer)
    if failure:
        raise failure[0]
    return handler.stats


def stop_observer(observer: BaseObserver, grace: float = OBSERVER_GRACE) -> None:
    """Stop a watchdog observer, waiting at most ``grace`` seconds: its ``stop`` joins the
    emitter threads without a timeout (busy after a burst of events), and its threads are
    daemons, so a process that is ending need not wait for them."""
    stopper = threading.Thread(target=observer.stop, name="memvault-watch-stop", daemon=True)
    stopper.start()
    stopper.join(grace)
    if not stopper.is_alive():
        observer.join(grace)


class ChangeFeed:
    """File-system events of the memory trees, for a long-running process that searches.

    The MCP server starts one (see :func:`memvault.index.drift.set_change_feed`): a
    search then compares only the files reported since the last one with the index,
    instead of statting its way through the vault, and still sees a hand edit on the very
    next call. Anything it can't account for file by file (a folder moved or removed, a
    tree created, the kernel's event queue overflowing) asks for one full comparison.
    If watching fails to start, searches fall back to their incremental sweep.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.started = float("inf")  # time.monotonic() once watching
        self._abs_root = Path(os.path.abspath(root))  # event paths are absolute
        self._lock = threading.Lock()
        self._paths: set[str] = set()
        self._everything = False
        self._observer: BaseObserver | None = None
        self._watches: dict[str, ObservedWatch] = {}
        self._stale_trees: set[str] = set()  # created, removed or replaced since scheduled

    # --- lifecycle ---------------------------------------------------------------

    def start(self) -> bool:
        """Begin watching; False (and no feed) if the platform or its limits don't allow it."""
        try:
            from watchdog.observers import Observer

            observer = Observer()
            observer.schedule(_Dispatch(self._on_root), str(self.root), recursive=False)  # type: ignore[arg-type]
            self._observer = observer
            self._schedule_trees()
            observer.start()
        except Exception as exc:  # noqa: BLE001 - e.g. out of inotify watches
            _stderr(
                f"memvault: not watching {self.root} ({type(exc).__name__}: {exc}); "
                "hand edits are found by a slower sweep"
            )
            self.stop()
            return False
        _overflow_listeners.add(self)
        _listen_for_overflow()
        self.started = time.monotonic()
        return True

    def stop(self) -> None:
        _overflow_listeners.discard(self)
        observer, self._observer = self._observer, None
        if observer is not None:
            try:
                observer.stop()
                if observer.is_alive():
                    observer.join(timeout=5)
            except Exception:  # noqa: BLE001 - stopping must not fail
                pass

    def alive(self) -> bool:
        observer = self._observer
        return observer is not None and observer.is_alive()

    # --- what changed ---------------------------------------------------------------

    def take(self) -> tuple[set[str], bool]:
        """Memory files changed since the last call, and whether to compare every file."""
        if self._stale_trees:
            with self._lock:
                stale, self._stale_trees = self._stale_trees, set()
            with contextlib.suppress(Exception):  # the full check below still runs
                self._schedule_trees(stale)
        with self._lock:
            paths, everything = self._paths, self._everything
            self._paths, self._everything = set(), False
        return paths, everything

    def everything(self) -> None:
        with self._lock:
            self._everything = True

    def _schedule_trees(self, stale: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        """Watch every tree there is; ``stale`` ones are watched afresh (a tree removed and
        made again is another folder: the old watch went with the old one)."""
        assert self._observer is not None
        for tree in ALL_TREES:
            folder = self.root / tree
            present = folder.is_dir() and not folder.is_symlink()
            if tree in self._watches and (tree in stale or not present):
                with contextlib.suppress(Exception):  # its watch is gone with the folder
                    self._observer.unschedule(self._watches.pop(tree))
            if tree not in self._watches and present:
                self._watches[tree] = self._observer.schedule(
                    _Dispatch(self._on_tree),  # type: ignore[arg-type]  # duck-typed handler
                    str(folder),
                    recursive=True,
                )

    def _on_root(self, event: Any) -> None:
        """A direct child of the vault changed: a tree appearing, going or being replaced."""
        name = os.path.basename(os.fsdecode(getattr(event, "src_path", "") or ""))
        dest = os.path.basename(os.fsdecode(getattr(event, "dest_path", "") or ""))
        trees = {n for n in (name, dest) if n in ALL_TREES}
        if trees:
            with self._lock:
                self._stale_trees |= trees
                self._everything = True

    def _on_tree(self, event: Any) -> None:
        kind = getattr(event, "event_type", None)
        if kind not in EVENT_TYPES:
            return
        if getattr(event, "is_directory", False):
            if kind != "modified":  # a folder's own mtime changes with every file in it
                self.everything()
            return
        rels = [relevant_path(self._abs_root, event.src_path)]
        if kind == "moved":
            rels.append(relevant_path(self._abs_root, getattr(event, "dest_path", None)))
        hits = [r for r in rels if r]
        if hits:
            with self._lock:
                self._paths.update(hits)


def feed_searches(root: Path) -> ChangeFeed | None:
    """Watch ``root`` and tell this process's searches what changed (None: can't watch)."""
    from . import set_change_feed

    feed = ChangeFeed(root)
    if not feed.start():
        return None
    set_change_feed(root, feed)
    return feed


def stop_feed(feed: ChangeFeed | None) -> None:
    if feed is not None:
        from . import change_feed, set_change_feed

        if change_feed(feed.root) is feed:
            set_change_feed(feed.root, None)
        feed.stop()


class _Dispatch:
    """A watchdog handler (duck-typed: the observer only calls ``dispatch``)."""

    def __init__(self, fn: Callable[[Any], None]) -> None:
        self.dispatch = fn


# watchdog reports a kernel queue overflow (events lost) only as a log record.
_overflow_listeners: set[ChangeFeed] = set()
_overflow_hooked = False


def _listen_for_overflow() -> None:
    global _overflow_hooked
    if _overflow_hooked:
        return
    import logging

    class OverflowLog(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "overflow" in str(record.msg).lower():
                for feed in list(_overflow_listeners):
                    feed.everything()

    logging.getLogger("watchdog.observers").addHandler(OverflowLog(logging.WARNING))
    _overflow_hooked = True


def json_line(event: dict[str, Any]) -> None:
    """``--json``: one object per line on stdout."""
    sys.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
    sys.stdout.flush()
