"""Memories as MCP resources: the pages of ``resources/list``, newest first.

The list holds the active memories the server's identity may see (its own ``self``
memories, its team's, ``global`` ones), most recently written first. Archived,
superseded and proposed memories are left out of the list but stay readable through the
``memvault://{id}`` template, like every memory the identity may see.

A cursor is opaque to clients (the specification's rule) and, inside, the sort key of
the last memory of the page: the next page starts after that key, so a memory written
between two pages neither shifts nor repeats the rest of the list.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json

from mcp.types import Annotations, Resource

from .. import CONFIG_PATH, Memory, Vault, format_time
from ..errors import ConfigError
from .changes import VaultState, vault_state

DEFAULT_PAGE_SIZE = 100  # config ``mcp.page_size``; the client cannot choose (specification)
MAX_PAGE_SIZE = 1000
URI_PREFIX = "memvault://"

SortKey = tuple[int, str]  # (-seconds since the epoch of the last write, id)


class InvalidCursor(ValueError):
    """A cursor this server did not hand out (or one from an older server)."""


def sort_key(memory: Memory) -> SortKey:
    """Newest first, by the last write (``updated``, else ``created``); ties by id."""
    when = memory.time("updated") or memory.created
    return (-int(when.timestamp()) if when else 0, memory.id)


def encode_cursor(key: SortKey) -> str:
    raw = json.dumps([key[0], key[1]], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> SortKey:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        stamp, mid = json.loads(raw)
    except (binascii.Error, ValueError, TypeError):
        raise InvalidCursor(f"invalid cursor {cursor[:40]!r}: pass a nextCursor as given") from None
    if isinstance(stamp, bool) or not isinstance(stamp, int) or not isinstance(mid, str):
        raise InvalidCursor(f"invalid cursor {cursor[:40]!r}: pass a nextCursor as given")
    return (stamp, mid)


def page_size(vault: Vault) -> int:
    """``mcp.page_size`` from the vault's config (1 to 1000)."""
    value = vault.config.get("mcp.page_size", DEFAULT_PAGE_SIZE)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PAGE_SIZE:
        raise ConfigError(
            f"expected an integer in 1-{MAX_PAGE_SIZE}, got {value!r}", CONFIG_PATH, "mcp.page_size"
        )
    return value


def as_resource(memory: Memory) -> Resource:
    """One memory as a resource entry: its URI, title, kind and when it was last written."""
    when = memory.time("updated") or memory.created
    what = f"{memory.type} memory ({memory.category}), scope {memory.scope}"
    if memory.subject:
        what += f", subject {memory.subject}"
    return Resource(
        uri=URI_PREFIX + memory.id,
        name=memory.id,
        title=memory.title,
        description=what,
        mime_type="text/markdown",
        annotations=Annotations(
            priority=round(memory.importance / 5, 2),
            last_modified=format_time(when) if when else None,
        ),
    )


class ResourceList:
    """The sorted list behind ``resources/list``, kept while the vault stays as it was.

    Listing scans the vault (every file is checked for hand edits, which grows with the
    vault), so a first page always scans, and the pages after it reuse that scan while
    HEAD and the write counter stay where they were: walking the whole list costs one scan.
    """

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.state: VaultState | None = None
        self.ordered: list[Memory] = []
        self.keys: list[SortKey] = []

    def page(self, cursor: str | None) -> tuple[list[Resource], str | None]:
        """The page after ``cursor`` (the first page without one) and the next page's cursor."""
        after = decode_cursor(cursor) if cursor else None
        state = vault_state(self.vault)
        if after is None or state != self.state:
            self.ordered = sorted(self.vault.memories(), key=sort_key)
            self.keys = [sort_key(m) for m in self.ordered]
            self.state = state
        start = bisect.bisect_right(self.keys, after) if after is not None else 0
        size = page_size(self.vault)
        page = self.ordered[start : start + size]
        more = start + size < len(self.ordered)
        return [as_resource(m) for m in page], (
            encode_cursor(self.keys[start + size - 1]) if more else None
        )
