"""Consolidation steps that need embeddings: dedup, promotion and distillation."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import shlex
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .files import render_new
from .memory import Memory, format_time, slugify
from .vault import Vault

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .consolidate import Plan, _State

Progress = Callable[[str, int, int], None]
_WS = re.compile(r"\s+")
_NUM = re.compile(r"\d+(?:[.,]\d+)?")
_NEG = re.compile(r"\b(not|never|no|don't|doesn't|isn't|aren't|won't|can't|cannot)\b", re.I)


def normalise(text: str) -> str:
    return _WS.sub(" ", re.sub(r"[^\w\s]", " ", text.lower())).strip()


def memory_text(m: Memory) -> str:
    title = str(m.meta.get("title") or "")
    return f"{title}\n{m.content}".strip()


def _index(vault: Vault, state: _State) -> Any:
    """The vault's index, brought up to date once per plan (None: unusable, embed instead)."""
    if not state.index_tried:
        state.index_tried = True
        from .index.neighbours import open_index

        try:
            state.index = open_index(vault, state.writer)
        except Exception as exc:  # noqa: BLE001 - consolidation must not depend on a cache
            print(f"memvault: search index unavailable ({exc}); embedding memories instead", file=sys.stderr)
            state.index = None
    return state.index


def neighbour_pairs(
    vault: Vault,
    state: _State,
    memories: Sequence[Memory],
    groups: Sequence[Any],
    threshold: float,
    progress: Progress | None = None,
) -> tuple[np.ndarray, dict[tuple[int, int], float]]:
    """Vectors of ``memories`` (from the index) and their similar pairs within ``groups``:
    each memory's ``consolidate.neighbours`` (default 10) nearest of its group with cosine
    ≥ ``threshold``, found by the index (HNSW, or exactly in small vaults), not by
    comparing every pair."""
    import numpy as np

    from .index.neighbours import MemoryVectors, memory_vectors, similar_pairs

    k = int(vault.config.get("consolidate.neighbours", 10))
    idx = _index(vault, state)

    def embed(texts: list[str]) -> np.ndarray:
        from .embeddings import get_embedder

        return get_embedder(str(vault.config.get("embedder"))).embed_documents(texts)

    # dedup and promotion ask about many of the same memories: read each vector once
    cache = state.vectors
    missing = [m for m in memories if m.id not in cache]
    if missing:
        got = memory_vectors(idx, missing, embed, progress, current=state.writer and idx is not None)
        stale = set(got.stale)
        for pos, m in enumerate(missing):
            cache[m.id] = (got.matrix[pos], got.rowids[pos], pos in stale)
    rows = [cache[m.id] for m in memories]
    vecs = MemoryVectors(
        np.vstack([r[0] for r in rows]) if rows else np.zeros((0, 1), dtype=np.float32),
        [r[1] for r in rows],
        [i for i, r in enumerate(rows) if r[2]],
    )
    mode = vault.config.get("consolidate.neighbour_mode")
    pairs, report = similar_pairs(
        idx, vecs, [m.type for m in memories], groups, k, threshold, progress, str(mode) if mode in ("exact", "ann") else None
    )
    state.neighbour_reports.append(report.as_dict())
    return vecs.matrix, pairs


def _owner(m: Memory) -> tuple[Any, ...]:
    return (m.scope, m.agent if m.scope == "self" else None, m.team if m.scope == "team" else None)


def _group_key(m: Memory) -> tuple[Any, ...]:
    return (m.type, m.category, *_owner(m))


def plan_dedup(vault: Vault, state: _State, result: Plan, progress: Progress | None = None) -> None:
    """Merge near-duplicates into the oldest id; the others become archived tombstones."""
    from .consolidate import Action

    threshold = float(vault.config.get("consolidate.dedup_threshold", 0.92))
    live = [m for m in state.memories if state.live(m) and m.category != "transcript"]
    groups: dict[tuple[Any, ...], list[Memory]] = defaultdict(list)
    for m in live:
        groups[_group_key(m)].append(m)
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.get(x, x) != x:
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    candidates: list[Memory] = []
    for members in groups.values():
        if len(members) < 2:
            continue
        by_text: dict[str, str] = {}
        for m in members:
            key = normalise(memory_text(m.__class__(m.id, m.type, m.path, {**m.meta, "title": ""}, m.content)))
            if key in by_text:
                union(by_text[key], m.id)
            else:
                by_text[key] = m.id
                # One memory per distinct text asks for neighbours: copies of one text would
                # otherwise fill each other's k nearest and hide the near-duplicates.
                candidates.append(m)
    if len(candidates) >= 2:
        dispute_at = float(vault.config.get("consolidate.dispute_similarity", 0.8))
        keys = [_group_key(m) for m in candidates]
        _, pairs = neighbour_pairs(vault, state, candidates, keys, min(threshold, dispute_at), progress)
        for (i, j), sim in sorted(pairs.items()):
            a, b = candidates[i], candidates[j]
            if a.subject and a.subject == b.subject:
                continue  # the supersede rule decides between facts about one subject
            if sim >= threshold and _same_numbers(a, b):
                union(a.id, b.id)
            elif sim >= threshold and a.type == "semantic":
                _flag_disputed(state, result, a, b, sim)
            elif a.type == "semantic" and _looks_contradictory(a, b):
                _flag_disputed(state, result, a, b, sim)
    clusters: dict[str, list[Memory]] = defaultdict(list)
    for m in live:
        clusters[find(m.id)].append(m)
    for members in clusters.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda m: (m.created or result.now, m.id))
        keeper, dups = members[0], members[1:]
        tags = _union([keeper, *dups], "tags")
        related = [r for r in _union([keeper, *dups], "related") if r not in {d.id for d in dups} and r != keeper.id]
        sources = _union_any([keeper, *dups], "source")
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
        old_sup = keeper.meta.get("supersedes")
        have = set(old_sup if isinstance(old_sup, list) else [old_sup] if old_sup else [])
        sup = sorted(have | {d.id for d in dups})
        changes["supersedes"] = sup[0] if len(sup) == 1 else sup
        state.change(keeper, changes)
        for dup in dups:
            state.archive(dup, result, "dedup", f"near-duplicate of {keeper.id} (same type, category and scope)", {"status": "superseded", "superseded_by": keeper.id})
            result.actions.append(Action("dedup", keeper.id, keeper.path, f"merge {dup.id}", "kept the oldest id; tags, related, sources and access counts unioned", {}))


def _same_numbers(a: Memory, b: Memory) -> bool:
    """Near-identical text with different numbers, or one negated, is a different statement,
    never a duplicate ("export is enabled" / "export is not enabled")."""
    ta, tb = memory_text(a), memory_text(b)
    if sorted(_NUM.findall(ta)) != sorted(_NUM.findall(tb)):
        return False
    return len(_NEG.findall(ta)) == len(_NEG.findall(tb))


def _looks_contradictory(a: Memory, b: Memory) -> bool:
    """Similar facts without a shared subject whose numbers or negations differ."""
    if a.subject and a.subject == b.subject:
        return False
    ta, tb = memory_text(a), memory_text(b)
    if set(_NUM.findall(ta)) != set(_NUM.findall(tb)) and (_NUM.search(ta) and _NUM.search(tb)):
        return True
    return bool(_NEG.search(ta)) != bool(_NEG.search(tb))


def _flag_disputed(state: _State, result: Plan, a: Memory, b: Memory, sim: float) -> None:
    from .consolidate import Action

    result.disputed.append({"ids": [a.id, b.id], "similarity": round(sim, 3), "why": "similar facts that differ in numbers or negation, without a shared subject"})
    for m, other in ((a, b), (b, a)):
        if m.meta.get("status") == "disputed":
            continue
        changes = {"status": "disputed", "related": sorted({*m.tags[:0], *(_union([m], "related")), other.id})}
        state.change(m, changes)
        result.actions.append(Action("supersede", m.id, m.path, "dispute", f"may contradict {other.id} (similarity {sim:.2f}); review it", changes))


def _union(members: Sequence[Memory], key: str) -> list[str]:
    out: list[str] = []
    for m in members:
        value = m.meta.get(key)
        for item in value if isinstance(value, list) else [value] if value else []:
            if str(item) not in out:
                out.append(str(item))
    return out


def _union_any(members: Sequence[Memory], key: str) -> list[Any]:
    out: list[Any] = []
    for m in members:
        value = m.meta.get(key)
        for item in value if isinstance(value, list) else [value] if value else []:
            if item not in out:
                out.append(item)
    return out


def plan_promote(vault: Vault, state: _State, result: Plan, now: dt.datetime, progress: Progress | None = None) -> None:
    """A pattern in 3+ episodes → a proposed fact; the same steps in 3+ episodes → a proposed procedure."""
    minimum = int(vault.config.get("consolidate.promote_min_episodes", 3))
    similarity = float(vault.config.get("consolidate.promote_similarity", 0.75))
    episodes = [m for m in state.memories if m.type == "episodic" and state.live(m) and m.category not in ("transcript", "summary")]
    proposed_keys = {str(m.meta.get("derived_key")) for m in state.memories if m.meta.get("derived_key")}
    existing_ids = {m.id for m in state.memories}
    # 1. repeated sequences of steps
    by_steps: dict[tuple[Any, ...], list[Memory]] = defaultdict(list)
    for m in episodes:
        steps = m.meta.get("steps")
        if isinstance(steps, list) and len(steps) >= 2:
            by_steps[(tuple(normalise(str(s)) for s in steps), _owner(m))].append(m)
    for (key, _), members in sorted(by_steps.items(), key=lambda kv: str(kv[0])):
        if len(members) < minimum:
            continue
        ids = sorted(m.id for m in members)
        derived_key = hashlib.sha1(("steps\0" + "\0".join(ids)).encode()).hexdigest()[:12]
        if derived_key in proposed_keys:
            continue
        first = min(members, key=lambda m: m.id)
        title = f"Procedure seen in {len(members)} episodes: {first.title}"[:80]
        meta = _proposal_meta("procedural", "workflows", title, ids, derived_key, now, existing_ids)
        _same_owner(meta, first)
        meta["steps"] = [str(s) for s in first.meta["steps"]]
        meta["trigger"] = _union(members, "tags")[:5] or None
        body = f"The same {len(key)} steps were followed in {len(members)} episodes: {', '.join(ids)}."
        _add_proposal(vault, result, meta, body)
    # 2. clusters of similar episodes sharing tags
    if len(episodes) < minimum:
        return
    # Clusters never mix owners: a pattern in one agent's private episodes is proposed to
    # that agent, never to its team.
    vecs, pairs = neighbour_pairs(vault, state, episodes, [_owner(m) for m in episodes], similarity, progress)
    parent = list(range(len(episodes)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for (i, j), _sim in sorted(pairs.items()):
        a, b = episodes[i], episodes[j]
        if a.tags and b.tags and not set(a.tags) & set(b.tags):
            continue
        parent[find(i)] = find(j)
    clusters: dict[int, list[int]] = defaultdict(list)
    for i in range(len(episodes)):
        clusters[find(i)].append(i)
    for idx in clusters.values():
        if len(idx) < minimum:
            continue
        members = [episodes[i] for i in idx]
        ids = sorted(m.id for m in members)
        derived_key = hashlib.sha1(("pattern\0" + "\0".join(ids)).encode()).hexdigest()[:12]
        if derived_key in proposed_keys:
            continue
        import numpy as np

        sub = vecs[idx]
        centre = sub.mean(axis=0)
        central = members[int(np.argmax(sub @ centre))]
        tags = _union(members, "tags")
        title = f"Pattern in {len(members)} episodes: {central.title}"[:80]
        meta = _proposal_meta("semantic", "facts", title, ids, derived_key, now, existing_ids)
        _same_owner(meta, central)
        if tags:
            meta["tags"] = tags[:8]
        body = (
            f"Seen in {len(members)} episodes ({', '.join(ids)}). Most representative:\n\n> "
            + central.content.strip().replace("\n", "\n> ")[:1200]
        )
        _add_proposal(vault, result, meta, body)


def _same_owner(meta: dict[str, Any], m: Memory) -> None:
    """A proposal learned from private (or one team's) episodes stays with that owner."""
    scope, agent, team = _owner(m)
    if scope == "self" and agent:
        meta["scope"], meta["agent"] = "self", str(agent)
    elif scope == "team" and team:
        meta["team"] = str(team)


def _proposal_meta(mtype: str, category: str, title: str, ids: list[str], key: str, now: dt.datetime, taken: set[str]) -> dict[str, Any]:
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


def _add_proposal(vault: Vault, result: Plan, meta: dict[str, Any], body: str) -> None:
    from .consolidate import Action

    rel = f"inbox/{vault.path_for(meta)}"
    result.new_files[rel] = render_new(meta, body)
    result.actions.append(Action("promote", meta["id"], rel, "propose", f"derived from {len(meta['derived_from'])} episodes", {}))


# --- distillation -----------------------------------------------------------------------


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n{2,}", text)
    return [p.strip() for p in parts if len(p.strip()) > 20 and not p.strip().startswith("### ")]


def extractive_summary(vault: Vault, text: str, max_sentences: int = 5) -> str:
    """Central sentences by embedding similarity to the whole (deterministic, offline)."""
    sentences = _sentences(text)
    if len(sentences) <= max_sentences:
        return " ".join(sentences) or text.strip()[:500]
    from .embeddings import get_embedder

    embedder = get_embedder(str(vault.config.get("embedder")))
    vecs = embedder.embed_documents(sentences[:400])
    centre = vecs.mean(axis=0)
    scores = vecs @ centre
    top = sorted(sorted(range(len(scores)), key=lambda i: -float(scores[i]))[:max_sentences])
    return " ".join(sentences[i] for i in top)


def run_summarizer(command: str, text: str) -> tuple[str, list[dict[str, Any]]]:
    """Pipe ``text`` to a command; stdout is the summary, JSON-object lines are candidate facts."""
    proc = subprocess.run(shlex.split(command), input=text, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {proc.stderr.strip()[:200]}")
    summary_lines: list[str] = []
    facts: list[dict[str, Any]] = []
    for line in proc.stdout.splitlines():
        stripped = line.strip()
        if stripped.startswith("{"):
            try:
                obj = json.loads(stripped)
                if isinstance(obj, dict) and obj.get("content") or obj.get("text"):
                    facts.append(obj)
                    continue
            except (json.JSONDecodeError, AttributeError):
                pass
        summary_lines.append(line)
    summary = "\n".join(summary_lines).strip()
    if not summary:
        raise RuntimeError("empty summary")
    return summary, facts


def _turn_time(text: str) -> dt.datetime | None:
    from .memory import parse_time

    try:
        return parse_time(text)
    except ValueError:
        return None


def plan_distill(vault: Vault, state: _State, result: Plan, now: dt.datetime) -> None:
    """Old transcripts get a summary episode; the transcript moves to archive/."""
    from .transcripts import parse_turns

    days = float(vault.config.get("consolidate.distill_after_days", 30))
    command = vault.config.get("consolidate.summarizer_command")
    taken = {m.id for m in state.memories}
    for m in state.memories:
        if m.category != "transcript" or not state.live(m):
            continue
        turns = parse_turns(m.content)
        stamps = [t for t in (_turn_time(t.when) for t in turns) if t is not None]
        last = max(stamps) if stamps else (m.time("updated") or m.created)
        if last is None or (now - last).total_seconds() / 86400 < days:
            continue
        text = "\n\n".join(f"{t.role}: {t.text}" for t in turns) or m.content
        facts: list[dict[str, Any]] = []
        summary = ""
        if command:
            try:
                summary, facts = run_summarizer(str(command), text)
            except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
                print(f"memvault: summarizer_command failed ({exc}); using the extractive summary", file=sys.stderr)
        if not summary:
            summary = extractive_summary(vault, text)
        sid = f"summary-{m.id}"
        n = 2
        while sid in taken:
            sid, n = f"summary-{m.id}-{n}", n + 1
        taken.add(sid)
        meta = {
            "id": sid,
            "type": "episodic",
            "category": "summary",
            "title": f"Summary of {m.title}"[:80],
            "scope": m.scope,
            "agent": m.agent,
            "team": m.team,
            "session": m.meta.get("session"),
            "created": format_time(last),
            "author": "agent:memvault-consolidate",
            "importance": m.importance,
            "related": [m.id],
            "derived_from": [m.id],
            "source": {"transcript": f"archive/{m.path}"},
        }
        rel = vault.path_for({k: v for k, v in meta.items() if v is not None})
        result.new_files[rel] = render_new({k: v for k, v in meta.items() if v is not None}, summary)
        from .consolidate import Action

        result.actions.append(Action("distill", sid, rel, "summarise", f"transcript {m.id} idle for over {days:.0f} days", {}))
        state.archive(m, result, "distill", f"distilled into {sid}", {"related": [sid]})
        for i, fact in enumerate(facts):
            fmeta = _proposal_meta("semantic", "facts", str(fact.get("title") or fact.get("content") or fact.get("text"))[:80], [m.id], f"{sid}-{i}", now, taken)
            if fact.get("subject"):
                fmeta["subject"] = str(fact["subject"])
            _add_proposal(vault, result, fmeta, str(fact.get("content") or fact.get("text")))
