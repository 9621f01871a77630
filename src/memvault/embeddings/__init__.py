"""Text embedders for memvault's semantic search, behind a small pluggy plugin interface.

>>> from memvault.embeddings import get_embedder
>>> embedder = get_embedder("default")          # all-MiniLM-L6-v2 on onnxruntime
>>> embedder.embed_query("where did Caroline go?").shape
(384,)

Importing this package imports numpy and pluggy only; onnxruntime, tokenizers and torch are
imported inside the embedders, when a model is first used.

A model-layer package: imports only the base (``errors``, ``paths``, ``config``) and the
store's lock primitive.
"""

from __future__ import annotations

from memvault.embeddings.base import Embedder, l2_normalize, mean_pool
from memvault.embeddings.plugins import (
    PROJECT_NAME,
    EmbedderFactory,
    EmbedderSpecs,
    available_embedders,
    clear_embedder_cache,
    get_embedder,
    hookimpl,
    hookspec,
    plugin_manager,
    register_plugin,
    unregister_plugin,
)

DEFAULT_EMBEDDER = "default"
MULTILINGUAL_EMBEDDER = "multilingual-e5-small"


def embedder_for_languages(languages: list[str]) -> str:
    """The embedder to configure for a vault written in ``languages``: all-MiniLM-L6-v2 for
    English alone (faster, and as good on English), multilingual-e5-small as soon as another
    language is in; all-MiniLM-L6-v2 where e5 can't run here (one line on stderr says why)."""
    if all(code == "en" for code in languages):
        return "all-MiniLM-L6-v2"
    from memvault.embeddings.e5 import unavailable_reason

    why = unavailable_reason()
    if why is None:
        return MULTILINGUAL_EMBEDDER
    import sys

    print(
        f"memvault: {MULTILINGUAL_EMBEDDER} can't run here ({why}); using all-MiniLM-L6-v2",
        file=sys.stderr,
    )
    return "all-MiniLM-L6-v2"


__all__ = [
    "DEFAULT_EMBEDDER",
    "MULTILINGUAL_EMBEDDER",
    "PROJECT_NAME",
    "Embedder",
    "EmbedderFactory",
    "EmbedderSpecs",
    "available_embedders",
    "clear_embedder_cache",
    "embedder_for_languages",
    "get_embedder",
    "hookimpl",
    "hookspec",
    "l2_normalize",
    "mean_pool",
    "plugin_manager",
    "register_plugin",
    "unregister_plugin",
]
