"""Validate: does a statement agree with, contradict, or lack support in the facts in force.

Owns the rule language that reads a statement and a fact (``words``, ``claims``, ``slots``,
``roles`` over the word lists of ``lexicon`` and ``glossary``), weighs one against the other
(``weigh``), asks a configured judge command (``judge``), and the verdict (``verdict``).
It sits above :mod:`memvault.search`, which finds the candidate facts; it may import search,
index, the model (``memory``, ``language``) and the base (``errors``, ``config``), never the
vault or an adapter.
"""

from __future__ import annotations

from .verdict import ValidationResult, recall, validate

__all__ = ["ValidationResult", "recall", "validate"]
