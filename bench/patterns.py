#!/usr/bin/env python3
"""Pattern bench: recurrences told in other words, against other problems and filler.

One vault, one owner (team ``core``), holds every episode promotion must tell apart:

* the recurrences of ``bench/data/patterns.json`` (16, told three times in other words;
  en, pt, ru, uk) and ``bench/data/consolidate.json`` (8): each must be one proposal
  citing all its episodes and no other planted problem;
* the groups of other problems of ``patterns.json`` (12: three problems of one component,
  or next to a recurrence): each episode is a problem of its own, never joined to another;
* 4 recurring problem families of the lifecycle bench (``bench/lifecycle_world.py``, one
  service each, three tellings) and 24 routine lifecycle episodes;
* ``--filler`` filler episodes (``bench/filler.py``, default 1,500).

Planted problems are failures (``outcome: failure``), routine episodes successes. The index
is built with the vault's default embedder (all-MiniLM-L6-v2) by ``Vault.reindex``; then the
promote step is planned as ``memvault consolidate --dry-run --only promote`` plans it, once
per rule, in this process and on this index:

* ``main``: a pair links on the cosine alone (``consolidate.promote_similarity``, 0.75),
  the rule before reworded links: ``promote_reworded`` 0.75, ``promote_foreign_overlap`` 0;
* ``foreign``: ``main`` with a quarter of the words shared outside English (0.25);
* ``reworded``: ``main`` with the 0.70-0.75 band linking on two shared content words;
* ``both``; and ``default``: the vault's own settings (what ``consolidate`` runs).

For each rule and each half (``tune``: the series the thresholds were chosen on; ``test``:
held out; ``life``: the lifecycle families): ``recall`` (series proposed whole, with no
other planted problem), ``false`` (proposals joining two or more planted problems) of
``proposals`` (those touching the half), ``false_rate``; and ``filler_only`` (proposals of
filler episodes alone: a filler template retold, not a planted problem).

The run exits 1 when the default rule falls below ``main`` on the held-out half (lower
recall, higher false-pattern rate) or proposes more filler-only patterns than ``main``.
``--inject-fault loose-links`` runs the default rule with every pair at cosine 0.55 sharing
one word linked, to show the gate notices.

    python bench/patterns.py --json
    python bench/patterns.py --filler 300 --inject-fault loose-links   # exits 1
"""

from __future__ import annotations

import argparse
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
sys.path.append(str(HERE))  # after site-packages: bench/mcp.py is no SDK
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

PATTERNS = HERE / "data" / "patterns.json"
CONSOLIDATE = HERE / "data" / "consolidate.json"
NOW = dt.datetime(2026, 12, 15, tzinfo=dt.UTC)
OWNER = {"scope": "team", "team": "core"}
SPLITS = ("tune", "test", "life")
# The rules compared, as settings of the promote step (None: the vault's default).
RULES: dict[str, dict[str, float] | None] = {
    "main": {"promote_reworded": 0.75, "promote_foreign_overlap": 0.0},
    "foreign": {"promote_reworded": 0.75, "promote_foreign_overlap": 0.25},
    "reworded": {"promote_reworded": 0.7, "promote_foreign_overlap": 0.0},
    "both": {"promote_reworded": 0.7, "promote_foreign_overlap": 0.25},
    "default": None,
}
FAULTS = ("loose-links",)


def stamp(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


class Planted:
    """The bench vault's files and, per episode id, its problem, half and kind."""

    def __init__(self, vault: Any) -> None:
        from memvault.store.files import render_new

        self.vault, self.render = vault, render_new
        self.writes: dict[str, str] = {}
        self.texts: set[str] = set()
        self.problem: dict[str, str] = {}  # id -> planted problem (filler: none)
        self.split: dict[str, str] = {}  # id -> tune|test|life (filler: none)
        self.series: dict[str, list[str]] = {}  # recurrence -> its episode ids
        self.series_split: dict[str, str] = {}

    def add(self, mid: str, text: str, day: str, tags: list[str], **extra: Any) -> str:
        when = dt.datetime.fromisoformat(day).replace(hour=10, tzinfo=dt.UTC)
        meta = {
            "id": mid,
            "type": "episodic",
            "category": "session",
            **OWNER,
            "created": stamp(when),
            "importance": 3,
            "decay": "never",
            "tags": tags,
            **extra,
        }
        self.writes[self.vault.core.path_for(meta)] = self.render(meta, text)
        self.texts.add(text)
        return mid

    def recurrence(self, name: str, split: str, texts: list[tuple[str, str]], tags: list[str]):
        ids = []
        for k, (day, text) in enumerate(texts):
            mid = self.add(f"{name}-{k}", text, day, tags, outcome="failure")
            self.problem[mid], self.split[mid] = name, split
            ids.append(mid)
        self.series[name], self.series_split[name] = ids, split

    def other(self, mid: str, split: str, text: str, day: str, tags: list[str], outcome: str):
        self.add(mid, text, day, tags, outcome=outcome)
        self.problem[mid], self.split[mid] = mid, split


def _day(rng: random.Random) -> str:
    return f"2026-{rng.randrange(1, 12):02d}-{rng.randrange(1, 28):02d}"


def build(root: Path, filler: int, seed: int) -> tuple[Any, Planted]:
    """Write the bench vault (one commit)."""
    import lifecycle_world as world
    from filler import fillers

    from memvault import Vault

    rng = random.Random(seed)
    vault = Vault.init(root)
    p = Planted(vault)
    cons = json.loads(CONSOLIDATE.read_text(encoding="utf-8"))["recurrences"]
    pats = json.loads(PATTERNS.read_text(encoding="utf-8"))
    for origin, series in (("cons", cons), ("pat", pats["recurrences"])):
        for j, s in enumerate(series):
            texts = [(ep["day"], ep["text"]) for ep in s["episodes"]]
            p.recurrence(f"{origin}-rec-{j:02d}", s["split"], texts, list(s["tags"]))
    for j, s in enumerate(pats["unrelated"]):
        for k, ep in enumerate(s["episodes"]):
            mid = f"pat-other-{j:02d}-{k}"
            p.other(mid, s["split"], ep["text"], ep["day"], s["tags"], "failure")
    for family in sorted(world.RECURRING):
        service = rng.choice(world.SERVICES)
        texts = [world._cap(t.format(s=service)) for t in rng.sample(world.RECURRING[family], 3)]
        p.recurrence(f"life-{family}", "life", [(_day(rng), t) for t in texts], [])
    for k in range(24):
        text = rng.choice(world.ROUTINE).format(
            s=rng.choice(world.SERVICES), p=rng.choice(world.PEOPLE), n=rng.randrange(1, 9),
            m=rng.randrange(0, 20),
        )  # fmt: skip
        p.other(f"life-routine-{k:02d}", "life", text, _day(rng), [], "success")
    for k, f in enumerate(fillers(rng, 0, filler, set(p.texts))):
        p.add(f"filler-{k:05d}", f.text, _day(rng), list(f.tags))
    with vault.locked():
        vault.core.commit_files(p.writes, f"bench: {len(p.writes)} episodes")
    return vault, p


def proposed(root: Path, settings: dict[str, float] | None) -> list[list[str]]:
    """The episodes each pattern proposal cites, as ``consolidate --dry-run --only promote``
    plans them under ``settings`` (consolidate.* keys; None: the vault's own)."""
    from memvault import Vault
    from memvault.consolidate import consolidate
    from memvault.store.files import parse_text

    vault = Vault.open(root)
    for key, value in (settings or {}).items():
        vault.core.config.set(f"consolidate.{key}", value)  # as a MEMVAULT_* override would
    plan, _ = consolidate(vault.core, now=NOW, dry_run=True, only=["promote"])
    out = []
    for rel, text in plan.new_files.items():
        meta = parse_text(text, rel).meta
        if meta.get("type") == "semantic":  # a pattern, not a procedure
            out.append([str(i) for i in meta.get("derived_from") or []])
    return out


def score(p: Planted, proposals: list[list[str]]) -> dict[str, Any]:
    """Recall and false patterns per half, and filler-only proposals."""
    out: dict[str, Any] = {}
    kinds = [{p.problem[i] for i in ids if i in p.problem} for ids in proposals]
    cited = list(zip(proposals, kinds, strict=True))
    for split in SPLITS:
        names = [n for n, s in p.series_split.items() if s == split]
        found = [n for n in names if any(set(p.series[n]) <= set(i) and k == {n} for i, k in cited)]
        touching = [k for i, k in cited if any(p.split.get(m) == split for m in i)]
        false = [k for k in touching if len(k) >= 2]
        out[split] = {
            "recall": round(len(found) / len(names), 4) if names else None,
            "found": len(found),
            "series": len(names),
            "false": len(false),
            "proposals": len(touching),
            "false_rate": round(len(false) / len(touching), 4) if touching else 0.0,
            "missed": sorted(set(names) - set(found)),
        }
    out["filler_only"] = sum(1 for k in kinds if not k)
    out["proposals"] = len(proposals)
    return out


def gate(rules: dict[str, dict[str, Any]]) -> list[str]:
    """Where the default rule falls below main's on the held-out half or on filler."""
    base, new = rules["main"], rules["default"]
    missed = []
    if new["test"]["recall"] < base["test"]["recall"]:
        missed.append(f"held-out recall {new['test']['recall']} < main's {base['test']['recall']}")
    if new["test"]["false_rate"] > base["test"]["false_rate"]:
        missed.append(
            f"held-out false-pattern rate {new['test']['false_rate']} > main's "
            f"{base['test']['false_rate']}"
        )
    if new["filler_only"] > base["filler_only"]:
        missed.append(f"filler-only patterns {new['filler_only']} > main's {base['filler_only']}")
    return missed


def run(filler: int, seed: int, fault: str | None) -> dict[str, Any]:
    from memvault import Vault
    from memvault.consolidate import promote

    with tempfile.TemporaryDirectory(prefix="mv-bench-pat-") as tmp:
        root = Path(tmp) / "v"
        vault, planted = build(root, filler, seed)
        t = time.perf_counter()
        Vault.open(root).reindex()  # what `memvault reindex` runs
        index_s = time.perf_counter() - t
        rules: dict[str, dict[str, Any]] = {}
        seconds: dict[str, float] = {}
        for name, settings in RULES.items():
            if name == "default" and fault == "loose-links":
                settings = {"promote_reworded": 0.55}
                promote.REWORDED_SHARED, shared = 1, promote.REWORDED_SHARED
            t = time.perf_counter()
            rules[name] = score(planted, proposed(root, settings))
            seconds[name] = round(time.perf_counter() - t, 2)
            if name == "default" and fault == "loose-links":
                promote.REWORDED_SHARED = shared
    return {
        "episodes": len(planted.writes),
        "filler": filler,
        "seed": seed,
        "fault": fault,
        "index_seconds": round(index_s, 2),
        "promote_seconds": seconds,
        "rules": rules,
    }


def report(out: dict[str, Any]) -> str:
    lines = [f"patterns: {out['episodes']} episodes ({out['filler']} filler), seed {out['seed']}"]
    head = f"  {'rule':10s}" + "".join(f"{s + ' recall':>14s}{s + ' false':>14s}" for s in SPLITS)
    lines.append(head + f"{'filler-only':>13s}")
    for name, r in out["rules"].items():
        cells = "".join(
            f"{r[s]['found']:>8d}/{r[s]['series']:<5d}{r[s]['false']:>8d} of {r[s]['proposals']:<3d}"  # noqa: E501
            for s in SPLITS
        )
        lines.append(f"  {name:10s}{cells}{r['filler_only']:>13d}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--filler", type=int, default=1500, help="filler episodes")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--inject-fault", choices=FAULTS, default=None, help="break on purpose")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    os.environ.pop("MEMVAULT_EMBEDDER", None)
    out = run(args.filler, args.seed, args.inject_fault)
    missed = gate(out["rules"])
    out["ok"], out["missed"] = not missed, missed
    print(json.dumps(out, ensure_ascii=False) if args.json else report(out))
    for line in missed:
        print(f"MISSED: {line}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
