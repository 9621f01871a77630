"""Choose the relevance floor per embedder from data: answerable questions against off-topic ones.

    python bench/floor.py --locomo locomo10.json --offtopic xquad.en.json --json
    python bench/floor.py --embedders default --conversations 4   # $LOCOMO_DATA, $XQUAD_EN_DATA
    python bench/floor.py --embedders e5 --conversations 0 --public path/to/public/multilingual

Below the floor (``search.min_score``, by default the embedder's ``relevance_floor``),
``recall``/``fact``/``procedure`` return nothing and say so. The floor is on a hit's
``relevance`` (``memvault.search.ranking.evidence``): the larger of its own cosine on the
embedder's common scale and its BM25 as a share of a full match of the query.

For each embedder, through the same calls a user's ``recall`` makes (``Vault.recall`` with
``min_score=0``, i.e. no floor, ``log=False``, 10 hits):

* **answerable**: LoCoMo's questions against their own conversation (ingested as
  transcripts, as ``bench/locomo.py`` does) and our multilingual set's questions against its
  passages (as ``bench/multilingual.py`` does). For a floor ``f``, a question whose best hit
  is under ``f`` gets no answer: ``loss`` is how many points of R@5 that costs;
* with ``--public``: each public retrieval task's questions (``bench/multilingual.py
  --data``: XQuAD ru->ru and en->ru, FaQuAD pt->pt, NTREX en/ru->uk, en->ru, en->pt), one
  set per task and query language, so a floor must hold for questions asked in another
  language than their passage, whose cosines sit lower; their tune split is the floor's
  tune, their test split its held-out;
* **off-topic**: questions of another set against the same vault (XQuAD's English
  Wikipedia questions against a LoCoMo conversation; LoCoMo's questions against the
  multilingual passages), plus a few greetings and nonsense. ``abstain`` is the share whose
  best hit is under ``f``.

The floor chosen is the highest (step 0.01) whose loss on the **tune** questions of the
public sets (LoCoMo's tune conversations; with ``--public``, each task's tune split) is at
most ``--max-loss`` points on each; held-out figures are reported beside it. Our own
multilingual set is a regression check: reported, never choosing (``OWN_SETS``). R@5
under a floor is computed from the floor-less run's hits (the floor keeps or drops a
question's answer whole, so this is what the search returns); ``bench/multilingual.py``
runs the real floor and prints its loss against a floor-less recall in the same run.

Exit status 1 when a set loads no question, or a question raises; 2 when the data is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.append(str(ROOT / "bench"))  # after site-packages: bench/mcp.py is no SDK
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

EMBEDDERS = {"default": "all-MiniLM-L6-v2", "e5": "multilingual-e5-small"}
LIMIT = 10
K = 5
GRID = [i / 100 for i in range(0, 91)]
# Greetings and nonsense: what an agent sends with no question in it. Not from any data set.
SMALL_TALK = (
    "hi",
    "hello there",
    "thanks!",
    "ok",
    "zzzqqq blorf wibble",
    "asdf qwerty",
    "привіт",
    "спасибо",
    "olá, tudo bem?",
)

# One answerable question: the relevance of each of its ten hits and which are relevant.
Row = tuple[str, list[tuple[float, bool]]]  # (split, [(relevance, relevant), ...])


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def r_at_k(hits: Sequence[tuple[float, bool]], n_relevant: int, floor: float) -> float:
    """R@5 of one question when its answer is held to ``floor``: none when its best hit is
    under it (the search returns nothing), else the hits as they came."""
    if max((score for score, _ in hits), default=0.0) < floor:
        return 0.0
    return sum(rel for _, rel in hits[:K]) / max(n_relevant, 1)


def loss(rows: Iterable[tuple[Row, int]], floor: float) -> float:
    """Points of R@5 lost when answers whose best hit is under ``floor`` are dropped."""
    rows = list(rows)
    if not rows:
        return 0.0
    lost = sum(r_at_k(h, n, 0.0) - r_at_k(h, n, floor) for (_, h), n in rows)
    return 100 * lost / len(rows)


def abstain(tops: Sequence[float], floor: float) -> float:
    """Share of off-topic questions whose best hit is under ``floor``."""
    return sum(1 for t in tops if t < floor) / len(tops) if tops else 0.0


def ask(vault: Any, question: str) -> list[Any]:
    return list(vault.recall(question, limit=LIMIT, log=False, min_score=0.0))


def top_relevance(vault: Any, questions: Iterable[str]) -> list[float]:
    return [max((h.relevance or 0.0 for h in ask(vault, q)), default=0.0) for q in questions]


def xquad_questions(path: Path) -> list[str]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        qa["question"]
        for article in data["data"]
        for para in article["paragraphs"]
        for qa in para["qas"]
    ]


def locomo_set(
    data: Path, embedder: str, offtopic: list[str], count: int, work: Path
) -> tuple[list[tuple[Row, int]], list[float]]:
    """Answerable rows and off-topic top relevances over LoCoMo conversations."""
    import locomo

    convs = locomo.load(data)
    picked = convs[: min(count, len(convs))]
    if count < len(convs):  # keep both splits: half tune, half held-out
        half = max(1, count // 2)
        tune = [c for c in convs if c.split == "tune"][:half]
        held = [c for c in convs if c.split == "heldout"][: count - half]
        picked = tune + held
    rows: list[tuple[Row, int]] = []
    tops: list[float] = []
    per_conv = max(1, len(offtopic) // max(len(picked), 1))
    for i, conv in enumerate(picked):
        log(f"  LoCoMo {conv.name} ({conv.split}) with {embedder}")
        built = locomo.build_transcripts(conv, work / f"locomo-{embedder}-{i}", embedder)
        for q in conv.questions:
            hits = ask(built.vault, q.q)
            marks = []
            for h in hits:
                dia = built.dia_of.get((h.id, h.turn.id if h.turn is not None else None))
                marks.append((h.relevance or 0.0, dia in q.evidence))
            rows.append(((conv.split, marks), len(set(q.evidence))))
        tops += top_relevance(built.vault, offtopic[i * per_conv : (i + 1) * per_conv])
        tops += top_relevance(built.vault, SMALL_TALK)
    return rows, tops


def multilingual_set(
    embedder: str, offtopic: list[str], work: Path
) -> tuple[list[tuple[Row, int]], list[float]]:
    import multilingual

    passages, queries = multilingual.load_data(multilingual.DEFAULT_DATA)
    log(f"  our multilingual set with {embedder}")
    languages = sorted({p["lang"] for p in passages if p.get("lang")})
    vault, ids, _, _ = multilingual.build_vault(
        work / f"ml-{embedder}", passages, embedder, languages=languages
    )
    rows: list[tuple[Row, int]] = []
    for q in queries:
        relevant = set(q["relevant"])
        marks = [(h.relevance or 0.0, ids.get(h.id) in relevant) for h in ask(vault, q["q"])]
        rows.append(((q.get("split") or "tune", marks), len(relevant)))
    return rows, top_relevance(vault, [*offtopic, *SMALL_TALK])


def public_sets(
    embedder: str, path: Path, sample: int, chat: list[str], count: int, seed: int, work: Path
) -> dict[str, tuple[list[tuple[Row, int]], list[float]]]:
    """Answerable rows per public task and query language (``xquad en->ru``, ...), and each
    task's off-topic top relevances: the other tasks' questions (another set's topics, often
    another language) and LoCoMo's chit-chat, plus :data:`SMALL_TALK`, asked of its vault.

    The public sets are ``bench/multilingual.py --data``'s (``bench/public_retrieval.py``);
    each task is a vault of its passages made as ``memvault init --language en,pt,ru,uk``
    makes one; ``sample`` questions at most per query language and split (its ``tune`` is
    the floor's tune, its ``test`` the held-out)."""
    import multilingual
    from public_retrieval import read

    tasks = read(path) or []
    questions = {t["name"]: [q["q"] for q in t["queries"]] for t in tasks}
    out: dict[str, tuple[list[tuple[Row, int]], list[float]]] = {}
    for t in tasks:
        log(f"  public {t['name']} with {embedder}")
        options = argparse.Namespace(languages="en,pt,ru,uk", embedder=embedder, set=[])
        folder = work / f"public-{embedder}-{t['name']}" / "vault"
        vault, ids, _, _ = multilingual.import_vault(folder, t["passages"], options)
        groups: dict[str, list[tuple[Row, int]]] = {}
        for q in multilingual.sample_queries(t["queries"], sample, seed):
            relevant = set(q["relevant"])
            marks = [(h.relevance or 0.0, ids.get(h.id) in relevant) for h in ask(vault, q["q"])]
            passage_lang = t["passages"][0]["lang"]
            name = f"{t['name'].split('-')[0]} {q['lang']}->{passage_lang}"
            split = "tune" if q["split"] == "tune" else "heldout"
            groups.setdefault(name, []).append(((split, marks), len(relevant)))
        # Off-topic: questions of the sets whose passages are not in this vault (NTREX's
        # three vaults share their documents, so none of NTREX asks another NTREX vault).
        family = t["name"].split("-")[0]
        others = [q for name, qs in questions.items() if name.split("-")[0] != family for q in qs]
        rng = random.Random(f"{seed}:{t['name']}")
        picked = rng.sample(others, min(count, len(others))) + rng.sample(
            chat, min(count, len(chat))
        )
        tops = top_relevance(vault, [*picked, *SMALL_TALK])
        for name, rows in groups.items():
            out[name] = (rows, tops)
    return out


# Sets written here: reported beside the floor (regression checks), never choosing it.
OWN_SETS = frozenset({"multilingual"})


def choose(
    sets: dict[str, tuple[list[tuple[Row, int]], list[float]]], max_loss: float
) -> dict[str, Any]:
    """The highest floor whose tune loss is at most ``max_loss`` on every public set (sets
    written by others: LoCoMo, the public retrieval tasks); :data:`OWN_SETS` are reported
    with it, as regression checks."""

    def split(rows: list[tuple[Row, int]], name: str) -> list[tuple[Row, int]]:
        return [r for r in rows if r[0][0] == name]

    public = [rows for name, (rows, _) in sets.items() if name not in OWN_SETS]
    floor = 0.0
    for f in GRID:
        if all(loss(split(rows, "tune"), f) <= max_loss for rows in public):
            floor = f
    report: dict[str, Any] = {"floor": floor, "sets": {}}
    for name, (rows, tops) in sets.items():
        report["sets"][name] = {
            "role": "regression" if name in OWN_SETS else "chooses",
            "answerable": {s: len(split(rows, s)) for s in ("tune", "heldout")},
            "offtopic": len(tops),
            "loss_tune": round(loss(split(rows, "tune"), floor), 2),
            "loss_heldout": round(loss(split(rows, "heldout"), floor), 2),
            "abstain": round(abstain(tops, floor), 3),
            "curve": {
                f"{f:.2f}": [round(loss(split(rows, "heldout"), f), 2), round(abstain(tops, f), 3)]
                for f in GRID[::5]
            },
        }
    return report


def run(args: argparse.Namespace) -> tuple[dict[str, Any], int]:
    if not args.locomo.exists() or not args.offtopic.exists():
        log(f"missing data: {args.locomo} or {args.offtopic}")
        return {}, 2
    if args.public is not None and not args.public.exists():
        log(f"missing data: {args.public}")
        return {}, 2
    xquad = xquad_questions(args.offtopic)
    random.Random(args.seed).shuffle(xquad)
    result: dict[str, Any] = {"embedders": {}}
    status = 0
    with tempfile.TemporaryDirectory(prefix="memvault-floor-") as tmp:
        for name in args.embedders:
            model = EMBEDDERS[name]
            log(f"{name} ({model})")
            import locomo

            chat = [q.q for c in locomo.load(args.locomo) for q in c.questions]
            random.Random(args.seed).shuffle(chat)
            sets = {}
            if args.conversations:
                sets["locomo"] = locomo_set(
                    args.locomo, model, xquad[: args.offtopic_count], args.conversations, Path(tmp)
                )
            sets["multilingual"] = multilingual_set(model, chat[: args.offtopic_count], Path(tmp))
            if args.public:
                sets.update(
                    public_sets(
                        model,
                        args.public,
                        args.public_sample,
                        chat,
                        args.offtopic_count // 2,
                        args.seed,
                        Path(tmp),
                    )
                )
            for set_name, (rows, tops) in sets.items():
                if not rows or not tops:
                    log(f"{name}: {set_name} loaded no question")
                    status = 1
            result["embedders"][name] = {"model": model, **choose(sets, args.max_loss)}
            if args.raw:  # every question's hits, to choose again without asking again
                result["embedders"][name]["raw"] = sets
            log(json.dumps({k: v for k, v in result["embedders"][name].items() if k != "raw"}))
    return result, status


def render(result: dict[str, Any]) -> str:
    lines = [
        "| embedder | floor | set | loss tune | loss held-out | off-topic abstain | n |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, got in result["embedders"].items():
        for set_name, s in got["sets"].items():
            n = f"{s['answerable']['tune']}+{s['answerable']['heldout']} / {s['offtopic']}"
            lines.append(
                f"| {name} | {got['floor']:.2f} | {set_name} | {s['loss_tune']:.2f} | "
                f"{s['loss_heldout']:.2f} | {s['abstain']:.3f} | {n} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--embedders", nargs="+", choices=sorted(EMBEDDERS), default=sorted(EMBEDDERS)
    )
    parser.add_argument(
        "--locomo",
        type=Path,
        default=Path(os.environ.get("LOCOMO_DATA", "locomo10.json")),
        help="LoCoMo JSON (default $LOCOMO_DATA; github.com/snap-research/locomo, "
        "data/locomo10.json)",
    )
    parser.add_argument(
        "--offtopic",
        type=Path,
        default=Path(os.environ.get("XQUAD_EN_DATA", "xquad.en.json")),
        help="off-topic questions: XQuAD English (default $XQUAD_EN_DATA; "
        "github.com/google-deepmind/xquad, xquad.en.json)",
    )
    parser.add_argument(
        "--conversations", type=int, default=10, help="LoCoMo conversations (0: none)"
    )
    parser.add_argument(
        "--public",
        type=Path,
        default=None,
        help="the public multilingual sets' folder (bench/multilingual.py --data): their "
        "questions, across languages too, as answerable ones per task and query language",
    )
    parser.add_argument(
        "--public-sample",
        type=int,
        default=100,
        help="with --public: at most this many questions per query language and split",
    )
    parser.add_argument("--offtopic-count", type=int, default=200)
    parser.add_argument(
        "--max-loss", type=float, default=1.0, help="points of tune R@5 (default 1.0)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--raw", action="store_true", help="with --json: every question's hits")
    args = parser.parse_args(argv)
    result, status = run(args)
    if status == 2:
        return 2
    print(json.dumps(result, indent=2) if args.json else render(result))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
