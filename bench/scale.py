"""How every everyday command grows with the vault: 1,000, 10,000 and 100,000 memories.

For each size a fresh vault is built through the real paths (``memvault init``, then
``memvault import`` of generated conversation turns, facts and procedures -- see
``bench/scaledata.py``), and the real console script is timed, one process per command,
as an agent or a person runs it:

* ``import_s`` / ``import_per_s``: ``memvault import data.jsonl`` into the empty vault;
* ``reindex_full_s``: ``memvault reindex --full`` (the vault's embedder; ``--embedder fake``
  leaves the model out); ``reindex_incremental_s``: ``memvault reindex`` after one hand edit;
* ``add_s``, ``git_s``, ``add_vs_git``: ``memvault add`` against a bare ``git add && git
  commit`` of one file in the same vault, interleaved (medians);
* ``show_s``, ``list_s`` (``list --json``), ``doctor_s`` (``doctor --json``);
* ``recall_cold_s``: ``memvault recall`` in a new process (median of several questions);
  ``recall_after_add_s``: the first one after the adds (the index catches up);
  ``recall_warm_s``: in one process, after a first question (what the MCP server serves);
* ``hooks_commit_s``: a bare ``git commit`` of one file with ``memvault hooks install``-ed
  hooks; ``hooks_post_commit_s``: what they add to ``git_s``;
* ``consolidate_dry_s`` (``consolidate --dry-run``) and ``consolidate_s`` (apply);
* ``sync_s``: one new memory from one clone to another through a bare remote (``memvault
  sync`` in each: push, then pull and reindex), once the second clone has run a command
  (its first, ``clone_first_list_s``, parses every file into its catalog;
  ``clone_first_reindex_s`` the reindex after it, the clone's files being newer than the
  copied index's record);
* ``rss_mb``: peak resident memory of each command; ``peak_rss_mb`` the largest.

``growth_10k_to_100k`` divides the time at 100,000 by the time at 10,000, one key per
command. Targets at 100,000 (exit 1 when one is missed): ``import_per_s`` >= 500,
``add_vs_git`` <= 2.0, ``recall_cold_s`` <= 1.0, ``doctor_s`` <= 15, ``consolidate_s`` <= 600;
growth <= 12x, or <= 15x for keys holding ``reindex`` or ``consolidate``.

Every command must succeed (a non-zero exit stops the run with exit 1: ``doctor`` finding a
problem included) and say something: every ``recall`` (cold, warm, after the adds) must
return at least one hit (``recall_hits_min``, gated >= 1 at every size), ``list --json``
must list every memory imported, ``show`` must print the memory asked for.

``--inject-fault`` breaks a run on purpose to show the bench notices: ``doctor-fails`` (an
invalid memory file before ``doctor``), ``recall-empty`` (every recall asked as of
1900-01-01, when nothing was true yet: hits empty, exit 0).

The machine is shared: compare ratios measured in the same run; ``load`` records the load
average before and after each size.

    python bench/scale.py --json                       # 1k, 10k, 100k (about an hour)
    python bench/scale.py --sizes 1000,10000 --json    # quick
    python bench/scale.py --sizes 1000 --embedder fake # smoke test
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "bench"))  # after site-packages: bench/mcp.py is no SDK

from scaledata import records  # noqa: E402

FAULTS = ("doctor-fails", "recall-empty")
TARGETS = {
    "import_per_s": (">=", 500.0),
    "add_vs_git": ("<=", 2.0),
    "recall_cold_s": ("<=", 1.0),
    "doctor_s": ("<=", 15.0),
    "consolidate_s": ("<=", 600.0),
}
# Gated at every size, not only the largest: content, not speed.
EVERY_SIZE = {"recall_hits_min": (">=", 1)}
GROWTH_KEYS = (
    "import_s",
    "add_s",
    "show_s",
    "recall_cold_s",
    "recall_warm_s",
    "list_s",
    "doctor_s",
    "reindex_incremental_s",
    "reindex_full_s",
    "consolidate_dry_s",
    "consolidate_s",
    "hooks_commit_s",
    "sync_s",
    "peak_rss_mb",
)
QUESTIONS = [
    "When did Caroline go to the support group?",
    "What does Melanie's daughter do?",
    "Which database does the billing service use?",
    "How do I roll back a bad checkout deploy?",
    "Who is the on-call lead for payments?",
    "What is the rate limit of the search API?",
    "Where did Jon travel last summer?",
    "What pet does Gina have?",
    "Who owns the ledger service?",
    "What book was Maria reading?",
]
WARM = """
import json, sys, time
from memvault import Vault
vault = Vault.open(sys.argv[1])
questions = json.loads(sys.argv[2])
as_of = sys.argv[3] or None
first = vault.recall(questions[0], log=False, as_of=as_of)
out = []
for q in questions[1:]:
    start = time.perf_counter()
    hits = vault.recall(q, log=False, as_of=as_of)
    out.append([time.perf_counter() - start, len(hits)])
print(json.dumps({"seconds": [s for s, _ in out], "hits": [len(first)] + [n for _, n in out]}))
"""


def _env(embedder: str | None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMVAULT_", "GIT_")) and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="Bench",
        GIT_AUTHOR_EMAIL="bench@example.com",
        GIT_COMMITTER_NAME="Bench",
        GIT_COMMITTER_EMAIL="bench@example.com",
        HF_HUB_OFFLINE=env.get("HF_HUB_OFFLINE", "1"),
    )
    if embedder:
        env["MEMVAULT_EMBEDDER"] = embedder
    return env


class Runner:
    """Runs commands, timing each and keeping its peak resident memory; every command must
    exit 0 (or a code listed in ``ok``), else the run stops with exit 1."""

    def __init__(self, env: dict[str, str], work: Path, fault: str | None = None) -> None:
        self.env = env
        self.work = work
        self.fault = fault
        self.rss: dict[str, float] = {}
        exe = Path(sys.executable).parent / "memvault"
        self.mv = [str(exe)] if exe.exists() else [sys.executable, "-m", "memvault"]

    def run(
        self, name: str, cmd: list[str], cwd: Path | None = None, ok: tuple[int, ...] = (0,)
    ) -> tuple[float, str]:
        """Wall seconds and stdout of ``cmd``; its peak RSS (MB) goes to ``rss[name]``."""
        out_path, err_path = self.work / "out.txt", self.work / "err.txt"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            start = time.perf_counter()
            proc = subprocess.Popen(
                cmd, cwd=cwd, env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=err
            )
            _, status, usage = os.wait4(proc.pid, 0)
            elapsed = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        self.rss[name] = max(self.rss.get(name, 0.0), usage.ru_maxrss / 1024)
        if proc.returncode not in ok:
            tail = err_path.read_text(errors="replace")[-1500:]
            raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{tail}")
        return elapsed, out_path.read_text(errors="replace")

    def memvault(self, name: str, vault: Path, *args: str, ok: tuple[int, ...] = (0,)) -> float:
        return self.run(name, [*self.mv, "--vault", str(vault), *args], ok=ok)[0]

    def recall(self, vault: Path, question: str, hits: list[int], name: str = "recall") -> float:
        """Seconds of one ``memvault recall --json``; the number of hits goes to ``hits``."""
        args = ["--as-of", "1900-01-01"] if self.fault == "recall-empty" else []
        seconds, out = self.run(
            name, [*self.mv, "--vault", str(vault), "recall", question, "--json", *args]
        )
        hits.append(len(json.loads(out)["hits"]))
        return seconds

    def git(self, cwd: Path, *args: str) -> str:
        return self.run("git", ["git", *args], cwd=cwd)[1]


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def build(run: Runner, size: int, data: Path, vault: Path) -> dict[str, float]:
    with open(data, "w", encoding="utf-8") as out:
        for record in itertools.islice(records(size), size):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    run.run("init", [*run.mv, "init", str(vault)])
    import_s = run.memvault("import", vault, "import", str(data), "--json")
    full_s = run.memvault("reindex_full", vault, "reindex", "--full", "--json")
    return {"import_s": import_s, "import_per_s": size / import_s, "reindex_full_s": full_s}


def everyday(run: Runner, vault: Path, ids: list[str], repeat: int, size: int) -> dict[str, float]:
    """list, show, recall cold and warm, add against git, the recall after adds, doctor."""
    rng = random.Random(5)
    run.memvault("warmup", vault, "list", "--json")  # page cache, catalog
    out: dict[str, float] = {}
    lists = [run.run("list", [*run.mv, "--vault", str(vault), "list", "--json"]) for _ in range(3)]
    out["list_s"] = _median([seconds for seconds, _ in lists])
    out["list_count"] = len(json.loads(lists[0][1]))
    if out["list_count"] < size:
        raise SystemExit(f"list --json listed {out['list_count']} of {size} memories imported")
    shows = []
    for mid in (rng.choice(ids) for _ in range(repeat)):
        seconds, text = run.run("show", [*run.mv, "--vault", str(vault), "show", mid])
        if f"({mid}," not in text:
            raise SystemExit(f"show {mid} did not print it:\n{text[:500]}")
        shows.append(seconds)
    out["show_s"] = _median(shows)
    hits: list[int] = []
    out["recall_cold_s"] = _median([run.recall(vault, q, hits) for q in QUESTIONS[:repeat]])
    as_of = "1900-01-01" if run.fault == "recall-empty" else ""
    warm = run.run(
        "recall_warm", [sys.executable, "-c", WARM, str(vault), json.dumps(QUESTIONS), as_of]
    )
    warm_out = json.loads(warm[1])
    out["recall_warm_s"] = _median(warm_out["seconds"])
    hits += warm_out["hits"]
    adds, gits = [], []
    for i in range(repeat):  # interleaved: both see the same repository and load
        text = f"Scale bench fact {i}: the {rng.choice(['ledger', 'search'])} cache holds {i} GB"
        adds.append(run.memvault("add", vault, "add", "fact", text, "--tag", "bench"))
        rel = f"semantic/facts/bare-git-{i}.md"
        body = f"---\nid: bare-git-{i}\ntype: semantic\n---\n\n{text} (bare)\n"
        start = time.perf_counter()
        (vault / rel).write_text(body, encoding="utf-8")
        run.git(vault, "add", "--", rel)
        run.git(vault, "commit", "-q", "-m", f"bare {i}")
        gits.append(time.perf_counter() - start)
    out["add_s"], out["git_s"] = _median(adds), _median(gits)
    out["add_vs_git"] = out["add_s"] / out["git_s"]
    out["recall_after_add_s"] = run.recall(vault, QUESTIONS[0], hits)
    out["recall_hits_min"] = min(hits)
    if run.fault == "doctor-fails":
        bad = "---\nid: scale-bench-broken\ntype: semantic\nimportance: 99\n---\n\nBroken\n"
        (vault / "semantic" / "facts" / "scale-bench-broken.md").write_text(bad)
    out["doctor_s"] = run.memvault("doctor", vault, "doctor", "--json")
    return out


def maintenance(run: Runner, vault: Path, repeat: int, git_s: float) -> dict[str, float]:
    """Incremental reindex after a hand edit, hooks' commit cost, consolidation."""
    out: dict[str, float] = {}
    edited = sorted((vault / "semantic" / "facts").iterdir())[0]
    with open(edited, "a", encoding="utf-8") as handle:
        handle.write("\nEdited by hand: the limit was raised last week.\n")
    out["reindex_incremental_s"] = run.memvault("reindex_incremental", vault, "reindex")
    run.git(vault, "commit", "-qam", "hand edit")
    run.memvault("hooks", vault, "hooks", "install")
    hooked = []
    for i in range(repeat):
        rel = f"semantic/facts/hooked-{i}.md"
        (vault / rel).write_text(f"---\nid: hooked-{i}\ntype: semantic\n---\n\nHooked {i}\n")
        start = time.perf_counter()
        run.git(vault, "add", "--", rel)
        run.git(vault, "commit", "-q", "-m", f"hooked {i}")
        hooked.append(time.perf_counter() - start)
    run.memvault("hooks", vault, "hooks", "uninstall")
    run.memvault("reindex", vault, "reindex")  # waits for a background reindex to finish
    out["hooks_commit_s"] = _median(hooked)
    out["hooks_post_commit_s"] = out["hooks_commit_s"] - git_s
    dry = ("consolidate", "--dry-run", "--no-diff", "--json")
    out["consolidate_dry_s"] = run.memvault("consolidate_dry", vault, *dry)
    out["consolidate_s"] = run.memvault("consolidate", vault, "consolidate", "--json")
    return out


def sync(run: Runner, vault: Path, work: Path) -> dict[str, float]:
    """One new memory from the vault to a second clone through a bare remote."""
    origin, other = work / "origin.git", work / "other"
    run.git(work, "clone", "-q", "--bare", str(vault), str(origin))
    run.git(vault, "remote", "add", "origin", str(origin))
    run.git(vault, "fetch", "-q", "origin")
    run.git(vault, "branch", "-q", "--set-upstream-to=origin/main")
    run.git(work, "clone", "-q", str(origin), str(other))
    # the clone's search index is derived: a copy of the first vault's (same commit) spares
    # an embedding of everything; its first command still reads every file once (the
    # catalog of parsed files is per clone): timed apart, then the sync as it runs each day
    shutil.copytree(vault / ".memvault" / "index", other / ".memvault" / "index")
    first_list = run.memvault("catalog", other, "list", "--json")
    first = run.memvault("reindex", other, "reindex", "--json")
    run.memvault("add", vault, "add", "fact", "Synced fact: the gateway moved to eu-west-1")
    push = run.memvault("sync", vault, "sync", "--json")
    pull = run.memvault("sync", other, "sync", "--json")
    found = list((other / "semantic").rglob("synced-fact-*.md"))
    if not found:
        raise SystemExit("sync: the new memory did not reach the other clone")
    return {
        "clone_first_list_s": first_list,
        "clone_first_reindex_s": first,
        "sync_push_s": push,
        "sync_pull_s": pull,
        "sync_s": push + pull,
    }


def measure(
    size: int, base: Path, embedder: str | None, repeat: int, fault: str | None = None
) -> dict[str, Any]:
    work = base / str(size)
    work.mkdir(parents=True)
    run = Runner(_env(embedder), work, fault)
    vault, data = work / "vault", work / "data.jsonl"
    load_before = os.getloadavg()[0]
    result: dict[str, Any] = {"memories": size}
    result.update(build(run, size, data, vault))
    with open(data, encoding="utf-8") as lines:
        ids = [json.loads(line)["id"] for line in itertools.islice(lines, 0, size, 97)]
    result.update(everyday(run, vault, ids, repeat, size))
    result.update(maintenance(run, vault, max(3, repeat // 2), result["git_s"]))
    result.update(sync(run, vault, work))
    result["rss_mb"] = {k: round(v, 1) for k, v in sorted(run.rss.items()) if k != "git"}
    result["peak_rss_mb"] = max(result["rss_mb"].values())
    result["load"] = {"before": load_before, "after": os.getloadavg()[0]}
    return result


def growth(small: dict[str, Any], big: dict[str, Any]) -> dict[str, float]:
    return {k: big[k] / small[k] for k in GROWTH_KEYS if small.get(k) and k in big}


def verdicts(report: dict[str, Any]) -> list[str]:
    """Targets missed (at the largest size measured, and in the 10k -> 100k growth; content
    at every size). A target's figure missing from the output misses it."""
    missed = []
    for size, figures in report["sizes"].items():
        for key, (op, limit) in EVERY_SIZE.items():
            value = figures.get(key)
            if value is None or not (value >= limit if op == ">=" else value <= limit):
                missed.append(f"{key} = {value} at {size} (target {op} {limit})")
    largest = report["sizes"][max(report["sizes"], key=int)]
    for key, (op, limit) in TARGETS.items():
        value = largest.get(key)
        if value is None:
            missed.append(f"{key} n/a: not measured (target {op} {limit})")
        elif not (value >= limit if op == ">=" else value <= limit):
            missed.append(f"{key} = {value:.3g} (target {op} {limit})")
    for key, ratio in report.get("growth_10k_to_100k", {}).items():
        limit = 15.0 if ("reindex" in key or "consolidate" in key) else 12.0
        if ratio > limit:
            missed.append(f"growth of {key} = {ratio:.1f}x (target <= {limit:g}x)")
    return missed


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated sizes")
    parser.add_argument("--embedder", help="MEMVAULT_EMBEDDER for every command (e.g. fake)")
    parser.add_argument("--repeat", type=int, default=7, help="runs per median (default 7)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--dir", type=Path, help="build the vaults here (default: a temp folder)")
    parser.add_argument("--keep", action="store_true", help="keep the vaults afterwards")
    parser.add_argument("--inject-fault", choices=FAULTS, help="break a run on purpose")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    import compileall

    compileall.compile_dir(str(ROOT / "src" / "memvault"), quiet=1)  # as pip does on install
    base = args.dir or Path(tempfile.mkdtemp(prefix="memvault-scale-"))
    report: dict[str, Any] = {"cpus": os.cpu_count(), "embedder": args.embedder or "vault default"}
    report["fault"] = args.inject_fault
    report["sizes"] = {}
    try:
        for size in sizes:
            report["sizes"][str(size)] = measure(
                size, base, args.embedder, args.repeat, args.inject_fault
            )
            print(f"size {size}: done", file=sys.stderr)
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(base, ignore_errors=True)
    if "10000" in report["sizes"] and "100000" in report["sizes"]:
        report["growth_10k_to_100k"] = growth(report["sizes"]["10000"], report["sizes"]["100000"])
    report["missed"] = verdicts(report)
    report["targets"] = {"at_largest": TARGETS, "at_every_size": EVERY_SIZE}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)
    sys.exit(1 if report["missed"] else 0)


def _print(report: dict[str, Any]) -> None:
    sizes = list(report["sizes"])
    keys = [k for k, v in report["sizes"][sizes[0]].items() if isinstance(v, float)]
    print(f"{'':24}" + "".join(f"{s:>12}" for s in sizes))
    for key in keys:
        print(f"{key:24}" + "".join(f"{report['sizes'][s].get(key, 0):12.3f}" for s in sizes))
    for key, ratio in report.get("growth_10k_to_100k", {}).items():
        print(f"growth {key:30} {ratio:6.1f}x")
    print("targets: " + ("all met" if not report["missed"] else "; ".join(report["missed"])))


if __name__ == "__main__":
    main()
