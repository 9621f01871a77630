"""Converting the packaged model to ONNX: the one-time export and the int8 quantization.

This code runs once per machine (the results are cached by
:mod:`memvault.embeddings.onnx_cache`), the export in a child interpreter; it is the only
code of the default embedder that imports torch, transformers and onnx.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from memvault.embeddings.packaged_model import verify_all_files

if TYPE_CHECKING:  # pragma: no cover - imports for annotations only
    import torch

__all__ = ["ONNX_OPSET", "export_in_subprocess", "export_onnx", "quantize_int8"]

ONNX_OPSET = 17

# Run by export_in_subprocess; prints the seconds taken on a marker line.
_EXPORT_CHILD = """
import sys
from pathlib import Path
from memvault.embeddings.onnx_export import export_onnx
print("memvault-export-seconds", export_onnx(Path(sys.argv[1]), Path(sys.argv[2])))
"""


def _load_bert(files: dict[str, bytes]) -> torch.nn.Module:
    """The packaged transformer (no pooler head), built from verified file bytes."""
    from safetensors.torch import load as load_safetensors
    from transformers import BertConfig, BertModel

    config = BertConfig.from_dict(json.loads(files["config.json"]))
    # Eager attention traces to plain MatMul/Softmax with an explicit additive mask; SDPA
    # code paths may special-case an all-ones mask while tracing.
    config._attn_implementation = "eager"
    model: torch.nn.Module = BertModel(config, add_pooling_layer=False)
    state = load_safetensors(files["model.safetensors"])
    state.pop("embeddings.position_ids", None)  # a buffer in old checkpoints, not a weight
    for key in [k for k in state if k.startswith("pooler.")]:
        del state[key]  # sentence-transformers mean-pools; the pooler head is unused
    model.load_state_dict(state, strict=True)
    model.eval()
    return model


def export_onnx(model_dir: Path, out_path: Path, opset: int = ONNX_OPSET) -> float:
    """Export the packaged model's transformer to ONNX (token embeddings output).

    Every model file is hash-checked first; the weights are then built from the verified
    bytes (not re-read from disk). Uses the TorchScript exporter (``dynamo=False``), which
    needs the ``onnx`` package, with dynamic batch and sequence axes. Returns seconds taken.
    torch is imported here and nowhere on the query path.
    """
    started = time.perf_counter()
    files = verify_all_files(model_dir)
    try:
        import safetensors.torch  # noqa: F401  - used by _load_bert; fail early
        import torch
        import transformers  # noqa: F401  - used by _load_bert; fail early
    except ImportError as exc:
        raise RuntimeError(f"the offline export needs torch and transformers ({exc})") from exc
    try:
        import onnx  # noqa: F401  - torch's TorchScript exporter imports it; fail early
    except ImportError as exc:
        raise RuntimeError("the offline export needs the 'onnx' package") from exc

    class TokenEmbeddings(torch.nn.Module):
        """Positional-argument wrapper: transformers' forward takes keyword arguments."""

        def __init__(self, bert: torch.nn.Module) -> None:
            super().__init__()
            self.bert = bert

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            hidden: torch.Tensor = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            return hidden

    # Dummy batch with padding in one row, so the traced graph really uses the mask.
    input_ids = torch.tensor(
        [[101, 7592, 2088, 2003, 1037, 3231, 102], [101, 7592, 102, 0, 0, 0, 0]]
    )
    attention_mask = (input_ids != 0).long()
    dynamic = {0: "batch", 1: "sequence"}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer warnings about python bools are expected
        torch.onnx.export(
            TokenEmbeddings(_load_bert(files)),
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


def export_in_subprocess(model_dir: Path, out: Path, timeout: float = 900.0) -> float:
    """Run :func:`export_onnx` in a child interpreter and return its duration.

    A child, because the export imports torch (hundreds of MB that never get freed) and
    the process asking for the model is often a long-running server that should stay
    torch-free. Failures become RuntimeError with the child's last stderr line.
    """
    import subprocess

    env = dict(os.environ)
    # Make sure the child imports this very memvault, even when run from a source tree.
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _EXPORT_CHILD, str(model_dir), str(out)],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"ONNX export took longer than {timeout:.0f}s") from exc
    if proc.returncode != 0:
        lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
        raise RuntimeError(lines[-1] if lines else f"export exited with {proc.returncode}")
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("memvault-export-seconds "):
            return float(line.split()[1])
    raise RuntimeError("export finished without reporting success")


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


def quantize_int8(fp32_path: Path, out_path: Path) -> None:
    """Write a dynamically int8-quantized copy of the fp32 ONNX model to ``out_path``.

    Uses onnxruntime's own tooling (which needs the ``onnx`` package). Only the MatMul
    weights are quantized, per channel; quantizing Gather (the embeddings) too costs
    accuracy.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # quantize_dynamic logs a "consider pre-processing" warning on the root logger; it is
    # advice for image models and only confuses users here.
    with _quiet_root_logger():
        quantize_dynamic(
            fp32_path,
            out_path,
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
        )
