"""``post-receive`` in a bare remote (``hooks install --bare``): index what was pushed.

Each pushed branch is checked out into a detached worktree under
``<git-dir>/memvault/worktrees/`` and reindexed there, against ``git config
memvault.indexUrl`` (a shared Chroma server) when set, else the worktree's own
configuration. Concurrent pushes queue behind one running update instead of indexing in
parallel. Here git waits (30 s by default, ``git config memvault.hookTimeout``) so the
pusher sees ``remote: memvault: ...``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import MARKER, reindex_summary, run_git, try_lock
from .detached import SERVER_TIMEOUT, GitConfig, hook_timeout, report_outcome, run_bounded, say
from .names import LOG_NAME, state_dir

ZERO_SHA_RE = re.compile(r"^0+$")  # the old or new side of a ref created or deleted


def parse_ref_updates(text: str) -> list[tuple[str, str, str]]:
    """``<old> <new> <ref>`` lines as git feeds post-receive/pre-push."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            out.append((parts[0], parts[1], parts[2]))
    return out


def post_receive(cwd: Path, stdin: bytes) -> int:
    """The hook as git runs it, in the bare repository: always 0 (the push is done)."""
    updates = parse_ref_updates(stdin.decode("utf-8", errors="replace"))
    branches = [
        ref.removeprefix("refs/heads/")
        for _, new, ref in updates
        if ref.startswith("refs/heads/") and not ZERO_SHA_RE.match(new)
    ]
    if not branches:
        return 0
    git_dir = _common_git_dir(cwd)
    log = state_dir(git_dir) / LOG_NAME
    timeout = hook_timeout(GitConfig(git_dir), SERVER_TIMEOUT)
    outcome = run_bounded(
        lambda: update_server_index(git_dir, branches), timeout, log, "post-receive"
    )
    if outcome.status == "ok":
        for line in outcome.message.splitlines():
            say("post-receive", line)
    else:
        report_outcome("post-receive", outcome, log, git_dir, timeout)
    return 0


def _common_git_dir(cwd: Path) -> Path:
    proc = run_git(cwd, ["rev-parse", "--git-common-dir"], check=False)
    return (cwd / (proc.stdout.strip() or ".git")).resolve()


def _slug(branch: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", branch).strip("-") or "branch"


def update_server_index(git_dir: Path, branches: Sequence[str]) -> dict[str, Any]:
    """Check each branch's tip out into its worktree and reindex it there.

    One update runs at a time per repository: a second push arriving meanwhile queues its
    branches in ``memvault/pending`` and the running update takes them before it exits.
    """
    base = state_dir(git_dir)
    pending = base / "pending"
    # Queued before the lock is tried: an update that holds it reads the queue again
    # before it lets go.
    with open(pending, "a", encoding="utf-8") as handle:
        handle.write("".join(f"{b}\n" for b in branches))
    with try_lock(base / "post-receive.lock") as got:
        if not got:
            return {
                "status": "ok",
                "message": f"queued {', '.join(branches)} behind an update in progress",
            }
        lines: list[str] = []
        while True:
            try:
                queued = pending.read_text(encoding="utf-8").split()
                pending.unlink()
            except FileNotFoundError:
                queued = []
            if not queued:
                break
            for branch in dict.fromkeys(queued):
                lines.append(_index_branch(git_dir, base, branch))
        return {"status": "ok", "message": "\n".join(lines)}


def server_index_url(git_dir: Path) -> str | None:
    """The shared index a bare remote's post-receive writes to (None: each worktree's own)."""
    proc = run_git(git_dir, ["config", "--get", "memvault.indexUrl"], check=False)
    return proc.stdout.strip() or os.environ.get("MEMVAULT_INDEX_URL") or None


def _index_branch(git_dir: Path, base: Path, branch: str) -> str:
    from .. import Vault

    tip = run_git(
        git_dir, ["rev-parse", "-q", "--verify", f"refs/heads/{branch}^{{commit}}"], check=False
    )
    sha = tip.stdout.strip()
    if not sha:
        return f"{branch}: deleted; nothing to index"
    worktree = base / "worktrees" / _slug(branch)
    worktree_for(git_dir, worktree, sha)
    if not (worktree / MARKER).is_dir():
        return f"{branch}: not a memvault vault at {sha[:10]}; skipped"
    overrides: dict[str, Any] = {}
    url = server_index_url(git_dir)
    if url:
        overrides["index.url"] = url
    # The branch, for an index that keeps branches apart on a shared server; this index is
    # the branch's own, so it also deletes the vectors of text the branch no longer has.
    overrides["index.branch"] = branch
    overrides["index.prune"] = True
    vault = Vault.open(worktree, overrides=overrides)
    report = vault.reindex()
    where = f" on {url}" if url else ""
    return f"{branch}: indexed {sha[:10]}{where} ({reindex_summary(report)})"


def worktree_for(git_dir: Path, worktree: Path, sha: str) -> None:
    """A detached worktree of the bare repository at ``sha`` (created or moved there)."""
    if (worktree / ".git").exists():
        proc = run_git(worktree, ["checkout", "-q", "--detach", "--force", sha], check=False)
        if proc.returncode == 0:
            run_git(worktree, ["clean", "-q", "-fd"], check=False)
            return
    run_git(git_dir, ["worktree", "prune"], check=False)
    worktree.parent.mkdir(parents=True, exist_ok=True)
    if worktree.exists():
        import shutil

        shutil.rmtree(worktree)
    run_git(git_dir, ["worktree", "add", "-q", "--detach", "--force", str(worktree), sha])
