"""Where things live: every vault-relative path and folder name, the user cache and config
folders.

Vault paths are POSIX strings relative to the vault's root (the folder holding
``.memvault/``).
"""

from __future__ import annotations

import os

from .values import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

MARKER = ".memvault"  # the folder that makes a folder a vault
CONFIG_PATH = ".memvault/config.yaml"  # settings (tracked)
LOCK_PATH = ".memvault/lock"  # the single-writer lock (files + git + index writes)
INDEX_DIR = ".memvault/index"  # the derived, git-ignored index: safe to delete
GENERATION_PATH = (
    ".memvault/index/generation"  # grows by one byte per write: long-lived readers poll it
)
CATALOG_PATH = ".memvault/index/catalog.sqlite"  # parsed-file cache
CONFIG_CACHE_PATH = ".memvault/index/config.marshal"
COMMITS_STATE_PATH = ".memvault/index/commits"  # plumbing-commit counter (git gc --auto)
GIT_FLAGS_PATH = ".memvault/index/git-flags"  # whether git's index flags files status skips
ACCESS_LOG = ".memvault/access.log"  # reads, append-only (git-ignored); folded by consolidate
ACCESS_LOG_FOLDING = ".memvault/access.log.folding"  # the log a consolidation is folding
# reads already folded, kept (git-ignored, a few months) for the windows of `stats`
ACCESS_LOG_HISTORY = ".memvault/access.log.history"
CONSOLIDATION_LOG = ".memvault/consolidation.log"  # what each consolidation did (tracked)
REVIEW_LOG = ".memvault/reviews.log"  # every accepted or rejected proposal (tracked)
# reads and decayed relevance per memory, written by consolidation (tracked; store/usage.py)
USAGE_PATH = ".memvault/usage.jsonl"
PURGE_LOG = ".memvault/purge.log"  # every purge by content, never its text (tracked)

MEMORY_TYPES = ("episodic", "semantic", "procedural")  # one top-level folder per type
ARCHIVE = "archive"  # decayed or superseded memories, same relative paths
INBOX = "inbox"  # proposals awaiting review
ALL_TREES = (*MEMORY_TYPES, ARCHIVE, INBOX)  # every folder that holds memory files

DEBUG_STATE = "debug.json"  # in user_cache_dir(): which vaults this user debugs
# in user_config_dir(): the commands named in a vault's shared config this user allowed
ALLOWED_COMMANDS = "allowed-commands.json"


def user_cache_dir() -> Path:
    """memvault's per-user cache (converted models, crash logs): ``$MEMVAULT_CACHE_DIR``,
    else ``$XDG_CACHE_HOME/memvault``, else ``~/.cache/memvault``. Not created here."""
    from pathlib import Path

    explicit = os.environ.get("MEMVAULT_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "memvault"


def user_config_dir() -> Path:
    """memvault's per-user settings (the commands this user allowed): ``$MEMVAULT_CONFIG_DIR``,
    else ``$XDG_CONFIG_HOME/memvault``, else ``~/.config/memvault``. Not created here."""
    from pathlib import Path

    explicit = os.environ.get("MEMVAULT_CONFIG_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "memvault"


def locate_vault(start: str | Path | None = None) -> Path | None:
    """The vault a command means: ``start`` (``--vault``) > ``$MEMVAULT_VAULT`` > the nearest
    folder holding ``.memvault/`` from the current one up; None when that is no vault
    (:func:`memvault.store.repository.find_root` says why)."""
    from pathlib import Path

    found = vault_folder(start)
    return None if found is None else Path(found)


def vault_folder(start: str | os.PathLike[str] | None = None) -> str | None:
    """:func:`locate_vault` as a string, without pathlib (a served command's new process
    imports little: ``docs/performance.md``)."""
    given = start if start is not None else (os.environ.get("MEMVAULT_VAULT") or None)
    if given is not None:
        root = os.path.realpath(os.path.expanduser(os.fspath(given)))
        return root if os.path.isdir(os.path.join(root, MARKER)) else None
    folder = os.path.realpath(os.getcwd())
    while True:
        if os.path.isdir(os.path.join(folder, MARKER)):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
