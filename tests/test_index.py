"""The search index: incremental = full rebuild, drift, embedder changes, damage, locking.

Real Chroma and SQLite in ``tmp_path``, real git; the fake embedder (``MEMVAULT_EMBEDDER=fake``)
stands in for the model.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from memvault import Vault
from memvault.embeddings.fake import FakeEmbedder
from memvault.index import (
    ChangeReport,
    DiskDoc,
    IndexedDoc,
    index_health,
    open_indexes,
    plan_changes,
    store,
)

from helpers import git, run_memvault, write


@pytest.fixture
def embed_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the (fake) embedder is asked to embed as a document."""
    calls: list[str] = []
    original = FakeEmbedder.embed_documents

    def counting(self: FakeEmbedder, texts: Any) -> Any:
        calls.extend(texts)
        return original(self, texts)

    def query(self: FakeEmbedder, text: str) -> Any:
        return original(self, [text])[0]  # queries are not documents: not counted

    monkeypatch.setattr(FakeEmbedder, "embed_documents", counting)
    monkeypatch.setattr(FakeEmbedder, "embed_query", query)
    return calls


def memory_text(mid: str, body: str, mtype: str = "semantic", **keys: object) -> str:
    lines = ["---", f"id: {mid}", f"type: {mtype}"]
    lines += [f"{k}: {v}" for k, v in keys.items()]
    return "\n".join([*lines, "---", "", body, ""])


def seed(vault: Vault) -> None:
    vault.add(
        "semantic",
        "The API rate limit is 100 requests per second",
        subject="api.rate-limit",
        tags=["api"],
    )
    vault.add("semantic", "PostgreSQL is the primary database for billing", category="decisions")
    vault.add(
        "procedural",
        "Release steps",
        title="Release",
        steps=["run tests", "tag", "push"],
        trigger=["release"],
    )
    for i, text in enumerate(
        [
            "Alice: we should move billing to postgres",
            "Bob: agreed, the migration starts monday",
            "Alice: remember the rate limit during the migration",
            "Bob: the deploy failed on friday",
        ]
    ):
        vault.add("episodic", text, session="planning", created=f"2026-03-0{i + 1}T10:00:00Z")


def results(vault: Vault, queries: list[str]) -> list[list[tuple[str, float]]]:
    out = []
    for q in queries:
        found = vault.search(q, limit=10, log=False)
        out.append([(h.id, round(h.score, 5)) for h in found])
    return out


def same_results(a: list[list[tuple[str, float]]], b: list[list[tuple[str, float]]]) -> bool:
    """The same hits in the same order, scores equal to 1e-4: an episode's recency boost
    follows the clock, so two searches seconds apart may round apart in the 5th decimal."""
    if [[i for i, _ in q] for q in a] != [[i for i, _ in q] for q in b]:
        return False
    pairs = (p for qa, qb in zip(a, b, strict=True) for p in zip(qa, qb, strict=True))
    return all(abs(x - y) <= 1e-4 for (_, x), (_, y) in pairs)


QUERIES = [
    "rate limit",
    "billing database",
    "release steps",
    "migration monday",
    "deploy friday",
    "postgres",
]


def test_plan_changes_classifies_every_kind_of_change() -> None:
    indexed = {
        "semantic/facts/a.md": IndexedDoc("sha-a", "text-a"),
        "semantic/facts/b.md": IndexedDoc("sha-b", "text-b"),
        "semantic/facts/c.md": IndexedDoc("sha-c", "text-c"),
        "semantic/facts/d.md": IndexedDoc("sha-d", "text-d"),
        "semantic/facts/e.md": IndexedDoc("sha-e", "text-e"),
    }
    disk = {
        "semantic/facts/a.md": DiskDoc("sha-a", None),  # unchanged
        "semantic/facts/b.md": DiskDoc("sha-b2", "text-b2"),  # new text
        "semantic/facts/c.md": DiskDoc("sha-c2", "text-c"),  # keys only
        "archive/semantic/facts/d.md": DiskDoc("sha-d2", "text-d"),  # moved
        "semantic/facts/f.md": DiskDoc("sha-f", "text-f"),  # new
    }
    plan = plan_changes(disk, indexed)
    assert plan == ChangeReport(
        added=("semantic/facts/f.md",),
        changed=("semantic/facts/b.md",),
        updated=("semantic/facts/c.md",),
        moved=(("semantic/facts/d.md", "archive/semantic/facts/d.md"),),
        removed=("semantic/facts/e.md",),
        unchanged=1,
    )
    assert plan.to_embed == ("semantic/facts/f.md", "semantic/facts/b.md")
    assert plan_changes(disk, indexed) == plan  # pure: same input, same plan
    assert plan_changes({}, {}).empty


@pytest.mark.parametrize("vectors", ["memory", "chroma"])
def test_incremental_equals_full_rebuild(vault: Vault, vectors: str) -> None:
    if vectors == "chroma":
        vault.set_config("index.exact_below", 0, "test the Chroma path")
    seed(vault)
    before = results(vault, QUERIES)  # builds the index
    assert before[0][0][0] == "the-api-rate-limit-is-100-requests-per"
    # A mix of changes: new memory, edited text, keys only, a move, a delete, a session change.
    vault.add("semantic", "Deploys happen on Tuesdays and Thursdays", subject="deploy.days")
    postgres = vault.get("postgresql-is-the-primary-database-for-billing")
    vault.update(
        postgres.id,
        {},
        "reword",
        content="PostgreSQL 16 is the primary database for billing and reports",
    )
    vault.update("release", {"importance": 5}, "more important")
    old = vault.get("the-api-rate-limit-is-100-requests-per")
    (vault.root / "archive/semantic/facts").mkdir(parents=True, exist_ok=True)
    git(vault.root, "mv", old.path, f"archive/{old.path}")
    git(vault.root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "archive")
    episode = next(m for m in vault.all_memories() if "deploy failed" in m.content)
    vault.forget(episode.id, "wrong")
    incremental = vault.reindex()
    assert incremental.changes.moved and incremental.changes.removed and incremental.changes.updated
    queries = [*QUERIES, "tuesdays", "reports"]
    after = results(vault, queries)
    archived = vault.search("rate limit", include_archive=True, log=False)
    full = vault.reindex(full=True)
    assert full.rebuilt
    assert same_results(results(vault, queries), after)
    assert [
        (h.id, round(h.score, 5))
        for h in vault.search("rate limit", include_archive=True, log=False)
    ] == [(h.id, round(h.score, 5)) for h in archived]
    assert "the-api-rate-limit-is-100-requests-per" in [h.id for h in archived]
    assert "the-api-rate-limit-is-100-requests-per" not in [
        h.id for h in vault.search("rate limit", log=False)
    ]


def test_unchanged_text_is_never_embedded_again(vault: Vault, embed_calls: list[str]) -> None:
    seed(vault)
    vault.reindex()
    embed_calls.clear()
    vault.update("release", {"importance": 4}, "keys only")
    report = vault.reindex()
    assert report.changes.updated == (vault.get("release").path,)
    assert embed_calls == []
    # A move (same text, new path) keeps its vectors.
    fact = vault.get("the-api-rate-limit-is-100-requests-per")
    target = vault.root / "semantic" / "facts" / "renamed-rate-limit.md"
    os.replace(vault.root / fact.path, target)
    report = vault.reindex()
    assert report.changes.moved == ((fact.path, "semantic/facts/renamed-rate-limit.md"),)
    assert embed_calls == []
    assert vault.search("rate limit", log=False)[0].path == "semantic/facts/renamed-rate-limit.md"
    # One edited memory: exactly its chunk is embedded.
    vault.update("release", {}, "reword", content="Release steps, carefully")
    report = vault.reindex()
    assert report.embedded == 1 and len(embed_calls) == 1
    assert "Release steps, carefully" in embed_calls[0]
    embed_calls.clear()
    assert vault.reindex().changes.empty and embed_calls == []


def test_context_vectors_follow_session_neighbours(vault: Vault, embed_calls: list[str]) -> None:
    seed(vault)  # four episodes in session "planning"
    report = vault.reindex()
    assert report.context_embedded == 4  # each planning turn, with its neighbours
    conn = store.connect(vault.root, create=False)
    with_context = conn.execute("SELECT count(*) FROM chunks WHERE cvec IS NOT NULL").fetchone()[0]
    assert with_context == 4
    episodes = sorted(
        (m for m in vault.all_memories() if m.type == "episodic"), key=lambda m: m.meta["created"]
    )
    embed_calls.clear()
    vault.update(episodes[1].id, {}, "reword", content="Bob: agreed, the migration starts tuesday")
    report = vault.reindex()
    # the memory itself, and the context vectors of itself and its two neighbours
    assert (report.embedded, report.context_embedded) == (1, 3)
    assert len(embed_calls) == 4 and sum("starts tuesday" in t for t in embed_calls) == 4
    # leaving the session drops its context vector (and its neighbours' change)
    embed_calls.clear()
    vault.update(episodes[3].id, {"session": None}, "leave the session")
    report = vault.reindex()
    assert (
        report.embedded == 0 and report.context_embedded == 1
    )  # episodes[2] lost its next neighbour
    rows = dict(
        conn.execute(
            "SELECT d.id, c.cvec IS NOT NULL FROM chunks AS c JOIN docs AS d ON d.key = c.doc "
            "WHERE d.type = 'episodic'"
        ).fetchall()
    )
    assert rows[episodes[3].id] == 0 and rows[episodes[2].id] == 1


def test_long_memories_are_chunked_and_scored_by_their_best_chunk(
    vault: Vault, embed_calls: list[str]
) -> None:
    vault.config.set("index.chunk_words", 40)
    words = " ".join(f"filler{i}" for i in range(200))
    vault.add(
        "episodic",
        f"{words} the zeppelin landed safely {words}",
        title="Long transcript",
        category="transcript",
    )
    vault.add("episodic", "A short note about lunch")
    hits = vault.search("zeppelin landed", log=False)
    assert [h.title for h in hits][:1] == ["Long transcript"]
    assert len([h for h in hits if h.title == "Long transcript"]) == 1
    assert "zeppelin" in hits[0].snippet
    chunks = (
        store.connect(vault.root, create=False).execute("SELECT count(*) FROM chunks").fetchone()[0]
    )
    assert chunks > 5
    # Appending to the end re-embeds only the last chunk(s), not the whole transcript.
    memory = vault.get(hits[0].id)
    embed_calls.clear()
    vault.update(memory.id, {}, "append", content=memory.content + " and then it rained")
    vault.reindex()
    assert 1 <= len(embed_calls) <= 2


def test_hand_edit_without_commit_is_found(vault: Vault) -> None:
    seed(vault)
    vault.search("anything", log=False)
    # A long-lived process checks a few hundred files per search: a small vault each time.
    wait = 0.0
    write(
        vault.root,
        "semantic/facts/hand.md",
        memory_text("hand", "The office cat is called Biscuit"),
    )
    time.sleep(wait)
    assert vault.search("Biscuit", log=False)[0].id == "hand"
    # Editing it by hand again (still no commit) replaces what the index knows.
    time.sleep(0.01)
    write(
        vault.root, "semantic/facts/hand.md", memory_text("hand", "The office cat is called Waffle")
    )
    time.sleep(wait)
    assert [h.id for h in vault.search("Waffle", log=False)][:1] == ["hand"]
    assert "hand" not in [h.id for h in vault.search("Biscuit", log=False)]
    # Deleted by hand: gone from results.
    (vault.root / "semantic/facts/hand.md").unlink()
    time.sleep(wait)
    assert "hand" not in [h.id for h in vault.search("Waffle cat", log=False)]
    # An invalid file is not indexed and does not break search.
    write(vault.root, "semantic/facts/broken.md", "---\nid: Broken Id\n---\nno type\n")
    time.sleep(wait)
    assert vault.search("rate limit", log=False)[0].id == "the-api-rate-limit-is-100-requests-per"


def test_a_fresh_process_sees_drift_made_while_it_was_not_running(vault: Vault) -> None:
    seed(vault)
    vault.reindex()
    write(
        vault.root,
        "semantic/facts/late.md",
        memory_text("late", "Quarterly planning happens in Lisbon"),
    )
    proc = run_memvault("--vault", vault.root, "fact", "Lisbon planning", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["hits"][0]["id"] == "late"


def test_embedder_change_forces_a_rebuild(
    vault: Vault, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seed(vault)
    vault.search("rate limit", log=False)
    assert store.read_manifest(vault.root)["embedder"] == "fake:64"
    capsys.readouterr()
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "fake:32")
    reopened = Vault.open(vault.root)
    hits = reopened.search("rate limit", log=False)
    assert hits[0].id == "the-api-rate-limit-is-100-requests-per"
    err = capsys.readouterr().err
    assert "fake:64" in err and "rebuilding" in err and err.count("\n") == 1
    manifest = store.read_manifest(vault.root)
    assert (manifest["embedder"], manifest["dimensions"]) == ("fake:32", 32)
    conn = store.connect(vault.root, create=False)
    sizes = {len(blob) for (blob,) in conn.execute("SELECT vec FROM chunks")}
    assert sizes == {32 * 4}  # no 64-d vector survived: nothing mixed
    notes = index_health(Vault.open(vault.root).core)
    assert notes == []
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "fake:16")
    assert any("another" in n or "embedder" in n for n in index_health(Vault.open(vault.root).core))


@pytest.mark.parametrize("damage", ["garble", "delete", "manifest", "chroma"])
def test_a_damaged_index_is_rebuilt_not_a_stack_trace(
    vault: Vault, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Chroma is written at once and read (below the threshold its writes would wait)
    vault.set_config("index.exact_below", 0, "ask Chroma")
    seed(vault)
    vault.search("rate limit", log=False)
    open_indexes.forget(vault.root, release_chroma=True)  # as a new process would
    base = vault.root / ".memvault" / "index"
    if damage == "garble":
        for name in ("search.sqlite", "manifest.json"):
            (base / name).write_bytes(b"\x00garbage" * 100)
        for path in (base / "chroma").rglob("*"):
            if path.is_file():
                path.write_bytes(b"\x00garbage" * 10)
    elif damage == "delete":
        shutil.rmtree(base)
    elif damage == "manifest":
        (base / "manifest.json").write_text("{not json", encoding="utf-8")
    else:
        shutil.rmtree(base / "chroma")
    capsys.readouterr()
    hits = Vault.open(vault.root).search("rate limit", log=False)
    assert hits[0].id == "the-api-rate-limit-is-100-requests-per"
    assert "Traceback" not in capsys.readouterr().err
    if damage == "garble":  # and the CLI in a fresh process agrees (one case: it is slow)
        for name in ("search.sqlite", "manifest.json"):
            (base / name).write_bytes(b"\x00garbage" * 100)
        proc = run_memvault("--vault", vault.root, "search", "billing database", "--json")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["hits"]
        assert "Traceback" not in proc.stderr


def test_a_crash_between_sqlite_and_chroma_is_repaired_without_embedding(
    vault: Vault, embed_calls: list[str]
) -> None:
    vault.set_config("index.exact_below", 0, "ask Chroma")  # (else Chroma's writes wait)
    seed(vault)
    vault.reindex()
    open_indexes.forget(vault.root, release_chroma=True)
    manifest = store.read_manifest(vault.root)
    manifest["dirty"] = True
    store.write_manifest(vault.root, manifest)
    shutil.rmtree(vault.root / ".memvault/index/chroma")
    embed_calls.clear()
    hits = Vault.open(vault.root).search("primary database", log=False)
    assert hits[0].id == "postgresql-is-the-primary-database-for-billing"
    assert embed_calls == []  # vectors came back from SQLite
    assert store.read_manifest(vault.root)["dirty"] is False


def test_readers_never_wait_for_a_writer(vault: Vault) -> None:
    seed(vault)
    vault.search("rate limit", log=False)
    write(
        vault.root,
        "semantic/facts/pending.md",
        memory_text("pending", "The zebra crossing was repainted"),
    )
    with vault.locked():  # another writer holds the lock
        started = time.monotonic()
        result = vault.search("zebra crossing", log=False)
        assert time.monotonic() - started < 5
        assert "pending" not in result.ids  # searched the index as it was
        assert result.note and "writing" in result.note
    assert vault.search("zebra crossing", log=False)[0].id == "pending"  # caught up once free


def test_reindex_cli_reports_and_index_is_ignored_by_git(vault: Vault, cli: Any) -> None:
    seed(vault)
    res = cli("--vault", vault.root, "reindex", "--json")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["memories"] >= 7 and data["embedded"] >= 7
    res = cli("--vault", vault.root, "reindex", "--full", "--json")
    assert res.code == 0 and json.loads(res.out)["rebuilt"] is True
    res = cli("--vault", vault.root, "reindex")
    assert res.code == 0 and "up to date" in res.err
    assert git(vault.root, "status", "--porcelain").strip() == ""


def test_doctor_reports_how_far_behind_the_index_is(vault: Vault) -> None:
    seed(vault)
    assert any("not built" in n for n in index_health(vault.core))
    vault.reindex()
    assert index_health(vault.core) == []
    write(vault.root, "semantic/facts/x.md", memory_text("x", "one"))
    write(vault.root, "semantic/facts/y.md", memory_text("y", "two"))
    notes = index_health(vault.core)
    assert any("2 memories behind" in n for n in notes), notes
    from memvault.reports import doctor_report

    assert any("behind" in n for n in doctor_report(vault.core)["notes"])


def test_manifest_records_commit_generation_and_counts(vault: Vault) -> None:
    seed(vault)
    report = vault.reindex()
    manifest = store.read_manifest(vault.root)
    assert manifest["schema"] == store.SCHEMA
    assert manifest["commit"] == git(vault.root, "rev-parse", "HEAD").strip()
    assert manifest["memories"] == report.memories == len(vault.all_memories())
    assert manifest["generation"] == (vault.root / ".memvault/index/generation").stat().st_size
    # ... and the chunks search.sqlite holds (counted only when the index is not dirty)
    db = store.data_dir(vault.root, store.home_of(manifest)) / store.DB_NAME
    conn = sqlite3.connect(db)
    try:
        chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    finally:
        conn.close()
    assert manifest["dirty"] is False
    assert manifest["chunks"] == report.chunks == chunks >= manifest["memories"] > 0


# --- a long-running process that watches the trees (the MCP server) ------------------------


def _eventually(check: Any, timeout: float = 3.0) -> Any:
    """``check()`` until it is truthy: file events reach the watcher within milliseconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.02)


@pytest.fixture
def watched(vault: Vault) -> Any:
    from memvault.watch import feed_searches, stop_feed

    seed(vault)
    feed = feed_searches(vault.root)
    if feed is None:
        pytest.skip("file events are not available here")
    for _ in range(2):  # building the index, then one comparison of every file
        vault.search("anything", log=False)
    yield vault
    stop_feed(feed)


def test_with_a_watcher_a_warm_search_stats_nothing(
    watched: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.index import drift

    walked: list[str] = []
    original = drift.walk_stats

    def counting(root: Path) -> Any:
        walked.append(str(root))
        return original(root)

    monkeypatch.setattr(drift, "walk_stats", counting)
    vault = watched
    for _ in range(30):
        vault.search("rate limit", log=False)
    assert walked == []
    write(vault.root, "semantic/facts/hand.md", memory_text("hand", "The office cat is Biscuit"))
    assert _eventually(lambda: [h.id for h in vault.search("Biscuit", log=False)][:1] == ["hand"])


def test_with_a_watcher_hand_edits_are_seen_on_the_next_search(watched: Vault) -> None:
    vault = watched

    def top(query: str) -> list[str]:
        return [h.id for h in vault.search(query, log=False)][:1]

    write(vault.root, "semantic/facts/hand.md", memory_text("hand", "The office cat is Biscuit"))
    assert _eventually(lambda: top("Biscuit") == ["hand"])
    time.sleep(0.01)
    write(vault.root, "semantic/facts/hand.md", memory_text("hand", "The office cat is Waffle"))
    assert _eventually(lambda: top("Waffle") == ["hand"])
    assert "hand" not in [h.id for h in vault.search("Biscuit", log=False)]
    # Renamed by hand (an editor's atomic save), then deleted.
    os.replace(vault.root / "semantic/facts/hand.md", vault.root / "semantic/facts/cat.md")
    assert _eventually(lambda: vault.search("Waffle", log=False)[0].path == "semantic/facts/cat.md")
    (vault.root / "semantic/facts/cat.md").unlink()
    assert _eventually(lambda: "hand" not in [h.id for h in vault.search("Waffle cat", log=False)])
    # A whole folder goes: one full comparison finds every file in it.
    write(vault.root, "procedural/misc/a.md", memory_text("pa", "Feed the parrot", "procedural"))
    assert _eventually(lambda: top("parrot") == ["pa"])
    shutil.rmtree(vault.root / "procedural/misc")
    assert _eventually(lambda: "pa" not in [h.id for h in vault.search("parrot", log=False)])
    # A tree removed and made again (another folder: the old watch went with the old one).
    write(vault.root, "inbox/.keep", "")
    shutil.rmtree(vault.root / "inbox")
    write(
        vault.root,
        "inbox/x/new.md",
        memory_text("newbie", "Zebras are proposed", status="proposed"),
    )
    assert _eventually(
        lambda: (
            [h.id for h in vault.search("Zebras", include_inbox=True, log=False)][:1] == ["newbie"]
        )
    )
    # ... and a file edited in it later is reported like any other.
    for _ in range(3):  # settle: the full comparison a folder event asks for is done
        vault.search("anything", log=False)
    time.sleep(0.01)
    write(
        vault.root,
        "inbox/x/new.md",
        memory_text("newbie", "Okapis are proposed", status="proposed"),
    )
    assert _eventually(
        lambda: (
            [h.id for h in vault.search("Okapis", include_inbox=True, log=False)][:1] == ["newbie"]
        )
    )


def test_with_a_watcher_an_edit_made_while_the_lock_is_busy_is_not_lost(watched: Vault) -> None:
    from memvault.store.lock import file_lock

    vault = watched
    with file_lock(vault.root / ".memvault/lock"):
        write(
            vault.root, "semantic/facts/hand.md", memory_text("hand", "The office cat is Biscuit")
        )
        time.sleep(0.2)  # the event has arrived; the search can't update the index now
        assert "hand" not in [h.id for h in vault.search("Biscuit", log=False)]
    # The file stays suspect until the index has caught up with it.
    assert [h.id for h in vault.search("Biscuit", log=False)][:1] == ["hand"]


def test_in_memory_vector_leg_is_the_same_on_one_thread_or_without_threadpoolctl(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.index import blas

    seed(vault)
    with_limit = [(h.id, round(h.score, 5)) for h in vault.search("rate limit", log=False)]
    assert with_limit
    monkeypatch.setattr(blas, "_blas", False)  # threadpoolctl missing: numpy's own loop
    assert [(h.id, round(h.score, 5)) for h in vault.search("rate limit", log=False)] == with_limit
