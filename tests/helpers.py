"""Plain helpers the tests import (``from helpers import git, write``): git and CLI
calls, files to write. Fixtures live in ``conftest.py``, which pytest loads by itself and
which is never imported by name.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


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
    "MEMVAULT_JUDGE_COMMAND",  # a developer's own judge or summarizer would run in tests
    "MEMVAULT_SUMMARIZER_COMMAND",
    "MEMVAULT_DEBUG",  # a developer's debug mode would print traces into every test's stderr
    "VISUAL",
    "EDITOR",
    # git variables that would point our git calls at another repository
    "GIT_DIR",
    "GIT_INDEX_FILE",
    "GIT_WORK_TREE",
)

BIN = Path(sys.executable).parent


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


def imported_in_memory(vault: Any, records: list[dict[str, Any]], folder: Path) -> Any:
    """``records`` imported in one commit (``memvault import``), one search made, and the
    index it opened: scored in memory (the flat vectors)."""
    from memvault.index.handle import open_indexes
    from memvault.transfer import import_file

    source = folder / "in.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert import_file(vault.core, source).problems == []
    vault.search("warm", log=False)
    idx = open_indexes.get(vault.root)
    assert idx is not None and idx.in_memory
    return idx
