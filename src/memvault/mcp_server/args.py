"""What the tools share: argument types (the JSON schema a model sees) and tool annotations.

An argument's type and ``Field`` are its schema: the SDK validates every call against
them before a tool body runs, so the bodies parse nothing themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
IDEMPOTENT_WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)

# A tool function with its annotations and its human-readable title.
ToolSpec = tuple[Callable[..., CallToolResult], ToolAnnotations, str]

Kind = Literal["episode", "fact", "procedure"]
Scope = Literal["self", "team", "global"]
Rating = Literal["helpful", "neutral", "not_helpful"]
Speaker = Literal["user", "assistant", "system", "tool"]
Confidence = Literal["high", "medium", "low"]
TranscriptFormat = Literal["auto", "jsonl", "claude"]

Query = Annotated[
    str,
    Field(min_length=1, max_length=4000, description="What you are looking for, in plain words."),
]
Limit = Annotated[int, Field(ge=1, le=50, description="At most this many results.")]
Day = Annotated[str | None, Field(description="ISO date or time, e.g. 2026-01-31.")]
