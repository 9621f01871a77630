"""The MCP tools: every tool the server offers, in the order a client lists them.

The tools live in one module per group (:mod:`.tools_write`, :mod:`.tools_read`,
:mod:`.tools_maintain`): argument schemas, descriptions written for a model deciding
when to call them, and thin bodies that call one core function and return JSON (shaped
in :mod:`.results`). :mod:`.server` registers them, runs each under its lock and turns
errors into MCP error results.
"""

from __future__ import annotations

from .. import Vault
from .args import DESTRUCTIVE, IDEMPOTENT_WRITE, READ, WRITE, ToolSpec
from .tools_maintain import MaintainTools
from .tools_read import ReadTools
from .tools_write import WriteTools


def define_tools(vault: Vault) -> list[ToolSpec]:
    """The tool functions over ``vault``, each with its annotations and title."""
    write, read, maintain = WriteTools(vault), ReadTools(vault), MaintainTools(vault)
    return [
        (write.remember, WRITE, "Remember"),
        (write.log_turn, IDEMPOTENT_WRITE, "Log a conversation turn"),
        (read.recall, READ, "Recall memories"),
        (read.fact, READ, "Look up facts"),
        (read.procedure, READ, "Find a procedure"),
        (write.procedure_used, WRITE, "Record a procedure's use"),
        (read.validate, READ, "Validate a statement"),
        (read.context, READ, "Memory context block"),
        (read.show, READ, "Show a memory"),
        (write.forget, DESTRUCTIVE, "Forget a memory"),
        (read.stats, READ, "Memory statistics"),
        (read.recent_episodes, READ, "Recent episodes"),
        (maintain.consolidate, DESTRUCTIVE, "Consolidate memory"),
        (write.ingest, IDEMPOTENT_WRITE, "Ingest a transcript"),
        (write.rescope, WRITE, "Move a memory to another scope"),
        (read.insights, READ, "Agent insights"),
    ]
