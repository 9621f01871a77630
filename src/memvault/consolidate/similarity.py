"""Similar memories for dedup and promotion: their vectors and neighbours from the index.

The index is opened once per plan; when it cannot be used, memories are embedded instead
(consolidation must not depend on a cache).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

from ..memory import Memory
from .model import CachedVector, Progress, State

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    from numpy.typing import NDArray

    from ..core import Core
    from ..index import Index

_WS = re.compile(r"\s+")
_PUNCT = re.compile(r"[^\w\s]")


def normalise(text: str) -> str:
    """Lower case, punctuation as spaces, whitespace collapsed: the words of a text."""
    return _WS.sub(" ", _PUNCT.sub(" ", text.lower())).strip()


def memory_text(m: Memory) -> str:
    title = str(m.meta.get("title") or "")
    return f"{title}\n{m.content}".strip()


def index_of(vault: Core, state: State) -> Index | None:
    """The vault's index, brought up to date once per plan (None: unusable, embed instead)."""
    if not state.index_tried:
        state.index_tried = True
        from ..index.neighbours import open_index

        try:
            state.index = open_index(vault, state.writer)
        except Exception as exc:  # noqa: BLE001 - consolidation must not depend on a cache
            print(
                f"memvault: search index unavailable ({exc}); embedding memories instead",
                file=sys.stderr,
            )
            state.index = None
    return state.index


def neighbour_pairs(
    vault: Core,
    state: State,
    memories: Sequence[Memory],
    groups: Sequence[Hashable],
    threshold: float,
    progress: Progress | None = None,
) -> tuple[NDArray[np.float32], dict[tuple[int, int], float]]:
    """Vectors of ``memories`` (from the index) and their similar pairs within ``groups``:
    each memory's ``consolidate.neighbours`` (default 10) nearest of its group with cosine
    ≥ ``threshold``, found by the index (HNSW, or exactly in small vaults), not by
    comparing every pair."""
    import numpy as np

    from ..index.neighbours import MemoryVectors, similar_pairs

    k = int(vault.config.get("consolidate.neighbours", 10))
    idx = index_of(vault, state)
    rows = _vectors(vault, state, idx, memories, progress)
    vecs = MemoryVectors(
        np.vstack([r.vector for r in rows]) if rows else np.zeros((0, 1), dtype=np.float32),
        [r.rowids for r in rows],
        [i for i, r in enumerate(rows) if r.stale],
    )
    mode = vault.config.get("consolidate.neighbour_mode")
    pairs, report = similar_pairs(
        idx,
        vecs,
        [m.type for m in memories],
        groups,
        k,
        threshold,
        progress,
        str(mode) if mode in ("exact", "ann") else None,
        cache=state.ann_answers,  # performance only: dedup and promotion ask alike (issue 17)
    )
    state.neighbour_reports.append(report.as_dict())
    return vecs.matrix, pairs


def _vectors(
    vault: Core,
    state: State,
    idx: Index | None,
    memories: Sequence[Memory],
    progress: Progress | None,
) -> list[CachedVector]:
    """Each memory's vector, read from the index (or embedded) at most once per plan."""
    from ..index.neighbours import memory_vectors

    def embed(texts: list[str]) -> NDArray[np.float32]:
        from ..embeddings import get_embedder

        return get_embedder(str(vault.config.get("embedder"))).embed_documents(texts)

    cache = state.vectors
    missing = [m for m in memories if m.id not in cache]
    if missing:
        current = state.writer and idx is not None
        got = memory_vectors(idx, missing, embed, progress, current=current)
        stale = set(got.stale)
        for pos, m in enumerate(missing):
            cache[m.id] = CachedVector(got.matrix[pos], got.rowids[pos], pos in stale)
    return [cache[m.id] for m in memories]
