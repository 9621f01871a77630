"""The gates of bench/consolidate.py and bench/scale.py: a harness fails when what it guards
fails. Fast: the scoring and gating code on planted results, no model, no vault."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    path = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        # the benches put bench/ first on sys.path; its mcp.py, search.py and validate.py
        # would then shadow real modules for every later test in this process
        sys.path[:] = path
    return module


cons = load("consolidate")
scale = load("scale")
lang_bench = load("language")
pat = load("patterns")
cons_public = load("consolidate_public")


# --- bench/consolidate.py ----------------------------------------------------------------


def planted(para_test: int = 10) -> SimpleNamespace:
    """Ten paraphrases and four contradictions per half, one per language each, plus the
    other planted kinds: what ``Builder`` records."""
    expect: dict[str, list[Any]] = {"para": [], "contra": [], "cross": [], "look": []}
    split, lang = {}, {}
    for kind, per_half in (("para", None), ("contra", 4), ("look", 4), ("cross", 2)):
        for half in ("tune", "test"):
            count = per_half or (10 if half == "tune" else para_test)
            for j in range(count):
                ids = (f"{kind}-{half}-{j}-a", f"{kind}-{half}-{j}-b")
                expect[kind].append(ids)
                for i in ids:
                    split[i], lang[i] = half, cons.LANGUAGES[j % 4]
    expect["rec"] = [("rec-0-0", "rec-0-1", "rec-0-2")]
    expect["subject"] = [("subj-a", "subj-b")]
    return SimpleNamespace(expect=expect, split=split, lang=lang)


def outcome(
    b: SimpleNamespace, merge: list[Any], dispute: list[Any], propose: bool = True
) -> dict[str, Any]:
    """``score`` of a consolidation that merged and disputed those pairs."""
    actions = [SimpleNamespace(step="dedup", memory_id=a, what=f"merge {c}") for a, c in merge]
    actions.append(
        SimpleNamespace(step="supersede", memory_id="subj-a", what="superseded by subj-b")
    )
    result = SimpleNamespace(actions=actions, disputed=[{"ids": list(p)} for p in dispute])
    proposals = (
        [SimpleNamespace(meta={"derived_from": list(b.expect["rec"][0])})] if propose else []
    )
    ids = {i for pairs in b.expect.values() for p in pairs for i in p}
    out = cons.score(b, result, proposals, ids)
    out["seconds"] = 30.0
    return out


def test_a_perfect_run_passes_and_every_number_it_prints_has_a_target() -> None:
    b = planted()
    out = outcome(b, b.expect["para"], b.expect["contra"])
    assert cons.check(out) == []
    assert cons.ungated(out) == []
    out["something_new"] = 0.5
    assert cons.ungated(out) == ["something_new"]


def test_nothing_to_count_is_not_perfect() -> None:
    assert cons._ratio(0, 0) is None
    assert cons._ratio(3, 4) == 0.75
    missed = cons.check({"dup_precision": None}, {"dup_precision": (">=", 0.98)})
    assert missed == ["dup_precision n/a: nothing to measure (target >= 0.98)"]
    assert cons.check({}, {"by_split.test.dup_recall": (">=", 0.9)})  # missing: missed


def test_dispute_detection_broken_fails_the_run() -> None:
    b = planted()
    out = outcome(b, b.expect["para"], [])
    missed = cons.check(out)
    for key in ("dispute_recall", "by_split.test.dispute_recall", "by_language.uk.dispute_recall"):
        assert any(line.startswith(f"{key} 0.0 ") for line in missed), missed
    assert any(line.startswith("dispute_precision n/a") for line in missed), missed


def test_held_out_is_gated_apart_from_tune() -> None:
    # 10 + 10 of 10 + 12: 20/22 = 0.909 pooled passes, held-out alone 10/12 = 0.833 does not
    b = planted(para_test=12)
    out = outcome(b, b.expect["para"][:20], b.expect["contra"])
    assert out["dup_recall"] == pytest.approx(0.9091, abs=1e-4)
    assert out["by_split"]["test"]["dup_recall"] == pytest.approx(0.8333, abs=1e-4)
    missed = cons.check(out)
    assert [m for m in missed if "dup_recall" in m and "language" not in m] == [
        "by_split.test.dup_recall 0.8333 (target >= 0.9)"
    ]


@pytest.mark.parametrize(
    ("merge", "dispute", "propose", "key"),
    [
        ("look", "contra", True, "lookalikes_merged"),
        ("cross", "contra", True, "cross_scope_merges"),
        ("contra", "contra", True, "contradictions_merged"),
        ("", "look", True, "lookalike_dispute_rate"),
        ("", "contra", False, "recurrence_proposal_recall"),
    ],
)
def test_each_counter_fails_the_run(merge: str, dispute: str, propose: bool, key: str) -> None:
    b = planted()
    merges = b.expect["para"] + (b.expect[merge] if merge else [])
    disputes = b.expect["contra"] + (b.expect[dispute] if dispute != "contra" else [])
    missed = cons.check(outcome(b, merges, disputes, propose))
    assert any(line.startswith(f"{key} ") for line in missed), missed


# --- bench/scale.py ----------------------------------------------------------------------


def test_a_failing_command_stops_the_run(tmp_path: Path) -> None:
    run = scale.Runner({}, tmp_path)
    with pytest.raises(SystemExit, match="exited 1"):
        run.run("doctor", [sys.executable, "-c", "raise SystemExit(1)"])


def test_an_empty_recall_fails_the_run(tmp_path: Path) -> None:
    run = scale.Runner({}, tmp_path)
    run.mv = [sys.executable, "-c", "print('{\"hits\": []}')"]  # answers every question empty
    hits: list[int] = []
    run.recall(tmp_path, "What pet does Gina have?", hits)
    assert hits == [0]
    figures = {"recall_hits_min": 0, **{k: 1.0 for k in scale.TARGETS}, "import_per_s": 900.0}
    assert scale.verdicts({"sizes": {"1000": figures}}) == [
        "recall_hits_min = 0 at 1000 (target >= 1)"
    ]
    figures["recall_hits_min"] = 3
    assert scale.verdicts({"sizes": {"1000": figures}}) == []
    del figures["doctor_s"]
    assert scale.verdicts({"sizes": {"1000": figures}}) == [
        "doctor_s n/a: not measured (target <= 15.0)"
    ]


# --- bench/agent_hooks.py ----------------------------------------------------------------


def test_agent_hooks_exits_1_when_a_target_is_missed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hooks = load("agent_hooks")
    ran: dict[str, Any] = {}

    def measure(vault: Path, rounds: int, resident: str, data: Path) -> dict[str, Any]:
        ran["resident"] = resident
        hook, cli = ran["figures"]
        targets = {
            "prompt_hook_p95_ms": {"target_ms": 250.0, "met": hook <= 250},
            "cli_recall_cold_p50_ms": {"target_ms": 300.0, "met": cli <= 300},
        }
        return {"prompt_hook_p95_ms": hook, "cli_recall_cold_p50_ms": cli, "targets": targets}

    monkeypatch.setattr(hooks, "measure", measure)
    for figures, code in (((120.0, 60.0), 0), ((251.0, 60.0), 1), ((120.0, 301.0), 1)):
        ran["figures"] = figures
        assert hooks.main(["--vault", str(tmp_path), "--json"]) == code
    assert "missed: cli_recall_cold_p50_ms" in capsys.readouterr().err
    hooks.main(["--vault", str(tmp_path), "--resident", "off", "--json"])
    assert ran["resident"] == "off"


# --- bench/language.py -------------------------------------------------------------------


def detection(accuracy: float, n: int = 100) -> dict[str, Any]:
    fig = {"accuracy": accuracy, "n": n, "taken_for": {}, "misses": []}
    return {
        split: {lang: dict.fromkeys(lang_bench.KINDS, fig) for lang in lang_bench.LANGS}
        for split in lang_bench.SPLITS
    }


def test_language_detection_under_target_or_unmeasured_fails() -> None:
    assert lang_bench.failures(detection(1.0)) == []
    result = detection(1.0)
    result["test"]["uk"] = {**result["test"]["uk"], "short": {"accuracy": 0.97, "n": 90}}
    assert lang_bench.failures(result) == ["test uk short: 0.9700 < 0.98"]
    result["test"]["pt"] = {**result["test"]["pt"], "mixed": {"accuracy": None, "n": 0}}
    assert "test pt mixed: no sentences to measure" in lang_bench.failures(result)
    # tune is where the rules are chosen: it is shown, never gated
    assert lang_bench.failures({**detection(1.0), "tune": detection(0.5)["tune"]}) == []


# --- bench/multilingual.py: the pipeline against its own legs ----------------------------

ml = load("multilingual")


def fig(r5: float, n: int = 10) -> dict[str, Any]:
    return {"R@5": r5, "MRR@10": r5, "n": n}


def test_a_group_where_the_pipeline_trails_a_leg_is_named() -> None:
    def summary(lang_r5: dict[str, float]) -> dict[str, Any]:
        return {"by_lang": {lang: fig(r5) for lang, r5 in lang_r5.items()}}

    systems = {
        name: {"tune": summary({"en": 90.0}), "test": summary({"en": 90.0})} for name in ml.SYSTEMS
    }
    systems["dense_leg"]["test"] = summary({"en": 93.0})
    own = {
        "by_split_group": {
            "heldout": {
                "memvault": {"kind mixed": fig(80.0)},
                "keyword_leg": {"kind mixed": fig(85.0)},
                "dense_leg": {"kind mixed": fig(70.0)},
            }
        }
    }
    rows = ml.gaps({"tasks": {"xquad": {"systems": systems}}, "own": own})
    losing = [
        (r["set"], r["group"], r["split"], r["best_leg"], r["delta"])
        for r in rows
        if r["delta"] < 0
    ]
    assert losing == [
        ("xquad", "lang en", "test", "dense_leg", -3.0),
        ("own", "kind mixed", "heldout", "keyword_leg", -5.0),
    ]
    assert len(rows) == 3  # xquad tune ties: listed, not losing
    assert "2 of 3 groups" in ml.render_gaps(rows)[0]


# --- bench/patterns.py -------------------------------------------------------------------


def pattern_world() -> SimpleNamespace:
    """Two held-out recurrences (a, b) of three episodes, two other held-out problems (x, y),
    filler f1-f3."""
    series = {"a": ["a0", "a1", "a2"], "b": ["b0", "b1", "b2"]}
    problem = {i: n for n, ids in series.items() for i in ids} | {"x": "x", "y": "y"}
    return SimpleNamespace(
        series=series,
        series_split={"a": "test", "b": "test"},
        problem=problem,
        split=dict.fromkeys(problem, "test"),
    )


def test_patterns_score_counts_whole_series_joined_problems_and_filler() -> None:
    world = pattern_world()
    proposals = [
        ["a0", "a1", "a2", "f1"],  # whole, with a filler episode: found
        ["b0", "b1", "x"],  # b partly, joined with another problem: false, not found
        ["f1", "f2", "f3"],  # filler alone
    ]
    test = pat.score(world, proposals)["test"]
    assert (test["found"], test["series"], test["false"], test["proposals"]) == (1, 2, 1, 2)
    assert test["missed"] == ["b"]
    assert pat.score(world, proposals)["filler_only"] == 1


def test_patterns_gate_fails_the_default_below_main_held_out() -> None:
    world = pattern_world()
    main = pat.score(world, [["a0", "a1", "a2"], ["b0", "b1", "b2"]])
    assert pat.gate({"main": main, "default": main}) == []
    lost = pat.score(world, [["a0", "a1", "a2"]])
    joined = pat.score(world, [["a0", "a1", "a2"], ["b0", "b1", "b2"], ["x", "y", "f1"]])
    filler = pat.score(world, [["a0", "a1", "a2"], ["b0", "b1", "b2"], ["f1", "f2", "f3"]])
    assert "held-out recall" in " ".join(pat.gate({"main": main, "default": lost}))
    assert "false-pattern rate" in " ".join(pat.gate({"main": main, "default": joined}))
    assert "filler-only" in " ".join(pat.gate({"main": main, "default": filler}))


# --- bench/consolidate_public.py -----------------------------------------------------------


def _sick_row(ab: str, ba: str, label: str = "NEUTRAL") -> dict[str, str]:
    return {"entailment_AB": ab, "entailment_BA": ba, "entailment_label": label}


def test_sick_duplicates_are_pairs_entailed_both_ways() -> None:
    assert cons_public.label(_sick_row("A_entails_B", "B_entails_A", "ENTAILMENT")) == "dup"
    assert cons_public.label(_sick_row("A_entails_B", "B_neutral_A", "ENTAILMENT")) == "other"
    assert cons_public.label(_sick_row("A_contradicts_B", "B_neutral_A", "CONTRADICTION")) == (
        "contra"
    )


def test_public_consolidation_fails_when_a_split_is_unmeasured() -> None:
    whole = {"pairs": 10, "duplicates": 2, "contradictions": 1, "indexed": 18, "sentences": 18}
    assert cons_public.problems({"splits": {"test": whole}}) == []
    assert cons_public.problems({"splits": {"test": {**whole, "contradictions": 0}}}) == [
        "test: no contradictions"
    ]
    assert cons_public.problems({"splits": {"test": {**whole, "indexed": 17}}}) == [
        "test: 17 of 18 sentences indexed"
    ]


def test_public_consolidation_names_a_file_that_is_not_sick(tmp_path: Path) -> None:
    other = tmp_path / "pairs.tsv"
    other.write_text("a\tb\nx\ty\n", encoding="utf-8")
    with pytest.raises(
        SystemExit, match=r"pairs.tsv: not SICK.txt \(no column SemEval_set, entailment_AB"
    ):
        cons_public.read_pairs(other)
    with pytest.raises(SystemExit, match="no such file"):
        cons_public.read_pairs(tmp_path / "missing.txt")
