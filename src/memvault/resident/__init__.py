"""The resident process: one per vault and user, holding the model and the index loaded, so
that a command line (``recall``, ``context --hook`` on every prompt, ``add``) costs a new
process's start and the work itself instead of imports and a model load.

* :mod:`.client`: what the command line does first for a command the resident process
  serves: ask it over a unix socket; start it when none is listening; run the command here
  whenever it can't be asked (off, unreachable, declined, broken mid-answer).
* :mod:`.server`: the process (``python -m memvault.resident ROOT``): runs the same command
  functions as the command line, with the caller's arguments, folder, environment and
  standard streams, one request at a time; ends after ``resident.idle_seconds``.
* :mod:`.runtime`: where it listens: a folder only this user can enter.

Off with ``resident.enabled: false`` in the vault's config or ``MEMVAULT_RESIDENT=0``
(docs/resident.md).
"""

from __future__ import annotations

# The commands it serves: the reads agents run on every turn, and ``add`` (the write they
# run most: its conflict check reads facts with validate's reader, whose word lists take a
# new process longer to load than the write takes).
SERVED = frozenset({"recall", "fact", "procedure", "search", "context", "add"})
