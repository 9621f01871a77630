"""Retention: episodes past their scope's maximum age go to archive/. A transcript is left to
distillation (:mod:`memvault.consolidate.distill`), which distils one older than
``retention.transcripts`` and archives it: archived here, it would never be read for facts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model import Plan, State

if TYPE_CHECKING:  # pragma: no cover
    from ..core import Core


def plan_retention(vault: Core, state: State, result: Plan) -> None:
    """Archive episodes unused for longer than ``retention.<scope>`` days (transcripts: see
    the module's docstring)."""
    limits = vault.config.get("retention") or {}
    for m in state.memories:
        if m.type != "episodic" or not state.live(m) or m.category == "transcript":
            continue
        anchor = max(filter(None, [m.created, state.last_accessed(m)]), default=None)
        if anchor is None:
            continue
        age = (result.now - anchor).total_seconds() / 86400
        days = limits.get(m.scope)
        if days and age > float(days):
            why = f"{m.scope} memory unused for {age:.0f} days > {days} (retention.{m.scope})"
            state.archive(m, result, "retention", why)
