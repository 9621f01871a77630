"""A reader is never failed, nor kept waiting long, by a writer updating the index."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from memvault import Vault
from memvault.index import store

HOLDER = """
import sys, time
from memvault import Vault
with Vault.open(sys.argv[1]).locked():
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def test_recall_answers_while_a_writer_holds_the_lock_mid_update(vault: Vault) -> None:
    vault.add("semantic", "Postgres is the primary database", id="db-primary")
    vault.add("semantic", "Redis holds the sessions", id="sessions")
    vault.reindex()
    # a writer died or is busy between "vectors being changed" and "done": manifest dirty
    path = store.index_dir(vault.root) / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["dirty"] = True
    path.write_text(json.dumps(manifest))
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(vault.root), "20"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        started = time.monotonic()
        result = Vault.open(vault.root).recall("which database is primary?")
        waited = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert "db-primary" in result.ids
    assert waited < 5.0, waited
