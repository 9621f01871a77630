"""The conversation bench's harness, shared by every conversation set (``bench/locomo.py``
runs it; ``locomo.load`` and ``beam.load`` read the sets).

A set is a list of :class:`Conversation`. For each conversation: a fresh vault, each session
written as one generic-JSONL transcript and imported with ``Vault.ingest`` (what
``memvault ingest`` calls), the index built with ``vault.reindex()``, every question asked
with ``vault.recall(question, limit=50, log=False)``. A hit is a returned turn whose turn
id maps to an evidence turn. Questions with evidence are scored (turn and session R@k, H@5,
MRR); questions without (a set's unanswerable ones) and questions that name an older and a
newer value are kept as *probes* for :mod:`beam_lifecycle`.

The plain baselines (BM25 with memvault's own query tokenizer, dense cosine with the vault's
embedder) rank the same turns for the same questions in the same run.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import beam_lifecycle
import legs

LAYOUTS = ("transcripts", "turns-as-memories")
KS = (1, 5, 10)
METRICS = ("R@1", "R@5", "R@10", "H@5", "MRR")
# Session level also: the share of the evidence sessions that the first five hits reach,
# and whether they reach any.
SESSION_METRICS = (*METRICS, "R@5_hits", "H@5_hits")
RESULTS = 50  # results asked per question (ranking sessions needs more than 10 turns)
DEFINITIONS = {
    "turn R@k": "share of a question's evidence turns among the first k hits",
    "turn MRR": f"1 / rank of the first evidence turn among {RESULTS} hits (0 if none)",
    "session R@k": (
        f"share of the evidence sessions among the first k distinct sessions of the {RESULTS} "
        "hits, sessions ranked by their best-ranked turn (best turn over 50 hits)"
    ),
    "session R@5_hits": (
        "share of the evidence sessions that the first five hits themselves reach "
        "(what a reader of the first five hits sees)"
    ),
}

Category = int | str


class BenchError(Exception):
    """A set or a conversation that could not be loaded, ingested or indexed."""


# --- data ----------------------------------------------------------------------------------


@dataclass
class Turn:
    dia_id: str
    speaker: str  # a name, or "" when the set names no one (the role speaks)
    text: str  # as a person reads it
    time: dt.datetime
    role: str = "user"


@dataclass
class Session:
    n: int
    turns: list[Turn]


@dataclass
class Question:
    q: str
    cat: Category
    evidence: list[str]  # dia_ids; empty for a question the conversation cannot answer
    older: list[str] = field(default_factory=list)  # turns of a value since replaced
    newer: list[str] = field(default_factory=list)  # turns of the value that replaced it


@dataclass
class Conversation:
    name: str
    index: int  # 0-based position in the set
    sessions: list[Session]
    questions: list[Question]
    split: str = "tune"  # tune | heldout: only "tune" conversations may choose a weight

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]


@dataclass
class DataSet:
    """A conversation set as the bench runs it."""

    name: str  # locomo | beam
    source: str  # the path it was read from
    conversations: list[Conversation]
    categories: dict[Category, str]  # category -> its name, in report order
    split_rule: str  # how conversations were split into tune and held-out


# --- building the vaults -------------------------------------------------------------------


@dataclass
class Built:
    """A vault holding one conversation, and how its hits map back to dia_ids."""

    vault: Any
    dia_of: dict[tuple[str, str | None], str]  # (memory id, turn id or None) -> dia_id
    ingest_s: float
    index_s: float
    skipped: list[str] = field(default_factory=list)  # dia_ids ingest left out as secrets


def session_key(conv: Conversation, session: Session) -> str:
    return f"{conv.name}-session-{session.n}"


def transcript_lines(conv: Conversation, session: Session) -> list[dict[str, Any]]:
    """One session as generic-JSONL transcript lines (what an agent's log would hold)."""
    return [
        {
            "role": t.role,
            **({"name": t.speaker} if t.speaker else {}),
            "content": t.text,
            "timestamp": t.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "id": t.dia_id,
            "session": session_key(conv, session),
        }
        for t in session.turns
    ]


def new_vault(folder: Path, embedder: str | None) -> Any:
    from memvault import Vault

    if folder.exists():
        shutil.rmtree(folder)
    vault = Vault.init(folder)
    if embedder:
        vault.config.set("embedder", embedder)
    return vault


def build_transcripts(
    conv: Conversation, folder: Path, embedder: str | None, allow_secrets: bool = False
) -> Built:
    """A fresh vault; each session one JSONL transcript, imported with ``Vault.ingest``."""
    from memvault.transcripts import turn_key

    vault = new_vault(folder / "vault", embedder)
    files = folder / "transcripts"
    files.mkdir(parents=True, exist_ok=True)
    dia_of: dict[tuple[str, str | None], str] = {}
    skipped: list[str] = []
    ingest_s = 0.0
    for session in conv.sessions:
        lines = transcript_lines(conv, session)
        path = files / f"{session_key(conv, session)}.jsonl"
        path.write_text(
            "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines),
            encoding="utf-8",
        )
        left_out: set[str] = set()  # ingest redacts a secret-looking span, it drops no turn
        started = time.perf_counter()
        report = vault.ingest(path, allow_secrets=allow_secrets)
        ingest_s += time.perf_counter() - started
        expected = len(lines) - len(left_out)
        lost = report.added != expected or (expected and report.memory_id is None)
        # the only problems allowed are the screened lines' own
        screened = {f"{path}:{i + 1}" for i, line in enumerate(lines) if line["id"] in left_out}
        flagged = [p.path for p in report.problems if p.key == "content"]
        if lost or len(report.problems) != len(screened) or set(flagged) != screened:
            raise BenchError(
                f"{conv.name} session {session.n}: ingested {report.added}/{expected} turns, "
                f"{len(report.problems)} problem(s): {[str(p) for p in report.problems[:3]]}"
            )
        skipped += [line["id"] for line in lines if line["id"] in left_out]
        for line in lines:
            if line["id"] not in left_out:
                tid = turn_key(line["role"], line["content"], None, line["id"])
                dia_of[(report.memory_id, tid)] = line["id"]
    if len(dia_of) != len(conv.turns) - len(skipped):
        raise BenchError(f"{conv.name}: turn ids collide after slugifying ({len(dia_of)} kept)")
    return Built(vault, dia_of, ingest_s, index(vault), skipped)


def memory_id(i: int, dia_id: str) -> str:
    return f"t{i}-" + re.sub(r"[^a-z0-9]+", "-", dia_id.lower()).strip("-")


def build_turns_as_memories(
    conv: Conversation, folder: Path, embedder: str | None, allow_secrets: bool = False
) -> Built:
    """The older layout: every turn its own episodic memory (``speaker`` key, ``session``),
    imported in one commit with ``Vault.import_file``."""
    vault = new_vault(folder / "vault", embedder)
    dia_of: dict[tuple[str, str | None], str] = {}
    records: list[dict[str, Any]] = []
    for session in conv.sessions:
        for turn in session.turns:
            mid = memory_id(len(records), turn.dia_id)
            dia_of[(mid, None)] = turn.dia_id
            speaker = turn.speaker or turn.role
            records.append(
                {
                    "id": mid,
                    "type": "episodic",
                    "category": "conversation",
                    "created": turn.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "session": session_key(conv, session),
                    "speaker": speaker,
                    "content": f"{speaker}: {turn.text}",
                }
            )
    path = folder / "memories.jsonl"
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    started = time.perf_counter()
    report = vault.import_file(path, "jsonl", allow_secrets=allow_secrets)
    ingest_s = time.perf_counter() - started
    if report.problems or report.added != len(records):
        raise BenchError(
            f"{conv.name}: imported {report.added}/{len(records)} memories, "
            f"{len(report.problems)} problem(s): {[str(p) for p in report.problems[:3]]}"
        )
    return Built(vault, dia_of, ingest_s, index(vault))


def index(vault: Any) -> float:
    started = time.perf_counter()
    report = vault.reindex()
    if report.busy:
        raise BenchError(f"{vault.root}: the index was busy")
    return time.perf_counter() - started


BUILDERS: dict[str, Callable[[Conversation, Path, str | None, bool], Built]] = {
    "transcripts": build_transcripts,
    "turns-as-memories": build_turns_as_memories,
}
BUILT = "built.json"  # beside a kept vault: what ``build`` needs to use it again


def build(
    conv: Conversation,
    folder: Path,
    layout: str,
    embedder: str | None,
    allow_secrets: bool = False,
    reuse: bool = False,
) -> Built:
    """``conv``'s vault in ``folder``; with ``reuse``, the one an earlier run kept there (same
    layout, embedder and secret screening), whose index is then brought up to date."""
    record = folder / BUILT
    wanted = {"layout": layout, "embedder": embedder, "allow_secrets": allow_secrets}
    if reuse and record.is_file():
        from memvault import Vault

        kept = json.loads(record.read_text(encoding="utf-8"))
        if {k: kept.get(k) for k in wanted} == wanted:
            vault = Vault.open(folder / "vault")
            dia_of = {(m, t): d for m, t, d in kept["dia_of"]}
            return Built(vault, dia_of, kept["ingest_s"], index(vault), kept["skipped"])
    built = BUILDERS[layout](conv, folder, embedder, allow_secrets)
    dia_of_rows = [[m, t, d] for (m, t), d in built.dia_of.items()]
    kept = {**wanted, "dia_of": dia_of_rows, "ingest_s": built.ingest_s, "skipped": built.skipped}
    record.write_text(json.dumps(kept), encoding="utf-8")
    return built


# --- metrics -------------------------------------------------------------------------------

Row = tuple[Category, dict[str, float]]  # (category, metrics of one question)


def reciprocal_rank(ranked: Sequence[Any], wanted: set[Any]) -> float:
    return next((1 / (i + 1) for i, x in enumerate(ranked) if x in wanted), 0.0)


def score_ranking(
    ranked: Sequence[str], evidence: Sequence[str], session_of: dict[str, int]
) -> dict[str, float]:
    """Turn R@k, H@5, MRR and session R@k, H@5, MRR, R@5_hits, H@5_hits of one ranked list
    of dia_ids."""
    ev = set(evidence)
    out = {f"R@{k}": len(ev & set(ranked[:k])) / len(ev) for k in KS}
    out["H@5"] = float(bool(ev & set(ranked[:5])))
    out["MRR"] = reciprocal_rank(ranked, ev)
    sessions = list(dict.fromkeys(session_of[t] for t in ranked))
    ev_sessions = {session_of[e] for e in ev}
    for k in KS:
        out[f"sR@{k}"] = len(ev_sessions & set(sessions[:k])) / len(ev_sessions)
    out["sH@5"] = float(bool(ev_sessions & set(sessions[:5])))
    out["sMRR"] = reciprocal_rank(sessions, ev_sessions)
    reached = ev_sessions & {session_of[t] for t in ranked[:5]}
    out["sR@5_hits"] = len(reached) / len(ev_sessions)
    out["sH@5_hits"] = float(bool(reached))
    return out


def _mean(rows: Sequence[dict[str, float]], key: str) -> float | None:
    return round(100 * statistics.fmean(r[key] for r in rows), 1) if rows else None


def summarise(rows: Sequence[Row], categories: Iterable[Category] = ()) -> dict[str, Any]:
    """``{"turn": {overall, by_category, n}, "session": {overall, by_category}}``."""
    order = list(dict.fromkeys([*categories, *(cat for cat, _ in rows)]))
    out: dict[str, Any] = {}
    for level, prefix, metrics in (("turn", "", METRICS), ("session", "s", SESSION_METRICS)):
        plain = [r for _, r in rows]
        out[level] = {
            "overall": {m: _mean(plain, prefix + m) for m in metrics},
            "by_category": {
                str(c): {m: _mean([r for cat, r in rows if cat == c], prefix + m) for m in metrics}
                for c in order
            },
            "n": len(plain),
        }
    return out


def percentile(values: Sequence[float], q: float, digits: int = 1) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    at = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return round(ordered[at], digits)


# --- baselines -----------------------------------------------------------------------------


def bm25_ranker(texts: Sequence[str], dia_ids: Sequence[str]) -> Callable[[str], list[str]]:
    """Plain BM25 over ``texts`` with memvault's keyword-leg query (same tokenizer and
    stopwords: :func:`~memvault.index.query.query_tokens`, ``match_expression``) on an FTS5
    table tokenized ``porter unicode61``."""
    from memvault.index.query import match_expression, query_tokens

    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'porter unicode61')")
    db.executemany(
        "INSERT INTO t(rowid, body) VALUES (?, ?)", [(i + 1, t) for i, t in enumerate(texts)]
    )

    def rank(question: str) -> list[str]:
        expr = match_expression(query_tokens(question))
        if expr is None:
            return []
        rows = db.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid LIMIT ?",
            (expr, RESULTS),
        ).fetchall()
        return [dia_ids[r - 1] for (r,) in rows]

    return rank


def dense_ranker(
    texts: Sequence[str], dia_ids: Sequence[str], embedder: Any
) -> Callable[[str], list[str]]:
    """Plain cosine between the question and each text, with ``embedder``."""
    import numpy as np

    matrix = np.asarray(embedder.embed_documents(list(texts)), dtype=np.float32)

    def rank(question: str) -> list[str]:
        sims = matrix @ np.asarray(embedder.embed_query(question), dtype=np.float32)
        order = np.argsort(-sims, kind="stable")[:RESULTS]
        return [dia_ids[i] for i in order]

    return rank


def baseline_rankers(
    conv: Conversation, vault: Any, skipped: Iterable[str] = ()
) -> dict[str, Callable[[str], list[str]]]:
    """BM25 and dense over each turn's text, and over ``[date] speaker: text`` (the words
    memvault's index holds for a turn, besides its neighbours); over the turns the vault
    holds (none that ingest left out)."""
    from memvault.index.manifest import embedder_for
    from memvault.index.text import date_words

    left_out = set(skipped)
    turns = [t for t in conv.turns if t.dia_id not in left_out]
    dia = [t.dia_id for t in turns]
    texts = [t.text for t in turns]
    dated = [f"[{date_words(t.time)}] {t.speaker or t.role}: {t.text}" for t in turns]
    embedder = embedder_for(vault.core)
    bm25, dense = bm25_ranker(texts, dia), dense_ranker(texts, dia, embedder)
    return {
        "bm25": bm25,
        "dense": dense,
        "rrf": lambda q: rrf(bm25(q), dense(q)),
        "bm25_dated": bm25_ranker(dated, dia),
        "dense_dated": dense_ranker(dated, dia, embedder),
    }


def rrf(*rankings: Sequence[str]) -> list[str]:
    """Reciprocal-rank fusion (k = 60) of rankings of dia_ids."""
    return legs.rrf(*rankings, limit=RESULTS)


def leg_rankers(
    vault: Any, dia_of: dict[tuple[str, str | None], str]
) -> dict[str, Callable[[str], list[str]]]:
    """memvault's own two legs, each alone (a turn at the rank of its best chunk in the leg's
    list), and their reciprocal-rank fusion, as :func:`memvault.search.ranking.gather` runs
    them for ``recall`` (same pool, no filter)."""
    last: dict[str, dict[str, list[str]]] = {}

    def ranked(q: str) -> dict[str, list[str]]:
        if q in last:
            return last[q]
        found = legs.gather_legs(vault, q, RESULTS)

        def order(leg: list[tuple[int, int, float]]) -> list[str]:
            out: list[str] = []
            for rowid, doc, _ in leg:
                row, turn = found.rows.get(doc), found.turns.get(rowid)
                dia = dia_of.get((row.id, turn.turn if turn else None)) if row else None
                if dia is not None and dia not in out:
                    out.append(dia)
            return out[:RESULTS]

        keyword, vector = order(found.keyword), order(found.vector)
        last.clear()
        last[q] = {"keyword_leg": keyword, "vector_leg": vector, "rrf_legs": rrf(keyword, vector)}
        return last[q]

    return {name: (lambda q, name=name: ranked(q)[name]) for name in LEG_NAMES}


LEG_NAMES = ("keyword_leg", "vector_leg", "rrf_legs")
BASELINE_LABELS = {
    "bm25": "BM25 (turn text)",
    "dense": "dense cosine (turn text)",
    "rrf": "RRF k=60 of BM25 and dense (turn text)",
    "keyword_leg": "memvault's keyword leg alone",
    "vector_leg": "memvault's vector leg alone",
    "rrf_legs": "RRF k=60 of memvault's two legs",
    "bm25_dated": "BM25 ([date] speaker: text)",
    "dense_dated": "dense ([date] speaker: text)",
    "no_floor": "recall with no relevance floor (min_score=0)",
}


# --- running -------------------------------------------------------------------------------


@dataclass
class ConversationRun:
    name: str
    split: str
    rows: list[Row] = field(default_factory=list)
    baseline_rows: dict[str, list[Row]] = field(default_factory=dict)
    probes: list[dict[str, Any]] = field(default_factory=list)  # for beam_lifecycle.figures
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    stray_hits: int = 0  # hits that name no turn of the conversation (should stay 0)
    skipped_turns: int = 0  # turns ingest left out (they look like a credential)
    skipped_evidence: int = 0  # evidence turns among them (a miss for every ranking)
    embedder: str = ""  # the identity of the embedder the vault used
    ingest_s: float = 0.0
    index_s: float = 0.0
    baselines_s: float = 0.0


def ranked_dia_ids(hits: Iterable[Any], dia_of: dict[tuple[str, str | None], str]) -> list[str]:
    """The dia_ids of the hits, in order (hits that name no turn are left out)."""
    out = []
    for hit in hits:
        key = (hit.id, hit.turn.id if hit.turn is not None else None)
        if key in dia_of:
            out.append(dia_of[key])
    return out


def probe(q: Question, found: Any, ranked: Sequence[str]) -> dict[str, Any]:
    """What :mod:`beam_lifecycle` reads of one question: the top score, the ``nothing_relevant``
    flag when recall gives one, and where the older and newer value ranked (1-based)."""

    def first(ids: Sequence[str]) -> int | None:
        return next((i + 1 for i, x in enumerate(ranked) if x in set(ids)), None)

    return {
        "cat": str(q.cat),
        "answerable": bool(q.evidence),
        "top": round(found.hits[0].score, 4) if len(found) else None,
        "nothing_relevant": found.as_dict().get("nothing_relevant"),
        "hit5": bool(set(q.evidence) & set(ranked[:5])),
        "older": first(q.older) if q.older else None,
        "newer": first(q.newer) if q.newer else None,
        "update": bool(q.older and q.newer),
    }


def run_conversation(
    conv: Conversation,
    folder: Path,
    *,
    layout: str = "transcripts",
    embedder: str | None = None,
    baselines: bool = True,
    allow_secrets: bool = False,
    reuse: bool = False,
) -> ConversationRun:
    """Build ``conv``'s vault in ``folder`` and ask it every question."""
    from memvault.index.manifest import embedder_for

    built = build(conv, folder, layout, embedder, allow_secrets, reuse)
    skipped = set(built.skipped)
    result = ConversationRun(
        conv.name,
        conv.split,
        ingest_s=built.ingest_s,
        index_s=built.index_s,
        embedder=embedder_for(built.vault).identity,
        skipped_turns=len(skipped),
        skipped_evidence=sum(len(skipped & set(q.evidence)) for q in conv.questions),
    )
    session_of = {t.dia_id: s.n for s in conv.sessions for t in s.turns}
    rankers: dict[str, Callable[[str], list[str]]] = {}
    if baselines:
        started = time.perf_counter()
        rankers = baseline_rankers(conv, built.vault, skipped)
        vault, dia_of = built.vault, built.dia_of
        rankers.update(leg_rankers(vault, dia_of))
        # recall as users get it but with no relevance floor: what the floor costs answers
        rankers["no_floor"] = lambda q: ranked_dia_ids(
            vault.recall(q, limit=RESULTS, log=False, min_score=0.0), dia_of
        )
        result.baselines_s += time.perf_counter() - started
    result.baseline_rows = {name: [] for name in rankers}
    for q in conv.questions:
        try:
            started = time.perf_counter()
            found = built.vault.recall(q.q, limit=RESULTS, log=False)
            result.latencies_ms.append((time.perf_counter() - started) * 1000)
        except Exception as exc:  # counted and reported: the run then exits non-zero
            result.errors.append(f"{conv.name}: {q.q!r}: {type(exc).__name__}: {exc}")
            continue
        ranked = ranked_dia_ids(found, built.dia_of)
        result.stray_hits += len(found) - len(ranked)
        result.probes.append({"split": conv.split, **probe(q, found, ranked)})
        if not q.evidence:
            continue
        result.rows.append((q.cat, score_ranking(ranked, q.evidence, session_of)))
        started = time.perf_counter()
        for name, rank in rankers.items():
            result.baseline_rows[name].append(
                (q.cat, score_ranking(rank(q.q), q.evidence, session_of))
            )
        result.baselines_s += time.perf_counter() - started
    return result


def baseline_rows(run: ConversationRun, name: str) -> list[Row]:
    return run.baseline_rows[name]


def split_summary(
    runs: Sequence[ConversationRun],
    pick: Callable[[ConversationRun], list[Row]],
    categories: Iterable[Category] = (),
) -> dict[str, Any]:
    """Figures for all conversations, the tuning split and the held-out split."""
    order = list(categories)
    everything = summarise([r for run in runs for r in pick(run)], order)
    for split in ("tune", "heldout"):
        everything[split] = summarise(
            [r for run in runs if run.split == split for r in pick(run)], order
        )
    return everything


def evaluate(
    conversations: Sequence[Conversation],
    *,
    categories: Mapping[Category, str] | None = None,
    layout: str = "transcripts",
    embedder: str | None = None,
    workdir: Path | None = None,
    baselines: bool = True,
    allow_secrets: bool = False,
    reuse: bool = False,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the benchmark over ``conversations``; the result is what ``--json`` prints.

    Raises :class:`BenchError` when a conversation fails to ingest; question errors are
    counted in ``result["errors"]``.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"expected {'|'.join(LAYOUTS)}, got {layout!r}")
    order = list(categories or ())
    started = time.perf_counter()
    runs: list[ConversationRun] = []
    with contextlib.ExitStack() as stack:
        base = workdir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="conv-")))
        base.mkdir(parents=True, exist_ok=True)
        for conv in conversations:
            run = run_conversation(
                conv,
                base / f"conv{conv.index + 1}",
                layout=layout,
                embedder=embedder,
                baselines=baselines,
                allow_secrets=allow_secrets,
                reuse=reuse,
            )
            runs.append(run)
            if progress:
                part = summarise(run.rows)["turn"]["overall"]
                progress(
                    f"{conv.name} ({conv.split}): {len(conv.turns)} turns, "
                    f"{len(conv.questions)} questions, ingest {run.ingest_s:.1f} s, "
                    f"index {run.index_s:.1f} s; turn R@5 {part['R@5']}"
                )
    figures = split_summary(runs, lambda r: r.rows, order)
    latencies = [ms for run in runs for ms in run.latencies_ms]
    return {
        "turn": figures["turn"],
        "session": figures["session"],
        "tune": figures["tune"],
        "heldout": figures["heldout"],
        "baselines": {
            name: split_summary(runs, partial(baseline_rows, name=name), order)
            for name in (runs[0].baseline_rows if runs else {})
        },
        "lifecycle": beam_lifecycle.figures([p for run in runs for p in run.probes]),
        "definitions": DEFINITIONS,
        "layout": layout,
        "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
        "embedder": runs[0].embedder if runs else embedder,
        "conversations": [{"name": r.name, "split": r.split} for r in runs],
        "errors": [e for run in runs for e in run.errors],
        "stray_hits": sum(run.stray_hits for run in runs),
        "skipped_turns": sum(run.skipped_turns for run in runs),
        "skipped_evidence": sum(run.skipped_evidence for run in runs),
        "timing_s": {
            "ingest": round(sum(r.ingest_s for r in runs), 1),
            "index": round(sum(r.index_s for r in runs), 1),
            "baselines": round(sum(r.baselines_s for r in runs), 1),
            "total": round(time.perf_counter() - started, 1),
        },
    }


# --- output --------------------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    return f"{value:6.1f}" if value is not None else f"{'-':>6s}"


HEAD = f"{'':38s} " + " ".join(f"{m:>6s}" for m in METRICS)


def _row(name: str, m: dict[str, float | None]) -> str:
    return f"{name:38s} " + " ".join(_fmt(m[k]) for k in METRICS)


def _part(title: str, part: dict[str, Any], names: Mapping[str, str]) -> list[str]:
    lines = [f"memvault recall, {title}: {part['turn']['n']} questions with evidence", HEAD]
    for c, m in part["turn"]["by_category"].items():
        lines.append(_row(f"  turn, {names.get(c, c)}", m))
    lines.append(_row("  turn, overall", part["turn"]["overall"]))
    lines.append(_row("  session R@k (best turn of 50 hits)", part["session"]["overall"]))
    reached = part["session"]["overall"]
    lines.append(
        f"{'  sessions the first 5 hits reach':38s} {'':6s} {_fmt(reached['R@5_hits'])} "
        f"{'':6s} {_fmt(reached['H@5_hits'])}"
    )
    return [*lines, ""]


def table(result: dict[str, Any]) -> str:
    """One set's figures as text (``--json`` prints the same as data)."""
    layout = result["layout"]
    label = (
        "transcripts: one ingested transcript per session (the path users take)"
        if layout == "transcripts"
        else "turns-as-memories: every turn its own memory (NOT what users' agents write)"
    )
    names = {str(k): v for k, v in (result.get("categories") or {}).items()}
    convs = ", ".join(f"{c['name']} ({c['split']})" for c in result["conversations"])
    lines = [
        f"== {result.get('set', 'conversations')}: {result.get('data', '')}",
        f"layout: {label}",
        f"conversations: {convs}",
        f"split: {result.get('split_rule', '')}",
        f"embedder: {result['embedder']}",
        "",
    ]
    parts = [("all", result)]
    if result["tune"]["turn"]["n"] and result["heldout"]["turn"]["n"]:
        parts += [("tune", result["tune"]), ("held-out", result["heldout"])]
    for title, part in parts:
        lines += _part(title, part, names)
    lines += [f"  {k}: {v}" for k, v in DEFINITIONS.items() if k.startswith("session")]
    lines.append("")
    if result["baselines"]:
        lines.append("baselines (same run, same turns; all / tune / held-out)")
        lines.append(HEAD)
        for name, figures in result["baselines"].items():
            lines.append(
                _row(f"  {BASELINE_LABELS.get(name, name)} turn", figures["turn"]["overall"])
            )
            lines.append(_row("    session", figures["session"]["overall"]))
            for split in ("tune", "heldout"):
                if figures[split]["turn"]["n"]:
                    lines.append(_row(f"    {split} turn", figures[split]["turn"]["overall"]))
        lines.append("")
    lines += beam_lifecycle.table(result["lifecycle"])
    t, lat = result["timing_s"], result["latency_ms"]
    lines.append(
        f"recall per question p50 {lat['p50']} ms, p95 {lat['p95']} ms (in-process); "
        f"ingest {t['ingest']} s, index {t['index']} s, baselines {t['baselines']} s, "
        f"total {t['total']} s"
    )
    if result["skipped_turns"]:
        lines.append(
            f"note: ingest left out {result['skipped_turns']} turns that look like a credential "
            f"(as a user's default ingest does; --allow-secrets keeps them), "
            f"{result['skipped_evidence']} of them evidence: misses for every ranking"
        )
    if result["stray_hits"]:
        lines.append(f"note: {result['stray_hits']} hits named no turn of the conversation")
    return "\n".join(lines)
