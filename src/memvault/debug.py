"""Debug mode: a per-user switch for each vault, and the trace a read records while it is on.

**Where the switch lives.** ``memvault debug on`` writes the vault's resolved path into
``debug.json`` in the user's cache folder (:func:`memvault.paths.user_cache_dir`, which
honours ``$MEMVAULT_CACHE_DIR``). Not in ``.memvault/config.yaml``: that file is tracked,
so the switch would reach every teammate with the next push and dirty the work tree. Not
in ``.git/`` either: every user of a shared checkout (a server clone, a team share) would
see the others' switch, a reader may not be allowed to write there, and a worktree's
``.git`` is a file. The cache folder is already where memvault keeps per-user things
(converted models, crash logs); wiping it only switches debugging off, the safe default.
``$MEMVAULT_DEBUG`` (1/on/true/yes or 0/off/false/no) overrides the file for one process.

**What a trace holds.** An adapter runs a read inside :func:`tracing`; while a trace is
active the search code adds to it: notes (route, options, identity), command-level stages
and, for each ranked query, its plan and filters, timings per stage (:func:`lap`) and the
raw candidates (:func:`keep`), summarised by :mod:`memvault.search.tracing`. With no
active trace each of these calls costs one context-variable lookup.
"""

from __future__ import annotations

import contextvars
import json
import os
import time
from contextlib import contextmanager
from pathlib import Path

from .errors import ConfigError, MemvaultError
from .paths import DEBUG_STATE, user_cache_dir
from .values import TYPE_CHECKING, Record, field

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Iterator
    from typing import Any

ENV = "MEMVAULT_DEBUG"
_ON = ("1", "on", "true", "yes")
_OFF = ("0", "off", "false", "no")


# --- the switch ---------------------------------------------------------------------------


class Setting(Record, frozen=True):
    """Whether debug mode is on for a vault, and what decided it (env|user|default)."""

    vault: Path
    on: bool
    source: str  # "env" ($MEMVAULT_DEBUG), "user" (the state file) or "default" (off)
    file: Path  # the per-user state file
    since: str | None = None  # when `debug on` was run (the state file's record)

    def as_dict(self) -> dict[str, Any]:
        return {
            "vault": str(self.vault),
            "debug": "on" if self.on else "off",
            "on": self.on,
            "source": self.source,
            "file": str(self.file),
            "since": self.since,
            "env": os.environ.get(ENV) or None,
        }


def state_file() -> Path:
    """The per-user file naming the vaults debug mode is on for."""
    return user_cache_dir() / DEBUG_STATE


def _key(root: Path) -> str:
    return str(Path(root).resolve())


def _env_override() -> bool | None:
    raw = os.environ.get(ENV)
    if raw is None or not raw.strip():
        return None
    value = raw.strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    raise ConfigError(f"expected one of {'|'.join(_ON + _OFF)}, got {raw!r}", key=ENV)


def _read_state(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # missing or damaged: debugging is off (the next `debug on` rewrites it)
    vaults = data.get("vaults") if isinstance(data, dict) else None
    return vaults if isinstance(vaults, dict) else {}


def setting(root: Path) -> Setting:
    """Debug mode for the vault at ``root``: ``$MEMVAULT_DEBUG``, else this user's switch."""
    path = state_file()
    key = _key(root)
    record = _read_state(path).get(key)
    since = record.get("since") if isinstance(record, dict) else None
    forced = _env_override()
    if forced is not None:
        return Setting(Path(key), forced, "env", path, since)
    if record:
        return Setting(Path(key), True, "user", path, since)
    return Setting(Path(key), False, "default", path)


def enabled(root: Path) -> bool:
    return setting(root).on


def switch(root: Path, on: bool) -> Setting:
    """Turn debug mode on or off for the vault at ``root``, for this user only."""
    from .memory import format_time, now_utc
    from .store.files import atomic_write

    path = state_file()
    vaults = _read_state(path)
    key = _key(root)
    if on:
        vaults[key] = {"since": format_time(now_utc())}
    else:
        vaults.pop(key, None)
    try:
        atomic_write(path, json.dumps({"vaults": vaults}, indent=2, sort_keys=True) + "\n")
    except OSError as exc:
        raise MemvaultError(f"cannot write: {exc.strerror or exc}", str(path)) from None
    return setting(root)


# --- the trace ----------------------------------------------------------------------------


class QueryTrace(Record):
    """One ranked query: its plan, timings per stage, and (until summarised) the raw
    candidates the ranking kept."""

    query: str
    plan: dict[str, Any]
    mark: float = field(
        default_factory=time.perf_counter
    )  # when the previous stage ended (perf_counter)
    stages: list[tuple[str, float]] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)  # legs, found: objects of the ranking
    summary: dict[str, Any] = field(default_factory=dict)  # top candidates per leg, fused

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "plan": self.plan,
            "timings_ms": {name: round(ms, 2) for name, ms in self.stages},
            **self.summary,
        }


class Trace(Record):
    """What one read command (or MCP tool call) did, for ``debug`` output."""

    command: str
    started: float = field(default_factory=time.perf_counter)
    notes: dict[str, Any] = field(default_factory=dict)
    stages: list[tuple[str, float]] = field(default_factory=list)
    queries: list[QueryTrace] = field(default_factory=list)
    ms: float | None = None  # set when the trace ends

    def as_dict(self) -> dict[str, Any]:
        total = self.ms if self.ms is not None else (time.perf_counter() - self.started) * 1000
        return {
            "command": self.command,
            **self.notes,
            "timings_ms": {
                **{name: round(ms, 2) for name, ms in self.stages},
                "total": round(total, 2),
            },
            "queries": [q.as_dict() for q in self.queries],
        }


_current: contextvars.ContextVar[Trace | None] = contextvars.ContextVar(
    "memvault_trace", default=None
)


def current() -> Trace | None:
    """The active trace, or None (debug mode off, or not inside a read)."""
    return _current.get()


def start(command: str) -> contextvars.Token[Trace | None]:
    return _current.set(Trace(command))


def stop(token: contextvars.Token[Trace | None] | None = None) -> Trace | None:
    """End the active trace; returns it (None when there was none)."""
    trace = _current.get()
    if trace is not None and trace.ms is None:
        trace.ms = (time.perf_counter() - trace.started) * 1000
    if token is not None:
        _current.reset(token)
    else:
        _current.set(None)
    return trace


@contextmanager
def tracing(command: str) -> Iterator[Trace]:
    """Record what the reads inside the block do."""
    token = start(command)
    trace = _current.get()
    assert trace is not None
    try:
        yield trace
    finally:
        stop(token)


def note(key: str, value: Any) -> None:
    """Record ``value`` (plain JSON data) under ``key`` in the active trace."""
    trace = _current.get()
    if trace is not None:
        trace.notes[key] = value


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Time a command-level stage (opening the vault, reading the files, ...)."""
    trace = _current.get()
    if trace is None:
        yield
        return
    began = time.perf_counter()
    try:
        yield
    finally:
        trace.stages.append((name, (time.perf_counter() - began) * 1000))


def begin_query(query: str, plan: dict[str, Any]) -> QueryTrace | None:
    """Start recording a ranked query (its timings run from here)."""
    trace = _current.get()
    if trace is None:
        return None
    entry = QueryTrace(query, plan)
    trace.queries.append(entry)
    return entry


def _open_query() -> QueryTrace | None:
    trace = _current.get()
    return trace.queries[-1] if trace is not None and trace.queries else None


def lap(name: str) -> None:
    """Close a stage of the current query: the time since its previous stage ended."""
    entry = _open_query()
    if entry is not None:
        now = time.perf_counter()
        entry.stages.append((name, (now - entry.mark) * 1000))
        entry.mark = now


def keep(name: str, value: Any) -> None:
    """Hold an object of the ranking (the legs, the fused candidates) for the summary."""
    entry = _open_query()
    if entry is not None:
        entry.raw[name] = value


def plain(value: Any, _depth: int = 0) -> Any:
    """``value`` as plain JSON data (times in memvault's format, records as mappings)."""
    import datetime as dt

    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if _depth > 8:
        return str(value)
    if isinstance(value, (dt.datetime, dt.date)):
        from .memory import format_time

        return format_time(value)
    if isinstance(value, dict):
        return {str(k): plain(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v, _depth + 1) for v in value]
    if isinstance(value, Record):
        fields = {name: getattr(value, name) for name in value._fields}
    elif callable(getattr(value, "as_dict", None)):
        fields = value.as_dict()
    else:
        return str(value)
    # the fields that say something: left at None/empty/False they restrict nothing
    return {
        k: plain(v, _depth + 1) for k, v in fields.items() if v not in (None, (), [], "", False)
    }
