"""memvault: long-term memory for AI agents, kept as files in a git repository.

>>> from memvault import Vault
>>> vault = Vault.init("/tmp/memory")                                  # doctest: +SKIP
>>> vault.add("semantic", "The rate limit is 100 req/s", subject="api.rate")  # doctest: +SKIP
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
    "Memory": "memory",
    "SearchHit": "search",
    "SearchResult": "search",
    "AgentIdentity": "scopes",
    "Filters": "scopes",
    "Vault": "vault",
    "WriteResult": "vault",
}

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from .errors import (
        ConfigError,
        DuplicateIdError,
        MemvaultError,
        NotFoundError,
        PermissionDeniedError,
        SecretDetectedError,
        ValidationError,
        VaultExistsError,
        VaultNotFoundError,
    )
    from .memory import Memory
    from .scopes import AgentIdentity, Filters
    from .search import SearchHit, SearchResult
    from .vault import Vault, WriteResult


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
    "AgentIdentity",
    "ConfigError",
    "DuplicateIdError",
    "Filters",
    "Memory",
    "MemvaultError",
    "NotFoundError",
    "PermissionDeniedError",
    "SearchHit",
    "SearchResult",
    "SecretDetectedError",
    "ValidationError",
    "Vault",
    "VaultExistsError",
    "VaultNotFoundError",
    "WriteResult",
]
