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
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TAGS = [
    "deploy",
    "billing",
    "onboarding",
    "infra",
    "search",
    "mobile",
    "security",
    "hiring",
    "support",
    "data",
]


def vocabulary(rng: random.Random) -> list[str]:
    syllables = [
        "ka",
        "lo",
        "mi",
        "ren",
        "dus",
        "tor",
        "vel",
        "qui",
        "sam",
        "por",
        "nek",
        "zu",
        "bar",
        "fin",
        "gol",
        "hep",
    ]
    words = set()
    while len(words) < 3000:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))))
    common = [
        "the",
        "a",
        "of",
        "to",
        "and",
        "in",
        "is",
        "was",
        "for",
        "on",
        "with",
        "that",
        "by",
        "at",
        "from",
        "we",
        "our",
        "team",
        "service",
        "deploy",
    ]
    return sorted(words) + common


# LoCoMo (github.com/snap-research/locomo, data/locomo10.json), where $LOCOMO_DATA says.
LOCOMO = Path(os.environ.get("LOCOMO_DATA", "locomo10.json"))


def corpus(rng: random.Random, count: int) -> tuple[list[str], list[str], str]:
    """``count`` distinct texts and a vocabulary of real English words.

    Real conversation turns from LoCoMo (``$LOCOMO_DATA``; 12+ words, distinct after
    normalisation), then sentences of random words from the same vocabulary. A small model
    embeds any two such texts well apart (nearest other text at about 0.5-0.75 cosine), so
    what merges is what was planted. Without the data: pseudo-words (with a real model
    these all look alike to it, and precision means little).
    """
    import re

    path = Path(os.environ.get("MEMVAULT_LOCOMO", LOCOMO))
    if not path.exists():
        print(f"note: {path} not found; using pseudo-words", file=sys.stderr)
        vocab = vocabulary(rng)
        return [sentence(rng, vocab) for _ in range(count)], vocab, "pseudo-words"
    turns: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("text"), str) and "speaker" in node:
                turns.append(node["text"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(path.read_text(encoding="utf-8")))
    seen: dict[str, str] = {}
    for t in turns:
        key = " ".join(re.findall(r"\w+", t.lower()))
        if len(t.split()) >= 12 and key not in seen:
            seen[key] = " ".join(t.split())
    texts = sorted(seen.values())
    rng.shuffle(texts)
    vocab = sorted({w for t in turns for w in re.findall(r"[a-z]+", t.lower()) if len(w) > 2})
    texts = texts[:count]
    while len(texts) < count:
        texts.append(sentence(rng, vocab))
    return texts, vocab, f"LoCoMo turns ({min(len(seen), count)}) + random-word sentences"


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


def _stamp(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def build(
    root: Path,
    n: int,
    dup_rate: float,
    contra_rate: float,
    dispute_rate: float,
    seed: int,
    exact_below: int | None,
) -> dict:
    """A vault of ``n`` files: originals, plus planted

    * duplicates (``dup_rate`` of n): a copy of an original, exact or trivially different
      (case, punctuation, one extra word), a day younger; one in ten is put in another
      scope instead (must never merge);
    * subject contradictions (``contra_rate`` of n): a newer fact about the same
      ``subject`` as an original fact (same owner, later ``valid_from``, a few words
      changed): the original must end superseded by it;
    * look-alike contradictions (``dispute_rate`` of n, in pairs): two facts with the same
      sentence but a different number or a negation and no subject: both must be flagged
      ``disputed``, neither merged nor deleted.
    """
    from memvault import Vault
    from memvault.files import render_new

    rng = random.Random(seed)
    vault = Vault.init(root)
    if exact_below is not None:
        vault.set_config("index.exact_below", exact_below, "bench: how neighbours are found")
        vault = Vault.open(root)
    scopes = [
        ("team", None, None),
        ("self", "agent-a", None),
        ("self", "agent-b", None),
        ("global", None, None),
    ]
    t0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    writes: dict[str, str] = {}
    planted: list[tuple[str, str]] = []
    cross_scope_twins: list[tuple[str, str]] = []
    subject_pairs: list[tuple[str, str]] = []  # (older, newer)
    dispute_pairs: list[tuple[str, str]] = []
    n_dups = int(n * dup_rate)
    n_contra = int(n * contra_rate)
    n_dispute = 2 * int(n * dispute_rate / 2)
    base_count = n - n_dups - n_contra - n_dispute
    texts, vocab, source = corpus(rng, base_count + n_dispute // 2)
    originals = []

    def owner(i: int) -> dict:
        scope, agent, team = scopes[i % len(scopes)]
        return {
            k: v for k, v in {"scope": scope, "agent": agent, "team": team}.items() if v is not None
        }

    for i in range(base_count):
        kind = "episodic" if i % 3 else "semantic"
        created = t0 + dt.timedelta(minutes=i)
        meta = {
            "id": f"m{i:06d}",
            "type": kind,
            "category": "session" if kind == "episodic" else "facts",
            **owner(i),
            "created": _stamp(created),
            "importance": 3,
            "decay": "never",
            "tags": [rng.choice(TAGS)],
        }
        originals.append((meta, texts[i]))
    facts = [i for i, (m, _) in enumerate(originals) if m["type"] == "semantic"]
    for j, i in enumerate(rng.sample(facts, min(n_contra, len(facts)))):
        meta, text = originals[i]
        meta["subject"] = f"bench.subject-{j}"
        meta["valid_from"] = meta["created"]
        newer = {**meta, "id": f"c{j:06d}"}
        when = dt.datetime.fromisoformat(meta["created"].replace("Z", "+00:00")) + dt.timedelta(
            days=30
        )
        newer["created"] = newer["valid_from"] = _stamp(when)
        words = text.rstrip(".").split()
        for k in rng.sample(range(len(words)), 3):
            words[k] = rng.choice(vocab)
        writes[vault.path_for(newer)] = render_new(newer, " ".join(words).capitalize() + ".")
        subject_pairs.append((meta["id"], newer["id"]))
    for meta, text in originals:
        writes[vault.path_for(meta)] = render_new(meta, text)
    for j in range(n_dispute // 2):
        i = base_count + j
        base = {
            "type": "semantic",
            "category": "facts",
            **owner(i),
            "importance": 3,
            "decay": "never",
        }
        text = texts[base_count + j].rstrip(".!? ")
        if j % 2:
            pair = (
                f"{text}. The retry limit is {10 + j % 50} attempts.",
                f"{text}. The retry limit is {70 + j % 50} attempts.",
            )
        else:
            pair = (
                f"{text}. The nightly export is enabled.",
                f"{text}. The nightly export is not enabled.",
            )
        ids = (f"p{j:06d}a", f"p{j:06d}b")
        for k, (mid, body) in enumerate(zip(ids, pair, strict=True)):
            meta = {
                "id": mid,
                **base,
                "created": _stamp(t0 + dt.timedelta(days=2, minutes=2 * j + k)),
            }
            writes[vault.path_for(meta)] = render_new(meta, body)
        dispute_pairs.append(ids)
    plain = [o for o in originals if "subject" not in o[0]]  # subject facts have their own rule
    for j in range(n_dups):
        meta, text = rng.choice(plain)
        twin = {k: v for k, v in meta.items() if k not in ("subject", "valid_from")}
        twin["id"] = f"d{j:06d}"
        # A duplicate episode is the same event told again within the hour (one told on
        # another day is a recurrence, which dedup must leave to promotion); a duplicate
        # fact may come any time later.
        later = dt.timedelta(hours=1) if meta["type"] == "episodic" else dt.timedelta(days=1)
        twin["created"] = _stamp(
            dt.datetime.fromisoformat(meta["created"].replace("Z", "+00:00")) + later
        )
        if j % 10 == 0:
            # same text in another scope: must NOT merge
            other = [s for s in scopes if s[0] != meta["scope"] or s[1] != meta.get("agent")][j % 3]
            twin = {k: v for k, v in twin.items() if k not in ("scope", "agent", "team")}
            twin.update(
                {
                    k: v
                    for k, v in zip(("scope", "agent", "team"), other, strict=True)
                    if v is not None
                }
            )
            cross_scope_twins.append((meta["id"], twin["id"]))
        else:
            planted.append((meta["id"], twin["id"]))
        writes[vault.path_for(twin)] = render_new(twin, near_copy(rng, text) if j % 2 else text)
    with vault.locked():
        vault.commit_files(writes, f"bench: {len(writes)} memories")
    return {
        "vault": vault,
        "planted": planted,
        "cross": cross_scope_twins,
        "subjects": subject_pairs,
        "disputes": dispute_pairs,
        "files": len(writes),
        "corpus": source,
    }


def _cpu() -> float:
    """CPU seconds of this process and its finished children (git): unlike wall time, not
    stretched by other work on a shared machine."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _consolidate_timed(root: Path) -> tuple:
    from memvault import Vault
    from memvault.consolidate import consolidate
    from memvault.index import forget_open_index

    vault = Vault.open(root)
    load = os.getloadavg()[0]
    t, c = time.perf_counter(), _cpu()
    result, sha = consolidate(vault, now=dt.datetime(2026, 4, 1, tzinfo=dt.UTC))
    seconds, cpu = time.perf_counter() - t, _cpu() - c
    load = max(load, os.getloadavg()[0])
    forget_open_index(root)
    return result, sha, seconds, cpu, load


def run(
    n: int,
    dup_rate: float,
    contra_rate: float,
    dispute_rate: float,
    seed: int,
    exact_below: int | None,
    repeat: int = 3,
) -> dict:
    from memvault import Vault

    with tempfile.TemporaryDirectory(prefix="mv-bench-cons-") as tmp:
        root = Path(tmp) / "v"
        t = time.perf_counter()
        built = build(root, n, dup_rate, contra_rate, dispute_rate, seed, exact_below)
        build_s = time.perf_counter() - t
        vault = Vault.open(root)
        t = time.perf_counter()
        report = vault.reindex()  # the index warm: consolidation finds neighbours there
        index_s = time.perf_counter() - t
        embedder = json.loads((root / ".memvault/index/manifest.json").read_text()).get("embedder")
        # The same warm vault, copied: each copy is consolidated once (a second run on the
        # same vault has nothing to do) and the median time is reported.
        copies = [root]
        for r in range(1, max(1, repeat)):
            copies.append(Path(tmp) / f"copy{r}")
            shutil.copytree(root, copies[-1], symlinks=True)
        runs = [_consolidate_timed(c) for c in copies]
        result, sha = runs[0][0], runs[0][1]
        seconds = statistics.median(r[2] for r in runs)
        cpu = statistics.median(r[3] for r in runs)
        load = max(r[4] for r in runs)
        changed = subprocess.run(
            ["git", "show", "--name-only", "--format=", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
        ).stdout.split()
        merged = {
            (a.memory_id, a.what.split(" ", 1)[1])
            for a in result.actions
            if a.step == "dedup" and a.what.startswith("merge ")
        }
        by_id = {m.id: m for m in vault.all_memories()}
        planted = set(built["planted"])
        # a planted pair counts as found when the twin was merged into the original
        found = sum(1 for pair in planted if pair in merged)
        correct = sum(1 for pair in merged if pair in planted)

        def owner(mid: str) -> tuple:
            m = by_id[mid]
            return (m.scope, m.agent, m.team)

        cross = sum(
            1
            for keeper, dup in merged
            if keeper in by_id and dup in by_id and owner(keeper) != owner(dup)
        )
        superseded = {
            (a.memory_id, a.what.rsplit(" ", 1)[1])
            for a in result.actions
            if a.step == "supersede" and a.what.startswith("superseded by ")
        }
        subjects = set(built["subjects"])
        disputed = {frozenset(d["ids"]) for d in result.disputed}
        disputes = {frozenset(p) for p in built["disputes"]}
        flagged = {mid for mid, m in by_id.items() if m.status == "disputed"}
        planted_ids = {mid for pair in built["disputes"] for mid in pair}
        touched_subject_pairs = sum(
            1 for a, b in subjects if any(x in {d for _, d in merged} | flagged for x in (a, b))
        )
        return {
            "n": built["files"],
            "embedder": embedder,
            "corpus": built["corpus"],
            "neighbours": result.neighbours,
            "load_avg_1m": round(load, 2),
            "build_s": round(build_s, 2),
            "index_s": round(index_s, 2),
            "index_embedded": report.embedded,
            "seconds": round(seconds, 2),
            "seconds_runs": [round(r[2], 2) for r in runs],
            "cpu_seconds": round(cpu, 2),
            "files_changed": len(changed),
            "planted_dups": len(planted),
            "merges": len(merged),
            "dup_recall": round(found / len(planted), 4) if planted else 1.0,
            "dup_precision": round(correct / len(merged), 4) if merged else 1.0,
            "cross_scope_merges": cross,
            "planted_subject_contradictions": len(subjects),
            "superseded": len(superseded),
            "supersede_recall": round(len(superseded & subjects) / len(subjects), 4)
            if subjects
            else 1.0,
            "supersede_precision": round(len(superseded & subjects) / len(superseded), 4)
            if superseded
            else 1.0,
            "subject_pairs_merged_or_disputed": touched_subject_pairs,
            "planted_disputes": len(disputes),
            "disputed_pairs": len(disputed),
            "dispute_recall": round(len(disputed & disputes) / len(disputes), 4)
            if disputes
            else 1.0,
            "dispute_precision": round(len(disputed & disputes) / len(disputed), 4)
            if disputed
            else 1.0,
            "disputed_flagged": len(flagged),
            "disputed_flagged_outside_planted": len(flagged - planted_ids),
            "disputes_merged": sum(1 for _, d in merged if d in planted_ids),
            "summary": result.summary(),
            "commit": bool(sha),
            "wrong_merges": sorted(merged - planted)[:10],
        }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument(
        "--small", type=int, default=1_000, help="size of the scaling run (0 to skip)"
    )
    parser.add_argument(
        "--dup-rate", type=float, default=0.05, help="planted duplicates, share of n"
    )
    parser.add_argument(
        "--contra-rate",
        type=float,
        default=0.02,
        help="planted newer facts about a subject, share of n",
    )
    parser.add_argument(
        "--dispute-rate",
        type=float,
        default=0.01,
        help="planted look-alike contradictions, share of n",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--embedder",
        default=None,
        help="e.g. fake (default: the vault's default model, all-MiniLM-L6-v2 ONNX)",
    )
    parser.add_argument(
        "--exact-below",
        type=int,
        default=None,
        help=(
            "index.exact_below for the vaults (0: neighbours always from Chroma's HNSW; "
            "default: the vault default, 20,000 chunks)"
        ),
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="consolidate this many copies of each warm vault; report the median",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.embedder:
        os.environ["MEMVAULT_EMBEDDER"] = args.embedder
    rates = (
        args.dup_rate,
        args.contra_rate,
        args.dispute_rate,
        args.seed,
        args.exact_below,
        args.repeat,
    )
    small = run(args.small, *rates) if args.small else None
    big = run(args.n, *rates)
    out = {
        "seconds": big["seconds"],
        "files_changed": big["files_changed"],
        "dup_recall": big["dup_recall"],
        "dup_precision": big["dup_precision"],
        "cross_scope_merges": big["cross_scope_merges"],
        "supersede_recall": big["supersede_recall"],
        "supersede_precision": big["supersede_precision"],
        "dispute_recall": big["dispute_recall"],
        "dispute_precision": big["dispute_precision"],
        "disputed_flagged": big["disputed_flagged"],
        "embedder": big["embedder"],
        "corpus": big["corpus"],
        "neighbour_mode": ",".join(sorted({r["mode"] for r in big["neighbours"]})),
        "n": big["n"],
        "detail": big,
        "cpu_seconds": big["cpu_seconds"],
        "scaling": {
            "small": small,
            "ratio_time": round(big["seconds"] / small["seconds"], 2) if small else None,
            "ratio_cpu": round(big["cpu_seconds"] / small["cpu_seconds"], 2) if small else None,
            "ratio_size": round(big["n"] / small["n"], 2) if small else None,
        },
    }
    if args.json:
        print(json.dumps(out))
        return
    b = big
    print(
        f"consolidate {b['n']} memories ({b['embedder']}, neighbours: {out['neighbour_mode']}): "
        f"{b['seconds']} s (median of {b['seconds_runs']}; CPU {b['cpu_seconds']} s) "
        f"(index warm-up {b['index_s']} s, load {b['load_avg_1m']}), "
        f"{b['files_changed']} files changed"
    )
    print(
        f"planted duplicates {b['planted_dups']}: recall {b['dup_recall']:.3f}, "
        f"precision {b['dup_precision']:.3f}, cross-scope merges {b['cross_scope_merges']}"
    )
    print(
        f"subject contradictions {b['planted_subject_contradictions']}: "
        f"superseded recall {b['supersede_recall']:.3f}, "
        f"precision {b['supersede_precision']:.3f}; "
        f"pairs wrongly merged/disputed {b['subject_pairs_merged_or_disputed']}"
    )
    print(
        f"look-alike contradictions {b['planted_disputes']} pairs: "
        f"disputed recall {b['dispute_recall']:.3f}, precision {b['dispute_precision']:.3f}; "
        f"{b['disputed_flagged']} memories flagged "
        f"({b['disputed_flagged_outside_planted']} outside the planted pairs), "
        f"{b['disputes_merged']} merged"
    )
    print(f"summary: {b['summary']}")
    if small:
        sc = out["scaling"]
        print(
            f"scaling {small['n']} → {b['n']} memories ({sc['ratio_size']}×): "
            f"wall {small['seconds']} s → {b['seconds']} s ({sc['ratio_time']}×), "
            f"CPU {small['cpu_seconds']} s → {b['cpu_seconds']} s ({sc['ratio_cpu']}×)"
        )


if __name__ == "__main__":
    main()
