"""Where the index lives: ``.memvault/index/`` (ignored by git, safe to delete).

* ``manifest.json``: schema version, embedder identity and dimensions, chunk size, the
  commit and write generation it reflects, counts. A mismatch with the settings means a
  rebuild, never a mix of vectors from two models.
* ``search.sqlite``: the per-memory part of the manifest (path, id, sha of the file,
  hash of the indexed text, the filter columns), the chunks, and an FTS5 keyword index
  (``porter unicode61``: English stemming, any script tokenised).
* ``chroma/``: a Chroma ``PersistentClient`` holding one vector per chunk, id the chunk's
  row number (on a shared server, the hash of its text). Filters never go to Chroma:
  SQLite decides what a reader may see, Chroma ranks (see :mod:`memvault.index.query`).
  While searches score vectors exactly, its writes wait in ``search.sqlite``
  (:mod:`memvault.index.pending`).

``search.sqlite`` and ``chroma/`` sit in the index folder itself, or in a ``build-<hex>/``
folder beside them that the manifest names (``"home"``): an index built for another
embedder while the old one kept serving (:mod:`memvault.index.migrate`). Switching to it
is one atomic replace of ``manifest.json``; ``shadow.json`` says which build folder is
in progress, for which header, and how far it got.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import IndexError_
from ..paths import INDEX_DIR
from ..store.files import atomic_write

SCHEMA = 5  # what the manifest says of the index's layout: another one means a rebuild
# search.sqlite's own version (``PRAGMA user_version``). 6 added Chroma's write queue: a
# version-5 file is upgraded in place by the first update (an older memvault, finding 6,
# rebuilds instead of writing Chroma behind the queue's back).
FILE_VERSION = 6
DB_NAME = "search.sqlite"
MANIFEST_NAME = "manifest.json"
CHROMA_DIR = "chroma"
SHADOW_NAME = "shadow.json"  # the index being built beside the live one (see migrate.py)
BUILD_LOCK = "build.lock"  # one builder of a shadow index at a time
COLLECTION = "memories"
_HOME = re.compile(r"^build-[0-9a-f]{6,32}$")
# Exact and reproducible HNSW: the same vectors give the same neighbours after a rebuild.
HNSW = {"hnsw:space": "cosine", "hnsw:search_ef": 500, "hnsw:construction_ef": 200}

DDL = """
CREATE TABLE docs (
  key INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  id TEXT NOT NULL,
  type TEXT NOT NULL,
  category TEXT,
  scope TEXT,
  agent TEXT,
  team TEXT,
  status TEXT,
  created REAL,
  valid_from REAL,
  valid_to REAL,
  importance INTEGER,
  relevance REAL,
  success_rate REAL,
  session TEXT,
  subject TEXT,
  tags TEXT,
  title TEXT,
  speakers TEXT,
  triggers TEXT,
  lead TEXT,
  lang TEXT,
  kw_lead TEXT,
  doc TEXT,
  ctx_hash TEXT,
  sha TEXT NOT NULL,
  text_hash TEXT NOT NULL,
  nchunks INTEGER NOT NULL
);
CREATE INDEX docs_id ON docs(id);
CREATE INDEX docs_session ON docs(session);
CREATE INDEX docs_text ON docs(text_hash);
CREATE TABLE chunks (
  rowid INTEGER PRIMARY KEY,
  doc INTEGER NOT NULL,
  n INTEGER NOT NULL,
  hash TEXT NOT NULL,
  text TEXT,
  vec BLOB,
  chash TEXT,
  cvec BLOB,
  turn TEXT,
  speaker TEXT,
  role TEXT,
  at REAL,
  UNIQUE (doc, n)
);
CREATE TABLE files (
  path TEXT PRIMARY KEY,
  mtime_ns INTEGER NOT NULL,
  size INTEGER NOT NULL
);
CREATE VIRTUAL TABLE fts USING fts5(head, body, ctx, tokenize = 'porter unicode61');
"""


class transaction:  # noqa: N801 - used as a context manager, like a function
    """``with transaction(conn):`` ``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, kind: object, *_: object) -> None:
        self.conn.execute("COMMIT" if kind is None else "ROLLBACK")


class CorruptIndex(Exception):
    """Raised inside the index package when its files can't be read; callers rebuild."""


def raise_if_busy(exc: BaseException) -> None:
    """A database another process keeps locked past the wait is busy, not damaged: say so
    (a one-line error) rather than rebuild it."""
    if "database is locked" in str(exc) or "database is busy" in str(exc):
        raise IndexError_(
            "the search index is busy: another memvault process is writing it; try again",
            INDEX_DIR,
        ) from None


def index_dir(root: Path) -> Path:
    return root / INDEX_DIR


def data_dir(root: Path, home: str = "") -> Path:
    """Where an index's ``search.sqlite`` and ``chroma/`` live: the index folder, or the
    build folder ``home`` inside it."""
    if not home:
        return index_dir(root)
    if not _HOME.match(home):
        raise CorruptIndex(f"manifest.json names an unknown index folder {home!r}")
    return index_dir(root) / home


def home_of(manifest: Mapping[str, Any]) -> str:
    """The build folder a manifest's index lives in ("" for the index folder itself)."""
    home = manifest.get("home") or ""
    if not isinstance(home, str) or (home and not _HOME.match(home)):
        raise CorruptIndex(f"manifest.json names an unknown index folder {home!r}")
    return home


def new_home() -> str:
    return f"build-{secrets.token_hex(6)}"


def live_home(root: Path) -> str:
    """The build folder of the index the manifest names ("" if none or unreadable)."""
    try:
        manifest = read_manifest(root)
        return home_of(manifest) if manifest is not None else ""
    except CorruptIndex:
        return ""


def _read_json(path: Path, label: str) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, UnicodeDecodeError):
        raise CorruptIndex(f"{label} is unreadable") from None
    if not isinstance(data, dict):
        raise CorruptIndex(f"{label} is not an object")
    return data


def read_manifest(root: Path) -> dict[str, Any] | None:
    return _read_json(index_dir(root) / MANIFEST_NAME, MANIFEST_NAME)


def write_manifest(root: Path, data: dict[str, Any]) -> None:
    atomic_write(index_dir(root) / MANIFEST_NAME, json.dumps(data, indent=2, sort_keys=True) + "\n")


def manifest_mtime(root: Path) -> int:
    try:
        return (index_dir(root) / MANIFEST_NAME).stat().st_mtime_ns
    except FileNotFoundError:
        return 0


def manifest_stamp(root: Path) -> tuple[int, int]:
    """``(inode, mtime_ns)`` of the manifest: changes with every write (they replace it)."""
    try:
        st = (index_dir(root) / MANIFEST_NAME).stat()
    except FileNotFoundError:
        return (0, 0)
    return (st.st_ino, st.st_mtime_ns)


def read_shadow(root: Path) -> dict[str, Any] | None:
    """The state of the index being built beside the live one (None: none, or unreadable)."""
    try:
        return _read_json(index_dir(root) / SHADOW_NAME, SHADOW_NAME)
    except CorruptIndex:
        return None


def write_shadow(root: Path, data: dict[str, Any]) -> None:
    atomic_write(index_dir(root) / SHADOW_NAME, json.dumps(data, indent=2, sort_keys=True) + "\n")


def connect(root: Path, create: bool, home: str | None = None) -> sqlite3.Connection:
    """Open ``search.sqlite`` (creating the schema if asked). Raises :class:`CorruptIndex`.

    ``home``: the build folder (None: the one the manifest names now)."""
    path = data_dir(root, live_home(root) if home is None else home) / DB_NAME
    if not create and not path.exists():
        raise CorruptIndex("search.sqlite is missing")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(path, timeout=10, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version not in (FILE_VERSION, SCHEMA):
            if not create:
                conn.close()
                raise CorruptIndex(f"search.sqlite has version {version}, expected {FILE_VERSION}")
            tables = conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table','view')"
            ).fetchall()
            if tables:
                conn.close()
                raise CorruptIndex(f"search.sqlite has version {version}, expected {FILE_VERSION}")
            conn.executescript(DDL + PENDING_DDL + ";")
            conn.execute(f"PRAGMA user_version={FILE_VERSION}")
        # Cheap probe: a garbled file fails here rather than in the middle of a search.
        conn.execute("SELECT count(*) FROM docs").fetchone()
    except sqlite3.DatabaseError as exc:
        raise CorruptIndex(f"search.sqlite: {exc}") from None
    return conn


# Chroma's queued writes (memvault.index.pending).
PENDING_DDL = (
    "CREATE TABLE chroma_pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
    "type TEXT NOT NULL, vid TEXT NOT NULL, op TEXT NOT NULL, UNIQUE (type, vid))"
)


def upgrade(conn: sqlite3.Connection) -> None:
    """A version-5 file becomes version 6 (Chroma's write queue). Call inside a writer's
    transaction: readers take a missing queue for an empty one."""
    if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA:
        conn.execute(PENDING_DDL)
        conn.execute(f"PRAGMA user_version={FILE_VERSION}")


def remove_data(root: Path, home: str) -> None:
    """Delete one index's SQLite and Chroma files (not the manifest, not the catalog).
    Readers that have them open keep reading them (POSIX keeps unlinked files alive)."""
    release_chroma(root)
    if home:
        shutil.rmtree(data_dir(root, home), ignore_errors=True)
        return
    base = index_dir(root)
    _remove(base, (DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm"))
    shutil.rmtree(base / CHROMA_DIR, ignore_errors=True)
    shutil.rmtree(base / "flat", ignore_errors=True)  # memvault.index.flat's copy of the vectors


def _remove(base: Path, names: tuple[str, ...]) -> None:
    """Delete these entries of ``base`` if they are there (a folder where a file should be
    goes too: the index folder is ours to clean)."""
    for name in names:
        try:
            (base / name).unlink()
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            shutil.rmtree(base / name, ignore_errors=True)


def builds(root: Path) -> list[str]:
    """The build folders present in the index folder."""
    try:
        return sorted(p.name for p in index_dir(root).iterdir() if _HOME.match(p.name))
    except OSError:
        return []


def remove_all(root: Path) -> None:
    """Delete this index's files, and any index being built beside it (not the catalog,
    which has its own life)."""
    base = index_dir(root)
    _remove(base, (MANIFEST_NAME, SHADOW_NAME))
    remove_data(root, "")
    for home in builds(root):
        shutil.rmtree(base / home, ignore_errors=True)


# --- Chroma -------------------------------------------------------------------------

_chroma_lock = threading.Lock()


def chroma_client(root: Path, url: str | None = None, home: str = "") -> Any:
    """A Chroma client for this vault: embedded in ``.memvault/index/[<home>/]chroma`` or
    ``index.url``."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=True)
    if url:
        from urllib.parse import urlparse

        parsed = urlparse(url if "://" in url else f"http://{url}")
        return chromadb.HttpClient(
            host=parsed.hostname or "127.0.0.1",
            port=parsed.port or 8000,
            ssl=parsed.scheme == "https",
            settings=settings,
        )
    path = data_dir(root, home) / CHROMA_DIR
    path.mkdir(parents=True, exist_ok=True)
    with _chroma_lock:
        return chromadb.PersistentClient(path=str(path), settings=settings)


def collection_name(
    url: str | None, vault_id: str = "", branch: str = "", embedder: str = ""
) -> str:
    """The stem of a vault's collections (``-<type>`` is appended).

    Embedded, the Chroma folder belongs to one checkout: ``memories``. On a shared server
    the name says which vault (``index.vault_id``, or the root commit: the same in every
    clone), which branch and which embedder the vectors belong to, so every clone of the
    vault on that branch shares one collection and nothing else does. Within it a vector's
    id is the hash of the text it embeds, not a local row number (see
    :meth:`memvault.index.handle.Index.vector_ids`). Fits Chroma's rules: 3-512 characters of
    ``[a-zA-Z0-9._-]``, alphanumeric at both ends.
    """
    if not url:
        return COLLECTION
    import hashlib

    def clean(text: str, size: int) -> str:
        text = re.sub(r"[^A-Za-z0-9_-]+", "-", text)[:size]
        return re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", text)

    # The readable parts lose characters; the digest keeps "a/b" and "a-b" apart.
    digest = hashlib.sha1(f"{vault_id}\0{branch}\0{embedder}".encode()).hexdigest()[:12]
    parts = [p for p in (clean(vault_id, 40), clean(branch, 100)) if p]
    return "-".join(["mv", *parts, digest])


# Indexes that only make reads faster, created by the next update of an index built
# without them: the names of who speaks (every search's query reads them, see
# :func:`memvault.index.query.speaker_pattern`; without it, a scan of every document).
READ_INDEXES = ("CREATE INDEX IF NOT EXISTS docs_speakers ON docs(speakers)",)


def ensure_hash_index(conn: sqlite3.Connection) -> None:
    """Server mode maps Chroma ids (chunk hashes) back to rows: index them (under the lock;
    embedded indexes never need it)."""
    conn.execute("CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(hash)")


def get_collection(client: Any, name: str, create: bool) -> Any:
    if create:
        return client.get_or_create_collection(name, metadata=dict(HNSW), embedding_function=None)
    return client.get_collection(name, embedding_function=None)


def release_chroma(root: Path) -> None:
    """Forget cached Chroma systems for this path (before deleting or after a rebuild elsewhere)."""
    try:
        import sys

        if "chromadb" not in sys.modules:
            return
        from chromadb.api.shared_system_client import SharedSystemClient

        with _chroma_lock:
            SharedSystemClient.clear_system_cache()
    except Exception:  # noqa: BLE001 - best effort: the cache is an optimisation
        pass


def dir_size(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total
