"""Distillation: a transcript idle for ``consolidate.distill_after_days`` (or older than
``retention.transcripts``) gets a summary episode, the facts said in it become semantic
memories, and it moves to archive/. A transcript leaves by distillation only: decay and
retention never archive one, so what was said is never archived unread.

The summary comes from ``consolidate.summarizer_command`` when one is set (its JSON-object
lines become proposed facts), else from the transcript's most central sentences. A command
from the tracked config runs only once the user on this machine allowed it
(:mod:`memvault.trust`); until then the plan's ``notes`` say why it was not used. Unless the
command proposed facts, the built-in distiller writes the facts stated in the user's turns
(:mod:`memvault.consolidate.chatfacts`; ``consolidate.distill_facts: false`` turns it off).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shlex
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from ..memory import Memory, format_time, parse_time
from ..store.files import render_new
from ..transcripts import parse_turns
from .chatfacts import ChatFacts
from .model import ARCHIVE_DIR, Action, Plan, State
from .promote import add_proposal, proposal_meta

if TYPE_CHECKING:  # pragma: no cover
    from ..core import Core

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n{2,}")


def sentences(text: str) -> list[str]:
    parts = (p.strip() for p in _SENTENCE_END.split(text))
    return [p for p in parts if len(p) > 20 and not p.startswith("### ")]


def extractive_summary(vault: Core, text: str, max_sentences: int = 5) -> str:
    """Central sentences by embedding similarity to the whole (deterministic, offline)."""
    found = sentences(text)
    if len(found) <= max_sentences:
        return " ".join(found) or text.strip()[:500]
    from ..embeddings import get_embedder

    embedder = get_embedder(str(vault.config.get("embedder")))
    vecs = embedder.embed_documents(found[:400])
    scores = vecs @ vecs.mean(axis=0)
    top = sorted(sorted(range(len(scores)), key=lambda i: -float(scores[i]))[:max_sentences])
    return " ".join(found[i] for i in top)


def run_summarizer(command: str, text: str) -> tuple[str, list[dict[str, Any]]]:
    """Pipe ``text`` to a command; stdout is the summary, JSON-object lines are candidate facts."""
    proc = subprocess.run(
        shlex.split(command), input=text, capture_output=True, text=True, timeout=300
    )
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {proc.stderr.strip()[:200]}")
    summary_lines: list[str] = []
    facts: list[dict[str, Any]] = []
    for line in proc.stdout.splitlines():
        stripped = line.strip()
        if stripped.startswith("{"):
            try:
                obj = json.loads(stripped)
            except json.JSONDecodeError:
                obj = None
            if isinstance(obj, dict) and (obj.get("content") or obj.get("text")):
                facts.append(obj)
                continue
        summary_lines.append(line)
    summary = "\n".join(summary_lines).strip()
    if not summary:
        raise RuntimeError("empty summary")
    return summary, facts


def _turn_time(text: str) -> dt.datetime | None:
    try:
        return parse_time(text)
    except ValueError:
        return None


def plan_distill(vault: Core, state: State, result: Plan) -> None:
    """Old transcripts get a summary episode and their facts; the transcript moves to
    archive/."""
    days = float(vault.config.get("consolidate.distill_after_days", 30))
    kept = (vault.config.get("retention") or {}).get("transcripts")
    facts_on = vault.config.get("consolidate.distill_facts", True) is not False
    taken = {m.id for m in state.memories}
    chat = ChatFacts(vault, state, result, taken)
    command: str | None = None
    checked = False
    for m in state.memories:
        if m.category != "transcript" or not state.live(m):
            continue
        turns = parse_turns(m.content)
        stamps = [t for t in (_turn_time(t.when) for t in turns) if t is not None]
        last = max(stamps) if stamps else (m.time("updated") or m.created)
        if last is None:
            continue
        idle = (result.now - last).total_seconds() / 86400
        # retention.transcripts: a session still going after that long is distilled anyway
        age = (result.now - (m.created or last)).total_seconds() / 86400
        if idle < days and not (kept and age > float(kept)):
            continue
        text = "\n\n".join(f"{t.role}: {t.text}" for t in turns) or m.content
        if not checked:  # once per run, and only when there is something to summarise
            command, checked = _summarizer(vault, result), True
        summary, facts = _summarise(vault, command, text)
        sid = f"summary-{m.id}"
        n = 2
        while sid in taken:
            sid, n = f"summary-{m.id}-{n}", n + 1
        taken.add(sid)
        meta = _summary_meta(m, sid, last)
        rel = vault.path_for(meta)
        result.new_files[rel] = render_new(meta, summary)
        why = (
            f"transcript {m.id} idle for over {days:.0f} days"
            if idle >= days
            else f"transcript {m.id} older than {kept} days (retention.transcripts)"
        )
        result.actions.append(Action("distill", sid, rel, "summarise", why, {}))
        state.archive(m, result, "distill", f"distilled into {sid}", {"related": [sid]})
        for i, fact in enumerate(facts):
            _propose_fact(vault, result, m, fact, f"{sid}-{i}", taken)
        if facts_on and not facts:  # the command's facts, when it gave any, are the facts
            chat.read(m, turns, sid)
    chat.finish()


def _summarizer(vault: Core, result: Plan) -> str | None:
    """The summarizer command to run: None when none is set, or when it came with the shared
    config and is not allowed here (the plan's notes say so)."""
    if vault.config.get("consolidate.summarizer_command") is None:
        return None
    from ..trust import status

    found = status(vault.root, vault.config, "consolidate.summarizer_command")
    if found.note:
        result.notes.append(found.note)
    return found.command if found.runs else None


def _summarise(vault: Core, command: str | None, text: str) -> tuple[str, list[dict[str, Any]]]:
    """The summary and candidate facts: the command's, else extractive."""
    if command:
        try:
            return run_summarizer(str(command), text)
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            print(
                f"memvault: summarizer_command failed ({exc}); using the extractive summary",
                file=sys.stderr,
            )
    return extractive_summary(vault, text), []


def _summary_meta(m: Memory, sid: str, last: dt.datetime) -> dict[str, Any]:
    meta = {
        "id": sid,
        "type": "episodic",
        "category": "summary",
        "title": f"Summary of {m.title}"[:80],
        "scope": m.scope,
        "agent": m.agent,
        "team": m.team,
        "session": m.meta.get("session"),
        "created": format_time(last),
        "author": "agent:memvault-consolidate",
        "importance": m.importance,
        "related": [m.id],
        "derived_from": [m.id],
        "source": {"transcript": ARCHIVE_DIR + m.path},
    }
    return {k: v for k, v in meta.items() if v is not None}


def _propose_fact(
    vault: Core, result: Plan, m: Memory, fact: dict[str, Any], key: str, taken: set[str]
) -> None:
    """A fact the summarizer found becomes a proposal in inbox/."""
    content = fact.get("content") or fact.get("text")
    title = str(fact.get("title") or content)[:80]
    meta = proposal_meta("semantic", "facts", title, [m.id], key, result.now, taken)
    if fact.get("subject"):
        meta["subject"] = str(fact["subject"])
    add_proposal(vault, result, meta, str(content))
