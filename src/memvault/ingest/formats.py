"""Reading transcript files: generic JSONL and Claude Code sessions, without touching a vault.

Every turn gets a stable id (the line's ``uuid``/``id``, else a hash of role, time and
text), so the same file read twice gives the same turns. Bad lines become ``file:line``
problems and are skipped; the rest is kept.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import MemvaultError, Problem, ValidationError
from ..memory import format_time, parse_time
from ..transcripts import Turn, header_value
from ..values import Record, field

FORMATS = ("auto", "jsonl", "claude")
ROLES = ("user", "assistant", "system", "tool")
RATINGS = ("helpful", "neutral", "not_helpful")
MAX_TURN_CHARS = 16_000  # a pasted log or file dump is cut here; the transcript stays readable
DETECT_LINES = 50  # format detection looks at this many objects from the top
# Claude Code writes slash-command plumbing and interruption markers as user messages;
# they are the harness talking, not the conversation.
CLAUDE_NOISE = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "[Request interrupted by user",
)
# Text blocks the harness adds beside the user's own text (reminders to the model, the file
# open in the IDE), dropped from a turn.
CLAUDE_INJECTED = ("<system-reminder>", "<ide_opened_file>", "<ide_selection>")
# Line types only Claude Code writes: a session file may open with dozens of them before
# its first message (file snapshots are written before every prompt).
CLAUDE_RECORDS = ("file-history-snapshot", "summary", "system", "attachment", "progress")
TEXT_BLOCKS = ("text", "input_text", "output_text")

Objects = Sequence[tuple[int, dict[str, Any]]]  # (line number, JSON object)


class ParsedTranscript(Record):
    """The turns read from a file, each with its ``file:line``, and what went wrong."""

    turns: list[tuple[str, Turn]] = field(default_factory=list)  # (file:line, turn)
    session: str | None = None
    truncated: int = 0
    problems: list[Problem] = field(default_factory=list)


def read_transcript(
    path: Path, fmt: str = "auto", where: str | None = None
) -> tuple[str, ParsedTranscript]:
    """Parse a transcript file without touching any vault: (format, parsed turns and problems)."""
    where = where or str(path)
    if fmt not in FORMATS:
        raise ValidationError(f"expected {'|'.join(FORMATS)}, got {fmt!r}", key="format")
    parsed = ParsedTranscript()
    objects = json_objects(read_lines(path, where), where, parsed)
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
    elif fmt == "claude" and objects and not any("type" in obj for _, obj in objects):
        # Every Claude Code line has a type: read as a session, this file would silently
        # give nothing at all.
        raise ValidationError(
            "not a Claude Code session: no line has a 'type' (user, assistant, ...);"
            " for {role, content} lines pass --format jsonl",
            where,
            "format",
        )
    (parse_claude if fmt == "claude" else parse_jsonl)(objects, where, parsed)
    parsed.problems.sort(key=lambda p: line_of(p.path))
    return fmt, parsed


def detect_format(objects: Sequence[tuple[int, Mapping[str, Any]]]) -> str | None:
    """``claude`` for Claude Code session lines, ``jsonl`` for ``{role, content}`` lines.

    Claude Code's marks are looked for on every line (the lines are parsed already, and a
    session may open with many snapshot lines); a plain ``role`` key in the first lines."""
    for _, obj in objects:
        if obj.get("type") in ("user", "assistant") and isinstance(obj.get("message"), dict):
            return "claude"
        marked = ("sessionId" in obj and "uuid" in obj) or obj.get("type") in CLAUDE_RECORDS
        if marked and "role" not in obj:
            return "claude"
    for _, obj in objects[:DETECT_LINES]:
        if "role" in obj:
            return "jsonl"
    return None


def clean_extra(extra: Mapping[str, Any] | None) -> dict[str, str]:
    """Turn metadata as one-line values that survive the transcript's header format."""
    out: dict[str, str] = {}
    for key, value in (extra or {}).items():
        if value is None or value == "":
            continue
        out[str(key)] = header_value(value)
    return out


# --- lines and objects ------------------------------------------------------------------


def read_lines(path: Path, where: str) -> list[tuple[int, str]]:
    """The file's non-blank lines with their numbers; unreadable files are one-line errors."""
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


def json_objects(
    lines: Iterable[tuple[int, str]], where: str, parsed: ParsedTranscript
) -> list[tuple[int, dict[str, Any]]]:
    """The lines that hold a JSON object; the others are recorded as problems."""
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


def line_of(loc: str | None) -> int:
    """The line number at the end of ``file:line`` (0 when there is none)."""
    tail = (loc or "").rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


# --- fields of a turn -------------------------------------------------------------------


def text_of(content: Any) -> str | None:
    """Text of a message ``content``: a string, or the text blocks of a block list."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") in TEXT_BLOCKS:
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
    return "\n\n".join(p for p in parts if p.strip())


def turn_time(value: Any, where: str, parsed: ParsedTranscript) -> tuple[dt.datetime | None, bool]:
    """(time, ok): an ISO time or epoch seconds/milliseconds; a bad one is a problem."""
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


def cap(text: str, parsed: ParsedTranscript) -> str:
    """``text`` stripped and cut to :data:`MAX_TURN_CHARS`, saying how much was left out."""
    text = text.strip()
    if len(text) > MAX_TURN_CHARS:
        parsed.truncated += 1
        cut = len(text) - MAX_TURN_CHARS
        text = text[:MAX_TURN_CHARS].rstrip() + f"\n\n[… {cut} more characters not kept]"
    return text


def stable_id(role: str, when: dt.datetime | None, text: str, seen: Counter[str]) -> str:
    """Hash of role, time and text, plus how often that triple came before (repeated 'ok's)."""
    base = f"{role}\0{format_time(when) if when else ''}\0{text}"
    nth = seen[base]
    seen[base] += 1
    return hashlib.sha1(f"{base}\0{nth}".encode()).hexdigest()[:16]


# --- the two formats --------------------------------------------------------------------


def parse_jsonl(objects: Objects, where: str, parsed: ParsedTranscript) -> None:
    """Generic JSONL: ``{role, content, timestamp}`` per line, optional id, session, name (or
    speaker), agent, rating and context."""
    seen: Counter[str] = Counter()
    for n, obj in objects:
        loc = f"{where}:{n}"
        role = obj.get("role")
        if role not in ROLES:
            parsed.problems.append(
                Problem(loc, "role", f"expected {'|'.join(ROLES)}, got {role!r}")
            )
            continue
        text = text_of(obj.get("content", obj.get("text")))
        if text is None:
            parsed.problems.append(
                Problem(loc, "content", "expected a string or a list of text blocks")
            )
            continue
        if not text.strip():
            continue
        when, ok = turn_time(obj.get("timestamp", obj.get("time", obj.get("created"))), loc, parsed)
        if not ok:
            continue
        if parsed.session is None:
            parsed.session = jsonl_session(obj)
        given = next(
            (str(obj[k]) for k in ("id", "turn_id", "uuid") if obj.get(k) not in (None, "")), None
        )
        text = cap(text, parsed)
        name = obj.get("name") or obj.get("speaker")  # who spoke, when the line names them
        extra = clean_extra(
            {"name": name, **{k: obj.get(k) for k in ("agent", "rating", "context")}}
        )
        if extra.get("rating") and extra["rating"] not in RATINGS:
            parsed.problems.append(
                Problem(loc, "rating", f"expected {'|'.join(RATINGS)}, got {extra['rating']!r}")
            )
            continue
        tid = given or stable_id(role, when, text, seen)
        parsed.turns.append((loc, (role, text, when, extra or None, tid)))


def jsonl_session(obj: Mapping[str, Any]) -> str | None:
    """The session a generic JSONL line names, if any."""
    for key in ("session", "session_id", "sessionId"):
        value = obj.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def parse_claude(objects: Objects, where: str, parsed: ParsedTranscript) -> None:
    """Claude Code session JSONL: only the conversation's text, not tools, thinking or meta."""
    seen: Counter[str] = Counter()
    for n, obj in objects:
        loc = f"{where}:{n}"
        kind = obj.get("type")
        session = obj.get("sessionId")
        if parsed.session is None and isinstance(session, str) and session.strip():
            parsed.session = session.strip()
        if kind not in ("user", "assistant") or not_conversation(obj):
            continue  # snapshots, summaries, system lines, sub-agents, compaction summaries
        message = obj.get("message")
        if not isinstance(message, Mapping):
            parsed.problems.append(
                Problem(loc, "message", f"a line of type '{kind}' needs a message object")
            )
            continue
        if message.get("model") == "<synthetic>":
            continue  # the harness speaking as the assistant ("No response requested.")
        text = claude_text(kind, message.get("content"))
        if text is None:
            parsed.problems.append(
                Problem(loc, "message.content", "expected a string or a list of content blocks")
            )
            continue
        if not text.strip() or (kind == "user" and text.lstrip().startswith(CLAUDE_NOISE)):
            continue  # tool calls/results only, or slash-command plumbing
        role = str(message.get("role") if message.get("role") in ROLES else kind)
        when, ok = turn_time(obj.get("timestamp"), loc, parsed)
        if not ok:
            continue
        text = cap(text, parsed)
        uuid = obj.get("uuid")
        given = uuid if isinstance(uuid, str) and uuid else None
        parsed.turns.append(
            (loc, (role, text, when, None, given or stable_id(role, when, text, seen)))
        )


def not_conversation(obj: Mapping[str, Any]) -> bool:
    """A user/assistant line that is not part of the conversation: meta lines, a sub-agent's
    (sidechain) lines, the summary written after a compaction, API error notices."""
    flags = ("isMeta", "isSidechain", "isCompactSummary", "isApiErrorMessage")
    return any(obj.get(flag) for flag in flags)


def claude_text(kind: str, content: Any) -> str | None:
    """The conversation's text in a message: "" for a user line that carries tool results
    (any text beside them is the harness's), reminders the harness injects left out."""
    if isinstance(content, list):
        if kind == "user" and any(
            isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content
        ):
            return ""
        content = [
            b
            for b in content
            if not (
                isinstance(b, Mapping)
                and isinstance(b.get("text"), str)
                and b["text"].lstrip().startswith(CLAUDE_INJECTED)
            )
        ]
    return text_of(content)


__all__ = [
    "FORMATS",
    "MAX_TURN_CHARS",
    "RATINGS",
    "ROLES",
    "ParsedTranscript",
    "clean_extra",
    "detect_format",
    "read_transcript",
]
