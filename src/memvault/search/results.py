"""What a search returns: hits (one memory each, with why it matched) and the result of
one query, plus the snippet shown for a hit."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..memory import Memory
from ..values import Record, field
from .routing import Route


class TurnRef(Record, frozen=True):
    """The turn of a transcript a hit found: its id, who said it, when."""

    id: str
    speaker: str
    role: str
    time: str | None  # ISO time

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "speaker": self.speaker, "role": self.role, "time": self.time}


class SearchHit(Record, frozen=True):
    """One memory found: what it is, where it lives, why it matched."""

    id: str
    path: str
    type: str
    category: str
    title: str
    snippet: str
    score: float
    status: str
    scope: str
    created: str | None
    memory: Memory | None = field(default=None, compare=False, repr=False)
    explain: Mapping[str, Any] | None = field(default=None, compare=False)
    turn: TurnRef | None = None  # set when the hit is one turn of a transcript
    # How plainly it matches the query, 0..1, the same scale for every query (the score
    # only orders the hits of one query): ``search.ranking.evidence``.
    relevance: float | None = None

    @property
    def kind(self) -> str:
        return self.type

    @property
    def address(self) -> str:
        """The memory's id, or ``<transcript id>#<turn id>`` for a turn (``memvault show`` takes
        either)."""
        return f"{self.id}#{self.turn.id}" if self.turn is not None else self.id

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "address": self.address,
            "path": self.path,
            "type": self.type,
            "kind": self.type,
            "category": self.category,
            "title": self.title,
            "snippet": self.snippet,
            "score": round(self.score, 4),
            "relevance": None if self.relevance is None else round(self.relevance, 4),
            "status": self.status,
            "scope": self.scope,
            "created": self.created,
        }
        meta = self.memory.meta if self.memory is not None else {}
        for key in (
            "subject",
            "valid_from",
            "valid_to",
            "superseded_by",
            "outcome",
            "success_rate",
            "confidence",
            "tags",
        ):
            if meta.get(key) not in (None, "", []):
                out[key] = meta[key]
        if self.turn is not None:
            out["turn"] = self.turn.as_dict()
        if self.explain is not None:
            out["explain"] = dict(self.explain)
        return out


class SearchResult(Record, frozen=True):
    """The hits of one query (iterable), with the route taken and how long it took."""

    query: str
    command: str
    route: Route
    hits: tuple[SearchHit, ...]
    ms: float
    note: str | None = None
    min_score: float = 0.0  # the relevance floor this query was held to
    closest: float = 0.0  # the best relevance of any candidate, returned or not

    @property
    def nothing_relevant(self) -> bool:
        """No hit cleared the relevance floor (or nothing matched at all)."""
        return not self.hits

    @property
    def below_floor(self) -> bool:
        """Something matched, but nothing well enough to clear the floor."""
        return not self.hits and self.closest > 0.0

    @property
    def reason(self) -> str | None:
        """Why no hit came back, in one line (None when some did)."""
        if self.hits:
            return None
        if not self.below_floor:
            return "nothing relevant: no memory shares a word or a meaning with the query"
        return (
            f"nothing relevant: the closest memory's relevance is {self.closest:.2f}, "
            f"below the floor {self.min_score:.2f}"
        )

    def __iter__(self) -> Iterator[SearchHit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, i: int) -> SearchHit:
        return self.hits[i]

    @property
    def ids(self) -> list[str]:
        return [h.id for h in self.hits]

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": self.query,
            "command": self.command,
            "route": self.route.as_dict(),
            "hits": [h.as_dict() for h in self.hits],
            "ms": round(self.ms, 1),
            "nothing_relevant": self.nothing_relevant,
            "min_score": round(self.min_score, 4),
        }
        if self.reason:
            out["reason"] = self.reason
            out["closest"] = round(self.closest, 4)
        if self.note:
            out["note"] = self.note
        return out


_DATE_PREFIX = re.compile(r"^\[[^\]]{1,40}\]\s*")
_WORD = re.compile(r"\w+", re.UNICODE)


SNIPPET_CHARS = 320  # a snippet is a glance: a line with no spaces is still cut here


def snippet(text: str, tokens: Sequence[str], width: int = 32) -> str:
    """About ``width`` words of ``text`` around the first query word it contains, at most
    :data:`SNIPPET_CHARS` characters (a minified line or a pasted blob has no words to
    stop at)."""
    return _cut(_words_around(text, tokens, width))


def _cut(text: str) -> str:
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 2].rstrip() + " …"


def _words_around(text: str, tokens: Sequence[str], width: int) -> str:
    text = _DATE_PREFIX.sub("", text.strip())
    words = text.split()
    if len(words) <= width:
        return " ".join(words)
    stems = [t[:5] for t in tokens if len(t) >= 3]
    at = 0
    for i, word in enumerate(words):
        lw = word.lower()
        if any(lw.startswith(s) or s in lw for s in stems):
            at = i
            break
    start = max(0, min(at - width // 4, len(words) - width))
    piece = " ".join(words[start : start + width])
    return ("… " if start > 0 else "") + piece + (" …" if start + width < len(words) else "")
