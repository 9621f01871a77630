"""What debug mode shows of a ranked query: its plan and filters, each leg's top candidates
with their scores, and the fused top with its boosts (see :mod:`memvault.debug`).

The ranking only hands its objects over (:func:`memvault.debug.keep`); they are turned
into plain data here, after the query, so that a search with debug mode off does no
extra work.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..debug import QueryTrace
from .ranking import Found, Legs, Plan, explanation

if TYPE_CHECKING:  # pragma: no cover
    from ..index.filters import IndexFilter

TOP = 5  # candidates shown per leg, and of the fused list
_TIMES = ("since", "until", "as_of")


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def filter_info(filt: IndexFilter) -> dict[str, Any]:
    """The filter applied inside both legs: every field that restricts something."""
    out: dict[str, Any] = {}
    for name in filt._fields:
        value = getattr(filt, name)
        if value in (None, (), ""):
            continue
        if name in _TIMES and isinstance(value, (int, float)):
            value = _iso(float(value))
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def plan_info(plan: Plan) -> dict[str, Any]:
    """A query's resolved options and its index filter, as plain data."""
    out: dict[str, Any] = {
        "types": list(plan.types),
        "limit": plan.limit,
        "order": plan.order,
    }
    if plan.prefer:
        out["prefer"] = plan.prefer
    if plan.procedures:
        out["procedures"] = True
    if plan.window is not None:
        out["window"] = [_iso(plan.window[0]), _iso(plan.window[1])]
    if plan.speaker:
        out["speaker"] = plan.speaker
    if plan.role:
        out["role"] = plan.role
    out["filter"] = filter_info(plan.filt)
    return out


def _leg_top(legs: Legs, leg: Sequence[tuple[int, int, float]], score: str) -> list[dict[str, Any]]:
    """The first ``TOP`` memories of one leg (a memory counts once, at its best chunk)."""
    out: list[dict[str, Any]] = []
    seen: set[int] = set()
    for rank, (rowid, key, value) in enumerate(leg, 1):
        if key in seen:
            continue
        seen.add(key)
        row = legs.rows.get(key)
        out.append(
            {
                "rank": rank,
                "id": row.id if row is not None else None,
                "path": row.path if row is not None else None,
                score: float(f"{value:.4g}"),  # significant digits: BM25 can be ~1e-6
                "chunk": rowid,
            }
        )
        if len(out) >= TOP:
            break
    return out


def summarise(entry: QueryTrace) -> None:
    """Turn the ranking's objects held by ``entry`` into its summary (and drop them)."""
    legs: Legs | None = entry.raw.pop("legs", None)
    found: list[Found] | None = entry.raw.pop("found", None)
    entry.raw.clear()
    if legs is None:
        return
    entry.summary = {
        "vector_search": legs.how,
        "candidates": {"keyword": len(legs.keyword), "vector": len(legs.vector)},
        "keyword_top": _leg_top(legs, legs.keyword, "bm25"),
        "vector_top": _leg_top(legs, legs.vector, "cosine"),
        "fused_top": [
            {"id": f.row.id, "path": f.row.path, **explanation(f, legs)}
            for f in (found or [])[:TOP]
        ],
    }
