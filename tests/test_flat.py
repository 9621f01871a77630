"""The flat copy of the index's vectors (memvault.index.flat): built once, patched from the
change log after each write, never serving a vector SQLite no longer holds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memvault import Vault
from memvault.index import flat, query, store
from memvault.index.filters import IndexFilter
from memvault.index.handle import open_indexes
from memvault.store.lock import try_lock

from helpers import imported_in_memory

TYPES = ("episodic", "semantic", "procedural")


def _from_sqlite(vault: Vault) -> dict[str, dict[int, tuple[int, bytes]]]:
    """``{type: {chunk rowid: (doc, vector bytes)}}`` straight from SQLite."""
    conn = store.connect(vault.root, create=False)
    try:
        out: dict[str, dict[int, tuple[int, bytes]]] = {t: {} for t in TYPES}
        sql = (
            "SELECT d.type, c.rowid, c.doc, c.vec FROM chunks AS c JOIN docs AS d "
            "ON d.key = c.doc WHERE c.vec IS NOT NULL"
        )
        for t, r, d, v in conn.execute(sql):
            out[t][int(r)] = (int(d), bytes(v))
        return out
    finally:
        conn.close()


def _from_flat(vault: Vault) -> dict[str, dict[int, tuple[int, bytes]]]:
    """The same, as a fresh process reads it from the flat files (live rows only)."""
    open_indexes.forget(vault.root, release_chroma=True)
    vault.search("warm", log=False)
    idx = open_indexes.get(vault.root)
    assert idx is not None
    out: dict[str, dict[int, tuple[int, bytes]]] = {}
    for t in TYPES:
        got = flat.vectors(idx, t)
        assert got is not None
        rowids, docs, matrix = got
        out[t] = {
            int(r): (int(d), np.asarray(matrix[i], dtype=np.float32).tobytes())
            for i, (r, d) in enumerate(zip(rowids, docs, strict=True))
            if r >= 0
        }
        assert all(int(d) == flat.DEAD_DOC for r, d in zip(rowids, docs, strict=True) if r < 0)
    return out


def _folder(vault: Vault):  # noqa: ANN202 - a Path
    return store.data_dir(vault.root, "") / flat.FLAT_DIR


def test_the_flat_vectors_follow_every_write(vault: Vault) -> None:
    first = vault.add("semantic", "The billing service stores invoices in PostgreSQL").memory
    vault.add("episodic", "We moved the staging cluster to eu-west-1 on Monday")
    vault.add("procedural", "Rotate the keys", steps=["make a key", "deploy", "revoke"])
    assert _from_flat(vault) == _from_sqlite(vault)  # built from SQLite
    built = {p.name for p in _folder(vault).glob("*.f32")}
    vault.add("semantic", "The search service is written in Go")
    vault.update(first.id, {}, "reword", content="Invoices live in PostgreSQL 15 now")
    other = vault.add("semantic", "A fact soon forgotten").memory
    vault.forget(other.id, reason="wrong")
    assert _from_flat(vault) == _from_sqlite(vault)  # patched: appended, old rows dead
    assert {p.name for p in _folder(vault).glob("*.f32")} == built  # the same files, grown
    vault.update(first.id, {"type": "episodic"}, "it was an event after all", touch=False)
    assert _from_flat(vault) == _from_sqlite(vault)  # a document changing type moves over


def test_a_rebuilt_index_starts_the_flat_files_over(vault: Vault) -> None:
    vault.add("semantic", "Lunch is at noon")
    assert _from_flat(vault) == _from_sqlite(vault)
    vault.reindex(full=True)  # another database: its token differs from the files'
    vault.add("semantic", "Dinner is at seven")
    assert _from_flat(vault) == _from_sqlite(vault)


def test_a_torn_or_busy_flat_file_falls_back_to_sqlite(vault: Vault) -> None:
    vault.add("semantic", "The office cat is called Biscuit", id="cat")
    assert _from_flat(vault) == _from_sqlite(vault)
    (_folder(vault) / "semantic.rows").write_bytes(b"\x93NUMPY torn")
    assert _from_flat(vault) == _from_sqlite(vault)  # rebuilt
    vault.add("semantic", "The office dog is called Rex", id="dog")
    open_indexes.forget(vault.root, release_chroma=True)
    with try_lock(_folder(vault) / "lock") as got:  # another process is patching the files
        assert got
        assert Vault.open(vault.root).search("office dog", log=False).ids[:2] == ["dog", "cat"]
        idx = open_indexes.get(vault.root)
        assert idx is not None and flat.vectors(idx, "semantic") is None


def test_vectors_a_killed_patch_appended_are_cut_before_the_next_append(vault: Vault) -> None:
    vault.add("semantic", "The office cat is called Biscuit", id="cat")
    assert _from_flat(vault) == _from_sqlite(vault)
    (vectors,) = _folder(vault).glob("semantic-*.f32")
    size = vectors.stat().st_size
    with open(vectors, "ab") as out:  # appended, then killed before its rows file was written
        out.write(np.full(384, 0.5, dtype=np.float32).tobytes()[: 384 * 3])
    vault.add("semantic", "The office dog is called Rex", id="dog")
    assert _from_flat(vault) == _from_sqlite(vault)  # the dog's row maps to the dog's vector
    assert vectors.stat().st_size == size * 2  # two vectors: the torn bytes are gone
    # a file holding fewer vectors than its rows say is built anew
    with open(vectors, "r+b") as out:
        out.truncate(size)
    vault.add("semantic", "The office fish is called Nemo", id="fish")
    assert _from_flat(vault) == _from_sqlite(vault)


@pytest.mark.parametrize("threshold", [0])
def test_exact_below_zero_still_asks_chroma(vault: Vault, threshold: int) -> None:
    vault.set_config("index.exact_below", threshold, "always ask Chroma")
    vault.add("semantic", "Deploys are frozen on Fridays", id="freeze")
    assert Vault.open(vault.root).search("deploy freeze Friday", log=False).ids[0] == "freeze"
    assert not _folder(vault).exists()


def test_filtering_the_best_rows_finds_what_filtering_every_row_finds(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above ``query.PREFILTER_ABOVE`` vectors a new process filters the best-scoring rows
    only (SQLite asked about those documents); the answer must be the one filtering every
    document gives, ties and starved filters included."""
    agents = ("a1", "a2", "a3")
    scopes = ("self", "team", "global")
    lines = []
    for i in range(600):
        rec = {
            "id": f"m{i:04d}",
            "type": TYPES[i % 3],
            "scope": scopes[i % 3] if i % 50 else "self",
            "agent": agents[(i // 3) % 3],
            "content": f"note {i} about {('cache', 'deploy', 'budget', 'schema')[i % 4]}",
        }
        if rec["scope"] == "team":
            rec["team"] = ("t1", "t2")[i % 2]
        if rec["type"] == "procedural":
            rec["steps"] = [f"step {i}"]
        lines.append(rec)
    idx = imported_in_memory(vault, lines, tmp_path)
    filters = [
        IndexFilter(viewer_agent="a1", viewer_team="t1"),
        IndexFilter(viewer_agent="a2", viewer_team=None, types=("semantic",)),
        IndexFilter(viewer_team="t2"),
        IndexFilter(viewer_agent="a3", viewer_team="t1", scope="self"),  # a few dozen rows
        IndexFilter(viewer_agent="a1", viewer_team="t1", ids=("m0003", "m0100")),  # starved
    ]
    rng = np.random.default_rng(7)
    prefiltered = 0
    for filt in filters:
        for k in (1, 7, 60):
            q = rng.standard_normal(idx.dimensions).astype(np.float32)
            q /= np.linalg.norm(q)
            monkeypatch.setattr(query, "PREFILTER_ABOVE", 0)
            idx.forget_counts()
            fast, how = query.vector_leg(idx, q, filt, TYPES, k)
            prefiltered += "among the best" in how
            monkeypatch.setattr(query, "PREFILTER_ABOVE", 10**9)
            idx.forget_counts()
            full, _ = query.vector_leg(idx, q, filt, TYPES, k)
            assert fast == full, (filt, k)
            assert full
    assert prefiltered >= 9  # the short path ran for the broad filters


def test_the_vectors_a_search_reads_by_chunk_are_sqlites(vault: Vault) -> None:
    """The fusion reads candidates' vectors by chunk rowid from the mapped matrices: the
    same as SQLite's, after writes too (a replaced vector's old row is dead, not served)."""
    first = vault.add("semantic", "The billing service stores invoices in PostgreSQL").memory
    vault.add("episodic", "We moved the staging cluster to eu-west-1 on Monday")
    vault.add("procedural", "Rotate the keys", steps=["make a key", "deploy", "revoke"])
    for step in range(2):
        if step:
            vault.update(first.id, {}, "reword", content="Invoices live in PostgreSQL 15 now")
        vault.search("invoices", log=False)
        idx = open_indexes.get(vault.root)
        assert idx is not None and idx.in_memory
        stored = {
            r: v for per_type in _from_sqlite(vault).values() for r, (_, v) in per_type.items()
        }
        asked = [*stored, 10**6]  # and a chunk that does not exist
        got = query.vectors(idx, asked)
        assert {r: v.tobytes() for r, v in got.items()} == stored
