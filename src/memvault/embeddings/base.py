"""The embedder interface shared by the built-in embedders and third-party plugins.

Only numpy is imported here: ``import memvault.embeddings`` must stay cheap, because the
CLI imports it on every call and most calls never embed anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder", "check_texts", "l2_normalize", "mean_pool"]


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length float32 vectors.

    ``identity`` is stored in the index manifest: it must change whenever the vectors for
    the same text would change (other model, other weights, other preprocessing), so the
    index knows it has to be rebuilt. ``dimensions`` is the length of every vector.
    """

    identity: str
    dimensions: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed many texts: float32 array of shape ``(len(texts), dimensions)``, unit rows."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one search query: float32 array of shape ``(dimensions,)``, unit length."""
        ...


def l2_normalize(matrix: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """Return ``matrix`` (2-D) with every row scaled to unit L2 norm, as float32.

    ``eps`` matches ``torch.nn.functional.normalize`` (used by sentence-transformers'
    ``Normalize`` module), so an all-zero row stays zero instead of becoming NaN.
    """
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    scaled: np.ndarray = matrix / np.maximum(norms, eps)
    return scaled.astype(np.float32, copy=False)


def mean_pool(token_embeddings: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """Average the token vectors of each row over its real (unpadded) tokens.

    Same formula as sentence-transformers' ``Pooling(mean)``: sum of masked token vectors
    divided by the token count clamped at 1e-9. ``token_embeddings`` is ``(b, seq, dim)``,
    ``attention_mask`` is ``(b, seq)``; returns ``(b, dim)`` float32.
    """
    mask = attention_mask.astype(np.float32)[:, :, None]
    summed = (token_embeddings * mask).sum(axis=1)
    counts = np.maximum(mask.sum(axis=1), 1e-9)
    pooled: np.ndarray = summed / counts
    return pooled.astype(np.float32, copy=False)


def check_texts(texts: Sequence[str]) -> list[str]:
    """Return ``texts`` as a list, refusing a bare string or non-string items.

    A bare ``str`` is a Sequence[str] too; embedding it character by character is never
    what the caller meant, so it is refused loudly.
    """
    if isinstance(texts, str):
        raise TypeError("embed_documents() takes a sequence of strings, not a single string")
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is {type(text).__name__}, expected str")
    return items
