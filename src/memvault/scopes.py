"""Who is asking and what they asked for: scope visibility and list/search filters.

:class:`AgentIdentity` decides which memories an agent may see (its own ``self`` ones,
its team's, every ``global`` one); :class:`Filters` narrows them (``list`` and search).
"""

from __future__ import annotations

import datetime as dt

from .values import TYPE_CHECKING, Record

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Sequence

    from .memory import Memory


class AgentIdentity(Record, frozen=True):
    """Who is asking: scopes are enforced against this."""

    agent: str | None = None
    team: str | None = None
    role: str | None = None

    @property
    def is_librarian(self) -> bool:
        return self.role == "librarian"

    def can_see(self, memory: Memory) -> bool:
        return self.can_see_owner(memory.scope, memory.agent, memory.team)

    def can_see_owner(self, scope: str, agent: str | None, team: str | None) -> bool:
        """Whether a memory of ``scope`` owned by ``agent`` and ``team`` is visible (also for
        the record of a forgotten one, which keeps only these)."""
        if scope == "global":
            return True
        if scope == "self":
            return self.agent is not None and agent == self.agent
        # team: visible to members of that team; a memory with no team is the vault's own team
        return team is None or team == self.team

    @property
    def name(self) -> str | None:
        """Who writes, as commit records name them: ``agent:NAME``, None for no agent."""
        return f"agent:{self.agent}" if self.agent else None


class Filters(Record):
    """Filters shared by ``list`` and search. ``status`` None means active only, "any" all."""

    type: str | None = None
    category: str | None = None
    tags: Sequence[str] = ()
    scope: str | None = None
    agent: str | None = None
    status: str | None = None
    since: dt.datetime | None = None
    until: dt.datetime | None = None
    include_archive: bool = False
    include_inbox: bool = False
    ids: Sequence[str] = ()

    def check(self) -> None:
        """Refuse a value no memory can have (``--status all`` matched nothing, silently):
        a one-line error listing the valid ones."""
        from .errors import ValidationError
        from .memory import SCOPES, STATUSES, TYPES

        for key, value, valid in (
            ("status", self.status, (*STATUSES, "any")),
            ("type", self.type, TYPES),
            ("scope", self.scope, SCOPES),
        ):
            if value is not None and value not in valid:
                raise ValidationError(f"expected {'|'.join(valid)}, got {value!r}", key=key)

    def match(self, memory: Memory) -> bool:
        if self.type and memory.type != self.type:
            return False
        if self.category and memory.category != self.category:
            return False
        if self.tags and not set(self.tags) <= set(memory.tags):
            return False
        if self.scope and memory.scope != self.scope:
            return False
        if self.agent and memory.agent != self.agent:
            return False
        if self.ids and memory.id not in self.ids:
            return False
        status = memory.status
        if self.status is None:
            allowed = {"active", "disputed"}
            if self.include_archive:
                allowed.add("archived")
            if self.include_inbox:
                allowed.add("proposed")
            if status not in allowed:
                return False
        elif self.status != "any" and status != self.status:
            return False
        if self.since or self.until:
            when = memory.created
            if when is None:
                return False
            if self.since and when < self.since:
                return False
            if self.until and when > self.until:
                return False
        return True
