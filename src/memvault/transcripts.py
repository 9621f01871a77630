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
from typing import Any

from .memory import Memory, format_time, now_utc, slugify
from .store.files import Document, render_new, update_text
from .values import Record

Turn = tuple[str, str, dt.datetime | None, Mapping[str, Any] | None, str | None]
TURN_HEADER_RE = re.compile(
    r"^### (?P<role>user|assistant|system|tool) · (?P<when>\S+)(?P<extra>[^\n]*?)"
    r"\s*<!-- turn:(?P<tid>[\w-]+) -->\s*$",
    re.MULTILINE,
)


class ParsedTurn(Record, frozen=True):
    """One turn as written in a transcript file."""

    role: str
    when: str  # as written in the header (ISO time)
    text: str
    turn_id: str
    extra: str  # the header's "key: value" pairs after the time, joined with " · "

    @property
    def fields(self) -> dict[str, str]:
        """The header's extra ``key: value`` pairs (``name``, ``agent``, ``rating``, ...)."""
        out: dict[str, str] = {}
        for part in self.extra.split(" · "):
            key, sep, value = part.partition(":")
            if sep and key.strip() and value.strip():
                out[key.strip()] = value.strip()
        return out

    @property
    def speaker(self) -> str:
        """Who spoke: the turn's ``name``, else its ``agent``, else its role."""
        fields = self.fields
        return fields.get("name") or fields.get("agent") or self.role


class TurnWindow:
    """One turn of a transcript with the turns around it (``memvault show ID#TURN``)."""

    __slots__ = ("memory", "turns", "focus")

    def __init__(self, memory: Memory, turns: Sequence[ParsedTurn], focus: str) -> None:
        self.memory = memory
        self.turns = tuple(turns)
        self.focus = focus  # the turn asked for

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.memory.id,
            "path": self.memory.path,
            "title": self.memory.title,
            "focus": turn_address(self.memory.id, self.focus),
            "turns": [
                {
                    "address": turn_address(self.memory.id, t.turn_id),
                    "id": t.turn_id,
                    "speaker": t.speaker,
                    "role": t.role,
                    "time": t.when,
                    "text": t.text,
                    **({"fields": t.fields} if t.fields else {}),
                }
                for t in self.turns
            ],
        }


def window(memory: Memory, turn_id: str, around: int) -> TurnWindow | None:
    """``turn_id`` of ``memory``'s transcript with ``around`` turns each side (None: no such
    turn)."""
    turns = parse_turns(memory.content)
    at = next((i for i, t in enumerate(turns) if t.turn_id == turn_id), None)
    if at is None:
        return None
    return TurnWindow(memory, turns[max(0, at - around) : at + around + 1], turn_id)


def turn_address(memory_id: str, turn_id: str) -> str:
    """How a turn is named outside its file: ``<transcript id>#<turn id>``."""
    return f"{memory_id}#{turn_id}"


def split_address(address: str) -> tuple[str, str | None]:
    """``(memory id, turn id or None)`` of ``session-x#turn`` or a plain memory id."""
    memory_id, sep, turn_id = address.partition("#")
    return memory_id, (turn_id if sep and turn_id else None)


def transcript_id(session: str) -> str:
    slug = slugify(str(session), max_words=12, max_len=80)
    return slug if slug.startswith("session-") else f"session-{slug}"


def turn_key(role: str, text: str, when: dt.datetime | None, given: str | None) -> str:
    if given:
        return slugify(given, max_words=20, max_len=64)
    stamp = format_time(when) if when else ""
    return hashlib.sha1(f"{role}\0{stamp}\0{text}".encode()).hexdigest()[:12]


def header_value(value: object, limit: int = 200) -> str:
    """A value as it can stand in a turn header: one line, no `` · `` separator, no HTML
    comment markers, at most ``limit`` characters."""
    text = " ".join(str(value).split()).replace("·", "-").replace("<!--", "").replace("-->", "")
    return text[:limit]


def render_turn(
    role: str, text: str, when: dt.datetime | None, extra: Mapping[str, Any] | None, tid: str
) -> str:
    stamp = format_time(when or now_utc())
    bits = "".join(
        f" · {header_value(k, 40)}: {header_value(v)}"
        for k, v in (extra or {}).items()
        if v not in (None, "") and header_value(v)
    )
    return f"### {role} · {stamp}{bits} <!-- turn:{tid} -->\n\n{text.strip()}\n"


def parse_turns(content: str) -> list[ParsedTurn]:
    turns: list[ParsedTurn] = []
    matches = list(TURN_HEADER_RE.finditer(content))
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
