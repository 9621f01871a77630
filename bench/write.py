"""Benchmark memvault's write path and CLI latency on a vault of 10,000 memories.

Builds the vault quickly (files generated and committed in one commit through the API),
then measures, in the same run and the same repository:

* ``memvault add`` (the real console script, one process per add) median wall time, and its
  ratio to a bare ``git add && git commit`` of one file (target <= 1.5x);
* ``memvault list --json`` and ``memvault show ID`` medians;
* ``memvault --help`` median vs ``python -c pass`` (target <= 0.35 s absolute).

    python bench/write.py                    # 10,000 memories, human output
    python bench/write.py --n 2000 --repeat 5 --json
    python bench/write.py --profile          # also: where does one 'memvault add' spend its time

``--json`` prints one JSON object (add_vs_git_ratio, add_median_s, list_median_s,
show_median_s, help_median_s, python_pass_median_s, git_median_s, ...).
"""

from __future__ import annotations

import argparse
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
sys.path.insert(0, str(ROOT / "src"))

from memvault import Vault  # noqa: E402
from memvault.memory import CATEGORIES, format_time  # noqa: E402
from memvault.store.files import render_new  # noqa: E402

ADD_TARGET = 1.5  # an add may cost at most 1.5x a bare git add + commit of one file
HELP_TARGET = 0.35
WORDS = [
    "deploy",
    "database",
    "api",
    "cache",
    "queue",
    "latency",
    "release",
    "rollback",
    "migration",
    "schema",
    "index",
    "token",
    "budget",
    "customer",
    "invoice",
    "pricing",
    "churn",
    "retention",
    "feature",
    "flag",
    "staging",
    "production",
    "incident",
    "postmortem",
    "alert",
    "dashboard",
    "metric",
    "review",
    "decision",
    "owner",
    "team",
    "sprint",
    "roadmap",
    "backlog",
]


def _env() -> dict[str, str]:
    # An installed package has its bytecode compiled; PYTHONDONTWRITEBYTECODE (set in some
    # sandboxes) would make every run compile memvault from source and measure that instead.
    env = {
        k: v
        for k, v in os.environ.items()
        if (not k.startswith("MEMVAULT_") or k == "MEMVAULT_RUNTIME_DIR")
        and k != "PYTHONDONTWRITEBYTECODE"
    }
    # Keep the model out of it: only an 'add fact' that the conflict rule pairs with a fact in
    # force searches (memvault.conflicts; the word rule runs first, without a model).
    env["MEMVAULT_EMBEDDER"] = "fake"
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _memvault() -> list[str]:
    exe = Path(sys.executable).parent / "memvault"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "memvault"]


def _timed(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(
            f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}"
        )
    return elapsed


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def build_vault(path: Path, n: int, seed: int = 7) -> tuple[Vault, list[str], float]:
    """A vault of ``n`` memories of all kinds, written and committed in one commit."""
    start = time.perf_counter()
    vault = Vault.init(path)
    rng = random.Random(seed)
    writes: dict[str, str] = {}
    ids: list[str] = []
    base = time.time() - 400 * 86400
    for i in range(n):
        kind = ("episodic", "semantic", "semantic", "procedural", "episodic")[i % 5]
        when = format_time(_utc(base + i * 3000))
        title = f"{_sentence(rng, 5)} {i}"
        mid = f"m{i:05d}-" + "-".join(title.split()[:3])
        meta: dict[str, Any] = {
            "id": mid,
            "type": kind,
            "title": title,
            "scope": "team",
            "created": when,
            "importance": rng.randint(1, 5),
            "tags": rng.sample(WORDS, 2),
        }
        if kind == "semantic":
            meta["category"] = rng.choice(CATEGORIES["semantic"])
            meta["subject"] = f"bench.subject-{i}"
            meta["valid_from"] = when
        elif kind == "procedural":
            meta["category"] = rng.choice(CATEGORIES["procedural"])
            meta["steps"] = [_sentence(rng, 4) for _ in range(3)]
            meta["trigger"] = rng.sample(WORDS, 2)
        else:
            meta["category"] = "session"
            meta["outcome"] = rng.choice(["success", "failure", "partial"])
        body = "\n\n".join(_sentence(rng, 30) for _ in range(2)) + "\n"
        rel = vault.core.path_for(meta)
        writes[rel] = render_new(meta, body)
        ids.append(mid)
    with vault.locked():
        vault.core.commit_files(writes, f"bench: {n} memories")
    return vault, ids, time.perf_counter() - start


def _utc(ts: float) -> Any:
    import datetime as dt

    return dt.datetime.fromtimestamp(ts, dt.UTC)


def measure(vault: Vault, ids: list[str], repeat: int) -> dict[str, Any]:
    root = vault.root
    env = _env()
    import compileall

    compileall.compile_dir(str(ROOT / "src" / "memvault"), quiet=1)  # as pip does on install
    mv = _memvault()
    git_id = ["-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    rng = random.Random(11)

    # warm-up: page cache, catalog, git index
    for _ in range(2):
        _timed([*mv, "--vault", str(root), "list", "--json"], env=env)
        _timed(["git", "status", "--porcelain"], cwd=root)

    add, bare_git, lst, show, help_, py = [], [], [], [], [], []
    for i in range(repeat):
        # interleave the two writes so both see the same repository state and machine load
        text = f"Benchmark fact number {i}: {_sentence(rng, 12)}"
        add.append(
            _timed([*mv, "--vault", str(root), "add", "fact", text, "--tag", "bench"], env=env)
        )

        rel = f"semantic/facts/bare-git-{i}.md"
        start = time.perf_counter()
        (root / rel).write_text(render_new({"id": f"bare-git-{i}", "type": "semantic"}, text))
        subprocess.run(["git", "add", "--", rel], cwd=root, check=True, capture_output=True)
        subprocess.run(
            ["git", *git_id, "commit", "-q", "-m", f"bare {i}"],
            cwd=root,
            check=True,
            capture_output=True,
        )
        bare_git.append(time.perf_counter() - start)

    for _ in range(repeat):
        lst.append(_timed([*mv, "--vault", str(root), "list", "--json"], env=env))
        show.append(_timed([*mv, "--vault", str(root), "show", rng.choice(ids)], env=env))
        help_.append(_timed([*mv, "--help"], env=env))
        py.append(_timed([sys.executable, "-c", "pass"], env=env))

    med = statistics.median
    return {
        "n": len(ids),
        "repeat": repeat,
        "add_median_s": med(add),
        "git_median_s": med(bare_git),
        "add_vs_git_ratio": med(add) / med(bare_git),
        "add_target_ratio": ADD_TARGET,
        "list_median_s": med(lst),
        "show_median_s": med(show),
        "help_median_s": med(help_),
        "help_target_s": HELP_TARGET,
        "python_pass_median_s": med(py),
        "add_min_s": min(add),
        "add_max_s": max(add),
        "git_min_s": min(bare_git),
        "list_max_s": max(lst),
    }


# The script is split into adjacent literals only to keep source lines within 100 columns:
# the text that runs is the same as one literal would hold.
PROFILE_SCRIPT = (
    r"""
import json, sys, time
t0 = time.perf_counter()
import memvault.store.git.ops as g, memvault.store.catalog as c
import memvault.store.files as f, memvault.vault as v, memvault.core as co
import memvault.conflicts as cf
calls = []
real_run = g.run_git
def run_git(root, args, **kw):
    s = time.perf_counter(); r = real_run(root, args, **kw)
    calls.append(["git " + args[0], time.perf_counter() - s]); return r
g.run_git = run_git
for mod, name in ((c.Catalog, "scan"), (c.Catalog, "refresh"), (f, "atomic_write"),
                  (v.Vault, "add"), (v.Vault, "open"), (co.Core, "commit_files"),
                  (cf, "find_conflicts")):
    real = getattr(mod, name)
    def wrap(*a, _real=real, _name=name, **k):
        s = time.perf_counter(); r = _real(*a, **k); """
    r"""calls.append([_name, time.perf_counter() - s]); return r
    setattr(mod, name, wrap)
t_import = time.perf_counter()
from memvault.cli import main
t_cli = time.perf_counter()
code = main(sys.argv[1:])
t_end = time.perf_counter()
print(json.dumps({"code": code, "import_cli_s": t_cli - t_import, "imports_before_s": t_import - t0,
                  "run_s": t_end - t_cli, "calls": calls, "pydantic_loaded": "pydantic" in """
    r"""sys.modules}),
      file=sys.stderr)
"""
)


def profile_add(vault: Vault) -> dict[str, Any]:
    """Where one ``memvault add`` spends its time: interpreter, imports, git, catalog, writes."""
    env = _env()
    root = str(vault.root)
    args = [
        "--vault",
        root,
        "add",
        "fact",
        "Profiled fact about the deploy pipeline",
        "--tag",
        "bench",
    ]
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", PROFILE_SCRIPT, *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    grouped: dict[str, float] = {}
    for name, secs in report["calls"]:
        grouped[name] = grouped.get(name, 0.0) + secs
    # what the CLI layer (typer option parsing/coercion) costs on top of the library call
    cli_overhead = report["run_s"] - grouped.get("add", 0.0) - grouped.get("open", 0.0)
    importtime = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import memvault.cli"],
        env=env,
        capture_output=True,
        text=True,
    ).stderr
    top: list[tuple[int, str]] = []
    for line in importtime.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            top.append((int(parts[1].strip()), parts[2].rstrip()))
    top.sort(reverse=True)
    python_pass = statistics.median(
        _timed([sys.executable, "-c", "pass"], env=env) for _ in range(5)
    )
    return {
        "wall_s": wall,
        "python_startup_s": python_pass,
        "import_memvault_cli_s": report["import_cli_s"] + report["imports_before_s"],
        "command_s": report["run_s"],
        "breakdown_s": grouped,
        "git_total_s": sum(v for k, v in grouped.items() if k.startswith("git ")),
        "cli_parsing_s": cli_overhead,
        "pydantic_loaded_by_typer": report["pydantic_loaded"],
        "importtime_top_us": [{"us": us, "module": mod.strip()} for us, mod in top[:12]],
    }


def _stop_resident(root: Path) -> None:
    """Stop the resident process the timed commands started for ``root``, so that no process
    outlives the run (it would idle out after 10 minutes)."""
    import signal

    from memvault.resident.runtime import Unsafe, files, folder, key

    try:
        pid_file = files(folder(), key(root.resolve()))["pid"]
        pid = int(pid_file.read_text(encoding="utf-8").split()[0])
        os.kill(pid, signal.SIGTERM)
    except (Unsafe, OSError, ValueError, IndexError):
        pass  # none running, or not ours to stop


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--n", type=int, default=10_000, help="memories in the vault (default 10000)"
    )
    parser.add_argument("--repeat", type=int, default=15, help="runs per measurement (default 15)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--profile", action="store_true", help="also profile one 'memvault add'")
    parser.add_argument("--dir", type=Path, help="build the vault here (default: a temp folder)")
    parser.add_argument("--keep", action="store_true", help="keep the vault afterwards")
    args = parser.parse_args()

    base = args.dir or Path(tempfile.mkdtemp(prefix="memvault-bench-"))
    target = base / "vault"
    if target.exists():
        shutil.rmtree(target)
    try:
        os.environ.update({"MEMVAULT_EMBEDDER": "fake"})
        for key in ("MEMVAULT_VAULT", "MEMVAULT_AGENT", "MEMVAULT_TEAM", "MEMVAULT_ROLE"):
            os.environ.pop(key, None)
        vault, ids, build_s = build_vault(target, args.n)
        result = measure(vault, ids, args.repeat)
        result["build_s"] = build_s
        result["load_average_1m"] = os.getloadavg()[0]
        result["cpus"] = os.cpu_count()
        result["add_ok"] = result["add_vs_git_ratio"] <= ADD_TARGET
        result["help_ok"] = result["help_median_s"] <= HELP_TARGET
        if args.profile:
            result["profile_add"] = profile_add(vault)
    finally:
        if not args.keep:
            _stop_resident(target)  # the adds started one, as they do for a user
        if not args.keep and args.dir is None:
            shutil.rmtree(base, ignore_errors=True)

    if args.json:
        print(json.dumps(result, indent=2))
        return
    ok = lambda flag: "ok" if flag else "OVER TARGET"  # noqa: E731
    print(
        f"vault: {result['n']:,} memories (built and committed in {result['build_s']:.1f} s), "
        f"{args.repeat} runs each;"
        f" load average {result['load_average_1m']:.1f} on {result['cpus']} CPUs"
    )
    print(f"memvault add        median {result['add_median_s'] * 1000:7.0f} ms")
    print(f"git add && commit   median {result['git_median_s'] * 1000:7.0f} ms")
    print(
        f"  add / git ratio          {result['add_vs_git_ratio']:7.2f}x  "
        f"(target <= {ADD_TARGET}x: {ok(result['add_ok'])})"
    )
    print(f"memvault list --json median {result['list_median_s'] * 1000:6.0f} ms")
    print(f"memvault show ID    median {result['show_median_s'] * 1000:7.0f} ms")
    print(
        f"memvault --help     median {result['help_median_s'] * 1000:7.0f} ms  "
        f"(target <= {HELP_TARGET * 1000:.0f} ms: {ok(result['help_ok'])})"
    )
    print(f"python -c pass      median {result['python_pass_median_s'] * 1000:7.0f} ms")
    if args.profile:
        prof = result["profile_add"]
        print("\none 'memvault add', profiled:")
        print(
            f"  wall {prof['wall_s'] * 1000:.0f} ms"
            f" = python startup ~{prof['python_startup_s'] * 1000:.0f} ms"
            f" + import memvault.cli {prof['import_memvault_cli_s'] * 1000:.0f} ms"
            f" + command {prof['command_s'] * 1000:.0f} ms"
        )
        print(
            f"    typer option parsing/coercion {prof['cli_parsing_s'] * 1000:.0f} ms"
            f" (pydantic imported: {prof['pydantic_loaded_by_typer']})"
        )
        for name, secs in sorted(prof["breakdown_s"].items(), key=lambda kv: -kv[1]):
            print(f"    {name:<16} {secs * 1000:7.1f} ms")
        print("  slowest imports (cumulative):")
        for item in prof["importtime_top_us"][:8]:
            print(f"    {item['us'] / 1000:7.1f} ms  {item['module']}")


if __name__ == "__main__":
    main()
