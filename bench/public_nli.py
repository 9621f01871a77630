"""Readers for public entailment sets, as ``bench/validate.py --data FILE`` takes them.

None of these files is in the repository; each comes from its authors (where, and under which
licence: ``docs/validate.md``, "Public sets"). The format is told from the file:

* ``SICK.txt`` (tab-separated, column ``SemEval_set``): English pairs, ENTAILMENT /
  CONTRADICTION / NEUTRAL -> supported / contradicted / unknown. TRAIN and TRIAL are the
  tune split, TEST the test split (SICK's own split).
* ``climate-fever.jsonl``: a claim with its five Wikipedia evidence sentences; SUPPORTS /
  REFUTES / NOT_ENOUGH_INFO -> supported / contradicted / unknown. DISPUTED claims (the
  evidence both supports and refutes) have no right answer among the three: they are counted
  apart (``disputed``), never in the accuracy.
* ``assin2-*.xml`` (ASSIN 2): Portuguese pairs, Entailment / None -> supported / not
  (two-way: "contradicted" and "unknown" both mean "not supported").
* ``terra-*.jsonl`` (TERRa, Russian SuperGLUE): entailment / not_entailment, two-way. A file
  whose name holds ``train`` is the tune split, any other (``val``) the test split.

Sets without a split of their own (Climate-FEVER, ASSIN 2) are split by a fixed hash of the
claim or pair id: :data:`TUNE_SHARE` of them tune, the rest test.
"""

from __future__ import annotations

import csv
import hashlib
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

TUNE_SHARE = 40  # percent of a hash-split set that is tune
NOT = "not"  # the label of a two-way set's "not entailed" pairs


@dataclass(frozen=True)
class Pair:
    """One statement to validate against its own premise(s)."""

    id: str
    premises: tuple[str, ...]
    hypothesis: str
    label: str  # supported | contradicted | unknown | not (two-way) | disputed
    split: str  # tune | test


@dataclass
class PublicSet:
    name: str
    language: str
    ways: int  # 3: supported / contradicted / unknown; 2: supported / not
    files: list[str] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)

    @property
    def labels(self) -> tuple[str, ...]:
        return ("supported", "contradicted", "unknown") if self.ways == 3 else ("supported", NOT)


def hash_split(set_name: str, key: str) -> str:
    """``tune`` or ``test``, fixed by the id (the same on every machine and run)."""
    digest = hashlib.sha256(f"{set_name}:{key}".encode()).hexdigest()
    return "tune" if int(digest[:8], 16) % 100 < TUNE_SHARE else "test"


def kind_of(path: Path) -> str | None:
    """The public set a file holds (sick|climate-fever|assin2|terra), None for our own format."""
    name = path.name.lower()
    with path.open(encoding="utf-8") as f:
        head = f.read(4096)
    if head.startswith("pair_ID\t") and "SemEval_set" in head.splitlines()[0]:
        return "sick"
    if "<entailment-corpus" in head:
        return "assin2"
    first = head.splitlines()[0] if head.strip() else ""
    if first.startswith("{") and '"claim_id"' in first and '"evidences"' in first:
        return "climate-fever"
    if first.startswith("{") and '"premise"' in first and '"hypothesis"' in first:
        return "terra" if "terra" in name or '"label"' in first else None
    return None


SICK_LABELS = {"ENTAILMENT": "supported", "CONTRADICTION": "contradicted", "NEUTRAL": "unknown"}
CLIMATE_LABELS = {
    "SUPPORTS": "supported",
    "REFUTES": "contradicted",
    "NOT_ENOUGH_INFO": "unknown",
    "DISPUTED": "disputed",
}


def read_sick(path: Path) -> list[Pair]:
    out = []
    with path.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE):
            split = "test" if row["SemEval_set"].strip() == "TEST" else "tune"
            label = SICK_LABELS[row["entailment_label"].strip()]
            out.append(
                Pair(
                    f"sick-{row['pair_ID']}", (row["sentence_A"],), row["sentence_B"], label, split
                )
            )
    return out


def read_climate_fever(path: Path) -> list[Pair]:
    out = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            evidence = tuple(e["evidence"] for e in r["evidences"] if e.get("evidence"))
            cid = str(r["claim_id"])
            out.append(
                Pair(
                    f"cf-{cid}",
                    evidence,
                    r["claim"],
                    CLIMATE_LABELS[r["claim_label"]],
                    hash_split("climate-fever", cid),
                )
            )
    return out


def read_assin2(path: Path) -> list[Pair]:
    out = []
    for pair in ET.parse(path).getroot().iter("pair"):
        pid = pair.get("id", "")
        label = "supported" if pair.get("entailment") == "Entailment" else NOT
        t, h = pair.findtext("t") or "", pair.findtext("h") or ""
        out.append(Pair(f"assin2-{pid}", (t.strip(),), h.strip(), label, hash_split("assin2", pid)))
    return out


def read_terra(path: Path) -> list[Pair]:
    split = "tune" if "train" in path.name.lower() else "test"
    part = "train" if split == "tune" else path.stem.lower().rsplit("-", 1)[-1]
    out = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            r = json.loads(line)
            label = "supported" if r["label"] == "entailment" else NOT
            out.append(
                Pair(f"terra-{part}-{r['idx']}", (r["premise"],), r["hypothesis"], label, split)
            )
    return out


SETS = {
    # name: (reader, language of the vault, ways)
    "sick": (read_sick, "en", 3),
    "climate-fever": (read_climate_fever, "en", 3),
    "assin2": (read_assin2, "pt", 2),
    "terra": (read_terra, "ru", 2),
}


def read(paths: list[Path]) -> PublicSet | None:
    """The public set the files hold (all of one kind), or None if they are in our own format."""
    kinds = {p: kind_of(p) for p in paths}
    found = set(kinds.values())
    if found == {None}:
        return None
    if len(found) > 1:
        named = ", ".join(f"{p.name}: {k or 'own format'}" for p, k in kinds.items())
        raise SystemExit(f"--data files of different kinds ({named}): give one set at a time")
    name = found.pop()
    assert name is not None
    reader, language, ways = SETS[name]
    public = PublicSet(name, language, ways, [str(p) for p in paths])
    seen: set[str] = set()
    for path in paths:
        for pair in reader(path):
            if pair.id in seen:
                raise SystemExit(f"{path}: pair {pair.id} appears twice")
            seen.add(pair.id)
            if pair.premises and pair.hypothesis.strip():
                public.pairs.append(pair)
    return public
