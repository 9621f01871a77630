"""The front-matter keys a write takes, declared once: :meth:`memvault.Vault.add`'s typed
keywords, the CLI's ``add`` options, the MCP ``remember`` tool and the inspector's form all
name these (see the README's "The vault" for what each key means)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TypedDict


class MemoryFields(TypedDict, total=False):
    """Optional keys of a new memory (``None`` or an empty list: not set)."""

    category: str | None  # semantic: facts|decisions|...; procedural: workflows|...
    tags: Sequence[str] | None
    importance: int | None  # 1-5
    decay: str | None  # fast|normal|slow|never
    confidence: str | None  # high|medium|low
    scope: str | None  # self|team|global
    subject: str | None  # a newer fact on the same subject supersedes the older
    valid_from: str | dt.datetime | None
    valid_to: str | dt.datetime | None
    trigger: Sequence[str] | None  # procedural: words that call it up
    steps: Sequence[str] | None  # procedural: ordered steps
    outcome: str | None  # episodic: success|failure|...
    session: str | None
    source: str | None
    related: Sequence[str] | None  # ids of related memories
    channel: str | None
    author: str | None
    context: str | None  # episodic: what the situation was


WRITE_FIELDS = tuple(MemoryFields.__annotations__)
