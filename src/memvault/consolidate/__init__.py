"""The "sleep job": consolidation as reviewable file rewrites, one commit per run.

>>> plan, _ = vault.consolidate(dry_run=True)             # doctest: +SKIP
>>> print(plan.summary()); print(vault.consolidation_diff(plan))  # doctest: +SKIP

Each run is planned first (:func:`plan` reads files, the access log and vectors and writes
nothing, and gives every action with its reason), then applied as exactly one commit with
an entry in the tracked ``.memvault/consolidation.log``. With the same ``now`` a second run
finds nothing to do.

Steps (``only`` selects a subset), one module each:

* ``fold`` (:mod:`.fold`): the access log → ``access_count``/``last_accessed``;
* ``decay`` (:mod:`.decay`): relevance, archive below threshold, restore when used again;
* ``retention`` (:mod:`.retention`): maximum age per scope, old transcripts;
* ``supersede`` (:mod:`.supersede`): facts sharing a subject;
* ``dedup`` (:mod:`.dedup`): near-duplicate merge with tombstones, disputed pairs flagged;
* ``promote`` (:mod:`.promote`): patterns in 3+ episodes → proposals in inbox/;
* ``distill`` (:mod:`.distill`): old transcripts → summary episode.

:mod:`.model` holds the plan and its actions, :mod:`.similarity` the neighbours from the
index, :mod:`.runner` the planning and the commit.

A service: works on a :class:`~memvault.core.Core` (``Vault.consolidate``,
``Vault.plan_consolidation``, ``Vault.apply_consolidation``, ``Vault.why`` call it). May
import search, index, the store, the model and the base; never the vault or a door.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# Loaded on first use (PEP 562): a write that asks only the word diff (``.compare``, through
# memvault.conflicts) must not import the whole sleep job (docs/performance.md).
_EXPORTS = {
    "why": "decay",
    "STEPS": "model",
    "Action": "model",
    "Plan": "model",
    "apply": "runner",
    "consolidate": "runner",
    "diff_of": "runner",
    "plan": "runner",
}

if TYPE_CHECKING:  # pragma: no cover
    from .decay import why
    from .model import STEPS, Action, Plan
    from .runner import apply, consolidate, diff_of, plan


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = ["STEPS", "Action", "Plan", "apply", "consolidate", "diff_of", "plan", "why"]
