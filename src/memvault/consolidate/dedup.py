"""Near-duplicates merge into the oldest id; similar facts that disagree are disputed.

Candidates share type, category and owner. Identical words always merge; otherwise the
index's nearest neighbours with cosine ≥ ``consolidate.dedup_threshold`` merge when their
numbers and negations agree. Episodes merge only when they are the same event -- the same
session, or written within ``consolidate.same_event_hours`` (6) of each other: the same
problem on three different days is a recurrence, which promotion turns into a proposal.
Facts that look alike (≥ ``consolidate.dispute_similarity``) but differ in numbers or
negation are flagged ``disputed`` for review, never merged.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..memory import Memory
from .model import Action, Plan, Progress, State, id_set, owner, union_strings, union_values
from .similarity import memory_text, neighbour_pairs, normalise

if TYPE_CHECKING:  # pragma: no cover
    from ..vault import Vault

_NUM = re.compile(r"\d+(?:[.,]\d+)?")
_NEG = re.compile(r"\b(not|never|no|don't|doesn't|isn't|aren't|won't|can't|cannot)\b", re.I)
GroupKey = tuple[str, str, str, str | None, str | None]  # (type, category, *owner)


def group_key(m: Memory) -> GroupKey:
    return (m.type, m.category, *owner(m))


class Clusters:
    """Union-find over memory ids; each cluster is represented by its smallest id."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        while self.parent.get(x, x) != x:
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def same_event(a: Memory, b: Memory, hours: float) -> bool:
    """Two episodes tell the same event: one session, or written within ``hours``."""
    session_a, session_b = a.meta.get("session"), b.meta.get("session")
    if session_a and session_b:
        return bool(session_a == session_b)
    if a.created is None or b.created is None:
        return False
    return abs((a.created - b.created).total_seconds()) <= hours * 3600


def plan_dedup(vault: Vault, state: State, result: Plan, progress: Progress | None = None) -> None:
    """Merge near-duplicates into the oldest id; the others become archived tombstones."""
    live = [m for m in state.memories if state.live(m) and m.category != "transcript"]
    groups: dict[GroupKey, list[Memory]] = defaultdict(list)
    for m in live:
        groups[group_key(m)].append(m)
    clusters = Clusters()
    hours = float(vault.config.get("consolidate.same_event_hours", 6))
    candidates = _distinct_texts(groups.values(), clusters, hours)
    if len(candidates) >= 2:
        _compare(vault, state, result, candidates, clusters, progress)
    members: dict[str, list[Memory]] = defaultdict(list)
    for m in live:
        members[clusters.find(m.id)].append(m)
    for cluster in members.values():
        if len(cluster) >= 2:
            _merge(state, result, cluster)


def _distinct_texts(
    groups: Iterable[list[Memory]], clusters: Clusters, hours: float
) -> list[Memory]:
    """Merge the memories of a group whose words are the same (episodes: of one event); one
    memory per distinct text (and event) goes on to the similarity comparison."""
    candidates: list[Memory] = []
    for members in groups:
        if len(members) < 2:
            continue
        by_text: dict[str, Memory] = {}
        for m in members:
            key = normalise(m.content)  # the body's words; a different title is no difference
            first = by_text.get(key)
            if first is not None and (m.type != "episodic" or same_event(first, m, hours)):
                clusters.union(first.id, m.id)
            else:
                by_text.setdefault(key, m)
                # One memory per distinct text asks for neighbours: copies of one text would
                # otherwise fill each other's k nearest and hide the near-duplicates.
                candidates.append(m)
    return candidates


def _compare(
    vault: Vault,
    state: State,
    result: Plan,
    candidates: list[Memory],
    clusters: Clusters,
    progress: Progress | None,
) -> None:
    """Merge similar candidates that say the same; dispute similar facts that disagree."""
    threshold = float(vault.config.get("consolidate.dedup_threshold", 0.92))
    dispute_at = float(vault.config.get("consolidate.dispute_similarity", 0.8))
    keys = [group_key(m) for m in candidates]
    lowest = min(threshold, dispute_at)
    _, pairs = neighbour_pairs(vault, state, candidates, keys, lowest, progress)
    hours = float(vault.config.get("consolidate.same_event_hours", 6))
    for (i, j), sim in sorted(pairs.items()):
        a, b = candidates[i], candidates[j]
        if a.subject and a.subject == b.subject:
            continue  # the supersede rule decides between facts about one subject
        if a.type == "episodic" and not same_event(a, b, hours):
            continue  # a recurrence, not a duplicate: promotion looks at it
        if sim >= threshold and same_numbers(a, b):
            clusters.union(a.id, b.id)
        elif a.type == "semantic" and (sim >= threshold or looks_contradictory(a, b)):
            flag_disputed(state, result, a, b, sim)


def _merge(state: State, result: Plan, members: list[Memory]) -> None:
    """Keep the oldest memory with the union of the cluster's keys; archive the others."""
    members.sort(key=lambda m: (m.created or result.now, m.id))
    keeper, dups = members[0], members[1:]
    dup_ids = {d.id for d in dups}
    tags = union_strings(members, "tags")
    related = [r for r in union_strings(members, "related") if r not in dup_ids | {keeper.id}]
    sources = union_values(members, "source")
    count = sum(int(state.value(m, "access_count") or 0) for m in members)
    changes: dict[str, Any] = {}
    if tags != list(keeper.tags):
        changes["tags"] = tags
    if related:
        changes["related"] = related
    if sources and len(sources) > 1:
        changes["source"] = sources
    if count != int(state.value(keeper, "access_count") or 0):
        changes["access_count"] = count
    sup = sorted(id_set(keeper.meta.get("supersedes")) | dup_ids)
    changes["supersedes"] = sup[0] if len(sup) == 1 else sup
    state.change(keeper, changes)
    why = "kept the oldest id; tags, related, sources and access counts unioned"
    for dup in dups:
        tomb = {"status": "superseded", "superseded_by": keeper.id}
        dup_why = f"near-duplicate of {keeper.id} (same type, category and scope)"
        state.archive(dup, result, "dedup", dup_why, tomb)
        result.actions.append(Action("dedup", keeper.id, keeper.path, f"merge {dup.id}", why, {}))


def same_numbers(a: Memory, b: Memory) -> bool:
    """Near-identical text with different numbers, or one negated, is a different statement,
    never a duplicate ("export is enabled" / "export is not enabled")."""
    ta, tb = memory_text(a), memory_text(b)
    if sorted(_NUM.findall(ta)) != sorted(_NUM.findall(tb)):
        return False
    return len(_NEG.findall(ta)) == len(_NEG.findall(tb))


def looks_contradictory(a: Memory, b: Memory) -> bool:
    """Similar facts without a shared subject whose numbers or negations differ."""
    if a.subject and a.subject == b.subject:
        return False
    ta, tb = memory_text(a), memory_text(b)
    if set(_NUM.findall(ta)) != set(_NUM.findall(tb)) and (_NUM.search(ta) and _NUM.search(tb)):
        return True
    return bool(_NEG.search(ta)) != bool(_NEG.search(tb))


def flag_disputed(state: State, result: Plan, a: Memory, b: Memory, sim: float) -> None:
    """Mark both facts ``disputed``, each related to the other, for a human to review."""
    result.disputed.append(
        {
            "ids": [a.id, b.id],
            "similarity": round(sim, 3),
            "why": "similar facts that differ in numbers or negation, without a shared subject",
        }
    )
    for m, other in ((a, b), (b, a)):
        if m.meta.get("status") == "disputed":
            continue
        changes = {
            "status": "disputed",
            "related": sorted({*union_strings([m], "related"), other.id}),
        }
        state.change(m, changes)
        why = f"may contradict {other.id} (similarity {sim:.2f}); review it"
        result.actions.append(Action("supersede", m.id, m.path, "dispute", why, changes))
