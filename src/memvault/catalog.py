"""A disposable cache of parsed memory files, so reads don't re-parse the whole vault.

The catalog lives in ``.memvault/index/catalog.sqlite``. A scan walks the trees, stats
every file and re-parses only those whose size or mtime changed. Deleting the file is
always safe: the next scan rebuilds it from the files.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .errors import Problem, ValidationError
from .files import is_memory_file, load_document, read_bytes
from .memory import Memory, validate_meta

SCHEMA = 3
ALL_TREES = ("episodic", "semantic", "procedural", "archive", "inbox")


class Entry:
    """One file of the vault: its sha, its problems, and the memory (decoded lazily)."""

    __slots__ = ("path", "sha", "id", "subject", "problems", "_doc", "_memory")

    def __init__(
        self,
        path: str,
        sha: str,
        memory: Memory | None = None,
        problems: tuple[Problem, ...] = (),
        *,
        doc: str | None = None,
        memory_id: str | None = None,
        subject: str | None = None,
    ) -> None:
        self.path = path
        self.sha = sha
        self.problems = problems
        self._memory = memory
        self._doc = doc
        self.id = memory.id if memory is not None else memory_id
        self.subject = memory.subject if memory is not None else subject

    @property
    def valid(self) -> bool:
        return self._memory is not None or self._doc is not None

    @property
    def memory(self) -> Memory | None:
        if self._memory is None and self._doc is not None:
            data = json.loads(self._doc)
            self._memory = Memory(data["id"], data["type"], self.path, data["meta"], data["content"])
            self._doc = None
        return self._memory


@dataclass
class ScanResult:
    entries: dict[str, Entry] = field(default_factory=dict)  # by path
    changed: list[str] = field(default_factory=list)  # paths (re)parsed in this scan
    removed: list[str] = field(default_factory=list)

    @property
    def memories(self) -> list[Memory]:
        return [m for m in (e.memory for e in self.entries.values() if e.valid) if m is not None]

    @property
    def invalid(self) -> list[Entry]:
        return [e for e in self.entries.values() if not e.valid]

    def ids(self) -> set[str]:
        return {e.id for e in self.entries.values() if e.valid and e.id}


def _connect(db_path: Path) -> sqlite3.Connection:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db_path, timeout=30, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version != SCHEMA:
        conn.execute("DROP TABLE IF EXISTS files")
        conn.execute(
            "CREATE TABLE files (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER, "
            "sha TEXT, id TEXT, subject TEXT, doc TEXT, problems TEXT)"
        )
        conn.execute(f"PRAGMA user_version={SCHEMA}")
    return conn


def _encode(memory: Memory | None, problems: Iterable[Problem]) -> tuple[str | None, str]:
    doc = None
    if memory is not None:
        doc = json.dumps(
            {"id": memory.id, "type": memory.type, "meta": memory.meta, "content": memory.content},
            ensure_ascii=False,
        )
    return doc, json.dumps([p.as_dict() for p in problems], ensure_ascii=False)


def _problems(text: str | None) -> tuple[Problem, ...]:
    if not text or text == "[]":
        return ()
    return tuple(Problem(p["path"], p["key"], p["message"]) for p in json.loads(text))


def _walk(root: Path, trees: Iterable[str]) -> Iterable[tuple[str, os.stat_result]]:
    """(relative path, lstat) of memory files; strings and scandir, no pathlib (10k files)."""
    stack: list[tuple[str, str]] = []
    for tree in trees:
        base = os.path.join(root, tree)
        if os.path.isdir(base) and not os.path.islink(base):
            stack.append((base, tree))
    while stack:
        folder, rel = stack.pop()
        try:
            with os.scandir(folder) as it:
                items = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for item in items:
            name = item.name
            if name.startswith("."):
                continue
            if item.is_dir(follow_symlinks=False):
                stack.append((item.path, f"{rel}/{name}"))
            elif is_memory_file(name) and not name.endswith("~"):
                try:
                    yield f"{rel}/{name}", item.stat(follow_symlinks=False)
                except OSError:
                    continue


def parse_file(abs_path: Path, rel: str, max_bytes: int) -> tuple[str, Memory | None, list[Problem]]:
    """Read one file: its sha, the memory (or None) and its problems."""
    try:
        text = read_bytes(abs_path, rel, max_bytes)
    except ValidationError as exc:
        return "", None, [Problem(rel, exc.key, exc.message)]
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    try:
        from .files import parse_text

        doc = parse_text(text, rel)
    except ValidationError as exc:
        return sha, None, [Problem(rel, exc.key, exc.message)]
    problems = validate_meta(doc.meta, rel)
    if problems:
        return sha, None, problems
    return sha, doc.to_memory(), []


class Catalog:
    """Cached view of every memory file of a vault."""

    def __init__(self, root: Path, max_bytes: int) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.db_path = root / ".memvault" / "index" / "catalog.sqlite"

    def scan(self, trees: Iterable[str] = ALL_TREES) -> ScanResult:
        """Bring the cache up to date with the files and return every entry."""
        trees = tuple(trees)
        conn = _connect(self.db_path)
        try:
            cached = {
                row[0]: row
                for row in conn.execute("SELECT path, mtime_ns, size, sha, id, subject, doc, problems FROM files")
            }
            result = ScanResult()
            updates: list[tuple[object, ...]] = []
            seen: set[str] = set()
            for rel, st in _walk(self.root, trees):
                seen.add(rel)
                row = cached.get(rel)
                if row is not None and row[1] == st.st_mtime_ns and row[2] == st.st_size:
                    result.entries[rel] = Entry(
                        rel, row[3], None, _problems(row[7]), doc=row[6], memory_id=row[4], subject=row[5]
                    )
                    continue
                sha, memory, problem_list = parse_file(self.root / rel, rel, self.max_bytes)
                result.entries[rel] = Entry(rel, sha, memory, tuple(problem_list))
                result.changed.append(rel)
                updates.append(_row(rel, st, sha, memory, problem_list))
            in_scope = [p for p in cached if p.split("/", 1)[0] in trees]
            result.removed = [p for p in in_scope if p not in seen]
            if updates or result.removed:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?)", updates)
                conn.executemany("DELETE FROM files WHERE path=?", [(p,) for p in result.removed])
                conn.execute("COMMIT")
            return result
        finally:
            conn.close()

    def refresh(self, rels: Iterable[str]) -> None:
        """Re-read given files now (after memvault itself wrote or removed them)."""
        conn = _connect(self.db_path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            for rel in rels:
                abs_path = self.root / rel
                if not abs_path.exists():
                    conn.execute("DELETE FROM files WHERE path=?", (rel,))
                    continue
                st = abs_path.lstat()
                sha, memory, problems = parse_file(abs_path, rel, self.max_bytes)
                conn.execute("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?)", _row(rel, st, sha, memory, problems))
            conn.execute("COMMIT")
        finally:
            conn.close()

    def clear(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.db_path) + suffix)
            except FileNotFoundError:
                pass


def _row(rel: str, st: os.stat_result, sha: str, memory: Memory | None, problems: list[Problem]) -> tuple[object, ...]:
    doc, probs = _encode(memory, problems)
    return (
        rel,
        st.st_mtime_ns,
        st.st_size,
        sha,
        memory.id if memory else None,
        memory.subject if memory else None,
        doc,
        probs,
    )


def load_one(root: Path, rel: str, max_bytes: int) -> Memory:
    """Load one file bypassing the cache (raises ValidationError)."""
    doc = load_document(root / rel, rel, max_bytes)
    problems = validate_meta(doc.meta, rel)
    if problems:
        raise ValidationError(problems[0].message, rel, problems[0].key, problems)
    return doc.to_memory()
