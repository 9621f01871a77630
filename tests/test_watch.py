"""``memvault watch``: the handler is driven directly; one test runs a real Observer."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from memvault import Vault
from memvault.watch import WatchHandler, watch

from helpers import BIN, ctrl_c_able, git, write

FACT = "---\nid: {id}\ntype: semantic\ncategory: facts\n---\n\n{body}\n"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def ev(kind: str, src: Path | str, dest: Path | str | None = None, is_dir: bool = False) -> Any:
    return SimpleNamespace(
        event_type=kind, src_path=str(src), dest_path=str(dest or ""), is_directory=is_dir
    )


@pytest.fixture
def handler(vault: Vault) -> tuple[WatchHandler, list[int], list[str], Clock]:
    calls: list[int] = []
    said: list[str] = []
    clock = Clock()
    h = WatchHandler(vault, reindex=lambda: calls.append(1), say=said.append, clock=clock)
    return h, calls, said, clock


def test_relevant_paths(vault: Vault, handler) -> None:  # type: ignore[no-untyped-def]
    h = handler[0]
    r = vault.root
    assert h.relevant(r / "semantic/facts/x.md") == "semantic/facts/x.md"
    assert h.relevant(r / "inbox/semantic/facts/x.yaml") == "inbox/semantic/facts/x.yaml"
    assert h.relevant(r / "episodic/2026/01", is_directory=True) == "episodic/2026/01"
    for ignored in (
        ".git/index",
        ".memvault/index/search.sqlite",
        "semantic/facts/.x.md.swp",
        "semantic/facts/x.md~",
        "semantic/facts/.#x.md",
        "semantic/facts/4913",
        "README.md",
        "semantic/README.md",
        "notes/x.md",
        "semantic/facts/.hidden/x.md",
    ):
        assert h.relevant(r / ignored) is None, ignored
    assert h.relevant("/elsewhere/semantic/x.md") is None


def test_debounce_collapses_a_burst_into_one_reindex(vault: Vault, handler) -> None:  # type: ignore[no-untyped-def]
    h, calls, _, clock = handler
    target = vault.root / "semantic/facts/a.md"
    for _ in range(3):
        h.dispatch(ev("modified", target))
        clock.now += 0.1
    assert h.poll() is None and calls == []  # 0.1 s after the last event: still settling
    clock.now += 0.35
    event = h.poll()
    assert calls == [1] and event is not None and event["paths"] == ["semantic/facts/a.md"]
    clock.now += 5
    assert h.poll() is None and calls == [1]


def test_a_steady_stream_is_still_indexed_within_max_delay(vault: Vault, handler) -> None:  # type: ignore[no-untyped-def]
    h, calls, _, clock = handler
    start = clock.now
    while not calls:
        h.dispatch(ev("modified", vault.root / "semantic/facts/busy.md"))
        clock.now += 0.2
        h.poll()
        assert clock.now - start < 2.0
    assert clock.now - start <= h.max_delay + 0.2


def test_temp_file_then_rename_counts_the_destination(vault: Vault, handler) -> None:  # type: ignore[no-untyped-def]
    h, calls, _, clock = handler
    folder = vault.root / "semantic/facts"
    h.dispatch(ev("created", folder / ".doc.md.tmp123"))
    h.dispatch(ev("modified", folder / ".doc.md.tmp123"))
    assert h.pending == set()
    h.dispatch(ev("moved", folder / ".doc.md.tmp123", folder / "doc.md"))
    assert h.pending == {"semantic/facts/doc.md"}
    h.dispatch(ev("moved", folder / "doc.md", vault.root / "archive/semantic/facts/doc.md"))
    assert h.pending == {"semantic/facts/doc.md", "archive/semantic/facts/doc.md"}


def test_reads_and_folder_mtimes_do_not_trigger(vault: Vault, handler) -> None:  # type: ignore[no-untyped-def]
    h = handler[0]
    f = vault.root / "semantic/facts/a.md"
    h.dispatch(ev("opened", f))
    h.dispatch(ev("closed_no_write", f))
    h.dispatch(ev("modified", vault.root / "semantic/facts", is_dir=True))
    assert h.pending == set()
    h.dispatch(ev("deleted", vault.root / "semantic/decisions", is_dir=True))
    assert h.pending == {"semantic/decisions"}


def test_errors_never_stop_the_handler_and_changes_are_retried(vault: Vault) -> None:
    said: list[str] = []
    clock = Clock()
    attempts: list[int] = []

    def flaky() -> None:
        attempts.append(1)
        if len(attempts) <= 3:
            raise RuntimeError("index exploded")

    h = WatchHandler(vault, reindex=flaky, say=said.append, clock=clock)
    h.touch("semantic/facts/a.md")
    clock.now += 1
    event = h.poll()
    assert event is not None and event["event"] == "error" and "index exploded" in event["error"]
    assert h.pending == {"semantic/facts/a.md"}  # kept for a retry, no new event needed
    clock.now += 0.5
    assert h.poll() is None  # backing off (1 s)
    clock.now += 0.6
    assert h.poll()["event"] == "error"  # type: ignore[index]  # second try, 2 s back-off next
    clock.now += 1.5
    assert h.poll() is None
    clock.now += 0.6
    assert h.poll()["event"] == "error"  # type: ignore[index]
    clock.now += 4.1
    event = h.poll()
    assert (
        event is not None
        and event["event"] == "reindex"
        and event["paths"] == ["semantic/facts/a.md"]
    )
    assert len(attempts) == 4 and h.stats.errors == 3
    assert len(said) == 1 and "will keep retrying" in said[0]  # one line, not one per retry
    assert h.pending == set()
    h.touch("semantic/facts/b.md")
    clock.now += 0.5
    assert h.poll()["event"] == "reindex"  # type: ignore[index]  # back-off was reset


def test_invalid_file_is_reported_once_until_it_changes(vault: Vault, handler) -> None:  # type: ignore[no-untyped-def]
    h, _, said, clock = handler
    bad = write(
        vault.root,
        "semantic/facts/bad.md",
        "---\nid: bad\ntype: semantic\nimportance: 9\n---\n\nx\n",
    )
    for _ in range(3):
        h.dispatch(ev("modified", bad))
        clock.now += 1
        h.poll()
    problems = [s for s in said if "bad.md" in s]
    assert len(problems) == 1 and "importance: expected 1-5, got 9" in problems[0]
    bad.write_text("---\nid: bad\ntype: semantic\n---\n\nfixed\n")
    h.dispatch(ev("modified", bad))
    clock.now += 1
    h.poll()
    bad.write_text("---\nid: bad\ntype: semantic\nimportance: 9\n---\n\nbroken again\n")
    h.dispatch(ev("modified", bad))
    clock.now += 1
    h.poll()
    assert len([s for s in said if "bad.md" in s]) == 2


def test_commit_after_a_quiet_period(vault: Vault) -> None:
    clock = Clock()
    said: list[str] = []
    events: list[dict[str, Any]] = []
    h = WatchHandler(
        vault,
        reindex=lambda: None,
        commit_after=10,
        say=said.append,
        emit=events.append,
        clock=clock,
    )
    rel = "semantic/facts/by-hand.md"
    write(vault.root, rel, FACT.format(id="by-hand", body="Edited in an editor."))
    write(vault.root, "semantic/facts/broken.md", "---\nid: Not Valid\ntype: semantic\n---\n\nx\n")
    h.dispatch(ev("created", vault.root / rel))
    clock.now += 1
    h.poll()
    clock.now += 5
    h.poll()
    assert git(vault.root, "log", "-1", "--format=%s").strip() == "memvault: initialise vault"
    clock.now += 5
    h.poll()
    assert (
        git(vault.root, "log", "-1", "--format=%s").strip() == "memvault: commit hand edits (watch)"
    )
    assert (
        git(vault.root, "log", "-1", "--format=%an").strip() == "memvault"
    )  # the vault's identity
    assert git(vault.root, "show", "--name-only", "--format=", "HEAD").split() == [rel]
    assert [e["event"] for e in events] == ["reindex", "commit"]
    clock.now += 60
    h.poll()
    assert h.stats.commits == 1  # nothing new: no second commit


# --- a real Observer --------------------------------------------------------------------------


def indexed(root: Path) -> dict[str, str]:
    db = root / ".memvault" / "index" / "search.sqlite"
    if not db.exists():
        return {}
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return dict(conn.execute("SELECT path, sha FROM docs").fetchall())
    except sqlite3.Error:
        return {}
    finally:
        conn.close()


def sha_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def seen_within(root: Path, check, limit: float = 2.0) -> float:  # type: ignore[no-untyped-def]
    """Seconds until ``check(indexed)`` holds; fails after ``limit``."""
    start = time.monotonic()
    while time.monotonic() - start < limit + 3:  # a little slack to report the real figure
        if check(indexed(root)):
            return time.monotonic() - start
        time.sleep(0.05)
    pytest.fail(f"not indexed within {limit} s")


@pytest.mark.slow
def test_real_observer_sees_edits_creates_moves_deletes_and_renames(vault: Vault) -> None:
    root = vault.root
    keep = write(root, "semantic/facts/keep.md", FACT.format(id="keep", body="Kept all along."))
    vault.reindex()
    stop = threading.Event()
    ready = threading.Event()
    said: list[str] = []
    thread = threading.Thread(
        target=watch,
        kwargs={"vault": Vault.open(root), "stop": stop, "ready": ready.set, "say": said.append},
    )
    thread.start()
    try:
        assert ready.wait(30)
        timings = {}
        # create
        new = write(
            root, "semantic/facts/zebra.md", FACT.format(id="zebra", body="Zebras have stripes.")
        )
        timings["create"] = seen_within(
            root, lambda d: d.get("semantic/facts/zebra.md") == sha_of(new)
        )
        # edit
        new.write_text(FACT.format(id="zebra", body="Zebras have black and white stripes."))
        timings["edit"] = seen_within(
            root, lambda d: d.get("semantic/facts/zebra.md") == sha_of(new)
        )
        # move
        (root / "semantic/decisions").mkdir(exist_ok=True)
        moved = root / "semantic/decisions/zebra.md"
        new.rename(moved)
        timings["move"] = seen_within(
            root,
            lambda d: (
                "semantic/facts/zebra.md" not in d
                and d.get("semantic/decisions/zebra.md") == sha_of(moved)
            ),
        )
        # temp file + rename (how many editors save)
        tmp = root / "semantic/facts/.keep.md.swp-tmp"
        tmp.write_text(FACT.format(id="keep", body="Kept, and saved through a temp file."))
        os.replace(tmp, keep)
        timings["rename-save"] = seen_within(
            root, lambda d: d.get("semantic/facts/keep.md") == sha_of(keep)
        )
        # delete
        moved.unlink()
        timings["delete"] = seen_within(root, lambda d: "semantic/decisions/zebra.md" not in d)
        # an invalid file is reported, never crashes the loop, and is not indexed
        bad = write(
            root,
            "semantic/facts/bad.md",
            "---\nid: bad\ntype: semantic\nimportance: 99\n---\n\nx\n",
        )
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and not any("bad.md" in s for s in said):
            time.sleep(0.05)
        assert [s for s in said if "bad.md" in s][:1], said
        # It is reported after the reindex that saw it: that reindex succeeded, left it
        # out and kept the good file, and the loop goes on.
        assert not [s for s in said if "reindex failed" in s], said
        after_bad = indexed(root)
        assert "semantic/facts/bad.md" not in after_bad
        assert after_bad.get("semantic/facts/keep.md") == sha_of(keep), after_bad
        assert thread.is_alive()
        bad.write_text("---\nid: bad\ntype: semantic\nimportance: 2\n---\n\nNow valid.\n")
        timings["fixed"] = seen_within(
            root, lambda d: d.get("semantic/facts/bad.md") == sha_of(bad)
        )
        # a valid, indexed file turned invalid: its last good entry is dropped
        keep.write_text("---\nid: keep\ntype: semantic\nscope: nowhere\n---\n\nBroken.\n")
        timings["broken"] = seen_within(root, lambda d: "semantic/facts/keep.md" not in d)
        keep.write_text(FACT.format(id="keep", body="Kept, and saved through a temp file."))
        timings["repaired"] = seen_within(
            root, lambda d: d.get("semantic/facts/keep.md") == sha_of(keep)
        )
        assert thread.is_alive()
        assert all(t < 2.0 for t in timings.values()), timings
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()
    # And search (through the public API) agrees with the index the watcher kept.
    assert "keep" in vault.search("saved through a temp file").ids
    assert "zebra" not in vault.search("zebras stripes").ids


def _read_line(stream: Any, deadline: float) -> str:
    import select

    # poll, not select: a long test run holds over 1,024 descriptors (Chroma keeps its
    # files open per vault), beyond which select() refuses a descriptor.
    poller = select.poll()
    poller.register(stream, select.POLLIN)
    while time.monotonic() < deadline:
        if poller.poll(200):
            return str(stream.readline())
    return ""


# Ctrl-C to exit: the watcher waits at most STOP_GRACE + OBSERVER_GRACE (1.5 s) and then ends
# the process without the interpreter's teardown; twice that leaves room for a loaded CI
# machine, and is far below the 20 s a hang used to run into (bench/watch_sigint.py times it).
EXIT_BOUND = 3.0


@pytest.mark.slow
def test_cli_watch_json_then_ctrl_c_exits_cleanly(vault: Vault) -> None:
    """Ctrl-C in the middle of reindexing a large change: the watcher exits within
    EXIT_BOUND seconds, cleanly, and the index recovers on the next reindex."""
    import json

    exe = BIN / "memvault"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "memvault"]
    proc = subprocess.Popen(
        [*cmd, "--vault", str(vault.root), "watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_able,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        deadline = time.monotonic() + 60
        line = _read_line(proc.stderr, deadline)
        assert "watching" in line, line
        first = json.loads(_read_line(proc.stdout, deadline))
        assert first["event"] == "catch-up"
        write(vault.root, "semantic/facts/cli.md", FACT.format(id="cli", body="Seen by the CLI."))
        event = json.loads(_read_line(proc.stdout, time.monotonic() + 10))
        assert event["event"] == "reindex" and "semantic/facts/cli.md" in event["paths"]
        assert "1 added" in event["summary"]
        for i in range(400):  # a large change: the reindex is under way when Ctrl-C comes
            body = f"Bulk fact number {i} about the deploy pipeline."
            write(vault.root, f"semantic/facts/bulk-{i}.md", FACT.format(id=f"bulk-{i}", body=body))
        time.sleep(0.6)  # past the 0.4 s debounce
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        seconds = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert seconds <= EXIT_BOUND, f"exited {seconds:.1f} s after SIGINT"
    assert proc.returncode in (0, 130)
    assert "stopped" in err and "Traceback" not in err
    for line in out.splitlines():  # nothing but JSON lines on stdout
        json.loads(line)
    report = Vault.open(vault.root).reindex()  # whatever the interruption left, it recovers
    assert report.memories >= 401
    assert indexed(vault.root).get("semantic/facts/bulk-399.md")
