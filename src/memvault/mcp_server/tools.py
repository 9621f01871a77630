"""The MCP tools: argument schemas, LLM-facing descriptions and thin bodies over a Vault.

Each tool parses nothing itself (the SDK validates arguments against the signature),
calls one core function and returns JSON (shaped in :mod:`.results`).
:mod:`memvault.mcp_server` registers them,
runs each under its lock and turns errors into MCP error results. Names and
descriptions are written for a model deciding when to call them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from ..errors import PermissionDeniedError
from ..vault import Vault
from .results import (
    consolidation_view,
    hits_result,
    jsonable,
    result,
    short_memory,
    time_text,
    when,
)

KIND_TYPE = {"episode": "episodic", "fact": "semantic", "procedure": "procedural"}
READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
IDEMPOTENT_WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)
ToolSpec = tuple[Callable[..., CallToolResult], ToolAnnotations, str]


# --- the tools --------------------------------------------------------------------------

Kind = Literal["episode", "fact", "procedure"]
Scope = Literal["self", "team", "global"]
Rating = Literal["helpful", "neutral", "not_helpful"]
Speaker = Literal["user", "assistant", "system", "tool"]
Query = Annotated[
    str,
    Field(min_length=1, max_length=4000, description="What you are looking for, in plain words."),
]
Limit = Annotated[int, Field(ge=1, le=50, description="At most this many results.")]
Day = Annotated[str | None, Field(description="ISO date or time, e.g. 2026-01-31.")]


def define_tools(vault: Vault) -> list[ToolSpec]:
    """The tool functions over ``vault``, each with its annotations and title."""

    def remember(
        kind: Annotated[
            Kind,
            Field(
                description=(
                    "fact: something true (preference, decision, constraint); episode: something "
                    "that happened; procedure: how to do something."
                )
            ),
        ],
        content: Annotated[
            str,
            Field(
                min_length=1,
                max_length=100_000,
                description=(
                    "The memory itself, self-contained (it is read later without this "
                    "conversation)."
                ),
            ),
        ],
        title: Annotated[
            str | None, Field(max_length=200, description="Short title (default: first words).")
        ] = None,
        subject: Annotated[
            str | None,
            Field(
                max_length=200,
                description=(
                    "Facts: stable key shared by facts about the same thing, e.g. 'user.city' or "
                    "'api.rate-limit'; a newer fact on the subject supersedes the older one."
                ),
            ),
        ] = None,
        tags: Annotated[list[str] | None, Field(description="Keywords for filtering.")] = None,
        importance: Annotated[
            int | None, Field(ge=1, le=5, description="1 (trivia) to 5 (critical); default 3.")
        ] = None,
        scope: Annotated[
            Scope | None,
            Field(
                description=(
                    "team (default: your team sees it), self (only you), global (everyone; "
                    "proposed for review unless you are a librarian)."
                )
            ),
        ] = None,
        category: Annotated[
            str | None,
            Field(
                description=(
                    "facts: facts|decisions|definitions|relationships|constraints; procedures: "
                    "workflows|templates|patterns|heuristics; episodes: free word."
                )
            ),
        ] = None,
        outcome: Annotated[
            str | None, Field(description="Episodes: success, failure, partial, or a few words.")
        ] = None,
        session: Annotated[
            str | None, Field(description="Episodes: the session this belongs to.")
        ] = None,
        steps: Annotated[
            list[str] | None, Field(description="Procedures: the steps, in order.")
        ] = None,
        trigger: Annotated[
            list[str] | None,
            Field(description="Procedures: keywords that should bring this procedure up."),
        ] = None,
        valid_from: Annotated[
            str | None, Field(description="Facts: when it became true (ISO date; default now).")
        ] = None,
        confidence: Annotated[
            Literal["high", "medium", "low"] | None, Field(description="How sure you are.")
        ] = None,
        source: Annotated[
            str | None, Field(description="Where it came from: a URL, file, commit or session.")
        ] = None,
        related: Annotated[list[str] | None, Field(description="Ids of related memories.")] = None,
    ) -> CallToolResult:
        """Save something worth remembering beyond this conversation (one file, one git commit).

        kind=fact for what is true: preferences, decisions, constraints, names, versions. Give a
        `subject` so a later fact on the same subject supersedes this one (the old one is kept,
        marked superseded). kind=episode for what happened: a task done, a problem hit, a
        decision taken, feedback received; give `outcome`. kind=procedure for how to do
        something: give ordered `steps` and `trigger` keywords. Don't store secrets (they are
        refused). Returns the new memory's id and path; scope=global without the librarian role
        lands in the review inbox."""
        if scope == "self" and not vault.identity.agent:
            raise PermissionDeniedError(
                "scope 'self' needs an agent identity: start the server with --agent", key="scope"
            )
        fields_: dict[str, Any] = {
            "subject": subject,
            "tags": tags or [],
            "importance": importance,
            "scope": scope,
            "category": category,
            "outcome": outcome,
            "session": session,
            "steps": steps or [],
            "trigger": trigger or [],
            "confidence": confidence,
            "source": source,
            "related": related or [],
            "valid_from": time_text(valid_from, "valid_from"),
        }
        res = vault.add(KIND_TYPE[kind], content, title=title, **fields_)
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
                "commit": res.commit,
                "note": "proposed in inbox/ for review (scope global needs the librarian role)"
                if res.inbox
                else "saved",
            }
        )

    def log_turn(
        session: Annotated[
            str,
            Field(
                min_length=1,
                max_length=200,
                description="Session name or id (one transcript per session).",
            ),
        ],
        text: Annotated[
            str, Field(min_length=1, max_length=100_000, description="The turn's text.")
        ],
        speaker: Annotated[
            Speaker,
            Field(description="Who said it: assistant (you, the default), user, system or tool."),
        ] = "assistant",
        rating: Annotated[
            Rating | None,
            Field(
                description="How helpful this reply was (feedback from the user or the outcome)."
            ),
        ] = None,
        context: Annotated[
            str | None,
            Field(max_length=500, description="What the exchange was about, a few words."),
        ] = None,
        query: Annotated[
            str | None,
            Field(
                max_length=100_000,
                description=(
                    "The user's message this reply answers; logged just before it in the same "
                    "commit."
                ),
            ),
        ] = None,
    ) -> CallToolResult:
        """Append a conversation turn to a session transcript (short-term memory).

        Use it to keep an exchange worth remembering and to record feedback: pass `rating`
        (helpful / neutral / not_helpful) and `context` on your reply, and `query` to log the
        user's message in the same call. `insights` reads the ratings back; consolidation later
        distills old transcripts into episodes. Logging the same turn twice adds nothing."""
        from ..ingest import log_turn as core

        res = core(vault, session, text, role=speaker, rating=rating, context=context, query=query)
        return result(
            {
                "session": session,
                "id": res.memory.id,
                "path": res.memory.path,
                "commit": res.commit,
                "added": res.commit is not None,
            }
        )

    def recall(
        query: Query,
        limit: Limit = 8,
        since: Day = None,
        until: Day = None,
        include_archive: Annotated[
            bool, Field(description="Also search archived (decayed) memories.")
        ] = False,
        kind: Annotated[
            Kind | None,
            Field(description="Only this kind of memory (default: decided by the question)."),
        ] = None,
    ) -> CallToolResult:
        """Search long-term memory for anything relevant to a question or task.

        Call it at the start of a task and whenever the user refers to earlier work ("last
        time", "as we decided", "again"). Routed by intent: "when…/what happened…" finds
        episodes, newest first; "how do I…" finds procedures; "what is…" finds facts. Returns
        the best matches (id, title, snippet, score); read a whole memory with `show`."""
        opts: dict[str, Any] = {"limit": limit, "include_archive": include_archive}
        if kind:
            opts["kind"] = kind
        if since:
            opts["since"] = when(since, "since")
        if until:
            opts["until"] = when(until, "until")
        return hits_result(vault, vault.recall(query, **opts))

    def fact(
        query: Query,
        limit: Limit = 5,
        as_of: Annotated[
            str | None, Field(description="Answer as of this past date (ISO): what was true then.")
        ] = None,
    ) -> CallToolResult:
        """Look up what is known to be true: facts, decisions in force, definitions, relationships,
        constraints.

        Superseded facts are left out, unless `as_of` asks what was true at a past date."""
        opts: dict[str, Any] = {"limit": limit}
        if as_of:
            opts["as_of"] = when(as_of, "as_of")
        return hits_result(vault, vault.fact(query, **opts))

    def procedure(query: Query, limit: Limit = 3) -> CallToolResult:
        """Find how-to knowledge for a task: workflows with ordered steps, templates, patterns,
        heuristics.

        Matched by trigger keywords and similarity, ranked by match and past success rate. Call
        it before starting a multi-step task you may have done before."""
        return hits_result(vault, vault.procedure(query, limit=limit))

    def validate(
        statement: Annotated[
            str,
            Field(
                min_length=1, max_length=4000, description="The claim to check, as one sentence."
            ),
        ],
    ) -> CallToolResult:
        """Check a statement against known facts before relying on it or repeating it.

        Answers whether it agrees with, contradicts, or has no support in what is known, with
        the facts that decide it."""
        return hits_result(vault, vault.validate(statement))

    def context(
        query: Query,
        budget: Annotated[
            int, Field(ge=100, le=20_000, description="Token budget for the block.")
        ] = 1500,
    ) -> CallToolResult:
        """A ready-to-use block of the memories most useful for a task (relevant episodes, known
        facts, applicable procedures, active constraints), kept within a token budget.

        Call it once at the start of a task and keep the block in mind while you work."""
        block = vault.context(query, budget=budget)
        text = block if isinstance(block, str) else getattr(block, "text", None)
        data = jsonable(block)
        return result(
            data if isinstance(data, dict) else {"text": text},
            text=text if isinstance(text, str) else None,
        )

    def show(
        id: Annotated[
            str,
            Field(
                min_length=1,
                max_length=128,
                description="A memory id, as returned by recall/fact/procedure.",
            ),
        ],
    ) -> CallToolResult:
        """Read one memory in full: all its fields and its text (also readable as the resource
        memvault://<id>)."""
        return result(vault.get(id).to_dict())

    def forget(
        id: Annotated[str, Field(min_length=1, max_length=128, description="The memory's id.")],
        reason: Annotated[
            str,
            Field(
                min_length=3, max_length=500, description="Why: recorded in the git commit message."
            ),
        ],
    ) -> CallToolResult:
        """Delete a memory that is wrong, obsolete or unwanted (its file goes; git history keeps
        it).

        To correct a fact, prefer `remember` with the same `subject`: the old fact is kept as
        superseded, which preserves what was true when. Deleting a global memory needs the
        librarian role."""
        memory = vault.get(id)
        if memory.scope == "global" and not vault.identity.is_librarian:
            raise PermissionDeniedError(
                "forgetting a global memory needs the librarian role", memory.path, "scope"
            )
        res = vault.forget(id, reason)
        return result({"forgot": id, "path": res.memory.path, "commit": res.commit})

    def stats() -> CallToolResult:
        """How much is remembered: counts by kind, category, status and scope; oldest and newest;
        archive and inbox sizes; query usage."""
        from ..reports import vault_stats

        return result(vault_stats(vault))

    def recent_episodes(
        last: Annotated[int, Field(ge=1, le=100, description="How many episodes.")] = 10,
        include_transcripts: Annotated[
            bool, Field(description="Also list raw session transcripts.")
        ] = False,
    ) -> CallToolResult:
        """The most recent episodes, newest first: what happened lately (tasks, problems,
        decisions, feedback)."""
        from ..reports import recent_episodes as core

        return result(
            {"episodes": [short_memory(m) for m in core(vault, last, include_transcripts)]}
        )

    def consolidate(
        apply: Annotated[
            bool,
            Field(
                description=(
                    "false (default): only show the plan. true: perform it as one git commit."
                )
            ),
        ] = False,
    ) -> CallToolResult:
        """Memory maintenance (the "sleep job"): fold reads into the files, decay relevance and
        archive stale memories, merge near duplicates, resolve facts sharing a subject, propose
        patterns seen in 3+ episodes, distill old session transcripts.

        By default it only previews the plan and writes nothing; pass apply=true to perform it."""
        from ..consolidate import consolidate as core

        plan, sha = core(vault, None, dry_run=not apply)
        return result(consolidation_view(vault, plan, sha, applied=apply))

    def ingest(
        path: Annotated[
            str,
            Field(
                min_length=1,
                max_length=4096,
                description="Transcript file path (absolute, or relative to the server's folder).",
            ),
        ],
        session: Annotated[
            str | None,
            Field(
                max_length=200,
                description="Session name (default: the file's own session id, else its name).",
            ),
        ] = None,
        format: Annotated[
            Literal["auto", "jsonl", "claude"],
            Field(
                description=(
                    "auto-detect, generic {role, content, timestamp} JSONL, or Claude Code "
                    "session JSONL."
                )
            ),
        ] = "auto",
    ) -> CallToolResult:
        """Import a conversation transcript file as session turns (short-term memory).

        Reads Claude Code session JSONL or generic JSONL ({role, content, timestamp} per line).
        Idempotent: turns already ingested are skipped, so re-ingesting a growing file adds only
        the new turns. Bad lines are reported as file:line and skipped."""
        from ..ingest import ingest_file

        return result(ingest_file(vault, path, session=session, fmt=format).as_dict())

    def insights(
        by_agent: Annotated[
            str | None,
            Field(
                max_length=100,
                description="Only replies given by this agent (among memories you can see).",
            ),
        ] = None,
        topic: Annotated[
            str | None,
            Field(max_length=200, description="Only interactions mentioning these words."),
        ] = None,
        since: Day = None,
        until: Day = None,
        limit: Limit = 10,
    ) -> CallToolResult:
        """What past interactions taught: rated replies (helpful / neutral / not_helpful) from
        logged sessions, each with the question it answered, plus counts and helpful rate per
        agent.

        Use it before answering a question you may have been asked before, to reuse what helped
        and avoid what did not."""
        from ..ingest import insights as core

        return result(
            core(vault, by_agent, topic, when(since, "since"), when(until, "until"), limit)
        )

    return [
        (remember, WRITE, "Remember"),
        (log_turn, IDEMPOTENT_WRITE, "Log a conversation turn"),
        (recall, READ, "Recall memories"),
        (fact, READ, "Look up facts"),
        (procedure, READ, "Find a procedure"),
        (validate, READ, "Validate a statement"),
        (context, READ, "Memory context block"),
        (show, READ, "Show a memory"),
        (forget, DESTRUCTIVE, "Forget a memory"),
        (stats, READ, "Memory statistics"),
        (recent_episodes, READ, "Recent episodes"),
        (consolidate, DESTRUCTIVE, "Consolidate memory"),
        (ingest, IDEMPOTENT_WRITE, "Ingest a transcript"),
        (insights, READ, "Agent insights"),
    ]
