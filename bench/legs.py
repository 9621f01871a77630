"""memvault's own search legs for the retrieval benches, each alone and fused by RRF.

``bench/conversations.py`` (LoCoMo, BEAM) and ``bench/multilingual.py`` print each leg of
memvault's search beside the full pipeline; both gather the legs here, the way
:func:`memvault.search.ranking.gather` runs them for a ``recall`` with no filter.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

RRF_K = 60  # reciprocal-rank fusion's constant (Cormack et al. 2009)


def gather_legs(vault: Any, query: str, limit: int) -> Any:
    """The keyword and vector legs (:class:`memvault.search.ranking.Legs`) of ``query`` in
    ``vault`` (a :class:`memvault.Vault`), with the index brought up to date first."""
    from memvault.index import ensure_fresh
    from memvault.index import query as iq
    from memvault.search.engine import dense_vector
    from memvault.search.options import build_filter
    from memvault.search.ranking import Plan, gather, weights

    idx = ensure_fresh(vault.core)
    types, filt = build_filter(vault.core, {})
    plan = Plan(types=types, filt=filt, limit=limit)
    with idx.lock:
        return gather(
            idx, iq.query_tokens(query), dense_vector(vault.core, idx, query), plan,
            weights(vault.core),
        )  # fmt: skip


def rrf(*rankings: Sequence[str], limit: int | None = None) -> list[str]:
    """Reciprocal-rank fusion (k = :data:`RRF_K`) of rankings of ids, best first."""
    fused: dict[str, float] = {}
    for ranking in rankings:
        for rank, key in enumerate(ranking, 1):
            fused[key] = fused.get(key, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(fused, key=lambda key: -fused[key])[:limit]
