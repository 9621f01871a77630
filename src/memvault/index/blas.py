"""Matrix products on one BLAS thread (the vector leg's exact scoring, the reduced copies)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

_blas: Any = None  # threadpoolctl's controller once looked up (False: not available)


@contextmanager
def one_blas_thread() -> Iterator[bool]:
    """Matrix products inside run on one BLAS thread (yields False if that can't be set).

    OpenBLAS splits a matrix-vector product over every core. For the few megabytes of an
    in-memory index that saves next to nothing on an idle machine, but on a busy one the
    query waits for a second core to come free (``docs/performance.md``).
    """
    global _blas
    if _blas is None:
        try:
            from threadpoolctl import ThreadpoolController

            _blas = ThreadpoolController()
        except Exception:  # noqa: BLE001 - not installed, or can't inspect the libraries
            _blas = False
    if _blas is False:
        yield False
        return
    with _blas.limit(limits=1, user_api="blas"):
        yield True


def dot_rows(matrices: Sequence[np.ndarray], q: np.ndarray) -> list[np.ndarray]:
    """``m @ q`` for each matrix, on one thread (see :func:`one_blas_thread`)."""
    import numpy as np

    with one_blas_thread() as limited:
        if limited:
            return [m @ q for m in matrices]
        return [np.einsum("ij,j->i", m, q) for m in matrices]  # numpy's own loop: one thread
