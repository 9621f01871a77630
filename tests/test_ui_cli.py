"""``memvault ui`` as a user starts it: the real console script in a subprocess, the URL it
prints, the page behind it, ^C; and its refusals."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from memvault import Vault

from helpers import BIN, commit_count, ctrl_c_able, run_memvault


def test_memvault_ui_serves_the_printed_url_and_stops_on_interrupt(tmp_path: Path) -> None:
    vault = Vault.init(tmp_path / "v", examples=True)
    exe = BIN / "memvault"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "memvault"]
    proc = subprocess.Popen(
        [*cmd, "--vault", str(vault.root), "--agent", "me", "ui", "--port", "0", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_able,
    )
    try:
        assert proc.stdout is not None
        address = json.loads(proc.stdout.readline())
        assert address["url"].startswith("http://127.0.0.1:") and "?token=" in address["url"]
        with httpx.Client(follow_redirects=True, timeout=60) as client:
            page = client.get(address["url"])
            assert page.status_code == 200
            assert "PostgreSQL is the primary database" in page.text  # an example memory
            assert "?token=" not in str(page.url)
            bare = httpx.get(address["url"].split("?")[0], timeout=60)
            assert bare.status_code == 403
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert code == 0, proc.stderr.read() if proc.stderr else ""
    assert commit_count(vault.root) == 1  # serving writes nothing


def test_memvault_ui_refuses_a_bad_port(tmp_path: Path) -> None:
    vault = Vault.init(tmp_path / "v")
    r = run_memvault("--vault", vault.root, "ui", "--port", "70000")
    assert r.returncode == 1 and r.stderr.strip() == "Error: port: expected 0-65535, got 70000"
    taken = subprocess.Popen(
        [sys.executable, "-c", "import socket,time;s=socket.socket();s.bind(('127.0.0.1',0));"
         "s.listen();print(s.getsockname()[1],flush=True);time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert taken.stdout is not None
        port = taken.stdout.readline().strip()
        r = run_memvault("--vault", vault.root, "ui", "--port", port)
        assert r.returncode == 1 and r.stderr.startswith(
            f"Error: port: cannot listen on 127.0.0.1:{port}"
        )
        assert "Traceback" not in r.stderr
    finally:
        taken.kill()
        taken.wait()
