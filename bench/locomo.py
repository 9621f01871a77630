"""LoCoMo retrieval benchmark, through memvault's own write and recall paths.

    python bench/locomo.py --data ../shared/bench/locomo10.json
    python bench/locomo.py --data ../shared/bench/locomo10.json --limit-conversations 2 --json

For each conversation a fresh vault is made; every dialog turn becomes an episodic memory
("Speaker: text", plus "[image: caption]" when the turn shared one; ``created`` = the
session's date, one second per turn; ``session`` = the conversation's session) imported
in one commit with :func:`memvault.transfer.import_file`. The index is built by
``vault.reindex()`` with the vault's embedder (default: the offline all-MiniLM-L6-v2).
Every question of categories 1-4 with usable evidence is then asked with
``vault.recall(question, limit=50)``; a hit is a returned memory whose turn id is in the
evidence. Reported, in percent:

* turn level: R@1/5/10 (share of evidence turns in the first k results) and H@5 (any
  evidence turn in the first 5), per category (1 multi-hop, 2 temporal, 3 open-domain,
  4 single-hop) and overall;
* session level: sessions ranked by their best-ranked turn in the same results; R@k =
  share of the evidence sessions among the first k distinct sessions;
* baselines computed in the same run on the same data: plain BM25 (SQLite FTS5, porter,
  every query word) and plain dense (cosine to the same turn vectors memvault stored).

Nothing is cached between runs: vaults live in a temporary folder unless ``--workdir``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

CATEGORIES = (1, 2, 3, 4)
KS = (1, 5, 10)
RESULTS = 50  # results asked per question (session ranking needs more than 10 turns)
_DATE_RE = re.compile(r"(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)
_MONTHS = {
    m: i
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        1,
    )
}


def session_time(text: str) -> dt.datetime:
    """``"1:56 pm on 8 May, 2023"`` -> an aware datetime (noon of 2000-01-01 if unparseable)."""
    m = _DATE_RE.search(text or "")
    if not m:
        return dt.datetime(2000, 1, 1, 12, tzinfo=dt.UTC)
    hour, minute, ampm, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    return dt.datetime(
        int(year), _MONTHS.get(month.lower(), 1), int(day), h, int(minute), tzinfo=dt.UTC
    )


def load(path: Path) -> list[dict[str, Any]]:
    """Conversations as ``{"turns", "questions"}`` (categories 1-4, evidence parsed)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for ci, sample in enumerate(data):
        conv = sample["conversation"]
        numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
        turns = []
        for n in numbers:
            start = session_time(conv.get(f"session_{n}_date_time", ""))
            for j, turn in enumerate(conv[f"session_{n}"]):
                text = str(turn.get("text", ""))
                caption = turn.get("blip_caption")
                if caption:
                    text += f" [image: {caption}]"
                turns.append(
                    {
                        "dia_id": str(turn["dia_id"]),
                        "session": n,
                        "speaker": str(turn["speaker"]),
                        "text": text,
                        "created": start + dt.timedelta(seconds=j),
                    }
                )
        known = {t["dia_id"] for t in turns}
        questions = []
        for qa in sample.get("qa", []):
            if qa.get("category") not in CATEGORIES:
                continue
            evidence = set()
            for item in qa.get(
                "evidence", []
            ):  # tolerate "D8:6; D9:17" and "D30:05"; skip "D10:1a"
                for a, b in re.findall(r"D(\d+):(\d+)(?![\w])", str(item)):
                    key = f"D{int(a)}:{int(b)}"
                    if key in known:
                        evidence.add(key)
            if evidence:
                questions.append(
                    {
                        "q": str(qa["question"]),
                        "cat": int(qa["category"]),
                        "evidence": sorted(evidence),
                    }
                )
        out.append(
            {"name": sample.get("sample_id", f"conv-{ci}"), "turns": turns, "questions": questions}
        )
    return out


def memory_id(i: int, dia_id: str) -> str:
    return f"t{i}-" + re.sub(r"[^a-z0-9]+", "-", dia_id.lower()).strip("-")


def build_vault(
    conv: dict[str, Any], folder: Path, embedder: str | None
) -> tuple[Any, dict[str, str], float, float]:
    """A fresh vault holding the conversation; returns (vault, id -> dia_id, import s, index s)."""
    from memvault import Vault
    from memvault.transfer import import_file

    vault = Vault.init(folder)
    if embedder:
        vault.config.set("embedder", embedder)
    ids: dict[str, str] = {}
    records = []
    for i, turn in enumerate(conv["turns"]):
        mid = memory_id(i, turn["dia_id"])
        ids[mid] = turn["dia_id"]
        records.append(
            {
                "id": mid,
                "type": "episodic",
                "category": "conversation",
                "created": turn["created"].strftime("%Y-%m-%dT%H:%M:%SZ"),
                "session": f"session-{turn['session']}",
                "speaker": turn["speaker"],
                "source": {"dataset": "locomo", "turn": turn["dia_id"]},
                "content": f"{turn['speaker']}: {turn['text']}",
            }
        )
    jsonl = folder.parent / f"{folder.name}.jsonl"
    jsonl.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    started = time.perf_counter()
    report = import_file(vault, jsonl, "jsonl", allow_secrets=True)
    imported = time.perf_counter() - started
    if report.problems or report.added != len(records):
        raise SystemExit(
            f"import of {conv['name']} failed: {report.added}/{len(records)}; {report.problems[:3]}"
        )
    started = time.perf_counter()
    vault.reindex()
    indexed = time.perf_counter() - started
    return vault, ids, imported, indexed


def reuse_vault(
    conv: dict[str, Any], folder: Path, embedder: str | None
) -> tuple[Any, dict[str, str], float, float]:
    """Development shortcut (``--workdir DIR --reuse``): query vaults a previous run built;
    the index is brought up to date by memvault itself (rebuilt if its format changed)."""
    from memvault import Vault

    vault = Vault.open(folder)
    if embedder:
        vault.config.set("embedder", embedder)
    ids = {memory_id(i, t["dia_id"]): t["dia_id"] for i, t in enumerate(conv["turns"])}
    started = time.perf_counter()
    vault.reindex()
    return vault, ids, 0.0, time.perf_counter() - started


# --- metrics -------------------------------------------------------------------------------


def score_ranking(
    ranked: list[str], evidence: list[str], session_of: dict[str, int]
) -> dict[str, float]:
    """Turn R@k, H@5 and session R@k/H@5 of one ranked list of turn ids."""
    ev = set(evidence)
    out = {f"R@{k}": len(ev & set(ranked[:k])) / len(ev) for k in KS}
    out["H@5"] = float(bool(ev & set(ranked[:5])))
    sessions: list[int] = []
    for turn in ranked:
        s = session_of[turn]
        if s not in sessions:
            sessions.append(s)
    ev_sessions = {session_of[e] for e in ev}
    for k in KS:
        out[f"sR@{k}"] = len(ev_sessions & set(sessions[:k])) / len(ev_sessions)
    out["sH@5"] = float(bool(ev_sessions & set(sessions[:5])))
    return out


def summarise(rows: list[tuple[int, dict[str, float]]]) -> dict[str, Any]:
    def mean(items: list[dict[str, float]], key: str) -> float:
        return round(100 * statistics.fmean(r[key] for r in items), 1) if items else 0.0

    allrows = [r for _, r in rows]
    turn = {
        "overall": {k: mean(allrows, k) for k in ("R@1", "R@5", "R@10", "H@5")},
        "by_category": {
            str(c): {
                k: mean([r for cat, r in rows if cat == c], k)
                for k in ("R@1", "R@5", "R@10", "H@5")
            }
            for c in CATEGORIES
        },
        "n": len(allrows),
    }
    session = {
        "overall": {k: mean(allrows, "s" + k) for k in ("R@1", "R@5", "R@10", "H@5")},
        "by_category": {
            str(c): {
                k: mean([r for cat, r in rows if cat == c], "s" + k)
                for k in ("R@1", "R@5", "R@10", "H@5")
            }
            for c in CATEGORIES
        },
    }
    return {"turn": turn, "session": session}


# --- baselines -----------------------------------------------------------------------------


def bm25_ranking(conv: dict[str, Any], vault: Any, ids: dict[str, str]) -> Any:
    """Plain BM25 over each turn's text as memvault indexes it (no neighbours, no stopword list)."""
    from memvault.index.text import date_words

    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61')")
    dia = [t["dia_id"] for t in conv["turns"]]
    db.executemany(
        "INSERT INTO t(rowid, body) VALUES (?, ?)",
        [
            (i + 1, f"[{date_words(t['created'])}] {t['speaker']}: {t['text']}")
            for i, t in enumerate(conv["turns"])
        ],
    )

    def rank(question: str) -> list[str]:
        words = list(dict.fromkeys(w.lower() for w in re.findall(r"\w+", question)))
        if not words:
            return []
        expr = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = db.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?", (expr, RESULTS)
        ).fetchall()
        return [dia[r - 1] for (r,) in rows]

    return rank


def dense_ranking(vault: Any, ids: dict[str, str]) -> Any:
    """Plain cosine between the question and each turn's vector (the ones memvault stored)."""
    import numpy as np

    from memvault.index import store
    from memvault.index.manifest import embedder_for

    conn = store.connect(vault.root, create=False)
    rows = conn.execute(
        "SELECT d.id, c.vec FROM chunks AS c JOIN docs AS d ON d.key = c.doc WHERE c.n = 0"
    ).fetchall()
    conn.close()
    turn_ids = [ids[mid] for mid, _ in rows]
    matrix = np.stack([np.frombuffer(blob, dtype=np.float32) for _, blob in rows])
    embedder = embedder_for(vault)

    def rank(question: str) -> list[str]:
        sims = matrix @ embedder.embed_query(question)
        order = np.argsort(-sims, kind="stable")[:RESULTS]
        return [turn_ids[i] for i in order]

    return rank


# --- main ----------------------------------------------------------------------------------


def resolve_data(path: str) -> Path:
    candidate = Path(path)
    if candidate.exists():
        return candidate
    alt = ROOT / path
    if alt.exists():
        return alt
    raise SystemExit(f"no such file: {path} (looked in the current folder and in {ROOT})")


def run(args: argparse.Namespace) -> dict[str, Any]:
    convs = load(resolve_data(args.data))
    if args.limit_conversations:
        convs = convs[: args.limit_conversations]
    rows: list[tuple[int, dict[str, float]]] = []
    bm25_rows: list[tuple[int, dict[str, float]]] = []
    dense_rows: list[tuple[int, dict[str, float]]] = []
    timing: dict[str, list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="locomo-") as tmp:
        base = Path(args.workdir) if args.workdir else Path(tmp)
        base.mkdir(parents=True, exist_ok=True)
        for ci, conv in enumerate(convs):
            folder = base / f"conv{ci}"
            if args.reuse and (folder / ".memvault").is_dir():
                vault, ids, imported, indexed = reuse_vault(conv, folder, args.embedder)
            else:
                if folder.exists():
                    import shutil

                    shutil.rmtree(folder)
                vault, ids, imported, indexed = build_vault(conv, folder, args.embedder)
            timing["import_s"].append(imported)
            timing["index_s"].append(indexed)
            session_of = {t["dia_id"]: t["session"] for t in conv["turns"]}
            bm25 = bm25_ranking(conv, vault, ids)
            dense = dense_ranking(vault, ids)
            for q in conv["questions"]:
                started = time.perf_counter()
                found = vault.recall(q["q"], limit=RESULTS)
                timing["query_ms"].append((time.perf_counter() - started) * 1000)
                ranked = [ids[h.id] for h in found if h.id in ids]
                rows.append((q["cat"], score_ranking(ranked, q["evidence"], session_of)))
                bm25_rows.append((q["cat"], score_ranking(bm25(q["q"]), q["evidence"], session_of)))
                dense_rows.append(
                    (q["cat"], score_ranking(dense(q["q"]), q["evidence"], session_of))
                )
            if not args.json:
                part = summarise(rows)["turn"]["overall"]
                print(
                    f"conversation {ci + 1}/{len(convs)}: {len(conv['turns'])} turns, "
                    f"{len(conv['questions'])} "
                    f"questions, index {indexed:.1f} s; running turn R@5 {part['R@5']}",
                    file=sys.stderr,
                )
    result = summarise(rows)
    b, d = summarise(bm25_rows), summarise(dense_rows)
    result["baselines"] = {"bm25": b, "dense": d}
    result["embedder"] = args.embedder or "vault default (all-MiniLM-L6-v2, ONNX)"
    result["conversations"] = len(convs)
    result["timing"] = {
        "import_s": round(sum(timing["import_s"]), 1),
        "index_s": round(sum(timing["index_s"]), 1),
        "query_p50_ms": round(statistics.median(timing["query_ms"]), 1)
        if timing["query_ms"]
        else None,
    }
    return result


def table(result: dict[str, Any]) -> str:
    lines = []
    head = f"{'':26s} {'R@1':>6s} {'R@5':>6s} {'R@10':>6s} {'H@5':>6s}"

    def row(name: str, m: dict[str, float]) -> str:
        return f"{name:26s} {m['R@1']:6.1f} {m['R@5']:6.1f} {m['R@10']:6.1f} {m['H@5']:6.1f}"

    names = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}
    lines.append(
        f"LoCoMo, categories 1-4: {result['turn']['n']} questions, "
        f"{result['conversations']} conversations"
    )
    lines.append(f"embedder: {result['embedder']}")
    lines.append("")
    lines.append("memvault recall, turn level")
    lines.append(head)
    for c, m in result["turn"]["by_category"].items():
        lines.append(row(f"  cat {c} {names[c]}", m))
    lines.append(row("  overall", result["turn"]["overall"]))
    lines.append("")
    lines.append("memvault recall, session level (sessions by best-ranked turn)")
    lines.append(head)
    lines.append(row("  overall", result["session"]["overall"]))
    lines.append("")
    lines.append("baselines (same run, same data)")
    lines.append(head)
    for name, label in (("bm25", "BM25 (FTS5)"), ("dense", "dense cosine")):
        lines.append(row(f"  {label} turn", result["baselines"][name]["turn"]["overall"]))
        lines.append(row(f"  {label} session", result["baselines"][name]["session"]["overall"]))
    t = result["timing"]
    lines.append("")
    lines.append(
        f"import {t['import_s']} s, index {t['index_s']} s, recall p50 {t['query_p50_ms']} ms"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data", default="../shared/bench/locomo10.json", help="A LoCoMo-format JSON file."
    )
    parser.add_argument(
        "--limit-conversations", type=int, default=0, help="Only the first N conversations."
    )
    parser.add_argument(
        "--embedder", default=None, help="Embedder spec (default: the vault's default)."
    )
    parser.add_argument(
        "--workdir", default=None, help="Keep the vaults here (default: a temporary folder)."
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="With --workdir: query the vaults a previous run built.",
    )
    parser.add_argument("--json", action="store_true", help="Print one JSON object.")
    args = parser.parse_args(argv)
    result = run(args)
    if args.json:
        print(json.dumps(result))
    else:
        print(table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
