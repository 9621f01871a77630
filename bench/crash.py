#!/usr/bin/env python3
"""Crash harness: SIGKILL memvault at random moments, then prove the vault recovers.

Each trial starts one real `memvault` process (add, import, reindex or consolidate) on
the same vault, kills it with SIGKILL after a random delay, and then checks, with the
next ordinary command:

- the next command works without help (stale locks and git's index.lock recovered),
- every file parses, `git fsck` is clean, `memvault doctor` is clean,
- the index is consistent (search answers; `doctor` reports no index problem),
- every write that was acknowledged (exit 0 before the kill) is committed.

    python bench/crash.py --trials 100
    python bench/crash.py --trials 10 --json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

OPS = ("add", "import", "reindex", "consolidate")


def memvault(root: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memvault", "--vault", str(root), *args],
        capture_output=True, text=True, timeout=timeout, check=False,
    )


def start(root: Path, op: str, n: int, tmp: Path) -> tuple[subprocess.Popen[str], list[str]]:
    if op == "add":
        args = ["add", "episode", f"crash trial {n}: the deploy of service {n} went sideways", "--id", f"crash-{n}"]
        expect = [f"crash-{n}"]
    elif op == "import":
        path = tmp / f"import-{n}.jsonl"
        with open(path, "w", encoding="utf-8") as handle:
            for i in range(100):
                handle.write(json.dumps({"id": f"imp-{n}-{i}", "type": "semantic", "category": "facts",
                                         "content": f"imported fact {i} of batch {n}"}) + "\n")
        args = ["import", str(path)]
        expect = [f"imp-{n}-{i}" for i in range(100)]
    elif op == "reindex":
        args = ["reindex", "--full"]
        expect = []
    else:
        args = ["consolidate", "--only", "fold,decay,dedup,supersede"]
        expect = []
    proc = subprocess.Popen(
        [sys.executable, "-m", "memvault", "--vault", str(root), "-q", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    return proc, expect


def check(root: Path, acked: set[str]) -> list[str]:
    problems = []
    res = memvault(root, "recall", "deploy", "--json")
    if res.returncode != 0:
        problems.append(f"recall after crash failed: {res.stderr.strip()[-300:]}")
    else:
        try:
            json.loads(res.stdout)
        except json.JSONDecodeError:
            problems.append("recall --json printed something that is not JSON")
    doc = memvault(root, "doctor", "--json")
    try:
        report = json.loads(doc.stdout)
        problems += [p["text"] for p in report["problems"]]
        problems += [f"index: {n}" for n in report.get("notes", []) if "corrupt" in n or "error" in n]
    except json.JSONDecodeError:
        problems.append(f"doctor failed: {doc.stderr.strip()[-300:]}")
    fsck = subprocess.run(["git", "fsck", "--no-progress"], cwd=root, capture_output=True, text=True)
    if fsck.returncode != 0:
        problems.append(f"git fsck: {fsck.stdout.strip()[-300:]}{fsck.stderr.strip()[-300:]}")
    tracked = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True).stdout
    listed = memvault(root, "list", "--json", "--status", "any", "--include-archive")
    ids = {m["id"] for m in json.loads(listed.stdout)} if listed.returncode == 0 else set()
    missing = sorted(i for i in acked if i not in ids)
    if missing:
        problems.append(f"acknowledged writes missing: {missing[:5]}")
    _ = tracked
    return problems


def dirty(root: Path) -> list[str]:
    """Uncommitted changes left in the work tree after the check commands ran (a killed
    multi-file operation that no later command rolled back or finished)."""
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=root,
                         capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--max-delay", type=float, default=2.5, help="kill within this many seconds")
    parser.add_argument("--embedder", default=None, help="e.g. fake (default: the real model)")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--progress", action="store_true", help="one line per trial on stderr")
    args = parser.parse_args()
    if args.embedder:
        os.environ["MEMVAULT_EMBEDDER"] = args.embedder
    from memvault import Vault

    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="mv-crash-"))
    root = tmp / "v"
    Vault.init(root, examples=True)
    memvault(root, "reindex")
    acked: set[str] = set()
    killed = Counter()
    finished = Counter()
    failures: list[dict] = []
    dirty_trials: list[dict] = []
    t0 = time.time()
    for n in range(args.trials):
        op = OPS[n % len(OPS)] if n < len(OPS) else rng.choice(OPS)
        proc, expect = start(root, op, n, tmp)
        delay = rng.uniform(0.05, args.max_delay)
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            killed[op] += 1
        else:
            finished[op] += 1
            if proc.returncode == 0:
                acked.update(expect)
        problems = check(root, acked)
        if problems:
            failures.append({"trial": n, "op": op, "problems": problems[:5]})
        left = dirty(root)
        if left:
            dirty_trials.append({"trial": n, "op": op, "files": len(left), "sample": left[:3]})
        if args.progress:
            state = "killed" if proc.returncode == -signal.SIGKILL else f"exit {proc.returncode}"
            print(f"trial {n:3d} {op:11s} {state:8s} after {delay:.2f} s: "
                  f"{'OK' if not problems else problems[0][:200]}{' (dirty work tree)' if left else ''} "
                  f"({time.time() - t0:.0f} s)",
                  file=sys.stderr, flush=True)
    result = {
        "trials": args.trials,
        "killed": dict(killed),
        "finished": dict(finished),
        "acknowledged_writes": len(acked),
        "failed_trials": len(failures),
        "dirty_worktree_trials": len(dirty_trials),
        "dirty_worktree": dirty_trials[:10],
        "failures": failures[:10],
        "seconds": round(time.time() - t0, 1),
        "ok": not failures,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"crash harness: {args.trials} trials in {result['seconds']} s; killed {dict(killed)}, finished {dict(finished)}")
        print(f"acknowledged writes {len(acked)}, failed trials {len(failures)}, "
              f"trials leaving uncommitted changes {len(dirty_trials)}")
        for f in failures[:10]:
            print(f"  trial {f['trial']} ({f['op']}): {f['problems'][0]}")
        print("OK" if result["ok"] else "PROBLEMS FOUND")
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(0 if result["ok"] else 1)


if __name__ == "__main__":
    main()
