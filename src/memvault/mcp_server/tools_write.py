"""The tools that write: remember, log_turn, forget, ingest, rescope.

Each body calls one core function on the server's vault and returns JSON; the argument
types below are the schema the model sees (see :mod:`.args`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.types import CallToolResult
from pydantic import Field

from .. import KIND_TYPE, Vault
from ..errors import PermissionDeniedError
from .args import Confidence, Kind, Rating, Scope, Speaker, TranscriptFormat
from .results import result, time_text

# --- remember ---------------------------------------------------------------------------

KindArg = Annotated[
    Kind,
    Field(
        description=(
            "fact: something true (preference, decision, constraint); episode: something "
            "that happened; procedure: how to do something."
        )
    ),
]
Content = Annotated[
    str,
    Field(
        min_length=1,
        max_length=100_000,
        description=(
            "The memory itself, self-contained (it is read later without this conversation)."
        ),
    ),
]
Title = Annotated[
    str | None, Field(max_length=200, description="Short title (default: first words).")
]
Subject = Annotated[
    str | None,
    Field(
        max_length=200,
        description=(
            "Facts: stable key shared by facts about the same thing, e.g. 'user.city' or "
            "'api.rate-limit'; a newer fact on the subject supersedes the older one."
        ),
    ),
]
Tags = Annotated[list[str] | None, Field(description="Keywords for filtering.")]
Importance = Annotated[
    int | None, Field(ge=1, le=5, description="1 (trivia) to 5 (critical); default 3.")
]
ScopeArg = Annotated[
    Scope | None,
    Field(
        description=(
            "team (default: your team sees it), self (only you), global (everyone; "
            "proposed for review unless you are a librarian)."
        )
    ),
]
Category = Annotated[
    str | None,
    Field(
        description=(
            "facts: facts|decisions|definitions|relationships|constraints; procedures: "
            "workflows|templates|patterns|heuristics; episodes: free word."
        )
    ),
]
Outcome = Annotated[
    str | None, Field(description="Episodes: success, failure, partial, or a few words.")
]
EpisodeSession = Annotated[str | None, Field(description="Episodes: the session this belongs to.")]
Steps = Annotated[list[str] | None, Field(description="Procedures: the steps, in order.")]
Trigger = Annotated[
    list[str] | None,
    Field(description="Procedures: keywords that should bring this procedure up."),
]
ValidFrom = Annotated[
    str | None, Field(description="Facts: when it became true (ISO date; default now).")
]
ConfidenceArg = Annotated[Confidence | None, Field(description="How sure you are.")]
Source = Annotated[
    str | None, Field(description="Where it came from: a URL, file, commit or session.")
]
Related = Annotated[list[str] | None, Field(description="Ids of related memories.")]

# --- log_turn ---------------------------------------------------------------------------

TurnSession = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        description="Session name or id (one transcript per session).",
    ),
]
TurnText = Annotated[str, Field(min_length=1, max_length=100_000, description="The turn's text.")]
SpeakerArg = Annotated[
    Speaker,
    Field(description="Who said it: assistant (you, the default), user, system or tool."),
]
RatingArg = Annotated[
    Rating | None,
    Field(description="How helpful this reply was (feedback from the user or the outcome)."),
]
TurnContext = Annotated[
    str | None,
    Field(max_length=500, description="What the exchange was about, a few words."),
]
TurnQuery = Annotated[
    str | None,
    Field(
        max_length=100_000,
        description=(
            "The user's message this reply answers; logged just before it in the same commit."
        ),
    ),
]

CaptureScope = Annotated[
    Scope | None,
    Field(
        description=(
            "Who may read a new session: self (only you: direct messages, anything personal), "
            "team, or global (proposed for review). Default: the vault's capture.scope."
        )
    ),
]
Channel = Annotated[
    str | None,
    Field(max_length=200, description="Where it was said, e.g. slack:#ops (pausable)."),
]

NewScope = Annotated[
    Scope,
    Field(
        description=(
            "self (only you; it must be yours), team (your team), global (everyone; "
            "proposed for review unless you are a librarian)."
        )
    ),
]

# --- forget, ingest, rescope ------------------------------------------------------------

UseOutcome = Annotated[
    Literal["success", "failure"], Field(description="How following the procedure went.")
]
UseNote = Annotated[
    str,
    Field(max_length=2000, description="What happened, in a sentence (kept in the commit)."),
]
ForgetId = Annotated[str, Field(min_length=1, max_length=128, description="The memory's id.")]
Reason = Annotated[
    str,
    Field(min_length=3, max_length=500, description="Why: recorded in the git commit message."),
]
TranscriptPath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        description="Transcript file path (absolute, or relative to the server's folder).",
    ),
]
IngestSession = Annotated[
    str | None,
    Field(
        max_length=200,
        description="Session name (default: the file's own session id, else its name).",
    ),
]
FormatArg = Annotated[
    TranscriptFormat,
    Field(
        description=(
            "auto-detect, generic {role, content, timestamp} JSONL, or Claude Code session JSONL."
        )
    ),
]


class WriteTools:
    """The writing tools over one vault; each method is one MCP tool."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def remember(
        self,
        kind: KindArg,
        content: Content,
        title: Title = None,
        subject: Subject = None,
        tags: Tags = None,
        importance: Importance = None,
        scope: ScopeArg = None,
        category: Category = None,
        outcome: Outcome = None,
        session: EpisodeSession = None,
        steps: Steps = None,
        trigger: Trigger = None,
        valid_from: ValidFrom = None,
        confidence: ConfidenceArg = None,
        source: Source = None,
        related: Related = None,
    ) -> CallToolResult:
        """Save something worth remembering beyond this conversation (one file, one git commit).

        kind=fact for what is true: preferences, decisions, constraints, names, versions. Give a
        `subject` so a later fact on the same subject supersedes this one (the old one is kept,
        marked superseded). kind=episode for what happened: a task done, a problem hit, a
        decision taken, feedback received; give `outcome`. kind=procedure for how to do
        something: give ordered `steps` and `trigger` keywords. Don't store secrets: a
        credential-looking span is replaced by `[secret redacted: KIND]` (`notes` says so),
        and a memory that is little but a credential is refused. Returns the new memory's id
        and path; scope=global without the librarian role lands in the review inbox."""
        vault = self.vault
        if scope == "self" and not vault.identity.agent:
            raise PermissionDeniedError(
                "scope 'self' needs an agent identity: start the server with --agent", key="scope"
            )
        res = vault.add(
            KIND_TYPE[kind],
            content,
            title=title,
            subject=subject,
            tags=tags or [],
            importance=importance,
            scope=scope,
            category=category,
            outcome=outcome,
            session=session,
            steps=steps or [],
            trigger=trigger or [],
            confidence=confidence,
            source=source,
            related=related or [],
            valid_from=time_text(valid_from, "valid_from"),
        )
        m = res.memory
        return result(
            {
                "id": m.id,
                "path": m.path,
                "kind": kind,
                "scope": m.scope,
                "status": m.status,
                "inbox": res.inbox,
                "superseded": list(res.superseded),
                "disputed": list(res.disputed),
                "commit": res.commit,
                "notes": list(res.notes),
                "note": "proposed in inbox/ for review (scope global needs the librarian role)"
                if res.inbox
                else "saved; may contradict a fact in force: recorded a dispute (disputes tool)"
                if res.disputed
                else "saved",
            }
        )

    def log_turn(
        self,
        session: TurnSession,
        text: TurnText,
        speaker: SpeakerArg = "assistant",
        rating: RatingArg = None,
        context: TurnContext = None,
        query: TurnQuery = None,
        scope: CaptureScope = None,
        channel: Channel = None,
    ) -> CallToolResult:
        """Append a conversation turn to a session transcript (short-term memory).

        Use it to keep an exchange worth remembering and to record feedback: pass `rating`
        (helpful / neutral / not_helpful) and `context` on your reply, and `query` to log the
        user's message in the same call. `insights` reads the ratings back; consolidation later
        distills old transcripts into episodes. Logging the same turn twice adds nothing.
        A new session gets `scope` (self for a private conversation); later turns keep the
        session's scope. A paused agent, channel or scope is refused. A credential-looking
        span is replaced by `[secret redacted: KIND]` and the turn kept (`notes` says so)."""
        res = self.vault.log_turn(
            session,
            text,
            role=speaker,
            rating=rating,
            context=context,
            query=query,
            scope=scope,
            channel=channel,
        )
        return result(
            {
                "session": session,
                "id": res.memory.id,
                "path": res.memory.path,
                "scope": res.memory.scope,
                "commit": res.commit,
                "added": res.commit is not None,
                "notes": list(res.notes),
            }
        )

    def forget(self, id: ForgetId, reason: Reason) -> CallToolResult:
        """Delete a memory that is wrong, obsolete or unwanted (its file goes; git history keeps
        it).

        To correct a fact, prefer `remember` with the same `subject`: the old fact is kept as
        superseded, which preserves what was true when. Deleting a global memory needs the
        librarian role."""
        vault = self.vault
        memory = vault.get(id)
        if memory.scope == "global" and not vault.identity.is_librarian:
            raise PermissionDeniedError(
                "forgetting a global memory needs the librarian role", memory.path, "scope"
            )
        res = vault.forget(id, reason)
        return result({"forgot": id, "path": res.memory.path, "commit": res.commit})

    def procedure_used(
        self, id: ForgetId, outcome: UseOutcome, note: UseNote = ""
    ) -> CallToolResult:
        """Report that you followed a procedure (found with `procedure`) and how it went.

        Call it after you carry out a procedure's steps: success or failure. It updates the
        procedure's times_used, success_rate and last_used (one git commit), so procedures that
        work rank first next time and ones that keep failing get reviewed."""
        res = self.vault.procedure_used(id, outcome, note)
        meta = res.memory.meta
        counters = {k: meta.get(k) for k in ("times_used", "success_rate", "last_used")}
        return result({"id": res.memory.id, **counters, "commit": res.commit})

    def ingest(
        self,
        path: TranscriptPath,
        session: IngestSession = None,
        format: FormatArg = "auto",
        scope: CaptureScope = None,
        channel: Channel = None,
    ) -> CallToolResult:
        """Import a conversation transcript file as session turns (short-term memory).

        Reads Claude Code session JSONL or generic JSONL ({role, content, timestamp} per line).
        Idempotent: turns already ingested are skipped, so re-ingesting a growing file adds only
        the new turns. Bad lines are reported as file:line and skipped. `scope` as for
        log_turn."""
        report = self.vault.ingest(path, session=session, fmt=format, scope=scope, channel=channel)
        return result(report.as_dict())

    def rescope(self, id: ForgetId, scope: NewScope, reason: Reason) -> CallToolResult:
        """Move a memory (or a session transcript) to another scope, as one git commit.

        self: only you will see it (it must be yours); team: your team; global: everyone,
        proposed in the review inbox unless you are a librarian. Use it when something was
        saved too widely (a private conversation saved team-wide) or should be shared."""
        res = self.vault.rescope(id, scope, reason)
        m = res.memory
        return result(
            {"id": m.id, "path": m.path, "scope": m.scope, "inbox": res.inbox, "commit": res.commit}
        )
