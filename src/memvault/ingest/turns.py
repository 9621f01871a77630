"""Writing conversation turns: a transcript file imported, or one turn logged, per commit."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from ..core import Core, WriteResult
from ..errors import PermissionDeniedError, Problem, ValidationError
from ..memory import Memory
from ..security import Redactions, secrets_allowed
from ..transcripts import Turn, parse_turns, transcript_id, turn_key
from ..values import Record, field
from .formats import RATINGS, ROLES, ParsedTranscript, clean_extra, read_transcript


class IngestReport(Record):
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
    redacted: int = 0  # credential-looking spans replaced by a marker (turns kept)
    redacted_kinds: dict[str, int] = field(default_factory=dict)  # those spans by kind
    notes: list[str] = field(default_factory=list)  # one line per file on what was redacted

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
            "redacted": self.redacted,
            "redacted_kinds": dict(self.redacted_kinds),
            "notes": list(self.notes),
        }


def check_session_writable(vault: Core, session: str) -> Memory | None:
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


def ingest_file(
    vault: Core,
    path: str | Path,
    *,
    session: str | None = None,
    fmt: str = "auto",
    allow_secrets: bool = False,
    scope: str | None = None,
    channel: str | None = None,
) -> IngestReport:
    """Import a transcript file as session turns, in one commit (none if nothing is new).

    ``session`` defaults to the file's own session id (Claude Code ``sessionId``, a
    ``session`` key in generic JSONL), else the file name without its extension. A
    credential-looking span is replaced by ``[secret redacted: KIND]`` and the turn kept
    (``report.notes`` says so), unless ``allow_secrets``. ``scope`` and ``channel`` as for
    :meth:`Core.log_many` (a bad scope is refused before the file is read).
    """
    path = Path(path).expanduser()
    where = str(path)
    if scope:
        vault.capture_scope(scope)
    used_fmt, parsed = read_transcript(path, fmt, where)
    report = IngestReport(
        source=where, format=used_fmt, truncated=parsed.truncated, problems=list(parsed.problems)
    )
    name = (session or parsed.session or path.stem).strip()
    if not name:
        raise ValidationError("a session name is required (--session)", where, "session")
    report.session = name
    turns = screened_turns(vault, parsed, report, allow_secrets)
    report.turns = len(turns)
    if not turns:
        return report
    before = turn_ids(check_session_writable(vault, name))
    # Secrets were screened turn by turn above: one bad turn must not sink the file.
    result = vault.log_many(
        name, turns, allow_secrets=True, source=where, scope=scope, channel=channel
    )
    report.memory_id = result.memory.id
    report.path = result.memory.path
    report.commit = result.commit
    wanted = {turn_key(role, text, when, given) for role, text, when, _, given in turns}
    report.added = len((wanted & turn_ids(result.memory)) - before) if result.commit else 0
    report.skipped = report.turns - report.added
    return report


def screened_turns(
    vault: Core, parsed: ParsedTranscript, report: IngestReport, allow_secrets: bool
) -> list[Turn]:
    """The parsed turns with each credential-looking span replaced by a marker
    (``[secret redacted: KIND]``): the turn stays, the secret doesn't, and one line of
    ``report.notes`` says so for the file."""
    security = vault.config.get("security") or {}
    if secrets_allowed(security, allow_secrets):
        return [turn for _, turn in parsed.turns]
    turns: list[Turn] = []
    done = Redactions()
    for loc, turn in parsed.turns:
        role, text, when, extra, given = turn
        clean = done.redact(text, security, str(loc))
        turns.append((role, clean, when, extra, given) if clean != text else turn)
    note = done.note(done.first)
    if note:
        report.redacted = done.spans
        report.redacted_kinds = dict(done.kinds)
        report.notes.append(note)
    return turns


def turn_ids(memory: Memory | None) -> set[str]:
    """The ids of the turns a transcript holds (none for no transcript)."""
    return {t.turn_id for t in parse_turns(memory.content)} if memory is not None else set()


def log_turn(
    vault: Core,
    session: str,
    text: str,
    *,
    role: str = "assistant",
    rating: str | None = None,
    context: str | None = None,
    query: str | None = None,
    when: dt.datetime | None = None,
    allow_secrets: bool = False,
    scope: str | None = None,
    channel: str | None = None,
) -> WriteResult:
    """Log one turn (and optionally the user ``query`` it answers, just before it), one commit.

    ``rating`` (helpful|neutral|not_helpful) and ``context`` are kept in the turn's header;
    the writing agent's name is recorded too, so :func:`~memvault.ingest.insights` can
    group by agent.
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
    return vault.log_many(session, turns, allow_secrets=allow_secrets, scope=scope, channel=channel)


def log_usage(
    vault: Core,
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


__all__ = ["IngestReport", "check_session_writable", "ingest_file", "log_turn", "log_usage"]
