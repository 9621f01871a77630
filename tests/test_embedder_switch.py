"""Switching a vault with memories to another embedder: the new index is built beside the
old one, which keeps answering searches (with the embedder its vectors came from); the
build resumes after a kill; the switch replaces the manifest in one rename.

Real SQLite, Chroma and git in ``tmp_path``; two fake embedders (``fake`` = 64-d and
``fake:32``) stand in for two models.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_server_mode import _free_port, running_chroma, server_collections

from memvault import Vault
from memvault.embeddings.fake import FakeEmbedder
from memvault.index import ensure_fresh, handle, index_health, migrate, open_indexes, store
from memvault.index.manifest import embedder_for
from memvault.reports import doctor_report

from helpers import fact_text, run_memvault, write

N = 40
TOPICS = ["billing", "search", "deploy", "alerts", "backups", "tokens", "queues", "caching"]


def fill(root: Path, n: int = N, start: int = 0) -> None:
    """``n`` one-chunk facts written as files (faster than one commit each)."""
    for i in range(start, start + n):
        topic = TOPICS[i % len(TOPICS)]
        write(
            root,
            f"semantic/facts/f{i:03d}.md",
            fact_text(f"f{i:03d}", f"The {topic} service number {i} listens on port {8000 + i}."),
        )


def manifest(root: Path) -> dict[str, Any]:
    data = store.read_manifest(root)
    assert data is not None
    return data


def shadow(root: Path) -> dict[str, Any] | None:
    return store.read_shadow(root)


@pytest.fixture
def embed_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    """Every document the fake embedders embed: ``(dimensions, text)``."""
    calls: list[tuple[int, str]] = []
    original = FakeEmbedder.embed_documents

    def counting(self: FakeEmbedder, texts: Any) -> Any:
        calls.extend((self.dimensions, t) for t in texts)
        return original(self, texts)

    monkeypatch.setattr(FakeEmbedder, "embed_documents", counting)
    return calls


@pytest.fixture
def built(vault: Vault) -> Vault:
    """A vault of ``N`` facts indexed with the 64-d fake embedder."""
    fill(vault.root)
    vault.reindex()
    assert manifest(vault.root)["embedder"] == "fake:64"
    open_indexes.forget(vault.root, release_chroma=True)
    return vault


def switched(root: Path, monkeypatch: pytest.MonkeyPatch, **overrides: Any) -> Vault:
    """The vault reopened with the 32-d embedder configured."""
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "fake:32")
    return Vault.open(root, overrides=overrides or None)


def test_searches_use_the_old_index_until_the_new_one_is_switched_in(
    built: Vault, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = built.root
    monkeypatch.setattr(migrate, "SEARCH_BATCH", 8)
    vault = switched(root, monkeypatch, **{"index.migrate_budget": 0})  # one batch per search
    capsys.readouterr()
    result = vault.search("port 8005", log=False)
    # Answered from the old index, the query embedded with the old (64-d) embedder.
    assert result.ids[0] == "f005"
    assert result.note is not None and "'fake:32'" in result.note
    assert "8 of 40 memories done" in result.note and "'fake:64'" in result.note
    assert manifest(root)["embedder"] == "fake:64"
    state = shadow(root)
    assert state is not None and state["done"] == 8 and state["total"] == N
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fake:64" in err and "rebuilding" in err

    # A memory written during the build is found at once (the old index keeps up) ...
    vault.add("semantic", "The zebra crossing on Main Street was repainted", id="zebra")
    assert vault.search("zebra crossing", log=False).ids[0] == "zebra"
    # ... and each search moves the build on, until the switch.
    for _ in range(10):
        if manifest(root)["embedder"] == "fake:32":
            break
        assert vault.search("port 8005", log=False).ids[0] == "f005"
    live = manifest(root)
    assert (live["embedder"], live["dimensions"], live["memories"]) == ("fake:32", 32, N + 1)
    assert str(live["home"]).startswith("build-") and not live["dirty"]
    index = store.index_dir(root)
    assert not (index / "shadow.json").exists()
    assert not (index / "search.sqlite").exists() and not (index / "chroma").exists()
    assert store.builds(root) == [live["home"]]

    # For a moment this process still reads the old index (a query may have been embedded
    # for it already); then the new one, with the new embedder.
    assert vault.search("zebra crossing", log=False).ids[0] == "zebra"
    assert embedder_for(vault.core).identity == "fake:64"
    monkeypatch.setattr(handle, "GRACE", 0.0)
    found = vault.search("zebra crossing", log=False, explain=True)
    assert found.note is None and found.ids[0] == "zebra"
    assert embedder_for(vault.core).identity == "fake:32"
    conn = store.connect(root, create=False)
    try:
        sizes = {len(blob) for (blob,) in conn.execute("SELECT vec FROM chunks")}
        stored = conn.execute(
            "SELECT c.vec FROM chunks AS c JOIN docs AS d ON d.key = c.doc WHERE d.id = 'zebra'"
        ).fetchone()[0]
    finally:
        conn.close()
    assert sizes == {32 * 4}  # nothing of the old index survived in the new one
    query = FakeEmbedder(32).embed_query("zebra crossing")
    own = float(np.frombuffer(stored, dtype=np.float32) @ query)
    explain = found.hits[0].explain
    assert explain is not None and explain["vector"]["own"] == pytest.approx(own, abs=1e-4)
    assert index_health(Vault.open(root).core) == []


def test_a_failed_build_resumes_where_it_stopped(
    built: Vault, monkeypatch: pytest.MonkeyPatch, embed_calls: list[tuple[int, str]]
) -> None:
    root = built.root
    monkeypatch.setattr(migrate, "BATCH", 10)
    original = FakeEmbedder.embed_documents
    batches = 0

    def dies_on_the_fourth_batch(self: FakeEmbedder, texts: Any) -> Any:
        nonlocal batches
        if self.dimensions == 32:
            batches += 1
            if batches == 4:
                raise RuntimeError("the machine went away")
        return original(self, texts)

    monkeypatch.setattr(FakeEmbedder, "embed_documents", dies_on_the_fourth_batch)
    with pytest.raises(RuntimeError, match="went away"):
        switched(root, monkeypatch).reindex()
    state = shadow(root)
    assert state is not None and state["done"] == 30  # three batches were committed
    assert manifest(root)["embedder"] == "fake:64"  # the old index is untouched

    monkeypatch.setattr(FakeEmbedder, "embed_documents", original)  # counts (embed_calls)
    embed_calls.clear()
    open_indexes.forget(root, release_chroma=True)  # as the next process would
    report = switched(root, monkeypatch).reindex()
    assert report.rebuilt and report.memories == N
    assert report.embedded == len(embed_calls) == N - 30  # only what was not done yet
    assert manifest(root)["embedder"] == "fake:32" and shadow(root) is None
    assert Vault.open(root).search("port 8033", log=False).ids[0] == "f033"


KILLED_BUILD = """
import sys, time
from memvault import Vault
from memvault.embeddings.fake import FakeEmbedder
from memvault.index import migrate

migrate.BATCH = 4
original = FakeEmbedder.embed_documents

def slow(self, texts):
    time.sleep(0.15)
    return original(self, texts)

FakeEmbedder.embed_documents = slow
Vault.open(sys.argv[1]).reindex()
print("finished", flush=True)
"""


@pytest.fixture
def killed(built: Vault, tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """``memvault reindex`` for the 32-d embedder SIGKILLed after a few batches; yields the
    vault's root and how many memories the half-built index holds."""
    root = built.root
    env = {**os.environ, "MEMVAULT_EMBEDDER": "fake:32"}
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_BUILD, str(root)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            state = shadow(root)
            if state is not None and state["done"] >= 12:
                break
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the build made no progress"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    state = shadow(root)
    assert state is not None
    conn = store.connect(root, create=False, home=state["home"])
    try:
        done = int(conn.execute("SELECT count(*) FROM docs").fetchone()[0])
    finally:
        conn.close()
    assert 12 <= done < N
    yield root, done


def test_a_killed_build_resumes_on_the_next_reindex_without_embedding_again(
    killed: tuple[Path, int],
    monkeypatch: pytest.MonkeyPatch,
    embed_calls: list[tuple[int, str]],
) -> None:
    root, done = killed
    assert manifest(root)["embedder"] == "fake:64"
    # Meanwhile searches are answered by the old index.
    monkeypatch.setattr(migrate, "SEARCH_BATCH", 1)
    vault = switched(root, monkeypatch, **{"index.migrate_budget": 0})
    result = vault.search("port 8021", log=False)
    assert result.ids[0] == "f021" and result.note and f"{done + 1} of {N}" in result.note
    embed_calls.clear()
    report = switched(root, monkeypatch).reindex()
    assert report.rebuilt and report.memories == N
    assert len(embed_calls) == report.embedded == N - done - 1
    assert all(dims == 32 for dims, _ in embed_calls)
    assert manifest(root)["embedder"] == "fake:32" and shadow(root) is None
    assert vault.search("port 8021", log=False).ids[0] == "f021"


def test_reindex_full_drops_a_half_built_index(
    killed: tuple[Path, int],
    monkeypatch: pytest.MonkeyPatch,
    embed_calls: list[tuple[int, str]],
    cli: Any,
) -> None:
    root, _ = killed
    state = shadow(root)
    assert state is not None
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "fake:32")
    res = cli("--vault", root, "reindex", "--full", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["rebuilt"] is True and data["embedded"] == N == len(embed_calls)
    assert not (store.index_dir(root) / state["home"]).exists()
    live = manifest(root)
    assert live["embedder"] == "fake:32" and store.builds(root) == [live["home"]]
    assert shadow(root) is None


def test_doctor_reports_the_embedder_and_the_build(
    built: Vault, monkeypatch: pytest.MonkeyPatch, cli: Any
) -> None:
    root = built.root
    report = doctor_report(Vault.open(root).core)
    assert report["index"]["embedder"] == "fake:64" and report["index"]["dimensions"] == 64
    assert report["index"]["shadow"] is None and report["notes"] == []

    monkeypatch.setattr(migrate, "SEARCH_BATCH", 5)
    vault = switched(root, monkeypatch, **{"index.migrate_budget": 0})
    notes = index_health(vault.core)
    assert len(notes) == 1 and "builds a new index beside the old one" in notes[0], notes
    vault.search("port 8001", log=False)
    report = doctor_report(Vault.open(root).core)
    building = report["index"]["shadow"]
    assert report["index"]["embedder"] == "fake:64"
    assert (building["embedder"], building["done"], building["total"]) == ("fake:32", 5, N)
    assert building["building"] is False
    assert any("'fake:32' is half built (it resumes): 5 of 40" in n for n in report["notes"])
    res = cli("--vault", root, "doctor")
    assert res.code == 0 and "note: the index uses embedder 'fake:64'" in res.err
    assert "'fake:32' is half built (it resumes): 5 of 40 memories done" in res.err
    data = json.loads(cli("--vault", root, "doctor", "--json").out)
    assert data["index"]["shadow"]["done"] == 5

    # Back to the old embedder: the half-built index is reported, then removed.
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "fake")
    back = Vault.open(root)
    assert any("left over" in n for n in index_health(back.core))
    back.reindex()
    assert shadow(root) is None and store.builds(root) == []
    assert index_health(back.core) == []


def test_an_old_embedder_that_cannot_be_loaded_serves_keywords_only(
    built: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = built.root
    old = manifest(root)
    old["embedder"], old["embedder_spec"] = "gone-plugin:v1", "gone-plugin"
    store.write_manifest(root, old)
    monkeypatch.setattr(migrate, "SEARCH_BATCH", 5)
    vault = Vault.open(root, overrides={"index.migrate_budget": 0})  # fake:64 again
    result = vault.search("billing service port 8016", log=False)
    assert result.note is not None and "keywords only" in result.note
    assert result.ids[0] == "f016"
    assert manifest(root)["embedder"] == "gone-plugin:v1"
    assert Vault.open(root).reindex().rebuilt
    assert manifest(root)["embedder"] == "fake:64"
    assert Vault.open(root).search("port 8016", log=False).note is None


def test_a_damaged_index_is_still_rebuilt_in_place(
    built: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = built.root
    monkeypatch.setattr(migrate, "SEARCH_BATCH", 5)
    vault = switched(root, monkeypatch, **{"index.migrate_budget": 0})
    vault.search("port 8001", log=False)
    assert shadow(root) is not None
    open_indexes.forget(root, release_chroma=True)
    (store.index_dir(root) / "search.sqlite").write_bytes(b"\x00garbage" * 100)
    (store.index_dir(root) / "manifest.json").write_text("{not json", encoding="utf-8")
    result = Vault.open(root).search("port 8001", log=False)
    assert result.ids[0] == "f001" and result.note is None
    live = manifest(root)
    assert live["embedder"] == "fake:32" and "home" not in live
    assert shadow(root) is None and store.builds(root) == []


def test_a_reader_that_opened_the_old_index_keeps_reading_it_after_the_switch(
    built: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = built.root
    old = ensure_fresh(Vault.open(root).core)
    # Another process builds the new index, switches to it and deletes the old files.
    proc = run_memvault("--vault", root, "reindex", env={"MEMVAULT_EMBEDDER": "fake:32"})
    assert proc.returncode == 0, proc.stderr
    assert manifest(root)["embedder"] == "fake:32"
    assert not (store.index_dir(root) / "search.sqlite").exists()
    # The handle opened before still reads the old index whole (never the new one's rows).
    assert old.conn.execute("SELECT count(*) FROM docs").fetchone()[0] == N
    assert old.memory_vectors("semantic")[2].shape == (N, 64)
    # This process's next search opens the new index, and embeds its query to match.
    vault = switched(root, monkeypatch)
    result = vault.search("port 8002", log=False)
    assert result.ids[0] == "f002" and result.note is None
    assert embedder_for(vault.core).identity == "fake:32"


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_chroma(tmp_path_factory.mktemp("chroma"), _free_port()) as url:
        yield url


@pytest.mark.slow  # starts a real `chroma run` server
def test_server_mode_builds_the_new_embedders_collection_beside_the_old(
    chroma_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_URL", chroma_url)
    vault = Vault.init(tmp_path / "v")
    fill(vault.root, 12)
    vault.reindex()
    root = vault.root
    stem = f"mv-{vault.config.get('index.vault_id')}-"
    before = server_collections(chroma_url, stem)
    assert sum(before.values()) == 12
    monkeypatch.setattr(migrate, "SEARCH_BATCH", 4)
    during = switched(root, monkeypatch, **{"index.migrate_budget": 0}).search(
        "port 8005", log=False, explain=True
    )
    assert during.ids[0] == "f005" and during.note and "4 of 12" in during.note
    assert "ann" in str(during.hits[0].explain)  # the old collection, on the server
    report = switched(root, monkeypatch).reindex()
    assert report.rebuilt and report.memories == 12
    after = server_collections(chroma_url, stem)
    added = {name: n for name, n in after.items() if name not in before}
    assert sum(added.values()) == 12  # every vector of the new embedder is on the server
    assert {name: after[name] for name in before} == before  # a shared collection stays
    found = Vault.open(root).search("port 8005", log=False, explain=True)
    assert found.ids[0] == "f005" and found.note is None
    assert "ann" in str(found.hits[0].explain)
    assert manifest(root)["embedder"] == "fake:32" and not manifest(root)["dirty"]


def test_a_context_block_whose_first_search_finishes_the_switch_still_answers(
    built: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = built.root
    vault = switched(root, monkeypatch)
    # context() embeds its query once (with the old index's embedder: the switch has not
    # happened yet) and runs four searches with it; the first one finishes the new index.
    block = vault.context("which service listens on port 8005", budget=400)
    assert "port 8005" in block.text
    assert manifest(root)["embedder"] == "fake:32"
    assert "port 8005" in vault.context("which service listens on port 8005", budget=400).text
    time.sleep(handle.GRACE)
    assert "port 8005" in vault.context("which service listens on port 8005", budget=400).text
    assert embedder_for(vault.core).identity == "fake:32"
