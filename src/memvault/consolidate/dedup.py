"""Near-duplicates merge into one memory; similar facts that disagree are disputed.

Candidates share type, category and owner. Identical words always merge; otherwise the
index's nearest neighbours with cosine ≥ ``consolidate.dedup_threshold`` merge when their
words agree (:mod:`.compare`): not the same sentence about something else (a template
variant), and no conflict (a different number, name or date on each side, a negation, a
polarity word flipped). The cosine alone can't decide: with the default model a reworded
statement and a look-alike about another service both score 0.6-0.95. Episodes merge only
when they are the same event -- the same session, or written within
``consolidate.same_event_hours`` (6) of each other: the same problem on three different days
is a recurrence, which promotion turns into a proposal. Facts that look alike
(≥ ``consolidate.dispute_similarity``) and contradict each other -- one value replaced, two
swapped, a negation or polarity flipped -- are flagged ``disputed`` for review, never merged.
Facts merge only when they name the same subject or neither names one. A cluster holds only
memories of which every two pass these rules (complete linkage): a reworded B of A and a
reworded C of B do not merge A with C unless A and C pass too.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

from ..conflicts import disputed_keys
from ..memory import Memory
from .compare import Difference, compare
from .decay import DEFAULT_BY_TYPE
from .model import Action, Plan, Progress, State, id_set, owner, union_strings, union_values
from .similarity import memory_text, neighbour_pairs, normalise

# Tuned on the 'tune' half of bench/data/consolidate.json with the default model (see
# docs/consolidation.md); a vault's config overrides them.
DEDUP_THRESHOLD = 0.68
SPECIFIC_THRESHOLD = 0.75
FOREIGN_OVERLAP = 0.4
DISPUTE_SIMILARITY = 0.7
WHY = {
    "value": "a value replaced",
    "swap": "two values swapped",
    "negation": "one negates the other",
    "polarity": "allowed in one, not in the other",
}

if TYPE_CHECKING:  # pragma: no cover
    from ..core import Core

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


def plan_dedup(vault: Core, state: State, result: Plan, progress: Progress | None = None) -> None:
    """Merge near-duplicates into the one that says the most (else the oldest); the others
    become archived tombstones."""
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
        by_text: dict[tuple[str, str], Memory] = {}
        for m in members:
            # the body's words (a different title is no difference) about one subject
            key = (m.subject or "", normalise(m.content))
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
    vault: Core,
    state: State,
    result: Plan,
    candidates: list[Memory],
    clusters: Clusters,
    progress: Progress | None,
) -> None:
    """Merge similar candidates that say the same; dispute similar facts that disagree."""
    threshold = float(vault.config.get("consolidate.dedup_threshold", DEDUP_THRESHOLD))
    dispute_at = float(vault.config.get("consolidate.dispute_similarity", DISPUTE_SIMILARITY))
    keys = [group_key(m) for m in candidates]
    lowest = min(threshold, dispute_at)
    _, pairs = neighbour_pairs(vault, state, candidates, keys, lowest, progress)
    hours = float(vault.config.get("consolidate.same_event_hours", 6))
    same: dict[tuple[int, int], float] = {}
    merged = _merged_into(state)
    for (i, j), sim in sorted(pairs.items()):
        a, b = candidates[i], candidates[j]
        if a.subject and a.subject == b.subject:
            continue  # the supersede rule decides between facts about one subject
        if a.type == "episodic" and not same_event(a, b, hours):
            continue  # a recurrence, not a duplicate: promotion looks at it
        diff = compare(memory_text(a), memory_text(b))
        # One side naming a number, name or date the other lacks says more: only a closer
        # match merges it (a reworded twin usually keeps every specific).
        bar = max(threshold, SPECIFIC_THRESHOLD) if diff.specifics else threshold
        # A subject says what a fact is about: facts about two subjects, or one that names
        # its subject and one that doesn't, are never merged (the survivor would drop the
        # subject, and the subject its fact in force). Their words may still dispute.
        if (
            sim >= bar
            and words_agree(diff)
            and a.subject == b.subject
            and _agrees_with_merged(a, b, merged)
        ):
            same[(i, j)] = sim
        elif a.type == "semantic" and sim >= dispute_at and diff.contradiction:
            flag_disputed(state, result, a, b, sim, diff.contradiction)
    _link(candidates, same, clusters)


def _merged_into(state: State) -> dict[str, list[str]]:
    """The texts an earlier run merged into each memory (its tombstones with no subject:
    facts with a subject are superseded by the supersede rule, not merged)."""
    out: dict[str, list[str]] = defaultdict(list)
    for m in state.memories:
        keeper = m.meta.get("superseded_by")
        if isinstance(keeper, str) and not m.subject and m.status == "superseded":
            out[keeper].append(memory_text(m))
    return out


def _agrees_with_merged(a: Memory, b: Memory, merged: dict[str, list[str]]) -> bool:
    """Complete linkage across runs: the words of what an earlier run merged into one side
    must agree with the other side too (else a second run merges what the first kept
    apart: a variant of an archived member, through the member that kept it)."""
    return all(
        words_agree(compare(memory_text(other), text))
        for side, other in ((a, b), (b, a))
        for text in merged.get(side.id, ())
    )


def _link(candidates: list[Memory], same: dict[tuple[int, int], float], clusters: Clusters) -> None:
    """Join candidates into clusters in which every two say the same (complete linkage),
    closest pairs first. Joining on any one link chains: A rewords B, B rewords C, and C --
    which says something else than A -- was merged with it (on SICK, 84 % of the pairs so
    merged were not one statement; docs/consolidation.md)."""
    group: dict[int, frozenset[int]] = {}
    for (i, j), _ in sorted(same.items(), key=lambda item: (-item[1], item[0])):
        gi, gj = group.get(i, frozenset((i,))), group.get(j, frozenset((j,)))
        if gi == gj or not all((min(x, y), max(x, y)) in same for x in gi for y in gj):
            continue
        joined = gi | gj
        for k in joined:
            group[k] = joined
        clusters.union(candidates[i].id, candidates[j].id)


def words_agree(diff: Difference) -> bool:
    """Two similar texts may be one statement: no template variant, no conflict, some words
    in common, one language. The default model reads English: in other languages its cosine
    says less (any two Cyrillic sentences look alike to it), so more of the words must agree."""
    if diff.variant or diff.conflict or not diff.shared or not diff.language:
        return False
    return diff.language == "en" or diff.overlap >= FOREIGN_OVERLAP


def says_most(members: list[Memory]) -> Memory | None:
    """The one member that states every other (validate's rules, word for word) and is not
    stated by one of them ("a grand piano on stage" beside "the piano"), or None: a merge
    keeps it, so the detail stays in force (on SICK, two thirds of the merged pairs where
    one sentence says more had archived that one; docs/consolidation.md)."""
    from ..validate.claims import read
    from ..validate.weigh import weigh

    # one reading per distinct text: copies of one text say the same (and a cluster of
    # many copies would cost a weighing per pair)
    texts: dict[str, Memory] = {}
    for m in members:
        texts.setdefault(normalise(memory_text(m)), m)
    if len(texts) < 2:
        return None
    claims = {key: read(memory_text(m)) for key, m in texts.items()}

    @cache
    def states(key: str, other: str) -> bool:
        return weigh(claims[other], claims[key]).kind == "supports"

    most = [
        key
        for key in texts
        if all(o == key or states(key, o) for o in texts)
        and any(o != key and not states(o, key) for o in texts)
    ]
    return texts[most[0]] if len(most) == 1 else None


def _merge(state: State, result: Plan, members: list[Memory]) -> None:
    """Keep the member that says the most (:func:`says_most`), else the oldest, with the
    union of the cluster's keys; archive the others."""
    members.sort(key=lambda m: (m.created or result.now, m.id))
    first = says_most(members) or members[0]
    keeper, dups = first, [m for m in members if m is not first]
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
    changes |= _kept_weight(keeper, members)
    if count != int(state.value(keeper, "access_count") or 0):
        state.set_usage(keeper, {"access_count": count})
    # what the archived copies had replaced, the kept memory replaces now (a copy's own
    # ``supersedes`` would otherwise be reachable only through its tombstone)
    replaced = set().union(*(id_set(m.meta.get("supersedes")) for m in members))
    sup = sorted((replaced | dup_ids) - {keeper.id})
    changes["supersedes"] = sup[0] if len(sup) == 1 else sup
    state.change(keeper, changes)
    kept = "the oldest id" if keeper is members[0] else "the one that says the most"
    why = f"kept {kept}; tags, related, sources and access counts unioned"
    for dup in dups:
        tomb = {"status": "superseded", "superseded_by": keeper.id}
        dup_why = f"near-duplicate of {keeper.id} (same type, category and scope)"
        state.archive(dup, result, "dedup", dup_why, tomb)
        result.actions.append(Action("dedup", keeper.id, keeper.path, f"merge {dup.id}", why, {}))


# How long each named decay keeps a memory (the default rates' order: slower is longer).
_DECAY_ORDER = {name: rank for rank, name in enumerate(("fast", "normal", "slow", "never"))}


def _kept_weight(keeper: Memory, members: list[Memory]) -> dict[str, Any]:
    """The highest ``importance`` and the slowest named ``decay`` any member had: the kept
    memory stands for all of them, so it must not fade sooner than one would have."""
    out: dict[str, Any] = {}
    levels = [m.meta.get("importance") for m in members]
    top = max((v for v in levels if isinstance(v, int) and not isinstance(v, bool)), default=None)
    if top is not None and top != keeper.meta.get("importance"):
        out["importance"] = top
    named = [d for m in members if (d := m.meta.get("decay")) in _DECAY_ORDER]
    if named:
        slowest = max(named, key=_DECAY_ORDER.__getitem__)
        mine = keeper.meta.get("decay") or DEFAULT_BY_TYPE.get(keeper.type)
        if mine in _DECAY_ORDER and _DECAY_ORDER[slowest] > _DECAY_ORDER[mine]:
            out["decay"] = slowest
    return out


def flag_disputed(
    state: State, result: Plan, a: Memory, b: Memory, sim: float, shape: str = "value"
) -> None:
    """Mark both facts ``disputed``, each related to the other, for a human to review."""
    result.disputed.append(
        {
            "ids": [a.id, b.id],
            "similarity": round(sim, 3),
            "shape": shape,
            "why": f"similar facts that contradict each other ({WHY[shape]}), "
            "without a shared subject",
        }
    )
    for m, other in ((a, b), (b, a)):
        if m.meta.get("status") == "disputed":
            continue
        changes = disputed_keys(m, other.id)
        state.change(m, changes)
        why = f"may contradict {other.id} (similarity {sim:.2f}); review it"
        result.actions.append(Action("supersede", m.id, m.path, "dispute", why, changes))
