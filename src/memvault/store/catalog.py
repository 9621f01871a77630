"""A disposable cache of parsed memory files, so reads don't re-parse the whole vault.

The catalog lives in ``.memvault/index/catalog.sqlite``. A scan walks the trees, stats
every file and re-parses only those whose size or mtime changed. Deleting the file is
always safe: the next scan rebuilds it from the files.

In a vault of many files git says which can differ (:mod:`memvault.store.git.status`): those
changed by the commits since the catalog's last scan, those differing from HEAD now or
then, and those written since outside a scan. Only they are stat-ed; every other row
is served as cached.

Writes need less: :meth:`Catalog.quick_sync` stats only the folders (tens, not 10,000
files) and re-lists those whose mtime moved, which catches every file created, deleted or
renamed since the last look; that is what an id-uniqueness check needs. In-place edits
are left to the next full scan (any read).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from stat import S_ISDIR as _S_ISDIR

from ..errors import Problem, ValidationError
from ..memory import Memory, validate_meta
from ..paths import ALL_TREES, CATALOG_PATH
from ..values import Record, field
from .catalog_tables import (
    NO_SUBJECT,
    FileRow,
    connect,
    decode_problems,
    file_row,
    git_record,
    note_names,
    note_written,
    replace_git_record,
    rows_in,
    under,
    write_rows,
)
from .files import load_document, read_bytes
from .git.status import DIRTY_LIMIT, GitView, git_view
from .tree import dir_stamp, list_folders, listed_stat, walk_memory_files

# Files from which a scan asks git which files can differ rather than stat-ing them all:
# below it a walk costs less than starting git (docs/scale.md).
GIT_SCAN_FROM = 5000
_ROW = "SELECT path, mtime_ns, size, sha, id, subject, doc, problems FROM files"


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
            self._memory = Memory(
                data["id"], data["type"], self.path, data["meta"], data["content"]
            )
            self._doc = None
        return self._memory


class ScanResult(Record):
    """Every entry of a scan (by path), which paths it (re)parsed or dropped, and each
    file's ``(mtime_ns, size)`` as stat-ed before it was read."""

    entries: dict[str, Entry] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def memories(self) -> list[Memory]:
        return [m for m in (e.memory for e in self.entries.values() if e.valid) if m is not None]

    @property
    def invalid(self) -> list[Entry]:
        return [e for e in self.entries.values() if not e.valid]

    def ids(self) -> set[str]:
        return {e.id for e in self.entries.values() if e.valid and e.id}


def sha256_hex(text: str) -> str:
    """SHA-256 of the UTF-8 text (see :func:`sha256_bytes`)."""
    return sha256_bytes(text.encode("utf-8"))


def sha256_bytes(data: bytes) -> str:
    """SHA-256, hex. CPython's built-in ``_sha256`` (``_sha2`` from 3.12) spares loading
    OpenSSL through hashlib, which a one-file write would notice."""
    try:
        from _sha256 import sha256
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:
            from hashlib import sha256  # type: ignore[assignment,unused-ignore]
    return str(sha256(data).hexdigest())


def parse_file(
    abs_path: Path, rel: str, max_bytes: int
) -> tuple[str, Memory | None, list[Problem]]:
    """Read one file: its sha, the memory (or None) and its problems."""
    try:
        text = read_bytes(abs_path, rel, max_bytes)
    except ValidationError as exc:
        return "", None, [Problem(rel, exc.key, exc.message)]
    sha = sha256_hex(text)
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
        self.db_path = root / CATALOG_PATH

    def scan(self, trees: Iterable[str] = ALL_TREES, every: bool = True) -> ScanResult:
        """Bring the cache up to date with the files and return every entry (``every``
        false: when git named the files to look at, only theirs; then ask the
        cache, e.g. :meth:`paths_with_id`, :meth:`with_subject`)."""
        trees = tuple(trees)
        conn = connect(self.db_path)
        try:
            record, writes = git_record(conn)
            many = conn.execute(f"SELECT count(*) >= {GIT_SCAN_FROM} FROM files").fetchone()[0]
        finally:
            conn.close()
        view = git_view(self.root, record) if many else None
        if view is not None and view.suspects is not None:
            return self._scan_suspects(trees, view, writes, every)
        return self._walk(trees, view, writes)

    def _walk(self, trees: tuple[str, ...], view: GitView | None, writes: int) -> ScanResult:
        """Stat every file, parse those whose size or mtime changed."""
        conn = connect(self.db_path)
        try:
            cached = {row[0]: row for row in conn.execute(_ROW)}
            result = ScanResult()
            updates: list[tuple[object, ...]] = []
            seen: set[str] = set()
            dirs: dict[str, int] = {}
            names: dict[str, list[str]] = {}

            def folder_seen(rel: str, st: os.stat_result) -> None:
                dirs[rel] = dir_stamp(st)

            for rel, st in walk_memory_files(self.root, trees, folder_seen):
                if st is None:
                    continue
                seen.add(rel)
                result.stats[rel] = (st.st_mtime_ns, st.st_size)
                folder, _, name = rel.rpartition("/")
                names.setdefault(folder, []).append(name)
                self._take(rel, st, cached.get(rel), result, updates)
            in_scope = [p for p in cached if p.split("/", 1)[0] in trees]
            result.removed = [p for p in in_scope if p not in seen]
            known_dirs = {
                row[0]: (row[1], row[2])
                for row in conn.execute("SELECT path, mtime_ns, names FROM dirs")
            }
            rows = {
                rel: (stamp, "\0".join(sorted(names.get(rel, ())))) for rel, stamp in dirs.items()
            }
            moved = any(known_dirs.get(k) != v for k, v in rows.items())
            if updates or result.removed or moved or view is not None:
                conn.execute("BEGIN IMMEDIATE")
                write_rows(conn, updates, result.removed)
                conn.executemany(
                    "INSERT OR REPLACE INTO dirs VALUES (?,?,?)",
                    [(k, v[0], v[1]) for k, v in rows.items()],
                )
                self._settle(conn, view, result, writes, trees == ALL_TREES)
                conn.execute("COMMIT")
            return result
        finally:
            conn.close()

    def _scan_suspects(
        self, trees: tuple[str, ...], view: GitView, writes: int, every: bool
    ) -> ScanResult:
        """Stat only the files git says can differ; every other row is served as cached."""
        suspects = {p for p in view.suspects or () if p.split("/", 1)[0] in trees}
        conn = connect(self.db_path)
        try:
            # rows quick_sync only peeked at (mtime -1) are parsed now
            peeked = conn.execute("SELECT path FROM files WHERE mtime_ns = -1").fetchall()
            suspects.update(p for (p,) in peeked if p.split("/", 1)[0] in trees)
            rows = (
                conn.execute(_ROW)
                if every
                else rows_in(conn, _ROW + " WHERE path IN ({})", sorted(suspects))
            )
            cached = {row[0]: row for row in rows if row[0].split("/", 1)[0] in trees}
        finally:
            conn.close()
        result, updates = self._restat(sorted(suspects), cached)
        for rel, row in cached.items():
            if rel not in suspects:
                result.entries[rel] = _cached_entry(row)
                result.stats[rel] = (row[1], row[2])
        conn = connect(self.db_path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            write_rows(conn, updates, result.removed)
            note_names(conn, result.changed, result.removed)
            self._settle(conn, view, result, writes, trees == ALL_TREES)
            conn.execute("COMMIT")
        finally:
            conn.close()
        return result

    def _settle(
        self,
        conn: sqlite3.Connection,
        view: GitView | None,
        result: ScanResult,
        writes: int,
        every_tree: bool,
    ) -> None:
        """What git can say after a scan (inside its transaction): a scan of every tree with
        git's view replaces the record, unless the rows were written since it began; then,
        and without git's view, the paths it re-read join the record kept."""
        reread = [*result.changed, *result.removed]
        if view is not None and every_tree:
            record = _record(self.root, view, result)
            if replace_git_record(conn, record, writes):
                note_written(conn, [])  # (moves the counter: a scan begun before keeps this)
                return
        note_written(conn, reread)

    def scan_paths(self, rels: Iterable[str]) -> ScanResult:
        """:meth:`scan`, of some paths only (those git says can differ): entries for the
        ones that are memory files now, ``removed`` for cached ones that are not."""
        wanted = sorted(set(rels))
        conn = connect(self.db_path)
        try:
            sql = _ROW + " WHERE path IN ({})"
            cached: dict[str, FileRow] = {row[0]: row for row in rows_in(conn, sql, wanted)}
        finally:
            conn.close()
        result, updates = self._restat(wanted, cached)
        self._store(updates, result.removed)
        return result

    def _restat(
        self, rels: list[str], cached: dict[str, FileRow]
    ) -> tuple[ScanResult, list[tuple[object, ...]]]:
        """Stat these paths: entries for the memory files among them (parsed when their
        size or mtime moved; the new rows returned too), ``removed`` for cached ones gone."""
        result = ScanResult()
        updates: list[tuple[object, ...]] = []
        base = str(self.root)
        for rel in rels:
            st = listed_stat(base, rel)
            if st is None:
                if rel in cached:
                    result.removed.append(rel)
                continue
            result.stats[rel] = (st.st_mtime_ns, st.st_size)
            self._take(rel, st, cached.get(rel), result, updates)
        return result, updates

    def _take(
        self,
        rel: str,
        st: os.stat_result,
        row: FileRow | None,
        result: ScanResult,
        updates: list[tuple[object, ...]],
    ) -> None:
        """Put one listed file's entry into ``result``: its cached row while its size and
        mtime are unchanged, else parsed anew (and its new row added to ``updates``)."""
        if row is not None and row[1] == st.st_mtime_ns and row[2] == st.st_size:
            result.entries[rel] = _cached_entry(row)
            return
        sha, memory, problem_list = parse_file(self.root / rel, rel, self.max_bytes)
        result.entries[rel] = Entry(rel, sha, memory, tuple(problem_list))
        result.changed.append(rel)
        updates.append(file_row(rel, st, sha, memory, problem_list))

    def refresh(self, rels: Iterable[str]) -> None:
        """Re-read given files now (after memvault itself wrote or removed them)."""
        rels = [rel for rel in rels if rel.split("/", 1)[0] in ALL_TREES]  # (not the config)
        if not rels:
            return
        rows: list[tuple[object, ...]] = []
        gone: list[str] = []
        for rel in rels:
            abs_path = self.root / rel
            if not abs_path.exists():
                gone.append(rel)
                continue
            sha, memory, problems = parse_file(abs_path, rel, self.max_bytes)
            rows.append(file_row(rel, abs_path.lstat(), sha, memory, problems))
        self._store(rows, gone)

    def put_many(self, items: Iterable[tuple[str, Memory, str]]) -> None:
        """Record files memvault itself just wrote, ``(rel, memory, text)``, without parsing
        them back (see :meth:`put`)."""
        rows: list[tuple[object, ...]] = []
        gone: list[str] = []
        for rel, memory, text in items:
            try:
                st = os.lstat(os.path.join(self.root, rel))
            except FileNotFoundError:  # moved away meanwhile (a hand ``git stash -u``)
                gone.append(rel)
                continue
            rows.append(file_row(rel, st, sha256_hex(text), memory, []))
        self._store(rows, gone)

    def forget(self, rels: Iterable[str]) -> None:
        """Drop files memvault itself just removed (no stat: they are gone)."""
        self._store([], list(rels))

    def _store(self, rows: list[tuple[object, ...]], gone: list[str]) -> None:
        """Upsert ``rows`` and delete ``gone`` in one transaction; each folder's names are
        rewritten once (not once per file: a folder may hold 100,000 memories)."""
        if not rows and not gone:
            return
        conn = connect(self.db_path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            write_rows(conn, rows, gone)
            note_names(conn, [str(row[0]) for row in rows], gone)
            note_written(conn, [*(str(row[0]) for row in rows), *gone])
            conn.execute("COMMIT")
        finally:
            conn.close()

    def quick_sync(self, trees: Iterable[str] = ALL_TREES) -> list[str]:
        """Catch files created, deleted or renamed since the last look, cheaply.

        Only folders are stat-ed; a folder whose mtime moved is re-listed and its new files
        parsed, its vanished files dropped. Returns the paths that changed. Files edited in
        place keep their old entry until the next :meth:`scan`.
        """
        trees = tuple(trees)
        conn = connect(self.db_path)
        try:
            blobs: dict[str, str | None] = {}
            known: dict[str, int] = {}
            for path, stamp, blob in conn.execute("SELECT path, mtime_ns, names FROM dirs"):
                known[path] = stamp
                blobs[path] = blob
            folders = list_folders(self.root, trees, known)
            stale = [rel for rel, (_, names) in folders.items() if names is not None]
            gone_dirs = [
                rel for rel in known if rel.split("/", 1)[0] in trees and rel not in folders
            ]
            if not stale and not gone_dirs:
                return []
            updates: list[tuple[object, ...]] = []
            removed: list[str] = []
            for rel in gone_dirs:
                removed += [
                    row[0] for row in conn.execute(*under(rel)) if "/" not in row[0][len(rel) + 1 :]
                ]
            for rel in stale:
                names = set(folders[rel][1] or ())
                blob = blobs.get(rel)
                if blob is not None:  # one row instead of one per file (a folder may hold 10,000)
                    cached = set(blob.split("\0")) if blob else set()
                else:
                    cached = {row[0][len(rel) + 1 :] for row in conn.execute(*under(rel))}
                    cached = {n for n in cached if "/" not in n}
                removed += [f"{rel}/{n}" for n in cached - names]
                for name in sorted(names - cached):
                    path = f"{rel}/{name}"
                    try:
                        st = os.lstat(os.path.join(self.root, path))
                    except OSError:
                        continue
                    if _S_ISDIR(st.st_mode):
                        continue  # a folder named like a memory file: the full scan walks it
                    peeked = _peek_id(self.root / path)
                    if peeked is not None:
                        # Its id is all an id check needs; parsing YAML would import ruamel.
                        # mtime -1: the next full scan or entry() parses it.
                        updates.append((path, -1, -1, "", peeked, None, None, "[]"))
                        continue
                    sha, memory, problems = parse_file(self.root / path, path, self.max_bytes)
                    updates.append(file_row(path, st, sha, memory, problems))
            conn.execute("BEGIN IMMEDIATE")
            write_rows(conn, updates, removed)
            conn.executemany("DELETE FROM dirs WHERE path=?", [(p,) for p in gone_dirs])
            note_written(conn, [*(str(u[0]) for u in updates), *removed])
            conn.executemany(
                "INSERT OR REPLACE INTO dirs VALUES (?,?,?)",
                [(rel, folders[rel][0], "\0".join(sorted(folders[rel][1] or ()))) for rel in stale],
            )
            conn.execute("COMMIT")
            return [str(u[0]) for u in updates] + removed
        finally:
            conn.close()

    def with_subject(self, subject: str) -> list[Entry]:
        """The valid entries whose ``subject`` is this one, as last seen."""
        conn = connect(self.db_path)
        try:
            rows = conn.execute(_ROW + " WHERE subject = ? AND doc IS NOT NULL", (subject,))
            return [_cached_entry(row) for row in rows]
        finally:
            conn.close()

    def without_subject(self, tree: str) -> list[Entry]:
        """The valid entries under the folder ``tree`` that have no ``subject``, each as its
        file is now: those known only by name (seen by :meth:`quick_sync`) or changed since
        they were read are re-read first. A query and a stat per entry: no walk, no git."""
        # (rows known only by name, mtime -1, have no subject: quick_sync writes them so)
        where = f" WHERE {NO_SUBJECT} AND path >= ? AND path < ? AND (mtime_ns = -1 OR "
        where += "doc IS NOT NULL)"
        prefix = (f"{tree}/", f"{tree}0")  # ("0" follows "/")
        for _ in range(2):
            conn = connect(self.db_path)
            try:
                rows = conn.execute(_ROW + where, prefix).fetchall()
            finally:
                conn.close()
            moved = [row[0] for row in rows if _moved(self.root, row[0], row[1], row[2])]
            if not moved:
                break
            self.refresh(moved)
        return [_cached_entry(row) for row in rows if row[1] != -1 and row[6] is not None]

    def paths_with_id(self, memory_id: str) -> list[str]:
        """Files whose ``id`` is ``memory_id``, as last seen (see :meth:`quick_sync`)."""
        conn = connect(self.db_path)
        try:
            return [
                row[0] for row in conn.execute("SELECT path FROM files WHERE id=?", (memory_id,))
            ]
        finally:
            conn.close()

    def shas(self) -> dict[str, str]:
        """Every file's sha as last recorded, without a walk or a parse ("": not parsed yet):
        a reader keeping its own parsed copies asks :meth:`entry` for the few that moved."""
        conn = connect(self.db_path)
        try:
            return {row[0]: row[1] or "" for row in conn.execute("SELECT path, sha FROM files")}
        finally:
            conn.close()

    def entry(self, rel: str) -> Entry | None:
        """One file's entry, re-read if its size or mtime changed since it was cached."""
        try:
            st = os.lstat(os.path.join(self.root, rel))
        except OSError:
            self.refresh([rel])
            return None
        conn = connect(self.db_path)
        try:
            row = conn.execute(_ROW + " WHERE path=?", (rel,)).fetchone()
        finally:
            conn.close()
        if row is not None and row[1] == st.st_mtime_ns and row[2] == st.st_size:
            return _cached_entry(row)
        sha, memory, problems = parse_file(self.root / rel, rel, self.max_bytes)
        conn = connect(self.db_path)
        try:
            conn.execute("BEGIN IMMEDIATE")
            write_rows(conn, [file_row(rel, st, sha, memory, problems)], [])
            note_written(conn, [rel])
            conn.execute("COMMIT")
        finally:
            conn.close()
        return Entry(rel, sha, memory, tuple(problems))

    def put(self, rel: str, memory: Memory, text: str) -> None:
        """Record a file memvault itself just wrote from ``memory`` (no re-parse)."""
        self.put_many([(rel, memory, text)])

    def clear(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.db_path) + suffix)
            except FileNotFoundError:
                pass


def _record(root: Path, view: GitView, result: ScanResult) -> dict[str, object] | None:
    """What the catalog keeps of a scan that read every file it had to: git's commit and
    the paths differing from it -- plus those the scan re-read that changed after git
    looked (put back later, no git answer would name them; by ctime, which a copy keeping
    an old mtime still moves) and those it dropped."""
    if view.differing is None:
        return None
    late = {p for p in result.changed if changed_since(root, p, view.taken_ns)}
    differing = late.union(view.differing, result.removed)
    if len(differing) > DIRTY_LIMIT:
        return None
    return {"commit": view.head, "dirty_paths": sorted(differing)}


def _moved(root: Path, rel: str, mtime_ns: int, size: int) -> bool:
    """Whether the file is not as its row was read (gone, or another mtime or size)."""
    try:
        st = os.lstat(os.path.join(root, rel))
    except OSError:
        return True
    return (st.st_mtime_ns, st.st_size) != (mtime_ns, size)


def changed_since(root: Path, rel: str, ns: int) -> bool:
    """Whether the file's inode changed at ``ns`` or later (gone: yes)."""
    try:
        return os.lstat(os.path.join(root, rel)).st_ctime_ns >= ns
    except OSError:
        return True


def _cached_entry(row: FileRow) -> Entry:
    """The entry of an unchanged file's row: its memory is decoded from ``doc`` only when
    asked for."""
    return Entry(
        row[0],
        row[3],
        None,
        decode_problems(row[7]),
        doc=row[6],
        memory_id=row[4],
        subject=row[5],
    )


def _peek_id(path: Path) -> str | None:
    """The ``id`` of a memory file read off its plain ``id: value`` line, without a YAML
    parser; None when the file doesn't make that obvious (then it is parsed)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(16384)
    except OSError:
        return None
    try:
        text = head.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError:
        return None
    lines = text.splitlines()
    if path.suffix == ".md":
        if not lines or lines[0].rstrip() != "---":
            return None
        try:
            end = next(i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "..."))
        except StopIteration:
            return None
        lines = lines[1:end]
    found = [line[3:].strip() for line in lines if line.startswith("id:")]
    if len(found) != 1:
        return None
    value = found[0]
    if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    from ..memory import ID_RE

    return value if ID_RE.match(value) else None


def load_one(root: Path, rel: str, max_bytes: int) -> Memory:
    """Load one file bypassing the cache (raises ValidationError)."""
    doc = load_document(root / rel, rel, max_bytes)
    problems = validate_meta(doc.meta, rel)
    if problems:
        raise ValidationError(problems[0].message, rel, problems[0].key, problems)
    return doc.to_memory()
