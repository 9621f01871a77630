"""Multilingual retrieval benchmark (Ukrainian, Russian, Portuguese, English), through recall.

    python bench/multilingual.py                      # the README's setup for these languages
    python bench/multilingual.py --languages en       # the English-only setup (MiniLM)
    python bench/multilingual.py --split tune --json
    python bench/multilingual.py --embedder fake --data other.json --workdir /tmp/mlb

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


def reindex_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
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


# --- run -----------------------------------------------------------------------------------


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def ms(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return round(1000 * values[min(len(values) - 1, int(q * len(values)))], 1)


def run(args: argparse.Namespace) -> tuple[dict[str, Any], int]:
    passages, all_queries = load_data(Path(args.data))
    queries = select_split(all_queries, args.split)
    if not queries:
        raise SystemExit(f"no queries in split {args.split!r} of {args.data}")
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
        log("baselines: BM25 ...")
        bm25_rows, _ = evaluate(queries, bm25_ranker(passages), "bm25", errors)
        log(f"baselines: dense ({spec}) ...")
        rank, embedded = dense_ranker(passages, spec)
        dense_rows, dtimes = evaluate(queries, rank, "dense", errors)
        timing.update(dense_embed_s=round(embedded, 1), dense_query_p50_ms=ms(dtimes, 0.5))
    timing["total_s"] = round(time.perf_counter() - wall, 1)
    result = reindex_summary(rows)
    result["baselines"] = {"bm25": reindex_summary(bm25_rows), "dense": reindex_summary(dense_rows)}
    result.update(
        split=args.split,
        embedder=spec if args.embedder else f"{spec} (chosen by init --language)",
        languages=args.languages,
        settings={key: value for key, value in args.set},
        n_queries=len(queries),
        n_passages=len(passages),
        data=str(args.data),
        timing=timing,
        errors=errors,
    )
    return result, 1 if errors else 0


def render(result: dict[str, Any]) -> str:
    systems = [
        ("memvault", result),
        ("BM25", result["baselines"]["bm25"]),
        ("dense", result["baselines"]["dense"]),
    ]
    head = f"{'':14}{'n':>5}" + "".join(f"  {name:>8} R@5 MRR@10" for name, _ in systems)
    lines = [
        f"multilingual retrieval: {result['n_queries']} queries (split {result['split']}), "
        f"{result['n_passages']} passages; embedder {result['embedder']}",
        "R@5 and MRR@10 in percent; memvault = vault.recall(limit=10); BM25 = FTS5 unicode61; "
        "dense = same embedder, cosine",
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
            cells.append(f"  {'':>8} {fmt(node['R@5']):>4} {fmt(node['MRR@10']):>6}")
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
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="Data file (default: %(default)s).")
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
        print(render(result))
    if code:
        log(f"{len(result['errors'])} query error(s); first: {result['errors'][0]}")
    return code


if __name__ == "__main__":
    sys.exit(main())
