"""memvault.threads.Background: a call run beside the caller on a kept thread."""

from __future__ import annotations

import contextvars
import threading

import pytest

from memvault.threads import Background

marker: contextvars.ContextVar[str] = contextvars.ContextVar("marker", default="unset")


def test_the_result_and_the_error_come_back() -> None:
    assert Background(lambda a, b: a + b, 2, 3).result() == 5
    task = Background(lambda: 1 // 0)
    with pytest.raises(ZeroDivisionError):
        task.result()
    with pytest.raises(ZeroDivisionError):
        task.result()  # asked again: the same error, not a hang
    assert task.ms >= 0.0


def test_calls_one_after_another_reuse_one_thread() -> None:
    first = Background(threading.current_thread).result()
    assert Background(threading.current_thread).result() is first
    assert first is not threading.current_thread()


def test_calls_at_once_run_on_threads_of_their_own() -> None:
    gate = threading.Event()
    blocked = Background(gate.wait, 10)
    other = Background(threading.get_ident)
    assert other.result() != threading.get_ident()  # not queued behind the blocked call
    gate.set()
    assert blocked.result() is True


def test_each_call_starts_with_a_fresh_context() -> None:
    def set_and_read() -> str:
        before = marker.get()
        marker.set("set by a call")
        return before

    marker.set("the caller's")
    assert Background(set_and_read).result() == "unset"
    assert Background(set_and_read).result() == "unset"  # the kept thread forgot the last call's
