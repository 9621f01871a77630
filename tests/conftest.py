"""Shared fixtures: real git repos in ``tmp_path``, real SQLite, no mocks.

Every test runs with a clean memvault environment: the fake embedder, a private cache
folder, and none of the user's ``MEMVAULT_*`` identity variables. The plain helpers the
tests import (``git``, ``write``, ``run_memvault`` ...) are in ``helpers.py``.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from memvault import Vault

from helpers import LEAKY_ENV, Result

# Property and fuzz tests draw the same examples on every run (derived from each test), so
# the suite fails on a change, not on a new draw. Exploring with fresh draws is
# ``bench/fuzz.py``'s job, or ``pytest --hypothesis-profile=explore``.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile("repeatable")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A ``realmodel`` test is a ``slow`` one too, so the fast lane (``pytest -m "not slow"``)
    leaves it out without naming both markers."""
    for item in items:
        if item.get_closest_marker("realmodel") is not None:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def clean_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fake embedder, private cache and config dirs, no identity leaking in from the user's
    shell."""
    for name in LEAKY_ENV:
        monkeypatch.delenv(name, raising=False)
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "fake")
    monkeypatch.setenv("MEMVAULT_CACHE_DIR", str(cache))
    # The commands this user allowed (memvault.trust) live in the user's config folder.
    monkeypatch.setenv("MEMVAULT_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
    # The lemma dictionaries (memvault.language) take seconds to prepare: one copy per run.
    monkeypatch.setenv("MEMVAULT_LEMMAS_DIR", str(tmp_path_factory.getbasetemp() / "lemmas"))
    # git must never fall back to the user's global config (identity, hooks, templates):
    # memvault's commits have to work on a machine with no git identity at all, as in CI.
    # A command run as a subprocess runs in that process, as before the resident process
    # existed (none left running behind a test); tests/test_resident.py turns it on.
    monkeypatch.setenv("MEMVAULT_RESIDENT", "0")
    monkeypatch.setenv("MEMVAULT_RUNTIME_DIR", str(tmp_path_factory.mktemp("runtime")))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    # Run from a scratch folder: a relative path in a test (or a fuzzed one) must never
    # reach the project's own checkout ('init .' once committed a vault into it).
    scratch = tmp_path_factory.mktemp("cwd")
    monkeypatch.chdir(scratch)
    return cache


@pytest.fixture
def cache_dir(clean_env: Path) -> Path:
    return clean_env


@pytest.fixture
def real_model(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The default embedder for ``realmodel`` tests, its ONNX export kept in pytest's cache
    (shared with ``test_embeddings.py``) so it is made once per checkout."""
    from memvault.embeddings.onnx_minilm import OnnxEmbedder

    cache = getattr(request.config, "cache", None)
    directory = (
        cache.mkdir("memvault-onnx-model")
        if cache is not None
        else request.getfixturevalue("tmp_path_factory").mktemp("memvault-cache")
    )
    OnnxEmbedder(cache_dir=directory).load()
    monkeypatch.setenv("MEMVAULT_CACHE_DIR", str(directory))
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "default")


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    """A fresh, empty vault (one init commit)."""
    return Vault.init(tmp_path / "v")


@pytest.fixture
def vault_path(vault: Vault) -> Path:
    return vault.root


@pytest.fixture
def cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Callable[..., Result]:
    """Run ``memvault.cli.main(argv)`` in-process; returns exit code, stdout, stderr.

    ``stdin=`` feeds standard input (as a pipe would).
    """
    from memvault.cli import main

    def run(*argv: str | Path, stdin: str | bytes | None = None) -> Result:
        capsys.readouterr()  # drop anything printed before
        if stdin is not None:
            data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
        code = main([str(a) for a in argv])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


@pytest.fixture
def chdir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], None]]:
    yield monkeypatch.chdir
