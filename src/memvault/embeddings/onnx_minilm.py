"""The default embedder: all-MiniLM-L6-v2 run with onnxruntime + tokenizers, no torch.

Registers ``default``, ``all-MiniLM-L6-v2`` and ``all-MiniLM-L6-v2:int8`` through the same
plugin hook as third-party embedders. The pieces it is built from:

- :mod:`~memvault.embeddings.packaged_model`: the bundled model files and their pinned
  hashes, checked before anything reads them;
- :mod:`~memvault.embeddings.onnx_cache`: the ONNX graph in memvault's cache, obtained
  once (Chroma's copy, an export, or a pinned download), each candidate checked against
  reference embeddings;
- :mod:`~memvault.embeddings.onnx_runner`: tokenizer + onnxruntime session -> vectors.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memvault.embeddings.base import check_texts
from memvault.embeddings.onnx_cache import (
    cached_model_file,
    default_cache_dir,
    ensure_int8_model,
    ensure_onnx_model,
    pinned_model,
)
from memvault.embeddings.onnx_runner import OnnxRunner, create_session, tokenizer_from_json
from memvault.embeddings.packaged_model import (
    DIMENSIONS,
    MODEL_NAME,
    WEIGHTS_SHA256,
    packaged_model_dir,
    verify_model_file,
)
from memvault.embeddings.plugins import RegisterFn, hookimpl
from memvault.errors import ConfigError

__all__ = ["IDENTITY", "IDENTITY_INT8", "OnnxEmbedder", "load_onnx_embedder"]

DEFAULT_BATCH_SIZE = 32

# The identity names the weights, not the ONNX file: an exported graph, Chroma's copy and
# the hub's copy differ byte-wise but (verified by the probes) give the same vectors, so
# switching between them must not force an index rebuild. Change the suffix if the
# preprocessing (truncation, pooling) ever changes.
IDENTITY = f"onnx:{MODEL_NAME}:sha256-{WEIGHTS_SHA256[:12]}"
IDENTITY_INT8 = f"onnx-int8:{MODEL_NAME}:sha256-{WEIGHTS_SHA256[:12]}"


class OnnxEmbedder:
    """all-MiniLM-L6-v2 on onnxruntime: 384-d unit vectors, equal to sentence-transformers.

    The model is loaded on first use (or by :meth:`load`), so building the object and
    reading ``identity`` is free. Thread-safe: onnxruntime sessions may run concurrently.
    """

    dimensions: int = DIMENSIONS
    # Search's relevance floor (search.min_score's default): the highest at which answerable
    # questions lose at most a point of R@5 on LoCoMo's tune conversations, a public set;
    # our multilingual set is only reported beside it (bench/floor.py; docs/retrieval.md).
    relevance_floor: float = 0.34

    def __init__(
        self,
        model_dir: Path | str | None = None,
        cache_dir: Path | str | None = None,
        quantize: bool = False,
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int | None = None,
    ) -> None:
        self.model_dir = Path(model_dir) if model_dir is not None else None
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.quantize = quantize
        self.batch_size = max(1, batch_size)
        self.threads = threads
        self.identity = IDENTITY_INT8 if quantize else IDENTITY
        self._runner: OnnxRunner | None = None
        self._lock = threading.Lock()

    def load(self) -> OnnxEmbedder:
        """Verify and load tokenizer and ONNX model now (exporting it once if needed)."""
        with self._lock:
            if self._runner is None:
                self._runner = self._build_runner()
        return self

    def _build_runner(self) -> OnnxRunner:
        model_dir = self.model_dir or packaged_model_dir()
        cache_dir = self.cache_dir or default_cache_dir()
        # The tokenizer is verified first: it is read on every load, the model file is
        # covered by its cache sidecar.
        tokenizer_json = verify_model_file(model_dir, "tokenizer.json")
        tokenizer = tokenizer_from_json(tokenizer_json)
        # A model verified before is read by onnxruntime from a held-open descriptor
        # (see pinned_model); otherwise it is obtained, hashed and handed over as bytes.
        with pinned_model(cached_model_file(cache_dir, self.quantize)) as pinned:
            if pinned is not None:
                try:
                    session = create_session(pinned.name, self.threads)
                except Exception:  # noqa: BLE001 - e.g. /proc/self/fd not openable here
                    session = None
                if session is not None and pinned.unchanged():
                    # The session keeps the path, which names nothing once the descriptor
                    # is closed: it must never rebuild itself from it.
                    session.disable_fallback()
                    return OnnxRunner(session, tokenizer)
        if self.quantize:
            model = ensure_int8_model(cache_dir, model_dir)
        else:
            _, model = ensure_onnx_model(cache_dir, model_dir)
        return OnnxRunner(create_session(model, self.threads), tokenizer)

    def _ready(self) -> OnnxRunner:
        if self._runner is None:
            self.load()
        assert self._runner is not None
        return self._runner

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids the model sees for each text (with [CLS]/[SEP], truncated at 256)."""
        return self._ready().encode(check_texts(texts))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``: float32 array ``(len(texts), 384)`` with unit rows."""
        return self._ready().embed(check_texts(texts), self.batch_size)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query: float32 array ``(384,)`` with unit length."""
        if not isinstance(text, str):
            raise TypeError(f"embed_query() takes a str, not {type(text).__name__}")
        vector: np.ndarray = self._ready().embed([text], 1)[0]
        return vector

    def __repr__(self) -> str:
        return f"OnnxEmbedder(identity={self.identity!r}, loaded={self._runner is not None})"


_instances: dict[tuple[bool, str | None, str], OnnxEmbedder] = {}
_instances_lock = threading.Lock()


def load_onnx_embedder(quantize: bool = False) -> OnnxEmbedder:
    """Return the shared ONNX embedder for the current environment (not loaded yet).

    Shared so ``"default"`` and ``"all-MiniLM-L6-v2"`` use one session, not two copies of
    the model; keyed by the env settings so tests that change them get a fresh one.
    """
    key = (
        quantize,
        os.environ.get("MEMVAULT_MODEL_DIR"),
        str(default_cache_dir()),
    )
    with _instances_lock:
        embedder = _instances.get(key)
        if embedder is None:
            embedder = _instances[key] = OnnxEmbedder(quantize=quantize)
        return embedder


def _factory(argument: str) -> OnnxEmbedder:
    if argument in ("", "fp32"):
        return load_onnx_embedder(quantize=False)
    if argument == "int8":
        return load_onnx_embedder(quantize=True)
    raise ConfigError(
        f"unknown variant {argument!r} of {MODEL_NAME} (use '{MODEL_NAME}' or '{MODEL_NAME}:int8')",
        key="embedder",
    )


def _default_factory(argument: str) -> OnnxEmbedder:
    if argument:
        raise ConfigError(f"'default' takes no argument, got 'default:{argument}'", key="embedder")
    return load_onnx_embedder(quantize=False)


@hookimpl
def memvault_register_embedders(register: RegisterFn) -> None:
    """Register ``default``, ``all-MiniLM-L6-v2`` and ``all-MiniLM-L6-v2:int8``."""
    register("default", _default_factory)
    register(MODEL_NAME, _factory)
