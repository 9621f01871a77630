"""memvault: long-term memory for AI agents, kept as files in a git repository.

>>> from memvault import Vault
>>> vault = Vault.init("/tmp/memory")                                  # doctest: +SKIP
>>> vault.add("semantic", "The rate limit is 100 req/s", subject="api.rate")  # doctest: +SKIP

This module is the public API: :class:`Vault` (every user operation is one of its methods),
the value types its methods take and return, the errors, and the vocabulary every door
shares (kinds, scopes, statuses, the date parser). The CLI, the MCP server, the inspector,
the git hooks and the watcher import only from here, ``memvault.errors`` and
``memvault.debug`` (``tools/layout.py --check`` holds them to it).
"""

from __future__ import annotations

from .values import TYPE_CHECKING

# Exports load lazily (PEP 562): ``memvault add`` must not pay for the search stack.
_EXPORTS = {
    "ConfigError": "errors",
    "DuplicateIdError": "errors",
    "MemvaultError": "errors",
    "NotFoundError": "errors",
    "PermissionDeniedError": "errors",
    "SecretDetectedError": "errors",
    "ValidationError": "errors",
    "VaultExistsError": "errors",
    "VaultNotFoundError": "errors",
    "Problem": "errors",
    "Memory": "memory",
    "ID_RE": "memory",
    "KIND_TYPE": "vocabulary",
    "SCOPES": "vocabulary",
    "STATUSES": "vocabulary",
    "TYPES": "vocabulary",
    "format_time": "memory",
    "now_utc": "memory",
    "parse_time": "memory",
    "parse_when": "memory",
    "MemoryFields": "fields",
    "WRITE_FIELDS": "fields",
    "AgentIdentity": "scopes",
    "PauseRule": "pauses",
    "Forgotten": "forgotten",
    "Filters": "scopes",
    "WriteResult": "core",
    "Vault": "vault",
    "Listing": "browse",
    "ContextBlock": "search",
    "SearchHit": "search",
    "SearchOptions": "search",
    "SearchResult": "search",
    "ValidateOptions": "search",
    "ValidationResult": "validate",
    "Action": "consolidate",
    "Plan": "consolidate",
    "STEPS": "consolidate",
    "ReindexReport": "index",
    "IngestReport": "ingest",
    "ImportReport": "transfer",
    "HandEdits": "sync",
    "SyncReport": "sync",
    "PurgeReport": "purge",
    "ContentPurge": "purge_match",
    "FileHit": "purge_match",
    "CommandStatus": "trust",
    "COMMAND_KEYS": "trust",
    "parse_turns": "transcripts",
    "find_root": "store.repository",
    "atomic_write": "store.files",
    "check_text": "store.files",
    "Change": "store.git.ops",
    "run_git": "store.git.ops",
    "file_lock": "store.lock",
    "try_lock": "store.lock",
    "reindex_summary": "sync",
    "is_memory_file": "store.tree",
    "change_feed": "index.drift",
    "set_change_feed": "index.drift",
    "register_driver": "store.mergedriver",
    "registered_driver": "store.mergedriver",
    "run_driver": "store.mergedriver",
    "ALL_TREES": "paths",
    "ARCHIVE": "paths",
    "CONFIG_PATH": "paths",
    "INBOX": "paths",
    "LOCK_PATH": "paths",
    "MARKER": "paths",
    "user_cache_dir": "paths",
    "locate_vault": "paths",
    "vault_folder": "paths",
    "resident_enabled": "config",
    "start_early": "store.git.early",
    "drop_early": "store.git.early",
}

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .browse import Listing
    from .config import resident_enabled
    from .consolidate import STEPS, Action, Plan
    from .core import WriteResult
    from .errors import (
        ConfigError,
        DuplicateIdError,
        MemvaultError,
        NotFoundError,
        PermissionDeniedError,
        Problem,
        SecretDetectedError,
        ValidationError,
        VaultExistsError,
        VaultNotFoundError,
    )
    from .fields import WRITE_FIELDS, MemoryFields
    from .forgotten import Forgotten
    from .index import ReindexReport
    from .index.drift import change_feed, set_change_feed
    from .ingest import IngestReport
    from .memory import (
        ID_RE,
        Memory,
        format_time,
        now_utc,
        parse_time,
        parse_when,
    )
    from .paths import (
        ALL_TREES,
        ARCHIVE,
        CONFIG_PATH,
        INBOX,
        LOCK_PATH,
        MARKER,
        locate_vault,
        user_cache_dir,
        vault_folder,
    )
    from .pauses import PauseRule
    from .purge import PurgeReport
    from .purge_match import ContentPurge, FileHit
    from .scopes import AgentIdentity, Filters
    from .search import ContextBlock, SearchHit, SearchOptions, SearchResult, ValidateOptions
    from .store.files import atomic_write, check_text
    from .store.git.early import drop_early, start_early
    from .store.git.ops import Change, run_git
    from .store.lock import file_lock, try_lock
    from .store.mergedriver import register_driver, registered_driver, run_driver
    from .store.repository import find_root
    from .store.tree import is_memory_file
    from .sync import HandEdits, SyncReport, reindex_summary
    from .transcripts import parse_turns
    from .transfer import ImportReport
    from .trust import COMMAND_KEYS, CommandStatus
    from .validate import ValidationResult
    from .vault import Vault
    from .vocabulary import KIND_TYPE, SCOPES, STATUSES, TYPES


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'memvault' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "ALL_TREES",
    "ARCHIVE",
    "Action",
    "AgentIdentity",
    "COMMAND_KEYS",
    "CONFIG_PATH",
    "Change",
    "CommandStatus",
    "ConfigError",
    "ContextBlock",
    "DuplicateIdError",
    "Filters",
    "Forgotten",
    "HandEdits",
    "ID_RE",
    "INBOX",
    "ImportReport",
    "IngestReport",
    "KIND_TYPE",
    "LOCK_PATH",
    "Listing",
    "MARKER",
    "Memory",
    "MemoryFields",
    "MemvaultError",
    "NotFoundError",
    "PermissionDeniedError",
    "PauseRule",
    "Plan",
    "Problem",
    "PurgeReport",
    "ContentPurge",
    "FileHit",
    "ReindexReport",
    "SCOPES",
    "STATUSES",
    "STEPS",
    "SearchHit",
    "SearchOptions",
    "SearchResult",
    "SecretDetectedError",
    "SyncReport",
    "TYPES",
    "ValidateOptions",
    "ValidationError",
    "ValidationResult",
    "Vault",
    "VaultExistsError",
    "VaultNotFoundError",
    "WRITE_FIELDS",
    "WriteResult",
    "atomic_write",
    "change_feed",
    "check_text",
    "drop_early",
    "file_lock",
    "find_root",
    "format_time",
    "is_memory_file",
    "locate_vault",
    "now_utc",
    "parse_time",
    "parse_turns",
    "parse_when",
    "register_driver",
    "registered_driver",
    "reindex_summary",
    "resident_enabled",
    "run_driver",
    "run_git",
    "set_change_feed",
    "start_early",
    "try_lock",
    "user_cache_dir",
    "vault_folder",
]
