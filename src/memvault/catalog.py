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
from .files import iter_memory_files, load_document, read_bytes
from .memory import Memory, validate_meta

SCHEMA = 2
ALL_TREES = ("episodic", "semantic", "procedural", "archive", "inbox")


@dataclass(frozen=True)
class Entry:
    path: str
    sha: str  # sha256 of the file's bytes
    memory: Memory | None  # None when the file is invalid
    problems: tuple[Problem, ...] = ()


@dataclass
class ScanResult:
    entries: dict[str, Entry] = field(default_factory=dict)  # by path
    changed: list[str] = field(default_factory=list)  # paths (re)parsed in this scan
    removed: list[str] = field(default_factory=list)

    @property
    def memories(self) -> list[Memory]:
        return [e.memory for e in self.entries.values() if e.memory is not None]

    @property
    def invalid(self) -> list[Entry]:
        return [e for e in self.entries.values() if e.memory is None]


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
            "sha TEXT, doc TEXT, problems TEXT)"
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


def _decode(path: str, doc: str | None, problems: str) -> tuple[Memory | None, tuple[Problem, ...]]:
    probs = tuple(Problem(p["path"], p["key"], p["message"]) for p in json.loads(problems or "[]"))
    if doc is None:
        return None, probs
    data = json.loads(doc)
    return Memory(data["id"], data["type"], path, data["meta"], data["content"]), probs


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
                for row in conn.execute("SELECT path, mtime_ns, size, sha, doc, problems FROM files")
            }
            result = ScanResult()
            updates: list[tuple[object, ...]] = []
            seen: set[str] = set()
            for rel, abs_path in iter_memory_files(self.root, trees):
                seen.add(rel)
                try:
                    st = abs_path.lstat()
                except FileNotFoundError:
                    continue
                row = cached.get(rel)
                if row is not None and row[1] == st.st_mtime_ns and row[2] == st.st_size:
                    memory, problems = _decode(rel, row[4], row[5])
                    result.entries[rel] = Entry(rel, row[3], memory, problems)
                    continue
                sha, memory, problem_list = parse_file(abs_path, rel, self.max_bytes)
                result.entries[rel] = Entry(rel, sha, memory, tuple(problem_list))
                result.changed.append(rel)
                doc, probs = _encode(memory, problem_list)
                updates.append((rel, st.st_mtime_ns, st.st_size, sha, doc, probs))
            in_scope = [p for p in cached if p.split("/", 1)[0] in trees]
            result.removed = [p for p in in_scope if p not in seen]
            if updates or result.removed:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?)", updates)
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
                doc, probs = _encode(memory, problems)
                conn.execute(
                    "INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?)",
                    (rel, st.st_mtime_ns, st.st_size, sha, doc, probs),
                )
            conn.execute("COMMIT")
        finally:
            conn.close()

    def clear(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.db_path) + suffix)
            except FileNotFoundError:
                pass


def load_one(root: Path, rel: str, max_bytes: int) -> Memory:
    """Load one file bypassing the cache (raises ValidationError)."""
    doc = load_document(root / rel, rel, max_bytes)
    problems = validate_meta(doc.meta, rel)
    if problems:
        raise ValidationError(problems[0].message, rel, problems[0].key, problems)
    return doc.to_memory()
