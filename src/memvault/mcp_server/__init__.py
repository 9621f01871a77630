"""``memvault mcp``: the vault as a Model Context Protocol server over stdio.

A thin adapter, like the CLI: every tool parses its arguments, calls one core function
on a :class:`~memvault.Vault` opened once at start (so the embedder and the index stay
warm and a tool call costs a query, not a process start) and returns JSON.

Identity is fixed when the server starts (``--agent/--team/--role`` or
``MEMVAULT_AGENT/TEAM/ROLE``) and no tool takes an argument that changes it: an agent
never sees another agent's ``self`` memories, and its writes to ``global`` go to the
review inbox unless it has the librarian role. Unknown arguments are refused (a
misspelt ``scope`` must not silently become a team memory). Every failure comes back
as an MCP error result with a one-line message; the server itself never dies on input.
Writes take the vault lock, so they serialise with the CLI's and other servers'.

Inside: :mod:`.server` (the server, its session and the stdio loop), :mod:`.tools` (the
tool list) over :mod:`.tools_write`, :mod:`.tools_read` and :mod:`.tools_maintain` (one
module per tool group, sharing :mod:`.args`), and :mod:`.results` (JSON shaping).
Imports the ``mcp`` SDK at module level: only ``memvault mcp`` imports this package.

May import: memvault's public API, ``memvault.errors``, ``memvault.debug`` and the watcher
(the server's change feed); nothing else of the core (``tools/layout.py --check``).
"""

from __future__ import annotations

from .server import INSTRUCTIONS, MemvaultMCP, Session, build_server, serve

__all__ = ["INSTRUCTIONS", "MemvaultMCP", "Session", "build_server", "serve"]
