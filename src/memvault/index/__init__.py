"""The search index: a derived, disposable cache of the vault's files.

Chroma (vectors) + SQLite FTS5 (keywords) + a manifest under ``.memvault/index/``; see
:mod:`memvault.index.store` for the layout. Kept up to date incrementally by
:func:`reindex` (hooks, ``memvault watch``, ``memvault reindex``) and lazily by
:func:`ensure_fresh` before every search.

>>> from memvault import Vault
>>> vault = Vault.open()                                   # doctest: +SKIP
>>> print(vault.reindex().summary())                        # doctest: +SKIP
1 added: 41 memories, 41 chunks; embedded 1, reused 0 (0.05 s)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .build import ReindexReport, ensure_fresh, health, reindex
from .handle import Index, forget_open_index
from .plan import ChangeReport, DiskDoc, IndexedDoc, plan_changes

if TYPE_CHECKING:  # pragma: no cover
    from ..vault import Vault

__all__ = [
    "ChangeReport",
    "DiskDoc",
    "Index",
    "IndexedDoc",
    "ReindexReport",
    "ensure_fresh",
    "forget_open_index",
    "index_health",
    "plan_changes",
    "reindex",
]


def index_health(vault: Vault) -> list[str]:
    """Notes for ``memvault doctor`` ("index is 3 memories behind", "built with another embedder")."""
    return health(vault)
