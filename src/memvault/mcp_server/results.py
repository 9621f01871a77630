"""Shaping core results into MCP tool results: plain JSON, minus what the identity may not see."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.types import CallToolResult, TextContent

from .. import Memory, Vault, debug, format_time, parse_when

if TYPE_CHECKING:
    from .. import Plan, SearchResult, ValidationResult


def jsonable(value: Any, _depth: int = 0) -> Any:
    """Plain JSON values from whatever the core returns (dataclasses, memories, times)."""
    if _depth > 20:
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (dt.datetime, dt.date)):
        return format_time(value)
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Memory):
        return value.to_dict(with_content=False)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v, _depth + 1) for v in value]
    as_dict = getattr(value, "as_dict", None) or getattr(value, "to_dict", None)
    if callable(as_dict):
        return jsonable(as_dict(), _depth + 1)
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name), _depth + 1) for f in fields(value)}
    return str(value)


def result(data: Any) -> CallToolResult:
    """A tool result: the structured content, and the same JSON as its text block (what the
    specification asks of a tool that returns structured content)."""
    plain = jsonable(data)
    structured = plain if isinstance(plain, dict) else {"result": plain}
    body = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(
        content=[TextContent(type="text", text=body)], structured_content=structured
    )


def when(value: str | None, key: str) -> dt.datetime | None:
    """A tool's date argument (ISO, or an age like '7d' as the CLI takes), or a one-line
    error naming the argument."""
    return parse_when(None if value is None else str(value), key)


def time_text(value: str | None, key: str) -> str | None:
    """A tool's date argument in the files' time format, or ``None``."""
    parsed = when(value, key)
    return format_time(parsed) if parsed else None


def snippet(text: str, n: int = 300) -> str:
    """One line of at most ``n`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def short_memory(m: Memory, size: int = 300) -> dict[str, Any]:
    """A memory as a list entry: id, title, kind, a few keys and a one-line snippet."""
    text = m.content
    if m.category == "transcript":  # turn headers are markup, not content
        from .. import parse_turns

        text = " / ".join(f"{t.role}: {t.text}" for t in parse_turns(m.content)) or text
    out = {
        k: m.meta.get(k)
        for k in ("created", "outcome", "importance", "tags", "scope", "session")
        if m.meta.get(k)
    }
    return {
        "id": m.id,
        "title": m.title,
        "type": m.type,
        "category": m.category,
        **out,
        "snippet": snippet(text, size),
    }


def hidden_ids(vault: Vault, found: SearchResult | ValidationResult) -> set[str]:
    """Defence in depth: ids of hits naming a memory this identity may not see.

    The search already filters by identity inside the index query and again on the
    loaded files; a third look costs nothing, since every hit carries its memory.
    """
    return {
        hit.memory.id
        for hit in found.hits
        if hit.memory is not None and not vault.identity.can_see(hit.memory)
    }


def hits_result(vault: Vault, found: SearchResult | ValidationResult) -> CallToolResult:
    """A search result as JSON, minus anything the identity may not see."""
    hidden = hidden_ids(vault, found)
    data = jsonable(found.as_dict())
    if hidden:
        data["hits"] = [h for h in data["hits"] if h.get("id") not in hidden]
    return result(data)


def consolidation_view(vault: Vault, plan: Plan, sha: str | None, applied: bool) -> dict[str, Any]:
    """The plan as the identity may see it: actions on invisible memories are only counted."""
    seen = [m for m in vault.all_memories() if vault.identity.can_see(m)]
    visible = {m.id for m in seen}
    visible_paths = {m.path for m in seen}
    actions = [a for a in plan.actions if a.memory_id in visible]
    hidden = len(plan.actions) - len(actions)
    return {
        "applied": applied,
        "commit": sha,
        "summary": plan.summary(),
        "actions": [
            {
                "step": a.step,
                "id": a.memory_id,
                "what": a.what + (f" -> {a.move_to}" if a.move_to else ""),
                "why": a.why,
            }
            for a in actions[:200]
        ],
        "more_actions": max(0, len(actions) - 200),
        "actions_on_memories_not_visible_to_you": hidden,
        "new_files": len(plan.new_files),
        # memory files with uncommitted edits: an apply is refused while there are any
        "held_uncommitted": [p for p in plan.held if p in visible_paths],
        # what the run did not do as configured, and why (a command not allowed here)
        "notes": list(plan.notes),
        "note": "dry run: nothing written; call again with apply=true to perform it"
        if not applied
        else ("committed" if sha else "nothing to do"),
    }


def traced(
    vault: Vault, fn: Callable[..., CallToolResult], args: Any, kwargs: Mapping[str, Any]
) -> CallToolResult:
    """Run a read tool under a debug trace; its structured content gains ``debug``: the
    route, filters, each leg's top candidates, boosts and timings (see :mod:`memvault.debug`).
    The text block stays the serialised structured content, ``debug`` included, as the
    specification asks of a tool that returns structured content."""
    with debug.tracing(getattr(fn, "__name__", "tool")) as trace:
        ident = vault.identity
        trace.notes["vault"] = str(vault.root)
        trace.notes["identity"] = {"agent": ident.agent, "team": ident.team, "role": ident.role}
        out = fn(*args, **kwargs)
    if isinstance(out.structured_content, dict):
        return result({**out.structured_content, "debug": jsonable(trace.as_dict())})
    return out
