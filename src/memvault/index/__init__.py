"""The search index: a derived, disposable cache of the vault's files.

Chroma (vectors) + SQLite FTS5 (keywords) + a manifest under ``.memvault/index/``; see
:mod:`memvault.index.store` for the layout. Kept up to date incrementally by
:func:`reindex` (hooks, ``memvault watch``, ``memvault reindex``) and lazily by
:func:`ensure_fresh` before every search.

>>> from memvault import Vault
>>> vault = Vault.open()                                   # doctest: +SKIP
>>> print(vault.reindex().summary())                        # doctest: +SKIP
1 added: 41 memories, 41 chunks; embedded 1, reused 0 (0.05 s)

May import: the store, the embedders, the memory model and the base; never search or
anything above it.
"""

from __future__ import annotations

from .handle import Index, open_indexes
from .plan import ChangeReport, DiskDoc, IndexedDoc, plan_changes
from .service import ReindexReport, ensure_fresh, health, reindex

__all__ = [
    "ChangeReport",
    "DiskDoc",
    "Index",
    "IndexedDoc",
    "ReindexReport",
    "ensure_fresh",
    "health",
    "index_health",
    "open_indexes",
    "plan_changes",
    "reindex",
]

index_health = health  # the name ``memvault doctor`` and the docs use
