"""What the index sees of a memory: its searchable text, cut into chunks, and the columns
the filters need. Pure functions of a :class:`~memvault.memory.Memory`; no I/O.

Each chunk has three parts:

* ``head``: words about the memory (explicit title, subject, tags, trigger keywords);
* ``body``: ``[8 May 2023] `` (episodes only: the date, so questions naming a month or a
  year find them) followed by the text, at most ``chunk_words`` words of it;
* ``ctx`` (filled in by the indexer): the text of the memories next to it in the same
  ``session``, which lets a keyword find the turn that answers it even when the answer
  itself doesn't repeat the question's words.

The vector of a chunk embeds ``body`` (and the head when there is one). The keyword index
holds all three, weighted.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..memory import Memory, as_list

# Bump when the text built for a memory changes: the manifest then forces a rebuild.
TEXT_FORMAT = 1
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
OVERLAP = 0.15  # share of a chunk repeated at the start of the next one
CTX_WORDS = 120  # neighbour text kept per neighbour
NEIGHBOURS = 2  # turns each side of a memory in the same session


@dataclass(frozen=True)
class Chunk:
    n: int
    head: str
    body: str
    hash: str  # of what gets embedded: equal hash = the stored vector is still right

    @property
    def embed_text(self) -> str:
        return f"{self.head}\n{self.body}" if self.head else self.body


@dataclass(frozen=True)
class DocInfo:
    """One memory as the index stores it (the filter columns plus its chunks)."""

    path: str
    id: str
    type: str
    category: str
    scope: str
    agent: str | None
    team: str | None
    status: str
    created: float | None  # epoch seconds, UTC
    valid_from: float | None
    valid_to: float | None
    importance: int
    relevance: float | None
    success_rate: float | None
    session: str | None
    subject: str | None
    tags: str  # "|a|b|" so SQL can test one tag with LIKE
    title: str
    speakers: str  # "|name|" of who speaks/wrote, lowercase, for the "named in the query" boost
    triggers: str  # "|keyword|phrase|" of a procedure, lowercase
    lead: str  # the first words of its text: what its session neighbours see of it
    doc: str  # the memory as JSON (id, type, meta, content): hits are read from here
    chunks: tuple[Chunk, ...]
    text_hash: str  # of every chunk's embedded text


def epoch(value: dt.datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


def date_words(value: dt.datetime) -> str:
    """``8 May 2023``: the form people (and questions) use."""
    return f"{value.day} {MONTHS[value.month - 1]} {value.year}"


def _flatten(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        out: list[str] = []
        for key in ("action", "step", "text", "name", "description"):
            if value.get(key):
                out.append(str(value[key]))
        return out or [" ".join(str(v) for v in value.values() if isinstance(v, (str, int, float)))]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _flatten(v)]
    return [str(value)]


def head_text(memory: Memory) -> str:
    """Title (only when written explicitly: a derived one repeats the body), subject, tags,
    trigger keywords."""
    parts: list[str] = []
    title = memory.meta.get("title")
    if title:
        parts.append(str(title))
    if memory.subject:
        parts.append(memory.subject.replace(".", " ").replace("_", " "))
    tags = memory.tags
    if tags:
        parts.append(" ".join(tags))
    trigger = _flatten(memory.meta.get("trigger"))
    if trigger:
        parts.append(" ".join(trigger))
    return " · ".join(p.strip() for p in parts if p.strip())


def body_text(memory: Memory) -> str:
    """The memory's words: content, plus numbered steps of a procedure and an episode's outcome."""
    text = memory.content.strip()
    steps = _flatten(memory.meta.get("steps"))
    if steps:
        text = (text + "\n" if text else "") + "\n".join(
            f"{i}. {s}" for i, s in enumerate(steps, 1)
        )
    outcome = memory.meta.get("outcome")
    if memory.type == "episodic" and isinstance(outcome, str) and outcome:
        text = (text + "\n" if text else "") + f"Outcome: {outcome}"
    if not text:
        text = memory.title
    return text


def date_prefix(memory: Memory) -> str:
    created = memory.created
    if memory.type != "episodic" or created is None:
        return ""
    return f"[{date_words(created)}] "


def split_words(text: str, size: int) -> list[str]:
    """Cut ``text`` into pieces of at most ``size`` words that overlap a little; line breaks
    inside a piece are kept."""
    words = text.split()
    if len(words) <= size:
        return [text]
    step = max(1, int(size * (1 - OVERLAP)))
    pieces = []
    for start in range(0, len(words), step):
        pieces.append(" ".join(words[start : start + size]))
        if start + size >= len(words):
            break
    return pieces


def _hash(*parts: str) -> str:
    h = hashlib.sha1()
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def chunk_memory(memory: Memory, chunk_words: int) -> tuple[Chunk, ...]:
    head = head_text(memory)
    prefix = date_prefix(memory)
    chunks = []
    for n, piece in enumerate(split_words(body_text(memory), max(16, chunk_words))):
        body = prefix + piece
        chunks.append(Chunk(n, head, body, _hash(head, body)))
    return tuple(chunks)


def _speakers(memory: Memory) -> str:
    names: set[str] = set()
    for key in ("speaker", "agent"):
        value = memory.meta.get(key)
        if isinstance(value, str) and value.strip():
            names.add(value.strip().lower())
    author = memory.meta.get("author")
    if isinstance(author, str) and author.startswith("agent:"):
        names.add(author[6:].strip().lower())
    return "|" + "|".join(sorted(names)) + "|" if names else ""


def _joined(items: Iterable[str]) -> str:
    values = sorted({" ".join(i.split()) for i in items if i and i.strip()})
    return "|" + "|".join(values) + "|" if values else ""


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def doc_info(memory: Memory, chunk_words: int) -> DocInfo:
    chunks = chunk_memory(memory, chunk_words)
    lead = " ".join(body_text(memory).split()[:CTX_WORDS])
    valid_from = memory.time("valid_from")
    if valid_from is None and memory.type == "semantic":
        valid_from = memory.created
    tags = as_list(memory.meta.get("tags"))
    return DocInfo(
        path=memory.path,
        id=memory.id,
        type=memory.type,
        category=memory.category,
        scope=memory.scope,
        agent=str(memory.agent) if memory.agent else None,
        team=str(memory.team) if memory.team else None,
        status=memory.status,
        created=epoch(memory.created),
        valid_from=epoch(valid_from),
        valid_to=epoch(memory.time("valid_to")),
        importance=memory.importance,
        relevance=_float(memory.meta.get("relevance")),
        success_rate=_float(memory.meta.get("success_rate")),
        session=str(memory.meta["session"]) if memory.meta.get("session") else None,
        subject=memory.subject,
        tags="|" + "|".join(tags) + "|" if tags else "",
        title=memory.title,
        speakers=_speakers(memory),
        triggers=_joined(w.lower() for w in _flatten(memory.meta.get("trigger"))),
        lead=lead,
        doc=json.dumps(
            {"id": memory.id, "type": memory.type, "meta": memory.meta, "content": memory.content},
            ensure_ascii=False,
        ),
        chunks=chunks,
        text_hash=_hash(*(c.hash for c in chunks)),
    )


def neighbour_text(leads: Sequence[str], i: int, width: int = NEIGHBOURS) -> str:
    """Text of the memories up to ``width`` places before and after ``i`` in a session."""
    return "\n".join(
        leads[j] for j in range(i - width, i + width + 1) if j != i and 0 <= j < len(leads)
    )
