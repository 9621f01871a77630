"""The vector leg's shortlist from reduced copies of the vectors (memvault.index.coarse):
made only in a process that keeps searching, kept current after writes, and not the answer
when the filter leaves too few of its best rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memvault import Vault
from memvault.index import coarse, flat, query, store
from memvault.index.filters import IndexFilter
from memvault.index.handle import Index, open_indexes
from memvault.store.lock import try_lock

from helpers import imported_in_memory

TYPES = ("episodic", "semantic", "procedural")
VIEWER = IndexFilter(viewer_agent="a1", viewer_team="t1")  # sees 9 memories in 10


@pytest.fixture
def big(vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Index:
    """600 memories of three types, searched as if they were many: the shortlist is a
    quarter of the rows, picked with a copy of half the dimensions."""
    monkeypatch.setattr(coarse, "COARSE_ABOVE", 100)
    monkeypatch.setattr(coarse, "DIMS", 32)  # of the fake embedder's 64
    monkeypatch.setattr(coarse, "PER_HIT", 30)
    monkeypatch.setattr(coarse, "SHARE", 4)
    lines = []
    for i in range(600):
        rec = {
            "id": f"m{i:04d}",
            "type": TYPES[i % 3],
            "content": f"note {i} about the {('cache', 'deploy', 'budget', 'schema')[i % 4]} "
            f"{('on monday', 'for the team', 'in staging', 'after lunch', 'twice')[i % 5]}",
        }
        if i % 10 == 3:
            rec.update(scope="self", agent=("a2", "a3")[i % 2])
        else:
            rec.update(scope="team", team="t1")
        if rec["type"] == "procedural":
            rec["steps"] = [f"step {i}"]
        lines.append(rec)
    idx = imported_in_memory(vault, lines, tmp_path)
    return idx


def _stored(idx: Index, doc_type: str, position: int) -> tuple[int, np.ndarray]:
    """A stored row's chunk rowid and vector."""
    rowids, _, matrix = idx.memory_vectors(doc_type)
    return int(rowids[position]), np.asarray(matrix[position], dtype=np.float32)


def _exact(idx: Index, vec: np.ndarray, filt: IndexFilter, k: int) -> list[tuple[int, int, float]]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(coarse, "COARSE_ABOVE", 10**9)
        return query.vector_leg(idx, vec, filt, TYPES, k)[0]


def test_only_a_process_that_keeps_searching_makes_the_copies(
    big: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(coarse, "WARM_AFTER", 3)
    big.coarse = coarse.Coarse()  # a process that has not searched yet
    _, vec = _stored(big, "semantic", 10)
    hows = [query.vector_leg(big, vec, VIEWER, TYPES, 3)[1] for _ in range(3)]
    assert big.coarse.basis is not None
    assert [h.startswith("shortlist") for h in hows] == [False, False, True]


def test_the_shortlist_finds_each_row_of_every_type(big: Index) -> None:
    coarse.prepare(big)  # a server warming up
    same = shortlisted = 0
    for doc_type in TYPES:
        for position in range(0, 200, 9):
            row, vec = _stored(big, doc_type, position)
            found, how = query.vector_leg(big, vec, VIEWER, TYPES, 3)
            shortlisted += how.startswith("shortlist")
            exact = _exact(big, vec, VIEWER, 3)
            assert found[0] == pytest.approx(exact[0])
            if big.allowed_among(VIEWER, [big.docs_of([row])[row]]):
                assert found[0][0] == row
            same += [r for r, _, _ in found] == [r for r, _, _ in exact]
    assert shortlisted >= 55  # of 69 (the others: a hidden row among the best)
    assert same >= 60  # of 69: the rest differ further down (half the dimensions)


def test_a_copy_follows_the_writes(vault: Vault, big: Index) -> None:
    coarse.prepare(big)
    made = big.coarse.copies["semantic"][1]
    added = vault.add("semantic", "The quarterly budget review moved to Thursday", team="t1")
    vault.search("budget", log=False)  # the index catches up: the flat file grows
    idx = open_indexes.get(vault.root)
    assert idx is big
    rowids, docs, matrix = idx.memory_vectors("semantic")
    where = int(np.flatnonzero(docs == docs.max())[0])
    found, how = query.vector_leg(idx, np.asarray(matrix[where]), VIEWER, TYPES, 3)
    assert how.startswith("shortlist")
    assert found[0][0] == int(rowids[where])
    low = idx.coarse.copies["semantic"][1]
    assert len(low) == len(matrix) > len(made)
    assert np.array_equal(low[: len(made)], made)  # the old rows are not projected again
    assert added.memory.id


def test_a_filter_that_leaves_few_best_rows_is_scored_exactly(big: Index) -> None:
    coarse.prepare(big)
    few = IndexFilter(viewer_agent="a1", viewer_team="t1", ids=("m0004", "m0301", "m0452"))
    rng = np.random.default_rng(3)
    for _ in range(20):
        q = rng.standard_normal(big.dimensions).astype(np.float32)
        q /= np.linalg.norm(q)
        found, how = query.vector_leg(big, q, few, TYPES, 1)
        assert found == _exact(big, q, few, 1)


def test_vectors_read_from_sqlite_are_all_scored_and_leave_the_copies_alone(
    vault: Vault, big: Index
) -> None:
    coarse.prepare(big)
    made = {t: low for t, (_, low) in big.coarse.copies.items()}
    vault.add("semantic", "The office dog is called Rex", team="t1")
    folder = store.data_dir(vault.root, "") / flat.FLAT_DIR
    with try_lock(folder / "lock") as got:  # another process is patching the flat files
        assert got
        vault.search("office dog", log=False)  # the index catches up, reads SQLite's vectors
        idx = open_indexes.get(vault.root)
        assert idx is big
        _, _, matrix = idx.memory_vectors("semantic")
        assert coarse.flat_file(matrix) is None
        found, how = query.vector_leg(idx, np.asarray(matrix[-1]), VIEWER, TYPES, 3)
    assert not how.startswith("shortlist")
    assert found == _exact(idx, np.asarray(matrix[-1]), VIEWER, 3)
    assert all(idx.coarse.copies[t][1] is low for t, low in made.items())  # not thrown away
