"""A warm process's reduced copy of the stored vectors: the vector leg's shortlist at scale.

Scoring every stored vector exactly reads all of them on every query: at 100,000 chunks of
384 dimensions that is 150 MB, and the product is bound by memory bandwidth. A process that
searches the same index again and again (a server, the resident process, a library loop)
keeps instead each type's vectors projected on their first :data:`DIMS` principal axes (a
quarter of the bytes). A query scores that copy, keeps the best ``max(PER_HIT * k, rows /
SHARE)`` rows, and scores those exactly from the flat file
(:func:`memvault.index.query.vector_leg` accepts the shortlist only when the ``k`` best
allowed rows lie within its best ``2k``; else it scores every row). This is the one place a
search is not exact: a row of the true best few dozen is lost only when the projection
misjudges it by more than the gap down to the shortlist's last row. How often that happens
on the benchmark's questions is measured in ``docs/performance.md``.

A new process asks once or a few times and never pays for the copy: it is made at the
:data:`WARM_AFTER`-th search of an index (or when a server warms it), and kept across writes:
a flat file's rows are only ever appended (a row that changes dies and comes back at the
end), so only the new rows are projected; a new file starts that type's copy over, and
vectors read from SQLite (the flat file busy) are all scored, with no copy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np


class Index(Protocol):
    """What this module reads of :class:`memvault.index.handle.Index` (which imports it)."""

    dimensions: int
    coarse: Coarse

    def memory_vectors(self, doc_type: str) -> tuple[Any, Any, Any]: ...

    def chunk_count(self, doc_type: str) -> int: ...


DIMS = 96  # principal axes kept (of MiniLM's 384: ~84 % of the vectors' energy)
COARSE_ABOVE = 50_000  # rows searched below which every row is scored exactly
WARM_AFTER = 8  # searches of an index before its copy is made (a CLI command runs a few)
PER_HIT = 80  # shortlisted rows per wanted row ...
SHARE = 25  # ... and at least one row in SHARE
SAMPLE = 8192  # rows the principal axes are computed from


class Coarse:
    """One open index's reduced copies, per memory type (guard with the index's lock)."""

    def __init__(self) -> None:
        self.basis: np.ndarray | None = None  # float32 [DIMS, dims]: the principal axes
        self.copies: dict[str, tuple[str, np.ndarray]] = {}  # type: (flat file, projected rows)
        self.searches = 0

    def copy_of(self, doc_type: str, matrix: np.ndarray) -> np.ndarray | None:
        """``matrix`` projected on the basis (made or extended now if needed); None when
        ``matrix`` is not mapped from a flat file (read from SQLite while another process
        held the file's lock: every row is scored this once, no copy is made)."""
        import numpy as np

        assert self.basis is not None
        source = flat_file(matrix)
        if source is None:
            return None
        held = self.copies.get(doc_type)
        low = held[1] if held is not None and held[0] == source else None
        if low is not None and len(low) == len(matrix):
            return low
        if low is not None and len(low) < len(matrix):
            fresh = _project(matrix[len(low) :], self.basis)
            low = np.concatenate([low, fresh])
        else:
            low = _project(matrix, self.basis)
        self.copies[doc_type] = (source, low)
        return low

    def prepare(self, matrices: Sequence[np.ndarray]) -> None:
        """Compute the basis from a sample of ``matrices``' rows (once per open index)."""
        import numpy as np

        if self.basis is not None:
            return
        total = sum(len(m) for m in matrices)
        rng = np.random.default_rng(0)  # the same axes for the same vectors
        picks = np.sort(rng.choice(total, size=min(SAMPLE, total), replace=False))
        offsets = np.cumsum([0] + [len(m) for m in matrices])
        sample = np.concatenate(
            [
                np.asarray(m[picks[(picks >= lo) & (picks < hi)] - lo], dtype=np.float32)
                for m, lo, hi in zip(matrices, offsets[:-1], offsets[1:], strict=True)
            ]
        )
        # the axes of the uncentred second moment: those keep most of every dot product
        _, axes = np.linalg.eigh(sample.T.astype(np.float64) @ sample)
        self.basis = np.ascontiguousarray(axes[:, ::-1][:, :DIMS].T, dtype=np.float32)


def prepare(index: Index) -> None:
    """Make the index's reduced copies now, if it is large enough to use them (a server
    warming up: its first searches then pay nothing for them). Hold the index's lock."""
    from ..paths import MEMORY_TYPES

    if index.dimensions <= DIMS:
        return  # a copy as wide as the vectors saves nothing
    matrices = {t: index.memory_vectors(t)[2] for t in MEMORY_TYPES if index.chunk_count(t)}
    if sum(len(m) for m in matrices.values()) < COARSE_ABOVE:
        return
    index.coarse.prepare(list(matrices.values()))
    for doc_type, matrix in matrices.items():
        index.coarse.copy_of(doc_type, matrix)


def flat_file(matrix: np.ndarray) -> str | None:
    """The flat file ``matrix`` is mapped from (its rows are only ever appended to), if any."""
    name = getattr(matrix, "filename", None)
    return str(name) if name else None


def _project(matrix: np.ndarray, basis: np.ndarray) -> np.ndarray:
    import numpy as np

    from .blas import one_blas_thread

    out = np.empty((len(matrix), len(basis)), dtype=np.float32)
    with one_blas_thread():
        for start in range(0, len(matrix), 16_384):  # bounded temporaries
            out[start : start + 16_384] = matrix[start : start + 16_384] @ basis.T
    return out


def shortlist(
    index: Index, parts: Sequence[tuple[str, Any, Any, Any]], q: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(rowids, docs, cosines)`` of the rows the reduced copies score best, scored exactly;
    None when every row should be scored (a small index, a large ``k``, a process that has
    not searched often enough yet). ``parts``: ``(type, rowids, docs, matrix)`` per type
    searched. Hold the index's lock."""
    import numpy as np

    from .blas import one_blas_thread

    total = sum(len(rowids) for _, rowids, _, _ in parts)
    size = max(PER_HIT * k, total // SHARE)
    if total < COARSE_ABOVE or 2 * size > total:
        return None
    coarse = index.coarse
    coarse.searches += 1
    if coarse.basis is None and coarse.searches < WARM_AFTER:
        return None
    if coarse.basis is None:
        prepare(index)
    if coarse.basis is None:
        return None
    lows = []
    for doc_type, _, _, matrix in parts:
        low = coarse.copy_of(doc_type, matrix)
        if low is None:
            return None
        lows.append(low)
    with one_blas_thread():
        rough = np.concatenate([low @ (coarse.basis @ q) for low in lows])
    picked = np.sort(np.argpartition(-rough, size - 1)[:size])  # file order: reads go forwards
    rowids, docs, sims = [], [], []
    start = 0
    with one_blas_thread():
        for _, part_rowids, part_docs, matrix in parts:
            end = start + len(part_rowids)
            mine = picked[(picked >= start) & (picked < end)] - start
            start = end
            rowids.append(part_rowids[mine])
            docs.append(part_docs[mine])
            sims.append(np.asarray(matrix[mine], dtype=np.float32) @ q)
    return np.concatenate(rowids), np.concatenate(docs), np.concatenate(sims)
