"""Shared fixtures: real git repos in ``tmp_path``, real SQLite, no mocks.

Every test runs with a clean memvault environment: the fake embedder, a private cache
folder, and none of the user's ``MEMVAULT_*`` identity variables.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from memvault import Vault

# Property and fuzz tests draw the same examples on every run (derived from each test), so
# the suite fails on a change, not on a new draw. Exploring with fresh draws is
# ``bench/fuzz.py``'s job, or ``pytest --hypothesis-profile=explore``.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile("repeatable")


def ctrl_c_able() -> None:
    """``preexec_fn`` of a child a test will Ctrl-C: SIGINT back to its default action. A run
    started with SIGINT ignored (a shell's background job is) passes that on to every child,
    and Python then installs no KeyboardInterrupt handler: the Ctrl-C would do nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


LEAKY_ENV = (
    "MEMVAULT_VAULT",
    "MEMVAULT_AGENT",
    "MEMVAULT_TEAM",
    "MEMVAULT_ROLE",
    "MEMVAULT_INDEX_URL",
    "MEMVAULT_AUTHOR_NAME",
    "MEMVAULT_AUTHOR_EMAIL",
    "MEMVAULT_DEBUG",  # a developer's debug mode would print traces into every test's stderr
    "VISUAL",
    "EDITOR",
    # git variables that would point our git calls at another repository
    "GIT_DIR",
    "GIT_INDEX_FILE",
    "GIT_WORK_TREE",
)

BIN = Path(sys.executable).parent


@pytest.fixture(autouse=True)
def clean_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fake embedder, private cache dir, no identity leaking in from the user's shell."""
    for name in LEAKY_ENV:
        monkeypatch.delenv(name, raising=False)
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "fake")
    monkeypatch.setenv("MEMVAULT_CACHE_DIR", str(cache))
    # The lemma dictionaries (memvault.language) take seconds to prepare: one copy per run.
    monkeypatch.setenv("MEMVAULT_LEMMAS_DIR", str(tmp_path_factory.getbasetemp() / "lemmas"))
    # git must never fall back to the user's global config (identity, hooks, templates):
    # memvault's commits have to work on a machine with no git identity at all, as in CI.
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


# --- git helpers ---------------------------------------------------------------------


def git(root: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def commit_count(root: Path) -> int:
    return int(git(root, "rev-list", "--count", "HEAD").strip())


def last_message(root: Path) -> str:
    return git(root, "log", "-1", "--format=%B").strip()


def is_clean(root: Path) -> bool:
    """No tracked change and no untracked file outside ignored paths."""
    return git(root, "status", "--porcelain", "--untracked-files=all").strip() == ""


# --- CLI helpers -----------------------------------------------------------------------


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> object:
        return json.loads(self.out)


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


def run_memvault(
    *argv: str | Path,
    cwd: Path | None = None,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """Run the real ``memvault`` console script in a subprocess."""
    exe = BIN / "memvault"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "memvault"]
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [*cmd, *[str(a) for a in argv]],
        cwd=cwd,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        check=False,
    )


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_bytes(text.encode("utf-8"))
    return path


def fact_text(mid: str, body: str = "Some fact.", **keys: object) -> str:
    lines = ["---", f"id: {mid}", "type: semantic", "category: facts"]
    lines += [f"{k}: {v}" for k, v in keys.items()]
    lines += ["---", "", body, ""]
    return "\n".join(lines)


@pytest.fixture
def chdir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], None]]:
    yield monkeypatch.chdir


def assert_same_memory(quick: Any, parsed: Any, text: str) -> None:
    """A memory computed without parsing (``files.new_memory``, ``files.rewritten_memory``)
    equals the one parsing its text gives: fields, and keys in their order."""
    assert (quick.id, quick.type, quick.path, quick.content) == (
        parsed.id,
        parsed.type,
        parsed.path,
        parsed.content,
    )
    assert list(quick.meta.items()) == list(parsed.meta.items()), text
