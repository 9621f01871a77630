"""Debug mode in the command line: trace a read command and print the trace on stderr.

:func:`begin` starts a trace for a read command; :func:`open_vault <.common.open_vault>`
keeps it only when debug mode is on for the vault it opened; :func:`finish` prints it on
stderr after the command succeeded. Stdout is untouched, so ``--json`` output still parses.
Typer-free: the fast path (``show``) goes through here too.
"""

from __future__ import annotations

import sys

from .. import debug
from ..values import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    import contextvars
    from collections.abc import Mapping, Sequence
    from typing import Any

# The commands debug mode traces: every command that reads memories.
READ_COMMANDS = frozenset(
    {
        "recall",
        "fact",
        "procedure",
        "search",
        "validate",
        "context",
        "show",
        "list",
        "episodes",
        "stats",
        "history",
        "why",
        "insights",
        "export",
    }
)


def begin(argv: list[str]) -> contextvars.Token[debug.Trace | None] | None:
    """Start a (provisional) trace when ``argv`` runs a read command."""
    from .fast import command_name

    name = command_name(argv)
    return debug.start(name) if name in READ_COMMANDS else None


def finish(token: contextvars.Token[debug.Trace | None] | None, code: int) -> None:
    """End the trace; print it on stderr when debug mode kept it and the command succeeded."""
    if token is None:
        return
    trace = debug.stop(token)
    if trace is None or not trace.notes.get("vault") or code != 0:
        return
    try:
        text = render(trace.as_dict())
    except Exception as exc:  # noqa: BLE001 - a diagnostic must not fail the command
        text = f"debug: could not show the trace ({type(exc).__name__}: {exc})\n"
    sys.stdout.flush()  # the command's own output first, at a terminal
    sys.stderr.write(text)
    sys.stderr.flush()


def _ms(value: float) -> str:
    return f"{value:.1f} ms"


def _timings(timings: Mapping[str, float]) -> str:
    return " · ".join(f"{name} {_ms(ms)}" for name, ms in timings.items())


def _pairs(data: Mapping[str, Any] | Any) -> str:
    if not isinstance(data, dict):
        return str(data)
    parts = []
    for key, value in data.items():
        if isinstance(value, list):
            value = ",".join(str(v) for v in value)
        elif value is None:
            value = "-"
        parts.append(f"{key} {value}")
    return " · ".join(parts)


def _route(route: Mapping[str, Any]) -> str:
    bits = [str(route.get("intent"))]
    if route.get("cue"):
        bits.append(f"cue {route['cue']!r}")
    if route.get("kind"):
        bits.append(f"prefers {route['kind']}")
    bits.append(f"{route.get('order') or 'relevance'} order")
    if route.get("language"):
        bits.append(f"language {route['language']}")
    if route.get("window"):
        bits.append(f"window {' .. '.join(route['window'])}")
    return ", ".join(bits)


def _leg(name: str, count: int, top: Sequence[Mapping[str, Any]], score: str) -> list[str]:
    lines = [f"    {name}: {count} chunk(s)" + ("" if top else ", no candidate")]
    for item in top:
        lines.append(f"      #{item['rank']:<3} {item['id']}  {score} {item[score]}")
    return lines


def _fused(item: Mapping[str, Any]) -> str:
    kw, vec = item.get("keyword") or {}, item.get("vector") or {}
    boosts = item.get("boosts") or {}
    parts = [
        f"keyword #{kw.get('rank')} ({kw.get('normalised')})" if kw.get("rank") else "keyword -",
        f"vector #{vec.get('rank')} (cos {vec.get('cosine')})"
        if vec.get("rank")
        else f"vector - (cos {vec.get('cosine')})",
        f"fusion {item.get('fusion')}",
    ]
    if boosts:
        parts.append(" ".join(f"{k} x{v}" for k, v in boosts.items()))
    return f"{item['id']}  " + " · ".join(parts) + f" = {item.get('score')}"


def _query(n: int, q: Mapping[str, Any]) -> list[str]:
    plan = dict(q.get("plan") or {})
    filt = plan.pop("filter", {})
    lines = [f"  query {n}: {q.get('query')!r}", f"    plan: {_pairs(plan)}"]
    lines.append(f"    filter: {_pairs(filt) or '-'}")
    lines.append(f"    timings: {_timings(q.get('timings_ms') or {}) or '-'}")
    if "keyword_top" not in q:
        lines.append("    no candidate in either leg")
        return lines
    counts = q.get("candidates") or {}
    lines += _leg("keyword leg (FTS5 BM25)", counts.get("keyword", 0), q["keyword_top"], "bm25")
    how = q.get("vector_search")
    lines += _leg(f"vector leg ({how})", counts.get("vector", 0), q["vector_top"], "cosine")
    fused = q.get("fused_top") or []
    lines.append("    fused and boosted:" + ("" if fused else " nothing scored above 0"))
    lines += [f"      {i}. {_fused(item)}" for i, item in enumerate(fused, 1)]
    return lines


def render(data: Mapping[str, Any]) -> str:
    """A trace (:meth:`memvault.debug.Trace.as_dict`) as text for stderr."""
    timings = dict(data.get("timings_ms") or {})
    total = timings.pop("total", 0.0)
    lines = [f"debug: {data.get('command')} · {_ms(total)} (memvault debug off to stop)"]
    lines.append(f"  vault: {data.get('vault')}")
    if data.get("identity"):
        lines.append(f"  identity: {_pairs(data['identity'])}")
    if data.get("route"):
        lines.append(f"  route: {_route(data['route'])}")
    if data.get("options"):
        lines.append(f"  options: {_pairs(data['options'])}")
    if data.get("filters"):
        lines.append(f"  filters: {_pairs(data['filters'])}")
    for key in ("found", "read"):
        if data.get(key):
            lines.append(f"  {key}: {data[key]}")
    if timings:
        lines.append(f"  timings: {_timings(timings)}")
    for n, query in enumerate(data.get("queries") or [], 1):
        lines += _query(n, query)
    return "\n".join(lines) + "\n"
