"""Transcripts in, insights out: the conversation side of an agent's memory.

``ingest_file`` imports a conversation transcript as session turns (short-term memory,
one episodic file per session, see :mod:`memvault.transcripts`). Two formats:

- generic JSONL, one turn per line: ``{"role": "user", "content": "...", "timestamp": "..."}``
  (``content`` may also be a list of ``{"type": "text", "text": ...}`` blocks; optional
  ``id``, ``session``, ``rating`` and ``context`` keys are used when present);
- Claude Code session JSONL (``~/.claude/projects/<project>/<session>.jsonl``): lines with
  ``type: user|assistant`` and ``message: {role, content}``; only the conversation's text
  is kept (tool calls, tool results, thinking and meta lines are left out).

Every turn gets a stable id (the line's ``uuid``/``id``, else a hash of role, time and
text), so ingesting the same file twice adds nothing and makes no commit. Bad lines are
reported as ``file:line`` problems and skipped; the rest is imported.

:func:`log_usage` and :func:`insights` are the seed's ``logAgentUsage`` and
``getAgentInsights``: a rated agent reply is a logged turn with ``rating`` (and
``context``), and insights are read back from the transcripts the identity can see.

>>> from memvault import Vault                                          # doctest: +SKIP
>>> from memvault.ingest import ingest_file, insights                  # doctest: +SKIP
>>> report = ingest_file(vault, Path("session.jsonl"))                 # doctest: +SKIP
>>> insights(vault, agent="cfo", topic="pricing")["summary"]            # doctest: +SKIP
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import MemvaultError, PermissionDeniedError, Problem, ValidationError
from .memory import Memory, format_time, parse_time
from .security import find_secrets
from .transcripts import Turn, parse_turns, transcript_id, turn_key
from .vault import Filters, Vault, WriteResult

FORMATS = ("auto", "jsonl", "claude")
ROLES = ("user", "assistant", "system", "tool")
RATINGS = ("helpful", "neutral", "not_helpful")
MAX_TURN_CHARS = 16_000  # a pasted log or file dump is cut here; the transcript stays readable
_DETECT_LINES = 50
# Claude Code writes slash-command plumbing as user messages; they are not conversation.
_CLAUDE_NOISE = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
)


@dataclass
class IngestReport:
    """What one ingest did: turns read from the file, added, already there, problems."""

    source: str
    format: str
    session: str | None = None
    memory_id: str | None = None
    path: str | None = None
    turns: int = 0
    added: int = 0
    skipped: int = 0
    truncated: int = 0
    commit: str | None = None
    problems: list[Problem] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "format": self.format,
            "session": self.session,
            "id": self.memory_id,
            "path": self.path,
            "turns": self.turns,
            "added": self.added,
            "skipped": self.skipped,
            "truncated": self.truncated,
            "commit": self.commit,
            "problems": [str(p) for p in self.problems],
        }


@dataclass
class _Parsed:
    turns: list[tuple[str, Turn]] = field(default_factory=list)  # (file:line, turn)
    session: str | None = None
    truncated: int = 0
    problems: list[Problem] = field(default_factory=list)


# --- reading files ----------------------------------------------------------------------


def _read_lines(path: Path, where: str) -> list[tuple[int, str]]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise MemvaultError("file not found", where) from None
    except IsADirectoryError:
        raise MemvaultError("is a folder, expected a transcript file", where) from None
    except OSError as exc:
        raise MemvaultError(f"cannot read: {exc.strerror or exc}", where) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MemvaultError(f"not UTF-8 text (byte {exc.start})", where) from None
    return [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def _objects(
    lines: Iterable[tuple[int, str]], where: str, parsed: _Parsed
) -> list[tuple[int, dict[str, Any]]]:
    out: list[tuple[int, dict[str, Any]]] = []
    for n, line in lines:
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            parsed.problems.append(
                Problem(f"{where}:{n}", None, f"invalid JSON: {exc.msg} (column {exc.colno})")
            )
            continue
        if not isinstance(obj, dict):
            parsed.problems.append(
                Problem(f"{where}:{n}", None, f"expected a JSON object, got {type(obj).__name__}")
            )
            continue
        out.append((n, obj))
    return out


def detect_format(objects: Sequence[tuple[int, Mapping[str, Any]]]) -> str | None:
    """``claude`` for Claude Code session lines, ``jsonl`` for ``{role, content}`` lines."""
    for _, obj in objects[:_DETECT_LINES]:
        if obj.get("type") in ("user", "assistant") and isinstance(obj.get("message"), dict):
            return "claude"
        if "sessionId" in obj and "uuid" in obj:
            return "claude"
    for _, obj in objects[:_DETECT_LINES]:
        if "role" in obj:
            return "jsonl"
    return None


def _text_of(content: Any) -> str | None:
    """Text of a message ``content``: a string, or the text blocks of a block list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and block.get("type") in (
                "text",
                "input_text",
                "output_text",
            ):
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
        return "\n\n".join(p for p in parts if p.strip())
    return None


def _when(value: Any, where: str, parsed: _Parsed) -> tuple[dt.datetime | None, bool]:
    if value is None or value == "":
        return None, True
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1000 if value > 1e11 else value  # epoch milliseconds or seconds
        try:
            return dt.datetime.fromtimestamp(seconds, dt.UTC).replace(microsecond=0), True
        except (OverflowError, OSError, ValueError):
            parsed.problems.append(
                Problem(where, "timestamp", f"not a valid epoch time: {value!r}")
            )
            return None, False
    try:
        when = parse_time(value)
    except ValueError as exc:
        parsed.problems.append(Problem(where, "timestamp", str(exc)))
        return None, False
    return (when.replace(microsecond=0) if when else None), True


def _cap(text: str, parsed: _Parsed) -> str:
    text = text.strip()
    if len(text) > MAX_TURN_CHARS:
        parsed.truncated += 1
        cut = len(text) - MAX_TURN_CHARS
        text = text[:MAX_TURN_CHARS].rstrip() + f"\n\n[… {cut} more characters not kept]"
    return text


def _stable_id(role: str, when: dt.datetime | None, text: str, seen: Counter[str]) -> str:
    """Hash of role, time and text, plus how often that triple came before (repeated 'ok's)."""
    base = f"{role}\0{format_time(when) if when else ''}\0{text}"
    nth = seen[base]
    seen[base] += 1
    return hashlib.sha1(f"{base}\0{nth}".encode()).hexdigest()[:16]


def clean_extra(extra: Mapping[str, Any] | None) -> dict[str, str]:
    """Turn metadata as one-line values that survive the transcript's header format."""
    out: dict[str, str] = {}
    for key, value in (extra or {}).items():
        if value is None or value == "":
            continue
        text = " ".join(str(value).split()).replace("·", "-").replace("<!--", "").replace("-->", "")
        out[str(key)] = text[:200]
    return out


def _parse_jsonl(
    objects: Sequence[tuple[int, dict[str, Any]]], where: str, parsed: _Parsed
) -> None:
    seen: Counter[str] = Counter()
    for n, obj in objects:
        loc = f"{where}:{n}"
        role = obj.get("role")
        if role not in ROLES:
            parsed.problems.append(
                Problem(loc, "role", f"expected {'|'.join(ROLES)}, got {role!r}")
            )
            continue
        text = _text_of(obj.get("content", obj.get("text")))
        if text is None:
            parsed.problems.append(
                Problem(loc, "content", "expected a string or a list of text blocks")
            )
            continue
        if not text.strip():
            continue
        when, ok = _when(obj.get("timestamp", obj.get("time", obj.get("created"))), loc, parsed)
        if not ok:
            continue
        if parsed.session is None:
            for key in ("session", "session_id", "sessionId"):
                if isinstance(obj.get(key), str) and obj[key].strip():
                    parsed.session = obj[key].strip()
                    break
        given = next(
            (str(obj[k]) for k in ("id", "turn_id", "uuid") if obj.get(k) not in (None, "")), None
        )
        text = _cap(text, parsed)
        extra = clean_extra({k: obj.get(k) for k in ("agent", "rating", "context")})
        if extra.get("rating") and extra["rating"] not in RATINGS:
            parsed.problems.append(
                Problem(loc, "rating", f"expected {'|'.join(RATINGS)}, got {extra['rating']!r}")
            )
            continue
        tid = given or _stable_id(role, when, text, seen)
        parsed.turns.append((loc, (role, text, when, extra or None, tid)))


def _parse_claude(
    objects: Sequence[tuple[int, dict[str, Any]]], where: str, parsed: _Parsed
) -> None:
    seen: Counter[str] = Counter()
    for n, obj in objects:
        loc = f"{where}:{n}"
        kind = obj.get("type")
        if (
            parsed.session is None
            and isinstance(obj.get("sessionId"), str)
            and obj["sessionId"].strip()
        ):
            parsed.session = obj["sessionId"].strip()
        if kind not in ("user", "assistant"):
            continue  # summaries, snapshots, system and progress lines are not conversation
        if obj.get("isMeta") or obj.get("isSidechain") or obj.get("isCompactSummary"):
            continue
        message = obj.get("message")
        if not isinstance(message, Mapping):
            parsed.problems.append(
                Problem(loc, "message", f"a line of type '{kind}' needs a message object")
            )
            continue
        text = _text_of(message.get("content"))
        if text is None:
            parsed.problems.append(
                Problem(loc, "message.content", "expected a string or a list of content blocks")
            )
            continue
        if not text.strip() or (kind == "user" and text.lstrip().startswith(_CLAUDE_NOISE)):
            continue  # tool calls/results only, or slash-command plumbing
        role = message.get("role") if message.get("role") in ROLES else kind
        when, ok = _when(obj.get("timestamp"), loc, parsed)
        if not ok:
            continue
        text = _cap(text, parsed)
        given = obj.get("uuid") if isinstance(obj.get("uuid"), str) and obj["uuid"] else None
        parsed.turns.append(
            (loc, (str(role), text, when, None, given or _stable_id(str(role), when, text, seen)))
        )


def read_transcript(path: Path, fmt: str = "auto", where: str | None = None) -> tuple[str, _Parsed]:
    """Parse a transcript file without touching any vault: (format, parsed turns and problems)."""
    where = where or str(path)
    if fmt not in FORMATS:
        raise ValidationError(f"expected {'|'.join(FORMATS)}, got {fmt!r}", key="format")
    parsed = _Parsed()
    objects = _objects(_read_lines(path, where), where, parsed)
    if fmt == "auto":
        detected = detect_format(objects)
        if detected is None:
            if not objects:
                return "jsonl", parsed
            raise ValidationError(
                "cannot tell the format: expected Claude Code session lines ({type, message}) "
                "or one {role, content, timestamp} object per line; pass --format",
                where,
                "format",
            )
        fmt = detected
    (_parse_claude if fmt == "claude" else _parse_jsonl)(objects, where, parsed)
    parsed.problems.sort(key=lambda p: _line_of(p.path))
    return fmt, parsed


def _line_of(loc: str | None) -> int:
    tail = (loc or "").rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


# --- writing ----------------------------------------------------------------------------


def check_session_writable(vault: Vault, session: str) -> Memory | None:
    """The session's transcript if there is one; refuse one this identity cannot see.

    Appending to another agent's ``self`` transcript would both write into and (through
    the returned memory) read from memories that are not ours.
    """
    tid = transcript_id(session)
    owners = [m for m in vault.all_memories() if m.id == tid]
    if owners and not any(vault.identity.can_see(m) for m in owners):
        raise PermissionDeniedError(
            f"session {session!r} belongs to another agent; log to a session name of your own",
            key="session",
        )
    return owners[0] if owners else None


def _turn_ids(memory: Memory | None) -> set[str]:
    return {t.turn_id for t in parse_turns(memory.content)} if memory is not None else set()


def ingest_file(
    vault: Vault,
    path: str | Path,
    *,
    session: str | None = None,
    fmt: str = "auto",
    allow_secrets: bool = False,
) -> IngestReport:
    """Import a transcript file as session turns, in one commit (none if nothing is new).

    ``session`` defaults to the file's own session id (Claude Code ``sessionId``, a
    ``session`` key in generic JSONL), else the file name without its extension. Turns
    that look like they hold a credential are skipped and reported, unless
    ``allow_secrets``.
    """
    path = Path(path).expanduser()
    where = str(path)
    used_fmt, parsed = read_transcript(path, fmt, where)
    report = IngestReport(
        source=where, format=used_fmt, truncated=parsed.truncated, problems=list(parsed.problems)
    )
    name = (session or parsed.session or path.stem).strip()
    if not name:
        raise ValidationError("a session name is required (--session)", where, "session")
    report.session = name
    security = vault.config.get("security") or {}
    turns: list[Turn] = []
    for loc, turn in parsed.turns:
        if not allow_secrets and security.get("secrets") != "allow":
            found = find_secrets(turn[1], security)
            if found:
                report.problems.append(
                    Problem(
                        loc,
                        "content",
                        f"looks like a {found[0].kind} ({found[0].excerpt});"
                        " turn skipped (--allow-secrets keeps it)",
                    )
                )
                continue
        turns.append(turn)
    report.turns = len(turns)
    if not turns:
        return report
    before = _turn_ids(check_session_writable(vault, name))
    # Secrets were screened turn by turn above: one bad turn must not sink the file.
    result = vault.log_many(name, turns, allow_secrets=True, source=where)
    report.memory_id = result.memory.id
    report.path = result.memory.path
    report.commit = result.commit
    wanted = {turn_key(role, text, when, given) for role, text, when, _, given in turns}
    report.added = len((wanted & _turn_ids(result.memory)) - before) if result.commit else 0
    report.skipped = report.turns - report.added
    return report


def log_turn(
    vault: Vault,
    session: str,
    text: str,
    *,
    role: str = "assistant",
    rating: str | None = None,
    context: str | None = None,
    query: str | None = None,
    when: dt.datetime | None = None,
    allow_secrets: bool = False,
) -> WriteResult:
    """Log one turn (and optionally the user ``query`` it answers, just before it), one commit.

    ``rating`` (helpful|neutral|not_helpful) and ``context`` are kept in the turn's header;
    the writing agent's name is recorded too, so :func:`insights` can group by agent.
    """
    if role not in ROLES:
        raise ValidationError(f"expected {'|'.join(ROLES)}, got {role!r}", key="role")
    if rating is not None and rating not in RATINGS:
        raise ValidationError(f"expected {'|'.join(RATINGS)}, got {rating!r}", key="rating")
    if not text or not text.strip():
        raise ValidationError("empty turn: give the text", key="text")
    session = (session or "").strip()
    if not session:
        raise ValidationError("a session name is required", key="session")
    check_session_writable(vault, session)
    agent = vault.identity.agent
    turns: list[Turn] = []
    if query is not None and query.strip():
        turns.append(("user", query, when, None, None))
    extra = clean_extra(
        {"agent": agent if role == "assistant" else None, "rating": rating, "context": context}
    )
    turns.append((role, text, when, extra or None, None))
    return vault.log_many(session, turns, allow_secrets=allow_secrets)


def log_usage(
    vault: Vault,
    query: str,
    response: str,
    *,
    session: str,
    rating: str | None = None,
    context: str | None = None,
) -> WriteResult:
    """The seed's ``logAgentUsage``: a user query and the agent's rated response, one commit."""
    return log_turn(
        vault, session, response, role="assistant", rating=rating, context=context, query=query
    )


# --- insights ---------------------------------------------------------------------------


def _extra_fields(extra: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in extra.split(" · "):
        key, sep, value = part.partition(": ")
        if sep and key.strip():
            out[key.strip()] = value.strip()
    return out


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _stem(word: str) -> str:
    """Crude English stemming so a topic 'pricing' finds 'price' and 'prices'."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def insights(
    vault: Vault,
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
    topic_words = {_stem(w) for w in _words(topic or "")}
    transcripts = vault.memories(
        Filters(type="episodic", category="transcript", include_archive=True)
    )
    items: list[dict[str, Any]] = []
    for m in transcripts:
        last_user: str | None = None
        for turn in parse_turns(m.content):
            if turn.role == "user":
                last_user = turn.text
                continue
            fields = _extra_fields(turn.extra)
            rating = fields.get("rating")
            if not rating:
                continue
            who = fields.get("agent") or m.agent
            if agent and who != agent:
                continue
            try:
                when = parse_time(turn.when)
            except ValueError:
                when = None
            if since and (when is None or when < since):
                continue
            if until and (when is None or when > until):
                continue
            if topic_words:
                hay = {
                    _stem(w)
                    for w in _words(f"{last_user or ''} {turn.text} {fields.get('context', '')}")
                }
                if not topic_words <= hay:
                    continue
            items.append(
                {
                    "session": m.get("session") or m.id,
                    "transcript": m.id,
                    "turn": turn.turn_id,
                    "when": turn.when,
                    "agent": who,
                    "rating": rating,
                    "context": fields.get("context"),
                    "query": _snip(last_user, snippet_chars),
                    "response": _snip(turn.text, snippet_chars),
                }
            )
    items.sort(key=lambda i: (i["when"] or "", i["turn"]), reverse=True)
    by_rating = Counter(i["rating"] for i in items)
    per_agent: dict[str, Counter[str]] = {}
    for i in items:
        per_agent.setdefault(i["agent"] or "(none)", Counter())[i["rating"]] += 1
    return {
        "filters": {
            "agent": agent,
            "topic": topic,
            "since": format_time(since) if since else None,
            "until": format_time(until) if until else None,
        },
        "summary": {
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
        },
        "interactions": items[:limit],
    }


def _snip(text: str | None, n: int) -> str | None:
    if text is None:
        return None
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


__all__ = [
    "FORMATS",
    "RATINGS",
    "IngestReport",
    "detect_format",
    "ingest_file",
    "insights",
    "log_turn",
    "log_usage",
    "read_transcript",
]
