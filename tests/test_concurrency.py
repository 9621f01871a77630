"""Several processes writing at once never lose a write or corrupt a file.

8 writers x 25 adds at the same moment: 7 processes use the Python API, one drives the real
``memvault`` console script. Titles collide on purpose (the id allocation must be under the
lock) and some facts share a subject (supersede rewrites two files in one commit).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from pathlib import Path

import pytest

from memvault import Vault

from helpers import commit_count, git, run_memvault

# Eight writer processes at once: out of the fast lane (pytest -m 'not slow').
pytestmark = pytest.mark.slow

WORKERS = 8
ADDS = 25


def _api_writer(root: str, worker: int, start: float, errors: mp.Queue[str]) -> None:
    try:
        vault = Vault.open(root)
        while time.time() < start:
            time.sleep(0.001)
        for i in range(ADDS):
            subject = "shared.counter" if i % 5 == 0 else None
            vault.add("semantic", f"Shared title {i}", subject=subject, tags=[f"w{worker}"])
    except BaseException as exc:  # report, don't hang the parent
        errors.put(f"worker {worker}: {type(exc).__name__}: {exc}")


def _cli_writer(root: str, worker: int, start: float, errors: mp.Queue[str]) -> None:
    try:
        while time.time() < start:
            time.sleep(0.001)
        for i in range(ADDS):
            args = ["--vault", root, "add", "fact", f"Shared title {i}", "--tag", f"w{worker}"]
            if i % 5 == 0:
                args += ["--subject", "shared.counter"]
            proc = run_memvault(*args, timeout=120)
            if proc.returncode != 0:
                errors.put(f"cli worker: exit {proc.returncode}: {proc.stderr.strip()}")
    except BaseException as exc:
        errors.put(f"cli worker: {type(exc).__name__}: {exc}")


def test_parallel_writers_lose_nothing(vault: Vault) -> None:
    root = str(vault.root)
    before = commit_count(vault.root)
    ctx = mp.get_context("fork")
    errors: mp.Queue[str] = ctx.Queue()
    start = time.time() + 1.5  # every process starts writing at the same moment
    procs = [
        ctx.Process(target=_api_writer, args=(root, w, start, errors)) for w in range(WORKERS - 1)
    ]
    procs.append(ctx.Process(target=_cli_writer, args=(root, WORKERS - 1, start, errors)))
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    stuck = [p.pid for p in procs if p.is_alive()]
    for p in procs:
        if p.is_alive():
            p.kill()
    problems = []
    while not errors.empty():
        problems.append(errors.get())
    assert not stuck, f"writers still running: {stuck}"
    assert problems == []
    assert all(p.exitcode == 0 for p in procs)

    # 200 memories, 200 commits, one file each
    memories = Vault.open(root).all_memories()
    assert len(memories) == WORKERS * ADDS
    assert len({m.id for m in memories}) == WORKERS * ADDS
    files = [p for p in (vault.root / "semantic").rglob("*.md")]
    assert len(files) == WORKERS * ADDS
    assert commit_count(vault.root) == before + WORKERS * ADDS
    for w in range(WORKERS):
        assert sum(1 for m in memories if f"w{w}" in m.tags) == ADDS
    # the supersede chain on the shared subject stayed consistent: exactly one active fact
    counter = [m for m in memories if m.subject == "shared.counter"]
    assert len(counter) == WORKERS * ADDS // 5
    assert [m.status for m in counter].count("active") == 1
    for m in counter:
        if m.status == "superseded":
            assert m.meta["superseded_by"] in {c.id for c in counter}

    # the repository and the vault are healthy
    fsck = subprocess_ok(vault.root, "fsck", "--full", "--strict")
    assert "error" not in fsck.lower()
    assert git(vault.root, "status", "--porcelain", "--untracked-files=all") == ""
    doctor = run_memvault("--vault", root, "doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert not (vault.root / ".git" / "index.lock").exists()
    assert not [p for p in vault.root.rglob("*.tmp") if ".git" not in p.parts]
    _ = os


def subprocess_ok(root: Path, *args: str) -> str:
    import subprocess

    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout + proc.stderr
