"""The vault: memvault's whole user API, as one object that every door uses.

The CLI, the MCP server, the web inspector, the git hooks and the watcher call these
methods and nothing below them (``tools/layout.py`` checks it). A :class:`Vault` holds a
:class:`~memvault.core.Core` (the files, git, the catalog, the lock and the write API) and
hands it to the services that do the work: search, validate, consolidation, reports,
transfer, sync, ingest, capture, review and purge. Services are imported when first used,
so ``memvault add`` never pays for the search stack.
"""

from __future__ import annotations

from .core import Core, WriteResult
from .values import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import datetime as dt
    from collections.abc import Iterable, Mapping, Sequence
    from contextlib import AbstractContextManager
    from pathlib import Path
    from typing import Any, Self, Unpack

    from .browse import Listing
    from .config import Config
    from .consolidate import Plan
    from .consolidate.decay import Relevance
    from .consolidate.model import Progress as StepProgress
    from .errors import Problem
    from .fields import MemoryFields
    from .forgotten import Forgotten
    from .index import ReindexReport
    from .index.handle import Progress
    from .ingest import IngestReport
    from .memory import Memory
    from .pauses import PauseRule
    from .purge import PurgeReport
    from .purge_match import ContentPurge
    from .review import Dispute
    from .scopes import AgentIdentity, Filters
    from .search import ContextBlock, SearchOptions, SearchResult, ValidateOptions
    from .store.git.ops import Change
    from .store.journal import Recovery
    from .store.usage import Usage
    from .sync import HandEdits, SyncReport
    from .transcripts import TurnWindow
    from .transfer import ImportProgress, ImportReport
    from .trust import CommandStatus
    from .validate import ValidationResult

__all__ = ["Vault", "WriteResult"]


class Vault:
    """A memory vault. Open one with :meth:`open` or create one with :meth:`init`."""

    def __init__(self, core: Core) -> None:
        self._core = core

    # --- opening ---------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        agent: str | None = None,
        team: str | None = None,
        role: str | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> Self:
        """Open an existing vault: ``path``, else ``$MEMVAULT_VAULT``, else the nearest parent
        folder holding ``.memvault/``. ``agent``/``team``/``role`` set who reads and writes."""
        return cls(Core.open(path, agent=agent, team=team, role=role, overrides=overrides))

    @classmethod
    def init(
        cls,
        path: str | Path,
        *,
        examples: bool = False,
        agent: str | None = None,
        team: str | None = None,
        role: str | None = None,
        languages: Sequence[str] | None = None,
    ) -> Self:
        """Create a vault: folders, config, README, git repository, first commit."""
        return cls(
            Core.init(
                path, examples=examples, agent=agent, team=team, role=role, languages=languages
            )
        )

    @property
    def core(self) -> Core:
        """The storage and write layer the services work on (memvault's own; not stable)."""
        return self._core

    @property
    def root(self) -> Path:
        return self._core.root

    @property
    def config(self) -> Config:
        return self._core.config

    @property
    def identity(self) -> AgentIdentity:
        return self._core.identity

    def reload_config(self) -> bool:
        """Read ``.memvault/config.yaml`` again when it changed since it was read (a
        long-running server sees a ``git pull`` or a hand edit). True when it was re-read."""
        return self._core.reload_config()

    def locked(self, timeout: float = 60.0) -> AbstractContextManager[None]:
        """Hold the vault's single-writer lock for a ``with`` block."""
        return self._core.locked(timeout)

    def try_locked(self) -> AbstractContextManager[bool]:
        """A ``with`` block that yields whether the writer lock was free (never waits)."""
        from .paths import LOCK_PATH
        from .store.lock import try_lock

        return try_lock(self.root / LOCK_PATH)

    def recover_interrupted(self, *, force: bool = False) -> Recovery | None:
        """Undo a write whose process died before its commit (done by every write)."""
        return self._core.recover_interrupted(force=force)

    # --- writing ---------------------------------------------------------------------

    def add(
        self,
        type: str,
        content: str,
        *,
        title: str | None = None,
        id: str | None = None,
        allow_secrets: bool = False,
        message: str | None = None,
        extra: Mapping[str, Any] | None = None,
        **fields: Unpack[MemoryFields],
    ) -> WriteResult:
        """Write a new memory (episodic, semantic or procedural) and commit it.

        ``fields`` are the front-matter keys of :class:`memvault.fields.MemoryFields`;
        ``extra`` any other keys (kept as written). A fact with a ``subject`` supersedes the
        active fact on that subject (one commit). ``scope='global'`` without the librarian
        role is proposed in ``inbox/``.
        """
        return self._core.add(
            type,
            content,
            title=title,
            id=id,
            allow_secrets=allow_secrets,
            message=message,
            **{**(extra or {}), **fields},
        )

    def update(
        self,
        memory_id: str,
        changes: Mapping[str, Any],
        message: str,
        *,
        content: str | None = None,
        touch: bool = True,
    ) -> WriteResult:
        """Change front-matter keys (and with ``content`` the body) of a memory: only
        those keys are rewritten; one commit. ``touch``: set ``updated`` too."""
        return self._core.update(memory_id, changes, message, content=content, touch=touch)

    def procedure_used(self, memory_id: str, outcome: str, note: str = "") -> WriteResult:
        """Record that a procedure was followed and how it went (``success``|``failure``):
        ``times_used``, ``success_rate`` and ``last_used`` are updated (one commit), and
        ``procedure`` ranks by success rate among matches."""
        return self._core.record_use(memory_id, outcome, note)

    def replace_text(self, memory_id: str, text: str, message: str) -> WriteResult:
        """Replace a memory's whole file with ``text`` (validated first; one commit)."""
        return self._core.replace_text(memory_id, text, message)

    def forget(self, memory_id: str, reason: str) -> WriteResult:
        """Archive a memory with a reason (its text stays in git history)."""
        return self._core.forget(memory_id, reason)

    def purge(self, memory_id: str, reason: str) -> PurgeReport:
        """Remove every trace of a memory, git history included (all commit ids change)."""
        from .purge import purge_memory

        return purge_memory(self._core, memory_id, reason)

    def rescope(self, memory_id: str, scope: str, reason: str = "") -> WriteResult:
        """Move a memory to another scope (one commit; none when it already has it).
        ``global`` without the librarian role is proposed in ``inbox/``; ``self`` makes it
        this agent's own (only its own agent's, or a librarian's, to give)."""
        from .rescope import rescope

        return rescope(self._core, memory_id, scope, reason)

    def forgotten(self, memory_id: str, limit: int = 50) -> Forgotten | None:
        """The record of a forgotten or purged memory: when, by whom, why (and for a
        forgotten one, its file's earlier commits; for a purged one, nothing of it). None
        when there is none this identity may see."""
        from .forgotten import find

        return find(self.root, self.identity, memory_id, limit)

    def purge_preview(
        self, text: str, *, regex: bool = False, scope: str | None = None
    ) -> ContentPurge:
        """What :meth:`purge_text` would erase: every memory, transcript turn, tracked file
        and commit holding ``text`` (a Python regex with ``regex``; in ``scope`` only when
        given). Writes nothing. Needs the librarian role."""
        from .purge_match import find

        return find(self._core, text, regex=regex, scope=scope)

    def purge_text(
        self, text: str, reason: str, *, regex: bool = False, scope: str | None = None
    ) -> ContentPurge:
        """Erase ``text`` wherever the vault holds it: turns that are wholly the text go,
        other hits become ``[purged]``; then git history (every commit id changes), the
        index and the access log. ``.memvault/purge.log`` records the purge, never the text.
        Needs the librarian role."""
        from .purge_match import purge

        return purge(self._core, text, reason, regex=regex, scope=scope)

    def log(
        self,
        session: str,
        role: str,
        text: str,
        *,
        when: dt.datetime | None = None,
        extra: Mapping[str, Any] | None = None,
        allow_secrets: bool = False,
        turn_id: str | None = None,
        scope: str | None = None,
        channel: str | None = None,
    ) -> WriteResult:
        """Append a conversation turn to the session's transcript (created on first turn;
        a ``turn_id`` already there is skipped). One commit.

        A new transcript gets ``scope`` (default: config ``capture.scope``, else
        ``defaults.scope``; ``global`` is proposed in ``inbox/`` without the librarian
        role) and ``channel``; a pause on either, or on this agent, refuses the turn."""
        return self._core.log(
            session,
            role,
            text,
            when=when,
            extra=extra,
            allow_secrets=allow_secrets,
            turn_id=turn_id,
            scope=scope,
            channel=channel,
        )

    def log_many(
        self,
        session: str,
        turns: Sequence[tuple[str, str, dt.datetime | None, Mapping[str, Any] | None, str | None]],
        *,
        allow_secrets: bool = False,
        source: str | None = None,
        scope: str | None = None,
        channel: str | None = None,
    ) -> WriteResult:
        """Append several turns ``(role, text, when, extra, turn_id)`` in one commit (scope
        and channel as for :meth:`log`)."""
        return self._core.log_many(
            session, turns, allow_secrets=allow_secrets, source=source, scope=scope, channel=channel
        )

    def log_turn(
        self,
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
        """A turn with an optional rating (``insights`` reads them back per agent); scope
        and channel as for :meth:`log`."""
        from .ingest import log_turn

        return log_turn(
            self._core,
            session,
            text,
            role=role,
            rating=rating,
            context=context,
            query=query,
            when=when,
            allow_secrets=allow_secrets,
            scope=scope,
            channel=channel,
        )

    def log_usage(
        self,
        query: str,
        response: str,
        *,
        session: str,
        rating: str | None = None,
        context: str | None = None,
    ) -> WriteResult:
        """The seed's ``logAgentUsage``: a user's query and the agent's rated reply (one commit)."""
        return self.log_turn(session, response, rating=rating, context=context, query=query)

    def ingest(
        self,
        path: str | Path,
        *,
        session: str | None = None,
        fmt: str = "auto",
        allow_secrets: bool = False,
        scope: str | None = None,
        channel: str | None = None,
    ) -> IngestReport:
        """Save a transcript file (Claude Code JSONL, chat JSON...) as a session; idempotent.
        Scope and channel as for :meth:`log`."""
        from .ingest import ingest_file

        return ingest_file(
            self._core,
            path,
            session=session,
            fmt=fmt,
            allow_secrets=allow_secrets,
            scope=scope,
            channel=channel,
        )

    def import_file(
        self,
        path: Path,
        fmt: str = "auto",
        *,
        allow_secrets: bool = False,
        progress: ImportProgress | None = None,
        skip_bad: bool = False,
    ) -> ImportReport:
        """Import a JSONL export, a Markdown bundle or a YAML ``episodes:`` list (one commit)."""
        from .transfer import import_file

        return import_file(
            self._core, path, fmt, allow_secrets=allow_secrets, progress=progress, skip_bad=skip_bad
        )

    def export(self, fmt: str = "jsonl", *, include_archive: bool = True) -> str:
        """Every memory this identity may see, as JSONL or a Markdown bundle."""
        from .transfer import export_memories

        return export_memories(self._core, fmt, include_archive)

    def set_config(self, dotted: str, value: Any, message: str) -> str | None:
        """Set one key of the tracked config (one commit; None when it already had it). A
        command (``validate.judge_command``, ``consolidate.summarizer_command``) set here is
        allowed to run on this machine; teammates who pull it must allow it themselves."""
        sha = self._core.set_config(dotted, value, message)
        from .trust import COMMAND_KEYS, record

        if dotted in COMMAND_KEYS and isinstance(value, str) and value.strip():
            record(self.root, dotted, value)
        return sha

    def commands(self) -> list[CommandStatus]:
        """The commands the config names (judge, summarizer): each one's value, where it came
        from, and whether it may run on this machine (``memvault allow-command``)."""
        from .trust import statuses

        return statuses(self.root, self.config)

    def allow_command(self, key: str) -> CommandStatus:
        """Let the command ``key`` names in the shared config run on this machine, for you:
        its sha256 (with the key) is recorded outside the vault; a changed command needs
        allowing again. Raises ``ConfigError`` for an unknown key or an unset command."""
        from .trust import allow

        return allow(self.root, self.config, key)

    def revoke_command(self, key: str) -> CommandStatus:
        """Stop the command ``key`` names from running on this machine until allowed again."""
        from .trust import revoke

        return revoke(self.root, self.config, key)

    # --- reading ---------------------------------------------------------------------

    def get(self, memory_id: str, *, any_scope: bool = False) -> Memory:
        """One memory by id (only one this identity may see unless ``any_scope``)."""
        return self._core.get(memory_id, any_scope=any_scope)

    def memories(self, filters: Filters | None = None) -> list[Memory]:
        """The memories this identity may see, narrowed by ``filters``."""
        return self._core.memories(filters)

    def all_memories(self) -> list[Memory]:
        """Every valid memory file, whoever may see it (for maintenance)."""
        return self._core.all_memories()

    def raw_text(self, memory: Memory) -> str:
        """A memory's file exactly as it is on disk."""
        return self._core.raw_text(memory)

    def turn_window(self, address: str, *, around: int = 2) -> TurnWindow:
        """A transcript turn (``session-x#turnid``) with ``around`` turns either side."""
        return self._core.turn_window(address, around=around)

    def episodes(self, last: int, *, include_transcripts: bool = True) -> list[Memory]:
        """The ``last`` episodes, newest first."""
        from .reports import recent_episodes

        return recent_episodes(self._core, last, include_transcripts)

    def history(self, memory_id: str, limit: int = 50) -> list[Change]:
        """The commits that changed a memory's file, newest first."""
        from .store.git.ops import history

        return history(self.root, self.get(memory_id).path, limit)

    def head(self) -> str | None:
        """The commit the vault's branch is at (None before the first commit)."""
        from .store.git.ops import read_head

        return read_head(self.root)

    def state(self) -> tuple[str | None, int]:
        """What a long-running reader compares to notice any change: HEAD and memvault's
        write counter (a write or a pull moves one of them)."""
        from .index.drift import generation
        from .store.git.ops import read_head

        return read_head(self.root), generation(self.root)

    def run_git(self, args: Sequence[str], *, check: bool = True) -> Any:
        """Run git in the vault (hooks' environment stripped); the result has ``stdout``."""
        from .store.git.ops import run_git

        return run_git(self.root, list(args), check=check)

    # --- searching -------------------------------------------------------------------

    def search(self, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
        """Plain hybrid search over every kind of memory."""
        return self._core.search(query, **options)

    def recall(self, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
        """Intent-routed recall: episodes for "when/what happened", facts for "what is",
        procedures for "how do I"; "is it true that ..." is validated."""
        return self._core.recall(query, **options)

    def fact(self, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
        """Facts in force: decisions, definitions, relationships, constraints."""
        return self._core.fact(query, **options)

    def procedure(self, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
        """How-tos: workflows, templates, patterns, heuristics; best first."""
        return self._core.procedure(query, **options)

    def validate(self, statement: str, **options: Unpack[ValidateOptions]) -> ValidationResult:
        """Does a statement agree with, contradict, or lack support in the facts in force?"""
        return self._core.validate(statement, **options)

    def context(
        self, query: str, budget: int = 800, **options: Unpack[SearchOptions]
    ) -> ContextBlock:
        """The most useful memories for ``query`` as a prompt block within ``budget`` tokens."""
        return self._core.context(query, budget, **options)

    def hook_context(
        self, payload: Mapping[str, Any], budget: int = 800, **options: Unpack[SearchOptions]
    ) -> dict[str, Any] | None:
        """An agent hook's answer: context for the prompt (UserPromptSubmit) or the project
        (SessionStart) as ``hookSpecificOutput`` JSON; None when nothing is relevant."""
        from . import agent_hooks

        event, query = agent_hooks.question(payload)
        if not query:
            return None
        return agent_hooks.output(event, self._core.context(query, budget, **options))

    def insights(
        self,
        agent: str | None = None,
        topic: str | None = None,
        since: dt.datetime | None = None,
        until: dt.datetime | None = None,
        limit: int = 10,
        snippet_chars: int = 400,
    ) -> dict[str, Any]:
        """Rated replies per agent (from ``log_turn`` ratings and ingested feedback)."""
        from .ingest import insights

        return insights(self._core, agent, topic, since, until, limit, snippet_chars)

    def warm(self) -> None:
        """Load the embedder and open the index now, so the first search is fast."""
        from .search import warm

        warm(self._core)

    def browse(self, rescan_seconds: float = 10.0) -> Listing:
        """A browsable snapshot of every memory this identity may see (rows, facets,
        sorted orders), kept in step with the files; ``Listing.select`` filters a page."""
        from .browse import Listing

        return Listing(self._core, rescan_seconds)

    # --- maintaining -----------------------------------------------------------------

    def reindex(self, full: bool = False, progress: Progress | None = None) -> ReindexReport:
        """Bring the search index up to date with the files (``full``: read every file)."""
        return self._core.reindex(full, progress)

    def plan_consolidation(
        self,
        now: dt.datetime | None = None,
        *,
        only: Iterable[str] | None = None,
        progress: StepProgress | None = None,
        texts: bool = True,
        writer: bool = False,
    ) -> Plan:
        """What a consolidation would do, each action with its reason; writes nothing.
        ``writer``: planned under :meth:`locked`, to be applied (the index may be updated)."""
        from .consolidate import plan

        return plan(self._core, now, only, progress, writer=writer, texts=texts)

    def apply_consolidation(self, plan: Plan) -> str | None:
        """Carry out a plan as one commit (hold :meth:`locked`); the commit, or None."""
        from .consolidate import apply

        return apply(self._core, plan)

    def consolidate(
        self,
        now: dt.datetime | None = None,
        dry_run: bool = False,
        *,
        only: Iterable[str] | None = None,
        progress: StepProgress | None = None,
        texts: bool = True,
    ) -> tuple[Plan, str | None]:
        """The sleep job: plan, then (unless ``dry_run``) apply as one commit."""
        from .consolidate import consolidate

        return consolidate(self._core, now, dry_run, only, progress, texts)

    def consolidation_diff(self, plan: Plan) -> str:
        """A unified diff of the files a plan would change."""
        from .consolidate import diff_of

        return diff_of(self._core, plan)

    def why(self, memory_id: str, now: dt.datetime | None = None) -> str:
        """A memory's relevance explained from its numbers, and when it would be archived."""
        from .consolidate import why

        return why(self._core, memory_id, now)

    def relevance(self, memory: Memory, now: dt.datetime | None = None) -> Relevance:
        """A memory's relevance now (decay by rate since its last use, times importance)."""
        from .consolidate.decay import config_rates, last_use, relevance
        from .memory import now_utc
        from .store.usage import load

        last = last_use(memory, load(self.root))
        return relevance(memory, now or now_utc(), *config_rates(self.config), last)

    def usage(self, memory_id: str) -> Usage:
        """How often and how lately a memory was read, and its relevance at the last
        consolidation (its record in ``.memvault/usage.jsonl``, else its own file's keys)."""
        from .store.usage import load, of

        return of(self.get(memory_id), load(self.root))

    def inbox(self) -> list[Memory]:
        """Proposals awaiting review that this identity may see, oldest first."""
        from .review import inbox

        return inbox(self._core)

    def accept(self, memory_id: str, note: str = "") -> WriteResult:
        """Move a proposal into place (status active); one commit."""
        from .review import accept

        return accept(self._core, memory_id, note)

    def reject(self, memory_id: str, reason: str = "") -> WriteResult:
        """Drop a proposal (its text stays in git history); one commit."""
        from .review import reject

        return reject(self._core, memory_id, reason)

    def disputes(self) -> list[Dispute]:
        """Open disputes this identity may see (facts in force that may state different
        values of one thing), oldest first."""
        from .review import disputes

        return disputes(self._core)

    def resolve_dispute(self, memory_id: str, note: str = "") -> WriteResult:
        """Keep ``memory_id`` (status active again); the other facts of its dispute are
        superseded by it, tombstones kept and linked both ways. One commit."""
        from .review import keep

        return keep(self._core, memory_id, note)

    def pause(
        self,
        scope: str | None = None,
        why: str = "",
        *,
        agent: str | None = None,
        channel: str | None = None,
    ) -> str | None:
        """Stop capture for a scope, an agent, a channel, or any combination of them: every
        write the rule matches is refused until :meth:`resume` (one commit; None when the
        rule already was in force)."""
        from .capture import pause

        return pause(self._core, agent=agent, channel=channel, scope=scope, why=why)

    def resume(
        self,
        scope: str | None = None,
        why: str = "",
        *,
        agent: str | None = None,
        channel: str | None = None,
    ) -> str | None:
        """Lift the pause with exactly these keys (one commit; None when there was none)."""
        from .capture import resume

        return resume(self._core, agent=agent, channel=channel, scope=scope, why=why)

    def paused(self) -> list[PauseRule]:
        """The pause rules in force."""
        from .capture import paused

        return paused(self._core)

    def sync(
        self,
        *,
        remote: str | None = None,
        commit: bool = False,
        push: bool = True,
        reindex: bool = True,
    ) -> SyncReport:
        """Pull (rebase), push, and bring the index up to date."""
        from .sync import sync

        return sync(self._core, remote=remote, commit=commit, push=push, reindex=reindex)

    def commit_hand_edits(self, message: str | None = None) -> HandEdits:
        """Commit what a person changed by hand under the memory trees (one commit)."""
        from .sync import WATCH_MESSAGE, commit_hand_edits

        return commit_hand_edits(self._core, message or WATCH_MESSAGE)

    # --- reports ---------------------------------------------------------------------

    def stats(self, days: int | None = None, now: dt.datetime | None = None) -> dict[str, Any]:
        """Usage per day over a window, and seed 004's rates (``docs/metrics.md``)."""
        from .metrics import WINDOW_DAYS
        from .reports import vault_stats

        return vault_stats(self._core, WINDOW_DAYS if days is None else days, now)

    def doctor(self, repair: bool = False) -> dict[str, Any]:
        """Every problem a person should fix (file and key), notes, and the index's state."""
        from .reports import doctor_report

        return doctor_report(self._core, repair)

    def check(self, paths: Sequence[Path] = (), *, root: Path | None = None) -> list[Problem]:
        """Validate files (or every file): schema, YAML, duplicate ids, secrets. ``root``:
        the files are a copy of the vault's elsewhere (a pre-commit hook's staged blobs),
        checked with this vault's settings."""
        from .reports import check_files

        core = self._core if root is None else Core(root, self.config, self.identity)
        return check_files(core, paths)

    def invalid_files(self) -> dict[str, list[Problem]]:
        """Every memory file that can't be read as a memory, with its problems."""
        return {entry.path: list(entry.problems) for entry in self._core.scan().invalid}
