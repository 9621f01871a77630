"""Conversation transcripts (short-term memory): one episodic file per session.

Each turn is a Markdown section a person can read, with an HTML comment carrying its
turn id so re-ingesting the same transcript adds nothing::

    ### user · 2026-11-29T22:35:00Z <!-- turn:4f2a… -->

    How do we deploy?
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .files import Document, render_new, update_text
from .memory import format_time, now_utc, slugify

Turn = tuple[str, str, dt.datetime | None, Mapping[str, Any] | None, str | None]
_HEADER_RE = re.compile(
    r"^### (?P<role>user|assistant|system|tool) · (?P<when>\S+)(?P<extra>[^\n]*?)"
    r"\s*<!-- turn:(?P<tid>[\w-]+) -->\s*$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class ParsedTurn:
    role: str
    when: str
    text: str
    turn_id: str
    extra: str


def transcript_id(session: str) -> str:
    slug = slugify(str(session), max_words=12, max_len=80)
    return slug if slug.startswith("session-") else f"session-{slug}"


def turn_key(role: str, text: str, when: dt.datetime | None, given: str | None) -> str:
    if given:
        return slugify(given, max_words=20, max_len=64)
    stamp = format_time(when) if when else ""
    return hashlib.sha1(f"{role}\0{stamp}\0{text}".encode()).hexdigest()[:12]


def render_turn(
    role: str, text: str, when: dt.datetime | None, extra: Mapping[str, Any] | None, tid: str
) -> str:
    stamp = format_time(when or now_utc())
    bits = "".join(f" · {k}: {v}" for k, v in (extra or {}).items() if v not in (None, ""))
    return f"### {role} · {stamp}{bits} <!-- turn:{tid} -->\n\n{text.strip()}\n"


def parse_turns(content: str) -> list[ParsedTurn]:
    turns: list[ParsedTurn] = []
    matches = list(_HEADER_RE.finditer(content))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(content)
        text = content[m.end() : end].strip()
        turns.append(
            ParsedTurn(
                m.group("role"), m.group("when"), text, m.group("tid"), m.group("extra").strip(" ·")
            )
        )
    return turns


def _render_new_turns(existing: set[str], turns: Sequence[Turn]) -> tuple[list[str], int]:
    chunks: list[str] = []
    for role, text, when, extra, given in turns:
        tid = turn_key(role, text, when, given)
        if tid in existing:
            continue
        existing.add(tid)
        chunks.append(render_turn(role, text, when, extra, tid))
    return chunks, len(chunks)


def new_transcript(meta: dict[str, Any], turns: Sequence[Turn]) -> tuple[str, int]:
    chunks, added = _render_new_turns(set(), turns)
    return render_new(meta, "\n".join(chunks)), added


def append_turns(doc: Document, turns: Sequence[Turn]) -> tuple[str, int]:
    existing = {t.turn_id for t in parse_turns(doc.content)}
    chunks, added = _render_new_turns(existing, turns)
    if not added:
        return doc.text(), 0
    body = doc.content.rstrip("\n")
    content = (body + "\n\n" if body else "") + "\n".join(chunks)
    return update_text(doc, {"updated": format_time(now_utc())}, content), added
