"""Model preparation off the query path: the one-time ONNX export and int8 quantization.

Split from :mod:`memvault.embeddings.onnx_minilm` (which re-exports these names): this
code runs once per machine, in a child interpreter for the export, and is the only place
that imports torch, transformers and onnx.
"""

from __future__ import annotations

import contextlib
import json
import logging
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

# onnx_minilm imports this module after defining these names, so the import is safe.
from memvault.embeddings.onnx_minilm import (
    ONNX_OPSET,
    PROBE_MIN_COSINE_INT8,
    _cache_lock,
    _error,
    _install,
    _probe_check,
    _read_verified,
    _verify_all,
    default_cache_dir,
    packaged_model_dir,
    verify_model_file,
)

log = logging.getLogger("memvault.embeddings.onnx_minilm")


def _m() -> ModuleType:
    from memvault.embeddings import onnx_minilm

    return onnx_minilm


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    level = root.level
    # logging.warning() would call basicConfig() on a handler-less root logger and leave a
    # stderr handler behind for the rest of the process; a temporary NullHandler avoids it.
    guard = logging.NullHandler()
    root.addHandler(guard)
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)
        root.removeHandler(guard)


def ensure_int8_model(cache_dir: Path | None = None, model_dir: Path | None = None) -> bytes:
    """Return the dynamically int8-quantized model (verified bytes), building it once.

    Quantization uses onnxruntime's own tooling (which needs the ``onnx`` package); the
    result is checked against the probes with a looser bound, since int8 is approximate.
    """
    cache_dir = cache_dir or default_cache_dir()
    model_dir = model_dir or packaged_model_dir()
    fp32_path, _ = _m().ensure_onnx_model(cache_dir, model_dir)
    target = fp32_path.with_name("model.int8.onnx")
    data = _read_verified(target)
    if data is not None:
        return data
    tokenizer_json = verify_model_file(model_dir, "tokenizer.json")
    with _cache_lock(target.parent):
        data = _read_verified(target)
        if data is not None:
            return data
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".work-") as work:
            out = Path(work) / "int8.onnx"
            try:
                from onnxruntime.quantization import QuantType, quantize_dynamic

                # MatMul weights only, per channel: the variant measured at cosine 0.994
                # and 1.7x throughput; quantizing Gather (embeddings) too costs accuracy.
                # quantize_dynamic logs a "consider pre-processing" warning on the root
                # logger; it is advice for image models and only confuses users here.
                with _quiet_root_logger():
                    quantize_dynamic(
                        fp32_path,
                        out,
                        weight_type=QuantType.QInt8,
                        per_channel=True,
                        op_types_to_quantize=["MatMul"],
                    )
                data = out.read_bytes()
                cosine = _probe_check(data, tokenizer_json, PROBE_MIN_COSINE_INT8)
            except Exception as exc:
                raise _error(
                    f"int8 quantization failed: {type(exc).__name__}: {exc}", key="embedder"
                ) from exc
        _install(target, data, "quantize_dynamic", {"probe_cosine": round(cosine, 7)})
        return data


def export_onnx(model_dir: Path, out_path: Path, opset: int = ONNX_OPSET) -> float:
    """Export the packaged model's transformer to ONNX (token embeddings output).

    Every model file is hash-checked first; the weights are then built from the verified
    bytes (not re-read from disk). Uses the TorchScript exporter (``dynamo=False``), which
    needs the ``onnx`` package, with dynamic batch and sequence axes. Returns seconds taken.
    torch is imported here and nowhere on the query path.
    """
    started = time.perf_counter()
    files = _verify_all(model_dir)
    try:
        import torch
        from safetensors.torch import load as load_safetensors
        from transformers import BertConfig, BertModel
    except ImportError as exc:
        raise RuntimeError(f"the offline export needs torch and transformers ({exc})") from exc
    try:
        import onnx  # noqa: F401  - torch's TorchScript exporter imports it; fail early
    except ImportError as exc:
        raise RuntimeError("the offline export needs the 'onnx' package") from exc

    config = BertConfig.from_dict(json.loads(files["config.json"]))
    # Eager attention traces to plain MatMul/Softmax with an explicit additive mask; SDPA
    # code paths may special-case an all-ones mask while tracing.
    config._attn_implementation = "eager"
    model = BertModel(config, add_pooling_layer=False)
    state = load_safetensors(files["model.safetensors"])
    state.pop("embeddings.position_ids", None)  # a buffer in old checkpoints, not a weight
    for key in [k for k in state if k.startswith("pooler.")]:
        del state[key]  # sentence-transformers mean-pools; the pooler head is unused
    model.load_state_dict(state, strict=True)
    model.eval()

    class TokenEmbeddings(torch.nn.Module):
        """Positional-argument wrapper: transformers' forward takes keyword arguments."""

        def __init__(self, bert: torch.nn.Module) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    # Dummy batch with padding in one row, so the traced graph really uses the mask.
    input_ids = torch.tensor(
        [[101, 7592, 2088, 2003, 1037, 3231, 102], [101, 7592, 102, 0, 0, 0, 0]]
    )
    attention_mask = (input_ids != 0).long()
    dynamic = {0: "batch", 1: "sequence"}
    import warnings

    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer warnings about python bools are expected
        torch.onnx.export(
            TokenEmbeddings(model),
            (input_ids, attention_mask, torch.zeros_like(input_ids)),
            str(out_path),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={
                "input_ids": dynamic,
                "attention_mask": dynamic,
                "token_type_ids": dynamic,
                "last_hidden_state": dynamic,
            },
            opset_version=opset,
            do_constant_folding=True,
            dynamo=False,
        )
    return time.perf_counter() - started


# --------------------------------------------------------------------------- the embedder


