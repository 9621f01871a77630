"""Search over the vault: hybrid keyword (SQLite FTS5) + vector (Chroma) search, fused and
weighted, behind five entry points that each take the vault and a query:

- :func:`search`: plain hybrid search over every kind of memory;
- :func:`recall`: routed by the question's intent (:mod:`.routing`);
- :func:`fact` and :func:`procedure`: one kind of memory;
- :func:`context`: the most useful memories as a prompt block within a token budget.

Inside: :mod:`.options` (keywords -> index filter), :mod:`.engine` (running a query),
:mod:`.ranking` (fusion and boosts), :mod:`.results` (hits), :mod:`.accesslog` (reads).

May import: the index, the memory model, the store and the base; never validate (which
sits above it), the services, the vault or a door.
"""

from __future__ import annotations

from .api import fact, procedure, recall, search
from .context import ContextBlock, context
from .engine import query_vector, warm
from .options import SearchOptions, ValidateOptions
from .results import SearchHit, SearchResult

__all__ = [
    "ContextBlock",
    "SearchHit",
    "SearchOptions",
    "SearchResult",
    "ValidateOptions",
    "context",
    "fact",
    "procedure",
    "query_vector",
    "recall",
    "search",
    "warm",
]
