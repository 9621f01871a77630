"""Facts said in chat become semantic memories when their transcript is distilled.

The built-in distiller (no LLM, offline) reads each user turn with
:mod:`memvault.consolidate.statements` and writes what it states as a fact in force
(``source: distilled``, ``confidence: medium``, ``evidence``: the turns that said it, as
``<transcript id>#<turn id>``), so ``fact`` finds it. Each goes through the write-time
conflict rule of :mod:`memvault.conflicts`, as ``Core.add`` applies it: a fact in force that
it gives another value of is superseded (or, newer than the chat turn, supersedes it), an
unsure one is disputed -- inside the consolidation's plan, so the run stays one commit and
``--dry-run`` shows it. Facts distilled earlier in the same run are weighed the same way
(the index does not hold them yet).

Only ``user`` turns are read: an assistant's sentences are its guesses and restatements, and
a tool's output is not something a person said.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from ..conflicts import disputed_keys, find_conflicts, judge, superseded_keys
from ..memory import Memory, format_time, parse_time, slugify
from ..store.files import render_new
from ..transcripts import ParsedTurn, turn_address
from .model import ARCHIVE_DIR, INBOX_DIR, Action, Plan, State, id_set
from .statements import Statement, statements

if TYPE_CHECKING:  # pragma: no cover
    from ..core import Core

AUTHOR = "agent:memvault-distill"
CONFIDENCE = "medium"  # said once, by one person, read by rules: below a fact written on purpose


def _key(text: str) -> str:
    return " ".join(text.casefold().rstrip(".").split())


class ChatFacts:
    """The facts one consolidation run distils, weighed against the vault and each other."""

    def __init__(self, vault: Core, state: State, result: Plan, taken: set[str]) -> None:
        self.vault = vault
        self.state = state
        self.result = result
        self.taken = taken
        self.new: list[dict[str, Any]] = []  # metas, in the order they were said
        self.texts: dict[str, str] = {}  # id -> content
        self.vectors: dict[str, Any] = {}  # id -> its document vector
        self.known = {
            (_key(m.content or m.title), _owner_of(m.meta))
            for m in state.memories
            if m.type == "semantic" and self._in_force(m)
        }

    def read(self, transcript: Memory, turns: list[ParsedTurn], summary_id: str) -> int:
        """Distil the statements of ``transcript``'s user turns; how many facts it wrote."""
        before = len(self.new)
        for turn in turns:
            if turn.role != "user":
                continue
            when = parse_time(turn.when) if turn.when else None
            for found in statements(turn.text):
                address = turn_address(transcript.id, turn.turn_id)
                self._add(transcript, found, address, when or self.result.now, summary_id)
        return len(self.new) - before

    def finish(self) -> None:
        """Add the files of the facts distilled to the plan."""
        for meta in self.new:
            rel = self.vault.path_for(meta)
            self.result.new_files[rel] = render_new(meta, self.texts[meta["id"]])
            cited = meta["evidence"]
            why = f"stated in {cited[0]}" + (f" (+{len(cited) - 1} more)" if len(cited) > 1 else "")
            status = meta.get("status", "active")
            what = "fact" if status == "active" else f"fact ({status})"
            self.result.actions.append(Action("distill", meta["id"], rel, what, why, {}))

    # --- one statement ------------------------------------------------------------------

    def _add(
        self, m: Memory, found: Statement, address: str, when: dt.datetime, summary_id: str
    ) -> None:
        key = _key(found.text)
        for meta in self.new:  # said again in this run: one more turn cited
            if _key(self.texts[meta["id"]]) == key and _owner_of(meta) == _owner_of(m.meta):
                if address not in meta["evidence"]:
                    meta["evidence"].append(address)
                return
        if (key, _owner_of(m.meta)) in self.known:
            return  # already a fact in force, written by hand or by an earlier run
        meta = self._meta(m, found, address, when, summary_id)
        self.texts[meta["id"]] = found.text
        self._weigh(meta, found.text)
        self.new.append(meta)

    def _meta(
        self, m: Memory, found: Statement, address: str, when: dt.datetime, summary_id: str
    ) -> dict[str, Any]:
        base = slugify(found.text)[:100].strip("-") or "chat-fact"
        mid, n = base, 2
        while mid in self.taken:
            mid, n = f"{base}-{n}", n + 1
        self.taken.add(mid)
        stamp = format_time(when)
        meta: dict[str, Any] = {
            "id": mid,
            "type": "semantic",
            "category": found.category,
            "title": found.text.rstrip(".")[:80],
            "status": "active",
            "scope": m.scope,
            "agent": m.agent,
            "team": m.team,
            "author": AUTHOR,
            "created": stamp,
            "valid_from": stamp,
            "importance": m.importance,
            "confidence": CONFIDENCE,
            "source": "distilled",
            "evidence": [address],
            "derived_from": [m.id],
            "related": [summary_id],
            "tags": ["distilled"],
        }
        return {k: v for k, v in meta.items() if v is not None}

    def _in_force(self, m: Memory) -> bool:
        status = self.state.value(m, "status") or m.status
        return (
            status in ("active", "disputed")
            and m.id not in self.state.archived
            and not m.path.startswith((ARCHIVE_DIR, INBOX_DIR))
        )

    def _weigh(self, meta: dict[str, Any], text: str) -> None:
        """The write-time conflict rule against the facts in force (the index) and the facts
        distilled earlier in this run."""
        new_from = parse_time(meta["valid_from"]) or self.result.now
        superseded: list[str] = []
        disputes: list[tuple[str, str]] = []
        for earlier in self._near(meta, text):
            verdict = judge(text, self.texts[earlier["id"]])
            if verdict is None:
                continue
            action, _, why = verdict
            if action == "supersede":
                self._supersede_new(earlier, meta, new_from, why, superseded)
            else:
                disputes.append((earlier["id"], why))
        for c in self._conflicts(meta, text):
            if c.action == "supersede":
                self._supersede_old(c.memory, meta, new_from, c.why, superseded)
            else:
                disputes.append((c.memory.id, c.why))
        if superseded:
            meta["supersedes"] = superseded[0] if len(superseded) == 1 else superseded
        elif disputes and meta.get("status") == "active":
            self._dispute(meta, disputes)

    def _near(self, meta: dict[str, Any], text: str) -> list[dict[str, Any]]:
        """The facts distilled earlier in this run, in force, of the same owner, as near to
        ``text`` as a write's candidates must be (:func:`memvault.conflicts.candidate_cosine`,
        the new text embedded as a query, the old as a document)."""
        earlier = [
            e for e in self.new if e.get("status") == "active" and _owner_of(e) == _owner_of(meta)
        ]
        if not earlier:
            return []
        from ..conflicts import candidate_cosine
        from ..embeddings import get_embedder

        embedder = get_embedder(str(self.vault.config.get("embedder")))
        missing = [e["id"] for e in earlier if e["id"] not in self.vectors]
        if missing:
            docs = embedder.embed_documents([self.texts[i] for i in missing])
            self.vectors.update(zip(missing, docs, strict=True))
        query = embedder.embed_query(text)
        floor = candidate_cosine(self.vault)
        return [e for e in earlier if float(query @ self.vectors[e["id"]]) >= floor]

    def _conflicts(self, meta: dict[str, Any], text: str) -> list[Any]:
        if self.vault.config.get("supersede.infer", True) is False:
            return []
        from .similarity import index_of

        index = index_of(self.vault, self.state)  # brought up to date once per plan
        if index is None:
            return []  # no index to find them with: written as said, like an add without one
        found = find_conflicts(self.vault, meta, text, index=index)
        return [c for c in found if c.memory.id in self.state.by_id and self._in_force(c.memory)]

    def _supersede_old(
        self, old: Memory, meta: dict[str, Any], new_from: dt.datetime, why: str, out: list[str]
    ) -> None:
        old_from = old.time("valid_from") or old.created or new_from
        if old_from > new_from:  # the vault knows a newer value: this one enters history
            meta.update(superseded_keys(old.id, old_from))
            return
        changes = superseded_keys(meta["id"], new_from)
        self.state.change(old, changes)
        what = f"superseded by {meta['id']}"
        self.result.actions.append(
            Action("distill", old.id, old.path, what, f"said in chat later: {why}", changes)
        )
        out.append(old.id)

    def _supersede_new(
        self,
        earlier: dict[str, Any],
        meta: dict[str, Any],
        new_from: dt.datetime,
        why: str,
        out: list[str],
    ) -> None:
        old_from = parse_time(earlier["valid_from"]) or new_from
        if old_from > new_from:
            meta.update(superseded_keys(earlier["id"], old_from))
            ids = sorted(id_set(earlier.get("supersedes")) | {meta["id"]})
            earlier["supersedes"] = ids[0] if len(ids) == 1 else ids
            return
        earlier.update(superseded_keys(meta["id"], new_from))
        out.append(earlier["id"])

    def _dispute(self, meta: dict[str, Any], disputes: list[tuple[str, str]]) -> None:
        """Unsure whether it replaces them: both sides disputed, each related to the other."""
        by_id = {m["id"]: m for m in self.new}
        for other, why in disputes:
            if other in by_id:
                by_id[other].update({"status": "disputed"})
                by_id[other]["related"] = sorted({*by_id[other].get("related", []), meta["id"]})
            else:
                old = self.state.by_id[other]
                changes = disputed_keys(old, meta["id"])
                self.state.change(old, changes)
                self.result.actions.append(
                    Action("distill", old.id, old.path, f"disputed by {meta['id']}", why, changes)
                )
            self.result.disputed.append(
                {"ids": [other, meta["id"]], "why": f"said in chat, unsure it replaces: {why}"}
            )
        meta["status"] = "disputed"
        meta["related"] = sorted({*meta.get("related", []), *(o for o, _ in disputes)})


def _owner_of(meta: Any) -> tuple[Any, Any, Any]:
    scope = meta.get("scope")
    return (
        scope,
        meta.get("agent") if scope == "self" else None,
        meta.get("team") if scope == "team" else None,
    )
