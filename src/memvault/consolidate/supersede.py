"""Supersession: of the facts about one subject (and one owner), the newest wins; of
disputed facts left unresolved for ``disputes.newer_wins_after`` (14 days), the newer."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any

from ..conflicts import superseded_keys
from ..errors import ConfigError
from ..memory import AGE_UNITS, Memory, format_time
from ..paths import CONFIG_PATH
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


DEFAULT_NEWER_WINS_AFTER = "14d"


def newer_wins_after(value: Any) -> dt.timedelta | None:
    """``disputes.newer_wins_after`` as a time span: days (a number) or an age such as
    ``14d``, ``2w``, ``12h``; ``never`` (or false) keeps disputes for a review."""
    if value is None:
        value = DEFAULT_NEWER_WINS_AFTER
    if value is False or (isinstance(value, str) and value.strip().lower() == "never"):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return dt.timedelta(days=value)
    text = str(value).strip().lower()
    if len(text) > 1 and text[:-1].isdigit() and text[-1] in AGE_UNITS:
        return dt.timedelta(seconds=int(text[:-1]) * AGE_UNITS[text[-1]])
    raise ConfigError(
        f"expected an age like 14d or 2w, a number of days, or never; got {value!r}",
        CONFIG_PATH,
        "disputes.newer_wins_after",
    )


def plan_disputes(state: State, result: Plan, after: dt.timedelta | None) -> None:
    """A dispute nobody resolved within ``after`` of its last change: the newer fact wins
    (the others superseded by it, linked both ways), as a subject would have decided."""
    from ..review import dispute_groups

    if after is None:
        return
    for group in dispute_groups(m for m in state.memories if m.id not in state.archived):
        if len(group.facts) < 2:
            continue  # a merge's dispute (both versions in one file): only a person can say
        last = max((m.time("updated") or m.created or result.now) for m in group.facts)
        if result.now - last < after:
            continue
        winner = group.newest
        win_from = winner.time("valid_from") or winner.created or result.now
        losers = [m for m in group.facts if m.id != winner.id]
        waited = f"unresolved since {format_time(last)[:10]} (disputes.newer_wins_after)"
        for old in losers:
            changes = superseded_keys(winner.id, win_from)
            state.change(old, changes)
            why = f"disputed with {winner.id}, the newer; {waited}"
            result.actions.append(
                Action("supersede", old.id, old.path, f"superseded by {winner.id}", why, changes)
            )
        ids = sorted(id_set(winner.meta.get("supersedes")) | {m.id for m in losers})
        changes_w = {"status": "active", "supersedes": ids[0] if len(ids) == 1 else ids}
        state.change(winner, changes_w)
        why = f"newer than {', '.join(m.id for m in losers)}; {waited}"
        result.actions.append(
            Action("supersede", winner.id, winner.path, "keep (dispute)", why, changes_w)
        )
