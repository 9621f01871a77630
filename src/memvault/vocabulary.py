"""The words of the on-disk contract that command lines need before anything else: the
memory types, their everyday names and the scopes. A module of its own, importing nothing,
so that a served command's process (``memvault.resident.client``) can check its options
without importing :mod:`memvault.memory` (and ``datetime`` with it)."""

from __future__ import annotations

TYPES = ("episodic", "semantic", "procedural")
# The everyday names of the three types (CLI `add episode|fact|procedure`, MCP `remember`).
KIND_TYPE = {"episode": "episodic", "fact": "semantic", "procedure": "procedural"}
SCOPES = ("self", "team", "global")
STATUSES = ("active", "superseded", "archived", "proposed", "disputed")
