#!/usr/bin/env python3
"""Longer fuzz run: the CLI argument paths and the front-matter parser.

The same properties as tests/test_fuzz_cli.py, for as long as you like:

- CLI: random argv built from every fuzzed command's real options, run in-process through
  ``memvault.cli.main`` on a real vault; exit code 0/1/2 only (3 is a bug), one line for an
  expected error, ``--json`` parses, and after each example ``git fsck`` is clean, nothing
  is left uncommitted and ``memvault doctor`` finds the vault valid.
- Parser: ``memvault.store.files.parse_text`` on arbitrary text returns a document or raises a
  ValidationError naming the file, nothing else. With atheris installed
  (``pip install atheris``) this half is coverage-guided by libFuzzer; without it, it falls
  back to hypothesis and says so.

    python bench/fuzz.py --seconds 600
    python bench/fuzz.py --seconds 60 --json
    python bench/fuzz.py --target parser --engine atheris --seconds 120

Everything happens in a temp folder (kept with --keep); nothing leaves the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"


def _isolate(tmp: Path, embedder: str) -> None:
    """What tests/conftest.py does for the suite: no identity, no user git config."""
    for name in (
        "MEMVAULT_VAULT",
        "MEMVAULT_AGENT",
        "MEMVAULT_TEAM",
        "MEMVAULT_ROLE",
        "MEMVAULT_INDEX_URL",
        "GIT_DIR",
        "GIT_INDEX_FILE",
        "GIT_WORK_TREE",
        "VISUAL",
        "EDITOR",
    ):
        os.environ.pop(name, None)
    os.environ["MEMVAULT_EMBEDDER"] = embedder
    os.environ["MEMVAULT_CACHE_DIR"] = str(tmp / "cache")
    os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
    os.environ["GIT_CONFIG_GLOBAL"] = os.devnull


def _fuzz_module():  # type: ignore[no-untyped-def]
    sys.path.insert(0, str(TESTS))
    import test_fuzz_cli

    return test_fuzz_cli


# --- CLI ----------------------------------------------------------------------------------


def run_cli(seconds: float, tmp: Path, batch: int, shrink: bool) -> dict:
    from hypothesis import Phase

    fz = _fuzz_module()
    commands = fz.READ_COMMANDS + fz.WRITE_COMMANDS
    stats: Counter[str] = Counter()
    failures: list[str] = []
    rounds = 0
    deadline = time.time() + seconds
    phases = [Phase.explicit, Phase.generate] + ([Phase.shrink] if shrink else [])
    ws = None
    while time.time() < deadline:
        if ws is None:  # a fresh vault to start with, and after each failure
            ws = fz.Workspace.create(Path(tempfile.mkdtemp(dir=tmp, prefix="ws-")))
        try:
            # fuzz_cli runs every call from the workspace's scratch folder (relative paths
            # such as 'init .' must never reach the folder this script was started from)
            fz.fuzz_cli(ws, commands, batch, stats, database=None, phases=phases)
        except Exception as exc:  # noqa: BLE001 - a finding: record it and go on
            failures.append(f"{type(exc).__name__}: {exc}"[:4000])
            ws = None
        rounds += 1
    codes: Counter[str] = Counter()
    per_command: Counter[str] = Counter()
    for key, n in stats.items():
        command, code = key.rsplit(" exit ", 1)
        codes[code] += n
        per_command[command] += n
    return {
        "rounds": rounds,
        "calls": sum(stats.values()),
        "exit_codes": dict(sorted(codes.items())),
        "calls_per_command": dict(sorted(per_command.items())),
        "failures": failures,
    }


# --- parser -------------------------------------------------------------------------------

SEEDS = [
    "---\nid: deploy-window\ntype: semantic\ncategory: constraints\ntags: [deploy]\n"
    "importance: 4\n---\n\nNo Friday deploys.\n",
    "id: rollback\ntype: procedural\nsteps:\n  - Stop\n  - Revert\ntrigger: [rollback]\n"
    "content: |\n  Roll back.\n",
    "\ufeff---\r\nid: x\r\ntype: episodic\r\ncreated: 2026-01-31T10:00:00Z\r\n---\r\nbody\r\n",
    "---\nid: bomb\ntype: semantic\na: &a [x, x]\nb: [*a, *a]\n---\n",
]
PATHS = [
    "semantic/facts/x.md",
    "procedural/workflows/x.yaml",
    "episodic/2026/01/x.md",
    "inbox/x.yml",
]


def atheris_child(seconds: float, artifacts: Path) -> None:
    """Runs inside its own process: libFuzzer owns it and exits when done."""
    import atheris

    with atheris.instrument_imports(include=["memvault", "ruamel"]):
        import ruamel.yaml  # noqa: F401

        import memvault.store.files as files
        from memvault.errors import MemvaultError, ValidationError

    def one_input(data: bytes) -> None:
        fdp = atheris.FuzzedDataProvider(data)
        path = PATHS[fdp.ConsumeIntInRange(0, len(PATHS) - 1)]
        text = fdp.ConsumeUnicodeNoSurrogates(len(data))
        try:
            doc = files.parse_text(text, path)
        except ValidationError as exc:
            if exc.path != path:
                raise AssertionError(f"error names {exc.path!r}, not {path!r}") from exc
            return
        try:
            memory = files.check_text(text, path)
        except MemvaultError:
            return
        if memory.id != doc.meta["id"]:
            raise AssertionError("check_text and parse_text disagree on the id")

    corpus = artifacts / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for i, seed in enumerate(SEEDS):
        # FuzzedDataProvider: first byte(s) pick the path, the rest is the text
        (corpus / f"seed-{i}").write_bytes(bytes([i % len(PATHS)]) + seed.encode("utf-8"))
    argv = [
        sys.argv[0],
        str(corpus),
        f"-max_total_time={max(1, int(seconds))}",
        "-rss_limit_mb=2048",
        "-timeout=20",
        f"-artifact_prefix={artifacts}/",
        "-print_final_stats=1",
    ]
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


def run_parser_atheris(seconds: float, tmp: Path) -> dict:
    artifacts = tmp / "atheris"
    artifacts.mkdir()
    proc = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--atheris-child",
            "--seconds",
            str(seconds),
            "--artifacts",
            str(artifacts),
        ],
        capture_output=True,
        text=True,
        timeout=seconds + 300,
        check=False,
    )
    log = proc.stderr
    runs = re.search(r"Done (\d+) runs in (\d+) second", log) or re.search(
        r"stat::number_of_executed_units:\s*(\d+)", log
    )
    crashes = sorted(
        p.name for p in artifacts.iterdir() if p.name.startswith(("crash-", "timeout-", "oom-"))
    )
    failures = []
    if proc.returncode != 0 or crashes:
        tail = "\n".join(line for line in log.splitlines()[-40:] if line.strip())
        failures.append(f"atheris exit {proc.returncode}; artifacts {crashes}:\n{tail}"[-4000:])
    cov = re.findall(r"cov: (\d+)", log)
    return {
        "engine": "atheris",
        "runs": int(runs.group(1)) if runs else None,
        "coverage_edges": int(cov[-1]) if cov else None,
        "artifacts": crashes,
        "failures": failures,
    }


def run_parser_hypothesis(seconds: float) -> dict:
    from hypothesis import HealthCheck, given, settings

    fz = _fuzz_module()
    count = 0
    failures: list[str] = []
    deadline = time.time() + seconds

    @settings(
        max_examples=2000, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(text=fz.DOCUMENT, path=fz.PARSE_PATHS)
    def prop(text: str, path: str) -> None:
        nonlocal count
        count += 1
        fz.parse_property(text, path)

    while time.time() < deadline:
        try:
            prop()
        except Exception as exc:  # noqa: BLE001
            failures.append(f"{type(exc).__name__}: {exc}"[:4000])
    return {"engine": "hypothesis", "runs": count, "failures": failures}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=300, help="total time (default 300)")
    parser.add_argument("--target", choices=["all", "cli", "parser"], default="all")
    parser.add_argument(
        "--engine",
        choices=["auto", "atheris", "hypothesis"],
        default="auto",
        help="parser fuzzing engine (auto: atheris when importable)",
    )
    parser.add_argument("--batch", type=int, default=50, help="hypothesis examples per CLI round")
    parser.add_argument(
        "--no-shrink", action="store_true", help="report CLI failures as found (faster)"
    )
    parser.add_argument(
        "--embedder", default="fake", help="embedder for the CLI vault (default: fake)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder")
    parser.add_argument("--atheris-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--artifacts", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.atheris_child:
        atheris_child(args.seconds, Path(args.artifacts))
        return

    tmp = Path(tempfile.mkdtemp(prefix="mv-fuzz-"))
    _isolate(tmp, args.embedder)
    started = time.time()
    result: dict = {"seconds": args.seconds}
    notes: list[str] = []
    cli_share = {"all": 2 / 3, "cli": 1.0, "parser": 0.0}[args.target]
    if cli_share:
        result["cli"] = run_cli(args.seconds * cli_share, tmp, args.batch, not args.no_shrink)
    if cli_share < 1:
        parser_seconds = args.seconds - (time.time() - started) if cli_share else args.seconds
        engine = args.engine
        if engine in ("auto", "atheris"):
            try:
                import atheris  # noqa: F401
            except ImportError as exc:
                if engine == "atheris":
                    raise SystemExit(
                        f"atheris is not importable ({exc}); pip install atheris"
                    ) from None
                notes.append(
                    f"atheris not importable ({exc}); parser fuzzed with hypothesis instead"
                )
                engine = "hypothesis"
            else:
                engine = "atheris"
        if engine == "atheris":
            result["parser"] = run_parser_atheris(max(5.0, parser_seconds), tmp)
        else:
            result["parser"] = run_parser_hypothesis(max(5.0, parser_seconds))
    result["elapsed_s"] = round(time.time() - started, 1)
    result["notes"] = notes
    failures = sum(len(result[k]["failures"]) for k in ("cli", "parser") if k in result)
    result["ok"] = failures == 0
    if args.keep:
        result["folder"] = str(tmp)
    else:
        shutil.rmtree(tmp, ignore_errors=True)

    if args.json:
        print(json.dumps(result))
    else:
        print(f"fuzz run: {result['elapsed_s']} s")
        for note in notes:
            print(f"note: {note}")
        if "cli" in result:
            c = result["cli"]
            print(f"cli: {c['calls']} calls in {c['rounds']} rounds; exit codes {c['exit_codes']}")
        if "parser" in result:
            p = result["parser"]
            extra = f", {p['coverage_edges']} coverage edges" if p.get("coverage_edges") else ""
            print(f"parser ({p['engine']}): {p['runs']} inputs{extra}")
        for key in ("cli", "parser"):
            for failure in result.get(key, {}).get("failures", []):
                print(f"\n{key} FAILURE:\n{failure}")
        print("OK" if result["ok"] else "PROBLEMS FOUND")
    sys.exit(0 if result["ok"] else 1)


if __name__ == "__main__":
    main()
