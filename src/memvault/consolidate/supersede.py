"""Supersession: of the facts about one subject (and one owner), the newest wins."""

from __future__ import annotations

from collections import defaultdict

from ..conflicts import superseded_keys
from ..memory import Memory
from .model import Action, Plan, State, id_set, owner


def plan_supersede(state: State, result: Plan) -> None:
    """Mark older facts sharing a subject as superseded by the one with the latest
    ``valid_from`` (or creation); the winner lists them in ``supersedes``."""
    groups: dict[tuple[str, str, str | None, str | None], list[Memory]] = defaultdict(list)
    for m in state.memories:
        if m.type == "semantic" and m.subject and state.live(m):
            groups[(m.subject, *owner(m))].append(m)
    for (subject, *_), facts in sorted(groups.items(), key=lambda kv: str(kv[0])):
        if len(facts) >= 2:
            _supersede(state, result, subject, facts)


def _supersede(state: State, result: Plan, subject: str, facts: list[Memory]) -> None:
    facts.sort(key=lambda m: (m.time("valid_from") or m.created or result.now, m.id))
    winner, losers = facts[-1], facts[:-1]
    win_from = winner.time("valid_from") or winner.created or result.now
    for old in losers:
        changes = superseded_keys(winner.id, win_from)
        state.change(old, changes)
        what = f"superseded by {winner.id}"
        why = f"same subject '{subject}', older valid_from"
        result.actions.append(Action("supersede", old.id, old.path, what, why, changes))
    have = id_set(winner.meta.get("supersedes"))
    ids = sorted(have | {m.id for m in losers})
    if set(ids) != have:
        state.change(winner, {"supersedes": ids[0] if len(ids) == 1 else ids})
