"""Write the README's figures table from the bench runs recorded in docs/figures/.

    python tools/figures.py                  # rewrite the table in README.md
    python tools/figures.py --check          # exit 1 when README.md's table is not current
    python tools/figures.py --record consolidate out.json --exit-code 1
                                             # keep a bench's --json output, then rewrite

Every figure the README quotes comes from a file here: ``docs/figures/<bench>.json`` holds
one bench run's ``--json`` output as printed (``result``), with the command that printed
it, its exit code, the commit it ran on and the day. A figure that is not in such a file is
not in the README (docs/ has the rest, with the commands that reproduce them). CI runs
``--check``, so an edit by hand to the table, or a recorded run without the table rewritten,
fails the lint step.
"""

from __future__ import annotations

import argparse
import datetime as dt
import difflib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FIGURES = ROOT / "docs" / "figures"
BEGIN = (
    "<!-- figures: begin (written by tools/figures.py from docs/figures/*.json; do not edit) -->"
)
END = "<!-- figures: end -->"
# The command each recorded run comes from (what ``--record`` writes beside its output).
COMMANDS = {
    "locomo": "python bench/locomo.py --data locomo10.json --json",
    "consolidate": "python bench/consolidate.py --json",
    "consolidate_public": "python bench/consolidate_public.py --data SICK.txt --json",
    "scale": "python bench/scale.py --sizes 1000,10000 --json",
    "agent_hooks": "python bench/agent_hooks.py --json",
}
Row = tuple[str, str, str, str]  # figure, value, what it measures, target


def load(name: str) -> dict[str, Any]:
    path = FIGURES / f"{name}.json"
    if not path.exists():
        raise SystemExit(f"{path.relative_to(ROOT)}: missing; record a run: {COMMANDS[name]}")
    return json.loads(path.read_text(encoding="utf-8"))


def get(data: dict[str, Any], path: str) -> Any:
    value: Any = data
    for key in path.split("."):
        value = value[key]
    return value


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def locomo_rows(rec: dict[str, Any]) -> list[Row]:
    r = rec["result"]

    def both(path: str, fmt: Callable[[Any], str] = pct) -> str:
        return f"{fmt(get(r, path))} (held-out {fmt(get(r['heldout'], path))})"

    bm25 = r["baselines"]["bm25_dated"]
    questions = f"{r['turn']['n']:,}"
    return [
        ("LoCoMo turn R@5, %", both("turn.overall.R@5"),
         f"share of each question's evidence turns among the first 5 turns `recall` returns "
         f"({r['embedder'].split(':')[1]}); {questions} questions (categories 1-4) over "
         f"{len(r['conversations'])} conversations; weights chosen on conversations 1-5 only, "
         "6-10 held out", "none (a measurement)"),
        ("LoCoMo session R@5, %", both("session.overall.R@5"),
         f"best turn over {RECALL_LIMIT} hits: `recall` asked for {RECALL_LIMIT} turns, "
         "sessions ranked by their best-ranked turn; the share of each question's evidence "
         "sessions among the first 5 sessions", "none"),
        ("LoCoMo sessions the first 5 hits reach, %", both("session.overall.R@5_hits"),
         "share of each question's evidence sessions that the first 5 turns themselves come "
         "from: what a reader of five hits sees", "none"),
        ("LoCoMo BM25 baseline, turn / session R@5, %",
         f"{pct(bm25['turn']['overall']['R@5'])} / {pct(bm25['session']['overall']['R@5'])}",
         "the same run, the same turns: SQLite FTS5 over `[date] speaker: text` with "
         "memvault's tokenizer, session R@5 as above", "none"),
    ]  # fmt: skip


RECALL_LIMIT = 50  # bench/locomo.py's RESULTS: turns asked of recall per question


def verdict(op: str, limit: float, where: str, missed: list[str]) -> str:
    """``≥ 0.9 for all: met``, or what of it the run missed."""
    said = (
        "met" if not missed else "**missed**" + (f" ({', '.join(missed)})" if any(missed) else "")
    )
    return f"{'≥' if op == '>=' else '≤'} {limit:g}{where}: {said}"


def target(
    rec: dict[str, Any], key: str, where: str = "", parts: dict[str, str] | None = None
) -> str:
    """The run's own target for ``key`` and, among ``key`` and ``parts``, what it missed."""
    r = rec["result"]
    op, limit = r["targets"][key]
    names = {key: "all" if parts else "", **(parts or {})}
    missed = [n for path, n in names.items() if any(m.startswith(f"{path} ") for m in r["missed"])]
    return verdict(op, limit, where, missed)


def consolidate_rows(rec: dict[str, Any]) -> list[Row]:
    r = rec["result"]
    split = r["by_split"]
    rows: list[Row] = []
    para, contra, held = r["planted"]["para"], r["planted"]["contra"], split["test"]["paraphrases"]
    about = {
        "dup_recall": f"share of the planted paraphrase pairs merged ({para}, {held} held out)",
        "dup_precision": "share of the merges that are planted paraphrases (filler included)",
        "dispute_recall": f"share of the planted contradictions disputed ({contra})",
        "dispute_precision": "share of the disputes that are planted contradictions",
    }
    for key, what in about.items():
        parts = {f"by_split.{s}.{key}": n for s, n in (("tune", "tune"), ("test", "held-out"))}
        parts |= {f"by_language.{g}.{key}": g for g in sorted(r["by_language"])}
        value = (
            f"{ratio(r[key])} (tune {ratio(split['tune'][key])}, "
            f"held-out {ratio(split['test'][key])})"
        )
        goal = target(rec, key, " for all, each half and each language", parts)
        rows.append((f"consolidation `{key}`", value, what, goal))
    model = r["embedder"].split(":")[1]
    rows.append(
        (
            "consolidation time, s",
            f"{r['seconds']:.0f} (CPU {r['cpu_seconds']:.0f}, load {r['load_avg_1m']:.1f})",
            f"`reindex` then `consolidate` of {r['n']:,} memories with {model}",
            target(rec, "seconds", " on a quiet machine"),
        )
    )
    return rows


def consolidate_public_rows(rec: dict[str, Any]) -> list[Row]:
    r = rec["result"]
    test, tune = r["splits"]["test"], r["splits"]["tune"]
    (cut, cosine), *_ = test["baseline"].items()

    def pr(part: dict[str, Any]) -> str:
        return f"{ratio(part['precision'])} / {ratio(part['recall'])}"

    where = (
        f"`reindex` + `consolidate` of SICK TEST's {test['sentences']:,} sentences as facts "
        f"({test['pairs']:,} pairs)"
    )
    return [
        (
            "consolidation on SICK, merge precision / recall",
            f"{pr(test['merge'])} (tune {pr(tune['merge'])})",
            f"{where}: a pair merged against the {test['duplicates']} pairs entailed both "
            f"ways; the cosine alone ({cut}) {pr(cosine)}",
            "none (a public measurement: our own set's ≥ 0.98 precision does not hold here)",
        ),
        (
            "consolidation on SICK, dispute precision / recall",
            f"{pr(test['dispute'])} (tune {pr(tune['dispute'])})",
            f"{where}: a pair disputed against the {test['contradictions']} CONTRADICTION pairs",
            "none (a public measurement)",
        ),
    ]


def scale_rows(rec: dict[str, Any]) -> list[Row]:
    r = rec["result"]
    size = max(r["sizes"], key=int)
    s = r["sizes"][size]
    load = s.get("load", {})
    at = f"at {int(size):,} memories (load {load.get('before', 0):.1f}-{load.get('after', 0):.1f})"
    hundred = " (set at 100,000)" if size != "100000" else ""
    answered = min(f.get("recall_hits_min", 0) for f in r["sizes"].values())
    answers = (
        f"every recall answered (at least {answered} hits)"
        if answered
        else "**a recall answered nothing**"
    )

    def goal(key: str) -> str:
        op, limit = r["targets"]["at_largest"][key]
        missed = [""] if any(m.startswith(f"{key} ") for m in r["missed"]) else []
        return verdict(op, limit, hundred, missed)

    warm_ms = 1000 * s["recall_warm_s"]
    return [
        (
            "import, memories/s",
            f"{s['import_per_s']:,.0f}",
            f"`memvault import` of a JSONL file, {at}",
            goal("import_per_s"),
        ),
        (
            "add / bare git commit",
            f"{s['add_vs_git']:.2f} ({s['add_s']:.2f} s / {s['git_s']:.2f} s)",
            f"`memvault add` (answered by the vault's resident process once the first command "
            f"has started it: docs/resident.md) against `git add && git commit` of one file, {at}",
            goal("add_vs_git"),
        ),
        (
            "recall in a new process, s",
            f"{s['recall_cold_s']:.2f} (warm {warm_ms:.0f} ms)",
            f"`memvault recall --json` in a new process, median (answered by the vault's "
            f"resident process once one runs); warm: in one process after a first question, "
            f"{at}; {answers}",
            goal("recall_cold_s"),
        ),
        (
            "doctor, s",
            f"{s['doctor_s']:.2f}",
            f"`memvault doctor --json`, exit 0, {at}",
            goal("doctor_s"),
        ),
        (
            "consolidate, s",
            f"{s['consolidate_s']:.1f}",
            f"`memvault consolidate --json` (apply), {at}",
            goal("consolidate_s"),
        ),
        ("peak RSS, MB", f"{s['peak_rss_mb']:.0f}", f"the largest of any command, {at}", "none"),
    ]


def agent_hooks_rows(rec: dict[str, Any]) -> list[Row]:
    r = rec["result"]
    load = f"load {r['load_avg_before'][0]:.1f}-{r['load_avg_after'][0]:.1f} on {r['cores']} cores"
    at = f"{r['memories']:,} memories, {r['rounds']} rounds, {load}"
    inproc = f"in-process recall p50/p95 {r['inprocess_recall_p50_ms']:.0f}/"
    inproc += f"{r['inprocess_recall_p95_ms']:.0f} ms in the same run"

    def goal(key: str) -> str:
        t = r["targets"][key]
        return verdict("<=", t["target_ms"], "", [] if t["met"] else [""])

    return [
        (
            "prompt hook p50 / p95, ms",
            f"{r['prompt_hook_p50_ms']:.0f} / {r['prompt_hook_p95_ms']:.0f}"
            f" ({r['prompt_hook_p50_vs_inprocess']:.1f}x / {r['prompt_hook_p95_vs_inprocess']:.1f}x"
            " in-process)",
            f"`memvault -q context --hook` as Claude Code runs it (a new process, JSON on stdin), "
            f"{at}; {inproc}",
            goal("prompt_hook_p95_ms"),
        ),
        (
            "recall in a new process, p50 ms",
            f"{r['cli_recall_cold_p50_ms']:.0f} ({r['cli_recall_cold_p50_vs_inprocess']:.1f}x"
            " in-process)",
            f"`memvault recall --json`, answered by the vault's resident process, {at}",
            goal("cli_recall_cold_p50_ms"),
        ),
    ]


SECTIONS: dict[str, Callable[[dict[str, Any]], list[Row]]] = {
    "locomo": locomo_rows,
    "consolidate": consolidate_rows,
    "consolidate_public": consolidate_public_rows,
    "scale": scale_rows,
    "agent_hooks": agent_hooks_rows,
}


def render() -> str:
    """The block between the markers: the table, then where each group comes from."""
    lines = [BEGIN, "", "| figure | value | what it measures | target |", "|---|---|---|---|"]
    sources = []
    for name, rows in SECTIONS.items():
        rec = load(name)
        lines += [f"| {' | '.join(row)} |" for row in rows(rec)]
        status = "exit 0" if rec["exit_code"] == 0 else f"exit {rec['exit_code']}"
        sources.append(
            f"- {name}: `{rec['command']}` on commit {rec['commit']}, {rec['recorded']} "
            f"({status}; `docs/figures/{name}.json`)"
        )
    return "\n".join([*lines, "", *sources, "", END])


def rewritten(text: str) -> str:
    start, stop = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + render() + text[stop:]


def record(name: str, output: Path, exit_code: int, commit: str | None) -> None:
    result = json.loads(output.read_text(encoding="utf-8"))
    if commit is None:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    rec = {
        "command": COMMANDS[name],
        "exit_code": exit_code,
        "commit": commit,
        "recorded": dt.date.today().isoformat(),
        "result": result,
    }
    FIGURES.mkdir(parents=True, exist_ok=True)
    (FIGURES / f"{name}.json").write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if README.md is not current")
    parser.add_argument("--record", nargs=2, metavar=("BENCH", "JSON"), help="keep a run first")
    parser.add_argument("--exit-code", type=int, default=0, help="the recorded run's exit code")
    parser.add_argument("--commit", help="the commit the run was on (default: HEAD)")
    args = parser.parse_args(argv)
    if args.record:
        name, output = args.record
        if name not in COMMANDS:
            parser.error(f"BENCH: expected one of {', '.join(COMMANDS)}, got {name!r}")
        record(name, Path(output), args.exit_code, args.commit)
    text = README.read_text(encoding="utf-8")
    new = rewritten(text)
    if args.check:
        if new == text:
            return 0
        diff = difflib.unified_diff(
            text.splitlines(), new.splitlines(), "README.md", "tools/figures.py", lineterm=""
        )
        print("\n".join(diff))
        fix = "README.md's figures are not what docs/figures/*.json say: run tools/figures.py"
        print(fix, file=sys.stderr)
        return 1
    if new != text:
        README.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
