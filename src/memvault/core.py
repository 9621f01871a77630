"""The services' handle on a vault: the storage (:class:`~memvault.store.repository.Repository`)
plus the write API (add, update, forget, log: every write is an atomic file change and one
git commit) and typed front doors to search.

Not public: users and adapters hold a :class:`memvault.Vault`, which holds a ``Core`` and
hands it to the services (search, consolidate, ingest, ...), so the services never depend
on the class that calls them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence

from .errors import DuplicateIdError, NotFoundError, PermissionDeniedError, ValidationError
from .forgotten import trailers
from .memory import (
    CATEGORIES,
    DEFAULT_CATEGORY,
    TYPES,
    Memory,
    format_time,
    now_utc,
    parse_time,
    slugify,
    validate_meta,
)
from .paths import CONFIG_PATH
from .pauses import check_capture, check_scope
from .security import Redactions, check_secrets, only_a_secret, redact, secrets_allowed
from .store import journal
from .store.files import check_text, load_document, new_memory, render_new, update_text
from .store.repository import Repository
from .values import TYPE_CHECKING, Record

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, Unpack

    from .conflicts import Conflict
    from .index import ReindexReport
    from .index.handle import Progress
    from .search import ContextBlock, SearchOptions, SearchResult, ValidateOptions
    from .transcripts import TurnWindow
    from .validate import ValidationResult

__all__ = ["Core", "WriteResult"]


USE_OUTCOMES = ("success", "failure")  # how a followed procedure went


class WriteResult(Record, frozen=True):
    """What a write did: the memory as written, its commit, what it superseded."""

    memory: Memory
    commit: str | None
    superseded: tuple[str, ...] = ()
    inbox: bool = False
    message: str = ""
    disputed: tuple[str, ...] = ()  # facts it may contradict, recorded as a dispute
    notes: tuple[str, ...] = ()  # one line per file on what was redacted
    redacted: int = 0  # credential-looking spans replaced by a marker


class Core(Repository):
    """A vault's storage with the write API on top (see the module's docstring)."""

    # --- writing -------------------------------------------------------------------

    def _check_writable(
        self, scope: str, where: str, agent: str | None = None, channel: str | None = None
    ) -> None:
        """Refuse a write that a pause rule (``memvault pause``) stops: by the scope written
        to, the agent writing (default: this identity's) and the channel it came from.
        The config is read again first when its file changed, so a pause or resume made by
        another process holds for a long-lived writer too (one stat)."""
        self.reload_config()
        check_capture(
            self.config.get("paused"), scope, agent or self.identity.agent, channel, where
        )

    def capture_scope(self, scope: str | None) -> str:
        """The scope a conversation is saved with: ``scope``, else ``capture.scope``, else
        ``defaults.scope``; ``self`` needs an agent identity (nobody else could see it)."""
        chosen = scope or self.config.get("capture.scope") or self.config.get("defaults.scope")
        check_scope(str(chosen or "team"), "scope" if scope else "capture.scope")
        if chosen == "self" and not self.identity.agent:
            raise PermissionDeniedError(
                "scope 'self' needs an agent identity (--agent or MEMVAULT_AGENT): "
                "nobody else could read it",
                key="scope",
            )
        return str(chosen or "team")

    @property
    def who(self) -> str:
        """Who writes, as records name them: ``agent:NAME``, else the git author."""
        return self.identity.name or f"{self.git_identity.name} (no agent)"

    def _id_taken(self, memory_id: str) -> bool:
        """Whether a file of the vault (as the catalog last saw it) already has this id."""
        return bool(self.catalog.paths_with_id(memory_id))

    def _unique_id(self, base: str, taken: Callable[[str], bool]) -> str:
        base = base[:100].strip("-") or "memory"
        candidate, n = base, 2
        while taken(candidate):
            candidate = f"{base}-{n}"
            n += 1
        return candidate

    def path_for(self, meta: Mapping[str, Any], fmt: str = "md") -> str:
        mtype = meta["type"]
        mid = meta["id"]
        if mtype == "episodic":
            when = parse_time(meta.get("created")) or now_utc()
            rel = f"episodic/{when:%Y}/{when:%m}/{mid}.{fmt}"
        else:
            rel = f"{mtype}/{meta.get('category') or DEFAULT_CATEGORY[mtype]}/{mid}.{fmt}"
        return rel

    def add(
        self,
        type: str,
        content: str,
        *,
        title: str | None = None,
        id: str | None = None,
        allow_secrets: bool = False,
        message: str | None = None,
        **fields: Any,
    ) -> WriteResult:
        """Write a new memory and commit it. Returns the memory as written.

        ``fields`` takes any front-matter key (category, tags, importance, scope, subject,
        valid_from, trigger, steps, outcome, session, source, ...; see the README's "The
        vault"); unknown keys are kept.
        A fact with a ``subject`` supersedes the active fact on that subject; without one,
        the fact in force it gives a new value of is inferred (:mod:`memvault.conflicts`),
        and a dispute is recorded when that is unsure (one commit).
        """
        if type not in TYPES:
            raise ValidationError(f"expected one of {'|'.join(TYPES)}, got {type!r}", key="type")
        content = (content or "").strip("\n")
        if not content.strip() and not title:
            raise ValidationError(
                "empty memory: give some text (argument, --file or stdin)", key="content"
            )
        title, content, done = self._screened(title, content, fields, allow_secrets)
        meta = self._new_meta(type, content, title, id, fields)
        scope = meta["scope"]
        self._check_writable(scope, "add", meta.get("agent"), meta.get("channel"))
        content = self._redact(scope, content)
        inbox = scope == "global" and not self.identity.is_librarian
        needs_rivals = type == "semantic" and bool(meta.get("subject")) and not inbox
        # No subject: the facts it may replace are inferred (memvault.conflicts). The index is
        # read before the writer lock is taken (a search may bring the index up to date).
        inferred = (
            self._inferred_conflicts(meta, content)
            if type == "semantic" and not meta.get("subject") and not inbox
            else []
        )
        with self.locked():
            # A subject needs every fact's current subject, and an id chosen by hand is
            # checked against every file as it is now (ids edited in place too): the catalog
            # is brought up to date. A generated slug only needs to know which files exist,
            # which folder mtimes tell (quick sync).
            if needs_rivals or id or inferred:
                self.sync_catalog()
            else:
                self.catalog.quick_sync()
            if id:
                if self._id_taken(id):
                    raise DuplicateIdError(f"id {id!r} already exists", key="id")
            else:
                meta["id"] = self._unique_id(meta["id"], self._id_taken)
            if inbox:
                meta["status"] = "proposed"
            rel = self.path_for(meta)
            if inbox:
                rel = f"inbox/{rel}"
            if (self.root / rel).exists():
                raise DuplicateIdError(f"file already exists: {rel}", rel)
            problems = validate_meta(meta, rel)
            if problems:
                raise ValidationError(problems[0].message, rel, problems[0].key, problems)
            writes, superseded, disputed, why_superseded = self._rival_writes(
                meta, needs_rivals, inferred
            )
            writes[rel] = render_new(meta, content)
            # validated above and rendered by us: parse it back only when we can't vouch for it
            memory = new_memory(meta, content, rel) or check_text(writes[rel], rel)
            why = message or (title or content.splitlines()[0] if content else "")
            msg = f"memvault: add {type} {meta['id']}" + (f": {_short(why)}" if why else "")
            msg += _lifecycle_note(superseded, why_superseded, disputed, inbox)
            sha = self.commit_files(writes, msg, known={rel: memory})
        note = done.note(rel, "memory")
        notes = (note,) if note else ()
        return WriteResult(
            memory, sha, tuple(superseded), inbox, msg, tuple(disputed), notes, done.spans
        )

    def _screened(
        self, title: str | None, content: str, fields: Mapping[str, Any], allow: bool
    ) -> tuple[str | None, str, Redactions]:
        """A new memory's title and text with credential-looking spans redacted (before the
        id is made from them). Front-matter values are refused, as is a memory that is
        little but a credential."""
        security = self.config.get("security")
        done = Redactions()
        if secrets_allowed(security, allow):
            return title, content, done
        check_secrets(str(fields), "add", security)
        original = f"{title or ''}\n{content}"
        title = done.redact(title, security) if title else title
        content = done.redact(content, security)
        if done.spans and only_a_secret(original, f"{title or ''}\n{content}"):
            check_secrets(original, "add", security)
        return title, content, done

    def _redact(self, scope: str, text: str) -> str:
        kinds = (self.config.get("security.redact") or {}).get(scope) or []
        return redact(text, kinds) if kinds else text

    def _new_meta(
        self, type: str, content: str, title: str | None, mid: str | None, fields: Mapping[str, Any]
    ) -> dict[str, Any]:
        now = now_utc()
        meta: dict[str, Any] = {
            k: v for k, v in fields.items() if v is not None and v != [] and v != ()
        }
        for key, value in list(meta.items()):
            if isinstance(value, tuple):
                meta[key] = list(value)
            if isinstance(value, (dt.datetime, dt.date)):
                meta[key] = format_time(value)
        created = meta.get("created") or format_time(now)
        meta["created"] = created
        meta.setdefault("category", DEFAULT_CATEGORY[type])
        if type in CATEGORIES and meta["category"] not in CATEGORIES[type]:
            singular = {c.rstrip("s"): c for c in CATEGORIES[type]}
            meta["category"] = singular.get(meta["category"], meta["category"])
        meta.setdefault("scope", self.config.get("defaults.scope", "team"))
        if meta["scope"] == "self":
            meta.setdefault("agent", self.identity.agent)
        elif self.identity.agent and "agent" not in meta:
            meta["agent"] = self.identity.agent
        if meta["scope"] == "team" and self.identity.team:
            meta.setdefault("team", self.identity.team)
        meta.setdefault(
            "author", f"agent:{self.identity.agent}" if self.identity.agent else "human"
        )
        meta.setdefault("importance", self.config.get("defaults.importance", 3))
        if type == "semantic":
            meta.setdefault("valid_from", created)
        if title:
            meta["title"] = title
        base = mid or slugify(title or content)
        if type == "episodic" and not mid:
            when = parse_time(created) or now
            base = f"{when:%Y-%m-%d}-{base}"
        meta["type"] = type
        meta["id"] = base
        if "status" not in meta:
            meta["status"] = "active"
        return meta

    def _rival_writes(
        self, meta: dict[str, Any], by_subject: bool, inferred: list[Conflict]
    ) -> tuple[dict[str, str], list[str], list[str], str]:
        """What a new fact does to the facts about the same thing: the rewrites, the ids it
        supersedes, the ids it disputes, and why (the subject, or what was inferred)."""
        if by_subject:
            rivals = [e.memory for e in self.catalog.with_subject(meta["subject"])]
            writes, superseded = self._supersede_for(
                meta, _subject_rivals(meta, [m for m in rivals if m is not None])
            )
            return writes, superseded, [], f"same subject '{meta['subject']}'"
        if inferred:
            return self._apply_conflicts(meta, inferred)
        return {}, [], [], ""

    def _inferred_conflicts(self, meta: dict[str, Any], content: str) -> list[Conflict]:
        """The facts in force a subject-less fact supersedes or disputes (``supersede.infer``:
        false turns it off). An index that can't be read leaves the write as it was."""
        from .conflicts import find_conflicts

        if self.config.get("supersede.infer", True) is False:
            return []
        if journal.pending(self.root):
            # An interrupted write: the lock undoes it first (forced, if it must), and a search
            # now would try to undo it outside the lock. This one write infers nothing.
            return []
        return find_conflicts(self, meta, content)

    def _apply_conflicts(
        self, meta: dict[str, Any], conflicts: list[Conflict]
    ) -> tuple[dict[str, str], list[str], list[str], str]:
        """Supersede (or dispute) the inferred rivals that are still in force now that the
        lock is held: the writes, the ids superseded, the ids disputed, and why."""
        from .conflicts import disputed_keys

        live: list[tuple[Conflict, Memory]] = []
        for c in conflicts:
            try:
                now = self.get(c.memory.id)
            except NotFoundError:
                continue  # forgotten meanwhile
            if now.status in ("active", "disputed") and now.path == c.memory.path:
                live.append((c, now))
        rivals = [m for c, m in live if c.action == "supersede"]
        writes, superseded = self._supersede_for(meta, rivals)
        why = "; ".join(f"{c.memory.id}: {c.why}" for c, _ in live if c.memory.id in superseded)
        disputed: list[str] = []
        now_text = format_time(now_utc())
        for c, old in live:
            if c.action != "dispute" or superseded:
                continue  # a value it surely replaces settles what it is about
            doc = load_document(self.root / old.path, old.path)
            writes[old.path] = update_text(
                doc, {**disputed_keys(old, meta["id"]), "updated": now_text}
            )
            disputed.append(old.id)
        if disputed:
            related = [str(r) for r in meta.get("related") or []]
            meta["related"] = sorted({*related, *disputed})
            meta["status"] = "disputed"
        return writes, superseded, disputed, f"inferred: {why}" if why else ""

    def _supersede_for(
        self, meta: dict[str, Any], rivals: list[Memory]
    ) -> tuple[dict[str, str], list[str]]:
        """The new fact (``meta``) against facts about the same thing: newest ``valid_from``
        wins; the older keeps its file as a tombstone, linked both ways."""
        from .conflicts import superseded_keys

        writes: dict[str, str] = {}
        superseded: list[str] = []
        new_from = parse_time(meta.get("valid_from")) or now_utc()
        now_text = format_time(now_utc())
        for old in rivals:
            old_from = old.time("valid_from") or old.created or new_from
            doc = load_document(self.root / old.path, old.path)
            if old_from <= new_from:
                writes[old.path] = update_text(doc, superseded_keys(meta["id"], new_from, now_text))
                superseded.append(old.id)
            else:
                # The new fact is older than what we know: it enters history as superseded.
                meta.update(superseded_keys(old.id, old_from))
        if superseded:
            meta["supersedes"] = superseded[0] if len(superseded) == 1 else superseded
        return writes, superseded

    def update(
        self,
        memory_id: str,
        changes: Mapping[str, Any],
        message: str,
        *,
        content: str | None = None,
        touch: bool = True,
    ) -> WriteResult:
        """Change some keys (and/or the body) of one memory; everything else stays verbatim."""
        with self.locked():
            memory = self.get(memory_id)
            doc = load_document(self.root / memory.path, memory.path)
            changes = dict(changes)
            if touch:
                changes.setdefault("updated", format_time(now_utc()))
            text = update_text(doc, changes, content)
            sha = self.commit_files({memory.path: text}, f"memvault: update {memory_id}: {message}")
        return WriteResult(check_text(text, memory.path), sha, message=message)

    def record_use(self, memory_id: str, outcome: str, note: str = "") -> WriteResult:
        """A procedure was followed: ``times_used`` + 1, ``success_rate`` over the recorded
        uses, ``last_used`` now; one commit whose message carries the outcome and the note.

        A procedure used before without a ``success_rate`` (written by hand) starts its rate
        from this use: earlier uses have no known outcome."""
        if outcome not in USE_OUTCOMES:
            raise ValidationError(
                f"expected {'|'.join(USE_OUTCOMES)}, got {outcome!r}", key="outcome"
            )
        with self.locked():
            memory = self.get(memory_id)
            if memory.type != "procedural":
                raise ValidationError(
                    f"{memory_id} is {memory.type}, not a procedure", memory.path, "type"
                )
            used = int(memory.meta.get("times_used") or 0)
            rate = memory.meta.get("success_rate")
            known, wins = (used, float(rate) * used) if rate is not None else (0, 0.0)
            wins += outcome == "success"
            now = format_time(now_utc())
            changes = {
                "times_used": used + 1,
                "success_rate": round(wins / (known + 1), 3),
                "last_used": now,
            }
            doc = load_document(self.root / memory.path, memory.path)
            text = update_text(doc, changes)
            msg = f"memvault: used {memory_id}: {outcome}" + (f": {_short(note)}" if note else "")
            sha = self.commit_files({memory.path: text}, msg)
        return WriteResult(check_text(text, memory.path), sha, message=msg)

    def replace_text(self, memory_id: str, text: str, message: str) -> WriteResult:
        """Replace a memory file's whole text (``edit``); validated before anything is written."""
        with self.locked():
            memory = self.get(memory_id)
            new = check_text(text, memory.path)
            if new.id != memory.id:
                taken = {m.id for m in self.all_memories()}
                if new.id in taken:
                    raise DuplicateIdError(f"id {new.id!r} already exists", memory.path, "id")
            check_secrets(text, memory.path, self.config.get("security"))
            sha = self.commit_files({memory.path: text}, f"memvault: edit {memory_id}: {message}")
        return WriteResult(new, sha, message=message)

    def forget(self, memory_id: str, reason: str) -> WriteResult:
        """Delete a memory's file and commit (git history keeps it; see ``purge``)."""
        if not reason or not reason.strip():
            raise ValidationError("say why (--reason): the commit message records it", key="reason")
        with self.locked():
            memory = self.get(memory_id)
            if memory.scope == "global" and not self.identity.is_librarian:
                raise PermissionDeniedError(
                    "forgetting a 'global' memory needs the librarian role (--role librarian)",
                    memory.path,
                    "scope",
                )
            msg = f"memvault: forget {memory_id}: {_short(reason)}\n\nRemoved {memory.path}."
            writes = self.unlink_references(memory_id, memory.path)
            if writes:
                msg += f"\nDropped links to it from {', '.join(sorted(writes))}."
            msg += "\n\n" + trailers(self.who, memory, reason)  # `history ID` reads them back
            sha = self.commit_files(writes, msg, removes=[memory.path])
        return WriteResult(memory, sha, message=msg)

    def unlink_references(self, memory_id: str, path: str) -> dict[str, str]:
        """Rewrites of the memories whose ``related``/``supersedes``/``superseded_by`` name
        ``memory_id`` (that link would dangle once it is gone; git history keeps both)."""
        writes: dict[str, str] = {}
        now_text = format_time(now_utc())
        for other in self.all_memories():
            if other.path == path:
                continue
            changes: dict[str, Any] = {}
            for key in ("related", "supersedes", "superseded_by"):
                value = other.meta.get(key)
                items = value if isinstance(value, list) else [value] if value is not None else []
                if memory_id in items:
                    kept = [v for v in items if v != memory_id]
                    changes[key] = (kept if isinstance(value, list) else kept[0]) if kept else None
            if changes:
                changes["updated"] = now_text
                writes[other.path] = update_text(
                    load_document(self.root / other.path, other.path), changes
                )
        return writes

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
        """Append a conversation turn to the session's transcript (created on first turn)."""
        return self.log_many(
            session,
            [(role, text, when, extra, turn_id)],
            allow_secrets=allow_secrets,
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
        """Append several turns in one commit; turns whose ``turn_id`` is there are skipped.

        A new transcript is saved with ``scope`` (default :meth:`capture_scope`): as for
        ``add``, ``global`` without the librarian role is proposed in ``inbox/``. Turns added
        to a transcript keep its scope; naming another one is an error (``rescope`` moves
        it). A pause rule on the scope, this agent or ``channel`` refuses the write.
        A credential-looking span is replaced by ``[secret redacted: KIND]`` (the turn is
        kept; ``notes`` says so) unless ``allow_secrets``."""
        from .transcripts import append_turns, new_transcript, transcript_id

        if not session or not str(session).strip():
            raise ValidationError("a session name is required", key="session")
        turns, done = self._screened_turns(turns, allow_secrets)
        wanted = self.capture_scope(scope) if scope else None  # a bad one fails before the lock
        channel = (str(channel).strip() or None) if channel is not None else None
        tid = transcript_id(session)
        with self.locked():
            existing = [m for m in self.all_memories() if m.id == tid]
            if existing and not any(self.identity.can_see(m) for m in existing):
                raise PermissionDeniedError(
                    f"session {session!r} belongs to another agent; "
                    "log to a session name of your own",
                    key="session",
                )
            if existing:
                memory = existing[0]
                if scope and memory.scope != scope:
                    raise ValidationError(
                        f"session {session!r} is saved with scope {memory.scope}, not {scope}; "
                        f"'memvault rescope {memory.id} --scope {scope}' moves it",
                        memory.path,
                        "scope",
                    )
                self._check_writable(
                    memory.scope, f"log {session}", channel=channel or memory.meta.get("channel")
                )
                doc = load_document(self.root / memory.path, memory.path)
                text, added = append_turns(doc, turns)
                rel = memory.path
            else:
                new_scope = wanted or self.capture_scope(None)
                self._check_writable(new_scope, f"log {session}", channel=channel)
                meta = self._transcript_meta(session, turns, new_scope, channel, source)
                rel = self.path_for(meta)
                if meta["status"] == "proposed":
                    rel = f"inbox/{rel}"
                text, added = new_transcript(meta, turns)
            if not added:
                return WriteResult(
                    check_text((self.root / rel).read_text(encoding="utf-8"), rel), None
                )
            msg = f"memvault: log {added} turn(s) to session {session}"
            if rel.startswith("inbox/") and not existing:
                msg += _lifecycle_note([], "", [], True)
            sha = self.commit_files({rel: text}, msg)
        note = done.note(rel)
        return WriteResult(
            check_text(text, rel),
            sha,
            message=msg,
            notes=(note,) if note else (),
            redacted=done.spans,
        )

    def _screened_turns(
        self,
        turns: Sequence[tuple[str, str, dt.datetime | None, Mapping[str, Any] | None, str | None]],
        allow_secrets: bool,
    ) -> tuple[list[Any], Redactions]:
        """The turns with their roles checked and credential-looking spans redacted: the turn
        is kept (a conversation with holes can't be recalled); ``allow_secrets`` keeps the
        text as it is."""
        for role, _, _, _, _ in turns:
            if role not in ("user", "assistant", "system", "tool"):
                raise ValidationError(
                    f"expected user|assistant|system|tool, got {role!r}", key="role"
                )
        security = self.config.get("security")
        done = Redactions()
        if secrets_allowed(security, allow_secrets):
            return list(turns), done
        return [(r, done.redact(t, security), w, x, g) for r, t, w, x, g in turns], done

    def _transcript_meta(
        self,
        session: str,
        turns: Sequence[tuple[str, str, dt.datetime | None, Any, str | None]],
        scope: str,
        channel: str | None,
        source: str | None,
    ) -> dict[str, Any]:
        """A new session transcript's front matter: ``global`` without the librarian role
        is proposed (for ``inbox/``), as ``add`` does."""
        from .transcripts import transcript_id

        first_when = next((t[2] for t in turns if t[2] is not None), None) or now_utc()
        fields = {
            "category": "transcript",
            "session": str(session),
            "created": format_time(first_when),
            "decay": "fast",
            "source": source,
            "scope": scope,
            "channel": channel,
        }
        tid = transcript_id(session)
        meta = self._new_meta("episodic", "", f"Session {session}", tid, fields)
        meta["id"] = tid
        if scope == "global" and not self.identity.is_librarian:
            meta["status"] = "proposed"
        return meta

    def turn_window(self, address: str, *, around: int = 2) -> TurnWindow:
        """One turn of a transcript (``<transcript id>#<turn id>``, as search hits name it)
        with ``around`` turns before and after it."""
        from .transcripts import split_address, window

        if isinstance(around, bool) or not isinstance(around, int) or not 0 <= around <= 1000:
            raise ValidationError(f"expected 0-1000, got {around!r}", key="around")
        memory_id, turn_id = split_address(address)
        memory = self.get(memory_id)
        if turn_id is None:
            raise NotFoundError(f"not a turn address (<transcript id>#<turn id>): {address!r}")
        found = window(memory, turn_id, around)
        if found is None:
            raise NotFoundError(f"{memory.id} has no turn {turn_id!r}", memory.path, "turn")
        return found

    # --- search ------------------------------------------------------------------------

    def search(self, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
        """Hybrid keyword + vector search. See :func:`memvault.search.search`."""
        from .search import search

        return search(self, query, **options)

    def recall(self, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
        """Intent-routed recall (episodes first, facts as fallback): :func:`.search.recall`;
        "Is it true that ..." is validated (:func:`.validate.recall`)."""
        from .validate import recall

        return recall(self, query, **options)

    def fact(self, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
        """Semantic lookup. See :func:`memvault.search.fact`."""
        from .search import fact

        return fact(self, query, **options)

    def procedure(self, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
        """Procedures matched by trigger and similarity. See :func:`memvault.search.procedure`."""
        from .search import procedure

        return procedure(self, query, **options)

    def validate(self, statement: str, **options: Unpack[ValidateOptions]) -> ValidationResult:
        """Does a statement agree with, contradict, or lack support in known facts?"""
        from .validate.verdict import validate

        return validate(self, statement, **options)

    def context(
        self, query: str, budget: int = 1500, **options: Unpack[SearchOptions]
    ) -> ContextBlock:
        """A prompt block of the most useful memories within ``budget`` tokens."""
        from .search import context

        return context(self, query, budget=budget, **options)

    def reindex(self, full: bool = False, progress: Progress | None = None) -> ReindexReport:
        """Bring the search index up to date with the files (``full``: rebuild from scratch)."""
        from .index import reindex

        return reindex(self, full=full, progress=progress)

    def set_config(self, dotted: str, value: Any, message: str) -> str | None:
        """Change one setting in ``.memvault/config.yaml`` and commit it.

        Only the top-level key that holds the setting is rewritten; every other line
        (comments, nulls, flow lists) stays as it was.
        """
        import copy

        from .store.files import parse_text

        with self.locked():
            path = self.root / CONFIG_PATH
            text = path.read_bytes().decode("utf-8") if path.exists() else ""
            doc = parse_text(text if text.strip() else "version: 1\n", CONFIG_PATH)
            parts = dotted.split(".")
            top = parts[0]
            new_top: Any = value
            if len(parts) > 1:
                new_top = (
                    copy.deepcopy(doc.meta.get(top)) if isinstance(doc.meta.get(top), dict) else {}
                )
                node = new_top
                for part in parts[1:-1]:
                    if not isinstance(node.get(part), dict):
                        node[part] = {}
                    node = node[part]
                node[parts[-1]] = value
            if doc.meta.get(top, object()) == new_top:
                self.config.set(dotted, value)
                return None
            new_text = update_text(doc, {top: new_top})
            commit = self.commit_files({CONFIG_PATH: new_text}, f"memvault: {message}")
            self.config.set(dotted, value)
        return commit


def _lifecycle_note(superseded: list[str], why: str, disputed: list[str], inbox: bool) -> str:
    """What a write's commit message says beyond the memory: what it superseded and why,
    what it disputes, where it went."""
    note = ""
    if superseded:
        note += f"\n\nSupersedes {', '.join(superseded)} ({why})."
    if disputed:
        note += (
            f"\n\nDisputes {', '.join(disputed)}: may state another value of the same "
            "thing, not sure (memvault dispute list)."
        )
    if inbox:
        note += "\n\nScope 'global' needs the librarian role: proposed in inbox/ for review."
    return note


def _subject_rivals(meta: Mapping[str, Any], memories: list[Memory]) -> list[Memory]:
    """Active facts sharing the new fact's ``subject`` and owner."""
    from .conflicts import same_owner

    return [
        m
        for m in memories
        if m.subject == meta["subject"] and m.status == "active" and same_owner(m, meta)
    ]


def _short(text: str, n: int = 72) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"
