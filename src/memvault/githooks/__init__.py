"""Git hooks: small shims installed politely, and what they run.

* :mod:`~memvault.githooks.install`: ``install``/``uninstall``/``status`` of the shims
  (``shim.sh``), legacy-hook chaining, ``core.hooksPath``.
* :mod:`~memvault.githooks.run`: what a shim runs (``python -m memvault.githooks NAME``,
  or ``memvault hook-run NAME`` from ``PATH``), dispatching to
  :mod:`~memvault.githooks.check` (``pre-commit``), the background reindex of the client
  hooks (:mod:`~memvault.githooks.detached`) and :mod:`~memvault.githooks.server`
  (``post-receive`` in a bare remote).
* :mod:`~memvault.githooks.names`: which hooks there are, and the files they keep in
  ``<git-dir>/memvault/`` (``hooks.log``, the last background error, queues).

Commits made by memvault itself (``MEMVAULT_INTERNAL=1``, set by
:func:`memvault.store.git.ops.run_git`) skip the reindex in the shim, before Python even
starts: memvault refreshes its catalog after each write and the index lazily.

May import: memvault's public API (``run_git``, ``atomic_write``, the merge driver and the
Vault among it), ``memvault.errors``; nothing else of the core (``tools/layout.py --check``).
"""
