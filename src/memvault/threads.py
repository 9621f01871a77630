"""One call run in a thread, its result (or error) collected later: how a new process
overlaps slow start-up work (loading the model, git's look at the files) with the rest."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar, cast

T = TypeVar("T")


class Background(Generic[T]):
    """Run ``fn(*args)`` in a thread; ``result()`` waits for it (and re-raises its error)."""

    def __init__(self, fn: Callable[..., T], *args: object) -> None:
        self._value: T | None = None
        self._error: BaseException | None = None
        self.ms = 0.0  # how long ``fn`` ran
        self._thread = threading.Thread(target=self._run, args=(fn, args), daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[..., T], args: tuple[object, ...]) -> None:
        began = time.perf_counter()
        try:
            self._value = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            self._error = exc
        finally:
            self.ms = (time.perf_counter() - began) * 1000

    def result(self) -> T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return cast(T, self._value)  # set: the thread ended without an error
