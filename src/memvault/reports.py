"""Read-only reports over a vault: recent episodes, stats, doctor, file checks."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .core import Core
from .errors import JournalError, Problem
from .memory import Memory, now_utc
from .metrics import WINDOW_DAYS, seed_metrics, usage, window
from .paths import ACCESS_LOG, ALL_TREES, MEMORY_TYPES
from .scopes import Filters
from .search.accesslog import read_log, read_reads
from .security import find_secrets
from .store.tree import is_memory_file


def recent_episodes(vault: Core, last: int, include_transcripts: bool = True) -> list[Memory]:
    items = vault.memories(Filters(type="episodic"))
    if not include_transcripts:
        items = [m for m in items if m.category != "transcript"]
    items.sort(
        key=lambda m: (
            str(m.get("updated", "")) if m.category == "transcript" else "",
            str(m.get("created", "")),
            m.id,
        ),
        reverse=True,
    )
    items.sort(key=lambda m: str(m.get("created", "")), reverse=True)
    return items[:last]


def read_access_log(root: Path) -> list[dict[str, Any]]:
    """The live access log's records (reads not folded yet)."""
    return read_log(root / ACCESS_LOG)


def usage_stats(
    root: Path, visible: set[str] | None = None, days: int = WINDOW_DAYS
) -> dict[str, Any]:
    """Reads of the last ``days`` days (:func:`memvault.metrics.usage`); ``most_recalled``
    names only ``visible`` ids (the log holds every agent's reads, and an id of another
    agent's ``self`` memory is theirs)."""
    return usage(read_reads(root), window(root, days), visible)


def vault_stats(
    vault: Core, days: int = WINDOW_DAYS, now: dt.datetime | None = None
) -> dict[str, Any]:
    """Counts of what the reader sees, usage over the window and seed 004's metrics
    (definitions: :mod:`memvault.metrics`)."""
    win = window(vault.root, days, now)  # first: a bad ``days`` fails before the scan
    scan = vault.scan()
    visible = [m for m in scan.memories if vault.identity.can_see(m)]
    live = [m for m in visible if not m.path.startswith(("archive/", "inbox/"))]
    created = sorted(str(m.get("created")) for m in live if m.get("created"))
    seen = {m.id for m in visible}
    hidden = {m.id for m in scan.memories} - seen
    records = read_reads(vault.root)
    return {
        "total": len(live),
        "by_type": dict(Counter(m.type for m in live)),
        "by_category": dict(Counter(f"{m.type}/{m.category}" for m in live)),
        "by_status": dict(Counter(m.status for m in visible)),
        "by_scope": dict(Counter(m.scope for m in live)),
        "oldest": created[0] if created else None,
        "newest": created[-1] if created else None,
        "archive": sum(1 for m in visible if m.path.startswith("archive/")),
        "inbox": sum(1 for m in visible if m.path.startswith("inbox/")),
        "invalid": len(scan.invalid),
        "window": win.as_dict(),
        "usage": usage(records, win, seen),
        "metrics": seed_metrics(vault, visible, hidden, win, records),
    }


def missing_merge_rules(root: Path) -> list[str]:
    """The merge rules of a new vault's ``.gitattributes`` that this vault's lacks (a vault
    made before they existed): without them two clones that both consolidated conflict on
    the usage file and the tracked logs when they sync."""
    from .store.repository import template_dir

    path = root / ".gitattributes"
    if not path.exists():
        return []
    have = {
        line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
    }
    wanted = (template_dir() / "dot-gitattributes").read_text(encoding="utf-8").splitlines()
    lacking = [
        w.strip() for w in wanted if w.strip() and not w.startswith("#") and w.strip() not in have
    ]
    if not lacking:
        return []
    return [
        f".gitattributes lacks {', '.join(repr(x) for x in lacking)}: add the line(s) and "
        "commit, so two clones merge their usage records and logs (docs/lifecycle.md)"
    ]


def doctor_report(vault: Core, repair: bool = False) -> dict[str, Any]:
    """Every problem a person should fix, each naming the file and the key; notes; and the
    search index (``index``: its embedder, and a new index being built beside it).

    ``repair``: first undo an interrupted write that could not be undone (what can't be
    is set aside, see :func:`memvault.store.journal.recover`)."""
    problems: list[Problem] = []
    repaired: list[str] = []
    if repair:
        with vault.locked():  # a writer's lock: it undoes an interrupted write, forcing
            pass
        done = vault.last_recovery
        if done is not None:
            repaired.append(f"undid an interrupted write ({len(done.restored)} file(s) put back)")
            if done.kept:
                repaired.append(f"could not undo all of it: its saved copies are in {done.kept}")
    try:
        scan = vault.scan()
    except JournalError as exc:  # reported, and the files are read as they are
        problems.append(Problem(exc.path, exc.key, exc.message))
        scan = vault.catalog.scan()
    for entry in scan.invalid:
        problems.extend(entry.problems)
    by_id: dict[str, list[str]] = {}
    for m in scan.memories:
        by_id.setdefault(m.id, []).append(m.path)
    for mid, paths in sorted(by_id.items()):
        if len(paths) > 1:
            for p in paths[1:]:
                problems.append(Problem(p, "id", f"duplicate id {mid!r} (also in {paths[0]})"))
    ids = set(by_id)
    for m in scan.memories:
        for key in ("related", "supersedes", "superseded_by", "derived_from"):
            value = m.meta.get(key)
            targets = value if isinstance(value, list) else [value] if value else []
            for target in targets:
                if isinstance(target, str) and target not in ids:
                    problems.append(
                        Problem(m.path, key, f"links to {target!r}, which does not exist")
                    )
        tree = m.path.split("/", 1)[0]
        if tree in MEMORY_TYPES and tree != m.type:
            problems.append(Problem(m.path, "type", f"is {m.type!r} but the file is under {tree}/"))
    notes: list[str] = []
    stray = _stray_files(vault.root)
    for rel in stray:
        problems.append(
            Problem(
                rel,
                None,
                "memory-like file outside episodic/, semantic/, procedural/, archive/, inbox/",
            )
        )
    from .index import health
    from .index.migrate import describe

    notes.extend(repaired)
    notes.extend(missing_merge_rules(vault.root))
    notes.extend(health(vault))  # names both embedders while the index is being switched
    return {
        "checked": len(scan.entries),
        "problems": [{**p.as_dict(), "text": str(p)} for p in problems],
        "notes": notes,
        "index": describe(vault),  # its embedder; the index being built beside it, how far
    }


def _stray_files(root: Path) -> list[str]:
    out = []
    for item in sorted(root.iterdir()):
        if (
            item.is_file()
            and is_memory_file(item.name)
            and item.name not in ("README.md", "CHANGELOG.md")
        ):
            text = item.read_text(encoding="utf-8", errors="replace")[:200]
            if text.startswith("---") and "\ntype:" in text:
                out.append(item.name)
    return out


def check_files(vault: Core, paths: Sequence[Path]) -> list[Problem]:
    """Validate given files (or all): schema, YAML, secrets. For hooks and CI."""
    from .store.catalog import parse_file

    if not paths:
        scan = vault.scan()
        problems = [p for e in scan.invalid for p in e.problems]
        seen: dict[str, str] = {}
        for entry in sorted(scan.entries.values(), key=lambda e: e.path):
            if entry.valid and entry.id:
                if entry.id in seen:
                    problems.append(
                        Problem(
                            entry.path,
                            "id",
                            f"duplicate id {entry.id!r} (also in {seen[entry.id]})",
                        )
                    )
                else:
                    seen[entry.id] = entry.path
        for m in scan.memories:
            problems.extend(_secret_problems(vault, m.path))
        return problems
    problems = []
    max_bytes = vault.config.int("limits.max_file_bytes")
    checked: dict[str, str] = {}  # id -> rel path, to catch duplicate ids
    for path in paths:
        abs_path = path if path.is_absolute() else (Path.cwd() / path)
        if not path.is_absolute() and not abs_path.exists() and (vault.root / path).exists():
            abs_path = vault.root / path  # a vault-relative path given from elsewhere (--vault)
        try:
            rel = (
                abs_path.resolve().relative_to(vault.root).as_posix()
                if not abs_path.is_symlink()
                else abs_path.relative_to(vault.root).as_posix()
            )
        except ValueError:
            problems.append(Problem(str(path), None, "outside the vault"))
            continue
        if not is_memory_file(abs_path.name) or rel.split("/", 1)[0] not in ALL_TREES:
            continue
        _, memory, found = parse_file(abs_path, rel, max_bytes)
        problems.extend(found)
        if memory is not None:
            problems.extend(_secret_problems(vault, rel))
            if memory.id in checked:
                problems.append(
                    Problem(rel, "id", f"duplicate id {memory.id!r} (also in {checked[memory.id]})")
                )
            checked[memory.id] = rel
    if checked:
        for entry in vault.scan().entries.values():
            if (
                entry.valid
                and entry.id in checked
                and entry.path != checked[entry.id]
                and entry.path not in checked.values()
            ):
                problems.append(
                    Problem(
                        checked[entry.id], "id", f"duplicate id {entry.id!r} (also in {entry.path})"
                    )
                )
    return problems


def _secret_problems(vault: Core, rel: str) -> list[Problem]:
    security = vault.config.get("security") or {}
    if security.get("secrets") == "allow":
        return []
    text = (vault.root / rel).read_text(encoding="utf-8", errors="replace")
    return [
        Problem(rel, "content", f"looks like a {f.kind} ({f.excerpt})")
        for f in find_secrets(text, security)
    ]


def age_days(memory: Memory) -> float:
    created = memory.created
    return (now_utc() - created).total_seconds() / 86400 if created else 0.0
