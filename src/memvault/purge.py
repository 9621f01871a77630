"""Forgetting for real: erase a memory from files, index, access log and git history."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import gitstore
from .errors import MemvaultError
from .vault import Vault


@dataclass
class PurgeReport:
    memory_id: str
    paths: list[str] = field(default_factory=list)
    remotes: list[str] = field(default_factory=list)


def purge_memory(vault: Vault, memory_id: str, reason: str) -> PurgeReport:
    raise MemvaultError("--purge is not implemented yet", key="purge")


_ = gitstore
