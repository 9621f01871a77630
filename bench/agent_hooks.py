"""Benchmark what an agent client pays per prompt: the UserPromptSubmit hook and a cold CLI
recall, each a new process, on a 10,000-memory vault, beside an in-process recall.

Measured in one run, interleaved (each round: a hook, a CLI recall, an in-process recall,
every one with another LoCoMo question), so that the machine's load weighs on all three:

* ``prompt_hook_p50_ms`` / ``prompt_hook_p95_ms``: the hook as Claude Code runs it: ``sh -c
  "memvault -q context --hook --budget 600 || true"`` in a project folder, the hook's JSON
  (``hook_event_name``, ``prompt``, ``cwd``, ``session_id``) on stdin, the vault named by
  ``MEMVAULT_VAULT`` (targets: p95 <= 250 ms);
* ``cli_recall_cold_p50_ms``: ``memvault --vault V recall QUESTION --json`` in a new process
  (target: <= 300 ms);
* ``inprocess_recall_p50_ms`` / ``..._p95_ms``: ``Vault.recall`` in this process, warm; the
  ratios (``*_vs_inprocess``) say what a new process adds to it;
* ``python_start_p50_ms``: ``python -c pass``, the floor of any new process.

By default the vault's resident process serves the hook and the CLI (started by the first
call, as a user's first prompt would; warm-up rounds are not counted). ``--resident off``
measures every call run in its own process (``MEMVAULT_RESIDENT=0``). Exit status 1 when a
target is missed.

    python bench/agent_hooks.py --json                     # builds the vault (minutes)
    python bench/agent_hooks.py --vault PATH --json        # a vault built before (--keep)
    python bench/agent_hooks.py --resident off --json      # no resident process: misses
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.append(str(ROOT / "bench"))  # after site-packages: bench/mcp.py is no SDK
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

TARGETS = {"prompt_hook_p95_ms": 250.0, "cli_recall_cold_p50_ms": 300.0}
HOOK = "{memvault} -q context --hook --budget 600 || true"


def _memvault() -> str:
    exe = Path(sys.executable).parent / "memvault"
    return str(exe) if exe.exists() else f"{sys.executable} -m memvault"


def _env(vault: Path, resident: str, runtime: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("MEMVAULT_EMBEDDER", None)
    env.update(
        MEMVAULT_VAULT=str(vault),
        MEMVAULT_AGENT="bench",  # bench/search.py's identity: its team's memories are visible
        MEMVAULT_TEAM="core",
        MEMVAULT_RESIDENT="1" if resident == "on" else "0",
        MEMVAULT_RUNTIME_DIR=str(runtime),
    )
    return env


def _timed(argv: list[str], env: dict[str, str], cwd: Path, stdin: str = "") -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(
        argv, input=stdin, env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    ms = (time.perf_counter() - started) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return ms, proc.stdout


def build(folder: Path, count: int, data: Path) -> None:
    """bench/search.py's vault: LoCoMo turns, Q&A facts and generated procedures, indexed
    with the vault's default embedder."""
    import search

    base, _ = search.base_records(data)
    random.Random(5).shuffle(base)
    vault = search.write_vault(folder, search.make_records(base, count), commit=True)
    vault.reindex(full=True)


def questions(data: Path, n: int) -> list[str]:
    import locomo

    qs = [q.q for conv in locomo.load(data) for q in conv.questions]
    return random.Random(11).sample(qs, n)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def _served_count(runtime: Path, vault: Path) -> int:
    from memvault.resident.runtime import files, key

    log = files(runtime, key(vault))["log"]
    text = log.read_text(encoding="utf-8") if log.exists() else ""
    return sum(1 for line in text.splitlines() if ": exit " in line)


def measure(vault_dir: Path, rounds: int, resident: str, data: Path) -> dict[str, Any]:
    from memvault import Vault

    runtime = Path(tempfile.mkdtemp(prefix="mv-rt-"))  # 0700: the runtime folder's rule
    env = _env(vault_dir, resident, runtime)
    project = Path(tempfile.mkdtemp(prefix="mv-project-"))
    exe = _memvault()
    hook = ["/bin/sh", "-c", HOOK.format(memvault=exe)]
    warmup = 4
    qs = questions(data, 3 * (rounds + warmup))
    vault = Vault.open(vault_dir, agent="bench", team="core")
    vault.warm()
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {"hook": [], "cli": [], "inproc": [], "python": []}
    injected = 0
    try:
        for i in range(rounds + warmup):
            prompt, query, local = qs[3 * i], qs[3 * i + 1], qs[3 * i + 2]
            payload = {
                "hook_event_name": "UserPromptSubmit",
                "prompt": prompt,
                "cwd": str(project),
                "session_id": f"bench-{i}",
            }
            hook_ms, out = _timed(hook, env, project, json.dumps(payload))
            injected += bool(out.strip())
            cli_ms, out = _timed(
                [*exe.split(), "recall", query, "--limit", "10", "--json"], env, project
            )
            json.loads(out)
            started = time.perf_counter()
            vault.recall(local, limit=10, log=False)
            inproc_ms = (time.perf_counter() - started) * 1000
            python_ms, _ = _timed([sys.executable, "-c", "pass"], env, project)
            if i == 0 and resident == "on":
                time.sleep(3)  # the first call started the resident process: let it load
            if i < warmup:
                continue
            for name, ms in (
                ("hook", hook_ms),
                ("cli", cli_ms),
                ("inproc", inproc_ms),
                ("python", python_ms),
            ):
                times[name].append(ms)
        served = _served_count(runtime, vault_dir.resolve())
    finally:
        _stop_resident(runtime)
        shutil.rmtree(runtime, ignore_errors=True)
        shutil.rmtree(project, ignore_errors=True)
    inproc50, inproc95 = _pct(times["inproc"], 0.5), _pct(times["inproc"], 0.95)
    result: dict[str, Any] = {
        "memories": _count(vault_dir),
        "rounds": rounds,
        "resident": resident,
        "served_by_resident": served,
        "prompt_hook_p50_ms": _pct(times["hook"], 0.5),
        "prompt_hook_p95_ms": _pct(times["hook"], 0.95),
        "cli_recall_cold_p50_ms": _pct(times["cli"], 0.5),
        "cli_recall_cold_p95_ms": _pct(times["cli"], 0.95),
        "inprocess_recall_p50_ms": inproc50,
        "inprocess_recall_p95_ms": inproc95,
        "python_start_p50_ms": _pct(times["python"], 0.5),
        "hooks_that_injected": injected,
        "load_avg_before": [round(x, 2) for x in load_before],
        "load_avg_after": [round(x, 2) for x in os.getloadavg()],
        "cores": os.cpu_count(),
    }
    for name in ("prompt_hook_p50_ms", "prompt_hook_p95_ms", "cli_recall_cold_p50_ms"):
        base = inproc95 if name.endswith("p95_ms") else inproc50
        result[name.replace("_ms", "_vs_inprocess")] = round(result[name] / base, 1)
    result["targets"] = {
        name: {"target_ms": limit, "met": result[name] <= limit} for name, limit in TARGETS.items()
    }
    return result


def _count(vault: Path) -> int:
    from memvault import ALL_TREES

    return sum(len([f for f in fs if f.endswith(".md")]) for t in ALL_TREES
               for _, _, fs in os.walk(vault / t))  # fmt: skip


def _stop_resident(runtime: Path) -> None:
    """End the resident process this run started (by its pid file, in this run's folder)."""
    import signal

    for pid_file in runtime.glob("*.pid"):
        try:
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vault", type=Path, default=None, help="A vault built before (--keep).")
    parser.add_argument("--n", type=int, default=10_000, help="Memories in the built vault.")
    parser.add_argument("--rounds", type=int, default=40, help="Measured rounds (default 40).")
    parser.add_argument(
        "--resident",
        choices=("on", "off"),
        default="on",
        help="Serve the calls from the vault's resident process (on) or not (off).",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("LOCOMO_DATA", "locomo10.json")),
        help="LoCoMo-format file for the texts (default $LOCOMO_DATA).",
    )
    parser.add_argument("--keep", action="store_true", help="Keep the built vault; print where.")
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds: expected at least 1")
    os.environ.pop("MEMVAULT_EMBEDDER", None)
    work = None
    vault_dir = args.vault
    if vault_dir is None:
        work = Path(tempfile.mkdtemp(prefix="memvault-bench-"))
        vault_dir = work / "v"
        print(f"building a {args.n:,}-memory vault in {vault_dir} ...", file=sys.stderr)
        build(vault_dir, args.n, args.data)
    try:
        result = measure(vault_dir.resolve(), args.rounds, args.resident, args.data)
    finally:
        if work is not None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.keep and work is not None:
        result["vault"] = str(vault_dir)
    if args.json:
        print(json.dumps(result))
    else:
        for name, value in result.items():
            print(f"  {name:32s} {value}")
    missed = [name for name, t in result["targets"].items() if not t["met"]]
    if missed:
        print(f"missed: {', '.join(missed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
