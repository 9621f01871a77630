"""``context``: a ready block of memory to put in an agent's prompt, within a token budget.

Seed 004's injection template -- previous episodes, known facts, applicable procedures,
active constraints -- filled with the memories most relevant to the task. Lines are
chosen most useful first (by search score) until the budget is spent; the block says how
many were left out and which, so the agent can ask for them.

Tokens are estimated as ~4 characters each (no tokenizer is loaded): budgets are
approximate, on the safe side for English text.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, Unpack

from ..errors import MemvaultError
from ..index.query import shared_keyword_rows
from ..values import Record, field
from .accesslog import log_read, strength
from .engine import query_vector, run
from .options import SearchOptions, build_filter, check_min_score, split_options
from .ranking import Plan
from .results import SearchHit

if TYPE_CHECKING:  # pragma: no cover
    from ..store.repository import Repository

SECTIONS = (
    ("episodes", "Previous episodes"),
    ("facts", "Known facts"),
    ("procedures", "Applicable procedures"),
    ("constraints", "Active constraints"),
)
# How many candidates each section considers, and how much a line of it is worth.
PER_SECTION = {"episodes": 5, "facts": 8, "procedures": 3, "constraints": 5}
SECTION_WEIGHT = {"constraints": 1.15, "facts": 1.0, "procedures": 1.0, "episodes": 0.9}
MIN_BUDGET = 30
RELATIVE_FLOOR = 0.2  # a line scoring under 20 % of the best one is left out


def tokens(text: str) -> int:
    """Approximate token count (~4 characters per token)."""
    return math.ceil(len(text) / 4)


class ContextLine(Record, frozen=True):
    section: str
    id: str
    text: str
    score: float
    relevance: float | None = None  # the hit's own relevance (reads count above the floor)

    @property
    def tokens(self) -> int:
        return tokens(self.text) + 1


class ContextBlock(Record, frozen=True):
    """The rendered block (``text``), what is in it and what had to be left out."""

    query: str
    budget: int
    text: str
    tokens: int
    included: tuple[ContextLine, ...]
    omitted: tuple[ContextLine, ...] = field(default=())
    ms: float = 0.0

    @property
    def ids(self) -> list[str]:
        return [line.id for line in self.included]

    def __str__(self) -> str:
        return self.text

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "budget": self.budget,
            "tokens": self.tokens,
            "text": self.text,
            "included": [
                {"section": line.section, "id": line.id, "score": round(line.score, 4)}
                for line in self.included
            ],
            "omitted": [
                {"section": line.section, "id": line.id, "score": round(line.score, 4)}
                for line in self.omitted
            ],
            "ms": round(self.ms, 1),
        }


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _quote(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def render_line(section: str, hit: SearchHit) -> str:
    memory = hit.memory
    meta = memory.meta if memory is not None else {}
    content = memory.content if memory is not None else hit.snippet
    if section == "episodes" and hit.turn is not None:
        date = (hit.turn.time or "")[:10]
        said = _quote(_short(hit.snippet, 300))
        return (
            f"- [{hit.address}]" + (f" ({date})" if date else "") + f" {hit.turn.speaker}: {said}"
        )
    if section == "episodes":
        title = str(meta.get("title") or "")
        summary = title if title else _short(content, 200)
        date = (hit.created or "")[:10]
        line = (
            f"- [{hit.id}]" + (f" ({date})" if date else "") + f": {_quote(_short(summary, 200))}"
        )
        outcome = meta.get("outcome")
        if outcome:
            line += f" (outcome: {outcome})"
        return line
    if section == "procedures":
        name = str(meta.get("title") or hit.title)
        line = f"- [{hit.id}]: {_quote(_short(name, 120))}"
        rate = meta.get("success_rate")
        if isinstance(rate, (int, float)):
            line += f" (success rate: {rate:.0%})"
        steps = meta.get("steps")
        if isinstance(steps, list) and steps:
            rendered = []
            for i, step in enumerate(steps[:8], 1):
                text = (
                    step.get("action") or step.get("step") or str(step)
                    if isinstance(step, dict)
                    else str(step)
                )
                rendered.append(f"  {i}. {_short(str(text), 120)}")
            line += "\n" + "\n".join(rendered)
        return line
    statement = _short(content or hit.title, 300)
    line = f"- [{hit.id}]: {_quote(statement)}"
    if section == "facts":
        line += f" (confidence: {meta.get('confidence') or 'medium'})"
    return line


def context(
    vault: Repository, query: str, budget: int = 1500, **options: Unpack[SearchOptions]
) -> ContextBlock:
    """The memories most useful for ``query`` as a prompt block of at most ``budget`` tokens.

    Options: ``scope``/``tags``/``since``/``until``/``as_of``/``include_archive`` (filters),
    ``log`` (access log, default True).
    """
    started = time.perf_counter()
    top = int(vault.config.get("limits.max_budget", 200_000))
    if isinstance(budget, bool) or not isinstance(budget, int) or not MIN_BUDGET <= budget <= top:
        raise MemvaultError(
            f"expected {MIN_BUDGET}-{top} tokens (limits.max_budget), got {budget!r}", key="budget"
        )
    fopts, rest = split_options(options)  # limit, kind, order, explain: not used here
    log = rest.get("log", True)
    if not query or not query.strip():
        raise MemvaultError("empty query: describe the task", key="query")
    floor = check_min_score(vault, rest.get("min_score"))
    qvec = query_vector(vault, query)
    constraints = {**fopts, "category": "constraints"}
    plans = {
        "constraints": build_filter(vault, constraints, types=("semantic",)),  # type: ignore[arg-type]
        "facts": build_filter(vault, fopts, types=("semantic",), exclude_category="constraints"),
        "procedures": build_filter(vault, fopts, types=("procedural",)),
        "episodes": build_filter(vault, fopts, types=("episodic",)),
    }
    with shared_keyword_rows():  # one scoring of the query's words for every section
        candidates = _sections(vault, query, plans, fopts, floor, qvec)
    # Lines far weaker than the best one are noise, whatever the budget.
    weak = RELATIVE_FLOOR * max((c.score for c in candidates), default=0.0)
    candidates = [c for c in candidates if c.score >= weak and c.score > 0]
    header = "## Relevant memory\n"
    used = tokens(header)
    chosen: list[ContextLine] = []
    left: list[ContextLine] = []
    heading_cost = {name: tokens(f"\n### {title}\n") for name, title in SECTIONS}
    opened: set[str] = set()
    footer_reserve = 24
    for line in sorted(candidates, key=lambda c: -c.score):
        cost = line.tokens + (0 if line.section in opened else heading_cost[line.section])
        if used + cost + footer_reserve <= budget:
            chosen.append(line)
            opened.add(line.section)
            used += cost
        else:
            left.append(line)
    text = _render(header, chosen, left)
    while (
        tokens(text) > budget and chosen
    ):  # the footer grew past the reserve: drop the weakest line
        left.insert(0, chosen.pop())
        text = _render(header, chosen, left)
    ms = (time.perf_counter() - started) * 1000
    if log:
        read = [c for c in chosen if c.relevance is None or c.relevance >= floor]
        best = max((c.relevance for c in read if c.relevance is not None), default=None)
        weights = [strength(c.relevance, floor, best) for c in read]
        log_read(vault, "context", query, [c.id for c in read], ms, weights)
    return ContextBlock(query, budget, text, tokens(text), tuple(chosen), tuple(left), ms)


def _sections(
    vault: Repository,
    query: str,
    plans: dict[str, tuple[tuple[str, ...], Any]],
    fopts: Any,
    floor: float,
    qvec: Any,
) -> list[ContextLine]:
    """Each section's search, as candidate lines (a memory once, in its first section)."""
    candidates: list[ContextLine] = []
    seen: set[str] = set()
    for section, (types, filt) in plans.items():
        if fopts.get("category") and section in ("constraints", "facts"):
            types, filt = build_filter(vault, fopts, types=("semantic",))
        plan = Plan(
            types=types,
            filt=filt,
            limit=PER_SECTION[section],
            procedures=section == "procedures",
            min_score=floor,
        )
        # a transcript gives its turns, each a line of its own; a section's lines keep the
        # search's order (it may lead with a dispute's newer fact over a higher score)
        ceiling = math.inf
        for hit in run(vault, query, plan, qvec=qvec).hits:
            ceiling = min(ceiling, hit.score)
            if hit.address in seen:
                continue
            seen.add(hit.address)
            rendered = render_line(section, hit)
            weight = ceiling * SECTION_WEIGHT[section]
            candidates.append(ContextLine(section, hit.address, rendered, weight, hit.relevance))
    return candidates


def _render(header: str, chosen: list[ContextLine], left: list[ContextLine]) -> str:
    parts = [header]
    if not chosen:
        parts.append("\n(nothing relevant found)\n" if not left else "")
    for name, title in SECTIONS:
        lines = [c for c in chosen if c.section == name]
        if lines:
            parts.append(f"\n### {title}\n")
            parts.extend(line.text + "\n" for line in lines)
    if left:
        ids = ", ".join(c.id for c in left[:6]) + (", …" if len(left) > 6 else "")
        parts.append(f"\n({len(left)} more left out to fit the budget: {ids})\n")
    return "".join(parts)
