"""Text embedders for memvault's semantic search, behind a small pluggy plugin interface.

>>> from memvault.embeddings import get_embedder
>>> embedder = get_embedder("default")          # all-MiniLM-L6-v2 on onnxruntime
>>> embedder.embed_query("where did Caroline go?").shape
(384,)

Importing this package imports numpy and pluggy only; onnxruntime, tokenizers and torch are
imported inside the embedders, when a model is first used.
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

__all__ = [
    "DEFAULT_EMBEDDER",
    "PROJECT_NAME",
    "Embedder",
    "EmbedderFactory",
    "EmbedderSpecs",
    "available_embedders",
    "clear_embedder_cache",
    "get_embedder",
    "hookimpl",
    "hookspec",
    "l2_normalize",
    "mean_pool",
    "plugin_manager",
    "register_plugin",
    "unregister_plugin",
]
