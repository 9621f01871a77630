"""``sentence-transformers:<model name or path>``: any sentence-transformers model (torch).

This is the flexible, heavier path: torch is imported when the embedder is built, never
when memvault is imported. Hub names are downloaded by sentence-transformers as usual;
``all-MiniLM-L6-v2`` (with or without the ``sentence-transformers/`` owner) is served from
the bundled, hash-verified copy instead, so it works offline and is pinned.

Models of the E5 family (``intfloat/multilingual-e5-small``, ``intfloat/e5-base-v2``, ...;
recognised by name) were trained with prefixes, and are given them: ``"query: "`` before a
query, ``"passage: "`` before a document. The ``-instruct`` E5 models take instructions
instead, and are left alone.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memvault.embeddings.base import check_texts, l2_normalize
from memvault.embeddings.packaged_model import (
    MODEL_NAME,
    packaged_model_dir,
    verify_all_files,
)
from memvault.embeddings.plugins import RegisterFn, hookimpl

if TYPE_CHECKING:  # pragma: no cover - imports for annotations only
    import torch

__all__ = ["SentenceTransformerEmbedder"]

_BUNDLED_ALIASES = (MODEL_NAME, f"sentence-transformers/{MODEL_NAME}")
# "e5" as a whole dash/underscore/dot-separated part of the model's (or folder's) name.
_E5_NAME = re.compile(r"(?:^|[-_.])e5(?:[-_.]|$)")
E5_QUERY_PREFIX = "query: "
E5_PASSAGE_PREFIX = "passage: "


def e5_prefixes(model: str) -> tuple[str, str] | None:
    """``(query prefix, passage prefix)`` for a model of the E5 family, else None."""
    name = model.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1].lower()
    if "instruct" in name or not _E5_NAME.search(name):
        return None
    return E5_QUERY_PREFIX, E5_PASSAGE_PREFIX


def _weights_fingerprint(model: torch.nn.Module) -> str:
    """SHA-256 over every parameter and buffer (name, dtype, shape, bytes), in name order.

    Works the same for hub models and local folders, and changes exactly when the weights
    do.
    """
    import torch

    digest = hashlib.sha256()
    state = model.state_dict()
    for name in sorted(state):
        tensor = state[name].detach().cpu().contiguous()
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        # Viewed as raw bytes: bfloat16 has no numpy dtype.
        digest.update(tensor.view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


class SentenceTransformerEmbedder:
    """Wraps ``sentence_transformers.SentenceTransformer(model)``; unit float32 vectors.

    ``identity`` is ``sentence-transformers:<name>:sha256-<12 hex of the weights>``, plus
    the max sequence length (and ``:e5prefix`` for the E5 family, whose texts get the
    ``query: ``/``passage: `` prefixes), so a retrained or swapped model, or other
    preprocessing, forces an index rebuild.
    """

    def __init__(self, model: str, device: str | None = None, batch_size: int = 32) -> None:
        if not model:
            raise ValueError("a model name or path is required")
        source = model
        if model in _BUNDLED_ALIASES:
            # Same weights as the hub repository (hash-pinned), no network needed.
            source = str(packaged_model_dir())
        if os.path.isdir(source) and _same_dir(Path(source), packaged_model_dir()):
            # The bundled copy is third-party data: check it before torch reads it.
            verify_all_files(Path(source))

        from sentence_transformers import SentenceTransformer  # imports torch

        self.model_name = model
        self.batch_size = batch_size
        self.prefixes = e5_prefixes(model)
        self._model = SentenceTransformer(source, device=device)
        # Renamed in sentence-transformers 6; the old name warns there and is all 3.x has.
        get_dims = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        dims = get_dims()
        if not dims:
            raise ValueError(f"model {model!r} does not report its embedding dimension")
        self.dimensions: int = int(dims)
        name = model.rstrip("/").rsplit("/", 1)[-1] if os.path.isdir(source) else model
        if model in _BUNDLED_ALIASES:
            name = MODEL_NAME
        self.identity: str = (
            f"sentence-transformers:{name}:sha256-{_weights_fingerprint(self._model)[:12]}"
            f":len{self._model.max_seq_length}" + (":e5prefix" if self.prefixes else "")
        )

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``: float32 array ``(len(texts), dimensions)`` with unit rows."""
        items = check_texts(texts)
        if self.prefixes:
            items = [self.prefixes[1] + text for text in items]
        return self._encode(items)

    def _encode(self, items: list[str]) -> np.ndarray:
        if not items:
            return np.empty((0, self.dimensions), dtype=np.float32)
        vectors = self._model.encode(
            items,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        # Normalised again in numpy: some models return float16/float64 and our contract
        # is float32 unit rows whatever the model does.
        return l2_normalize(np.asarray(vectors, dtype=np.float32))

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query: float32 array ``(dimensions,)`` with unit length."""
        if not isinstance(text, str):
            raise TypeError(f"embed_query() takes a str, not {type(text).__name__}")
        if self.prefixes:
            text = self.prefixes[0] + text
        vector: np.ndarray = self._encode([text])[0]
        return vector

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed many texts as queries (with the E5 query prefix where the model has one):
        for comparing texts with each other. Not part of the :class:`Embedder` protocol."""
        items = check_texts(texts)
        if self.prefixes:
            items = [self.prefixes[0] + text for text in items]
        return self._encode(items)

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder(identity={self.identity!r})"


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _factory(argument: str) -> SentenceTransformerEmbedder:
    if not argument:
        from memvault.errors import ConfigError

        raise ConfigError(
            "'sentence-transformers' needs a model, e.g. 'sentence-transformers:all-MiniLM-L6-v2'",
            key="embedder",
        )
    return SentenceTransformerEmbedder(argument)


@hookimpl
def memvault_register_embedders(register: RegisterFn) -> None:
    """Register ``sentence-transformers:<model name or path>``."""
    register("sentence-transformers", _factory)
