"""LoCoMo retrieval benchmark, through the path users take: transcripts in, ``recall`` out.

    python bench/locomo.py --data path/to/locomo10.json
    python bench/locomo.py --data path/to/locomo10.json --json
    python bench/locomo.py --data path/to/locomo10.json --layout turns-as-memories

LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0) comes from
https://github.com/snap-research/locomo (``data/locomo10.json``). Any JSON file of that
format works: a list of samples, each with ``conversation`` (``session_N`` lists of turns
``{speaker, dia_id, text}``, optional ``blip_caption``, and ``session_N_date_time``) and
``qa`` (``question``, ``evidence`` dia_ids, ``category``).

Default layout, ``transcripts`` (what ``memvault ingest`` / ``memvault log`` / MCP
``log_turn`` produce): for each conversation a fresh vault; each session is written as one
generic-JSONL transcript file (one line per turn: ``role: user``, ``name`` = the speaker,
``content`` = the text plus `` [image: caption]`` when the turn shared a picture,
``timestamp`` = the session's date-time + i minutes, ``id`` = the dia_id, ``session`` =
``<conv>-session-<n>``) and imported with :func:`memvault.ingest.ingest_file`, the function
``memvault ingest`` calls. The index is built with ``vault.reindex()`` and every question
of categories 1-4 with usable evidence is asked with
``vault.recall(question, limit=50, log=False)``. A hit is a returned turn whose turn id
maps to an evidence dia_id.

``--layout turns-as-memories`` is the older, second figure: every turn imported as its
own episodic memory (``memvault import``), a layout no user's agent writes.

Reported, in percent: turn R@1/5/10 (share of the evidence turns in the first k) and H@5
(any evidence turn in the first 5) per category (1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop) and overall; session R@k (the share of the evidence sessions among the first
k distinct sessions, sessions ranked by their best-ranked turn; H@5: any of them there) and
session R@5_hits (the share of the evidence sessions that the first five hits reach: what a
reader of five hits sees) and H@5_hits (any of them reached); all of it for conversations
1-5 ("tune": the only ones any weight may be tuned on), 6-10 ("heldout") and all.
Baselines from the same run on the same turns: BM25 (SQLite FTS5 ``porter unicode61`` with
memvault's own query tokenizer and stopword list) and plain dense cosine with the vault's
embedder, each over the turn's text and over ``[date] speaker: text``. Recall latency is
per question, in-process.

Exit status 1 when any conversation fails to ingest or any question raises.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import re
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

LAYOUTS = ("transcripts", "turns-as-memories")
CATEGORIES = (1, 2, 3, 4)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (1, 5, 10)
METRICS = ("R@1", "R@5", "R@10", "H@5")
# Session level also: the share of the evidence sessions that the first five hits reach,
# and whether they reach any.
SESSION_METRICS = (*METRICS, "R@5_hits", "H@5_hits")
RESULTS = 50  # results asked per question (ranking sessions needs more than 10 turns)
TUNE_CONVERSATIONS = 5  # conversations 1-5 are the tuning split, the rest are held out
DATA_HELP = (
    "A LoCoMo-format JSON file (default: $LOCOMO_DATA). LoCoMo itself comes from "
    "github.com/snap-research/locomo (data/locomo10.json, CC BY-NC 4.0); any file of that "
    "format works."
)

_DATE_RE = re.compile(r"(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)
_MONTHS = [
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
]


class BenchError(Exception):
    """A conversation that could not be ingested or indexed."""


# --- data ----------------------------------------------------------------------------------


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str  # as a person reads it: the words, plus " [image: caption]"
    time: dt.datetime


@dataclass
class Session:
    n: int
    turns: list[Turn]


@dataclass
class Question:
    q: str
    cat: int
    evidence: list[str]  # dia_ids


@dataclass
class Conversation:
    name: str  # the sample id ("conv-26")
    index: int  # 0-based position in the file
    sessions: list[Session]
    questions: list[Question]

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]

    @property
    def split(self) -> str:
        return "tune" if self.index < TUNE_CONVERSATIONS else "heldout"


def session_time(text: str) -> dt.datetime:
    """``"1:56 pm on 8 May, 2023"`` -> an aware datetime (noon of 2000-01-01 if unparseable)."""
    m = _DATE_RE.search(text or "")
    if not m:
        return dt.datetime(2000, 1, 1, 12, tzinfo=dt.UTC)
    hour, minute, ampm, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    mon = _MONTHS.index(month.lower()) + 1 if month.lower() in _MONTHS else 1
    return dt.datetime(int(year), mon, int(day), h, int(minute), tzinfo=dt.UTC)


def parse_evidence(items: Iterable[Any], known: set[str]) -> list[str]:
    """Evidence dia_ids that name a turn of the conversation.

    Tolerates ``"D8:6; D9:17"`` and ``"D30:05"``; skips what doesn't parse (``"D10:1a"``).
    """
    found: set[str] = set()
    for item in items:
        for a, b in re.findall(r"D(\d+):(\d+)(?!\w)", str(item)):
            key = f"D{int(a)}:{int(b)}"
            if key in known:
                found.add(key)
    return sorted(found)


def load(path: Path) -> list[Conversation]:
    """The conversations of a LoCoMo-format file, with their questions of categories 1-4
    that have usable evidence."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for ci, sample in enumerate(data):
        conv = sample["conversation"]
        numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
        sessions = []
        for n in numbers:
            start = session_time(conv.get(f"session_{n}_date_time", ""))
            turns = []
            for i, raw in enumerate(conv[f"session_{n}"] or []):
                text = str(raw.get("text", ""))
                caption = raw.get("blip_caption")
                if caption:
                    text += f" [image: {caption}]"
                turns.append(
                    Turn(
                        str(raw["dia_id"]),
                        str(raw["speaker"]),
                        text,
                        start + dt.timedelta(minutes=i),
                    )
                )
            if turns:
                sessions.append(Session(n, turns))
        known = {t.dia_id for s in sessions for t in s.turns}
        questions = []
        for qa in sample.get("qa", []):
            if qa.get("category") not in CATEGORIES:
                continue
            evidence = parse_evidence(qa.get("evidence", []), known)
            if evidence:
                questions.append(Question(str(qa["question"]), int(qa["category"]), evidence))
        name = str(sample.get("sample_id") or f"conv-{ci + 1}")
        out.append(Conversation(name, ci, sessions, questions))
    return out


# --- building the vaults -------------------------------------------------------------------


@dataclass
class Built:
    """A vault holding one conversation, and how its hits map back to dia_ids."""

    vault: Any
    dia_of: dict[tuple[str, str | None], str]  # (memory id, turn id or None) -> dia_id
    ingest_s: float
    index_s: float


def session_key(conv: Conversation, session: Session) -> str:
    return f"{conv.name}-session-{session.n}"


def transcript_lines(conv: Conversation, session: Session) -> list[dict[str, Any]]:
    """One session as generic-JSONL transcript lines (what an agent's log would hold)."""
    return [
        {
            "role": "user",
            "name": t.speaker,
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


def build_transcripts(conv: Conversation, folder: Path, embedder: str | None) -> Built:
    """A fresh vault; each session one JSONL transcript, imported with ``ingest_file``."""
    from memvault.ingest import ingest_file
    from memvault.transcripts import turn_key

    vault = new_vault(folder / "vault", embedder)
    files = folder / "transcripts"
    files.mkdir(parents=True, exist_ok=True)
    dia_of: dict[tuple[str, str | None], str] = {}
    ingest_s = 0.0
    for session in conv.sessions:
        lines = transcript_lines(conv, session)
        path = files / f"{session_key(conv, session)}.jsonl"
        path.write_text(
            "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines),
            encoding="utf-8",
        )
        started = time.perf_counter()
        report = ingest_file(vault.core, path)
        ingest_s += time.perf_counter() - started
        if report.problems or report.added != len(lines) or report.memory_id is None:
            raise BenchError(
                f"{conv.name} session {session.n}: ingested {report.added}/{len(lines)} turns, "
                f"{len(report.problems)} problem(s): {[str(p) for p in report.problems[:3]]}"
            )
        for line in lines:
            tid = turn_key(line["role"], line["content"], None, line["id"])
            dia_of[(report.memory_id, tid)] = line["id"]
    if len(dia_of) != len(conv.turns):
        raise BenchError(f"{conv.name}: turn ids collide after slugifying ({len(dia_of)} kept)")
    return Built(vault, dia_of, ingest_s, index(vault))


def memory_id(i: int, dia_id: str) -> str:
    return f"t{i}-" + re.sub(r"[^a-z0-9]+", "-", dia_id.lower()).strip("-")


def build_turns_as_memories(conv: Conversation, folder: Path, embedder: str | None) -> Built:
    """The older layout: every turn its own episodic memory (``speaker`` key, ``session``),
    imported in one commit with :func:`memvault.transfer.import_file`."""
    from memvault.transfer import import_file

    vault = new_vault(folder / "vault", embedder)
    dia_of: dict[tuple[str, str | None], str] = {}
    records: list[dict[str, Any]] = []
    for session in conv.sessions:
        for turn in session.turns:
            mid = memory_id(len(records), turn.dia_id)
            dia_of[(mid, None)] = turn.dia_id
            records.append(
                {
                    "id": mid,
                    "type": "episodic",
                    "category": "conversation",
                    "created": turn.time.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "session": session_key(conv, session),
                    "speaker": turn.speaker,
                    "content": f"{turn.speaker}: {turn.text}",
                }
            )
    path = folder / "memories.jsonl"
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    started = time.perf_counter()
    report = import_file(vault.core, path, "jsonl")
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


BUILDERS: dict[str, Callable[[Conversation, Path, str | None], Built]] = {
    "transcripts": build_transcripts,
    "turns-as-memories": build_turns_as_memories,
}


# --- metrics -------------------------------------------------------------------------------

Row = tuple[int, dict[str, float]]  # (category, metrics of one question)


def score_ranking(
    ranked: Sequence[str], evidence: Sequence[str], session_of: dict[str, int]
) -> dict[str, float]:
    """Turn R@k, H@5 and session R@k, H@5, R@5_hits, H@5_hits of one ranked list of dia_ids."""
    ev = set(evidence)
    out = {f"R@{k}": len(ev & set(ranked[:k])) / len(ev) for k in KS}
    out["H@5"] = float(bool(ev & set(ranked[:5])))
    sessions = list(dict.fromkeys(session_of[t] for t in ranked))
    ev_sessions = {session_of[e] for e in ev}
    for k in KS:
        out[f"sR@{k}"] = len(ev_sessions & set(sessions[:k])) / len(ev_sessions)
    out["sH@5"] = float(bool(ev_sessions & set(sessions[:5])))
    reached = ev_sessions & {session_of[t] for t in ranked[:5]}
    out["sR@5_hits"] = len(reached) / len(ev_sessions)
    out["sH@5_hits"] = float(bool(reached))
    return out


def _mean(rows: Sequence[dict[str, float]], key: str) -> float | None:
    return round(100 * statistics.fmean(r[key] for r in rows), 1) if rows else None


def summarise(rows: Sequence[Row]) -> dict[str, Any]:
    """``{"turn": {overall, by_category, n}, "session": {overall, by_category}}``."""
    out: dict[str, Any] = {}
    for level, prefix, metrics in (("turn", "", METRICS), ("session", "s", SESSION_METRICS)):
        plain = [r for _, r in rows]
        out[level] = {
            "overall": {m: _mean(plain, prefix + m) for m in metrics},
            "by_category": {
                str(c): {m: _mean([r for cat, r in rows if cat == c], prefix + m) for m in metrics}
                for c in CATEGORIES
            },
            "n": len(plain),
        }
    return out


def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    at = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return round(ordered[at], 1)


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


def baseline_rankers(conv: Conversation, vault: Any) -> dict[str, Callable[[str], list[str]]]:
    """BM25 and dense over each turn's text, and over ``[date] speaker: text`` (the words
    memvault's index holds for a turn, besides its neighbours)."""
    from memvault.index.manifest import embedder_for
    from memvault.index.text import date_words

    turns = conv.turns
    dia = [t.dia_id for t in turns]
    texts = [t.text for t in turns]
    dated = [f"[{date_words(t.time)}] {t.speaker}: {t.text}" for t in turns]
    embedder = embedder_for(vault.core)
    return {
        "bm25": bm25_ranker(texts, dia),
        "dense": dense_ranker(texts, dia, embedder),
        "bm25_dated": bm25_ranker(dated, dia),
        "dense_dated": dense_ranker(dated, dia, embedder),
    }


BASELINE_LABELS = {
    "bm25": "BM25 (turn text)",
    "dense": "dense cosine (turn text)",
    "bm25_dated": "BM25 ([date] speaker: text)",
    "dense_dated": "dense ([date] speaker: text)",
}


# --- running -------------------------------------------------------------------------------


@dataclass
class ConversationRun:
    name: str
    split: str
    rows: list[Row] = field(default_factory=list)
    baseline_rows: dict[str, list[Row]] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    stray_hits: int = 0  # hits that name no turn of the conversation (should stay 0)
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


def run_conversation(
    conv: Conversation,
    folder: Path,
    *,
    layout: str = "transcripts",
    embedder: str | None = None,
    baselines: bool = True,
) -> ConversationRun:
    """Build ``conv``'s vault in ``folder`` and ask it every question."""
    from memvault.index.manifest import embedder_for

    built = BUILDERS[layout](conv, folder, embedder)
    result = ConversationRun(
        conv.name,
        conv.split,
        ingest_s=built.ingest_s,
        index_s=built.index_s,
        embedder=embedder_for(built.vault).identity,
    )
    session_of = {t.dia_id: s.n for s in conv.sessions for t in s.turns}
    rankers: dict[str, Callable[[str], list[str]]] = {}
    if baselines:
        started = time.perf_counter()
        rankers = baseline_rankers(conv, built.vault)
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
    runs: Sequence[ConversationRun], pick: Callable[[ConversationRun], list[Row]]
) -> dict[str, Any]:
    """Figures for all conversations, the tuning split and the held-out split."""
    everything = summarise([r for run in runs for r in pick(run)])
    for split in ("tune", "heldout"):
        everything[split] = summarise([r for run in runs if run.split == split for r in pick(run)])
    return everything


def evaluate(
    conversations: Sequence[Conversation],
    *,
    layout: str = "transcripts",
    embedder: str | None = None,
    workdir: Path | None = None,
    baselines: bool = True,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the benchmark over ``conversations``; the result is what ``--json`` prints.

    Raises :class:`BenchError` when a conversation fails to ingest; question errors are
    counted in ``result["errors"]``.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"expected {'|'.join(LAYOUTS)}, got {layout!r}")
    started = time.perf_counter()
    runs: list[ConversationRun] = []
    with contextlib.ExitStack() as stack:
        base = workdir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="locomo-")))
        base.mkdir(parents=True, exist_ok=True)
        for conv in conversations:
            run = run_conversation(
                conv,
                base / f"conv{conv.index + 1}",
                layout=layout,
                embedder=embedder,
                baselines=baselines,
            )
            runs.append(run)
            if progress:
                part = summarise(run.rows)["turn"]["overall"]
                progress(
                    f"{conv.name} ({conv.split}): {len(conv.turns)} turns, "
                    f"{len(conv.questions)} questions, ingest {run.ingest_s:.1f} s, "
                    f"index {run.index_s:.1f} s; turn R@5 {part['R@5']}"
                )
    figures = split_summary(runs, lambda r: r.rows)
    latencies = [ms for run in runs for ms in run.latencies_ms]
    result: dict[str, Any] = {
        "turn": figures["turn"],
        "session": figures["session"],
        "tune": figures["tune"],
        "heldout": figures["heldout"],
        "baselines": {
            name: split_summary(runs, partial(baseline_rows, name=name))
            for name in (runs[0].baseline_rows if runs else {})
        },
        "layout": layout,
        "latency_ms": {"p50": percentile(latencies, 50), "p95": percentile(latencies, 95)},
        "embedder": runs[0].embedder if runs else embedder,
        "conversations": [{"name": r.name, "split": r.split} for r in runs],
        "errors": [e for run in runs for e in run.errors],
        "stray_hits": sum(run.stray_hits for run in runs),
        "timing_s": {
            "ingest": round(sum(r.ingest_s for r in runs), 1),
            "index": round(sum(r.index_s for r in runs), 1),
            "baselines": round(sum(r.baselines_s for r in runs), 1),
            "total": round(time.perf_counter() - started, 1),
        },
    }
    return result


# --- output --------------------------------------------------------------------------------


def _fmt(value: float | None) -> str:
    return f"{value:6.1f}" if value is not None else f"{'-':>6s}"


def table(result: dict[str, Any]) -> str:
    head = f"{'':34s} {'R@1':>6s} {'R@5':>6s} {'R@10':>6s} {'H@5':>6s}"

    def row(name: str, m: dict[str, float | None]) -> str:
        return f"{name:34s} " + " ".join(_fmt(m[k]) for k in METRICS)

    layout = result["layout"]
    label = (
        "transcripts: one ingested transcript per session (the path users take)"
        if layout == "transcripts"
        else "turns-as-memories: every turn its own memory (NOT what users' agents write)"
    )
    names = ", ".join(f"{c['name']} ({c['split']})" for c in result["conversations"])
    lines = [
        f"layout: {label}",
        f"categories 1-4: {result['turn']['n']} questions; conversations: {names}",
        f"embedder: {result['embedder']}",
        "",
    ]
    parts = [("all", result)]
    if result["tune"]["turn"]["n"] and result["heldout"]["turn"]["n"]:
        parts += [("tune (1-5)", result["tune"]), ("held-out (6+)", result["heldout"])]
    for title, part in parts:
        lines.append(f"memvault recall, {title}: {part['turn']['n']} questions")
        lines.append(head)
        for c, m in part["turn"]["by_category"].items():
            lines.append(row(f"  turn, cat {c} {CATEGORY_NAMES[int(c)]}", m))
        lines.append(row("  turn, overall", part["turn"]["overall"]))
        lines.append(row("  session (by best turn), overall", part["session"]["overall"]))
        reached = part["session"]["overall"]
        lines.append(
            f"{'  sessions of the first 5 hits':34s} {'':6s} {_fmt(reached['R@5_hits'])} "
            f"{'':6s} {_fmt(reached['H@5_hits'])}"
        )
        lines.append("")
    if result["baselines"]:
        lines.append("baselines (same run, same turns; all / held-out)")
        lines.append(head)
        for name, figures in result["baselines"].items():
            label = BASELINE_LABELS.get(name, name)
            lines.append(row(f"  {label} turn", figures["turn"]["overall"]))
            lines.append(row("    session", figures["session"]["overall"]))
            if figures["heldout"]["turn"]["n"]:
                lines.append(row("    held-out turn", figures["heldout"]["turn"]["overall"]))
        lines.append("")
    t, lat = result["timing_s"], result["latency_ms"]
    lines.append(
        f"recall per question p50 {lat['p50']} ms, p95 {lat['p95']} ms (in-process); "
        f"ingest {t['ingest']} s, index {t['index']} s, baselines {t['baselines']} s, "
        f"total {t['total']} s"
    )
    if result["stray_hits"]:
        lines.append(f"note: {result['stray_hits']} hits named no turn of the conversation")
    return "\n".join(lines)


def resolve_data(value: str | None) -> Path:
    if not value:
        raise SystemExit("--data is required (or set $LOCOMO_DATA): " + DATA_HELP)
    path = Path(value).expanduser()
    if not path.is_file():
        raise SystemExit(f"no such file: {path}")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=os.environ.get("LOCOMO_DATA") or None, help=DATA_HELP)
    parser.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="transcripts",
        help="transcripts (default: one ingested transcript per session, as users' agents "
        "write them) or turns-as-memories (the older per-turn import, a second figure only).",
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
    parser.add_argument("--no-baselines", action="store_true", help="Skip BM25 and dense.")
    parser.add_argument("--json", action="store_true", help="Print one JSON object, only that.")
    args = parser.parse_args(argv)
    convs = load(resolve_data(args.data))
    if args.limit_conversations:
        convs = convs[: args.limit_conversations]

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        # Nothing but the result may reach stdout (``--json`` is read by programs).
        with contextlib.redirect_stdout(sys.stderr):
            result = evaluate(
                convs,
                layout=args.layout,
                embedder=args.embedder,
                workdir=Path(args.workdir) if args.workdir else None,
                baselines=not args.no_baselines,
                progress=progress,
            )
    except BenchError as exc:
        print(f"ingest failed: {exc}", file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        return 1
    print(json.dumps(result) if args.json else table(result))
    if result["errors"]:
        print(f"{len(result['errors'])} question(s) failed:", file=sys.stderr)
        for line in result["errors"][:10]:
            print("  " + line, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
