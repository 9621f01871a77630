"""Promotion: what recurs in 3+ episodes becomes a proposal in inbox/ for review.

The same steps followed in several episodes become a proposed procedure; a cluster of
similar episodes sharing tags becomes a proposed fact. Two episodes join a cluster when they
tell the same thing again -- not when they are one routine sentence about different things
("Shipped billing 4.2 to staging" / "Shipped search 1.9 to production": a template variant,
:mod:`.compare`), nor when each names someone or something the other does not ("Read Ana's
notes on Grafana" / "Read Ben's notes on Grafana"). Negations and details may differ: a
problem is told differently each time. Proposals never mix owners: a pattern in one
agent's private episodes is proposed to that agent, never to its team.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from ..memory import Memory, format_time, slugify
from ..review import rejected_evidence
from ..store.files import render_new
from .compare import compare
from .model import INBOX_DIR, Action, Owner, Plan, Progress, State, owner, union_strings
from .pattern_text import state_pattern
from .similarity import memory_text, neighbour_pairs, normalise

if TYPE_CHECKING:  # pragma: no cover
    from ..core import Core


def plan_promote(vault: Core, state: State, result: Plan, progress: Progress | None = None) -> None:
    """A pattern in 3+ episodes → a proposed fact; the same steps in 3+ episodes → a
    proposed procedure."""
    episodes = [
        m
        for m in state.memories
        if m.type == "episodic" and state.live(m) and m.category not in ("transcript", "summary")
    ]
    proposed = {str(m.meta.get("derived_key")) for m in state.memories if m.meta.get("derived_key")}
    taken = {m.id for m in state.memories}
    rejected = rejected_evidence(vault.root)
    _propose_procedures(vault, result, episodes, proposed, taken, rejected)
    _propose_patterns(vault, state, result, episodes, proposed, taken, rejected, progress)


def _was_rejected(ids: list[str], rejected: list[frozenset[str]]) -> bool:
    """A reviewer rejected a proposal drawn from these episodes (or more): without an
    episode of its own since, it is not proposed again."""
    return any(rejected_set.issuperset(ids) for rejected_set in rejected)


def derived_key(kind: str, ids: list[str]) -> str:
    """A proposal's identity: the same members never get proposed twice."""
    return hashlib.sha1((kind + "\0" + "\0".join(ids)).encode()).hexdigest()[:12]


def _propose_procedures(
    vault: Core,
    result: Plan,
    episodes: list[Memory],
    proposed: set[str],
    taken: set[str],
    rejected: list[frozenset[str]],
) -> None:
    minimum = int(vault.config.get("consolidate.promote_min_episodes", 3))
    for members in _step_groups(episodes):
        if len(members) < minimum:
            continue
        ids = sorted(m.id for m in members)
        derived = derived_key("steps", ids)
        if derived in proposed or _was_rejected(ids, rejected):
            continue
        first = min(members, key=lambda m: m.id)
        steps = _usual_steps(members)
        title = f"Procedure seen in {len(members)} episodes: {first.title}"[:80]
        meta = proposal_meta("procedural", "workflows", title, ids, derived, result.now, taken)
        same_owner(meta, first)
        meta["steps"] = steps
        meta["trigger"] = union_strings(members, "tags")[:5] or None
        worded = len({_step_key(m) for m in members})
        how = "" if worded == 1 else f" (worded {worded} ways; the most usual wording kept)"
        body = (
            f"The same {len(steps)} steps were followed in {len(members)} episodes"
            f"{how}: {', '.join(ids)}."
        )
        add_proposal(vault, result, meta, body)


# Two steps say the same when this share of the shorter one's content words (stems) is in
# the other: "Drain the node" / "drain node first", "Reboot and uncordon" / "Reboot, then
# uncordon it".
STEP_OVERLAP = 0.5


def _step_key(m: Memory) -> tuple[str, ...]:
    return tuple(normalise(str(s)) for s in m.meta.get("steps") or [])


def _same_step(a: str, b: str) -> bool:
    from .compare import words

    x = {w.key for w in words(a) if w.content}
    y = {w.key for w in words(b) if w.content}
    return bool(x and y) and len(x & y) >= STEP_OVERLAP * min(len(x), len(y))


def _step_groups(episodes: list[Memory]) -> list[list[Memory]]:
    """Episodes of one owner that followed the same steps, worded alike or not: as many
    steps, each the same as the other's at its place (:func:`_same_step`). An episode joins
    the first group (oldest first) whose first member it matches."""
    groups: dict[Owner, list[list[Memory]]] = defaultdict(list)
    listed = [m for m in episodes if isinstance(m.meta.get("steps"), list)]
    for m in sorted(listed, key=lambda m: (str(m.get("created", "")), m.id)):
        steps = [str(s) for s in m.meta["steps"]]
        if len(steps) < 2:
            continue
        mine = groups[owner(m)]
        for group in mine:
            lead = [str(s) for s in group[0].meta["steps"]]
            if len(lead) == len(steps) and all(map(_same_step, lead, steps)):
                group.append(m)
                break
        else:
            mine.append([m])
    return [g for gs in groups.values() for g in gs]


def _usual_steps(members: list[Memory]) -> list[str]:
    """The wording most members used (ties: the oldest member's)."""
    counts: dict[tuple[str, ...], int] = defaultdict(int)
    for m in members:
        counts[_step_key(m)] += 1
    best = max(counts.values())
    for m in members:  # oldest first
        if counts[_step_key(m)] == best:
            return [str(s) for s in m.meta["steps"]]
    return [str(s) for s in members[0].meta["steps"]]


def _propose_patterns(
    vault: Core,
    state: State,
    result: Plan,
    episodes: list[Memory],
    proposed: set[str],
    taken: set[str],
    rejected: list[frozenset[str]],
    progress: Progress | None,
) -> None:
    minimum = int(vault.config.get("consolidate.promote_min_episodes", 3))
    similarity = float(vault.config.get("consolidate.promote_similarity", 0.75))
    # The two optional links (below) are off unless set.
    reworded = min(similarity, float(vault.config.get("consolidate.promote_reworded", similarity)))
    foreign = float(vault.config.get("consolidate.promote_foreign_overlap", FOREIGN_OVERLAP))
    if len(episodes) < minimum:
        return
    import numpy as np

    groups = [owner(m) for m in episodes]
    vecs, pairs = neighbour_pairs(vault, state, episodes, groups, reworded, progress)
    for positions in _tag_clusters(episodes, pairs, similarity, foreign):
        if len(positions) < minimum:
            continue
        sub = vecs[positions]
        if not _coherent(sub, reworded - CHAIN_SLACK):
            continue
        members = [episodes[i] for i in positions]
        ids = sorted(m.id for m in members)
        derived = derived_key("pattern", ids)
        if derived in proposed or _was_rejected(ids, rejected):
            continue
        central = members[int(np.argmax(sub @ sub.mean(axis=0)))]
        tags = union_strings(members, "tags")
        said = state_pattern(members, central)
        meta = proposal_meta("semantic", "facts", said.title, ids, derived, result.now, taken)
        same_owner(meta, central)
        if tags:
            meta["tags"] = tags[:8]
        add_proposal(vault, result, meta, said.body)


# A cluster is joined link by link (each similar pair); its typical pair may sit this far
# below the link threshold. Further, it is a chain of look-alikes drifting from one subject
# to another ("paged because messaging disk ..." ... "paged because subscriptions CPU ..."),
# not one thing seen again: not proposed.
CHAIN_SLACK = 0.05


def _coherent(vecs: Any, floor: float) -> bool:
    """Whether the median cosine of the cluster's pairs (rows of ``vecs``) reaches ``floor``."""
    import numpy as np

    unit = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    sims = unit @ unit.T
    upper = sims[np.triu_indices(len(unit), 1)]
    return bool(len(upper) == 0 or float(np.median(upper)) >= floor)


# Two optional links, off by default: neither did better than the cosine alone on the
# held-out half of bench/patterns.py (docs/consolidation.md). A problem retold in other
# words: MiniLM puts two tellings anywhere from 0.6 to 0.9; with ``promote_reworded`` set
# under ``promote_similarity``, a pair in between links when it shares this many content
# words (what failed, where: "inventory", "resolver"). Outside English, where the cosine of
# any two sentences is high, ``promote_foreign_overlap`` asks that share of the shorter
# side's content words at any cosine (0.25 was chosen on the tune half).
REWORDED_SHARED = 2
FOREIGN_OVERLAP = 0.0


def _linked(a: Memory, b: Memory, cosine: float, similarity: float, foreign: float) -> bool:
    """Whether two similar episodes tell the same thing again (:mod:`.compare`)."""
    if a.tags and b.tags and not set(a.tags) & set(b.tags):
        return False
    diff = compare(memory_text(a), memory_text(b))
    if diff.variant or diff.names:
        return False  # a routine told about different things or people: not a recurrence
    if diff.language != "en" and diff.overlap < foreign:
        return False
    return cosine >= similarity or diff.shared >= REWORDED_SHARED


def _tag_clusters(
    episodes: list[Memory],
    pairs: dict[tuple[int, int], float],
    similarity: float = 0.75,
    foreign: float = FOREIGN_OVERLAP,
) -> list[list[int]]:
    """Connected components of linked pairs (:func:`_linked`; positions in ``episodes``)."""
    parent = list(range(len(episodes)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for (i, j), cosine in sorted(pairs.items()):
        if find(i) == find(j):
            continue  # joined already, through others: no need to ask
        if _linked(episodes[i], episodes[j], cosine, similarity, foreign):
            parent[find(i)] = find(j)
    clusters: dict[int, list[int]] = defaultdict(list)
    for i in range(len(episodes)):
        clusters[find(i)].append(i)
    return list(clusters.values())


def same_owner(meta: dict[str, Any], m: Memory) -> None:
    """A proposal learned from private (or one team's) episodes stays with that owner."""
    scope, agent, team = owner(m)
    if scope == "self" and agent:
        meta["scope"], meta["agent"] = "self", str(agent)
    elif scope == "team" and team:
        meta["team"] = str(team)


def proposal_meta(
    mtype: str,
    category: str,
    title: str,
    ids: list[str],
    key: str,
    now: dt.datetime,
    taken: set[str],
) -> dict[str, Any]:
    """The keys of a proposed memory, with an id not in ``taken`` (which it joins)."""
    base = f"learned-{slugify(title, max_words=6)}"
    mid, n = base, 2
    while mid in taken:
        mid, n = f"{base}-{n}", n + 1
    taken.add(mid)
    return {
        "id": mid,
        "type": mtype,
        "category": category,
        "title": title,
        "status": "proposed",
        "scope": "team",
        "author": "agent:memvault-consolidate",
        "created": format_time(now),
        "importance": 3,
        "confidence": "low",
        "source": "learned",
        "derived_from": ids,
        "derived_key": key,
    }


def add_proposal(
    vault: Core,
    result: Plan,
    meta: dict[str, Any],
    body: str,
    why: str | None = None,
    step: str = "promote",
) -> None:
    """Add a new file in inbox/ to the plan."""
    rel = INBOX_DIR + vault.path_for(meta)
    result.new_files[rel] = render_new(meta, body)
    why = why or f"derived from {len(meta['derived_from'])} episodes"
    result.actions.append(Action(step, meta["id"], rel, "propose", why, {}))
