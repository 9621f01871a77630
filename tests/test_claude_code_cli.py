"""The real Claude Code CLI sees the installed server ``✔ Connected``: a user-scope install,
and a project-scope install once approved, with the PATH a desktop launcher gives
(``/usr/bin:/bin``) and HOME in a temp folder.

The CLI is the pinned ``@anthropic-ai/claude-code`` from npm, installed into a cache folder
by ``tools/install-claude-code.sh`` (``.ci/run`` runs it); ``claude mcp list`` needs no
account. Skipped only when that CLI is not installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from memvault import Vault

from helpers import Result

VERSION = "2.1.328"
CLAUDE = (
    Path(
        os.environ.get(
            "MEMVAULT_CLAUDE_CODE_DIR",
            Path.home() / ".cache" / "memvault" / f"claude-code-{VERSION}",
        )
    )
    / "node_modules"
    / ".bin"
    / "claude"
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CLAUDE.exists(),
        reason=f"Claude Code {VERSION} is not installed: run tools/install-claude-code.sh",
    ),
]


def mcp_list(home: Path, cwd: Path) -> str:
    """``claude mcp list`` as a desktop launcher would start it: PATH=/usr/bin:/bin."""
    path = "/usr/bin:/bin"
    node = shutil.which("node")
    if node and Path(node).parent.as_posix() not in path.split(":"):
        path += f":{Path(node).parent}"
    env = {"HOME": str(home), "PATH": path}
    for key in ("PYTHONPATH", "MEMVAULT_EMBEDDER", "MEMVAULT_CACHE_DIR", "MEMVAULT_CONFIG_DIR"):
        if key in os.environ:  # this checkout's memvault and the test's stand-in embedder
            env[key] = os.environ[key]
    proc = subprocess.run(
        [str(CLAUDE), "mcp", "list"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    return proc.stdout + proc.stderr


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home = tmp_path / "home"
    project = home / "shop"
    project.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(project)
    Vault.init(home / "memory")
    return home, project


def test_a_user_scope_install_connects_without_memvault_on_the_path(
    cli: Callable[..., Result], places: tuple[Path, Path]
) -> None:
    home, project = places
    res = cli("--vault", "~/memory", "integrations", "install", "claude-code", "--user")
    assert res.code == 0, res.err
    out = mcp_list(home, project)
    assert "memvault" in out and "✔ Connected" in out, out


def test_an_approved_project_scope_install_connects(
    cli: Callable[..., Result], places: tuple[Path, Path]
) -> None:
    home, project = places
    res = cli("--vault", "~/memory", "integrations", "install", "claude-code")
    assert res.code == 0, res.err
    assert "Pending approval" in mcp_list(home, project)  # .mcp.json alone is not trusted
    # The approval a user gives for themselves, in their own settings, no prompt needed.
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"enabledMcpjsonServers": ["memvault"]}), encoding="utf-8")
    out = mcp_list(home, project)
    assert "memvault" in out and "✔ Connected" in out, out
