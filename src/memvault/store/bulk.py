"""Writing many new memory files as one commit, in constant work per file.

:meth:`memvault.store.repository.Repository.commit_files` holds every text in memory and fsyncs
each file: right for a handful of files, not for an import of 100,000. :class:`BulkWrite`
takes new files one at a time and, every ``batch`` files, adds them to the journal note
(so a killed import is undone by the next command), writes them without an fsync each,
and records them in the catalog. :meth:`BulkWrite.commit` syncs the filesystem once,
stages every path through ``git update-index`` on stdin and makes one commit. Memory
holds one batch of texts plus the list of paths.
"""

from __future__ import annotations

import os

from ..errors import MemvaultError
from ..values import TYPE_CHECKING
from . import journal
from .catalog import sha256_hex
from .files import atomic_write
from .git import ops as gitstore

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path
    from typing import Any, Protocol

    from ..memory import Memory
    from .catalog import Catalog
    from .git.ops import Identity

    class Repository(Protocol):
        """What a bulk write uses of :class:`memvault.store.repository.Repository` (which
        imports this module)."""

        root: Path
        catalog: Catalog
        config: Any

        @property
        def git_identity(self) -> Identity: ...

        def bump_generation(self) -> None: ...


BATCH = 2000  # files per journal line, write burst and catalog transaction


def sync_filesystem(path: Path) -> None:
    """Flush the filesystem holding ``path`` to disk, after writes made with
    ``durable=False``: one ``syncfs(2)`` on Linux (only that filesystem), else ``os.sync()``."""
    try:
        import ctypes

        fd = os.open(path, os.O_RDONLY)
        try:
            if ctypes.CDLL(None, use_errno=True).syncfs(fd) == 0:
                return
        finally:
            os.close(fd)
    except (OSError, AttributeError):
        pass
    os.sync()


class BulkWrite:
    """New files written in batches and committed once. Use with the vault lock held::

        bulk = BulkWrite(vault)
        for rel, text, memory in records:
            bulk.add(rel, text, memory)
        sha = bulk.commit("memvault: import ...")   # or bulk.abort()

    Every path must be new (no file there): the journal undoes a killed write by deleting
    the files it wrote.
    """

    def __init__(self, repo: Repository, batch: int = BATCH) -> None:
        self.repo = repo
        self.batch = batch
        self.rels: list[str] = []  # written so far
        self._pending: list[tuple[str, str, Memory | None]] = []
        self._open = False
        self._staged = False  # gitstore.commit was called: the index may hold the paths
        self._packer: gitstore.BlobPacker | None = None

    def add(self, rel: str, text: str, memory: Memory | None = None) -> None:
        """Queue a new file; ``memory``: what it holds, when the caller parsed it already."""
        self._pending.append((rel, text, memory))
        if len(self._pending) >= self.batch:
            self.flush()

    def __len__(self) -> int:
        return len(self.rels) + len(self._pending)

    def flush(self) -> None:
        """Write the queued files: journal first, then the files, then the catalog."""
        if not self._pending:
            return
        root = self.repo.root
        if not self._open:
            journal.begin(root, {}, {}, {})
            self._open = True
            if self.repo.config.get("git.commit", True):
                self._packer = gitstore.BlobPacker(root)
        pending, self._pending = self._pending, []
        journal.extend(root, {rel: sha256_hex(text) for rel, text, _ in pending})
        for rel, text, _ in pending:
            atomic_write(root / rel, text, durable=False)
            self.rels.append(rel)
            if self._packer is not None:
                self._packer.add(text.encode("utf-8"))
        known = [(rel, memory, text) for rel, text, memory in pending if memory is not None]
        self.repo.catalog.put_many(known)
        self.repo.catalog.refresh([rel for rel, _, memory in pending if memory is None])

    def commit(self, message: str) -> str | None:
        """Sync, stage and commit every file written; undo them all if that fails."""
        self.flush()
        if not self.rels:
            self._close()
            return None
        root = self.repo.root
        head_before = gitstore.head(root)
        try:
            if self._packer is not None:
                self._packer.close()
            sync_filesystem(root)
            sha = None
            if self.repo.config.get("git.commit", True):
                self._staged = True
                sha = gitstore.commit(root, message, self.repo.git_identity, add=self.rels)
        except BaseException:
            if gitstore.head(root) == head_before:  # the commit did not land: undo
                self.abort()
            else:
                self._close()
            raise
        self._close()
        return sha

    def abort(self) -> None:
        """Remove every file written (and its staging), as if nothing had happened."""
        self._pending = []
        for rel in self.rels:
            try:
                os.unlink(self.repo.root / rel)
            except FileNotFoundError:
                pass
        try:
            if self._staged:
                gitstore.unstage(self.repo.root, self.rels)
        except (MemvaultError, OSError):
            pass  # best effort, as commit_files' rollback: git status shows what stays
        self.repo.catalog.forget(self.rels)
        self.rels = []
        self._close()

    def _close(self) -> None:
        if self._packer is not None:
            self._packer.close()  # an aborted write's pack holds unreachable blobs: gc drops them
            self._packer = None
        if self._open:
            journal.end(self.repo.root)
            self._open = False
        self.repo.bump_generation()
