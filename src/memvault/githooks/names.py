"""Which hooks memvault installs, and the files they keep in ``<git-dir>/memvault/``."""

from __future__ import annotations

from pathlib import Path

CLIENT_HOOKS = (
    "pre-commit",
    "post-commit",
    "post-merge",
    "post-checkout",
    "post-rewrite",
    "pre-push",
)
SERVER_HOOKS = ("post-receive",)
ALL_HOOKS = CLIENT_HOOKS + SERVER_HOOKS
REINDEX_HOOKS = ("post-commit", "post-merge", "post-checkout", "post-rewrite", "pre-push")
BLOCKING_HOOKS = ("pre-commit",)  # our check may stop git; all others fail open
STDIN_HOOKS = ("pre-push", "post-rewrite", "post-receive", "pre-receive", "reference-transaction")
LEGACY_SUFFIX = ".legacy"  # a foreign hook displaced by a shim: <name>.legacy, run first

# Inside <git-dir>/memvault/ (see state_dir):
LOG_NAME = "hooks.log"  # what background reindexes printed
LAST_ERROR = "last-error.json"  # a background reindex that failed, for the next hook to report
PENDING = "reindex-pending"  # a reindex asked for while another writer held the vault lock


def state_dir(git_dir: Path) -> Path:
    """memvault's private folder inside the git dir (logs, queues, server worktrees)."""
    path = git_dir / "memvault"
    path.mkdir(parents=True, exist_ok=True)
    return path
