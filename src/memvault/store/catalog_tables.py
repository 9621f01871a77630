"""The catalog's SQLite file: its tables, and a memory file's row in them.

``files`` holds a row per memory file (stat, sha, id, subject, the parsed memory as JSON,
its problems); ``dirs`` a row per folder (its mtime and the names of its memory files), for
:meth:`memvault.store.catalog.Catalog.quick_sync`; ``state`` the commit of the last scan with
the paths that can differ from it (``git``), and a counter of writes to the rows that a
scan compares before and after (``writes``). A damaged file is deleted and rebuilt.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ..errors import Problem
from ..memory import Memory
from ..values import TYPE_CHECKING
from .git.status import DIRTY_LIMIT

if TYPE_CHECKING:
    from typing import Any

# 6 added ``state``: a version-5 file keeps its rows (an older memvault, finding 6,
# rebuilds, dropping the record it would otherwise write rows behind).
SCHEMA = 6
STATE_DDL = "CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT)"


def connect(db_path: Path) -> sqlite3.Connection:
    try:
        return _open(db_path)
    except sqlite3.DatabaseError:  # not a database any more (truncated, overwritten): rebuild
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(db_path) + suffix)
            except FileNotFoundError:
                pass
        return _open(db_path)


def _open(db_path: Path) -> sqlite3.Connection:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db_path, timeout=30, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    # A disposable cache: no fsync (a crashed process can't corrupt WAL; a corrupt file is
    # rebuilt). With fsync every open/close pair would cost more than the rest of an add.
    conn.execute("PRAGMA synchronous=OFF")
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version != SCHEMA:
        conn.execute("BEGIN IMMEDIATE")
        version = conn.execute("PRAGMA user_version").fetchone()[0]  # (not done meanwhile?)
        if version == 5:  # rows kept; what git can say starts afresh
            conn.execute("DROP TABLE IF EXISTS state")
            conn.execute(STATE_DDL)
        elif version != SCHEMA:
            for table in ("files", "dirs", "state"):
                conn.execute(f"DROP TABLE IF EXISTS {table}")
            conn.execute(
                "CREATE TABLE files (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER, "
                "sha TEXT, id TEXT, subject TEXT, doc TEXT, problems TEXT)"
            )
            conn.execute("CREATE INDEX files_id ON files(id)")
            # names: the folder's memory files, NUL-separated (NULL: unknown, ask ``files``)
            conn.execute("CREATE TABLE dirs (path TEXT PRIMARY KEY, mtime_ns INTEGER, names TEXT)")
            conn.execute(STATE_DDL)
        conn.execute(f"PRAGMA user_version={SCHEMA}")
        conn.execute("COMMIT")
    # The files without a subject, by path: a write's conflict check reads a folder's
    # (Catalog.without_subject) from it instead of every row of the vault. Added to files of
    # this schema as found (an older memvault keeps it up to date, as SQLite does any index).
    conn.execute(f"CREATE INDEX IF NOT EXISTS files_unsubjected ON files(path) WHERE {NO_SUBJECT}")
    return conn


# A row without a subject (the partial index's condition: a query uses the index only when
# its WHERE holds this very term)
NO_SUBJECT = "(subject IS NULL OR subject = '')"


# --- what git can say of the cached files (see memvault.store.git.status) ---------------


def git_record(conn: sqlite3.Connection) -> tuple[dict[str, Any] | None, int]:
    """The ``{"commit", "dirty_paths"}`` of the last scan (None: none kept) and the count of
    writes to the rows since some moment (a scan compares it before and after)."""
    state = dict(conn.execute("SELECT key, value FROM state"))
    try:
        record = json.loads(state["git"]) if "git" in state else None
    except ValueError:
        record = None
    return record if isinstance(record, dict) else None, int(state.get("writes") or 0)


def note_written(conn: sqlite3.Connection, paths: Iterable[str]) -> None:
    """Rows written outside a scan (call inside their transaction): the paths join the git
    record's differing ones -- put back later to what git holds, a file would be named by no
    git answer while its row holds what was written -- and the write counter moves, so a
    scan that began before keeps the older record (:func:`replace_git_record`)."""
    conn.execute(
        "INSERT INTO state (key, value) VALUES ('writes', '1') "
        "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )
    paths = set(paths)
    record, _ = git_record(conn)
    if record is None or not paths:
        return
    differing = paths.union(record.get("dirty_paths") or ())
    if len(differing) > DIRTY_LIMIT:
        conn.execute("DELETE FROM state WHERE key = 'git'")
        return
    record["dirty_paths"] = sorted(differing)
    conn.execute("UPDATE state SET value = ? WHERE key = 'git'", (json.dumps(record),))


def replace_git_record(
    conn: sqlite3.Connection, record: dict[str, Any] | None, writes_seen: int
) -> bool:
    """A scan's record (call inside its transaction), unless another write came since the
    scan began (``writes_seen``): then the older record stays, which names more files."""
    if git_record(conn)[1] != writes_seen:
        return False
    if record is None:
        conn.execute("DELETE FROM state WHERE key = 'git'")
    else:
        conn.execute(
            "INSERT OR REPLACE INTO state (key, value) VALUES ('git', ?)", (json.dumps(record),)
        )
    return True


def encode(memory: Memory | None, problems: Iterable[Problem]) -> tuple[str | None, str]:
    doc = None
    if memory is not None:
        doc = json.dumps(
            {"id": memory.id, "type": memory.type, "meta": memory.meta, "content": memory.content},
            ensure_ascii=False,
        )
    return doc, json.dumps([p.as_dict() for p in problems], ensure_ascii=False)


def decode_problems(text: str | None) -> tuple[Problem, ...]:
    if not text or text == "[]":
        return ()
    return tuple(Problem(p["path"], p["key"], p["message"]) for p in json.loads(text))


# A ``files`` row: path, mtime_ns, size, sha, id, subject, doc, problems.
FileRow = tuple[str, int, int, str, "str | None", "str | None", "str | None", "str | None"]


def file_row(
    rel: str, st: os.stat_result, sha: str, memory: Memory | None, problems: list[Problem]
) -> tuple[object, ...]:
    doc, probs = encode(memory, problems)
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


def write_rows(
    conn: sqlite3.Connection, rows: Sequence[tuple[object, ...]], gone: Iterable[str]
) -> None:
    """Upsert ``files`` rows (see :func:`file_row`) and delete those of ``gone``."""
    conn.executemany("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?)", rows)
    conn.executemany("DELETE FROM files WHERE path=?", [(rel,) for rel in gone])


def note_names(conn: sqlite3.Connection, present: Iterable[str], absent: Iterable[str]) -> None:
    """Keep folders' ``names`` in step with files memvault wrote or removed itself: one
    read and one write per folder touched."""
    changes: dict[str, tuple[set[str], set[str]]] = {}
    for rels, slot in ((present, 0), (absent, 1)):
        for rel in rels:
            folder, _, name = rel.rpartition("/")
            changes.setdefault(folder, (set(), set()))[slot].add(name)
    for folder, (added, removed) in changes.items():
        row = conn.execute("SELECT names FROM dirs WHERE path=?", (folder,)).fetchone()
        if row is None or row[0] is None:
            continue
        names = set(row[0].split("\0")) if row[0] else set()
        new = (names | added) - removed
        if new != names:
            conn.execute("UPDATE dirs SET names=? WHERE path=?", ("\0".join(sorted(new)), folder))


def under(folder: str) -> tuple[str, tuple[str, str]]:
    """SQL for the catalog rows below ``folder`` ('/' sorts just before '0')."""
    return "SELECT path FROM files WHERE path > ? AND path < ?", (f"{folder}/", f"{folder}0")


def rows_in(
    conn: sqlite3.Connection, sql: str, keys: Sequence[object], size: int = 500
) -> Iterator[tuple[Any, ...]]:
    """Rows of an ``IN ({})`` query, in batches below SQLite's variable limit."""
    for start in range(0, len(keys), size):
        part = list(keys[start : start + size])
        yield from conn.execute(sql.format(",".join("?" * len(part))), part)
