#!/usr/bin/env python3
"""Stress harness: many writers, readers, a watcher and periodic consolidation at once.

8 writer processes (add, log, edit, forget their own memories) + 2 readers (recall) +
`memvault watch` + a consolidation every 10 s, for 60 s by default, on a vault in a temp
folder (loopback only: nothing leaves the machine). Afterwards it checks that nothing was
lost or corrupted, and `ok` (exit 0) needs every one of these:

- every child process (writers, readers, consolidator) exited 0 on its own, and the
  watcher stopped cleanly on Ctrl-C with no reindex error and no invalid file seen;
- no writer, reader or consolidation raised an error (every error counter is 0);
- every acknowledged write is in the files with the text the writer sent, committed in
  git (in HEAD, no uncommitted change); every acknowledged conversation turn's text is in
  its transcript; forgotten memories are gone;
- no file is half-written (every memory file parses, no temp file left), no id is on two
  files, `git fsck` is clean, the work tree is clean;
- `memvault doctor` finds no problem; the index health has no note other than an
  informational one (so "behind", "damaged", "not built", an embedder mismatch... fail);
- no reader ever waited more than --max-reader-wait seconds (5), and something was both
  written and read.

    python bench/stress.py                 # 60 s, the real model, human output
    python bench/stress.py --seconds 10 --embedder fake --json

Self-test: --inject-fault makes the harness break what it guards, to show it notices
(the run must exit 1). Faults (comma-separated, any combination; each fires even when a
slow start leaves its writer no time for its usual turn):

    writer-raises        the last writer raises a RuntimeError midway (not a MemvaultError)
    write-error          writer 0 edits an id that does not exist (a MemvaultError)
    skip-commit          at the end, writer 0 writes a memory file, acknowledges it, never commits
    drop-turn            writer 0 acknowledges a conversation turn with a text it never logged
    consolidation-error  the consolidator's first run raises
    damage-index         the index manifest is overwritten with garbage before the checks
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
from typing import Any

WORDS = (  # noqa: SIM905 - reads better than a 31-line list
    "deploy database migration rollback cache latency incident review budget pricing customer "
    "onboarding release staging production alert schema queue worker retry timeout backup "
    "kubernetes terraform invoice refund login password-reset feature flag experiment"
).split()

FAULTS = (
    "writer-raises",
    "write-error",
    "skip-commit",
    "drop-turn",
    "consolidation-error",
    "damage-index",
)
# The iteration at which each writer fault fires; one a writer did not reach before the
# deadline (a slow start on a busy machine) fires after its loop, so it always fires.
FAULT_AT = {"write-error": 2, "drop-turn": 3, "writer-raises": 4}
# Index health notes that say nothing is wrong (index/service.py: the manifest names an
# older commit whose files are the same as HEAD's). Every other note is a failure.
INFORMATIONAL_NOTES = ("(same files)",)


def _text(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def writer(
    root: str, wid: int, last: bool, deadline: float, out: str, seed: int, faults: list[str]
) -> None:
    from memvault import MemvaultError, Vault

    rng = random.Random(seed)
    vault = Vault.open(root, agent=f"writer{wid}")
    mine: list[str] = []
    ops: Counter[str] = Counter()
    with open(out, "a", encoding="utf-8") as log:

        def ack(record: dict[str, Any]) -> None:
            log.write(json.dumps(record) + "\n")
            log.flush()

        # writer-raises is the last writer's; the other writer faults are writer 0's. A
        # writer that must also skip a commit at the end (a single writer) raises after it.
        skips = wid == 0 and "skip-commit" in faults
        mine_faults = [
            f
            for f in sorted(set(faults) & set(FAULT_AT), key=FAULT_AT.__getitem__)
            if (last and not skips if f == "writer-raises" else wid == 0)
        ]
        step = 0
        while time.time() < deadline:
            step += 1
            due = [f for f in mine_faults if FAULT_AT[f] == step]
            if due:
                mine_faults.remove(due[0])
                _inject_writer_fault(vault, due[0], ack)
                continue
            roll = rng.random()
            try:
                if roll < 0.55 or not mine:
                    kind = rng.choice(["episodic", "semantic", "procedural"])
                    # Unique numbers per text: dedup never merges two texts whose numbers differ.
                    content = f"w{wid} op{ops['add']} {_text(rng)}"
                    result = vault.add(kind, content, tags=[f"w{wid}"])
                    mine.append(result.memory.id)
                    ack({"op": "add", "id": result.memory.id, "content": content})
                    ops["add"] += 1
                elif roll < 0.70:
                    text = f"w{wid} turn{ops['log']} {_text(rng, 8)}"
                    result = vault.log(f"stress-w{wid}", rng.choice(["user", "assistant"]), text)
                    ack({"op": "log", "id": result.memory.id, "text": text})
                    ops["log"] += 1
                elif roll < 0.88:
                    target = rng.choice(mine)
                    content = f"w{wid} edit{ops['edit']} {_text(rng)}"
                    vault.update(target, {}, "stress edit", content=content)
                    ack({"op": "edit", "id": target, "content": content})
                    ops["edit"] += 1
                else:
                    target = mine.pop(rng.randrange(len(mine)))
                    vault.forget(target, "stress forget")
                    ack({"op": "forget", "id": target})
                    ops["forget"] += 1
            except MemvaultError as exc:
                # Counted as a write error (fails the run); anything else crashes the writer,
                # which its exit code reports.
                ack({"op": "error", "error": f"{type(exc).__name__}: {exc}"[:300]})
        for fault in mine_faults:  # writer-raises, if still due, is the last
            if fault != "writer-raises":
                _inject_writer_fault(vault, fault, ack)
        if wid == 0 and "skip-commit" in faults:
            _skip_commit(Path(vault.root), Path(out).parent / "c.json", ack)
        if "writer-raises" in mine_faults or (skips and last and "writer-raises" in faults):
            _inject_writer_fault(vault, "writer-raises", ack)


def _inject_writer_fault(vault: Any, fault: str, ack: Any) -> None:
    """One writer fault: writer-raises (the last writer), write-error or drop-turn (writer 0)."""
    from memvault import MemvaultError

    ack({"op": "fault", "fault": fault})
    if fault == "writer-raises":
        raise RuntimeError("injected fault: a writer crashed")
    if fault == "write-error":
        try:
            vault.update("no-such-memory-stress", {}, "injected fault", content="x")
        except MemvaultError as exc:
            ack({"op": "error", "error": f"{type(exc).__name__}: {exc}"[:300]})
    elif fault == "drop-turn":
        result = vault.log("stress-w0", "user", "w0 the turn that was really logged")
        ack({"op": "log", "id": result.memory.id, "text": "w0 a turn acknowledged, never logged"})


def _skip_commit(root: Path, consolidator_report: Path, ack: Any) -> None:
    """The skip-commit fault: a memory file written and acknowledged, never committed.

    Written once the consolidator is done: a consolidation that touches the file (its
    access count, its relevance) would commit it and hide the fault.
    """
    limit = time.time() + 300
    while not consolidator_report.exists() and time.time() < limit:
        time.sleep(0.2)
    mid = "w0-uncommitted-fault"
    content = "w0 uncommitted 987654 a write that was acknowledged and never committed"
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    (root / "semantic" / "facts" / f"{mid}.md").write_text(
        f"---\nid: {mid}\ntype: semantic\ncategory: facts\nstatus: active\nscope: team\n"
        f"created: {created}\n---\n\n{content}\n",
        encoding="utf-8",
    )
    ack({"op": "fault", "fault": "skip-commit"})
    ack({"op": "add", "id": mid, "content": content})


def reader(root: str, start: float, deadline: float, out: str, seed: int) -> None:
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
    while time.time() < deadline:
        q = " ".join(rng.choice(WORDS) for _ in range(3))
        t = time.perf_counter()
        try:
            vault.recall(q, limit=5)
        except Exception as exc:  # noqa: BLE001 - counted and reported
            errors += 1
            error_at.append(round(time.time() - start, 1))
            print(
                f"reader error at {time.time() - start:.1f} s: {type(exc).__name__}: {exc}",
                file=sys.stderr,
            )
        took = time.perf_counter() - t
        times.append(took)
        if took > worst:
            worst, worst_at = took, time.time() - start
        count += 1
    times.sort()
    p50 = times[len(times) // 2] if times else 0.0
    record = {
        "worst": worst,
        "worst_at": round(worst_at, 1),
        "count": count,
        "errors": errors,
        "error_at": error_at[:20],
        "p50": p50,
    }
    Path(out).write_text(json.dumps(record), encoding="utf-8")


def consolidator(
    root: str, start: float, deadline: float, every: float, out: str, faults: list[str]
) -> None:
    from memvault import Vault
    from memvault.consolidate import consolidate

    runs = 0
    errors = 0
    # On the run's clock, not this process's: a slow start (busy machine) loses no run.
    for at in range(1, int((deadline - start) / every) + 1):
        if start + at * every >= deadline or time.time() >= deadline:
            break
        time.sleep(max(0.0, start + at * every - time.time()))
        try:
            if "consolidation-error" in faults and runs + errors == 0:
                raise RuntimeError("injected fault: a consolidation failed")
            consolidate(Vault.open(root).core, only=["fold", "decay", "dedup", "supersede"])
            runs += 1
        except Exception as exc:  # noqa: BLE001 - counted; the run fails on any
            errors += 1
            print(f"consolidation error: {type(exc).__name__}: {exc}", file=sys.stderr)
    Path(out).write_text(json.dumps({"runs": runs, "errors": errors}), encoding="utf-8")


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)


def unhealthy(notes: list[str]) -> list[str]:
    """The index health notes that report a problem (all but the informational ones)."""
    return [n for n in notes if not any(mark in n for mark in INFORMATIONAL_NOTES)]


def verify(root: Path, acks: list[dict[str, Any]]) -> dict[str, Any]:
    """Compare what the writers acknowledged with what the vault (files, git, index) holds."""
    from memvault import Vault
    from memvault.index import health

    vault = Vault.open(root)
    scan = vault.core.scan()
    by_id: dict[str, list[Any]] = {}
    for entry in scan.entries.values():
        if entry.memory is not None:
            by_id.setdefault(entry.memory.id, []).append(entry.memory)
    expected: dict[str, str] = {}  # id -> the last text a writer had acknowledged for it
    turns: dict[str, list[str]] = {}  # transcript id -> acknowledged turn texts
    forgotten: set[str] = set()
    for a in acks:
        if a["op"] in ("add", "edit"):
            expected[a["id"]] = a["content"]
            forgotten.discard(a["id"])
        elif a["op"] == "forget":
            expected.pop(a["id"], None)
            forgotten.add(a["id"])
        elif a["op"] == "log":
            turns.setdefault(a["id"], []).append(a["text"])
    head = set(_git(root, "ls-tree", "-r", "--name-only", "-z", "HEAD").stdout.split("\0"))
    changed = set(_git(root, "diff", "--name-only", "-z", "HEAD").stdout.split("\0"))

    def committed(path: str) -> bool:
        return path in head and path not in changed

    lost: list[str] = []
    for mid, content in expected.items():
        found = by_id.get(mid, [])
        if not any(committed(m.path) and m.content.strip() == content.strip() for m in found):
            lost.append(mid)
    lost_turns: list[str] = []
    for tid, texts in turns.items():
        found = [m for m in by_id.get(tid, []) if committed(m.path)]
        lost_turns += [t for t in texts if not any(t in m.content for m in found)]
    resurrected = sorted(mid for mid in forgotten if mid in by_id)
    duplicates = sorted(mid for mid, ms in by_id.items() if len(ms) > 1)
    stray = [p for p in root.rglob(".*.tmp") if ".git" not in p.parts]
    fsck = _git(root, "fsck", "--no-progress")
    status = _git(root, "status", "--porcelain", "--untracked-files=all").stdout.strip()
    doctor = subprocess.run(
        [sys.executable, "-m", "memvault", "--vault", str(root), "doctor", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        problems = [p["text"] for p in json.loads(doctor.stdout)["problems"]]
    except (json.JSONDecodeError, KeyError, TypeError):
        problems = [f"doctor exit {doctor.returncode}: {doctor.stderr.strip()[-300:]}"]
    if doctor.returncode != 0 and not problems:
        problems = [f"doctor exit {doctor.returncode}: {doctor.stderr.strip()[-300:]}"]
    index_notes = unhealthy(health(vault.core))
    return {
        "acknowledged": {"writes": len(expected), "turns": sum(map(len, turns.values()))},
        "lost": len(lost),
        "lost_ids": lost[:10],
        "lost_turns": len(lost_turns),
        "lost_turn_texts": lost_turns[:5],
        "resurrected": len(resurrected),
        "duplicate_ids": duplicates[:10],
        "corrupt": len(scan.invalid) + len(stray),
        "fsck_ok": fsck.returncode == 0,
        "worktree_clean": status == "",
        "worktree_changes": status.splitlines()[:5],
        "doctor_ok": not problems,
        "doctor_problems": problems[:5],
        "index_matches_files": not index_notes,
        "index_notes": index_notes[:5],
        "memories": sum(len(v) for v in by_id.values()),
    }


def _damage_index(root: Path) -> None:
    """The damage-index fault: what a torn manifest write would leave behind."""
    manifest = root / ".memvault" / "index" / "manifest.json"
    if not manifest.exists():
        sys.exit(f"damage-index: no index manifest at {manifest}; the fault cannot be injected")
    manifest.write_text("{ torn", encoding="utf-8")


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def _watch_events(path: Path) -> tuple[int, list[str]]:
    """(reindex errors, invalid files) from `memvault watch --json` output."""
    errors, invalid = 0, []
    if not path.exists():
        return 0, []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        errors += event.get("event") == "error"
        invalid += event.get("invalid") or []
    return errors, invalid


def _children(
    args: argparse.Namespace, root: Path, outs: Path, start: float, faults: list[str]
) -> list[tuple[str, Any]]:
    """The writer, reader and consolidator processes, named, not started."""
    ctx = mp.get_context("spawn")
    deadline = start + args.seconds
    children: list[tuple[str, Any]] = []
    for i in range(args.writers):
        last = i == args.writers - 1
        out = str(outs / f"w{i}.jsonl")
        wargs = (str(root), i, last, deadline, out, args.seed * 100 + i, faults)
        children.append((f"writer{i}", _process(ctx, outs, f"writer{i}", writer, wargs)))
    for i in range(args.readers):
        rargs = (str(root), start, deadline, str(outs / f"r{i}.json"), args.seed * 1000 + i)
        children.append((f"reader{i}", _process(ctx, outs, f"reader{i}", reader, rargs)))
    cargs = (str(root), start, deadline, args.consolidate_every, str(outs / "c.json"), faults)
    children.append(("consolidator", _process(ctx, outs, "consolidator", consolidator, cargs)))
    return children


def _process(ctx: Any, outs: Path, name: str, target: Any, args: tuple[Any, ...]) -> Any:
    errfile = str(outs / f"{name}.traceback")
    return ctx.Process(target=_child, args=(target, errfile, *args))


def _child(target: Any, errfile: str, *args: Any) -> None:
    """Run one child's ``target``; a crash leaves its traceback in ``errfile`` (the exit code
    alone would not say what went wrong) and still exits non-zero."""
    try:
        target(*args)
    except BaseException:
        import traceback

        Path(errfile).write_text(traceback.format_exc(), encoding="utf-8")
        raise


def _tracebacks(children: list[tuple[str, Any]], outs: Path) -> dict[str, str]:
    """The last lines of each crashed child's traceback, by name."""
    found: dict[str, str] = {}
    for name, _ in children:
        path = outs / f"{name}.traceback"
        if path.exists():
            lines = path.read_text(encoding="utf-8").strip().splitlines()
            found[name] = "\n".join(lines[-12:])
    return found


def _join(children: list[tuple[str, Any]], deadline: float) -> dict[str, str]:
    """Wait for every child; name each that hung or exited non-zero."""
    failed: dict[str, str] = {}
    for name, p in children:
        p.join(timeout=max(0.0, deadline - time.time()) + 120)
        if p.is_alive():
            p.kill()
            p.join()
            failed[name] = "hung: killed 120 s after the deadline"
        elif p.exitcode != 0:
            failed[name] = f"exit code {p.exitcode}"
    return failed


def ctrl_c_able() -> None:
    """``preexec_fn`` of the watcher, which gets a Ctrl-C: SIGINT back to its default action (a
    run started with SIGINT ignored, as a shell's background job is, passes that on)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stop_watcher(watch: subprocess.Popen[bytes] | None) -> str:
    """Ctrl-C the watcher; "ok" when it stops cleanly, else what went wrong."""
    if watch is None:
        return "not run"
    if watch.poll() is not None:
        return f"exited early with code {watch.returncode}"
    time.sleep(2.5)  # the watcher's debounce: let it catch up before we compare
    watch.send_signal(signal.SIGINT)
    try:
        code = watch.wait(timeout=15)
    except subprocess.TimeoutExpired:
        watch.kill()
        watch.wait()
        return "did not stop within 15 s of Ctrl-C"
    return "ok" if code in (0, 130) else f"exit code {code} after Ctrl-C"


def _collect(
    args: argparse.Namespace, outs: Path, failed: dict[str, str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """(writer acknowledgements, reader reports, consolidator report); a missing report
    marks its child failed."""
    acks: list[dict[str, Any]] = []
    for i in range(args.writers):
        path = outs / f"w{i}.jsonl"
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    acks.append(json.loads(line))
                except json.JSONDecodeError:
                    pass  # the torn last line of a writer killed as hung (already failed)
    readers = []
    for i in range(args.readers):
        record = _read_json(outs / f"r{i}.json")
        if record is None:
            failed.setdefault(f"reader{i}", "wrote no report")
        else:
            readers.append(record)
    cons = _read_json(outs / "c.json")
    if cons is None:
        failed.setdefault("consolidator", "wrote no report")
        cons = {"runs": 0, "errors": 0}
    return acks, readers, cons


def run(args: argparse.Namespace, faults: list[str]) -> dict[str, Any]:
    from memvault import Vault

    tmp = tempfile.mkdtemp(prefix="mv-stress-")
    outs = Path(tmp)
    root = outs / "v"
    Vault.init(root, examples=True).reindex()
    start = time.time()
    watch = None
    if not args.no_watch:
        watch = subprocess.Popen(
            [sys.executable, "-m", "memvault", "--vault", str(root), "watch", "--json"],
            stdout=open(outs / "watch.jsonl", "w"),  # noqa: SIM115 - the child owns it
            stderr=open(outs / "watch.err", "w"),  # noqa: SIM115
            preexec_fn=ctrl_c_able,
        )
    children = _children(args, root, outs, start, faults)
    for _, p in children:
        p.start()
    failed = _join(children, start + args.seconds)
    elapsed = time.time() - start
    watch_state = _stop_watcher(watch)
    if "damage-index" in faults:
        _damage_index(root)
    elif watch is None:
        Vault.open(root).recall("catch up", limit=1)  # without a watcher, a search syncs
    acks, readers, cons = _collect(args, outs, failed)
    watch_errors, watch_invalid = _watch_events(outs / "watch.jsonl")
    result = verify(root, acks)
    counts = Counter(a["op"] for a in acks)
    worst = max(readers, key=lambda r: r["worst"]) if readers else None
    result.update(
        {
            "seconds": round(elapsed, 1),
            "ops_per_s": {
                k: round(v / elapsed, 2)
                for k, v in sorted(counts.items())
                if k not in ("error", "fault")
            },
            "failed_children": failed,
            "child_tracebacks": _tracebacks(children, outs),
            "write_errors": counts.get("error", 0),
            "write_error_samples": [a["error"] for a in acks if a["op"] == "error"][:5],
            "reads": sum(r["count"] for r in readers),
            "read_errors": sum(r["errors"] for r in readers),
            "reads_per_s": round(sum(r["count"] for r in readers) / elapsed, 2),
            "worst_reader_wait_s": round(worst["worst"], 3) if worst else 0.0,
            "worst_reader_wait_at_s": worst["worst_at"] if worst else None,
            "read_errors_at_s": sorted(t for r in readers for t in r.get("error_at", []))[:20],
            "reader_p50_s": round(max((r.get("p50", 0.0) for r in readers), default=0.0), 3),
            "consolidations": cons["runs"],
            "consolidation_errors": cons["errors"],
            "watcher": watch_state,
            "watch_errors": watch_errors,
            "watch_invalid_files": watch_invalid[:5],
            "faults_injected": sorted(
                {a["fault"] for a in acks if a["op"] == "fault"}
                | ({"consolidation-error"} & set(faults) if cons["errors"] else set())
                | ({"damage-index"} & set(faults))
            ),
        }
    )
    result["problems"] = problems_of(result, args)
    result["ok"] = not result["problems"]
    if args.keep:
        result["vault"] = str(root)
    else:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return result


def problems_of(r: dict[str, Any], args: argparse.Namespace) -> list[str]:
    """Every reason the run is not ok; empty means ok."""
    checks = [
        (
            not r["failed_children"],
            f"child processes failed: {r['failed_children']}"
            + "".join(
                f"; {name}: {text.splitlines()[-1]}" for name, text in r["child_tracebacks"].items()
            ),
        ),
        (r["write_errors"] == 0, f"{r['write_errors']} write error(s)"),
        (r["read_errors"] == 0, f"{r['read_errors']} read error(s)"),
        (r["consolidation_errors"] == 0, f"{r['consolidation_errors']} consolidation error(s)"),
        (
            r["consolidations"] + r["consolidation_errors"] > 0
            or args.seconds <= args.consolidate_every,
            "no consolidation ran",
        ),
        (r["lost"] == 0, f"{r['lost']} acknowledged write(s) lost or not committed"),
        (r["lost_turns"] == 0, f"{r['lost_turns']} acknowledged turn(s) missing"),
        (r["resurrected"] == 0, f"{r['resurrected']} forgotten memory(ies) came back"),
        (not r["duplicate_ids"], f"ids on more than one file: {r['duplicate_ids']}"),
        (r["corrupt"] == 0, f"{r['corrupt']} invalid or half-written file(s)"),
        (r["fsck_ok"], "git fsck failed"),
        (r["worktree_clean"], f"uncommitted changes: {r['worktree_changes']}"),
        (r["doctor_ok"], f"doctor: {r['doctor_problems']}"),
        (r["index_matches_files"], f"index health: {r['index_notes']}"),
        (r["watcher"] in ("ok", "not run"), f"watcher: {r['watcher']}"),
        (r["watch_errors"] == 0, f"{r['watch_errors']} watcher reindex error(s)"),
        (not r["watch_invalid_files"], f"watcher saw invalid files {r['watch_invalid_files']}"),
        (
            r["worst_reader_wait_s"] <= args.max_reader_wait,
            f"a reader waited {r['worst_reader_wait_s']} s (limit {args.max_reader_wait} s)",
        ),
        (sum(r["acknowledged"].values()) > 0, "no write was acknowledged: nothing was tested"),
        (r["reads"] > 0 or args.readers == 0, "no read completed: nothing was measured"),
    ]
    return [why for passed, why in checks if not passed]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument("--consolidate-every", type=float, default=10)
    parser.add_argument("--max-reader-wait", type=float, default=5.0, help="seconds (default 5)")
    parser.add_argument("--no-watch", action="store_true", help="don't run memvault watch")
    parser.add_argument("--embedder", default=None, help="e.g. fake (default: the real model)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the vault folder")
    parser.add_argument(
        "--inject-fault",
        default="",
        metavar="FAULT[,FAULT]",
        help=f"break something on purpose to prove the harness notices: {', '.join(FAULTS)}",
    )
    args = parser.parse_args()
    faults = [f for f in args.inject_fault.split(",") if f]
    unknown = [f for f in faults if f not in FAULTS]
    if unknown:
        parser.error(f"unknown fault(s) {unknown}; expected some of {', '.join(FAULTS)}")
    if args.writers < 1:
        parser.error("--writers must be at least 1")
    if args.embedder:
        os.environ["MEMVAULT_EMBEDDER"] = args.embedder
    result = run(args, faults)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"stress {result['seconds']} s: {args.writers} writers, {args.readers} readers, "
            f"{'no watcher' if args.no_watch else 'watcher'}, "
            f"consolidation every {args.consolidate_every} s"
            + (f"; injected faults: {', '.join(result['faults_injected'])}" if faults else "")
        )
        ops = ", ".join(f"{k} {v}" for k, v in result["ops_per_s"].items())
        print(f"ops/s: {ops}; reads {result['reads_per_s']}/s")
        print(
            f"reader latency p50 {result['reader_p50_s']} s, worst {result['worst_reader_wait_s']}"
            f" s (at {result['worst_reader_wait_at_s']} s); consolidations "
            f"{result['consolidations']}"
        )
        print(
            f"errors: write {result['write_errors']}, read {result['read_errors']}, "
            f"consolidation {result['consolidation_errors']}, watcher {result['watch_errors']}; "
            f"failed children {len(result['failed_children'])}"
        )
        print(
            f"lost {result['lost']}, lost turns {result['lost_turns']}, corrupt "
            f"{result['corrupt']}, fsck {'ok' if result['fsck_ok'] else 'FAILED'}, doctor "
            f"{'ok' if result['doctor_ok'] else 'FAILED'}, work tree "
            f"{'clean' if result['worktree_clean'] else 'DIRTY'}, index matches files: "
            f"{result['index_matches_files']}"
        )
        for why in result["problems"]:
            print(f"  problem: {why}")
        print("OK" if result["ok"] else "PROBLEMS FOUND")
    sys.exit(0 if result["ok"] else 1)


if __name__ == "__main__":
    main()
