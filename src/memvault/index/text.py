"""What the index sees of a memory: its searchable text, cut into chunks, and the columns
the filters need. Pure functions of a :class:`~memvault.memory.Memory`; no I/O.

Each chunk has three parts:

* ``head``: words about the memory (explicit title, subject, tags, trigger keywords);
* ``body``: ``[8 May 2023] `` (episodes only: the date, so questions naming a month or a
  year find them) followed by the text, at most ``chunk_words`` words of it;
* ``ctx``: the text of what was said next to it -- the memories beside it in the same
  ``session`` (filled in by the indexer), or for a turn of a transcript the turns before
  and after it -- which lets a keyword find the turn that answers it even when the
  answer itself doesn't repeat the question's words.

A transcript (one file per session, see :mod:`memvault.transcripts`) is indexed one turn
per chunk: its speaker, role and time are columns, not embedded markup, and its
neighbours give it a context vector as a per-turn memory gets.

The vector of a chunk embeds ``body`` (and the head when there is one); a turn's vector
embeds ``speaker: text`` instead, as dialogue is written, without the date (the date is
in the keyword body and in the ``at`` column, where questions naming a date use it). The
keyword index holds all three, weighted.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from ..language import detect, keyword_text
from ..memory import Memory, as_list, parse_time
from ..transcripts import ParsedTurn, parse_turns
from ..values import Record

# Bump when the text built for a memory changes: the manifest then forces a rebuild.
TEXT_FORMAT = 5
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


class Chunk(Record, frozen=True):
    n: int
    head: str
    body: str
    hash: str  # of its text and what gets embedded: equal hash = nothing to redo
    turn: str | None = None  # the transcript turn this chunk is (part of)
    speaker: str = ""  # who said it, for turns
    role: str = ""  # user|assistant|system|tool, for turns
    at: float | None = None  # when it was said (epoch seconds), for turns
    ctx: str = ""  # the neighbouring turns' text (keyword column ``ctx``)
    ctx_embed: str = ""  # the turn followed by its neighbours: its context vector's text
    lang: str = "en"  # the memory's language: how its keyword form is made
    vector_text: str = ""  # what the vector embeds when not head and body (turns)

    @property
    def keywords(self) -> tuple[str, str, str]:
        """What the keyword index holds: head, body and context in their keyword form
        (:func:`memvault.language.keyword_text`)."""
        return (
            keyword_text(self.head, self.lang),
            keyword_text(self.body, self.lang),
            keyword_text(self.ctx, self.lang),
        )

    @property
    def embed_text(self) -> str:
        if self.vector_text:
            return self.vector_text
        return f"{self.head}\n{self.body}" if self.head else self.body

    @property
    def ctx_hash(self) -> str:
        """What the context vector of a turn is made from (equal: it is still right)."""
        return _hash(self.ctx_embed) if self.turn else ""


class DocInfo(Record, frozen=True):
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
    lang: str  # its language (memvault.language.LANGUAGES): how its keywords are made
    kw_lead: str  # ``lead`` in keyword form: what its neighbours' keyword context holds
    doc: str  # the memory as JSON (id, type, meta, content): hits are read from here
    chunks: tuple[Chunk, ...]
    text_hash: str  # of every chunk's embedded text
    turns: bool = False  # a transcript: one chunk per turn, context within the file


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


def is_transcript(memory: Memory) -> bool:
    return memory.type == "episodic" and memory.category == "transcript"


def chunk_transcript(
    turns: Sequence[ParsedTurn], chunk_words: int, lang: str = "en"
) -> tuple[Chunk, ...]:
    """One chunk per turn (a long turn: one per piece), each carrying its turn's speaker,
    role and time, and its neighbours' text as context."""
    leads = [" ".join(t.text.split()[:CTX_WORDS]) for t in turns]
    chunks: list[Chunk] = []
    for i, turn in enumerate(turns):
        try:
            when = parse_time(turn.when)
        except ValueError:
            when = None
        prefix = f"[{date_words(when)}] " if when is not None else ""
        ctx = neighbour_text(leads, i)
        around = [leads[j] for j in (i - 1, i + 1) if 0 <= j < len(leads) and leads[j]]
        # A named speaker (not just a role) heads the turn: questions name people.
        head = turn.speaker if turn.speaker != turn.role else ""
        for piece in split_words(turn.text, max(16, chunk_words)):
            body = prefix + piece
            # Embedded as dialogue is written, without the date: a date embedded with every
            # turn of a session pulls them together and says nothing a question's words do.
            said = f"{head}: {piece}" if head else piece
            chunks.append(
                Chunk(
                    len(chunks),
                    head,
                    body,
                    _hash(head, body, said),
                    turn=turn.turn_id,
                    speaker=turn.speaker,
                    role=turn.role,
                    at=epoch(when),
                    ctx=ctx,
                    # The turn first: a 256-token cut then drops context, not the turn.
                    ctx_embed="\n".join([said, *around]) if around else "",
                    lang=lang,
                    vector_text=said,
                )
            )
    return tuple(chunks)


def memory_language(memory: Memory) -> str:
    """The language a memory is written in (its title and text)."""
    return detect(f"{memory.meta.get('title') or ''}\n{memory.content}")


def chunk_memory(memory: Memory, chunk_words: int, lang: str | None = None) -> tuple[Chunk, ...]:
    lang = lang or memory_language(memory)
    if is_transcript(memory):
        turns = parse_turns(memory.content)
        if turns:
            return chunk_transcript(turns, chunk_words, lang)
    head = head_text(memory)
    prefix = date_prefix(memory)
    chunks = []
    for n, piece in enumerate(split_words(body_text(memory), max(16, chunk_words))):
        body = prefix + piece
        chunks.append(Chunk(n, head, body, _hash(head, body), lang=lang))
    return tuple(chunks)


def _speakers(memory: Memory, chunks: Sequence[Chunk] = ()) -> str:
    names: set[str] = {c.speaker.lower() for c in chunks if c.speaker}
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
    lang = memory_language(memory)
    chunks = chunk_memory(memory, chunk_words, lang)
    turns = any(c.turn for c in chunks)
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
        # A transcript's neighbours are its own turns, not other memories of the session.
        session=str(memory.meta["session"]) if memory.meta.get("session") and not turns else None,
        subject=memory.subject,
        tags="|" + "|".join(tags) + "|" if tags else "",
        title=memory.title,
        speakers=_speakers(memory, chunks),
        triggers=_joined(w.lower() for w in _flatten(memory.meta.get("trigger"))),
        lead=lead,
        lang=lang,
        kw_lead=keyword_text(lead, lang),
        doc=json.dumps(
            {"id": memory.id, "type": memory.type, "meta": memory.meta, "content": memory.content},
            ensure_ascii=False,
        ),
        chunks=chunks,
        text_hash=_hash(*(_chunk_identity(c) for c in chunks)),
        turns=turns,
    )


def _chunk_identity(chunk: Chunk) -> str:
    """Everything stored for a chunk: equal for all chunks = nothing to redo for the memory."""
    if not chunk.turn:
        return chunk.hash
    return (
        f"{chunk.hash}|{chunk.turn}|{chunk.speaker}|{chunk.role}|{chunk.at}|{chunk.ctx_hash}|"
        + _hash(chunk.ctx)
    )


def neighbour_text(leads: Sequence[str], i: int, width: int = NEIGHBOURS) -> str:
    """Text of the memories up to ``width`` places before and after ``i`` in a session."""
    return "\n".join(
        leads[j] for j in range(i - width, i + width + 1) if j != i and 0 <= j < len(leads)
    )
