"""Conversation retrieval benchmark, through the path users take: transcripts in, ``recall``
out. LoCoMo, BEAM, or both in one run, side by side.

    python bench/locomo.py --data path/to/locomo10.json
    python bench/locomo.py --data path/to/locomo10.json --data path/to/BEAM/chats/100K --json
    python bench/locomo.py --data path/to/locomo10.json --layout turns-as-memories

``--data`` is a LoCoMo-format JSON file or a folder of BEAM conversations (read by
``bench/beam.py``; where to get it, and how it becomes transcripts: its docstring); give it
several times to run several sets in one run. The harness is ``bench/conversations.py``.

LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0) comes from
https://github.com/snap-research/locomo (``data/locomo10.json``). Any JSON file of that
format works: a list of samples, each with ``conversation`` (``session_N`` lists of turns
``{speaker, dia_id, text}``, optional ``blip_caption``, and ``session_N_date_time``) and
``qa`` (``question``, ``evidence`` dia_ids, ``category``).

Default layout, ``transcripts`` (what ``memvault ingest`` / ``memvault log`` / MCP
``log_turn`` produce): for each conversation a fresh vault; each session is written as one
generic-JSONL transcript file (one line per turn: ``role`` (LoCoMo: ``user``), ``name`` = the
speaker, ``content`` = the text plus `` [image: caption]`` when the turn shared a picture,
``timestamp`` = the session's date-time + i minutes, ``id`` = the dia_id, ``session`` =
``<conv>-session-<n>``) and imported with ``Vault.ingest``, what ``memvault ingest`` calls.
Turns that look like a credential are left out as a user's default ingest leaves them out
(counted; ``--allow-secrets`` keeps them). The index is built with ``vault.reindex()`` and
every question (LoCoMo: categories 1-4 with usable evidence) is asked with
``vault.recall(question, limit=50, log=False)``. A hit is a returned turn whose turn id
maps to an evidence dia_id.

``--layout turns-as-memories`` is the older, second figure: every turn imported as its
own episodic memory (``memvault import``), a layout no user's agent writes.

Reported, in percent: turn R@1/5/10 (share of the evidence turns in the first k), H@5
(any evidence turn in the first 5) and MRR (1 / rank of the first evidence turn in the 50
hits) per category (LoCoMo: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop; BEAM: its
abilities) and overall; session R@k (the share of the evidence sessions among the first k
distinct sessions, sessions ranked by their best-ranked turn over the 50 hits; H@5: any of
them there) and session R@5_hits (the share of the evidence sessions that the first five
hits reach: what a reader of five hits sees) and H@5_hits (any of them reached); all of it
for the tune split (LoCoMo conversations 1-5, the only ones any weight may be tuned on;
BEAM: ``beam.SPLIT_RULE``), the held-out split and all. For sets with unanswerable or
knowledge-update questions (BEAM), ``bench/beam_lifecycle.py``'s figures: top scores of
unanswerable vs answerable questions and what a relevance floor would do, and whether the
newer value ranks above the older.
Baselines from the same run on the same turns: BM25 (SQLite FTS5 ``porter unicode61`` with
memvault's own query tokenizer and stopword list) and plain dense cosine with the vault's
embedder, each over the turn's text and over ``[date] speaker: text``; RRF (k = 60) of the
two over the turn's text; memvault's own keyword leg and vector leg, each alone, and RRF
(k = 60) of the two (what ``recall`` fuses, ranked without its fusion). Recall latency is
per question, in-process. ``--workdir DIR --reuse`` keeps the vaults and asks them again
in a later run (a change to search needs no new index; a BEAM conversation takes minutes
to index).

``--json`` prints one object: a set's figures, or ``{"sets": [...]}`` with several --data.
Exit status 1 when a set loads no conversation or no question with evidence, when any
conversation fails to ingest or any question raises.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import re
import sys
import traceback
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.append(str(ROOT / "bench"))  # after site-packages: bench/mcp.py is no SDK
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import beam  # noqa: E402  (bench/ is on the path only now)
from conversations import (  # noqa: E402
    LAYOUTS,
    BenchError,
    Conversation,
    DataSet,
    Question,
    Session,
    Turn,
    build_transcripts,
    evaluate,
    score_ranking,
    table,
    transcript_lines,
)

__all__ = [
    "BenchError",
    "build_transcripts",
    "evaluate",
    "load",
    "main",
    "read_set",
    "score_ranking",
    "transcript_lines",
]

CATEGORIES = (1, 2, 3, 4)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TUNE_CONVERSATIONS = 5  # conversations 1-5 are the tuning split, the rest are held out
SPLIT_RULE = "LoCoMo conversations 1-5 tune, 6-10 held out"
DATA_HELP = (
    "A LoCoMo-format JSON file, or a folder of BEAM conversations (BEAM's chats/100K, "
    "github.com/mohammadtavakoli78/BEAM); give it more than once to run several sets side "
    "by side (default: $LOCOMO_DATA). LoCoMo itself comes from github.com/snap-research/locomo "
    "(data/locomo10.json, CC BY-NC 4.0); any file of that format works."
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


# --- data ----------------------------------------------------------------------------------


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
        split = "tune" if ci < TUNE_CONVERSATIONS else "heldout"
        out.append(Conversation(name, ci, sessions, questions, split))
    return out


def read_set(path: Path) -> DataSet:
    """The set at ``path``: a folder of BEAM conversations, or a LoCoMo-format file."""
    if beam.is_beam(path):
        return beam.load(path)
    try:
        conversations = load(path)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise BenchError(f"{path}: not a LoCoMo-format file ({type(exc).__name__}: {exc})") from exc
    names: dict[Any, str] = dict(CATEGORY_NAMES)
    return DataSet("locomo", str(path), conversations, names, SPLIT_RULE)


def check_set(data: DataSet) -> None:
    """Refuse a set the figures would be empty for: no conversation, or no question whose
    evidence names a turn (a format mismatch reads as zeros otherwise)."""
    if not data.conversations:
        raise BenchError(f"{data.source}: no conversation loaded")
    if not any(q.evidence for c in data.conversations for q in c.questions):
        raise BenchError(f"{data.source}: no question with evidence that names a turn")


def resolve_data(value: str | None) -> Path:
    if not value:
        raise SystemExit("--data is required (or set $LOCOMO_DATA): " + DATA_HELP)
    path = Path(value).expanduser()
    if not path.is_file() and not beam.is_beam(path):
        raise SystemExit(f"no such file, nor a folder of BEAM conversations: {path}")
    return path


def run_set(data: DataSet, args: argparse.Namespace) -> dict[str, Any]:
    """One set's figures, labelled with where they come from."""
    convs = data.conversations[: args.limit_conversations or None]

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    result = evaluate(
        convs,
        categories=data.categories,
        layout=args.layout,
        embedder=args.embedder,
        workdir=Path(args.workdir) / data.name if args.workdir else None,
        baselines=not args.no_baselines,
        allow_secrets=args.allow_secrets,
        reuse=args.reuse,
        progress=progress,
    )
    labels = {
        "set": data.name,
        "data": data.source,
        "split_rule": data.split_rule,
        "categories": {str(k): v for k, v in data.categories.items()},
    }
    return {**labels, **result}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", action="append", default=None, help=DATA_HELP)
    parser.add_argument(
        "--layout",
        choices=LAYOUTS,
        default="transcripts",
        help="transcripts (default: one ingested transcript per session, as users' agents "
        "write them) or turns-as-memories (the older per-turn import, a second figure only).",
    )
    parser.add_argument(
        "--limit-conversations",
        type=int,
        default=0,
        help="Only the first N conversations of each set.",
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
        help="With --workdir: use the vaults an earlier run kept there (same layout, embedder "
        "and --allow-secrets) instead of building them again; search changes need no rebuild.",
    )
    parser.add_argument("--no-baselines", action="store_true", help="Skip BM25 and dense.")
    parser.add_argument(
        "--allow-secrets",
        action="store_true",
        help="Keep turns that look like a credential (as 'memvault ingest --allow-secrets'); "
        "by default they are left out, as a user's ingest leaves them out, and counted.",
    )
    parser.add_argument("--json", action="store_true", help="Print one JSON object, only that.")
    args = parser.parse_args(argv)
    paths = [resolve_data(v) for v in args.data or [os.environ.get("LOCOMO_DATA", "")]]
    results = []
    try:
        # Nothing but the result may reach stdout (``--json`` is read by programs).
        with contextlib.redirect_stdout(sys.stderr):
            sets = [read_set(path) for path in paths]
            for data in sets:
                check_set(data)
            results = [run_set(data, args) for data in sets]
    except BenchError as exc:
        print(f"bench failed: {exc}", file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        return 1
    if args.json:
        print(json.dumps(results[0] if len(results) == 1 else {"sets": results}))
    else:
        print("\n\n".join(table(result) for result in results))
    errors = [e for result in results for e in result["errors"]]
    if errors:
        print(f"{len(errors)} question(s) failed:", file=sys.stderr)
        for line in errors[:10]:
            print("  " + line, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
