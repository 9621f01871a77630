"""The access log: one JSON line per read, appended to ``.memvault/access.log`` (ignored
by git). Reads never rewrite tracked files; consolidation later folds the log into the
memories' ``access_count`` / ``last_accessed``, and ``stats`` reads usage from it.

Each record is written with a single ``write`` on a file opened ``O_APPEND``, so lines
from concurrent readers never interleave (POSIX appends are atomic for one write).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..memory import format_time, now_utc
from ..paths import ACCESS_LOG

if TYPE_CHECKING:  # pragma: no cover
    from ..repository import Repository

MAX_QUERY_CHARS = 500


def log_access(
    root: Path,
    cmd: str,
    query: str,
    ids: Sequence[str],
    ms: float,
    agent: str | None = None,
    **extra: object,
) -> None:
    """Append one ``{"ts", "kind": "query", "cmd", "q", "ids", "ms", "agent"}`` record.

    Never raises: a read must not fail because its log line could not be written (a
    read-only checkout, a full disk); a warning goes to stderr instead.
    """
    record: dict[str, object] = {
        "ts": format_time(now_utc()),
        "kind": "query",
        "cmd": cmd,
        "q": query[:MAX_QUERY_CHARS],
        "ids": list(ids),
        "ms": round(float(ms), 1),
        "agent": agent,
    }
    record.update({k: v for k, v in extra.items() if v is not None})
    line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    path = root / ACCESS_LOG
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            _warn(exc)
            return
    except OSError as exc:
        _warn(exc)
        return
    try:
        os.write(fd, line)
    except OSError as exc:
        _warn(exc)
    finally:
        os.close(fd)


def _warn(exc: OSError) -> None:
    print(f"memvault: could not write the access log ({exc.strerror or exc})", file=sys.stderr)


def log_read(vault: Repository, cmd: str, query: str, ids: Sequence[str], ms: float) -> None:
    """One line in the access log: who read what, with which query."""
    log_access(vault.root, cmd, query, ids, ms, vault.identity.agent)
