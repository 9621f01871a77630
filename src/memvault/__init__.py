"""memvault: long-term memory for AI agents, kept as files in a git repository.

>>> from memvault import Vault
>>> vault = Vault.init("/tmp/memory")                                  # doctest: +SKIP
>>> vault.add("semantic", "The API rate limit is 100 req/s", subject="api.rate-limit")  # doctest: +SKIP
"""

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
from .search import SearchHit, SearchResult
from .vault import AgentIdentity, Filters, Vault, WriteResult

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
