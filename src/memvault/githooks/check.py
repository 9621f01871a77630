"""The pre-commit hook: validate the *staged* memory files, and block the commit on a problem.

The staged blobs are written out with one ``git checkout-index`` into a temporary folder
and checked there by :func:`memvault.reports.check_files`, all in one process. ``git
commit --no-verify`` stays the escape hatch.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .. import ALL_TREES, MARKER, run_git
from .detached import say

if TYPE_CHECKING:
    from .. import Vault
    from ..errors import Problem


def open_vault(root: Path) -> Vault | None:
    """The vault at ``root``, or None when this repository holds no vault there."""
    from .. import Vault

    if not (root / MARKER).is_dir():
        return None
    return Vault.open(root)


def _staged_env() -> dict[str, str]:
    """Keep git's GIT_INDEX_FILE: ``git commit -a``/``git commit FILE`` stage into a temp index."""
    index = os.environ.get("GIT_INDEX_FILE")
    return {"GIT_INDEX_FILE": os.path.abspath(index)} if index else {}


def staged_paths(toplevel: Path, prefix: str = "") -> list[str]:
    """Staged (added/copied/modified/renamed) files under the memory trees, toplevel-relative."""
    specs = [f"{prefix}{tree}" for tree in ALL_TREES]
    proc = run_git(
        toplevel,
        ["diff", "--cached", "--name-only", "-z", "--diff-filter=ACMR", "--no-renames", "--"]
        + specs,
        env_extra=_staged_env(),
    )
    return [p for p in proc.stdout.split("\0") if p]


def check_staged(vault: Vault, toplevel: Path) -> tuple[list[Problem], int]:
    """Validate the staged versions of memory files. Returns ``(problems, files checked)``."""
    import tempfile

    prefix = os.path.relpath(vault.root, toplevel).replace(os.sep, "/")
    prefix = "" if prefix == "." else prefix + "/"
    paths = staged_paths(toplevel, prefix)
    if not paths:
        return [], 0
    with tempfile.TemporaryDirectory(prefix="memvault-staged-") as tmp:
        tmp_root = Path(tmp).resolve()
        # One git process writes every staged blob out (the index, not the working tree).
        run_git(
            toplevel,
            ["checkout-index", f"--prefix={tmp_root}/", "-z", "--stdin"],
            input_text="\0".join(paths) + "\0",
            env_extra=_staged_env(),
        )
        staged_root = tmp_root / prefix if prefix else tmp_root
        staged_root.mkdir(parents=True, exist_ok=True)
        files = [staged_root / p[len(prefix) :] for p in paths]
        problems = vault.check([f for f in files if os.path.lexists(f)], root=staged_root)
    return problems, len(paths)


def pre_commit(toplevel: Path, vault_dir: str) -> int:
    """The hook as git runs it, from the worktree top: 1 blocks the commit."""
    vault = open_vault((toplevel / vault_dir).resolve())
    if vault is None:
        return 0
    problems, _ = check_staged(vault, toplevel)
    if not problems:
        return 0
    for problem in problems:
        print(f"Error: {problem}", file=sys.stderr)
    n = len(problems)
    say(
        "pre-commit",
        f"commit blocked: {n} problem{'s' if n != 1 else ''} in staged memory files "
        "(fix and 'git add' them, or bypass with 'git commit --no-verify')",
    )
    return 1


def check_named_files(names: Sequence[str]) -> int:
    """Validate named files (the pre-commit framework's mode), each in its own vault.

    The framework stashes unstaged changes first, so the working tree is what is staged.
    Files outside any vault's memory trees are ignored.
    """

    groups: dict[Path, list[Path]] = {}
    for name in names:
        path = Path(name).absolute()
        for folder in path.parents:
            if (folder / MARKER).is_dir():
                groups.setdefault(folder.resolve(), []).append(path)
                break
    problems: list[Problem] = []
    for root, files in groups.items():
        vault = open_vault(root)
        if vault is not None:
            problems.extend(vault.check(files))
    for problem in problems:
        print(f"Error: {problem}", file=sys.stderr)
    return 1 if problems else 0
