"""The maintenance tool: consolidate (the "sleep job"), a dry run unless asked to apply."""

from __future__ import annotations

from typing import Annotated

from mcp.types import CallToolResult
from pydantic import Field

from .. import Vault
from .results import consolidation_view, result

Apply = Annotated[
    bool,
    Field(description="false (default): only show the plan. true: perform it as one git commit."),
]


class MaintainTools:
    """The maintenance tools over one vault; each method is one MCP tool."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault

    def consolidate(self, apply: Apply = False) -> CallToolResult:
        """Memory maintenance (the "sleep job"): fold reads into the files, decay relevance and
        archive stale memories, merge near duplicates, resolve facts sharing a subject, propose
        patterns seen in 3+ episodes, distill old session transcripts.

        By default it only previews the plan and writes nothing; pass apply=true to perform it."""
        plan, sha = self.vault.consolidate(None, dry_run=not apply, texts=False)  # no diff shown
        return result(consolidation_view(self.vault, plan, sha, applied=apply))
