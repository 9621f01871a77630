"""Forgetting for real: erase a memory from files, index, access log and git history.

``forget`` deletes a file with a commit, which is what git is for: history keeps it.
``purge`` rewrites history with git-filter-repo so that no commit, blob or message
holds the memory's path, id or text any more, then drops the derived index (rebuilt on
the next search) and scrubs the access log. Remotes are restored afterwards and named
in the report: they still hold the old history until someone force-pushes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .core import Core
from .errors import GitError, MemvaultError
from .forgotten import trailers
from .paths import ACCESS_LOG, ACCESS_LOG_HISTORY, INDEX_DIR
from .store.git import ops as gitstore
from .values import Record, field


class PurgeReport(Record):
    memory_id: str
    paths: list[str] = field(default_factory=list)
    remotes: list[str] = field(default_factory=list)
    replaced: int = 0


def _filter_repo() -> list[str]:
    exe = shutil.which("git-filter-repo") or str(Path(sys.executable).parent / "git-filter-repo")
    if Path(exe).exists():
        return [exe]
    try:
        import git_filter_repo  # noqa: F401

        return [sys.executable, "-m", "git_filter_repo"]
    except ImportError:
        raise MemvaultError(
            "git-filter-repo is needed for --purge (pip install git-filter-repo)"
        ) from None


def _secrets_of(content: str, memory_id: str, title: str) -> list[str]:
    """Strings to scrub elsewhere: the id, the title and every substantial body line.

    Front-matter lines are not scrubbed on their own: values such as
    ``importance: 3`` are shared by every memory (the file itself is removed whole).
    """
    needles = {memory_id, title}
    for line in content.splitlines():
        line = line.strip()
        if len(line) >= 12:
            needles.add(line)
    return sorted((n for n in needles if n and len(n) >= 4), key=len, reverse=True)


def purge_memory(vault: Core, memory_id: str, reason: str) -> PurgeReport:
    """Remove every trace of a memory. Rewrites history: all commit ids change."""
    root = vault.root
    with vault.locked():
        memory = vault.get(memory_id)
        check_clean(root)
        report = PurgeReport(memory_id)
        # every path this memory ever had (moves to archive/, renames)
        proc = gitstore.run_git(
            root, ["log", "--all", "--format=", "--name-only", f"-Sid: {memory_id}"], check=False
        )
        paths = {p for p in proc.stdout.split() if p}
        paths.add(memory.path)
        report.paths = sorted(paths)
        needles = _secrets_of(memory.content, memory_id, memory.title)
        report.replaced = len(needles)
        with tempfile.TemporaryDirectory(prefix="memvault-purge-") as tmp:
            paths_file = Path(tmp) / "paths"
            paths_file.write_text("".join(f"{p}\n" for p in report.paths), encoding="utf-8")
            repl = Path(tmp) / "replacements"
            repl.write_text(
                "".join(f"{n.replace(chr(10), ' ')}==>[purged]\n" for n in needles),
                encoding="utf-8",
            )
            report.remotes = rewrite_history(
                root,
                [
                    "--invert-paths",
                    "--paths-from-file",
                    str(paths_file),
                    "--replace-text",
                    str(repl),
                    "--replace-message",
                    str(repl),
                ],
            )
        _scrub_access_log(root, memory_id)
        drop_index(root)
        gitstore.run_git(
            root,
            [
                "commit",
                "--allow-empty",
                "-q",
                "-m",
                f"memvault: purge a memory from history: {reason}\n\n"
                + trailers(vault.who, memory, reason, purged=True),
            ],
            identity=vault.git_identity,
            check=False,
        )
    return report


def check_clean(root: Path) -> None:
    """Refuse to rewrite history over uncommitted changes (they would be lost or mixed in)."""
    dirty = [p for _, p in gitstore.status_porcelain(root) if not p.startswith(INDEX_DIR)]
    if dirty:
        raise MemvaultError(
            f"the vault has uncommitted changes ({dirty[0]}…); commit or stash them before a purge",
            str(root),
        )


def rewrite_history(root: Path, filter_args: list[str]) -> list[str]:
    """Run git-filter-repo with ``filter_args`` over every ref, then make sure no reflog or
    dangling object keeps an old blob reachable. filter-repo drops the remotes (so that the
    rewritten history is not pushed by accident): they are put back, and their names returned
    (they still hold the old history until someone force-pushes)."""
    remotes = {}
    for name in gitstore.remotes(root):
        remotes[name] = gitstore.run_git(root, ["remote", "get-url", name], check=False).stdout
    cmd = [*_filter_repo(), "--force", "--quiet", *filter_args]
    proc = subprocess.run(cmd, cwd=root, env=gitstore.no_git_env(), capture_output=True, text=True)
    if proc.returncode != 0:
        raise GitError(
            f"git filter-repo failed: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}"
        )
    for name, url in remotes.items():
        if name not in gitstore.remotes(root):
            gitstore.run_git(root, ["remote", "add", name, url.strip()], check=False)
    gitstore.run_git(root, ["reflog", "expire", "--expire=now", "--all"], check=False)
    gitstore.run_git(root, ["gc", "--prune=now", "--quiet"], check=False)
    return sorted(remotes)


def drop_index(root: Path) -> None:
    """The index is derived: drop it whole (old vectors, FTS pages, the catalog), rebuilt
    lazily by the next read."""
    shutil.rmtree(root / INDEX_DIR, ignore_errors=True)


def _scrub_access_log(root: Path, memory_id: str) -> None:
    for name in (ACCESS_LOG, ACCESS_LOG_HISTORY):  # the live log and the folded reads kept
        _scrub_log(root / name, memory_id)


def _scrub_log(path: Path, memory_id: str) -> None:
    if not path.exists():
        return
    kept = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if memory_id in (record.get("ids") or []) or memory_id in line:
            continue
        kept.append(line)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(f"{k}\n" for k in kept), encoding="utf-8")
    os.replace(tmp, path)
