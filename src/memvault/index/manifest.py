"""What the index must be for a vault: the embedder, and the header its manifest records
(schema, embedder identity, dimensions, chunking). A mismatch means a rebuild, never a
silent mix of vectors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import store
from .text import TEXT_FORMAT

if TYPE_CHECKING:  # pragma: no cover
    from ..embeddings import Embedder
    from ..repository import Repository


def embedder_for(vault: Repository) -> Embedder:
    """The embedder the vault's config names (loaded once per process)."""
    from ..embeddings import get_embedder

    return get_embedder(str(vault.config.get("embedder") or "default"))


def expected_header(vault: Repository, embedder: Embedder) -> dict[str, Any]:
    """The manifest header an index built now, for this vault and embedder, would carry."""
    return {
        "schema": store.SCHEMA,
        "embedder": embedder.identity,
        "dimensions": int(embedder.dimensions),
        "chunk_words": int(vault.config.get("index.chunk_words", 180)),
        "text_format": TEXT_FORMAT,
        "context_vectors": bool(vault.config.get("index.context_vectors", True)),
    }


def mismatch(manifest: Mapping[str, Any], header: Mapping[str, Any]) -> str | None:
    """Why an index with ``manifest`` can't serve ``header`` (None: it can)."""
    if manifest.get("schema") != header["schema"]:
        return (
            f"the index has schema {manifest.get('schema')}, this memvault uses {header['schema']}"
        )
    if manifest.get("embedder") != header["embedder"]:
        return (
            f"the index was built with embedder {manifest.get('embedder')!r}, "
            f"the vault now uses {header['embedder']!r}"
        )
    if manifest.get("dimensions") != header["dimensions"]:
        return (
            f"the index holds {manifest.get('dimensions')}-d vectors, "
            f"the embedder makes {header['dimensions']}-d"
        )
    if manifest.get("chunk_words") != header["chunk_words"]:
        return (
            f"index.chunk_words changed ({manifest.get('chunk_words')} -> {header['chunk_words']})"
        )
    if manifest.get("text_format") != header["text_format"]:
        return "the indexed text format changed in this memvault version"
    if bool(manifest.get("context_vectors")) != header["context_vectors"]:
        return "index.context_vectors changed"
    return None
