"""Chroma's writes queued in SQLite while searches score vectors exactly
(memvault.index.pending): nothing is lost on the way, and Chroma holds exactly SQLite's
vectors whenever it is read."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from memvault import Vault
from memvault.embeddings.fake import FakeEmbedder
from memvault.index import store
from memvault.index.handle import open_indexes

from helpers import fact_text, write

TYPES = ("episodic", "semantic", "procedural")


@pytest.fixture
def embed_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    original = FakeEmbedder.embed_documents

    def counting(self: FakeEmbedder, texts: list[str]) -> object:
        calls.extend(texts)
        return original(self, texts)

    monkeypatch.setattr(FakeEmbedder, "embed_documents", counting)
    return calls


def queued(root: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(store.data_dir(root, "") / store.DB_NAME)
    try:
        return conn.execute("SELECT type, vid, op FROM chroma_pending ORDER BY seq").fetchall()
    finally:
        conn.close()


def sqlite_vectors(root: Path) -> dict[str, dict[str, bytes]]:
    conn = sqlite3.connect(store.data_dir(root, "") / store.DB_NAME)
    try:
        out: dict[str, dict[str, bytes]] = {t: {} for t in TYPES}
        sql = (
            "SELECT d.type, c.rowid, c.vec FROM chunks AS c JOIN docs AS d ON d.key = c.doc "
            "WHERE c.vec IS NOT NULL"
        )
        for t, r, v in conn.execute(sql):
            out[t][str(r)] = bytes(v)
        return out
    finally:
        conn.close()


def chroma_vectors(vault: Vault) -> dict[str, dict[str, bytes]]:
    """What the vault's own Chroma holds, read through the index's door for readers."""
    vault.search("warm", log=False)
    idx = open_indexes.get(vault.root)
    assert idx is not None
    out: dict[str, dict[str, bytes]] = {}
    for t in TYPES:
        col = idx.collection(t)
        got = col.get(include=["embeddings"]) if col is not None else {"ids": []}
        vecs = got.get("embeddings")
        out[t] = {
            i: np.asarray(v, dtype=np.float32).tobytes()
            for i, v in zip(got["ids"], vecs if vecs is not None else [], strict=True)
        }
    return out


def assert_same_vectors(vault: Vault) -> None:
    """Chroma holds SQLite's vectors, no more and no fewer (Chroma may re-normalise a
    vector for the cosine space: equal to float32 rounding)."""
    want, got = sqlite_vectors(vault.root), chroma_vectors(vault)
    assert {t: sorted(v) for t, v in got.items()} == {t: sorted(v) for t, v in want.items()}
    for t, vecs in want.items():
        for vid, vec in vecs.items():
            a, b = np.frombuffer(vec, np.float32), np.frombuffer(got[t][vid], np.float32)
            assert np.allclose(a, b, atol=1e-6), (t, vid)


def seed(vault: Vault) -> None:
    vault.add("semantic", "Postgres is the primary database for billing", id="db")
    vault.add("semantic", "The API rate limit is 100 requests per minute", id="rate")
    vault.add("episodic", "Deployed the billing service on Tuesday", id="deploy")
    vault.add("procedural", "To rotate keys: revoke, issue, redeploy", id="rotate")


def test_below_the_threshold_a_write_and_a_recall_never_load_chromadb(vault: Vault) -> None:
    seed(vault)
    code = (
        "import sys\n"
        "from memvault import Vault\n"
        f"vault = Vault.open({str(vault.root)!r})\n"
        "vault.add('semantic', 'Deploy keys are rotated every month', id='keys')\n"
        "hits = vault.recall('how often are deploy keys rotated')\n"
        "print(hits[0].id, 'chromadb' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["keys", "False"]
    ops = queued(vault.root)
    assert len(ops) == 5 and {op for _, _, op in ops} == {"upsert"}
    assert sorted(t for t, _, _ in ops) == ["episodic", "procedural", *["semantic"] * 3]


def test_queued_writes_reach_chroma_before_it_is_read(vault: Vault) -> None:
    vault.set_config("index.exact_below", 0, "ask Chroma")
    seed(vault)
    vault.recall("billing")
    assert queued(vault.root) == []  # written at once
    assert_same_vectors(vault)
    vault.set_config("index.exact_below", 1000, "exact again: Chroma's writes wait")
    open_indexes.forget(vault.root, release_chroma=True)
    vault.forget("rate", "superseded")
    # a hand edit that changes a memory's text, and a memory that changes its type
    write(vault.root, vault.get("db").path, fact_text("db", "MySQL is the primary database now"))
    moved = vault.get("rotate")
    (vault.root / moved.path).unlink()
    vault.add("semantic", "To rotate keys: revoke, issue, redeploy", id="rotate")
    vault.recall("billing")
    ops = queued(vault.root)
    assert {op for _, _, op in ops} == {"upsert", "delete"}
    # Chroma is read from now on: the queue is carried out first, then emptied
    vault.set_config("index.exact_below", 0, "ask Chroma")
    open_indexes.forget(vault.root, release_chroma=True)
    hits = Vault.open(vault.root).recall("primary database")
    assert hits[0].id == "db"
    assert queued(vault.root) == []
    assert_same_vectors(vault)
    want = sqlite_vectors(vault.root)
    assert sum(len(v) for v in want.values()) == 3 and not want["procedural"]


def test_an_update_that_crosses_the_threshold_writes_the_queue(vault: Vault) -> None:
    vault.set_config("index.exact_below", 3, "exact up to three chunks")
    vault.add("semantic", "Postgres is the primary database for billing", id="db")
    vault.add("semantic", "The API rate limit is 100 requests per minute", id="rate")
    vault.recall("billing")
    assert len(queued(vault.root)) == 2
    vault.add("episodic", "Deployed the billing service on Tuesday", id="deploy")
    vault.add("procedural", "To rotate keys: revoke, issue, redeploy", id="rotate")
    vault.reindex()
    assert queued(vault.root) == []  # written by the update, before any search asked
    assert_same_vectors(vault)


def test_a_crash_before_chroma_queues_a_reload_instead_of_loading_it(vault: Vault) -> None:
    """A dirty manifest (a process died mid-update) used to reload every vector into Chroma
    on the next open; below the threshold the reload waits in the queue too."""
    seed(vault)
    vault.recall("billing")
    open_indexes.forget(vault.root, release_chroma=True)
    manifest = store.read_manifest(vault.root)
    assert manifest is not None
    manifest["dirty"] = True
    store.write_manifest(vault.root, manifest)
    vault.add("semantic", "Deploy keys are rotated every month", id="keys")
    assert Vault.open(vault.root).recall("deploy keys")[0].id == "keys"
    assert ("*", "*", "reload") in queued(vault.root)
    vault.set_config("index.exact_below", 0, "ask Chroma")
    open_indexes.forget(vault.root, release_chroma=True)
    assert Vault.open(vault.root).recall("deploy keys")[0].id == "keys"
    assert queued(vault.root) == []
    assert_same_vectors(vault)


def test_an_index_from_before_the_queue_gets_its_table_without_a_rebuild(
    vault: Vault, embed_calls: list[str]
) -> None:
    seed(vault)
    vault.recall("billing")
    open_indexes.forget(vault.root, release_chroma=True)
    path = store.data_dir(vault.root, "") / store.DB_NAME
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE chroma_pending")
    conn.execute(f"PRAGMA user_version={store.SCHEMA}")  # as the version before wrote it
    conn.commit()
    conn.close()
    embed_calls.clear()
    report = Vault.open(vault.root).reindex()
    assert not report.rebuilt and embed_calls == []
    vault.add("semantic", "Deploy keys are rotated every month", id="keys")
    assert Vault.open(vault.root).recall("deploy keys")[0].id == "keys"
    assert [op for _, _, op in queued(vault.root)] == ["upsert"]
    conn = sqlite3.connect(path)
    # upgraded by that update: an older memvault would rebuild, not write Chroma directly
    assert conn.execute("PRAGMA user_version").fetchone()[0] == store.FILE_VERSION
    conn.close()


@pytest.mark.parametrize("exact_below", [0, 1000])
def test_a_row_number_taken_again_keeps_its_new_vector(vault: Vault, exact_below: int) -> None:
    """The last chunk removed and a new one of the same type added in one update: SQLite
    gives the new chunk the old row number, so the old vector's delete must not win."""
    vault.set_config("index.exact_below", exact_below, "written at once, or queued")
    vault.add("semantic", "Postgres is the primary database for billing", id="db")
    vault.add("semantic", "The API rate limit is 100 requests per minute", id="rate")
    vault.recall("billing")
    vault.forget("rate", "gone")
    vault.add("semantic", "Deploy keys are rotated every month", id="keys")
    vault.recall("deploy keys")
    vault.set_config("index.exact_below", 0, "ask Chroma")
    open_indexes.forget(vault.root, release_chroma=True)
    assert Vault.open(vault.root).recall("deploy keys")[0].id == "keys"
    assert_same_vectors(vault)


def test_a_chroma_folder_that_cannot_be_written_is_loaded_again_from_sqlite(
    vault: Vault, embed_calls: list[str], capfd: pytest.CaptureFixture[str]
) -> None:
    """Found by review: with writes queued and Chroma's folder garbled, every recall crashed
    with chromadb's error. Chroma is a copy of SQLite's vectors: it is started afresh."""
    seed(vault)
    vault.recall("billing")
    assert queued(vault.root)
    open_indexes.forget(vault.root, release_chroma=True)
    store.release_chroma(vault.root)
    folder = store.data_dir(vault.root, "") / store.CHROMA_DIR
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "chroma.sqlite3").write_bytes(b"garbage" * 1000)
    vault.set_config("index.exact_below", 0, "ask Chroma")
    vault.add("semantic", "Deploy keys are rotated every month", id="keys")
    embed_calls.clear()
    assert Vault.open(vault.root).recall("deploy keys")[0].id == "keys"
    assert not any("Postgres" in text for text in embed_calls)  # nothing embedded again
    assert "rebuilding it from stored vectors" in capfd.readouterr().err
    assert queued(vault.root) == []
    assert_same_vectors(vault)
