"""A deterministic, model-free embedder for tests: feature hashing of words and trigrams.

Texts that share words get similar vectors, so tests of search ranking and near-duplicate
detection behave roughly like with a real model, in microseconds and without any model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from memvault.embeddings.base import check_texts, l2_normalize
from memvault.embeddings.plugins import RegisterFn, hookimpl

__all__ = ["FakeEmbedder", "DEFAULT_FAKE_DIMENSIONS"]

DEFAULT_FAKE_DIMENSIONS = 64
_MAX_DIMENSIONS = 8192
_WORD = re.compile(r"\w+")
# Whole words dominate; trigrams make "jumps" and "jumped" a little alike, like a real
# model would.
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.3


@lru_cache(maxsize=65536)
def _bucket(feature: str, dims: int) -> tuple[int, float]:
    # blake2b, not hash(): Python's str hash is salted per process, and fake vectors must
    # be identical across processes (indexes built in one, searched in another).
    value = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "big")
    return value % dims, (1.0 if (value >> 40) & 1 else -1.0)


class FakeEmbedder:
    """Signed feature hashing of lowercase words and their character trigrams.

    Identical text gives the identical vector in every process; texts with mostly the same
    words have a cosine close to 1. An empty text maps to a fixed unit vector.
    """

    def __init__(self, dimensions: int = DEFAULT_FAKE_DIMENSIONS) -> None:
        if not 2 <= dimensions <= _MAX_DIMENSIONS:
            raise ValueError(f"fake embedder dimensions must be 2..{_MAX_DIMENSIONS}")
        self.dimensions = dimensions
        self.identity = f"fake:{dimensions}"

    def _vector(self, text: str, out: np.ndarray) -> None:
        words = _WORD.findall(text.lower())
        if not words:
            out[_bucket("\x00empty", self.dimensions)[0]] = 1.0
            return
        for word in words:
            index, sign = _bucket("w:" + word, self.dimensions)
            out[index] += sign * _WORD_WEIGHT
            padded = f"#{word}#"
            for i in range(len(padded) - 2):
                index, sign = _bucket("t:" + padded[i : i + 3], self.dimensions)
                out[index] += sign * _TRIGRAM_WEIGHT

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``: float32 array ``(len(texts), dimensions)`` with unit rows."""
        items = check_texts(texts)
        matrix = np.zeros((len(items), self.dimensions), dtype=np.float64)
        for row, text in enumerate(items):
            self._vector(text, matrix[row])
        return l2_normalize(matrix)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query: float32 array ``(dimensions,)`` with unit length."""
        vector: np.ndarray = self.embed_documents([text])[0]
        return vector

    def __repr__(self) -> str:
        return f"FakeEmbedder(dimensions={self.dimensions})"


def _factory(argument: str) -> FakeEmbedder:
    if not argument:
        return FakeEmbedder()
    try:
        dims = int(argument)
    except ValueError:
        dims = 0
    if not 2 <= dims <= _MAX_DIMENSIONS:
        from memvault.errors import ConfigError

        raise ConfigError(
            f"'fake:{argument}': dimensions must be an integer 2..{_MAX_DIMENSIONS}", key="embedder"
        )
    return FakeEmbedder(dims)


@hookimpl
def memvault_register_embedders(register: RegisterFn) -> None:
    """Register ``fake`` and ``fake:<dims>``."""
    register("fake", _factory)
