"""Connecting agent clients to a vault: ``memvault integrations install|uninstall
claude-code|cursor|codex``.

:func:`install` writes, or merges into existing files, what a client needs: the MCP server
entry (Claude Code's ``.mcp.json`` or ``~/.claude.json``, Cursor's ``.cursor/mcp.json``,
Codex's ``config.toml``), for Claude Code its ``settings.json`` (environment, permissions,
hooks) and the ``/memvault`` slash command, for Codex a section of ``AGENTS.md``. It is
idempotent, never drops the user's own entries, and with ``dry_run`` only reports the diff;
:func:`uninstall` takes out exactly that. :mod:`.entries` holds what memvault adds,
:mod:`.merge` (JSON) and :mod:`.text` (TOML, Markdown) the merge rules, :mod:`.install` the
files and their writing.

>>> from memvault.integrations import install                               # doctest: +SKIP
>>> report = install("claude-code", "project", vault="~/memory", project=Path("."),
...                  home=Path.home(), dry_run=True)                         # doctest: +SKIP
>>> print(report.files[0].diff())                                           # doctest: +SKIP

A door like the CLI: may import memvault's public API and ``memvault.errors`` only.
"""

from __future__ import annotations

from .entries import CLIENTS
from .install import SCOPES, FileChange, InstallReport, install, uninstall

__all__ = ["CLIENTS", "SCOPES", "FileChange", "InstallReport", "install", "uninstall"]
