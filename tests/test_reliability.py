"""Short runs of the stress and crash harnesses in bench/ (the long ones are benchmarks)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _run(script: str, *args: str, timeout: float = 600) -> dict:
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), "--json", "--embedder", "fake", *args],
        capture_output=True, text=True, timeout=timeout, check=False,
    )
    assert proc.stdout.strip(), proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_short_stress_run_loses_nothing() -> None:
    result = _run("stress.py", "--seconds", "8", "--writers", "3", "--readers", "1", "--consolidate-every", "3")
    assert result["lost"] == 0, result
    assert result["corrupt"] == 0, result
    assert result["resurrected"] == 0, result
    assert result["fsck_ok"] and result["doctor_ok"], result
    assert result["index_matches_files"], result
    assert sum(result["ops_per_s"].values()) > 0
    # The 5 s target is checked by bench/stress.py on its own; here the suite runs in
    # parallel on 2 cores, so allow for the machine being busy with other tests.
    assert result["worst_reader_wait_s"] <= 15, result


def test_short_crash_run_recovers_every_time() -> None:
    result = _run("crash.py", "--trials", "4", "--max-delay", "1.5")
    assert result["trials"] == 4
    assert result["failed_trials"] == 0, result["failures"]
