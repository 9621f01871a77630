#!/usr/bin/env python3
"""How long ``memvault watch`` takes to exit after Ctrl-C while it is reindexing a large change.

A vault of ``--base`` memories is indexed; then, per trial, ``memvault watch --json`` (the
real CLI, in its own process) is started, ``--change`` new memory files are written at once,
and SIGINT is sent while the watcher is indexing them (``--delay`` seconds after the writes,
plus up to ``--jitter`` seconds so that trials land in different phases: embedding, Chroma
writes, the SQLite commit). Printed: seconds from SIGINT to exit per trial, the median and
the maximum, exit codes, and whether anything but the stop message reached stderr. The
files of a trial are removed before the next one.

    python bench/watch_sigint.py                       # the real model, 5 trials
    python bench/watch_sigint.py --embedder fake --trials 20 --json

Exits 1 if any trial took longer than ``--limit`` seconds (2) or did not exit cleanly.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
FACT = "---\nid: {id}\ntype: semantic\ncategory: facts\n---\n\n{body}\n"
WORDS = [
    "deploy",
    "billing",
    "search",
    "index",
    "cache",
    "token",
    "queue",
    "worker",
    "region",
    "backup",
    "alert",
    "budget",
    "review",
    "release",
    "schema",
    "migration",
    "latency",
    "quota",
    "rollout",
    "incident",
    "owner",
    "standup",
]


def body(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 30))).capitalize() + "."


def write_files(root: Path, prefix: str, count: int, rng: random.Random) -> list[Path]:
    folder = root / "semantic" / "facts"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = folder / f"{prefix}-{i:05d}.md"
        path.write_text(FACT.format(id=f"{prefix}-{i:05d}", body=body(rng)), encoding="utf-8")
        paths.append(path)
    return paths


def read_line(stream: Any, deadline: float) -> str:
    poller = select.poll()
    poller.register(stream, select.POLLIN)
    while time.monotonic() < deadline:
        if poller.poll(200):
            return str(stream.readline())
    return ""


def indexed(root: Path, prefix: str) -> int:
    """How many of a trial's files the index holds after the watcher exited (0: the
    interrupted reindex was rolled back, or had not started)."""
    db = root / ".memvault" / "index" / "search.sqlite"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        sql = "SELECT count(*) FROM docs WHERE path LIKE ?"
        return int(conn.execute(sql, (f"semantic/facts/{prefix}%",)).fetchone()[0])
    finally:
        conn.close()


def ctrl_c_able() -> None:
    """SIGINT back to its default in the child (a run started with it ignored passes that on)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def trial(root: Path, n: int, change: int, delay: float, rng: random.Random) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "memvault", "--vault", str(root), "watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=ctrl_c_able,
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        first = read_line(proc.stdout, time.monotonic() + 120)
        if '"catch-up"' not in first:
            raise SystemExit(f"the watcher did not start: {first!r} {proc.stderr.read()[-500:]}")
        paths = write_files(root, f"t{n}", change, rng)
        time.sleep(delay)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=60)
            seconds = time.monotonic() - sent
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            seconds = float("inf")
    finally:
        if proc.poll() is None:
            proc.kill()
    for path in paths:
        path.unlink()
    problems = [line for line in err.splitlines() if "Traceback" in line or "Error" in line]
    return {
        "seconds": round(seconds, 3),
        "code": proc.returncode,
        "events_after_signal": len(out.splitlines()),
        "indexed": indexed(root, f"t{n}-"),
        "stderr": problems[-3:],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base", type=int, default=2000, help="memories indexed beforehand")
    parser.add_argument("--change", type=int, default=2000, help="files written per trial")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--delay", type=float, default=1.0, help="seconds from writes to SIGINT")
    parser.add_argument("--jitter", type=float, default=1.5, help="random extra delay, seconds")
    parser.add_argument("--limit", type=float, default=2.0, help="seconds allowed to exit")
    parser.add_argument("--embedder", default=None, help="embedder spec (default: the vault's)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    os.environ.pop("MEMVAULT_EMBEDDER", None)
    if args.embedder:
        os.environ["MEMVAULT_EMBEDDER"] = args.embedder
    from memvault import Vault

    rng = random.Random(3)
    results = []
    with tempfile.TemporaryDirectory(prefix="mv-bench-watch-") as tmp:
        root = Path(tmp) / "v"
        vault = Vault.init(root)
        write_files(root, "base", args.base, rng)
        vault.reindex()
        for n in range(args.trials):
            delay = args.delay + rng.random() * args.jitter
            results.append({"delay": round(delay, 2), **trial(root, n, args.change, delay, rng)})
            if not args.json:
                print(f"trial {n + 1}: {results[-1]}", file=sys.stderr)
    times = [r["seconds"] for r in results]
    bad = [
        r for r in results if r["seconds"] > args.limit or r["code"] not in (0, 130) or r["stderr"]
    ]
    out = {
        "embedder": os.environ.get("MEMVAULT_EMBEDDER", "default"),
        "base": args.base,
        "change": args.change,
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "sigint_to_exit_median_s": round(statistics.median(times), 3),
        "sigint_to_exit_max_s": round(max(times), 3),
        "limit_s": args.limit,
        "trials": results,
        "ok": not bad,
    }
    print(
        json.dumps(out)
        if args.json
        else json.dumps({k: v for k, v in out.items() if k != "trials"})
    )
    return 0 if not bad else 1


if __name__ == "__main__":
    raise SystemExit(main())
