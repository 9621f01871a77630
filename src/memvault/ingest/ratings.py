"""Insights: the rated agent replies in the session transcripts an identity can see.

A rated reply is a logged turn with ``rating`` (and ``context``) in its header; each
comes back with the user question just before it, and the summary counts ratings per
agent.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ..core import Core
from ..errors import ValidationError
from ..memory import Memory, format_time, parse_time
from ..scopes import Filters
from ..transcripts import parse_turns
from ..values import Record
from .formats import RATINGS


class RatedFilter(Record, frozen=True):
    """Which rated replies to keep: by agent, topic words (stemmed) and time window."""

    agent: str | None
    topic_words: frozenset[str]
    since: dt.datetime | None
    until: dt.datetime | None


def insights(
    vault: Core,
    agent: str | None = None,
    topic: str | None = None,
    since: dt.datetime | None = None,
    until: dt.datetime | None = None,
    limit: int = 10,
    snippet_chars: int = 400,
) -> dict[str, Any]:
    """The seed's ``getAgentInsights``: rated interactions from the transcripts you can see.

    Filters: ``agent`` (who gave the rated reply), ``topic`` (every word appears, give or
    take an English suffix, in the query, reply or context), ``since``/``until`` (turn
    time). Returns a summary (counts per rating, helpful rate, per agent) and the
    ``limit`` most recent interactions, each with the user query it answered.
    """
    if limit < 0:
        raise ValidationError("expected 0 or more", key="limit")
    keep = RatedFilter(agent, frozenset(stem(w) for w in words(topic or "")), since, until)
    transcripts = vault.memories(
        Filters(type="episodic", category="transcript", include_archive=True)
    )
    items = [item for m in transcripts for item in rated_replies(m, keep, snippet_chars)]
    items.sort(key=lambda i: (i["when"] or "", i["turn"]), reverse=True)
    return {
        "filters": {
            "agent": agent,
            "topic": topic,
            "since": format_time(since) if since else None,
            "until": format_time(until) if until else None,
        },
        "summary": summary(items),
        "interactions": items[:limit],
    }


def rated_replies(m: Memory, keep: RatedFilter, snippet_chars: int) -> Iterator[dict[str, Any]]:
    """The rated turns of transcript ``m`` that ``keep`` admits, each with its question."""
    last_user: str | None = None
    for turn in parse_turns(m.content):
        if turn.role == "user":
            last_user = turn.text
            continue
        fields = extra_fields(turn.extra)
        rating = fields.get("rating")
        if not rating:
            continue
        who = fields.get("agent") or m.agent
        if keep.agent and who != keep.agent:
            continue
        if not in_window(turn.when, keep):
            continue
        if keep.topic_words:
            hay = f"{last_user or ''} {turn.text} {fields.get('context', '')}"
            if not keep.topic_words <= {stem(w) for w in words(hay)}:
                continue
        yield {
            "session": m.get("session") or m.id,
            "transcript": m.id,
            "turn": turn.turn_id,
            "when": turn.when,
            "agent": who,
            "rating": rating,
            "context": fields.get("context"),
            "query": snip(last_user, snippet_chars),
            "response": snip(turn.text, snippet_chars),
        }


def in_window(when_text: str, keep: RatedFilter) -> bool:
    """Whether a turn's time is inside ``since``/``until`` (an unknown time is not)."""
    if keep.since is None and keep.until is None:
        return True
    try:
        when = parse_time(when_text)
    except ValueError:
        when = None
    if keep.since and (when is None or when < keep.since):
        return False
    return not (keep.until and (when is None or when > keep.until))


def summary(items: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts per rating and the helpful rate, overall and per agent."""
    by_rating = Counter(i["rating"] for i in items)
    per_agent: dict[str, Counter[str]] = {}
    for i in items:
        per_agent.setdefault(i["agent"] or "(none)", Counter())[i["rating"]] += 1
    return {
        "interactions": len(items),
        "by_rating": {r: by_rating.get(r, 0) for r in RATINGS},
        "helpful_rate": round(by_rating.get("helpful", 0) / len(items), 3) if items else None,
        "by_agent": {
            name: {
                "interactions": sum(c.values()),
                **{r: c.get(r, 0) for r in RATINGS},
                "helpful_rate": round(c.get("helpful", 0) / sum(c.values()), 3),
            }
            for name, c in sorted(per_agent.items())
        },
    }


def extra_fields(extra: str) -> dict[str, str]:
    """The ``key: value · key: value`` fields of a turn header."""
    out: dict[str, str] = {}
    for part in extra.split(" · "):
        key, sep, value = part.partition(": ")
        if sep and key.strip():
            out[key.strip()] = value.strip()
    return out


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def stem(word: str) -> str:
    """Crude English stemming so a topic 'pricing' finds 'price' and 'prices'."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def snip(text: str | None, n: int) -> str | None:
    """One line of at most ``n`` characters (``None`` stays ``None``)."""
    if text is None:
        return None
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


__all__ = ["insights"]
