"""Multilingual retrieval benchmark (Ukrainian, Russian, Portuguese, English), through recall.

    python bench/multilingual.py                      # the README's setup for these languages
    python bench/multilingual.py --languages en       # the English-only setup (MiniLM)
    python bench/multilingual.py --split tune --json
    python bench/multilingual.py --embedder fake --data other.json --workdir /tmp/mlb
    python bench/multilingual.py --data path/to/public/multilingual --sample 400 --json

The data file holds ``{"passages": [{"id", "lang", "text"}], "queries": [{"id", "lang",
"kind": "same|cross|mixed", "q", "relevant": [passage ids], "split": "tune|heldout"}]}``
(``split`` is optional; a query without one only counts in ``--split all``). The default
set, ``bench/data/multilingual.json``, is built from the seed documents: passages in their
own words (uk, ru, pt) plus English summaries of other seed parts; questions written as a
person would ask (``same``: in the passage's language; ``cross``: English about uk/ru/pt
passages; ``mixed``: a sentence in one language with English technical terms). About 30%
of its queries are ``heldout``: tune weights on ``--split tune`` only.

A fresh vault is made as a user would make one, with the setup the README recommends for
these languages: ``Vault.init(languages=...)`` as ``memvault init --language en,pt,ru,uk``
does (it picks the embedder), then ``set_config("embedder", ...)`` only when ``--embedder``
is given and ``set_config(key, value)`` for every ``--set KEY=VALUE``.
Every passage is stored with ``vault.add("semantic", text, tags=[lang],
id="p-<passage id>")`` (one commit each), the index is built with ``vault.reindex()``, and
every query is asked with ``vault.recall(q, limit=10, log=False)``.
A hit is a returned memory whose passage is in ``relevant``.

Reported, in percent, overall, by query language, by kind and by language x kind:

* R@5: share of a query's relevant passages among its first 5 results, averaged;
* MRR@10: reciprocal rank of the first relevant passage in the first 10 (0 if none), averaged.

Two baselines run in the same process on the same passages: plain BM25 (SQLite FTS5,
``unicode61 remove_diacritics 2``, OR of the query's words) and plain dense (the same
embedder's ``embed_documents``/``embed_query``, cosine, top 10).

Besides, from the same vault: memvault's own **keyword leg** alone and **vector leg** alone
(what :func:`memvault.search.ranking.gather` finds for the query, a memory ranked as its best
chunk) and their **reciprocal-rank fusion** (RRF, k=60): the plain fusion recall has to beat;
and **no floor**, recall with ``min_score=0``: what the relevance floor costs answerable
questions (it should cost at most a point).

**Public sets** (``bench/public_retrieval.py`` reads them; where to get each:
``docs/retrieval.md``): ``--data`` names a folder holding XQuAD (``xquad.ru.json`` and
``xquad.en.json``: Russian and English questions -> Russian paragraphs), FaQuAD
(``faquad.pt.json``: pt -> pt) and NTREX-128 (``ntrex.*``: an English or Russian sentence ->
its Ukrainian document; English -> Russian and Portuguese documents), or one of those files.
Each task gets a vault of its own, made as above except that the passages are imported in
one commit (``memvault import``: hundreds of commits would be most of the run) and every
query is asked through ``vault.recall`` as for our set. Queries are split tune/test by a
fixed hash of their passage's id; ``--sample N`` asks at most N queries per task, query
language and split (seed ``--seed``); the figures say n. Plain BM25 runs beside, and our
own set in the same process unless ``--no-own``.

**The pipeline against its own legs**: every group (public task x query language x split;
our set's query languages and kinds, ``mixed`` included, x split) is compared with the best
of memvault's two legs alone (keyword, vector); the groups where recall's R@5 is below it
are printed (``gaps`` in the JSON, ``delta`` in R@5 points).

``--json`` prints one JSON object and nothing else on stdout (progress goes to stderr).
The exit code is 1 if any query raised, 2 if the run could not start.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DEFAULT_DATA = ROOT / "bench" / "data" / "multilingual.json"
KINDS = ("same", "cross", "mixed")
SPLITS = ("all", "tune", "heldout")
LIMIT = 10
K = 5
_WORD_RE = re.compile(r"\w+")
_ID_BAD_RE = re.compile(r"[^a-z0-9]+")

Ranker = Callable[[str], list[str]]
LEGS = ("keyword_leg", "dense_leg", "rrf", "no_floor")


# --- data ----------------------------------------------------------------------------------


def load_data(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(passages, queries) from a data file, checked; exits with a message if malformed."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{path}: cannot read the data file: {exc}") from None
    problems: list[str] = []
    passages = data.get("passages") if isinstance(data, dict) else None
    queries = data.get("queries") if isinstance(data, dict) else None
    if not isinstance(passages, list) or not isinstance(queries, list):
        raise SystemExit(f"{path}: expected an object with 'passages' and 'queries' lists")
    ids: set[str] = set()
    for i, p in enumerate(passages):
        if not isinstance(p, dict) or not all(isinstance(p.get(k), str) for k in ("id", "text")):
            problems.append(f"passages[{i}]: needs string 'id' and 'text'")
            continue
        if not p["text"].strip():
            problems.append(f"passages[{i}] ({p['id']}): empty text")
        if p["id"] in ids:
            problems.append(f"passages[{i}]: duplicate id {p['id']!r}")
        ids.add(p["id"])
    for i, q in enumerate(queries):
        if not isinstance(q, dict) or not isinstance(q.get("q"), str) or not q["q"].strip():
            problems.append(f"queries[{i}]: needs a non-empty string 'q'")
            continue
        q.setdefault("id", f"q{i}")
        if q.get("kind") not in KINDS:
            problems.append(f"queries[{i}] ({q['id']}): kind must be one of {KINDS}")
        rel = q.get("relevant")
        if not isinstance(rel, list) or not rel:
            problems.append(f"queries[{i}] ({q['id']}): 'relevant' must be a non-empty list")
        elif unknown := [r for r in rel if r not in ids]:
            problems.append(f"queries[{i}] ({q['id']}): unknown passage ids {unknown}")
        if q.get("split") not in (None, "tune", "heldout"):
            problems.append(f"queries[{i}] ({q['id']}): split must be tune or heldout")
    if problems:
        shown = "\n  ".join(problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise SystemExit(f"{path}: {len(problems)} problem(s):\n  {shown}{more}")
    return passages, queries


def select_split(queries: list[dict[str, Any]], split: str) -> list[dict[str, Any]]:
    if split == "all":
        return list(queries)
    return [q for q in queries if q.get("split") == split]


def memory_ids(passage_ids: Sequence[str]) -> dict[str, str]:
    """A valid, unique memvault id (``p-<slug>``) for every passage id: {memory id: passage id}."""
    out: dict[str, str] = {}
    for n, pid in enumerate(passage_ids):
        slug = _ID_BAD_RE.sub("-", pid.lower()).strip("-")[:100] or f"n{n}"
        mid = f"p-{slug}"
        if mid in out:
            mid = f"p-{slug}-{n}"
        out[mid] = pid
    return out


# --- metrics -------------------------------------------------------------------------------


def score(ranked: Sequence[str], relevant: Iterable[str]) -> tuple[float, float]:
    """(R@5, MRR@10) of one ranked list of passage ids, each in [0, 1]."""
    rel = set(relevant)
    top = list(dict.fromkeys(ranked))  # a passage found twice (two chunks) counts once
    recall = len(rel.intersection(top[:K])) / len(rel)
    rr = next((1.0 / rank for rank, pid in enumerate(top[:LIMIT], 1) if pid in rel), 0.0)
    return recall, rr


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Percent figures overall, by_lang, by_kind and by_lang_kind from per-query rows."""

    def agg(group: list[dict[str, Any]]) -> dict[str, Any]:
        if not group:
            return {"R@5": None, "MRR@10": None, "n": 0}
        return {
            "R@5": round(100 * statistics.fmean(r["r5"] for r in group), 1),
            "MRR@10": round(100 * statistics.fmean(r["rr"] for r in group), 1),
            "n": len(group),
        }

    by: dict[str, dict[str, list[dict[str, Any]]]] = {
        "by_lang": defaultdict(list),
        "by_kind": defaultdict(list),
        "by_lang_kind": defaultdict(list),
    }
    for r in rows:
        by["by_lang"][r["lang"]].append(r)
        by["by_kind"][r["kind"]].append(r)
        by["by_lang_kind"][f"{r['lang']}/{r['kind']}"].append(r)
    out: dict[str, Any] = {"overall": agg(rows)}
    for name, groups in by.items():
        out[name] = {key: agg(groups[key]) for key in sorted(groups)}
    return out


def evaluate(
    queries: list[dict[str, Any]], rank: Ranker, name: str, errors: list[dict[str, str]]
) -> tuple[list[dict[str, Any]], list[float]]:
    """Score every query with ``rank``; a query that raises counts as a miss and is recorded."""
    rows: list[dict[str, Any]] = []
    times: list[float] = []
    for q in queries:
        started = time.perf_counter()
        try:
            ranked = rank(q["q"])
        except Exception as exc:  # one bad query must not hide the others' figures
            errors.append(
                {"system": name, "query": q["id"], "error": f"{type(exc).__name__}: {exc}"}
            )
            ranked = []
        times.append(time.perf_counter() - started)
        r5, rr = score(ranked, q["relevant"])
        rows.append(
            {"id": q["id"], "lang": q.get("lang", "?"), "kind": q["kind"], "r5": r5, "rr": rr}
        )
    return rows, times


# --- systems -------------------------------------------------------------------------------


def build_vault(
    folder: Path,
    passages: list[dict[str, Any]],
    embedder: str | None,
    settings: Sequence[tuple[str, Any]] = (),
    languages: Sequence[str] = (),
) -> tuple[Any, dict[str, str], float, float]:
    """A fresh vault holding every passage as a fact, made as the README recommends for
    these languages (``memvault init --language ...``, which picks the embedder).

    Returns (vault, {memory id: passage id}, seconds adding, seconds indexing).
    """
    from memvault import Vault
    from memvault.errors import SecretDetectedError

    vault = Vault.init(folder, languages=list(languages) or None)
    if embedder:
        vault.set_config("embedder", embedder, "bench embedder")
    for key, value in settings:
        vault.set_config(key, value, f"bench setting {key}")
    ids = memory_ids([p["id"] for p in passages])
    by_pid = {pid: mid for mid, pid in ids.items()}
    started = time.perf_counter()
    allowed: list[str] = []
    for p in passages:
        tags = [p["lang"]] if isinstance(p.get("lang"), str) and p["lang"] else None
        mid = by_pid[p["id"]]
        try:
            vault.add("semantic", p["text"], title=None, tags=tags, id=mid)
        except SecretDetectedError:  # a false positive in benchmark text: store it anyway
            vault.add("semantic", p["text"], title=None, tags=tags, id=mid, allow_secrets=True)
            allowed.append(p["id"])
    added = time.perf_counter() - started
    if allowed:
        log(
            f"  {len(allowed)} passage(s) looked like secrets, stored with allow_secrets: {allowed}"
        )
    started = time.perf_counter()
    vault.reindex()
    return vault, ids, added, time.perf_counter() - started


def recall_ranker(vault: Any, ids: dict[str, str]) -> Ranker:
    def rank(q: str) -> list[str]:
        result = vault.recall(q, limit=LIMIT, log=False)
        return [ids[h.id] for h in result.hits if h.id in ids]

    return rank


def bm25_ranker(passages: list[dict[str, Any]]) -> Ranker:
    """Plain FTS5 BM25: unicode61 with diacritics removed, no stemming, OR of the query's words."""
    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE docs USING fts5(pid UNINDEXED, body, "
        "tokenize = 'unicode61 remove_diacritics 2')"
    )
    db.executemany(
        "INSERT INTO docs (pid, body) VALUES (?, ?)", [(p["id"], p["text"]) for p in passages]
    )

    def rank(q: str) -> list[str]:
        words = list(dict.fromkeys(w.lower() for w in _WORD_RE.findall(q)))
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = db.execute(
            "SELECT pid FROM docs WHERE docs MATCH ? ORDER BY bm25(docs) LIMIT ?", (match, LIMIT)
        ).fetchall()
        return [r[0] for r in rows]

    return rank


def dense_ranker(passages: list[dict[str, Any]], spec: str) -> tuple[Ranker, float]:
    """Plain cosine over the embedder's own document vectors; (ranker, embed seconds)."""
    import numpy as np

    from memvault.embeddings import get_embedder

    embedder = get_embedder(spec)
    started = time.perf_counter()
    matrix = np.asarray(embedder.embed_documents([p["text"] for p in passages]), dtype=np.float32)
    embedded = time.perf_counter() - started
    pids = [p["id"] for p in passages]

    def rank(q: str) -> list[str]:
        sims = matrix @ np.asarray(embedder.embed_query(q), dtype=np.float32)
        order = np.argsort(-sims, kind="stable")[:LIMIT]
        return [pids[i] for i in order]

    return rank, embedded


def leg_rankers(vault: Any, ids: dict[str, str]) -> dict[str, Ranker]:
    """memvault's own two legs, each alone, and their reciprocal-rank fusion (k=60): the
    keyword leg (FTS5 BM25 over the index's lemmatised words, the query's stopwords out) and
    the vector leg (cosine to each chunk), as :func:`memvault.search.ranking.gather` runs
    them for a search with no filter; a memory ranks as its best chunk. Also recall with no
    relevance floor (``no_floor``)."""
    from legs import gather_legs, rrf

    last: dict[str, dict[str, list[str]]] = {}

    def legs(q: str) -> dict[str, list[str]]:
        if q in last:
            return last[q]
        found = gather_legs(vault, q, LIMIT)

        def order(leg: list[tuple[int, int, float]]) -> list[str]:
            names = (found.rows[doc].id for _, doc, _ in leg if doc in found.rows)
            return [ids[m] for m in dict.fromkeys(names) if m in ids]

        keyword, vector = order(found.keyword), order(found.vector)
        fused = rrf(keyword, vector)
        last.clear()
        # recall as a user gets it, but with no relevance floor: what the floor costs
        result = vault.recall(q, limit=LIMIT, log=False, min_score=0.0)
        no_floor = [ids[h.id] for h in result.hits if h.id in ids]
        last[q] = {"keyword_leg": keyword, "dense_leg": vector, "rrf": fused, "no_floor": no_floor}
        return last[q]

    return {name: (lambda q, name=name: legs(q)[name]) for name in LEGS}


# --- run -----------------------------------------------------------------------------------


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def ms(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return round(1000 * values[min(len(values) - 1, int(q * len(values)))], 1)


def run_own(args: argparse.Namespace, path: Path) -> tuple[dict[str, Any], int]:
    """A set of our own format (the module doc): every system's figures and the exit code."""
    passages, all_queries = load_data(path)
    queries = select_split(all_queries, args.split)
    if not queries:
        raise SystemExit(f"no queries in split {args.split!r} of {path}")
    log(f"{len(passages)} passages, {len(queries)} queries (split {args.split})")
    errors: list[dict[str, str]] = []
    timing: dict[str, Any] = {}
    wall = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if args.workdir:
            Path(args.workdir).mkdir(parents=True, exist_ok=True)
            base = Path(tempfile.mkdtemp(prefix="multilingual-", dir=args.workdir))
            log(f"vault kept in {base / 'vault'}")
        else:
            base = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mv-multiling-")))
        # nothing but the result may reach stdout
        stack.enter_context(contextlib.redirect_stdout(sys.stderr))
        log("building the vault (one add per passage) ...")
        vault, ids, added, indexed = build_vault(
            base / "vault", passages, args.embedder, args.set, args.languages.split(",")
        )
        spec = str(vault.config.get("embedder") or "default")
        timing.update(add_s=round(added, 1), index_s=round(indexed, 1))
        log(f"  add {added:.1f} s, reindex {indexed:.1f} s; asking {len(queries)} queries ...")
        rows, qtimes = evaluate(queries, recall_ranker(vault, ids), "memvault", errors)
        timing.update(recall_p50_ms=ms(qtimes, 0.5), recall_p95_ms=ms(qtimes, 0.95))
        log("memvault's legs alone, and their RRF ...")
        legs = {
            name: evaluate(queries, rank, name, errors)[0]
            for name, rank in leg_rankers(vault, ids).items()
        }
        log("baselines: BM25 ...")
        bm25_rows, _ = evaluate(queries, bm25_ranker(passages), "bm25", errors)
        log(f"baselines: dense ({spec}) ...")
        rank, embedded = dense_ranker(passages, spec)
        dense_rows, dtimes = evaluate(queries, rank, "dense", errors)
        timing.update(dense_embed_s=round(embedded, 1), dense_query_p50_ms=ms(dtimes, 0.5))
    timing["total_s"] = round(time.perf_counter() - wall, 1)
    result = summarize(rows)
    result["baselines"] = {name: summarize(got) for name, got in legs.items()}
    result["baselines"].update(bm25=summarize(bm25_rows), dense=summarize(dense_rows))
    every = {"memvault": rows, **legs, "bm25": bm25_rows, "dense": dense_rows}
    split_of = {q["id"]: q.get("split") for q in queries}
    result["by_split"] = {  # overall R@5 and MRR@10 of every system, per split of the queries
        split: {
            name: summarize([r for r in got if split_of[r["id"]] == split])["overall"]
            for name, got in every.items()
        }
        for split in ("tune", "heldout")
    }
    result["by_split_group"] = {  # the same per query language and kind, per split
        split: {
            name: groups(summarize([r for r in got if split_of[r["id"]] == split]))
            for name, got in every.items()
        }
        for split in ("tune", "heldout")
    }
    result.update(
        split=args.split,
        embedder=spec if args.embedder else f"{spec} (chosen by init --language)",
        languages=args.languages,
        settings={key: value for key, value in args.set},
        n_queries=len(queries),
        n_passages=len(passages),
        data=str(path),
        timing=timing,
        errors=errors,
    )
    result["gaps"] = gaps(result)
    return result, 1 if errors else 0


# --- the pipeline against its own legs ------------------------------------------------------

SINGLE_LEGS = ("keyword_leg", "dense_leg")


def groups(summary: dict[str, Any]) -> dict[str, Any]:
    """R@5, MRR@10 and n per query language and per kind (``lang ...``/``kind ...``)."""
    out = {f"lang {k}": v for k, v in summary["by_lang"].items()}
    out.update({f"kind {k}": v for k, v in summary["by_kind"].items()})
    return out


def gap(figures: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The pipeline (``memvault``) against its best single leg in one group:
    {memvault, best_leg, best_leg_R@5, delta} in R@5 points (None when nothing was asked)."""
    if not figures["memvault"]["n"]:
        return None
    best = max(SINGLE_LEGS, key=lambda leg: figures[leg]["R@5"] or 0.0)
    ours, theirs = figures["memvault"]["R@5"], figures[best]["R@5"]
    return {
        "memvault": ours,
        "best_leg": best,
        "best_leg_R@5": theirs,
        "delta": round(ours - theirs, 1),
        "n": figures["memvault"]["n"],
    }


def gaps(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Every group (public task x query language x split; our set's languages and kinds x
    split) with the pipeline's R@5 against its best single leg."""
    out = []
    for name, t in result.get("tasks", {}).items():
        systems = t["systems"]
        for split in PUBLIC_SPLITS:
            for lang in systems["memvault"][split]["by_lang"]:
                figures = {s: systems[s][split]["by_lang"][lang] for s in SYSTEMS}
                if (g := gap(figures)) is not None:
                    out.append({"set": name, "group": f"lang {lang}", "split": split, **g})
    own = result.get("own") or (result if "by_split_group" in result else None)
    if own is not None:
        for split, by_system in own["by_split_group"].items():
            for group in by_system["memvault"]:
                figures = {s: by_system[s][group] for s in ("memvault", *SINGLE_LEGS)}
                if (g := gap(figures)) is not None:
                    out.append({"set": "own", "group": group, "split": split, **g})
    return out


def render_gaps(rows: list[dict[str, Any]]) -> list[str]:
    """Lines naming where the pipeline loses to its best single leg."""
    losing = [r for r in rows if r["delta"] < 0]
    lines = [
        f"pipeline below its best single leg (R@5): {len(losing)} of {len(rows)} groups"
        + (":" if losing else "")
    ]
    for r in losing:
        lines.append(
            f"  {r['set']} {r['group']} ({r['split']}, n {r['n']}): memvault {r['memvault']:.1f}"
            f" < {r['best_leg']} {r['best_leg_R@5']:.1f} ({r['delta']:+.1f})"
        )
    return lines


# --- public sets ---------------------------------------------------------------------------

# No plain dense baseline here: the vector leg alone is one (the same embedder's cosine, a
# memory as its best chunk), and embedding every passage twice would double the run.
SYSTEMS = ("memvault", *LEGS, "bm25")
PUBLIC_SPLITS = ("tune", "test")


def sample_queries(queries: list[dict[str, Any]], size: int, seed: int) -> list[dict[str, Any]]:
    """At most ``size`` queries per query language and split, drawn with a fixed seed."""
    import random

    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for q in queries:
        groups[(q["lang"], q["split"])].append(q)
    out: list[dict[str, Any]] = []
    for key in sorted(groups):
        group = groups[key]
        if size and len(group) > size:
            group = random.Random(f"{seed}:{key[0]}:{key[1]}").sample(group, size)
        out += sorted(group, key=lambda q: q["id"])
    return out


def import_vault(
    folder: Path, passages: list[dict[str, Any]], args: argparse.Namespace
) -> tuple[Any, dict[str, str], float, float]:
    """A vault holding every passage as a fact, imported in one commit as ``memvault import``
    does (a public set's hundreds of passages, one commit each, would be most of the run).
    Returns (vault, {memory id: passage id}, seconds importing, seconds indexing)."""
    from memvault import Vault

    vault = Vault.init(folder, languages=args.languages.split(","))
    if args.embedder:
        vault.set_config("embedder", args.embedder, "bench embedder")
    for key, value in args.set:
        vault.set_config(key, value, f"bench setting {key}")
    ids = memory_ids([p["id"] for p in passages])
    by_pid = {pid: mid for mid, pid in ids.items()}
    source = folder.parent / "passages.jsonl"
    with source.open("w", encoding="utf-8") as f:
        for p in passages:
            record = {"type": "semantic", "id": by_pid[p["id"]], "tags": [p["lang"]]}
            f.write(json.dumps({**record, "content": p["text"]}, ensure_ascii=False) + "\n")
    started = time.perf_counter()
    report = vault.import_file(source, "jsonl")
    if report.problems or report.added != len(passages):
        raise SystemExit(
            f"{folder}: imported {report.added}/{len(passages)}: {report.problems[:3]}"
        )
    imported = time.perf_counter() - started
    started = time.perf_counter()
    vault.reindex()
    return vault, ids, imported, time.perf_counter() - started


def run_task(task: dict[str, Any], base: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One public task in a vault of its own: every system on its sampled queries."""
    passages = task["passages"]
    queries = sample_queries(task["queries"], args.sample, args.seed)
    log(f"{task['name']}: {len(passages)} passages, {len(queries)} queries; importing ...")
    vault, ids, imported, indexed = import_vault(base / task["name"] / "vault", passages, args)
    spec = str(vault.config.get("embedder") or "default")
    errors: list[dict[str, str]] = []
    rankers: dict[str, Ranker] = {"memvault": recall_ranker(vault, ids)}
    rankers.update(leg_rankers(vault, ids))
    rankers["bm25"] = bm25_ranker(passages)
    figures: dict[str, Any] = {}
    for name, rank in rankers.items():
        log(f"  {name} ...")
        rows, times = evaluate(queries, rank, name, errors)
        figures[name] = {
            split: summarize([r for r, q in zip(rows, queries, strict=True) if q["split"] == split])
            for split in PUBLIC_SPLITS
        }
        if name == "memvault":
            figures[name]["p50_ms"] = ms(times, 0.5)
    return {
        "passages": len(passages),
        "queries": {s: sum(q["split"] == s for q in queries) for s in PUBLIC_SPLITS},
        "queries_in_set": {s: sum(q["split"] == s for q in task["queries"]) for s in PUBLIC_SPLITS},
        "embedder": spec,
        "systems": figures,
        "timing": {"import_s": round(imported, 1), "index_s": round(indexed, 1)},
        "errors": errors,
    }


def run(args: argparse.Namespace) -> tuple[dict[str, Any], int]:
    """Our own set alone, or the public sets at ``--data`` and our own set beside them."""
    sys.path.append(str(ROOT / "bench"))  # after site-packages: bench/mcp.py is no SDK
    from public_retrieval import read

    path = Path(args.data)
    if not path.exists():
        raise SystemExit(f"{path}: no such file or folder")
    tasks = read(path)
    if tasks is None:
        return run_own(args, path)
    wanted = set(args.task or [])
    tasks = [t for t in tasks if not wanted or t["name"] in wanted]
    result: dict[str, Any] = {
        "data": str(path),
        "sample": {"per_language_and_split": args.sample or None, "seed": args.seed},
        "languages": args.languages,
        "settings": {key: value for key, value in args.set},
        "tasks": {},
    }
    wall = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if args.workdir:
            Path(args.workdir).mkdir(parents=True, exist_ok=True)
            base = Path(tempfile.mkdtemp(prefix="multilingual-", dir=args.workdir))
        else:
            base = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mv-multiling-")))
        stack.enter_context(contextlib.redirect_stdout(sys.stderr))
        for t in tasks:
            result["tasks"][t["name"]] = run_task(t, base, args)
    code = 1 if any(t["errors"] for t in result["tasks"].values()) else 0
    if not args.no_own:
        log(f"our own set ({DEFAULT_DATA.name}) ...")
        own, own_code = run_own(args, DEFAULT_DATA)
        result["own"] = own
        code = code or own_code
    result["total_s"] = round(time.perf_counter() - wall, 1)
    result["gaps"] = gaps(result)
    return result, code


def render_public(result: dict[str, Any]) -> str:
    names = {
        "memvault": "memvault",
        "keyword_leg": "keyword",
        "dense_leg": "dense leg",
        "rrf": "RRF k=60",
        "no_floor": "no floor",
        "bm25": "BM25",
    }
    head = f"{'':28}{'n':>5}" + "".join(f"{names[s]:>10}" for s in SYSTEMS)
    lines = [
        "R@5 (%): memvault = vault.recall(limit=10); keyword / dense leg = memvault's own legs "
        "alone; RRF k=60 of the two; no floor = recall with min_score=0; BM25 = plain FTS5 "
        "unicode61. "
        f"Sample: {result['sample']}",
        head,
    ]
    for name, t in result["tasks"].items():
        systems = t["systems"]
        for split in PUBLIC_SPLITS:
            for lang, fig in systems["memvault"][split]["by_lang"].items():
                cells = "".join(
                    f"{fmt(systems[s][split]['by_lang'][lang]['R@5']):>10}" for s in SYSTEMS
                )
                label = f"{name} {lang} ({split})"
                lines.append(f"{label:28}{fig['n']:>5}{cells}")
    if "own" in result:
        own = result["own"]
        systems_own = {"memvault": own, **own["baselines"]}
        cells = "".join(f"{fmt(systems_own[s]['overall']['R@5']):>10}" for s in SYSTEMS)
        lines.append(f"{'own set, all':28}{own['overall']['n']:>5}{cells}")
        for split, figures in own["by_split"].items():
            cells = "".join(f"{fmt(figures[s]['R@5']):>10}" for s in SYSTEMS)
            lines.append(f"{'own set, ' + split:28}{figures['memvault']['n']:>5}{cells}")
            by_system = own["by_split_group"][split]
            for group, fig in by_system["memvault"].items():
                cells = "".join(f"{fmt(by_system[s][group]['R@5']):>10}" for s in SYSTEMS)
                lines.append(f"{'  ' + group:28}{fig['n']:>5}{cells}")
    lines += render_gaps(result["gaps"])
    lines.append(f"total {result['total_s']} s")
    return "\n".join(lines)


def render(result: dict[str, Any]) -> str:
    b = result["baselines"]
    systems = [
        ("memvault", result),
        ("keyword", b["keyword_leg"]),
        ("dense leg", b["dense_leg"]),
        ("RRF k=60", b["rrf"]),
        ("no floor", b["no_floor"]),
        ("BM25", b["bm25"]),
        ("dense", b["dense"]),
    ]
    head = f"{'':14}{'n':>5}" + "".join(f"  {name:>9} R@5 MRR@10" for name, _ in systems)
    lines = [
        f"multilingual retrieval: {result['n_queries']} queries (split {result['split']}), "
        f"{result['n_passages']} passages; embedder {result['embedder']}",
        "R@5 and MRR@10 in percent; memvault = vault.recall(limit=10); keyword / dense leg = "
        "memvault's own legs alone, RRF k=60 of the two; no floor = recall with min_score=0 "
        "(the relevance floor's cost is memvault minus it); BM25 = FTS5 unicode61; dense = "
        "same embedder, cosine",
        "",
        head,
    ]

    def line(label: str, path: tuple[str, ...]) -> str:
        cells = []
        n = 0
        for _, figures in systems:
            node: Any = figures
            for key in path:
                node = node[key]
            n = node["n"]
            cells.append(f"  {'':>9} {fmt(node['R@5']):>4} {fmt(node['MRR@10']):>6}")
        return f"{label:14}{n:>5}" + "".join(cells)

    lines.append(line("overall", ("overall",)))
    for group, title in (("by_lang", "lang"), ("by_kind", "kind"), ("by_lang_kind", "")):
        lines.append("")
        for key in result[group]:
            lines.append(line(f"{title} {key}".strip(), (group, key)))
    t = result["timing"]
    lines += [
        "",
        f"time: add {t['add_s']} s, reindex {t['index_s']} s, recall p50 {t['recall_p50_ms']} ms "
        f"p95 {t['recall_p95_ms']} ms, dense embed {t['dense_embed_s']} s, total {t['total_s']} s",
    ]
    lines += ["", *render_gaps(result["gaps"])]
    if result["errors"]:
        lines.append(
            f"ERRORS: {len(result['errors'])} queries raised, first: {result['errors'][0]}"
        )
    return "\n".join(lines)


def setting(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` -> (key, value); the value is read as JSON when it parses, else a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        value: Any = json.loads(raw)
    except ValueError:
        value = raw
    return key.strip(), value


def fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--data",
        default=str(DEFAULT_DATA),
        help="A data file of our own format (default: %(default)s), or a folder (or file) of "
        "public sets: xquad.ru.json (+ xquad.en.json), faquad.pt.json, ntrex.*.",
    )
    ap.add_argument(
        "--task",
        action="append",
        help="Public sets: only this task (xquad, faquad, ntrex-uk, ntrex-ru, ntrex-pt); "
        "repeatable.",
    )
    ap.add_argument(
        "--sample",
        type=int,
        default=0,
        metavar="N",
        help="Public sets: at most N queries per task, query language and split, drawn with "
        "--seed (default: all).",
    )
    ap.add_argument("--seed", type=int, default=0, help="Seed of --sample (default: 0).")
    ap.add_argument(
        "--no-own", action="store_true", help="Public sets: leave out our own set's figures."
    )
    ap.add_argument(
        "--languages",
        default="en,pt,ru,uk",
        help="The vault's languages, as 'memvault init --language' takes them: they pick its "
        "embedder, as the README recommends (default: %(default)s; 'en' for the English-only "
        "setup).",
    )
    ap.add_argument(
        "--embedder",
        default=None,
        help="Embedder spec for the vault (default: the one --languages picks).",
    )
    ap.add_argument("--split", choices=SPLITS, default="all", help="Queries to ask (default: all).")
    ap.add_argument("--json", action="store_true", help="Print one JSON object, nothing else.")
    ap.add_argument(
        "--set",
        metavar="KEY=VALUE",
        type=setting,
        action="append",
        default=[],
        help="Another vault setting (dotted key, JSON or plain value), e.g. the setup the "
        "README recommends for these languages; repeatable.",
    )
    ap.add_argument(
        "--workdir", default=None, help="Keep the vault in a new folder under this directory."
    )
    args = ap.parse_args(argv)
    try:
        result, code = run(args)
    except SystemExit as exc:  # bad data or split: say why, exit 2
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
        print(render_public(result) if "tasks" in result else render(result))
    if code:
        errors = [*result.get("errors", []), *result.get("own", {}).get("errors", [])]
        errors += [e for t in result.get("tasks", {}).values() for e in t["errors"]]
        log(f"{len(errors)} query error(s); first: {errors[:1]}")
    return code


if __name__ == "__main__":
    sys.exit(main())
