"""Short runs of the stress and crash harnesses in bench/ (the long ones are benchmarks),
and proof that each harness fails when what it guards fails (their --inject-fault)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# Runs bench/'s harnesses in subprocesses for seconds each: out of the fast lane
# (pytest -m 'not slow').
pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parent.parent / "bench"
SHORT_STRESS = ("--seconds", "8", "--writers", "3", "--readers", "1", "--consolidate-every", "3")


def _run(script: str, *args: str, timeout: float = 600) -> tuple[int, dict[str, Any]]:
    """(exit code, the harness's JSON report)."""
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), "--json", "--embedder", "fake", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert proc.stdout.strip(), proc.stderr[-2000:]
    return proc.returncode, json.loads(proc.stdout.strip().splitlines()[-1])


def test_short_stress_run_loses_nothing() -> None:
    # The 5 s reader target is bench/stress.py's default; here the suite runs in parallel
    # on 2 cores, so allow for the machine being busy with other tests.
    code, result = _run("stress.py", *SHORT_STRESS, "--max-reader-wait", "15")
    assert result["ok"], result["problems"]
    assert code == 0
    assert result["failed_children"] == {} and result["child_tracebacks"] == {}
    assert result["write_errors"] == result["read_errors"] == 0
    assert result["consolidation_errors"] == result["watch_errors"] == 0
    assert result["lost"] == result["lost_turns"] == result["resurrected"] == 0
    assert result["corrupt"] == 0 and not result["duplicate_ids"]
    assert result["fsck_ok"] and result["doctor_ok"] and result["worktree_clean"]
    assert result["index_matches_files"], result["index_notes"]
    assert result["watcher"] == "ok"
    assert result["acknowledged"]["writes"] > 0 and result["reads"] > 0
    assert result["consolidations"] >= 1


def test_short_crash_run_recovers_every_time() -> None:
    code, result = _run("crash.py", "--trials", "4", "--max-delay", "1.5")
    assert result["trials"] == 4
    assert result["ok"], result["failures"]
    assert code == 0
    assert result["failed_trials"] == result["failed_command_trials"] == 0
    assert result["lost"] == result["corrupt_trials"] == result["dirty_worktree_trials"] == 0


def test_stress_harness_reports_every_injected_fault() -> None:
    """One run with every fault; each must show in its own counter and fail the run."""
    faults = "writer-raises,write-error,skip-commit,drop-turn,consolidation-error,damage-index"
    code, result = _run("stress.py", *SHORT_STRESS, "--inject-fault", faults)
    assert code == 1 and not result["ok"]
    assert result["faults_injected"] == sorted(faults.split(",")), result
    # writer-raises; on a failure, the dict shows every child's traceback (writer1 once
    # exited 1 here under load, and nothing said why)
    assert result["failed_children"] == {"writer2": "exit code 1"}, result["child_tracebacks"]
    # ... and what it raised, from the child's own traceback
    assert list(result["child_tracebacks"]) == ["writer2"], result["child_tracebacks"]
    assert "RuntimeError: injected fault: a writer crashed" in result["child_tracebacks"]["writer2"]
    assert any("injected fault: a writer crashed" in p for p in result["problems"])
    assert result["write_errors"] == 1  # write-error
    assert result["lost_ids"] == ["w0-uncommitted-fault"]  # skip-commit
    assert not result["worktree_clean"]  # skip-commit
    assert result["lost_turns"] == 1  # drop-turn
    assert result["consolidation_errors"] == 1  # consolidation-error
    assert not result["index_matches_files"]  # damage-index
    assert any("damaged" in n for n in result["index_notes"])


@pytest.mark.parametrize(
    ("fault", "counter"),
    [
        ("skip-commit", "lost_write_trials"),
        ("dirty-tree", "dirty_worktree_trials"),
        ("exit-nonzero", "failed_command_trials"),
        ("damage-index", "index_problem_trials"),
    ],
)
def test_crash_harness_reports_an_injected_fault(fault: str, counter: str) -> None:
    code, result = _run("crash.py", "--trials", "2", "--max-delay", "1.5", "--inject-fault", fault)
    assert code == 1 and not result["ok"]
    assert result["fault_injected"] == fault
    assert result[counter] >= 1, result
    assert any(f["trial"] == 1 for f in result["failures"]), result["failures"]
