"""Tests of memvault.embeddings: plugin registry, fake embedder, ONNX default, hash checks.

Tests marked ``realmodel`` run all-MiniLM-L6-v2. The ONNX file is exported once into
pytest's cache folder (so a fresh checkout exercises the export, and later runs reuse it);
tests that only need the tokenizer or the hash checks do not load the model.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from memvault.embeddings import (
    Embedder,
    available_embedders,
    clear_embedder_cache,
    get_embedder,
    hookimpl,
    onnx_cache,
    packaged_model,
    plugin_manager,
    register_plugin,
    unregister_plugin,
)
from memvault.embeddings.fake import FakeEmbedder
from memvault.embeddings.onnx_minilm import OnnxEmbedder
from memvault.embeddings.onnx_runner import load_tokenizer
from memvault.errors import ConfigError, MemvaultError

SRC = Path(__file__).resolve().parents[1] / "src"

# Twenty-odd varied texts: short, long (past 256 word pieces), punctuation, unicode, code.
VARIED = [
    "Hey Mel! Good to see you! How have you been?",
    "Caroline went to the LGBTQ support group yesterday and felt empowered.",
    "The user prefers tea over coffee in the morning.",
    "ok",
    "",
    "Deploy with `git push origin main` after the CI run is green.",
    "Der Nutzer wohnt in Berlin und arbeitet als Ingenieur.",
    "東京で寿司を食べました。",
    "I love hiking 🏔️ and camping ⛺ with my kids!!!",
    "def add(a, b):\n    return a + b",
    "Meeting moved to 3pm on 2024-05-17; bring the Q2 numbers.",
    "Melanie painted a sunrise over the lake last summer.",
    "   leading and trailing whitespace   ",
    "ALL CAPS SENTENCE ABOUT THE QUARTERLY REVIEW",
    "What is the capital of France? Paris, of course.",
    "The agent must never store API keys in memory files.",
    "Remember: the dog's name is Biscuit and he is allergic to chicken.",
    "a " * 400,
    " ".join(f"word{i}" for i in range(300)),
    "Long memory. " + "She talked about her trip to Norway, the fjords, the ferries and the "
    "endless summer light, and how her brother met them in Bergen. " * 8,
    "x",
    "Numbers 1 2 3 4 5 6 7 8 9 10 and symbols #$%&*()",
]


def _subprocess_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    env["HF_HUB_OFFLINE"] = "1"
    env.update(extra)
    return env


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.fixture(autouse=True)
def _fresh_embedder_cache():
    clear_embedder_cache()
    yield
    clear_embedder_cache()


@pytest.fixture(scope="session")
def onnx_cache_dir(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A cache dir holding the exported ONNX model.

    Kept in pytest's cache folder (``.pytest_cache``), so the one-time export runs on a
    fresh checkout (as in CI) but not on every local run; a temporary folder when the
    cache plugin is disabled. The cached file is still verified against its sidecar.
    """
    cache = getattr(request.config, "cache", None)  # absent under -p no:cacheprovider
    directory = (
        cache.mkdir("memvault-onnx-model")
        if cache is not None
        else tmp_path_factory.mktemp("memvault-cache")
    )
    OnnxEmbedder(cache_dir=directory).load()
    return directory


@pytest.fixture(scope="session")
def onnx_embedder(onnx_cache_dir: Path) -> OnnxEmbedder:
    return OnnxEmbedder(cache_dir=onnx_cache_dir).load()


@pytest.fixture(scope="session")
def st_embedder():
    from memvault.embeddings.st import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder("all-MiniLM-L6-v2", device="cpu")


@pytest.fixture()
def model_copy(tmp_path: Path) -> Path:
    """A private copy of the packaged model folder, to tamper with."""
    target = tmp_path / "model"
    shutil.copytree(packaged_model.packaged_model_dir(), target)
    return target


# --------------------------------------------------------------------------- import cost


def test_import_does_not_load_heavy_modules():
    code = (
        "import sys, memvault.embeddings as e; e.plugin_manager(); "
        "heavy = [m for m in ('torch', 'onnxruntime', 'tokenizers', 'transformers', "
        "'sentence_transformers', 'chromadb') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=_subprocess_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == "[]"


# --------------------------------------------------------------------------- fake embedder


def test_fake_shapes_dtype_and_unit_norm():
    emb = FakeEmbedder()
    matrix = emb.embed_documents(["hello world", "", "Hello, WORLD!", "x" * 1000])
    assert matrix.shape == (4, 64)
    assert matrix.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, rtol=1e-6)
    query = emb.embed_query("hello world")
    assert query.shape == (64,) and query.dtype == np.float32
    np.testing.assert_array_equal(query, matrix[0])
    # Case and punctuation are ignored: same words, same vector.
    np.testing.assert_array_equal(matrix[0], matrix[2])
    assert emb.embed_documents([]).shape == (0, 64)


def test_fake_is_deterministic_across_processes():
    text = "Caroline adopted a dog named Biscuit in May"
    here = FakeEmbedder(32).embed_query(text)
    code = (
        "from memvault.embeddings.fake import FakeEmbedder; "
        f"print(FakeEmbedder(32).embed_query({text!r}).tobytes().hex())"
    )
    there = subprocess.run(
        [sys.executable, "-c", code],
        env=_subprocess_env(PYTHONHASHSEED="12345"),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert there == here.tobytes().hex()


def test_fake_similarity_tracks_shared_words():
    emb = FakeEmbedder()
    base = "the user prefers green tea in the morning before the daily standup meeting"
    near = "the user prefers green tea in the morning before the weekly standup meeting"
    other = "Melanie painted a sunrise over the lake last summer with her kids"
    a, b, c = emb.embed_documents([base, near, other])
    assert float(a @ b) > 0.9
    assert float(a @ c) < 0.5
    assert float(a @ b) > float(a @ c) + 0.4


def test_fake_rejects_bad_input():
    emb = FakeEmbedder()
    with pytest.raises(TypeError):
        emb.embed_documents("a single string")
    with pytest.raises(TypeError):
        emb.embed_documents(["ok", 3])  # type: ignore[list-item]


# --------------------------------------------------------------------------- specs


def test_builtin_specs_resolve_without_loading_a_model():
    default = get_embedder("default")
    assert isinstance(default, OnnxEmbedder)
    assert isinstance(default, Embedder)
    assert default.dimensions == 384
    assert default.identity == "onnx:all-MiniLM-L6-v2:sha256-53aa51172d14"
    assert default._runner is None  # building it loaded nothing
    # Both names share one instance (one ONNX session per process, not two).
    assert get_embedder("all-MiniLM-L6-v2") is default
    assert get_embedder("  default ") is default
    int8 = get_embedder("all-MiniLM-L6-v2:int8")
    assert int8.identity.startswith("onnx-int8:all-MiniLM-L6-v2:") and int8 is not default

    fake = get_embedder("fake")
    assert isinstance(fake, FakeEmbedder) and fake.dimensions == 64 and fake.identity == "fake:64"
    fake128 = get_embedder("fake:128")
    assert fake128.dimensions == 128 and fake128.identity == "fake:128"
    assert get_embedder("fake:128") is fake128  # cached per spec
    assert {"default", "all-MiniLM-L6-v2", "fake", "sentence-transformers"} <= set(
        available_embedders()
    )


@pytest.mark.parametrize(
    "spec",
    [
        "bogus",
        "openai:text-embedding-3",
        "fake:abc",
        "fake:1",
        "default:extra",
        "all-MiniLM-L6-v2:int4",
        "sentence-transformers",
        "",
        "   ",
        "defaults",
    ],
)
def test_bad_specs_raise_config_error(spec: str):
    with pytest.raises(ConfigError) as info:
        get_embedder(spec)
    err = info.value
    assert err.key == "embedder"
    message = str(err)
    assert "\n" not in message
    assert message.startswith("embedder: ")


def test_unknown_spec_lists_known_names():
    with pytest.raises(ConfigError, match=r"unknown embedder 'bogus'.*fake"):
        get_embedder("bogus")


# --------------------------------------------------------------------------- plugins


class _ConstantEmbedder:
    def __init__(self, dimensions: int, tag: str) -> None:
        self.dimensions = dimensions
        self.identity = f"constant:{tag}:{dimensions}"

    def embed_documents(self, texts):
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        out[:, 0] = 1.0
        return out

    def embed_query(self, text):
        return self.embed_documents([text])[0]


class _TestPlugin:
    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl
    def memvault_register_embedders(self, register):
        def make(argument: str) -> _ConstantEmbedder:
            self.calls.append(argument)
            return _ConstantEmbedder(int(argument or 3), "base")

        register("unit-test", make)
        # Longer prefix wins over "unit-test" for "unit-test:special...".
        register("unit-test:special", lambda arg: _ConstantEmbedder(5, "special-" + arg))
        register("unit-test-broken", lambda arg: object())


def test_registered_plugin_is_found_and_cached():
    plugin = _TestPlugin()
    name = register_plugin(plugin, name="unit-test-plugin")
    try:
        assert plugin_manager().get_plugin(name) is plugin
        emb = get_embedder("unit-test:7")
        assert emb.dimensions == 7 and emb.identity == "constant:base:7"
        assert get_embedder("unit-test:7") is emb
        assert get_embedder("unit-test").dimensions == 3
        assert plugin.calls == ["7", ""]
        special = get_embedder("unit-test:special:x")
        assert special.identity == "constant:special-x:5"
        assert "unit-test" in available_embedders()
        with pytest.raises(ConfigError, match="not an Embedder"):
            get_embedder("unit-test-broken")
    finally:
        unregister_plugin(plugin)
    with pytest.raises(ConfigError, match="unknown embedder"):
        get_embedder("unit-test:7")


def test_two_plugins_claiming_one_prefix_is_an_error():
    class Hijack:
        @hookimpl
        def memvault_register_embedders(self, register):
            register("fake", lambda arg: _ConstantEmbedder(4, "hijack"))

    plugin = Hijack()
    register_plugin(plugin, name="hijack")
    try:
        with pytest.raises(ConfigError, match="several plugins") as info:
            get_embedder("fake")
        assert "hijack" in str(info.value) and "memvault.embeddings.fake" in str(info.value)
        assert get_embedder("default").dimensions == 384  # other prefixes still work
    finally:
        unregister_plugin(plugin)
    assert isinstance(get_embedder("fake"), FakeEmbedder)


def test_entry_point_plugin_is_loaded_on_first_get_embedder(tmp_path: Path):
    """A real installed-distribution entry point, in a fresh interpreter."""
    (tmp_path / "mv_demo_plugin.py").write_text(
        textwrap.dedent("""
        from memvault.embeddings import hookimpl
        from memvault.embeddings.fake import FakeEmbedder

        IMPORTED = True

        class Demo(FakeEmbedder):
            def __init__(self, arg):
                super().__init__(16)
                self.identity = "demo:" + arg

        @hookimpl
        def memvault_register_embedders(register):
            register("demo", Demo)
    """)
    )
    dist = tmp_path / "mv_demo_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mv-demo-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[memvault]\ndemo = mv_demo_plugin\n")
    code = textwrap.dedent("""
        import sys
        import memvault.embeddings as e
        e.plugin_manager()
        assert "mv_demo_plugin" not in sys.modules, "entry points must load lazily"
        emb = e.get_embedder("demo:abc")
        assert "mv_demo_plugin" in sys.modules
        print(emb.identity, emb.dimensions)
    """)
    env = _subprocess_env()
    env["PYTHONPATH"] = str(tmp_path) + os.pathsep + env["PYTHONPATH"]
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["demo:abc", "16"]


# --------------------------------------------------------------------------- supply chain


def test_tampered_tokenizer_is_refused(model_copy: Path, tmp_path: Path, monkeypatch):
    path = model_copy / "tokenizer.json"
    data = json.loads(path.read_text("utf-8"))
    data["model"]["vocab"]["hello"], data["model"]["vocab"]["world"] = (
        data["model"]["vocab"]["world"],
        data["model"]["vocab"]["hello"],
    )
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(MemvaultError, match="SHA-256 mismatch") as info:
        OnnxEmbedder(model_dir=model_copy, cache_dir=tmp_path / "cache").load()
    assert info.value.path == str(path)
    assert "tokenizer.json" in str(info.value)
    # The env override reaches the default embedder too.
    monkeypatch.setenv("MEMVAULT_MODEL_DIR", str(model_copy))
    monkeypatch.setenv("MEMVAULT_CACHE_DIR", str(tmp_path / "cache2"))
    with pytest.raises(MemvaultError, match="tokenizer.json"):
        get_embedder("default").embed_query("hello")
    with pytest.raises(MemvaultError, match="tokenizer.json"):
        load_tokenizer()


def test_tampered_weights_are_refused_before_export(model_copy: Path, tmp_path: Path, monkeypatch):
    weights = model_copy / "model.safetensors"
    with weights.open("r+b") as handle:  # flip one byte deep inside the tensors
        handle.seek(50_000_000)
        byte = handle.read(1)
        handle.seek(50_000_000)
        handle.write(bytes([byte[0] ^ 0x01]))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no Chroma cache to fall back on
    cache = tmp_path / "cache"
    with pytest.raises(MemvaultError, match="SHA-256 mismatch") as info:
        OnnxEmbedder(model_dir=model_copy, cache_dir=cache).load()
    assert "model.safetensors" in str(info.value)
    assert not list(cache.rglob("*.onnx"))
    # The sentence-transformers path checks the bundled copy too, before torch reads it.
    monkeypatch.setenv("MEMVAULT_MODEL_DIR", str(model_copy))
    with pytest.raises(MemvaultError, match="model.safetensors"):
        get_embedder("sentence-transformers:all-MiniLM-L6-v2")


def test_missing_model_file_is_named(model_copy: Path, tmp_path: Path):
    (model_copy / "tokenizer.json").unlink()
    with pytest.raises(MemvaultError, match="cannot read model file") as info:
        OnnxEmbedder(model_dir=model_copy, cache_dir=tmp_path).load()
    assert info.value.path == str(model_copy / "tokenizer.json")


def test_verified_files_match_pins():
    model_dir = packaged_model.packaged_model_dir()
    for name in packaged_model.PACKAGED_FILES_SHA256:
        assert packaged_model.verify_model_file(model_dir, name)


# --------------------------------------------------------------------------- tokenizer


def _long_text(n_words: int = 400) -> list[str]:
    # One word piece per word: short common words (checked below).
    vocab = ["apple", "river", "green", "house", "music", "table", "light", "stone"]
    return [vocab[i % len(vocab)] for i in range(n_words)]


def test_tokenizer_truncates_at_256_not_128():
    tokenizer = load_tokenizer()
    words = _long_text()
    ids = tokenizer.encode(" ".join(words)).ids
    assert len(ids) == 256  # [CLS] + 254 word pieces + [SEP]
    assert ids[0] == 101 and ids[-1] == 102
    changed = list(words)
    changed[199] = "banana"  # token position 200 ([CLS] is position 0)
    ids2 = tokenizer.encode(" ".join(changed)).ids
    assert ids2[200] != ids[200] and ids2[:200] == ids[:200]
    # No padding to a fixed length: short texts stay short.
    assert len(tokenizer.encode("hi").ids) == 3


# --------------------------------------------------------------------------- real model


@pytest.mark.realmodel
def test_onnx_cache_has_verified_sidecar(onnx_cache_dir: Path):
    model = next(onnx_cache_dir.rglob("model.onnx"))
    meta = json.loads((model.parent / "model.onnx.sha256.json").read_text())
    assert meta["source"] == "export"
    assert meta["weights_sha256"] == packaged_model.WEIGHTS_SHA256
    assert meta["probe_cosine"] >= 0.9999
    assert meta["size"] == model.stat().st_size


@pytest.mark.realmodel
def test_onnx_matches_sentence_transformers(onnx_embedder: OnnxEmbedder, st_embedder):
    ours = onnx_embedder.embed_documents(VARIED)
    ref = st_embedder.embed_documents(VARIED)
    assert ours.shape == ref.shape == (len(VARIED), 384)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, rtol=1e-5)
    cosines = np.sum(ours * ref, axis=1)
    assert cosines.min() >= 0.9999, cosines
    # The query path gives the same vectors as the batched document path.
    for i in (0, 5, 17, 19):
        assert _cos(onnx_embedder.embed_query(VARIED[i]), ours[i]) >= 0.99999
    assert st_embedder.identity.startswith("sentence-transformers:all-MiniLM-L6-v2:sha256-")
    assert onnx_embedder.embed_documents([]).shape == (0, 384)


@pytest.mark.realmodel
def test_batching_and_order_do_not_change_vectors(onnx_embedder: OnnxEmbedder):
    texts = VARIED * 3  # > one batch, mixed lengths, so sorting and padding both happen
    together = onnx_embedder.embed_documents(texts)
    alone = np.stack([onnx_embedder.embed_query(t) for t in VARIED])
    np.testing.assert_allclose(together[: len(VARIED)], alone, atol=2e-5)
    np.testing.assert_allclose(together[len(VARIED) : 2 * len(VARIED)], alone, atol=2e-5)


@pytest.mark.realmodel
def test_long_text_uses_256_tokens(onnx_embedder: OnnxEmbedder):
    words = _long_text()
    at_200 = list(words)
    at_200[199] = "banana"
    at_300 = list(words)
    at_300[299] = "banana"
    base, v200, v300 = onnx_embedder.embed_documents(
        [" ".join(words), " ".join(at_200), " ".join(at_300)]
    )
    assert _cos(base, v200) < 0.9999  # token 200 is seen (it would be cut at 128)
    assert _cos(base, v300) > 0.99999  # token 300 is past the 256 limit


@pytest.mark.realmodel
def test_query_in_fresh_process_does_not_import_torch(onnx_cache_dir: Path):
    code = textwrap.dedent("""
        import sys
        from memvault.embeddings import get_embedder
        vector = get_embedder("default").embed_query("where did Caroline go last weekend?")
        assert vector.shape == (384,), vector.shape
        assert abs(float((vector ** 2).sum()) - 1.0) < 1e-5
        heavy = [m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules]
        assert not heavy, heavy
        print("ok")
    """)
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=_subprocess_env(MEMVAULT_CACHE_DIR=str(onnx_cache_dir)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


@pytest.mark.realmodel
def test_tampered_cache_is_rebuilt_from_chroma_copy(
    onnx_cache_dir: Path, onnx_embedder, tmp_path: Path, monkeypatch
):
    """A cached model that fails its sidecar hash is replaced; Chroma's copy is verified
    by embedding the probes, then copied into memvault's cache."""
    good = next(onnx_cache_dir.rglob("model.onnx"))
    cache = tmp_path / "cache"
    target = cache / good.relative_to(onnx_cache_dir)
    target.parent.mkdir(parents=True)
    shutil.copy(good, target)
    shutil.copy(good.parent / "model.onnx.sha256.json", target.parent)
    with target.open("r+b") as handle:  # corrupt the cached copy
        handle.seek(1000)
        handle.write(b"\x00" * 16)
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    chroma = onnx_cache.chroma_onnx_path()
    assert str(chroma).startswith(str(home))
    chroma.parent.mkdir(parents=True)
    shutil.copy(good, chroma)
    monkeypatch.setattr(onnx_cache, "export_in_subprocess", _forbidden)

    emb = OnnxEmbedder(cache_dir=cache).load()
    assert _cos(emb.embed_query("hello there"), onnx_embedder.embed_query("hello there")) > 0.99999
    meta = json.loads((target.parent / "model.onnx.sha256.json").read_text())
    assert meta["source"] == "chroma cache"
    assert target.read_bytes() == good.read_bytes()


@pytest.mark.realmodel
def test_chroma_copy_of_a_different_model_is_rejected(
    onnx_cache_dir: Path, tmp_path: Path, monkeypatch
):
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    good = next(onnx_cache_dir.rglob("model.onnx"))
    model = onnx.load_model_from_string(good.read_bytes())
    # A runnable but different model: reverse the columns of the largest initializer
    # (the word embeddings).
    init = max(model.graph.initializer, key=lambda t: int(np.prod(t.dims)))
    init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init)[:, ::-1].copy(), init.name))
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    chroma = onnx_cache.chroma_onnx_path()
    chroma.parent.mkdir(parents=True)
    chroma.write_bytes(model.SerializeToString())
    monkeypatch.setattr(onnx_cache, "export_in_subprocess", _forbidden)
    monkeypatch.setattr(onnx_cache, "_from_hub", lambda *a: _forbidden())
    with pytest.raises(MemvaultError) as info:
        OnnxEmbedder(cache_dir=tmp_path / "cache").load()
    message = str(info.value)
    assert "chroma cache: ValueError: embeddings differ from the reference" in message
    assert "export: RuntimeError" in message and "download" in message


def _forbidden(*args, **kwargs):
    raise RuntimeError("not allowed in this test")


def test_a_cached_model_is_hashed_again_only_when_its_file_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stat noted after a match spares later loads the hash; any write to the file
    (even one that puts its mtime back) makes the next load hash it, and refuse it."""
    import time

    from memvault.store.catalog import sha256_bytes

    model = tmp_path / "model.onnx"
    data = os.urandom(4096)
    model.write_bytes(data)
    (tmp_path / "model.onnx.sha256.json").write_text(json.dumps({"sha256": sha256_bytes(data)}))
    hashed: list[int] = []

    def counting(blob: bytes) -> str:
        hashed.append(len(blob))
        return sha256_bytes(blob)

    monkeypatch.setattr(onnx_cache, "sha256_bytes", counting)
    assert onnx_cache._read_verified(model) == data and len(hashed) == 1
    assert onnx_cache._read_verified(model) == data and len(hashed) == 1  # trusted by stat
    time.sleep(0.05)  # past the file system's timestamp tick
    mtime = model.stat().st_mtime_ns
    with model.open("r+b") as handle:
        handle.seek(100)
        handle.write(bytes([data[100] ^ 0xFF]))
    os.utime(model, ns=(mtime, mtime))  # the mtime put back by hand; ctime moved anyway
    assert onnx_cache._read_verified(model) is None and len(hashed) == 2


def test_a_verified_model_is_loaded_from_a_held_open_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a cached model matched its hash, the next load hands onnxruntime the descriptor it
    checked; a write to the file (mtime put back) makes it hash the bytes again, and refuse."""
    import time

    from memvault.store.catalog import sha256_bytes

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd here: the bytes are always read")
    model = tmp_path / "model.onnx"
    data = os.urandom(4096)
    model.write_bytes(data)
    (tmp_path / "model.onnx.sha256.json").write_text(json.dumps({"sha256": sha256_bytes(data)}))
    with onnx_cache.pinned_model(model) as pinned:
        assert pinned is None  # never hashed yet: no stat noted
    assert onnx_cache._read_verified(model) == data  # hashes it, notes its stat
    with onnx_cache.pinned_model(model) as pinned:
        assert pinned is not None and pinned.unchanged()
        fd = pinned.fd
        assert Path(pinned.name).read_bytes() == data
    with pytest.raises(OSError):
        os.fstat(fd)  # closed after use
    time.sleep(0.05)
    with onnx_cache.pinned_model(model) as pinned:
        assert pinned is not None
        mtime = model.stat().st_mtime_ns
        with model.open("r+b") as handle:  # written while the session would be loading
            handle.write(bytes([data[0] ^ 0xFF]))
        os.utime(model, ns=(mtime, mtime))
        assert not pinned.unchanged()
    with onnx_cache.pinned_model(model) as pinned:
        assert pinned is None
    assert onnx_cache._read_verified(model) is None


def test_the_embedder_loads_a_verified_model_by_descriptor(
    onnx_cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second load of the cached model goes through the descriptor and embeds the same."""
    from memvault.embeddings import onnx_minilm

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd here: the bytes are always read")
    given: list[object] = []
    real = onnx_minilm.create_session

    def recording(model: object, threads: int | None) -> object:
        given.append(model)
        return real(model, threads)  # type: ignore[arg-type]

    first = OnnxEmbedder(cache_dir=onnx_cache_dir).load().embed_query("a cat on a mat")
    monkeypatch.setattr(onnx_minilm, "create_session", recording)
    second = OnnxEmbedder(cache_dir=onnx_cache_dir).load().embed_query("a cat on a mat")
    assert len(given) == 1 and str(given[0]).startswith("/proc/self/fd/")
    assert np.allclose(first, second, atol=1e-6)
