"""What a reader may get back from the index, as SQL over the ``docs`` table."""

from __future__ import annotations

from typing import Any

from ..values import Record


class IndexFilter(Record, frozen=True):
    """What a reader may get back, as SQL over the ``docs`` table (alias ``d``)."""

    types: tuple[str, ...] = ()
    category: str | None = None
    tags: tuple[str, ...] = ()
    scope: str | None = None
    author: str | None = None  # the memory's ``agent`` key
    statuses: tuple[str, ...] = ("active", "disputed")
    since: float | None = None
    until: float | None = None
    as_of: float | None = None
    ids: tuple[str, ...] = ()
    viewer_agent: str | None = None
    viewer_team: str | None = None
    exclude_category: str | None = None

    def sql(self) -> tuple[str, list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        # Visibility first (AgentIdentity.can_see, in SQL).
        if self.viewer_agent is not None:
            clauses.append(
                "(d.scope = 'global' OR (d.scope = 'self' AND d.agent = ?) "
                "OR (d.scope NOT IN ('self', 'global') AND (d.team IS NULL OR d.team IS ?)))"
            )
            params += [self.viewer_agent, self.viewer_team]
        else:
            clauses.append(
                "(d.scope = 'global' "
                "OR (d.scope NOT IN ('self', 'global') AND (d.team IS NULL OR d.team IS ?)))"
            )
            params.append(self.viewer_team)
        if self.statuses:
            clauses.append(f"d.status IN ({','.join('?' * len(self.statuses))})")
            params += list(self.statuses)
        if self.types:
            clauses.append(f"d.type IN ({','.join('?' * len(self.types))})")
            params += list(self.types)
        if self.category:
            clauses.append("d.category = ?")
            params.append(self.category)
        for tag in self.tags:
            clauses.append("instr(d.tags, ?) > 0")
            params.append(f"|{tag}|")
        if self.scope:
            clauses.append("d.scope = ?")
            params.append(self.scope)
        if self.author:
            clauses.append("d.agent = ?")
            params.append(self.author)
        if self.since is not None:
            clauses.append("d.created >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append("d.created <= ?")
            params.append(self.until)
        if self.as_of is not None:
            # Valid time, not recording time: a fact counts from its valid_from (else from when
            # it was written), until its valid_to; an episode once it happened.
            clauses.append(
                "(COALESCE(d.valid_from, d.created) IS NULL "
                "OR COALESCE(d.valid_from, d.created) <= ?) "
                "AND (d.valid_to IS NULL OR d.valid_to > ?)"
            )
            params += [self.as_of, self.as_of]
        if self.ids:
            clauses.append(f"d.id IN ({','.join('?' * len(self.ids))})")
            params += list(self.ids)
        if self.exclude_category:
            clauses.append("d.category != ?")
            params.append(self.exclude_category)
        return " AND ".join(clauses) or "1", params
