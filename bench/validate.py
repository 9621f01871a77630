#!/usr/bin/env python3
"""``validate`` benchmark: does a statement agree with, contradict, or find no support in a
vault of team facts?

    python bench/validate.py                          # the set's own languages (en,pt,ru,uk: e5)
    python bench/validate.py --json                   # one JSON object, nothing else on stdout
    python bench/validate.py --languages en           # the English-only setup (MiniLM)
    python bench/validate.py --data other.json --misses   # a set of your own; print each miss
    python bench/validate.py --set validate.judge_command="python my_judge.py"
    python bench/validate.py --data SICK.txt --json   # a public set, our own set beside it
    python bench/validate.py --data terra-train.jsonl --data terra-val.jsonl --json

The data file holds ``{"languages": [...], "facts": [{"id", "text", "lang", "category",
"subject"?, "valid_from"?}], "statements": [{"id", "text", "lang", "label":
"supported|contradicted|unknown", "evidence": [fact ids], "traps": [...], "split":
"tune|heldout"}]}``. The default set, ``bench/data/validate_set.json``, is 57 team facts
(superseded pairs, numbers with units, dates, choices, freezes; 13 of them in pt/ru/uk) and
144 statements, 48 per label, 38 in pt/ru/uk, every trap of issue 15 represented. 40 % of
each label's statements are ``heldout``: rules were tuned on ``tune`` only.

The vault is made as a user makes one: ``Vault.init(languages=...)`` (as ``memvault init
--language`` does: it picks the embedder), each fact written in order with ``vault.add(
"semantic", text, id=..., category=..., subject=..., valid_from=...)`` -- so a later fact on
the same ``subject`` supersedes the earlier one, by the normal write path -- then
``vault.reindex()``. Every statement goes through ``vault.validate(text, log=False)``, the
function ``memvault validate`` and the MCP tool call.

Reported for all, tune and heldout statements:

* ``accuracy``: share of statements whose verdict is the label;
* ``per_label``: accuracy among the statements of each label;
* ``false_supported_rate``: share of the contradicted or unknown statements called
  "supported" (the lie the issue is about);
* ``per_language``: accuracy by the statement's language;
* ``evidence_hit_rate``: among supported/contradicted statements, the share answered with
  the right verdict *and* a deciding fact (``result.evidence_id``) among the labelled ones;
* ``per_trap``: accuracy by trap tag; ``confusion``: label -> verdict -> count.

**Public sets** (``bench/public_nli.py`` reads them: SICK, Climate-FEVER, ASSIN 2, TERRa;
where to get each: ``docs/validate.md``). Each pair's premise (Climate-FEVER: a claim's five
evidence sentences) must be the only fact the statement can be judged against. One vault per
pair is the plain way, and ~0.5 s of ``init`` and ``add`` per pair. Instead, one vault holds
every premise of the run, imported in one commit as ``memvault import`` does, each a fact
tagged with its pair's id; each statement goes through ``vault.validate(text, tags=[pair
id])`` -- ``memvault validate --tag``, the user's call with the user's filter. That is the
same judgement as a vault of that premise alone: the tag filter is SQL inside both search
legs, so no other fact can be a candidate, and what the rules weigh (the fact's words and
slots, its cosine to the statement) does not depend on the rest of the vault; only BM25's
idf does, and validate does not weigh it (a check of 52 pairs, one vault each against the
shared vault, gave the same 52 verdicts). The vault's languages are the set's (SICK and
Climate-FEVER ``en``: MiniLM; ASSIN 2 ``pt``, TERRa ``ru``: e5), as ``init --language``
picks. A premise that import refuses (it looks like a credential) leaves its pair out
(``left_out``).

Splits: SICK's own (TRAIN and TRIAL tune, TEST test); TERRa's train file tune, val test;
Climate-FEVER and ASSIN 2 by a fixed hash of the claim or pair id (40 % tune). ``--tune-sample
N`` / ``--test-sample N`` draw at most N pairs of a split with ``--seed`` (the figures say n).
Reported per split: accuracy (ASSIN 2 and TERRa two-way: "supported" against the rest),
balanced accuracy (mean recall of the labels), false-supported rate, the precision of
"supported", recall per label, confusion (label -> verdict), and the majority-class baseline
(the tune split's commonest label said of every pair); Climate-FEVER's DISPUTED claims are
counted apart. Our own set (``bench/data/validate_set.json``) runs in the same process
unless ``--no-own``.

The exit code is 1 if any statement raised (its figures still print), 2 if the run could
not start.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DEFAULT_DATA = ROOT / "bench" / "data" / "validate_set.json"
LABELS = ("supported", "contradicted", "unknown")
SPLITS = ("all", "tune", "heldout")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- data ----------------------------------------------------------------------------------


def load_data(path: Path) -> dict[str, Any]:
    """The data file, checked; exits with every problem found if it is malformed."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{path}: cannot read the data file: {exc}") from None
    facts = data.get("facts") if isinstance(data, dict) else None
    statements = data.get("statements") if isinstance(data, dict) else None
    if not isinstance(facts, list) or not isinstance(statements, list):
        raise SystemExit(f"{path}: expected an object with 'facts' and 'statements' lists")
    problems: list[str] = []
    ids: set[str] = set()
    for i, f in enumerate(facts):
        if not isinstance(f, dict) or not all(isinstance(f.get(k), str) for k in ("id", "text")):
            problems.append(f"facts[{i}]: needs string 'id' and 'text'")
            continue
        if f["id"] in ids:
            problems.append(f"facts[{i}]: duplicate id {f['id']!r}")
        ids.add(f["id"])
    seen: set[str] = set()
    for i, s in enumerate(statements):
        if not isinstance(s, dict) or not isinstance(s.get("text"), str) or not s["text"].strip():
            problems.append(f"statements[{i}]: needs a non-empty string 'text'")
            continue
        s.setdefault("id", f"s{i}")
        if s["id"] in seen:
            problems.append(f"statements[{i}]: duplicate id {s['id']!r}")
        seen.add(s["id"])
        if s.get("label") not in LABELS:
            problems.append(f"statements[{i}] ({s['id']}): label must be one of {LABELS}")
        if unknown := [e for e in s.get("evidence", []) if e not in ids]:
            problems.append(f"statements[{i}] ({s['id']}): unknown fact ids {unknown}")
        if s.get("split") not in (None, "tune", "heldout"):
            problems.append(f"statements[{i}] ({s['id']}): split must be tune or heldout")
    if problems:
        shown = "\n  ".join(problems[:20])
        raise SystemExit(f"{path}: {len(problems)} problem(s):\n  {shown}")
    return dict(data)


# --- the run -------------------------------------------------------------------------------


def build_vault(root: Path, data: dict[str, Any], args: argparse.Namespace) -> Any:
    """A vault holding the set's facts, written through the normal write API, indexed."""
    from memvault import Vault

    languages = args.languages.split(",") if args.languages else data.get("languages") or ["en"]
    vault = Vault.init(root, languages=languages)
    if args.embedder:
        vault.set_config("embedder", args.embedder, "bench: embedder")
    for key, value in args.set:
        vault.set_config(key, value, f"bench: {key}")
    vault = Vault.open(root)
    for fact in data["facts"]:
        fields = {k: fact[k] for k in ("category", "subject", "valid_from") if fact.get(k)}
        vault.add("semantic", fact["text"], id=fact["id"], tags=[fact.get("lang", "en")], **fields)
    vault.reindex()
    return vault


def run_statements(vault: Any, statements: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per statement: the verdict, the deciding fact, whether the judge was used."""
    rows: list[dict[str, Any]] = []
    for n, s in enumerate(statements, 1):
        started = time.perf_counter()
        row = {k: s.get(k) for k in ("id", "lang", "label", "split", "text")}
        row["traps"] = s.get("traps", [])
        row["expected_evidence"] = s.get("evidence", [])
        try:
            result = vault.validate(s["text"], log=False)
        except Exception as exc:  # one bad statement must not hide the others' figures
            row.update(verdict="error", error=f"{type(exc).__name__}: {exc}")
        else:
            row.update(
                verdict=result.verdict,
                why=result.why,
                evidence_id=result.evidence_id,
                judge=(result.judge or {}).get("status"),
            )
        row["ms"] = round((time.perf_counter() - started) * 1000, 1)
        rows.append(row)
        if n % 20 == 0:
            log(f"  {n}/{len(statements)} statements")
    return rows


def ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy and the rest (see the module doc) over ``rows``."""
    right = [r for r in rows if r["verdict"] == r["label"]]
    not_true = [r for r in rows if r["label"] != "supported"]
    decided = [r for r in rows if r["label"] != "unknown"]
    hits = [
        r
        for r in decided
        if r["verdict"] == r["label"] and r.get("evidence_id") in r["expected_evidence"]
    ]

    def acc(group: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "accuracy": ratio(sum(r["verdict"] == r["label"] for r in group), len(group)),
            "n": len(group),
        }

    by_lang: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_trap: dict[str, list[dict[str, Any]]] = defaultdict(list)
    confusion: dict[str, Counter[str]] = {label: Counter() for label in LABELS}
    for r in rows:
        by_lang[r["lang"] or "?"].append(r)
        for trap in r["traps"]:
            by_trap[trap].append(r)
        confusion[r["label"]][r["verdict"]] += 1
    return {
        "n": len(rows),
        "accuracy": ratio(len(right), len(rows)),
        "per_label": {label: acc([r for r in rows if r["label"] == label]) for label in LABELS},
        "false_supported_rate": ratio(
            sum(r["verdict"] == "supported" for r in not_true), len(not_true)
        ),
        "per_language": {lang: acc(group) for lang, group in sorted(by_lang.items())},
        "evidence_hit_rate": ratio(len(hits), len(decided)),
        "per_trap": {trap: acc(group) for trap, group in sorted(by_trap.items())},
        "confusion": {label: dict(c) for label, c in confusion.items()},
        "errors": sum(r["verdict"] == "error" for r in rows),
        "judge_fallbacks": sum(r.get("judge") == "failed" for r in rows),
    }


def run_own(args: argparse.Namespace, path: Path) -> tuple[dict[str, Any], int]:
    """Our own set (the module doc's format): its figures and the exit code."""
    data = load_data(path)
    statements = data["statements"]
    workdir = Path(args.workdir) if args.workdir else None
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mv-validate-", dir=workdir) as tmp:
        root = Path(tmp) / "vault"
        started = time.perf_counter()
        log(f"building a vault of {len(data['facts'])} facts ...")
        vault = build_vault(root, data, args)
        build_s = time.perf_counter() - started
        vault.validate("warm up", log=False)  # load the embedder outside the timed loop
        log(f"validating {len(statements)} statements ...")
        started = time.perf_counter()
        rows = run_statements(vault, statements)
        seconds = time.perf_counter() - started
        embedder = str(vault.config.get("embedder"))
        if args.keep:
            kept = Path(args.keep)
            import shutil

            shutil.copytree(root, kept, dirs_exist_ok=True)
            log(f"vault kept in {kept}")
    result: dict[str, Any] = {
        "data": str(path),
        "embedder": embedder,
        "facts": len(data["facts"]),
        "build_seconds": round(build_s, 1),
        "ms_per_statement": round(1000 * seconds / max(1, len(rows)), 1),
    }
    for split in SPLITS:
        chosen = rows if split == "all" else [r for r in rows if r.get("split") == split]
        result[split] = figures(chosen)
    result["misses"] = [
        {
            k: r.get(k)
            for k in ("id", "split", "lang", "label", "verdict", "evidence_id", "why", "error")
        }
        for r in rows
        if r["verdict"] != r["label"]
    ]
    errors = result["all"]["errors"]
    return result, 1 if errors else 0


# --- public sets ---------------------------------------------------------------------------


def sample_pairs(pairs: list[Any], sizes: dict[str, int], seed: int) -> list[Any]:
    """At most ``sizes[split]`` pairs of each split, drawn with a fixed seed (0: all)."""
    import random

    out: list[Any] = []
    for split in ("tune", "test"):
        size = sizes.get(split, 0)
        group = sorted((p for p in pairs if p.split == split), key=lambda p: p.id)
        if size and len(group) > size:
            group = sorted(random.Random(f"{seed}:{split}").sample(group, size), key=lambda p: p.id)
        out += group
    return out


def build_public_vault(root: Path, public: Any, pairs: list[Any], args: argparse.Namespace) -> Any:
    """One vault holding every pair's premise(s), each a fact tagged with its pair's id,
    imported in one commit as ``memvault import`` does; returns (vault, pairs kept)."""
    from memvault import Vault

    languages = args.languages.split(",") if args.languages else [public.language]
    vault = Vault.init(root, languages=languages)
    if args.embedder:
        vault.set_config("embedder", args.embedder, "bench: embedder")
    for key, value in args.set:
        vault.set_config(key, value, f"bench: {key}")
    vault = Vault.open(root)
    source = root.parent / "premises.jsonl"
    with source.open("w", encoding="utf-8") as f:
        for pair in pairs:
            for i, premise in enumerate(pair.premises):
                record = {"type": "semantic", "id": f"{pair.id}-{i}", "tags": [pair.id]}
                f.write(json.dumps({**record, "content": premise}, ensure_ascii=False) + "\n")
    # A premise that looks like a credential is refused, as for a user: its pair is left out.
    report = vault.import_file(source, "jsonl", skip_bad=True)
    imported = set(report.ids)
    kept = [p for p in pairs if all(f"{p.id}-{i}" in imported for i in range(len(p.premises)))]
    vault.reindex()
    return vault, kept


def validate_pairs(vault: Any, pairs: list[Any]) -> list[dict[str, Any]]:
    """Each pair's hypothesis through ``vault.validate``, filtered to its own premise(s)."""
    rows: list[dict[str, Any]] = []
    for n, pair in enumerate(pairs, 1):
        row: dict[str, Any] = {"id": pair.id, "label": pair.label, "split": pair.split}
        try:
            result = vault.validate(pair.hypothesis, tags=[pair.id], log=False)
        except Exception as exc:  # one bad pair must not hide the others' figures
            row.update(verdict="error", error=f"{type(exc).__name__}: {exc}")
        else:
            row.update(verdict=result.verdict, why=result.why)
        rows.append(row)
        if n % 200 == 0:
            log(f"  {n}/{len(pairs)} pairs")
    return rows


def public_figures(rows: list[dict[str, Any]], labels: tuple[str, ...], majority: str) -> Any:
    """Accuracy (two-way sets: supported vs not), balanced accuracy (the mean of the labels'
    recalls), false-supported rate, per-label recall, confusion (label -> verdict as given),
    and the majority-class baseline (the tune split's commonest label, said of every pair)."""
    from public_nli import NOT

    def said(verdict: str) -> str:
        return verdict if len(labels) == 3 or verdict == "supported" else NOT

    scored = [r for r in rows if r["label"] in labels]
    confusion = {label: Counter[str]() for label in labels}
    for r in scored:
        confusion[r["label"]][r["verdict"]] += 1
    per_label = {
        label: {
            "recall": ratio(sum(said(r["verdict"]) == label for r in group), len(group)),
            "n": len(group),
        }
        for label in labels
        for group in [[r for r in scored if r["label"] == label]]
    }
    recalls = [v["recall"] for v in per_label.values() if v["recall"] is not None]
    not_true = [r for r in scored if r["label"] != "supported"]
    called = [r for r in scored if r["verdict"] == "supported"]
    out: dict[str, Any] = {
        "n": len(scored),
        "accuracy": ratio(sum(said(r["verdict"]) == r["label"] for r in scored), len(scored)),
        "balanced_accuracy": round(sum(recalls) / len(recalls), 4) if recalls else None,
        "false_supported_rate": ratio(
            sum(r["verdict"] == "supported" for r in not_true), len(not_true)
        ),
        "supported_precision": ratio(sum(r["label"] == "supported" for r in called), len(called)),
        "per_label": per_label,
        "confusion": {label: dict(c) for label, c in confusion.items()},
        "majority_baseline": {
            "label": majority,
            "accuracy": ratio(sum(r["label"] == majority for r in scored), len(scored)),
            "balanced_accuracy": round(1 / len(labels), 4),
        },
        "errors": sum(r["verdict"] == "error" for r in rows),
    }
    if others := [r for r in rows if r["label"] not in labels]:  # Climate-FEVER's DISPUTED
        out["disputed"] = {
            "n": len(others),
            "verdicts": dict(Counter(r["verdict"] for r in others)),
        }
    return out


def run_public(args: argparse.Namespace, public: Any) -> tuple[dict[str, Any], int]:
    """A public set: one vault of all the premises, each hypothesis validated against its own."""
    sizes = {"tune": args.tune_sample, "test": args.test_sample}
    pairs = sample_pairs(public.pairs, sizes, args.seed)
    workdir = Path(args.workdir) if args.workdir else None
    if workdir is not None:
        workdir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mv-validate-", dir=workdir) as tmp:
        started = time.perf_counter()
        premises = sum(len(p.premises) for p in pairs)
        log(f"{public.name}: importing {premises} premises of {len(pairs)} pairs ...")
        vault, kept = build_public_vault(Path(tmp) / "vault", public, pairs, args)
        build_s = time.perf_counter() - started
        vault.validate("warm up", log=False)
        log(f"validating {len(kept)} statements ...")
        started = time.perf_counter()
        rows = validate_pairs(vault, kept)
        seconds = time.perf_counter() - started
        embedder = str(vault.config.get("embedder"))
    tune_labels = Counter(
        p.label for p in public.pairs if p.split == "tune" and p.label in public.labels
    )
    majority = tune_labels.most_common(1)[0][0] if tune_labels else public.labels[-1]
    result: dict[str, Any] = {
        "set": public.name,
        "data": public.files,
        "ways": public.ways,
        "embedder": embedder,
        "pairs_in_set": {s: sum(p.split == s for p in public.pairs) for s in ("tune", "test")},
        "sample": {
            "tune": args.tune_sample or None,
            "test": args.test_sample or None,
            "seed": args.seed,
        },
        "left_out": len(pairs) - len(kept),
        "build_seconds": round(build_s, 1),
        "ms_per_statement": round(1000 * seconds / max(1, len(rows)), 1),
    }
    for split in ("tune", "test"):
        result[split] = public_figures(
            [r for r in rows if r["split"] == split], public.labels, majority
        )
    result["misses"] = [
        {k: r.get(k) for k in ("id", "split", "label", "verdict", "why", "error")}
        for r in rows
        if r["label"] in public.labels and r["verdict"] != r["label"]
    ]
    errors = sum(r["verdict"] == "error" for r in rows)
    return result, 1 if errors else 0


def run(args: argparse.Namespace) -> tuple[dict[str, Any], int]:
    """Our own set alone, or a public set and, in the same run, our own set beside it."""
    sys.path.append(str(ROOT / "bench"))  # after site-packages: bench/mcp.py is no SDK
    from public_nli import read

    paths = [Path(p) for p in args.data or [str(DEFAULT_DATA)]]
    for path in paths:
        if not path.is_file():
            raise SystemExit(f"{path}: no such file")
    public = read(paths)
    if public is None:
        if len(paths) > 1:
            raise SystemExit("give one file of our own format at a time")
        return run_own(args, paths[0])
    result, code = run_public(args, public)
    if not args.no_own:
        own_args = argparse.Namespace(**{**vars(args), "languages": None})
        log(f"our own set ({DEFAULT_DATA.name}) ...")
        own, own_code = run_own(own_args, DEFAULT_DATA)
        result["own"] = {k: own[k] for k in ("data", "embedder", "all", "tune", "heldout")}
        code = code or own_code
    return result, code


def render(result: dict[str, Any], misses: bool) -> str:
    head = f"embedder {result['embedder']}, {result['facts']} facts"
    lines = [f"{head}, {result['ms_per_statement']} ms/statement"]
    for split in SPLITS:
        f = result[split]
        labels = ", ".join(f"{k} {v['accuracy']}" for k, v in f["per_label"].items())
        langs = ", ".join(f"{k} {v['accuracy']} (n={v['n']})" for k, v in f["per_language"].items())
        lines += [
            f"{split:8s} n={f['n']:3d}  accuracy {f['accuracy']}  false_supported_rate "
            f"{f['false_supported_rate']}  evidence_hit_rate {f['evidence_hit_rate']}",
            f"         per label: {labels}",
            f"         per language: {langs}",
        ]
    if misses:
        for m in result["misses"]:
            what = f"{m['label']} -> {m['verdict']}: {m['why'] or m['error']}"
            lines.append(f"  MISS {m['id']} [{m['split']}] {what}")
    return "\n".join(lines)


def render_public(result: dict[str, Any], misses: bool) -> str:
    sample = {k: v for k, v in result["sample"].items() if k != "seed" and v}
    drawn = f", sampled {sample} (seed {result['sample']['seed']})" if sample else ""
    lines = [
        f"{result['set']} ({result['ways']}-way), embedder {result['embedder']}, "
        f"{result['ms_per_statement']} ms/statement{drawn}; in the set: {result['pairs_in_set']}"
    ]
    for split in ("tune", "test"):
        f = result[split]
        base = f["majority_baseline"]
        labels = ", ".join(f"{k} {v['recall']} (n={v['n']})" for k, v in f["per_label"].items())
        confusion = "; ".join(
            f"{k} -> " + ", ".join(f"{v} {n}" for v, n in sorted(c.items()))
            for k, c in f["confusion"].items()
        )
        lines += [
            f"{split:5s} n={f['n']:4d}  accuracy {f['accuracy']}  balanced {f['balanced_accuracy']}"
            f"  false_supported_rate {f['false_supported_rate']}  supported precision "
            f"{f['supported_precision']}  | majority ({base['label']}) {base['accuracy']}",
            f"      recall per label: {labels}",
            f"      confusion: {confusion}",
        ]
        if "disputed" in f:
            lines.append(f"      disputed (not scored): {f['disputed']}")
    if "own" in result:
        own = result["own"]
        lines.append(f"our own set ({Path(own['data']).name}, embedder {own['embedder']}):")
        for split in SPLITS:
            f = own[split]
            lines.append(
                f"  {split:8s} n={f['n']:3d}  accuracy {f['accuracy']}  false_supported_rate "
                f"{f['false_supported_rate']}"
            )
    if misses:
        for m in result["misses"]:
            lines.append(
                f"  MISS {m['id']} [{m['split']}] {m['label']} -> {m['verdict']}: {m['why']}"
            )
    return "\n".join(lines)


def setting(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument(
        "--data",
        action="append",
        help="A set of our own format (default: bench/data/validate_set.json), or a public "
        "set's file: SICK.txt, climate-fever.jsonl, assin2-*.xml, terra-*.jsonl (give TERRa's "
        "train and val files as two --data); repeatable.",
    )
    for split in ("tune", "test"):
        ap.add_argument(
            f"--{split}-sample",
            type=int,
            default=0,
            metavar="N",
            help=f"Public sets: at most N pairs of the {split} split, drawn with --seed "
            "(default: all).",
        )
    ap.add_argument("--seed", type=int, default=0, help="Seed of the samples (default: 0).")
    ap.add_argument(
        "--no-own", action="store_true", help="Public sets: leave out our own set's figures."
    )
    ap.add_argument(
        "--languages",
        default=None,
        help="The vault's languages, as 'memvault init --language' takes them; they pick the "
        "embedder (default: the data file's 'languages'; 'en' for the English-only setup).",
    )
    ap.add_argument(
        "--embedder", default=None, help="Embedder for the vault (default: as --languages picks)."
    )
    ap.add_argument(
        "--set",
        metavar="KEY=VALUE",
        type=setting,
        action="append",
        default=[],
        help="Another vault setting (dotted key, JSON or plain value); repeatable.",
    )
    ap.add_argument("--json", action="store_true", help="Print one JSON object, nothing else.")
    ap.add_argument("--misses", action="store_true", help="Also list every wrong verdict.")
    ap.add_argument("--workdir", default=None, help="Make the vault under this directory.")
    ap.add_argument("--keep", default=None, help="Copy the vault here before it is deleted.")
    args = ap.parse_args(argv)
    try:
        result, code = run(args)
    except SystemExit as exc:
        if isinstance(exc.code, str):
            log(f"error: {exc.code}")
            return 2
        raise
    except Exception as exc:  # setup failed: no figures to show
        log(f"error: {type(exc).__name__}: {exc}")
        return 2
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        show = render_public if "set" in result else render
        print(show(result, args.misses))
    if code:
        first = next((m for m in result["misses"] if m.get("error")), None)
        log(f"statement error(s); first: {first}")
    return code


if __name__ == "__main__":
    sys.exit(main())
