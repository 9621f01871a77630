#!/usr/bin/env python3
"""Consolidation benchmark: a vault with planted duplicates and contradictions.

Builds a vault of N memories (default 10,000) across scopes, plants exact and
near-exact duplicates and subject contradictions at known rates, warms the index, runs
one consolidation and prints wall time, files changed, duplicate recall/precision and
merges across scopes (must be 0). Also runs a 1k vault to show the scaling.

    python bench/consolidate.py            # human output
    python bench/consolidate.py --json     # one JSON object
    python bench/consolidate.py --n 2000 --embedder fake   # quick
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = None


def vocabulary(rng: random.Random) -> list[str]:
    syllables = ["ka", "lo", "mi", "ren", "dus", "tor", "vel", "qui", "sam", "por", "nek", "zu", "bar", "fin", "gol", "hep"]
    words = set()
    while len(words) < 3000:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))))
    common = "the a of to and in is was for on with that by at from we our team service deploy".split()
    return sorted(words) + common


def sentence(rng: random.Random, vocab: list[str]) -> str:
    return " ".join(rng.choice(vocab) for _ in range(rng.randint(14, 24))).capitalize() + "."


def near_copy(rng: random.Random, text: str) -> str:
    """Same statement, trivially different: case, punctuation, one extra filler word."""
    variants = [
        text.upper(),
        text.rstrip(".") + "!",
        text.replace(" ", "  ", 2),
        text.rstrip(".") + " again.",
    ]
    return rng.choice(variants)


def build(root: Path, n: int, dup_rate: float, contra_rate: float, seed: int) -> dict:
    from memvault import Vault
    from memvault.files import render_new

    rng = random.Random(seed)
    vocab = vocabulary(rng)
    vault = Vault.init(root)
    scopes = [("team", None, None), ("self", "agent-a", None), ("self", "agent-b", None), ("global", None, None)]
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    writes: dict[str, str] = {}
    planted: list[tuple[str, str]] = []
    cross_scope_twins: list[tuple[str, str]] = []
    base_count = int(n / (1 + dup_rate))
    originals = []
    for i in range(base_count):
        scope, agent, team = scopes[i % len(scopes)]
        kind = "episodic" if i % 3 else "semantic"
        created = t0 + dt.timedelta(minutes=i)
        meta = {
            "id": f"m{i:06d}",
            "type": kind,
            "category": "session" if kind == "episodic" else "facts",
            "scope": scope,
            "agent": agent,
            "created": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "importance": 3,
            "decay": "never",
            "tags": [rng.choice(vocab[:50])],
        }
        text = sentence(rng, vocab)
        if kind == "semantic" and rng.random() < contra_rate:
            meta["subject"] = f"subject.{i // 2}"
        meta = {k: v for k, v in meta.items() if v is not None}
        rel = vault.path_for(meta)
        writes[rel] = render_new(meta, text)
        originals.append((meta, text))
    extra = n - base_count
    for j in range(extra):
        meta, text = rng.choice(originals)
        twin = dict(meta)
        twin["id"] = f"d{j:06d}"
        twin["created"] = (dt.datetime.fromisoformat(meta["created"].replace("Z", "+00:00")) + dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        twin.pop("subject", None)
        if j % 10 == 0:
            # same text in another scope: must NOT merge
            other = [s for s in scopes if s[0] != meta["scope"] or s[1] != meta.get("agent")][j % 3]
            twin["scope"], twin["agent"] = other[0], other[1]
            twin = {k: v for k, v in twin.items() if v is not None}
            cross_scope_twins.append((meta["id"], twin["id"]))
        else:
            planted.append((meta["id"], twin["id"]))
        rel = vault.path_for(twin)
        writes[rel] = render_new(twin, near_copy(rng, text) if j % 2 else text)
    with vault.locked():
        vault.commit_files(writes, f"bench: {len(writes)} memories")
    return {"vault": vault, "planted": planted, "cross": cross_scope_twins, "files": len(writes)}


def run(n: int, dup_rate: float, contra_rate: float, seed: int, quiet: bool) -> dict:
    from memvault import Vault
    from memvault.consolidate import consolidate

    with tempfile.TemporaryDirectory(prefix="mv-bench-cons-") as tmp:
        root = Path(tmp) / "v"
        t = time.perf_counter()
        built = build(root, n, dup_rate, contra_rate, seed)
        build_s = time.perf_counter() - t
        vault = Vault.open(root)
        t = time.perf_counter()
        try:
            vault.reindex()
        except (ImportError, AttributeError) as exc:  # index not available: vectors are embedded on demand
            print(f"note: no index warm-up ({exc})", file=sys.stderr)
        index_s = time.perf_counter() - t
        agents = {None: vault}
        t = time.perf_counter()
        result, sha = consolidate(vault, now=dt.datetime(2026, 2, 1, tzinfo=dt.UTC))
        seconds = time.perf_counter() - t
        changed = subprocess.run(["git", "show", "--name-only", "--format=", "HEAD"], cwd=root, capture_output=True, text=True).stdout.split()
        merged = {(a.memory_id, a.what.split(" ", 1)[1]) for a in result.actions if a.step == "dedup" and a.what.startswith("merge ")}
        by_id = {m.id: m for m in vault.all_memories()}
        planted = set(built["planted"])
        # a planted pair counts as found when the twin was merged into the original
        found = sum(1 for pair in planted if pair in merged)
        correct = sum(1 for pair in merged if pair in planted)
        cross = sum(1 for keeper, dup in merged if by_id.get(keeper) and by_id.get(dup) and (by_id[keeper].scope, by_id[keeper].agent) != (by_id[dup].scope, by_id[dup].agent))
        _ = agents
        return {
            "n": built["files"],
            "build_s": round(build_s, 2),
            "index_s": round(index_s, 2),
            "seconds": round(seconds, 2),
            "files_changed": len(changed),
            "planted_dups": len(planted),
            "merges": len(merged),
            "dup_recall": round(found / len(planted), 4) if planted else 1.0,
            "dup_precision": round(correct / len(merged), 4) if merged else 1.0,
            "cross_scope_merges": cross,
            "superseded": sum(1 for a in result.actions if a.step == "supersede" and a.what.startswith("superseded")),
            "summary": result.summary(),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=1_000, help="size of the scaling run (0 to skip)")
    parser.add_argument("--dup-rate", type=float, default=0.05)
    parser.add_argument("--contra-rate", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--embedder", default=None, help="e.g. fake (default: the vault's default model)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.embedder:
        os.environ["MEMVAULT_EMBEDDER"] = args.embedder
    small = run(args.small, args.dup_rate, args.contra_rate, args.seed, True) if args.small else None
    big = run(args.n, args.dup_rate, args.contra_rate, args.seed, True)
    out = {
        "seconds": big["seconds"],
        "files_changed": big["files_changed"],
        "dup_recall": big["dup_recall"],
        "dup_precision": big["dup_precision"],
        "cross_scope_merges": big["cross_scope_merges"],
        "n": big["n"],
        "detail": big,
        "scaling": {"small": small, "ratio_time": round(big["seconds"] / small["seconds"], 2) if small else None,
                    "ratio_size": round(big["n"] / small["n"], 2) if small else None},
    }
    if args.json:
        print(json.dumps(out))
        return
    print(f"consolidate {big['n']} memories: {big['seconds']} s (index warm-up {big['index_s']} s), {big['files_changed']} files changed")
    print(f"planted duplicates {big['planted_dups']}: recall {big['dup_recall']:.3f}, precision {big['dup_precision']:.3f}, cross-scope merges {big['cross_scope_merges']}")
    print(f"summary: {big['summary']}")
    if small:
        print(f"scaling {small['n']} → {big['n']} memories ({out['scaling']['ratio_size']}×): time {small['seconds']} s → {big['seconds']} s ({out['scaling']['ratio_time']}×)")


if __name__ == "__main__":
    main()
