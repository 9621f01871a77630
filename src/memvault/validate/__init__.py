"""Validate: does a statement agree with, contradict, or lack support in the facts in force.

Owns the rule language that reads a statement and a fact (``words``, ``claims``, ``slots``,
``roles`` over the word lists of ``lexicon`` and ``glossary``), weighs one against the other
(``weigh``), asks a configured judge command (``judge``), and the verdict (``verdict``).
It sits above :mod:`memvault.search`, which finds the candidate facts; it may import search,
index, the model (``memory``, ``language``) and the base (``errors``, ``config``), never the
vault or an adapter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .verdict import ValidationResult, recall, validate


def __getattr__(name: str) -> Any:
    """The verdict's names, loaded on first use (PEP 562): the conflict check on write reads
    claims (``.claims``, ``.weigh``) and needs neither the verdict nor the search under it."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import verdict

    value = getattr(verdict, name)
    globals()[name] = value
    return value


__all__ = ["ValidationResult", "recall", "validate"]
