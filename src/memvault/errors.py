"""One error hierarchy for the whole library.

Every expected failure is a :class:`MemvaultError` that carries the file (relative to
the vault) and the key it is about, so adapters can print one line such as
``semantic/facts/x.md: importance: expected 1-5, got 9`` and exit 1.
"""

from __future__ import annotations


class MemvaultError(Exception):
    """Base of every expected error. ``str()`` is the one-line message for users."""

    exit_code = 1

    def __init__(self, message: str, path: str | None = None, key: str | None = None) -> None:
        self.message = message
        self.path = path
        self.key = key
        super().__init__(self.format())

    def format(self) -> str:
        parts = [p for p in (self.path, self.key) if p]
        parts.append(self.message)
        return ": ".join(parts)


class ConfigError(MemvaultError):
    """Bad configuration (config.yaml, environment variables, flags)."""


class VaultNotFoundError(MemvaultError):
    """No vault at the given path, or none found walking up from the current folder."""


class VaultExistsError(MemvaultError):
    """``init`` refused to clobber an existing vault."""


class ValidationError(MemvaultError):
    """A memory file or a memory payload is invalid. ``problems`` lists every issue."""

    def __init__(
        self,
        message: str,
        path: str | None = None,
        key: str | None = None,
        problems: list[Problem] | None = None,
    ) -> None:
        self.problems = problems or []
        super().__init__(message, path, key)


class NotFoundError(MemvaultError):
    """No memory with that id (or not visible to this agent)."""


class DuplicateIdError(MemvaultError):
    """Two files claim the same id."""


class PermissionDeniedError(MemvaultError):
    """The identity may not do this (scope rules, paused scope)."""


class SecretDetectedError(MemvaultError):
    """Content looks like a credential and was refused."""


class LockTimeoutError(MemvaultError):
    """Another memvault process holds a lock (the vault's, a cache's) for too long."""


class GitError(MemvaultError):
    """A git operation failed."""


class JournalError(MemvaultError):
    """A write that died half-way could not be fully undone (``memvault doctor --repair``)."""


class IndexError_(MemvaultError):
    """The search index is unusable (and could not be rebuilt)."""


class Problem:
    """One validation problem: a file, a key and what is wrong with it."""

    __slots__ = ("path", "key", "message")

    def __init__(self, path: str | None, key: str | None, message: str) -> None:
        self.path = path
        self.key = key
        self.message = message

    def __str__(self) -> str:
        return ": ".join(p for p in (self.path, self.key, self.message) if p)

    def __repr__(self) -> str:
        return f"Problem({str(self)!r})"

    def as_dict(self) -> dict[str, str | None]:
        return {"path": self.path, "key": self.key, "message": self.message}


def yaml_message(exc: Exception) -> str:
    """A YAML parser's error in one line: what is wrong and where ("invalid YAML: found
    duplicate key 'search' with value ... (line 40, column 1)"), not its first line only
    ("while constructing a mapping")."""
    lines = str(exc).splitlines()
    problem = getattr(exc, "problem", None) or (lines[0] if lines else type(exc).__name__)
    problem = " ".join(str(problem).split())
    mark = getattr(exc, "problem_mark", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return f"invalid YAML: {problem}{where}"
