"""Nearest neighbours between memories from the index's vectors (consolidation's dedup)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from memvault import Vault
from memvault.embeddings import get_embedder
from memvault.index.neighbours import memory_vectors, open_index, similar_pairs

from helpers import write

WORDS = [
    "deploy",
    "cache",
    "migration",
    "table",
    "users",
    "rollback",
    "friday",
    "lunch",
    "hiring",
    "budget",
    "alert",
    "pager",
    "disk",
    "queue",
]


def _vault_with_near_duplicates(vault: Vault) -> Vault:
    vault.set_config("index.exact_below", 0, "exercise Chroma")
    vault = Vault.open(vault.root)
    lib = Vault.open(vault.root, role="librarian")
    rng = random.Random(3)
    for i in range(40):
        text = " ".join(rng.choice(WORDS) for _ in range(12))
        for copy in range(1 + i % 3):
            target = lib if i % 4 == 0 else vault
            target.add(
                "episodic",
                text + " again" * copy,
                scope="global" if i % 4 == 0 else "team",
                created=f"2026-01-{1 + copy:02d}T00:{i:02d}:00Z",
            )
    vault.reindex()
    return vault


def _embed(texts: list[str]) -> np.ndarray:
    return get_embedder("fake").embed_documents(texts)


def test_ann_finds_the_same_pairs_as_exact_and_never_crosses_groups(vault: Vault) -> None:
    vault = _vault_with_near_duplicates(vault)
    idx = open_index(vault.core, writer=False)
    memories = vault.all_memories()
    vecs = memory_vectors(idx, memories, _embed)
    assert vecs.stale == [] and all(len(r) == 1 for r in vecs.rowids)
    groups = [m.scope for m in memories]
    types = [m.type for m in memories]
    exact, r1 = similar_pairs(idx, vecs, types, groups, 10, 0.9, mode="exact")
    ann, r2 = similar_pairs(idx, vecs, types, groups, 10, 0.9, mode="ann")
    assert (r1.mode, r2.mode) == ("exact", "ann") and r2.queries >= len(memories)
    assert exact and ann == pytest.approx(exact)
    assert all(groups[i] == groups[j] and sim >= 0.9 for (i, j), sim in ann.items())


def test_k_limits_neighbours_per_memory(vault: Vault) -> None:
    vault = _vault_with_near_duplicates(vault)
    idx = open_index(vault.core, writer=False)
    memories = vault.all_memories()
    vecs = memory_vectors(idx, memories, _embed)
    groups = ["all"] * len(memories)
    pairs, _ = similar_pairs(idx, vecs, [m.type for m in memories], groups, 1, -1.0, mode="ann")
    # each memory adds its single nearest: at most one pair per memory
    assert len(memories) // 2 <= len(pairs) <= len(memories)


def test_text_the_index_does_not_hold_yet_is_embedded(vault: Vault) -> None:
    vault = _vault_with_near_duplicates(vault)
    idx = open_index(vault.core, writer=False)
    m = vault.all_memories()[0]
    write(vault.root, m.path, (vault.root / m.path).read_text().rstrip("\n") + " Edited by hand.\n")
    edited = Vault.open(vault.root).get(m.id)
    vecs = memory_vectors(idx, [edited], _embed)
    assert vecs.stale == [0] and vecs.rowids == [()]
    from memvault.index.text import chunk_memory

    expected = _embed([c.embed_text for c in chunk_memory(edited, 180)])[0]
    assert vecs.matrix[0] @ expected == pytest.approx(1.0, abs=1e-5)


def _reference_pairs(
    matrix: np.ndarray, rows: list[int], cols: list[int], k: int, threshold: float
) -> set[tuple[int, int]]:
    """Every row's whole line of scores sorted: its ``k`` best other columns at or above
    the threshold (ties broken by column, as the fast path does)."""
    out: set[tuple[int, int]] = set()
    for i in rows:
        scored = sorted(
            ((-float(matrix[i] @ matrix[j]), j) for j in cols if j != i), key=lambda t: t
        )
        for neg, j in scored[:k]:
            if -neg >= threshold:
                out.add((min(i, j), max(i, j)))
    return out


@pytest.mark.parametrize(
    ("k", "threshold", "subset"),
    [(10, 0.35, False), (3, 0.2, True), (3, -1.0, False), (1, 0.5, True)],
)
def test_exact_pairs_are_each_rows_best_at_or_above_the_threshold(
    k: int, threshold: float, subset: bool
) -> None:
    """The blockwise exact path (a threshold first, then the best ``k`` per row; whole-row
    partitions when most scores pass) against sorting every row's scores."""
    from memvault.index.neighbours import _exact

    rng = np.random.default_rng(k)
    base = rng.standard_normal((400, 16)).astype(np.float32)
    matrix = np.repeat(base, 8, axis=1) + 0.8 * rng.standard_normal((400, 128)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    cols = list(range(400))
    rows = cols[::3] if subset else cols
    pairs: dict[tuple[int, int], float] = {}
    _exact(matrix, rows, cols, k, threshold, pairs, block=64)
    assert set(pairs) == _reference_pairs(matrix, rows, cols, k, threshold)
    assert pairs  # the data has neighbours above each threshold
