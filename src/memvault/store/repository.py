"""The vault on disk, below search: open and init, settings, identity, the catalog of
parsed files, the single-writer lock, reading memories, and the one-commit write.

:class:`memvault.vault.Vault` builds on this with the write API (add, update, forget,
log) and search. The index and search modules take a :class:`Repository`, so they never
depend on the class that calls them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..config import Config, load_config
from ..errors import (
    DuplicateIdError,
    LockTimeoutError,
    MemvaultError,
    NotFoundError,
    VaultExistsError,
    VaultNotFoundError,
)
from ..memory import ID_RE, Memory, format_time, now_utc
from ..paths import ALL_TREES, CONFIG_PATH, GENERATION_PATH, LOCK_PATH, MARKER, locate_vault
from ..scopes import AgentIdentity, Filters
from ..values import TYPE_CHECKING
from . import journal
from .bulk import sync_filesystem
from .catalog import Catalog, ScanResult
from .files import atomic_write, check_text
from .git import ops as gitstore
from .lock import clear_stale_git_lock, file_lock

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterator
    from typing import Any, Self


# Writes of at least this many files skip the fsync per file (one sync of the filesystem
# instead) and pack their blobs at once: a first consolidation rewrites most of a vault.
BULK_WRITES = 256


def find_root(start: Path | None = None) -> Path:
    """``--vault`` > ``$MEMVAULT_VAULT`` > walk up from the current folder."""
    root = locate_vault(start)
    if root is not None:
        return root
    given = start if start is not None else os.environ.get("MEMVAULT_VAULT")
    if given:
        raise VaultNotFoundError(
            f"not a memvault vault (no {MARKER}/ folder); run 'memvault init'", str(given)
        )
    raise VaultNotFoundError(
        "no vault here or in any parent folder; "
        "pass --vault PATH, set MEMVAULT_VAULT, or run 'memvault init'"
    )


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def template_dir() -> Path:
    from importlib import resources  # only init needs it

    return Path(str(resources.files("memvault") / "vault_template"))


class Repository:
    """A vault on disk: its files, settings, identity, catalog, lock and commits."""

    def __init__(self, root: Path, config: Config, identity: AgentIdentity) -> None:
        self.root = root
        self.config = config
        self.identity = identity
        self.catalog = Catalog(root, config.int("limits.max_file_bytes"))
        self.last_recovery: journal.Recovery | None = None  # what the last undo did
        self.overrides: dict[str, Any] = {}  # settings given at open: kept by reload_config
        self._config_mtime = _mtime(root / CONFIG_PATH)

    # --- opening -------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        agent: str | None = None,
        team: str | None = None,
        role: str | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> Self:
        """Open an existing vault (discovered as ``find_root`` does when ``path`` is None)."""
        root = find_root(Path(path) if path is not None else None)
        over = dict(overrides or {})
        over.update({"identity.agent": agent, "identity.team": team, "identity.role": role})
        config = load_config(root, over)
        identity = AgentIdentity(
            config.get("identity.agent"), config.get("identity.team"), config.get("identity.role")
        )
        opened = cls(root, config, identity)
        opened.overrides = over
        return opened

    def reload_config(self) -> bool:
        """Read the config again when its file changed since it was read (a long-running
        server sees ``memvault pause`` or a ``git pull``). The identity and the author of
        automated commits stay as opened. True when it was re-read."""
        mtime = _mtime(self.root / CONFIG_PATH)
        if mtime == self._config_mtime:
            return False
        kept = {
            "identity.agent": self.identity.agent,
            "identity.team": self.identity.team,
            "identity.role": self.identity.role,
            "git.author_name": self.config.get("git.author_name"),
            "git.author_email": self.config.get("git.author_email"),
        }
        self.config = load_config(self.root, {**self.overrides, **kept})
        self._config_mtime = mtime
        return True

    @classmethod
    def init(
        cls,
        path: str | Path,
        *,
        examples: bool = False,
        agent: str | None = None,
        team: str | None = None,
        role: str | None = None,
        languages: Sequence[str] | None = None,
    ) -> Self:
        """Create a vault from the template: folders, config, README, git repo, first commit."""
        root = Path(path).expanduser().resolve()
        if languages:  # a bad code is refused before anything is created
            from ..config import check_languages

            languages = check_languages(list(languages), "--language")
        if root.exists() and not root.is_dir():
            raise VaultExistsError("not a folder: a vault is a folder; give a new path", str(path))
        if (root / MARKER).exists():
            raise VaultExistsError(
                "a vault already exists here; refusing to overwrite it", str(path)
            )
        if root.exists() and any(p.name in ALL_TREES for p in root.iterdir()):
            raise VaultExistsError(
                "folder already holds memory trees; refusing to overwrite them", str(path)
            )
        root.mkdir(parents=True, exist_ok=True)
        src = template_dir()
        created: list[str] = []
        for item in sorted(src.rglob("*")):
            rel = item.relative_to(src).as_posix()
            if "__pycache__" in rel or item.is_dir():
                continue
            if rel.startswith("examples/") and not examples:
                continue
            target_rel = rel.removeprefix("examples/")
            if target_rel.startswith("episodic/") and target_rel.count("/") == 1:
                now = now_utc()
                target_rel = (
                    f"episodic/{now:%Y}/{now:%m}/{now:%Y-%m-%d}-" + target_rel.split("/", 1)[1]
                )
            target_rel = "/".join(
                p.replace("dot-", ".", 1) if p.startswith("dot-") else p
                for p in target_rel.split("/")
            )
            target = root / target_rel
            if target.exists():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            import shutil

            shutil.copyfile(item, target)
            created.append(target_rel)
        for tree in ALL_TREES:
            (root / tree).mkdir(exist_ok=True)
            keep = root / tree / ".gitkeep"
            if not any((root / tree).iterdir()):
                keep.touch()
                created.append(f"{tree}/.gitkeep")
        if examples:
            cls._stamp_examples(root)
        if CONFIG_PATH in created:
            cls._stamp_vault_id(root / CONFIG_PATH)
            if languages:
                cls._stamp_languages(root / CONFIG_PATH, languages)
        vault = cls.open(root, agent=agent, team=team, role=role)
        if not gitstore.is_repo(root):
            gitstore.init_repo(root, vault.git_identity)
        from .mergedriver import register_driver

        # .gitattributes routes memory files to the driver; git ignores it until it is defined.
        register_driver(root)
        with vault.locked():
            gitstore.commit(root, "memvault: initialise vault", vault.git_identity, add=created)
        return vault

    @staticmethod
    def _stamp_vault_id(config: Path) -> None:
        """Every clone shares the tracked config, so this id names the vault on a shared
        Chroma server (two vaults made the same second may share a root commit)."""
        import re
        import uuid

        text = config.read_text(encoding="utf-8")
        # Quoted: an id of digits and one "e" would read as a number.
        quoted = f'vault_id: "{uuid.uuid4().hex[:16]}"  '
        stamped = re.sub(r"vault_id: null +", quoted, text, count=1)
        config.write_text(stamped, encoding="utf-8")

    @staticmethod
    def _stamp_languages(config: Path, languages: Sequence[str]) -> None:
        """``init --language``: the vault's languages, and the embedder that serves them."""
        from ..config import check_languages
        from ..embeddings import embedder_for_languages

        codes = check_languages(list(languages), "--language")
        text = config.read_text(encoding="utf-8")
        text = text.replace("languages: [en]", f"languages: [{', '.join(codes)}]", 1)
        text = text.replace(
            "embedder: all-MiniLM-L6-v2", f"embedder: {embedder_for_languages(codes)}", 1
        )
        config.write_text(text, encoding="utf-8")

    @staticmethod
    def _stamp_examples(root: Path) -> None:
        """Example memories get today's dates so decay and 'recent' make sense."""
        today = format_time(now_utc())
        for tree in ("episodic", "semantic", "procedural"):
            for file in (root / tree).rglob("*.md"):
                text = file.read_text(encoding="utf-8").replace("{{now}}", today)
                file.write_text(text, encoding="utf-8")

    # --- plumbing ------------------------------------------------------------------

    @property
    def git_identity(self) -> gitstore.Identity:
        return gitstore.Identity(
            str(self.config.get("git.author_name", "memvault")),
            str(self.config.get("git.author_email", "memvault@localhost")),
        )

    @contextmanager
    def locked(self, timeout: float = 60.0) -> Iterator[None]:
        """The vault's single-writer lock (files + git + index writes).

        A writer never stays blocked by a dead write it can't fully undo: it undoes what it
        can, sets the rest aside and says so (``force``, as ``doctor --repair`` does)."""
        with file_lock(self.root / LOCK_PATH, timeout=timeout, label="vault"):
            clear_stale_git_lock(self.root)
            self.recover_interrupted(force=True)
            yield

    def recover_interrupted(self, *, force: bool = False) -> journal.Recovery | None:
        """Undo a write whose process died half-way (its journal note is still there), so
        that its files are never read as memories. Call with the vault lock held. Returns
        what was done, None when there was nothing to undo. Raises
        :class:`~memvault.errors.JournalError` when part of it can't be undone (unless
        ``force``: see :func:`memvault.store.journal.recover`)."""
        if not journal.pending(self.root):
            return None
        import sys

        result = journal.recover(self.root, force=force)
        self.last_recovery = result
        self.catalog.refresh(result.restored)
        if result.restored:
            print(
                f"memvault: undid an interrupted write ({len(result.restored)} file(s) put back)",
                file=sys.stderr,
            )
        if result.kept:
            print(
                f"memvault: part of an interrupted write could not be undone "
                f"({result.problems[0]}); its notes and saved copies are in {result.kept}",
                file=sys.stderr,
            )
        return result

    def rel(self, path: Path) -> str:
        return path.resolve().relative_to(self.root).as_posix()

    def bump_generation(self) -> None:
        """Tell long-lived readers (MCP server) that files changed."""
        path = self.root / GENERATION_PATH
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write("+")

    def commit_files(
        self,
        writes: Mapping[str, str],
        message: str,
        removes: Iterable[str] = (),
        moves: Mapping[str, str] | None = None,
        known: Mapping[str, Memory] | None = None,
    ) -> str | None:
        """Write ``writes`` (rel path -> text) atomically, remove/move files, one commit.

        Call with the lock held. Every text is validated before anything is written, except
        those in ``known``: rendered by memvault from metadata it validated, given here as
        the memory they hold (the catalog records them without parsing them back).
        """
        known = dict(known or {})
        for rel, text in writes.items():
            if rel.split("/", 1)[0] in ALL_TREES and rel not in known:
                known[rel] = check_text(text, rel)  # parsed once: the catalog keeps it
        bulk = len(writes) >= BULK_WRITES
        removes = list(removes)
        moves = dict(moves or {})
        touched_add = [*writes.keys(), *moves.values()]
        touched_rm = [*removes, *moves.keys()]
        # Old bytes of everything we touch, so a failed commit can put the files back.
        before: dict[str, bytes | None] = {}
        for rel in {*touched_add, *touched_rm}:
            path = self.root / rel
            before[rel] = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        journal.begin(self.root, before, writes, moves)  # a killed write is undone next time
        head_before = gitstore.head(self.root)
        packer = gitstore.BlobPacker(self.root) if bulk else None
        try:
            for src, dst in moves.items():
                (self.root / dst).parent.mkdir(parents=True, exist_ok=True)
                os.replace(self.root / src, self.root / dst)
            for rel, text in writes.items():
                atomic_write(self.root / rel, text, durable=not bulk)
                if packer is not None:
                    packer.add(text.encode("utf-8"))
            for rel in removes:
                try:
                    (self.root / rel).unlink()
                except FileNotFoundError:
                    pass
            if packer is not None:  # many files: one sync, and their blobs in one pack
                packer.close()
                sync_filesystem(self.root)
            sha = None
            if self.config.get("git.commit", True):
                sha = gitstore.commit(
                    self.root, message, self.git_identity, add=touched_add, remove=touched_rm
                )
        except BaseException:
            if packer is not None:
                packer.close()
            # Put the files back, unless the commit landed (an interrupt in a post-commit
            # hook, say): then the files are what HEAD holds, and undoing them would leave
            # an uncommitted change that reverts the commit.
            if gitstore.head(self.root) == head_before:
                self._roll_back(before)
            journal.end(self.root)
            self.catalog.refresh(list(before))
            raise
        else:
            journal.end(self.root)
            self.catalog.put_many((rel, memory, writes[rel]) for rel, memory in known.items())
            self.catalog.refresh([rel for rel in before if rel not in known])
        finally:
            self.bump_generation()
        return sha

    def _roll_back(self, before: Mapping[str, bytes | None]) -> None:
        """Restore files to their bytes before a failed write; unstage them. Best effort."""
        for rel, data in before.items():
            path = self.root / rel
            try:
                if data is None:
                    path.unlink(missing_ok=True)
                else:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    atomic_write(path, data.decode("utf-8"))
            except OSError:
                pass
        try:
            gitstore.unstage(self.root, before)
        except (MemvaultError, OSError):
            pass  # best effort: the files are back; 'git status' shows what stays staged

    # --- reading -------------------------------------------------------------------

    def scan(self) -> ScanResult:
        self._settle_journal()
        return self.catalog.scan()

    def sync_catalog(self) -> None:
        """Bring the catalog up to date with the files, without building every entry (then
        ask it: ids, subjects). Git names the files to look at when it can."""
        self._settle_journal()
        self.catalog.scan(every=False)

    def scan_paths(self, paths: Iterable[str]) -> ScanResult:
        """:meth:`scan` of some paths only (those git says can differ)."""
        self._settle_journal()
        return self.catalog.scan_paths(paths)

    def _settle_journal(self) -> None:
        if journal.pending(self.root):
            # A write in flight, or one whose process died: undo the latter before reading,
            # so its half-written files are never served. A live writer keeps the lock.
            # A reader never forces: what it can't undo is a one-line error (JournalError)
            # until a write or 'doctor --repair' does.
            try:
                with file_lock(self.root / LOCK_PATH, timeout=0, label="vault"):
                    clear_stale_git_lock(self.root)
                    self.recover_interrupted()
            except LockTimeoutError:
                pass

    def all_memories(self) -> list[Memory]:
        """Every valid memory in the vault, whatever its scope (maintenance jobs)."""
        return self.scan().memories

    def memories(self, filters: Filters | None = None) -> list[Memory]:
        """Memories visible to this identity that match ``filters`` (default: active ones)."""
        filters = filters or Filters()
        filters.check()
        return [m for m in self.all_memories() if self.identity.can_see(m) and filters.match(m)]

    def get(self, memory_id: str, *, any_scope: bool = False) -> Memory:
        """One memory by id (archived and inbox included). Another agent's ``self`` is not found."""
        if not isinstance(memory_id, str) or not ID_RE.match(memory_id):
            raise NotFoundError(f"not a memory id: {memory_id!r}", key="id")
        # The catalog's id column, after a folder-level look for created/deleted files; each
        # candidate file is re-read if it changed (a hand edit may have changed its id).
        if journal.pending(self.root):
            self.scan()  # undoes a dead writer's half-done files first
        else:
            self.catalog.quick_sync()
        matches = []
        for rel in self.catalog.paths_with_id(memory_id):
            entry = self.catalog.entry(rel)
            if (
                entry is not None
                and entry.valid
                and entry.id == memory_id
                and entry.memory is not None
            ):
                matches.append(entry.memory)
        if not matches:  # a file whose id was edited in place is only seen by a full scan
            matches = [
                e.memory
                for e in self.scan().entries.values()
                if e.valid and e.id == memory_id and e.memory is not None
            ]
        if not any_scope:
            matches = [m for m in matches if self.identity.can_see(m)]
        if not matches:
            raise NotFoundError(f"no memory with id {memory_id!r}", key="id")
        if len(matches) > 1:
            paths = ", ".join(m.path for m in matches)
            raise DuplicateIdError(f"id {memory_id!r} is used by several files: {paths}", key="id")
        return matches[0]

    def raw_text(self, memory: Memory) -> str:
        return (self.root / memory.path).read_bytes().decode("utf-8")  # keep CRLF exactly
