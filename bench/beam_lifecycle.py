"""What the conversation bench reports for the memory's lifecycle: does recall abstain when a
conversation holds no answer, and does the newer of two values rank above the older one.

:func:`figures` reads the per-question *probes* ``conversations.run_conversation`` records:
``answerable`` (the question has evidence), ``top`` (the first hit's score, None when recall
returned nothing), ``nothing_relevant`` (recall's flag, None while recall has none),
``hit5`` (an evidence turn in the first five hits), ``older`` / ``newer`` (the rank of the
first turn of the replaced value and of the value that replaced it, None when not in the
50 hits) and ``split``.

Abstention: while search has no relevance floor, recall never returns nothing; what a floor
would do is read from the top scores. Candidate floors are the deciles of the tune split's
unanswerable questions' top scores; for each, the share of unanswerable questions it would
silence ("abstains"), of answerable ones ("silenced") and of answerable ones whose evidence
was in the first five hits ("hits lost"), on tune and held-out. The floor with the best
abstains - silenced on tune is named, and its held-out figures are the honest ones.
``auc`` is the chance that an unanswerable question's top score is below an answerable
one's (0.5: the scores don't tell them apart).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

SPLITS = ("all", "tune", "heldout")
QUANTILES = (10, 25, 50, 75, 90)


def _pick(probes: Sequence[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    return [p for p in probes if split == "all" or p["split"] == split]


def _share(part: int, whole: int) -> float | None:
    return round(100 * part / whole, 1) if whole else None


def quantiles(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    ordered = sorted(values)
    at = {q: min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))) for q in QUANTILES}
    return {f"p{q}": round(ordered[i], 3) for q, i in at.items()}


def auc(low: Sequence[float], high: Sequence[float]) -> float | None:
    """P(a value of ``low`` < a value of ``high``), ties counting half."""
    if not low or not high:
        return None
    wins = sum((a < b) + 0.5 * (a == b) for a in low for b in high)
    return round(wins / (len(low) * len(high)), 3)


def _top(probes: Sequence[dict[str, Any]]) -> list[float]:
    # no hit at all is the lowest score there is
    return [p["top"] if p["top"] is not None else float("-inf") for p in probes]


def floor_effect(probes: Sequence[dict[str, Any]], floor: float) -> dict[str, float | None]:
    unanswerable = [p for p in probes if not p["answerable"]]
    answerable = [p for p in probes if p["answerable"]]
    found = [p for p in answerable if p["hit5"]]

    def below(ps: Sequence[dict[str, Any]]) -> int:
        return sum(t < floor for t in _top(ps))

    return {
        "abstains": _share(below(unanswerable), len(unanswerable)),
        "silenced": _share(below(answerable), len(answerable)),
        "hits_lost": _share(below(found), len(found)),
    }


def abstention(probes: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    if all(p["answerable"] for p in probes):
        return None
    out: dict[str, Any] = {"n": {}, "empty": {}, "nothing_relevant": {}, "top_score": {}}
    for split in SPLITS:
        part = _pick(probes, split)
        no = [p for p in part if not p["answerable"]]
        yes = [p for p in part if p["answerable"]]
        out["n"][split] = {"unanswerable": len(no), "answerable": len(yes)}
        out["empty"][split] = _share(sum(p["top"] is None for p in no), len(no))
        flagged = [p for p in part if p["nothing_relevant"] is not None]
        out["nothing_relevant"][split] = (
            {
                "unanswerable": _share(sum(bool(p["nothing_relevant"]) for p in no), len(no)),
                "answerable": _share(sum(bool(p["nothing_relevant"]) for p in yes), len(yes)),
            }
            if flagged
            else None
        )
        tops_no = [p["top"] for p in no if p["top"] is not None]
        tops_yes = [p["top"] for p in yes if p["top"] is not None]
        out["top_score"][split] = {
            "unanswerable": quantiles(tops_no),
            "answerable": quantiles(tops_yes),
            "auc": auc(tops_no, tops_yes),
        }
    tune = _pick(probes, "tune")
    grid = quantiles([p["top"] for p in tune if not p["answerable"] and p["top"] is not None])
    floors = sorted(set((grid or {}).values()))
    out["floors"] = [
        {"floor": f, **{split: floor_effect(_pick(probes, split), f) for split in SPLITS}}
        for f in floors
    ]
    if out["floors"]:
        best = max(
            out["floors"],
            key=lambda row: (row["tune"]["abstains"] or 0) - (row["tune"]["silenced"] or 0),
        )
        out["best_on_tune"] = best["floor"]
    return out


def knowledge_update(probes: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    updates = [p for p in probes if p["update"]]
    if not updates:
        return None
    out: dict[str, Any] = {}
    inf = float("inf")
    for split in SPLITS:
        part = _pick(updates, split)
        newer = [p["newer"] or inf for p in part]
        older = [p["older"] or inf for p in part]
        pairs = list(zip(newer, older, strict=True))
        ranks = [r for r in newer if r != inf]
        out[split] = {
            "n": len(part),
            "newer_above_older": _share(sum(n < o for n, o in pairs), len(part)),
            "older_above_newer": _share(sum(o < n for n, o in pairs), len(part)),
            "neither_found": _share(sum(n == o == inf for n, o in pairs), len(part)),
            "newer_in_5": _share(sum(n <= 5 for n in newer), len(part)),
            "older_in_5": _share(sum(o <= 5 for o in older), len(part)),
            "newer_rank_median": statistics.median(ranks) if ranks else None,
        }
    return out


def figures(probes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {"abstention": abstention(probes), "knowledge_update": knowledge_update(probes)}


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def table(result: dict[str, Any]) -> list[str]:
    """The lifecycle figures as text lines (nothing when the set has no such questions)."""
    lines: list[str] = []
    ab = result.get("abstention")
    if ab:
        n = ab["n"]["all"]
        lines.append(
            f"abstention: {n['unanswerable']} unanswerable questions, "
            f"{n['answerable']} answerable; recall returned nothing for "
            f"{_cell(ab['empty']['all'])} % of the unanswerable"
        )
        for split in SPLITS:
            flag = ab["nothing_relevant"][split]
            if flag:
                lines.append(
                    f"  nothing_relevant ({split}): unanswerable {_cell(flag['unanswerable'])} %,"
                    f" answerable {_cell(flag['answerable'])} %"
                )
        lines.append("  top score          p10    p25    p50    p75    p90   (auc)")
        for split in SPLITS:
            scores = ab["top_score"][split]
            for kind in ("unanswerable", "answerable"):
                q = scores[kind] or {}
                cells = " ".join(f"{_cell(q.get(f'p{k}')):>6s}" for k in QUANTILES)
                tail = f"  ({_cell(scores['auc'])})" if kind == "unanswerable" else ""
                lines.append(f"  {split:7s} {kind:12s} {cells}{tail}")
        lines.append("  a floor at       abstains / silenced / hits lost, tune | held-out (%)")
        for row in ab["floors"]:
            t, h = row["tune"], row["heldout"]
            mark = "  <- best on tune" if row["floor"] == ab.get("best_on_tune") else ""
            lines.append(
                f"  {row['floor']:>8.3f}        {_cell(t['abstains'])} / {_cell(t['silenced'])}"
                f" / {_cell(t['hits_lost'])} | {_cell(h['abstains'])} / "
                f"{_cell(h['silenced'])} / {_cell(h['hits_lost'])}{mark}"
            )
        lines.append("")
    ku = result.get("knowledge_update")
    if ku:
        lines.append("knowledge update (newer vs older value's turns, first of each in 50 hits)")
        lines.append("  split     n  newer>older  older>newer  neither  newer@5  older@5  rank")
        for split in SPLITS:
            s = ku[split]
            lines.append(
                f"  {split:7s} {s['n']:3d}  {_cell(s['newer_above_older']):>11s}  "
                f"{_cell(s['older_above_newer']):>11s}  {_cell(s['neither_found']):>7s}  "
                f"{_cell(s['newer_in_5']):>7s}  {_cell(s['older_in_5']):>7s}  "
                f"{_cell(s['newer_rank_median']):>4s}"
            )
        lines.append("")
    return lines
