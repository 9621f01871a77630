"""Storage: the vault on disk, below everything that reads it.

Owns the memory files (``files``: parse, rewrite only the keys that change, atomic writes;
``tree``: which files are memories, the one walk over them), git (``git/``: the one package
that runs git), the journal that undoes a write whose process died (``journal``), the one
lock primitive (``lock``: any layer may take it), the catalog of parsed files (``catalog``,
its tables ``catalog_tables``), bulk commits (``bulk``), the git merge driver for memory
files (``mergedriver``), and the :class:`~memvault.store.repository.Repository` that ties
them to one vault: open/init, settings, identity, the writer lock, the one-commit write.

May import: the base (``errors``, ``paths``, ``config``, ``record``, ``threads``), the memory
model (``memory``, ``scopes``) and the embedder's name (a new vault for other languages is
stamped with it). Never search, index, the services, the vault or a door
(``tools/layout.py --check``).
"""
