"""One call run in a thread, its result (or error) collected later: how a new process
overlaps slow start-up work (loading the model, git's look at the files) with the rest, and
how a warm search embeds its query while its keyword leg runs.

The calls run on kept threads: a thread that finished a call waits for the next one rather
than ending. Starting a thread makes the caller wait until the new thread has run, which on
a busy machine can be a scheduler's time slice, on every search (``docs/performance.md``).
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar, cast

T = TypeVar("T")

IDLE_KEPT = 4  # idle threads kept for the next calls (more are started when all are busy)


class _Worker:
    """A daemon thread running the calls handed to it, one at a time."""

    def __init__(self) -> None:
        self._job: tuple[Background[object], Callable[..., object], tuple[object, ...]] | None
        self._job = None
        self._ready = threading.Lock()
        self._ready.acquire()  # released when a job is handed over
        threading.Thread(target=self._loop, daemon=True, name="memvault-worker").start()

    def hand(self, task: Background[T], fn: Callable[..., T], args: tuple[object, ...]) -> None:
        self._job = (cast("Background[object]", task), fn, args)
        self._ready.release()

    def _loop(self) -> None:
        while True:
            self._ready.acquire()
            job, self._job = self._job, None
            if job is None:  # pragma: no cover - only a hand-over releases the lock
                continue
            task, fn, args = job
            # A fresh context per call, as a new thread would have: no call sees another's
            # context variables (a debug trace, a shared keyword query).
            contextvars.Context().run(task._run, fn, args)
            with _pool_lock:  # idle again before the caller hears: its next call reuses it
                kept = len(_idle) < IDLE_KEPT
                if kept:
                    _idle.append(self)
            task._done.release()
            if not kept:
                return


_pool_lock = threading.Lock()
_idle: list[_Worker] = []


def _forget_workers() -> None:
    """In a forked child the parent's threads don't exist: start over."""
    global _pool_lock
    _pool_lock = threading.Lock()
    _idle.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)


class Background(Generic[T]):
    """Run ``fn(*args)`` in a thread; ``result()`` waits for it (and re-raises its error)."""

    def __init__(self, fn: Callable[..., T], *args: object) -> None:
        self._value: T | None = None
        self._error: BaseException | None = None
        self.ms = 0.0  # how long ``fn`` ran
        self._done = threading.Lock()
        self._done.acquire()  # released by the worker once ``fn`` has returned or raised
        with _pool_lock:
            worker = _idle.pop() if _idle else None
        (worker or _Worker()).hand(self, fn, args)

    def _run(self, fn: Callable[..., T], args: tuple[object, ...]) -> None:
        began = time.perf_counter()
        try:
            self._value = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            self._error = exc
        finally:
            self.ms = (time.perf_counter() - began) * 1000

    def result(self) -> T:
        with self._done:
            pass
        if self._error is not None:
            raise self._error
        return cast(T, self._value)  # set: the call ended without an error
