"""A consolidation as the inspector shows it: the plan with only what this identity may
see (the job touches every memory; another agent's ``self`` memories are counted, never
shown), and a fingerprint, so that "apply" commits the plan that was previewed."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import TYPE_CHECKING

from .. import check_text
from ..errors import MemvaultError, PermissionDeniedError
from ..values import Record
from .render import DiffLine, diff_lines

if TYPE_CHECKING:  # pragma: no cover
    from .. import Action, Plan, Vault


class Preview(Record, frozen=True):
    plan: Plan
    actions: list[Action]
    hidden: int  # actions on memories this identity may not see
    diff: list[DiffLine]
    fingerprint: str


def fingerprint(plan: Plan) -> str:
    """A digest of everything the plan would write, move and say."""
    data = {
        "actions": [[a.step, a.memory_id, a.what] for a in plan.actions],
        "writes": {k: hashlib.sha256(v.encode()).hexdigest() for k, v in plan.writes.items()},
        "moves": plan.moves,
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:32]


def _visible_paths(vault: Vault, plan: Plan) -> tuple[set[str], set[str]]:
    """(ids, paths) of the memories the plan touches that this identity may see."""
    can_see = vault.identity.can_see
    ids: set[str] = set()
    paths: set[str] = set()
    for m in vault.all_memories():
        if can_see(m):
            ids.add(m.id)
            paths.add(m.path)
    for src, dst in plan.moves.items():
        if src in paths:
            paths.add(dst)
    for rel, text in plan.new_files.items():
        try:
            if can_see(check_text(text, rel)):
                paths.add(rel)
        except MemvaultError:
            pass
    return ids, paths


def preview(vault: Vault, now: dt.datetime | None, only: list[str] | None) -> Preview:
    result = vault.plan_consolidation(now, only=only or None)
    ids, paths = _visible_paths(vault, result)
    actions = [a for a in result.actions if a.memory_id in ids]
    shown = _only_paths(result, paths)
    return Preview(
        result,
        actions,
        len(result.actions) - len(actions),
        diff_lines(vault.consolidation_diff(shown)),
        fingerprint(result),
    )


def _only_paths(plan: Plan, paths: set[str]) -> Plan:
    """A copy of ``plan`` whose writes and moves are only those under ``paths``."""
    import copy

    shown = copy.copy(plan)
    shown.writes = {k: v for k, v in plan.writes.items() if k in paths}
    shown.moves = {k: v for k, v in plan.moves.items() if k in paths}
    return shown


def apply(vault: Vault, now: dt.datetime, only: list[str] | None, expected: str) -> Plan:
    """Plan again under the lock and commit it, if it is still the plan that was previewed."""
    if not vault.identity.is_librarian:
        raise PermissionDeniedError(
            "applying a consolidation rewrites every scope's memories: it needs the librarian "
            "role (memvault --role librarian ui)",
            key="role",
        )
    with vault.locked():
        result = vault.plan_consolidation(now, only=only or None, writer=True)
        if fingerprint(result) != expected:
            raise MemvaultError(
                "the plan changed since the preview (the vault moved on): preview it again",
                key="plan",
            )
        vault.apply_consolidation(result)
    return result
