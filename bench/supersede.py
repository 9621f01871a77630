#!/usr/bin/env python3
"""Conflicts on write: what the subject-less rule (``memvault.conflicts``) decides on written
pairs, and the cosines that set each embedder's candidate threshold.

Pairs: ``bench/data/supersede.json`` (changes: one thing, a newer value; look-alikes: two
things that look alike) and ``bench/data/consolidate.json`` (contradictions count as changes,
look-alikes and paraphrases as pairs that must never supersede). For each embedder the
cosine is the one a write sees: the new fact embedded as a query, the old as a document.

Figures per split (``tune``: even positions, where the threshold is read; ``test``: held out):

* ``change_superseded``: changes the write supersedes (word rule and cosine >= threshold);
* ``change_disputed``: changes recorded as a dispute instead;
* ``false_supersede``: look-alikes or paraphrases where one would replace the other;
* ``false_dispute``: look-alikes or paraphrases disputed;
* ``threshold``: the lowest cosine of a tune-half change, less ``--margin`` (0.05).

    python bench/supersede.py --json
    python bench/supersede.py --embedder all-MiniLM-L6-v2 --embedder multilingual-e5-small
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from memvault.conflicts import judge  # noqa: E402


def pairs() -> list[dict[str, Any]]:
    """(old, new, kind, split): kind change|lookalike|paraphrase."""
    out: list[dict[str, Any]] = []
    own = json.loads((ROOT / "bench/data/supersede.json").read_text(encoding="utf-8"))
    for x in own["changes"]:
        out.append({"old": x["old"], "new": x["new"], "kind": "change", "split": x["split"]})
    for x in own["lookalikes"]:
        out.append({"old": x["a"], "new": x["b"], "kind": "lookalike", "split": x["split"]})
    shared = json.loads((ROOT / "bench/data/consolidate.json").read_text(encoding="utf-8"))
    for key, kind in (
        ("contradictions", "change"),
        ("lookalikes", "lookalike"),
        ("paraphrases", "paraphrase"),
    ):
        for x in shared[key]:
            if x.get("type", "semantic") == "semantic":
                out.append({"old": x["a"], "new": x["b"], "kind": kind, "split": x["split"]})
    return out


def cosines(name: str, items: list[dict[str, Any]]) -> list[float]:
    import numpy as np

    from memvault.embeddings import get_embedder

    embedder = get_embedder(name)
    docs = embedder.embed_documents([x["old"] for x in items])
    out = []
    for x, doc in zip(items, docs, strict=True):
        query = embedder.embed_query(x["new"])
        out.append(float(np.dot(query, doc)))
    return out


def figures(items: list[dict[str, Any]], cos: list[float], threshold: float) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for split in ("tune", "test", "all"):
        chosen = [(x, c) for x, c in zip(items, cos, strict=True) if split in ("all", x["split"])]
        changes = [(x, c) for x, c in chosen if x["kind"] == "change"]
        others = [(x, c) for x, c in chosen if x["kind"] != "change"]

        def act(x: dict[str, Any], c: float) -> str | None:
            if c < threshold:
                return None
            verdict = x["verdict"]
            return verdict[0] if verdict else None

        report[split] = {
            "changes": len(changes),
            "change_superseded": _share(changes, act, "supersede"),
            "change_disputed": _share(changes, act, "dispute"),
            "others": len(others),
            "false_supersede": _share(others, act, "supersede"),
            "false_dispute": _share(others, act, "dispute"),
        }
    return report


def _share(rows: list[tuple[dict[str, Any], float]], act: Any, action: str) -> float:
    return round(sum(act(x, c) == action for x, c in rows) / max(1, len(rows)), 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", action="append", help="embedder name (repeatable)")
    parser.add_argument("--margin", type=float, default=0.05)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--misses", action="store_true", help="print each wrong decision")
    args = parser.parse_args()
    items = pairs()
    for x in items:
        x["verdict"] = judge(x["new"], x["old"])
    out: dict[str, Any] = {"pairs": len(items), "embedders": {}}
    # the word rule alone (every pair compared, as if the cosine let all through)
    out["words_only"] = figures(items, [1.0] * len(items), 0.0)
    for name in args.embedder or ["all-MiniLM-L6-v2", "multilingual-e5-small"]:
        cos = cosines(name, items)
        tune_changes = [
            c
            for x, c in zip(items, cos, strict=True)
            if x["kind"] == "change" and x["split"] == "tune"
        ]
        threshold = round(min(tune_changes) - args.margin, 2)
        looks = [c for x, c in zip(items, cos, strict=True) if x["kind"] != "change"]
        out["embedders"][name] = {
            "threshold": threshold,
            "change_cosine_min_tune": round(min(tune_changes), 3),
            "change_cosine_median": round(sorted(tune_changes)[len(tune_changes) // 2], 3),
            "other_cosine_median": round(sorted(looks)[len(looks) // 2], 3),
            **figures(items, cos, threshold),
        }
        if args.misses:
            for x, c in zip(items, cos, strict=True):
                v = x["verdict"][0] if x["verdict"] and c >= threshold else None
                if (x["kind"] == "change") != (v == "supersede"):
                    print(
                        f"{name} {x['kind']} {v} {c:.2f}: {x['old']} -> {x['new']}", file=sys.stderr
                    )
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for name, rep in out["embedders"].items():
            print(name, json.dumps(rep))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
