"""Retention: episodes past their scope's maximum age, and old transcripts, go to archive/."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model import Plan, State

if TYPE_CHECKING:  # pragma: no cover
    from ..core import Core


def plan_retention(vault: Core, state: State, result: Plan) -> None:
    """Archive episodes unused for longer than ``retention.<scope>`` (or, for transcripts,
    ``retention.transcripts``) days."""
    limits = vault.config.get("retention") or {}
    transcripts_days = limits.get("transcripts")
    for m in state.memories:
        if m.type != "episodic" or not state.live(m):
            continue
        anchor = max(filter(None, [m.created, state.last_accessed(m)]), default=None)
        if anchor is None:
            continue
        age = (result.now - anchor).total_seconds() / 86400
        if m.category == "transcript" and transcripts_days and age > float(transcripts_days):
            why = f"transcript older than {transcripts_days} days (retention.transcripts)"
            state.archive(m, result, "retention", why)
            continue
        days = limits.get(m.scope)
        if days and age > float(days):
            why = f"{m.scope} memory unused for {age:.0f} days > {days} (retention.{m.scope})"
            state.archive(m, result, "retention", why)
