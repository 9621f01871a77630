"""The read-only tools: recall, fact, procedure, validate, context, show, stats,
recent_episodes, insights.

Searches go through the vault's search methods; the results are filtered once more by
identity before they are returned (see :mod:`.results`).
"""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult
from pydantic import Field

from .. import Vault
from .args import Day, Kind, Limit, Query
from .results import hits_result, result, short_memory, when

IncludeArchive = Annotated[bool, Field(description="Also search archived (decayed) memories.")]
KindFilter = Annotated[
    Kind | None,
    Field(description="Only this kind of memory (default: decided by the question)."),
]
AsOf = Annotated[
    str | None, Field(description="Answer as of this past date (ISO): what was true then.")
]
Statement = Annotated[
    str,
    Field(min_length=1, max_length=4000, description="The claim to check, as one sentence."),
]
Judge = Annotated[
    bool,
    Field(
        description=(
            "Ask the vault's judge command (validate.judge_command), when one is set, for the "
            "verdict; false: the built-in rules only."
        )
    ),
]
MinScore = Annotated[
    float | None,
    Field(
        ge=0,
        le=1,
        description=(
            "Relevance floor 0-1: hits below it are left out, and a result with none says "
            "nothing_relevant (default: the vault's measured floor; 0 turns it off)."
        ),
    ),
]
Budget = Annotated[int, Field(ge=100, le=20_000, description="Token budget for the block.")]
Around = Annotated[
    int,
    Field(ge=0, le=50, description="With a turn address: turns to show before and after it."),
]
ShowId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=128,
        description=(
            "A memory id, or a conversation turn's address (<transcript id>#<turn id>), "
            "as returned by recall/fact/procedure/context."
        ),
    ),
]
Last = Annotated[int, Field(ge=1, le=100, description="How many episodes.")]
IncludeTranscripts = Annotated[bool, Field(description="Also list raw session transcripts.")]
ByAgent = Annotated[
    str | None,
    Field(
        max_length=100,
        description="Only replies given by this agent (among memories you can see).",
    ),
]
Topic = Annotated[
    str | None,
    Field(max_length=200, description="Only interactions mentioning these words."),
]


class ReadTools:
    """The read-only tools over one vault; each method is one MCP tool."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def recall(
        self,
        query: Query,
        limit: Limit = 8,
        since: Day = None,
        until: Day = None,
        include_archive: IncludeArchive = False,
        kind: KindFilter = None,
        min_score: MinScore = None,
    ) -> CallToolResult:
        """Search long-term memory for anything relevant to a question or task.

        Call it at the start of a task and whenever the user refers to earlier work ("last
        time", "as we decided", "again"). Routed by intent: "when…/what happened…" finds
        episodes, newest first; "how do I…" finds procedures; "what is…" finds facts. Returns
        the best matches (id, title, snippet, score, relevance); read a whole memory with
        `show`. When nothing in memory is relevant, `hits` is empty and `nothing_relevant`
        is true, with the `reason`: don't look further."""
        found = self.vault.recall(
            query,
            limit=limit,
            include_archive=include_archive,
            kind=kind,
            since=when(since, "since"),
            until=when(until, "until"),
            min_score=min_score,
        )
        return hits_result(self.vault, found)

    def fact(
        self, query: Query, limit: Limit = 5, as_of: AsOf = None, min_score: MinScore = None
    ) -> CallToolResult:
        """Look up what is known to be true: facts, decisions in force, definitions, relationships,
        constraints.

        Superseded facts are left out, unless `as_of` asks what was true at a past date."""
        found = self.vault.fact(query, limit=limit, as_of=when(as_of, "as_of"), min_score=min_score)
        return hits_result(self.vault, found)

    def procedure(
        self, query: Query, limit: Limit = 3, min_score: MinScore = None
    ) -> CallToolResult:
        """Find how-to knowledge for a task: workflows with ordered steps, templates, patterns,
        heuristics.

        Matched by trigger keywords and similarity, ranked by match and past success rate. Call
        it before starting a multi-step task you may have done before."""
        found = self.vault.procedure(query, limit=limit, min_score=min_score)
        return hits_result(self.vault, found)

    def validate(self, statement: Statement, judge: Judge = True) -> CallToolResult:
        """Check a statement against known facts before relying on it or repeating it.

        Answers whether it agrees with, contradicts, or has no support in what is known, with
        the facts that decide it."""
        return hits_result(self.vault, self.vault.validate(statement, judge=judge))

    def context(
        self, query: Query, budget: Budget = 1500, min_score: MinScore = None
    ) -> CallToolResult:
        """A ready-to-use block of the memories most useful for a task (relevant episodes, known
        facts, applicable procedures, active constraints), kept within a token budget.

        Call it once at the start of a task and keep the block in mind while you work: the
        block is the result's `text`; `included` and `omitted` list the memories behind it."""
        return result(self.vault.context(query, budget=budget, min_score=min_score).as_dict())

    def show(self, id: ShowId, around: Around = 2) -> CallToolResult:
        """Read one memory in full: all its fields and its text (also readable as the resource
        memvault://<id>). For a turn address (session-x#turn), the turn with ``around`` turns
        before and after it (resource memvault://<transcript id>/turn/<turn id>)."""
        if "#" in id:
            return result(self.vault.turn_window(id, around=around).as_dict())
        return result(self.vault.get(id).to_dict())

    def stats(self) -> CallToolResult:
        """How much is remembered: counts by kind, category, status and scope; oldest and newest;
        archive and inbox sizes; query usage."""
        return result(self.vault.stats())

    def recent_episodes(
        self, last: Last = 10, include_transcripts: IncludeTranscripts = False
    ) -> CallToolResult:
        """The most recent episodes, newest first: what happened lately (tasks, problems,
        decisions, feedback)."""
        episodes = self.vault.episodes(last, include_transcripts=include_transcripts)
        return result({"episodes": [short_memory(m) for m in episodes]})

    def insights(
        self,
        by_agent: ByAgent = None,
        topic: Topic = None,
        since: Day = None,
        until: Day = None,
        limit: Limit = 10,
    ) -> CallToolResult:
        """What past interactions taught: rated replies (helpful / neutral / not_helpful) from
        logged sessions, each with the question it answered, plus counts and helpful rate per
        agent.

        Use it before answering a question you may have been asked before, to reuse what helped
        and avoid what did not."""
        found = self.vault.insights(
            by_agent, topic, when(since, "since"), when(until, "until"), limit
        )
        return result(found)
