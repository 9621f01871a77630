#!/usr/bin/env python3
"""Crash harness: SIGKILL memvault at random moments, then prove the vault recovers.

Each trial starts one real `memvault` process (add, import, reindex or consolidate) on
the same vault, kills it with SIGKILL after a random delay, and then checks, with the
next ordinary commands (`recall`, `doctor`, `list`) and git. A trial fails when:

- a trial command that was not killed exited non-zero, or a check command did;
- the next command needs help (stale locks and git's index.lock must be recovered);
- the first search after the crash serves a memory that is not committed (a dead
  writer's files, which the next writer rolls back: the search showed what never was);
- a file does not parse, `git fsck` complains, `memvault doctor` reports a problem, or the
  index health (after that first search) has any note that is not informational
  ("damaged", "behind", "not built", an embedder mismatch...);
- a write that was acknowledged (exit 0 before the kill) is missing, is not committed
  (its file is not in HEAD or differs from it), or no longer holds its text;
- the work tree is left dirty (a killed multi-file operation nobody rolled back).

`ok` (exit 0) needs every trial to pass.

    python bench/crash.py --trials 100     # the real model
    python bench/crash.py --trials 10 --embedder fake --json

Self-test: --inject-fault runs one trial (the middle one) with a fault, to show the
harness notices (the run must exit 1):

    skip-commit    the trial's command writes a memory file, exits 0, never commits
    dirty-tree     the trial's command leaves an untracked file in the vault, exits 0
    exit-nonzero   the trial's command fails (`memvault show` of an id that does not exist)
    damage-index   the index manifest is torn between the check's search and its doctor
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
from typing import Any

OPS = ("add", "import", "reindex", "consolidate")
FAULTS = ("skip-commit", "dirty-tree", "exit-nonzero", "damage-index")
# Index health notes that say nothing is wrong (index/service.py: the manifest names an
# older commit whose files are the same as HEAD's). Every other note is a failure.
INFORMATIONAL_NOTES = ("(same files)",)
MEMVAULT = [sys.executable, "-m", "memvault"]
# What a trial's check can find wrong, in the order it looks.
KINDS = ("failed_commands", "dirty_reads", "corrupt", "index", "lost")


def memvault(root: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MEMVAULT, "--vault", str(root), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)


def start(root: Path, op: str, n: int, tmp: Path) -> tuple[subprocess.Popen[str], dict[str, str]]:
    """Start trial ``n``'s command; returns it and the writes it acknowledges by exiting 0."""
    if op == "add":
        content = f"crash trial {n}: the deploy of service {n} went sideways"
        args = ["add", "episode", content, "--id", f"crash-{n}"]
        expect = {f"crash-{n}": content}
    elif op == "import":
        path = tmp / f"import-{n}.jsonl"
        expect = {f"imp-{n}-{i}": f"imported fact {i} of batch {n}" for i in range(100)}
        with open(path, "w", encoding="utf-8") as handle:
            for mid, content in expect.items():
                record = {"id": mid, "type": "semantic", "category": "facts", "content": content}
                handle.write(json.dumps(record) + "\n")
        args = ["import", str(path)]
    elif op == "reindex":
        args = ["reindex", "--full"]
        expect = {}
    elif op == "consolidate":
        args = ["consolidate", "--only", "fold,decay,dedup,supersede"]
        expect = {}
    else:
        return _start_fault(root, op, n)
    proc = subprocess.Popen(
        [*MEMVAULT, "--vault", str(root), "-q", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, expect


def _start_fault(root: Path, fault: str, n: int) -> tuple[subprocess.Popen[str], dict[str, str]]:
    """A trial command that breaks what the harness guards (see --inject-fault)."""
    expect: dict[str, str] = {}
    if fault == "skip-commit":
        mid = f"crash-fault-{n}"
        content = f"fault trial {n}: acknowledged and never committed"
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        text = (
            f"---\nid: {mid}\ntype: semantic\ncategory: facts\nstatus: active\nscope: team\n"
            f"created: {created}\n---\n\n{content}\n"
        )
        path = root / "semantic" / "facts" / f"{mid}.md"
        code = f"import pathlib; pathlib.Path({str(path)!r}).write_text({text!r})"
        cmd = [sys.executable, "-c", code]
        expect = {mid: content}
    elif fault == "dirty-tree":
        path = root / f"scratch-{n}.txt"
        cmd = [sys.executable, "-c", f"import pathlib; pathlib.Path({str(path)!r}).write_text('x')"]
    elif fault == "exit-nonzero":
        cmd = [*MEMVAULT, "--vault", str(root), "-q", "show", f"no-such-memory-{n}"]
    else:  # damage-index: the command is harmless, check() tears the manifest
        cmd = [*MEMVAULT, "--vault", str(root), "-q", "list", "--json"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, expect


def unhealthy(notes: list[str]) -> list[str]:
    """The index health notes that report a problem (all but the informational ones)."""
    return [n for n in notes if not any(mark in n for mark in INFORMATIONAL_NOTES)]


def _tail(res: subprocess.CompletedProcess[str]) -> str:
    return (res.stderr.strip() or res.stdout.strip())[-300:]


def committed_paths(root: Path) -> tuple[set[str], set[str]]:
    """(paths in HEAD, paths whose work-tree state differs from HEAD, untracked included)."""
    head = set(git(root, "ls-tree", "-r", "--name-only", "-z", "HEAD").stdout.split("\0"))
    status = git(root, "status", "--porcelain", "-z", "--untracked-files=all").stdout
    # -z entries are "XY path"; a rename adds its source as the next entry (not needed here).
    pending = {entry[3:] for entry in status.split("\0") if len(entry) > 3}
    return head - {""}, pending


def check(
    root: Path, acked: dict[str, str], query: str = "deploy", damage_index: bool = False
) -> dict[str, list[str]]:
    """Problems after a trial, by kind (failed_commands, dirty_reads, corrupt, index, lost),
    and the ids of the lost writes under ``lost_ids``."""
    out: dict[str, list[str]] = {k: [] for k in (*KINDS, "lost_ids")}
    head, pending = committed_paths(root)  # as the crash left it, before anyone recovers
    res = memvault(root, "recall", query, "--json", "--limit", "20")
    if res.returncode != 0:
        out["failed_commands"].append(f"recall exited {res.returncode}: {_tail(res)}")
    else:
        try:
            hits = json.loads(res.stdout)["hits"]
        except (json.JSONDecodeError, KeyError, TypeError):
            out["failed_commands"].append("recall --json printed no result")
        else:
            # Nothing here edits by hand: an uncommitted file is a dead writer's, which the
            # next command rolls back; serving it shows a memory that will not exist. A file
            # the recall itself put back (clean after it) was served as committed.
            _, still_pending = committed_paths(root)
            new = [h["id"] for h in hits if h["path"] not in head]
            edited = [
                h["id"]
                for h in hits
                if h["path"] in head and h["path"] in pending and h["path"] in still_pending
            ]
            for ids, what in ((new, "never committed"), (edited, "with uncommitted changes")):
                if ids:
                    out["dirty_reads"].append(
                        f"recall served {len(ids)} memories {what}: {ids[:5]}"
                    )
    if damage_index:
        (root / ".memvault" / "index" / "manifest.json").write_text("{ torn", encoding="utf-8")
    doc = memvault(root, "doctor", "--json")
    if doc.returncode != 0:
        out["failed_commands"].append(f"doctor exited {doc.returncode}: {_tail(doc)}")
    try:
        report = json.loads(doc.stdout)
        out["corrupt"] += [p["text"] for p in report["problems"]]
        out["index"] += [f"index: {n}" for n in unhealthy(report.get("notes", []))]
    except (json.JSONDecodeError, KeyError, TypeError):
        out["failed_commands"].append(f"doctor --json printed no report: {_tail(doc)}")
    fsck = git(root, "fsck", "--no-progress")
    if fsck.returncode != 0:
        out["corrupt"].append(f"git fsck: {fsck.stdout.strip()[-300:]}{fsck.stderr.strip()[-300:]}")
    listed = memvault(root, "list", "--json", "--status", "any", "--include-archive")
    if listed.returncode != 0:
        # Without the list there is no telling what is lost: the failure is the finding.
        out["failed_commands"].append(f"list exited {listed.returncode}: {_tail(listed)}")
        return out
    paths = {m["id"]: m["path"] for m in json.loads(listed.stdout)}
    head, pending = committed_paths(root)
    missing, uncommitted, changed_text = [], [], []
    for mid, content in sorted(acked.items()):
        path = paths.get(mid)
        if path is None:
            missing.append(mid)
        elif path not in head or path in pending:
            uncommitted.append(mid)
        elif content not in (root / path).read_text(encoding="utf-8"):
            changed_text.append(mid)
    for ids, what in ((missing, "missing"), (uncommitted, "not committed")):
        if ids:
            out["lost"].append(f"{len(ids)} acknowledged write(s) {what}: {ids[:5]}")
    if changed_text:
        n = len(changed_text)
        out["lost"].append(f"{n} acknowledged write(s) lost their text: {changed_text[:5]}")
    out["lost_ids"] = missing + uncommitted + changed_text
    return out


def dirty(root: Path) -> list[str]:
    """Uncommitted changes left in the work tree after the check commands ran (a killed
    multi-file operation that no later command rolled back or finished)."""
    out = git(root, "status", "--porcelain", "--untracked-files=all").stdout
    return [line for line in out.splitlines() if line.strip()]


def trial(
    root: Path, tmp: Path, n: int, op: str, delay: float | None, acked: dict[str, str]
) -> tuple[int, dict[str, list[str]]]:
    """Run trial ``n`` (kill its command after ``delay`` s; None: let it finish), add what it
    acknowledged to ``acked``, check the vault. Returns (exit code, problems by kind; the
    trial command's own failure under ``command``, the dirty work tree under ``dirty``)."""
    proc, expect = start(root, op, n, tmp)
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate()
    command = []
    if proc.returncode == 0:  # also a command that exited on its own just before the kill
        acked.update(expect)
    elif proc.returncode != -signal.SIGKILL:
        command.append(f"{op} exited {proc.returncode}: {(err.strip() or out.strip())[-300:]}")
    query = {"add": f"crash trial {n} deploy", "import": f"imported fact of batch {n}"}
    found = check(root, acked, query.get(op, "deploy"), damage_index=op == "damage-index")
    found["command"] = command
    left = dirty(root)
    found["dirty"] = [f"work tree left dirty ({len(left)} files): {left[:3]}"] if left else []
    return proc.returncode, found


def run(args: argparse.Namespace) -> dict[str, Any]:
    from memvault import Vault

    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="mv-crash-"))
    root = tmp / "v"
    Vault.init(root, examples=True)
    setup = memvault(root, "reindex")
    if setup.returncode != 0:
        sys.exit(f"setup: memvault reindex exited {setup.returncode}: {_tail(setup)}")
    fault_trial = args.trials // 2 if args.inject_fault else -1
    acked: dict[str, str] = {}
    exits: dict[str, Counter[str]] = {"killed": Counter(), "finished": Counter()}
    failures: list[dict[str, Any]] = []
    kinds: Counter[str] = Counter()
    lost: set[str] = set()
    t0 = time.time()
    for n in range(args.trials):
        op = OPS[n % len(OPS)] if n < len(OPS) else rng.choice(OPS)
        delay: float | None = rng.uniform(0.05, args.max_delay)
        if n == fault_trial:  # never killed: the fault must get to do its damage
            op, delay = args.inject_fault, None
        code, found = trial(root, tmp, n, op, delay, acked)
        exits["killed" if code == -signal.SIGKILL else "finished"][op] += 1
        problems = [p for kind in ("command", *KINDS, "dirty") for p in found[kind]]
        for kind in ("command", *KINDS, "dirty"):
            kinds[kind] += bool(found[kind])
        lost.update(found["lost_ids"])
        if problems:
            failures.append({"trial": n, "op": op, "problems": problems[:5]})
        if args.progress:
            state = "killed" if code == -signal.SIGKILL else f"exit {code}"
            print(
                f"trial {n:3d} {op:12s} {state:8s} after {delay or 0:.2f} s: "
                f"{'OK' if not problems else problems[0][:200]} ({time.time() - t0:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
    if not args.keep:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return {
        "trials": args.trials,
        "fault_injected": args.inject_fault or None,
        "killed": dict(exits["killed"]),
        "finished": dict(exits["finished"]),
        "acknowledged_writes": len(acked),
        "lost": len(lost),  # acknowledged writes any check found missing or changed
        "failed_trials": len(failures),
        "failed_command_trials": kinds["command"],
        "failed_check_trials": kinds["failed_commands"],
        "dirty_read_trials": kinds["dirty_reads"],
        "corrupt_trials": kinds["corrupt"],
        "index_problem_trials": kinds["index"],
        "lost_write_trials": kinds["lost"],
        "dirty_worktree_trials": kinds["dirty"],
        "failures": failures[:10],
        "seconds": round(time.time() - t0, 1),
        "ok": args.trials > 0 and not failures,
        **({"vault": str(root)} if args.keep else {}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--max-delay", type=float, default=2.5, help="kill within this many s")
    parser.add_argument("--embedder", default=None, help="e.g. fake (default: the real model)")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--progress", action="store_true", help="one line per trial on stderr")
    parser.add_argument("--keep", action="store_true", help="keep the vault folder")
    parser.add_argument(
        "--inject-fault",
        choices=FAULTS,
        default=None,
        help="run the middle trial with a fault, to prove the harness notices",
    )
    args = parser.parse_args()
    if args.embedder:
        os.environ["MEMVAULT_EMBEDDER"] = args.embedder
    result = run(args)
    if args.json:
        print(json.dumps(result))
    else:
        fault = f" (fault injected: {args.inject_fault})" if args.inject_fault else ""
        print(
            f"crash harness: {args.trials} trials in {result['seconds']} s{fault}; "
            f"killed {result['killed']}, finished {result['finished']}"
        )
        print(
            f"acknowledged writes {result['acknowledged_writes']}, lost {result['lost']}; "
            f"failed trials {result['failed_trials']}: commands exiting non-zero "
            f"{result['failed_command_trials']} (checks {result['failed_check_trials']}), "
            f"uncommitted memories served {result['dirty_read_trials']}, corrupt "
            f"{result['corrupt_trials']}, index problems {result['index_problem_trials']}, "
            f"lost writes {result['lost_write_trials']}, dirty work tree "
            f"{result['dirty_worktree_trials']}"
        )
        for f in result["failures"]:
            print(f"  trial {f['trial']} ({f['op']}): {f['problems'][0]}")
        print("OK" if result["ok"] else "PROBLEMS FOUND")
    sys.exit(0 if result["ok"] else 1)


if __name__ == "__main__":
    main()
