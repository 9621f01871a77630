#!/usr/bin/env python3
"""Consolidation on a public set: SICK's sentence pairs, merged and disputed as a vault would.

SICK (Marelli et al., 2014; ``SICK.txt``, where to get it: docs/consolidation.md) labels each
pair of sentences in both directions (``entailment_AB``, ``entailment_BA``). A pair is one
statement said twice -- a duplicate that consolidation should merge -- when each sentence
entails the other; a pair is a contradiction when its ``entailment_label`` is
CONTRADICTION. Everything else (one sentence adds to the other, or they are merely related)
must neither merge nor be disputed.

Each split (TRAIN+TRIAL is ``tune``, TEST is ``test``) becomes one vault: every distinct
sentence one semantic fact, global scope, dated within the last 85 days. The index is
built by ``Vault.reindex`` (``memvault reindex``) with the vault's default embedder, then one
``consolidate`` runs every step, as ``memvault consolidate`` does. A pair counts as merged
when both sentences ended in one merged cluster, and as disputed when consolidation flagged
the two of them. Of the merged pairs where only one sentence entails the other, the bench
counts those where that one -- the sentence saying more -- was archived rather than kept.

Printed beside it, from the same run and the same embedder:

* ``cosine``: merge when the two sentences' cosine reaches the vault's
  ``consolidate.dedup_threshold`` (the dense signal alone, no word rules);
* ``mutual_support`` (a lab figure: pair by pair, not through ``consolidate``): merge when
  validate's rules read each sentence as stating the other.

These are reported, not gated: the run exits 1 only when the set cannot be measured (a
split without pairs, no duplicate or contradiction labelled, no memory indexed).

    python bench/consolidate_public.py --data ~/data/SICK.txt --json
    python bench/consolidate_public.py --data ~/data/SICK.txt --limit 600   # quick
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

NOW = dt.datetime(2026, 12, 15, tzinfo=dt.UTC)
SPLITS = {"tune": ("TRAIN", "TRIAL"), "test": ("TEST",)}


def read_pairs(path: Path) -> list[dict[str, str]]:
    """SICK's rows: sentences, the split and the labels this bench reads."""
    if not path.is_file():
        raise SystemExit(f"--data {path}: no such file (SICK.txt: see docs/consolidation.md)")
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    need = {"sentence_A", "sentence_B", "entailment_label", "entailment_AB", "entailment_BA"}
    need.add("SemEval_set")
    if not rows or not need <= set(rows[0]):
        missing = ", ".join(sorted(need - set(rows[0] if rows else {})))
        raise SystemExit(f"--data {path}: not SICK.txt (no column {missing})")
    return rows


def label(row: dict[str, str]) -> str:
    """``dup`` (each sentence entails the other), ``contra`` or ``other``."""
    if row["entailment_AB"] == "A_entails_B" and row["entailment_BA"] == "B_entails_A":
        return "dup"
    return "contra" if row["entailment_label"].strip() == "CONTRADICTION" else "other"


def build(root: Path, sentences: list[str], seed: int) -> Any:
    """A vault holding each sentence as one global fact (one commit)."""
    from memvault import Vault
    from memvault.store.files import render_new

    rng = random.Random(seed)
    vault = Vault.init(root)
    writes = {}
    for j, text in enumerate(sentences):
        when = NOW - dt.timedelta(minutes=rng.randrange(60, 85 * 24 * 60))
        meta = {
            "id": f"s-{j:05d}",
            "type": "semantic",
            "category": "facts",
            "scope": "global",
            "created": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "importance": 3,
            "decay": "never",
            "tags": ["sick"],
        }
        writes[vault.core.path_for(meta)] = render_new(meta, text)
    with vault.locked():
        vault.core.commit_files(writes, f"bench: {len(writes)} sentences")
    return vault


def ratios(predicted: list[bool], truth: list[bool]) -> dict[str, Any]:
    hits = sum(p and t for p, t in zip(predicted, truth, strict=True))
    said, real = sum(predicted), sum(truth)
    return {
        "recall": round(hits / real, 4) if real else None,
        "precision": round(hits / said, 4) if said else None,
        "predicted": said,
    }


def run_split(name: str, rows: list[dict[str, str]], seed: int) -> dict[str, Any]:
    import numpy as np

    from memvault import Vault
    from memvault.consolidate import consolidate
    from memvault.consolidate.dedup import DEDUP_THRESHOLD, Clusters
    from memvault.index.manifest import embedder_for
    from memvault.validate.align import Aligner
    from memvault.validate.claims import read
    from memvault.validate.weigh import weigh

    sentences = sorted({r[k].strip() for r in rows for k in ("sentence_A", "sentence_B")})
    ids = {text: f"s-{j:05d}" for j, text in enumerate(sentences)}
    with tempfile.TemporaryDirectory(prefix="mv-bench-cons-public-") as tmp:
        root = Path(tmp) / "v"
        build(root, sentences, seed)
        t = time.perf_counter()
        report = Vault.open(root).reindex()
        result, _ = consolidate(Vault.open(root).core, now=NOW)
        seconds = time.perf_counter() - t
        vault = Vault.open(root)
        threshold = float(vault.config.get("consolidate.dedup_threshold", DEDUP_THRESHOLD))
        embedder = embedder_for(vault)
        clusters = Clusters()
        archived: set[str] = set()  # merged into another: the keeper stays in force
        for action in result.actions:
            if action.step == "dedup" and action.what.startswith("merge "):
                clusters.union(action.memory_id, action.what.split(" ", 1)[1])
                archived.add(action.what.split(" ", 1)[1])
        disputed = {frozenset(d["ids"]) for d in result.disputed}
        a = [r["sentence_A"].strip() for r in rows]
        b = [r["sentence_B"].strip() for r in rows]
        va, vb = embedder.embed_documents(a), embedder.embed_documents(b)
        cosine = np.sum(np.asarray(va) * np.asarray(vb), axis=1)
        floor = float(getattr(embedder, "similarity_floor", 0.0))
        aligner = Aligner(embedder)

        def states(x: str, y: str, cos: float) -> bool:
            sim = max(0.0, min(1.0, (cos - floor) / max(1e-6, 1.0 - floor)))
            return weigh(read(x), read(y), None, sim, aligner).kind == "supports"

        merged = [clusters.find(ids[x]) == clusters.find(ids[y]) for x, y in zip(a, b, strict=True)]
        flagged = [frozenset((ids[x], ids[y])) in disputed for x, y in zip(a, b, strict=True)]
        labels = [label(r) for r in rows]
        one_way = [
            m and lab == "other" and "entails" in r["entailment_AB"] + r["entailment_BA"]
            for m, lab, r in zip(merged, labels, rows, strict=True)
        ]
        dup = [lab == "dup" for lab in labels]
        contra = [lab == "contra" for lab in labels]
        mutual = [
            states(x, y, float(c)) and states(y, x, float(c))
            for x, y, c in zip(a, b, cosine, strict=True)
        ]
    return {
        "split": name,
        "pairs": len(rows),
        "sentences": len(sentences),
        "indexed": report.embedded,
        "duplicates": sum(dup),
        "contradictions": sum(contra),
        "seconds": round(seconds, 1),
        "merge": ratios(merged, dup),
        "dispute": ratios(flagged, contra),
        # merged although only one sentence entails the other: the one that says more
        # should stay in force (the other stays in git, archived)
        "merged_one_way": sum(one_way),
        "merged_one_way_kept_less": sum(
            ids[x if r["entailment_AB"] == "A_entails_B" else y] in archived
            for x, y, r, w in zip(a, b, rows, one_way, strict=True)
            if w
        ),
        "baseline": {
            f"cosine>={threshold}": ratios([float(c) >= threshold for c in cosine], dup),
            "mutual_support (lab)": ratios(mutual, dup),
        },
    }


def problems(out: dict[str, Any]) -> list[str]:
    """What makes the run unmeasured: the only failures of a report-only bench."""
    found = []
    for name, part in out["splits"].items():
        for key in ("pairs", "duplicates", "contradictions", "indexed"):
            if not part[key]:
                found.append(f"{name}: no {key}")
        if part["indexed"] and part["indexed"] < part["sentences"]:
            found.append(f"{name}: {part['indexed']} of {part['sentences']} sentences indexed")
    return found


def render(out: dict[str, Any]) -> str:
    lines = [f"consolidation on SICK ({out['data']}), embedder {out['embedder']}"]
    head = f"  {'':38s} {'recall':>8s} {'precision':>10s} {'predicted':>10s}"
    for name, part in out["splits"].items():
        lines.append(
            f"{name}: {part['pairs']} pairs, {part['sentences']} sentences, "
            f"{part['duplicates']} duplicates, {part['contradictions']} contradictions "
            f"({part['seconds']} s)"
        )
        lines.append(head)
        rows = [("consolidate: merged", part["merge"]), ("consolidate: disputed", part["dispute"])]
        rows += [(f"baseline merge: {k}", v) for k, v in part["baseline"].items()]
        for title, r in rows:
            cells = [("n/a" if r[k] is None else str(r[k])) for k in ("recall", "precision")]
            lines.append(f"  {title:38s} {cells[0]:>8s} {cells[1]:>10s} {r['predicted']:>10d}")
        lines.append(
            f"  merged where one sentence says more: {part['merged_one_way']}, the one saying "
            f"more archived in {part['merged_one_way_kept_less']}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, required=True, help="SICK.txt")
    parser.add_argument("--split", choices=sorted(SPLITS), action="append", help="default: both")
    parser.add_argument("--limit", type=int, default=None, help="at most this many pairs a split")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    os.environ.pop("MEMVAULT_EMBEDDER", None)
    rows = read_pairs(args.data)
    out: dict[str, Any] = {"data": args.data.name, "splits": {}}
    for name in args.split or sorted(SPLITS, reverse=True):
        part = [r for r in rows if r["SemEval_set"].strip() in SPLITS[name]]
        if args.limit:
            part = random.Random(args.seed).sample(part, min(args.limit, len(part)))
        out["splits"][name] = run_split(name, part, args.seed)
    from memvault.embeddings import DEFAULT_EMBEDDER

    out["embedder"] = DEFAULT_EMBEDDER
    missed = problems(out)
    out["ok"], out["missed"] = not missed, missed
    print(json.dumps(out, ensure_ascii=False) if args.json else render(out))
    for line in missed:
        print(f"MISSED: {line}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
