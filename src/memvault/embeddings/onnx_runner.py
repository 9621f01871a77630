"""The numeric core of the ONNX embedder: tokenizer + onnxruntime session -> unit vectors.

Shared by :class:`memvault.embeddings.onnx_minilm.OnnxEmbedder` and the probe check that
vets every candidate ONNX graph (:mod:`memvault.embeddings.onnx_cache`). onnxruntime and
tokenizers are imported inside the functions, when a model is first loaded.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memvault.embeddings.base import l2_normalize, mean_pool
from memvault.embeddings.packaged_model import (
    DIMENSIONS,
    MAX_SEQ_LENGTH,
    packaged_model_dir,
    verify_model_file,
)

if TYPE_CHECKING:  # pragma: no cover - imports for annotations only
    import onnxruntime
    import tokenizers

__all__ = [
    "MAX_BATCH_TOKENS",
    "OnnxRunner",
    "create_session",
    "load_tokenizer",
    "tokenizer_from_json",
]

MAX_BATCH_TOKENS = 4096


def _session_options(threads: int | None) -> onnxruntime.SessionOptions:
    import onnxruntime as ort

    options = ort.SessionOptions()
    if threads is None:
        env = os.environ.get("MEMVAULT_EMBED_THREADS", "")
        threads = int(env) if env.isdigit() and int(env) > 0 else None
    # One intra-op thread per core (capped: past a few, this small model gets no faster) and
    # no inter-op pool: the graph is a chain, a second pool only competes for the cores.
    options.intra_op_num_threads = threads or max(1, min(os.cpu_count() or 1, 4))
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # warnings about unused initializers are noise to users
    return options


def create_session(model: bytes | str, threads: int | None) -> onnxruntime.InferenceSession:
    """An onnxruntime CPU session for ``model`` (bytes or a path); ``threads=None`` reads
    ``$MEMVAULT_EMBED_THREADS``, else one intra-op thread per core, at most 4."""
    import onnxruntime as ort

    return ort.InferenceSession(
        model, sess_options=_session_options(threads), providers=["CPUExecutionProvider"]
    )


def load_tokenizer(model_dir: Path | None = None) -> tokenizers.Tokenizer:
    """Return the verified tokenizer of the packaged model, set up as the embedder uses it:
    no padding (batches are padded by the embedder), truncation at 256 tokens."""
    return tokenizer_from_json(
        verify_model_file(model_dir or packaged_model_dir(), "tokenizer.json")
    )


def tokenizer_from_json(tokenizer_json: bytes) -> tokenizers.Tokenizer:
    """Build the tokenizer from already verified ``tokenizer.json`` bytes (see
    :func:`load_tokenizer`)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(tokenizer_json.decode("utf-8"))
    # The shipped tokenizer.json pads/truncates everything to 128; we pad per batch
    # ourselves (after sorting by length) and truncate at the model's 256.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
    return tokenizer


class OnnxRunner:
    """Tokenizer + ONNX session: tokenizes, pads, runs the graph and mean-pools."""

    def __init__(
        self, session: onnxruntime.InferenceSession, tokenizer: tokenizers.Tokenizer
    ) -> None:
        self.session = session
        self.tokenizer = tokenizer
        self.input_names = {i.name for i in session.get_inputs()}
        outputs = [o.name for o in session.get_outputs()]
        # Our export, Chroma's and the hub's all put token embeddings first; prefer the name.
        self.output_name = "last_hidden_state" if "last_hidden_state" in outputs else outputs[0]

    def encode(self, texts: list[str]) -> list[list[int]]:
        """Token ids of each text, with [CLS]/[SEP], truncated at MAX_SEQ_LENGTH."""
        return [enc.ids for enc in self.tokenizer.encode_batch(texts, add_special_tokens=True)]

    def run_batch(self, id_lists: list[list[int]]) -> np.ndarray:
        """Embed one batch of token id lists (padded here to the longest): unit rows."""
        length = max(len(ids) for ids in id_lists)
        input_ids = np.zeros((len(id_lists), length), dtype=np.int64)  # 0 is [PAD]
        attention_mask = np.zeros_like(input_ids)
        for row, ids in enumerate(id_lists):
            input_ids[row, : len(ids)] = ids
            attention_mask[row, : len(ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": attention_mask}
        if "token_type_ids" in self.input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        (hidden,) = self.session.run([self.output_name], feeds)
        return l2_normalize(mean_pool(hidden, attention_mask))

    def embed(self, texts: list[str], batch_size: int) -> np.ndarray:
        """Embed ``texts`` in length-sorted batches (less padding), in the original order.

        A batch holds at most ``batch_size`` texts and ``MAX_BATCH_TOKENS`` padded tokens:
        many short memories go through in one call, while a run of long ones is split so
        the attention tensors (batch x heads x len x len) stay cache-sized.
        """
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        id_lists = self.encode(texts)
        order = sorted(range(len(texts)), key=lambda i: len(id_lists[i]))
        chunk: list[int] = []
        for i in order:
            # Sorted ascending, so the newest text is the longest: it sets the padding.
            if chunk and (
                len(chunk) >= batch_size or (len(chunk) + 1) * len(id_lists[i]) > MAX_BATCH_TOKENS
            ):
                out[chunk] = self.run_batch([id_lists[j] for j in chunk])
                chunk = []
            chunk.append(i)
        out[chunk] = self.run_batch([id_lists[j] for j in chunk])
        return out
