#!/usr/bin/env python3
"""Stress harness: many writers, readers, a watcher and periodic consolidation at once.

8 writer processes (add, log, edit, forget their own memories) + 2 readers (recall) +
`memvault watch` + a consolidation every 10 s, for 60 s by default, on a vault in a temp
folder (loopback only: nothing leaves the machine). Afterwards it checks that nothing was
lost or corrupted:

- every acknowledged write is in the files and committed in git (forgotten ones are gone),
- no file is half-written (every memory file parses), `git fsck` is clean,
- `memvault doctor` finds no problem, the index matches the files,
- no reader ever waited more than 5 s.

    python bench/stress.py                 # 60 s, human output
    python bench/stress.py --seconds 10 --json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

WORDS = (
    "deploy database migration rollback cache latency incident review budget pricing customer "
    "onboarding release staging production alert schema queue worker retry timeout backup "
    "kubernetes terraform invoice refund login password-reset feature flag experiment"
).split()


def _text(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def writer(root: str, wid: int, deadline: float, out: str, seed: int) -> None:
    from memvault import Vault
    from memvault.errors import MemvaultError

    rng = random.Random(seed)
    vault = Vault.open(root, agent=f"writer{wid}")
    mine: list[str] = []
    ops = Counter()
    with open(out, "a", encoding="utf-8") as log:
        def ack(record: dict) -> None:
            log.write(json.dumps(record) + "\n")
            log.flush()

        while time.time() < deadline:
            roll = rng.random()
            try:
                if roll < 0.55 or not mine:
                    kind = rng.choice(["episodic", "semantic", "procedural"])
                    content = f"w{wid} op{ops['add']} {_text(rng)}"
                    result = vault.add(kind, content, tags=[f"w{wid}"])
                    mine.append(result.memory.id)
                    ack({"op": "add", "id": result.memory.id, "content": result.memory.content})
                    ops["add"] += 1
                elif roll < 0.70:
                    vault.log(f"stress-w{wid}", rng.choice(["user", "assistant"]), _text(rng, 8))
                    ack({"op": "log", "id": f"session-stress-w{wid}"})
                    ops["log"] += 1
                elif roll < 0.88:
                    target = rng.choice(mine)
                    content = f"w{wid} edited {_text(rng)}"
                    vault.update(target, {}, "stress edit", content=content)
                    ack({"op": "edit", "id": target, "content": content})
                    ops["edit"] += 1
                else:
                    target = mine.pop(rng.randrange(len(mine)))
                    vault.forget(target, "stress forget")
                    ack({"op": "forget", "id": target})
                    ops["forget"] += 1
            except MemvaultError as exc:
                # e.g. a consolidation archived/merged the target meanwhile: not a lost write
                ack({"op": "error", "error": str(exc)[:200]})


def reader(root: str, deadline: float, out: str, seed: int) -> None:
    from memvault import Vault

    rng = random.Random(seed)
    vault = Vault.open(root)
    vault.recall("warm up", limit=1)  # model load and index open are start-up, not waiting
    worst = 0.0
    worst_at = 0.0
    count = 0
    errors = 0
    error_at: list[float] = []
    times: list[float] = []
    t0 = deadline - float(os.environ.get("STRESS_SECONDS", "0"))
    while time.time() < deadline:
        q = " ".join(rng.choice(WORDS) for _ in range(3))
        t = time.perf_counter()
        try:
            vault.recall(q, limit=5)
        except Exception as exc:  # noqa: BLE001 - counted and reported
            errors += 1
            error_at.append(round(time.time() - t0, 1))
            print(f"reader error at {time.time() - t0:.1f} s: {type(exc).__name__}: {exc}", file=sys.stderr)
        took = time.perf_counter() - t
        times.append(took)
        if took > worst:
            worst, worst_at = took, time.time() - t0
        count += 1
    times.sort()
    p50 = times[len(times) // 2] if times else 0.0
    with open(out, "w", encoding="utf-8") as handle:
        json.dump({"worst": worst, "worst_at": round(worst_at, 1), "count": count, "errors": errors,
                   "error_at": error_at[:20], "p50": p50}, handle)


def consolidator(root: str, deadline: float, every: float, out: str) -> None:
    from memvault import Vault
    from memvault.consolidate import consolidate

    runs = 0
    errors = 0
    while time.time() + every < deadline:
        time.sleep(every)
        try:
            consolidate(Vault.open(root), only=["fold", "decay", "dedup", "supersede"])
            runs += 1
        except Exception as exc:  # noqa: BLE001
            errors += 1
            print(f"consolidation error: {type(exc).__name__}: {exc}", file=sys.stderr)
    with open(out, "w", encoding="utf-8") as handle:
        json.dump({"runs": runs, "errors": errors}, handle)


def verify(root: Path, acks: list[dict]) -> dict:
    from memvault import Vault
    from memvault.reports import doctor_report

    vault = Vault.open(root)
    scan = vault.scan()
    by_id = {}
    for entry in scan.entries.values():
        if entry.memory is not None:
            by_id.setdefault(entry.memory.id, []).append(entry.memory)
    expected: dict[str, str | None] = {}
    forgotten: set[str] = set()
    for a in acks:
        if a["op"] == "add":
            expected[a["id"]] = a["content"]
        elif a["op"] == "edit":
            expected[a["id"]] = a["content"]
        elif a["op"] == "forget":
            expected.pop(a["id"], None)
            forgotten.add(a["id"])
        elif a["op"] == "log":
            expected.setdefault(a["id"], None)
    tracked = set(subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True).stdout.split())
    lost = []
    for mid, content in expected.items():
        found = by_id.get(mid)
        if not found:
            lost.append(mid)
            continue
        m = found[0]
        if m.path not in tracked:
            lost.append(mid)
        elif content is not None and m.content.strip() != content.strip():
            lost.append(mid)
    resurrected = sorted(mid for mid in forgotten if mid in by_id)
    corrupt = len(scan.invalid)
    stray = [p for p in root.rglob(".*.tmp") if ".git" not in p.parts]
    fsck = subprocess.run(["git", "fsck", "--no-progress"], cwd=root, capture_output=True, text=True)
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout.strip()
    report = doctor_report(vault)
    index_ok = _index_matches(vault)
    return {
        "lost": len(lost),
        "lost_ids": lost[:10],
        "resurrected": len(resurrected),
        "corrupt": corrupt + len(stray),
        "fsck_ok": fsck.returncode == 0,
        "worktree_clean": status == "",
        "doctor_ok": not report["problems"],
        "doctor_problems": [p["text"] for p in report["problems"]][:5],
        "index_matches_files": index_ok,
        "memories": sum(len(v) for v in by_id.values()),
    }


def _index_matches(vault) -> bool:  # type: ignore[no-untyped-def]
    """The index reflects exactly the files (after the watcher/lazy sync had its chance)."""
    try:
        from memvault.index import index_health
    except ImportError:
        return False
    notes = index_health(vault)
    return not [n for n in notes if "behind" in n or "stale" in n or "mismatch" in n or "missing" in n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument("--consolidate-every", type=float, default=10)
    parser.add_argument("--no-watch", action="store_true", help="don't run memvault watch")
    parser.add_argument("--embedder", default=None, help="e.g. fake (default: the real model)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the vault folder")
    args = parser.parse_args()
    if args.embedder:
        os.environ["MEMVAULT_EMBEDDER"] = args.embedder
    from memvault import Vault

    os.environ["STRESS_SECONDS"] = str(args.seconds)  # readers report when (s into the run) things happen
    tmp = tempfile.mkdtemp(prefix="mv-stress-")
    root = Path(tmp) / "v"
    vault = Vault.init(root, examples=True)
    vault.reindex()
    ctx = mp.get_context("spawn")
    start = time.time()
    deadline = start + args.seconds
    outs = Path(tmp)
    watch = None
    if not args.no_watch:
        watch = subprocess.Popen(
            [sys.executable, "-m", "memvault", "--vault", str(root), "watch"],
            stdout=subprocess.DEVNULL, stderr=open(outs / "watch.err", "w"),
        )
    procs = [ctx.Process(target=writer, args=(str(root), i, deadline, str(outs / f"w{i}.jsonl"), args.seed * 100 + i)) for i in range(args.writers)]
    procs += [ctx.Process(target=reader, args=(str(root), deadline, str(outs / f"r{i}.json"), args.seed * 1000 + i)) for i in range(args.readers)]
    procs.append(ctx.Process(target=consolidator, args=(str(root), deadline, args.consolidate_every, str(outs / "c.json"))))
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=args.seconds + 120)
        if p.is_alive():
            p.kill()
    elapsed = time.time() - start
    if watch is not None:
        time.sleep(2.5)  # the watcher's debounce: let it catch up before we compare
        watch.send_signal(signal.SIGINT)
        try:
            watch.wait(timeout=15)
        except subprocess.TimeoutExpired:
            watch.kill()
    acks = []
    for i in range(args.writers):
        path = outs / f"w{i}.jsonl"
        if path.exists():
            acks.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    readers = [json.loads((outs / f"r{i}.json").read_text()) for i in range(args.readers) if (outs / f"r{i}.json").exists()]
    cons = json.loads((outs / "c.json").read_text()) if (outs / "c.json").exists() else {"runs": 0, "errors": 0}
    result = verify(root, acks)
    counts = Counter(a["op"] for a in acks)
    result.update(
        {
            "seconds": round(elapsed, 1),
            "ops_per_s": {k: round(v / elapsed, 2) for k, v in sorted(counts.items()) if k != "error"},
            "write_errors": counts.get("error", 0),
            "reads": sum(r["count"] for r in readers),
            "read_errors": sum(r["errors"] for r in readers),
            "reads_per_s": round(sum(r["count"] for r in readers) / elapsed, 2),
            "worst_reader_wait_s": round(max((r["worst"] for r in readers), default=0.0), 3),
            "worst_reader_wait_at_s": max(readers, key=lambda r: r["worst"])["worst_at"] if readers else None,
            "read_errors_at_s": sorted(t for r in readers for t in r.get("error_at", []))[:20],
            "reader_p50_s": round(max((r.get("p50", 0.0) for r in readers), default=0.0), 3),
            "consolidations": cons["runs"],
            "consolidation_errors": cons["errors"],
        }
    )
    result["ok"] = (
        result["lost"] == 0 and result["corrupt"] == 0 and result["fsck_ok"] and result["doctor_ok"]
        and result["index_matches_files"] and result["worst_reader_wait_s"] <= 5 and result["resurrected"] == 0
        and result["read_errors"] == 0
    )
    if not args.keep:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    else:
        result["vault"] = str(root)
    if args.json:
        print(json.dumps(result))
        return
    print(f"stress {result['seconds']} s: {args.writers} writers, {args.readers} readers, watcher, consolidation every {args.consolidate_every} s")
    print("ops/s: " + ", ".join(f"{k} {v}" for k, v in result["ops_per_s"].items()) + f"; reads {result['reads_per_s']}/s")
    print(f"reader latency p50 {result['reader_p50_s']} s, worst {result['worst_reader_wait_s']} s "
          f"(at {result['worst_reader_wait_at_s']} s); read errors {result['read_errors']}; consolidations {result['consolidations']}")
    print(f"lost {result['lost']}, corrupt {result['corrupt']}, fsck {'ok' if result['fsck_ok'] else 'FAILED'}, "
          f"doctor {'ok' if result['doctor_ok'] else 'FAILED'}, index matches files: {result['index_matches_files']}")
    print("OK" if result["ok"] else "PROBLEMS FOUND")
    sys.exit(0 if result["ok"] else 1)


if __name__ == "__main__":
    main()
