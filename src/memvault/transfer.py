"""Export and import: JSONL (exact round-trip), a Markdown bundle, and the seeds' YAML.

A JSONL record carries the memory's fields *and* its file's exact text (``raw``) and
path, so importing an export recreates byte-identical files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import MemvaultError, Problem, ValidationError
from .files import check_text, render_new
from .memory import ID_RE, TYPES, format_time, parse_time, slugify, to_plain
from .security import check_secrets
from .vault import Vault

BUNDLE_MARK = "<!-- memvault:file "
_BUNDLE_RE = re.compile(r"^<!-- memvault:file (?P<path>\S+) -->\n", re.MULTILINE)
_SAFE_PATH_RE = re.compile(
    r"^(episodic|semantic|procedural|archive|inbox)/([A-Za-z0-9._-]+/)*[A-Za-z0-9._-]+\.(md|yaml|yml)$"
)


@dataclass
class ImportReport:
    added: int = 0
    skipped: int = 0
    commit: str | None = None
    ids: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "skipped": self.skipped,
            "commit": self.commit,
            "ids": self.ids,
            "problems": [str(p) for p in self.problems],
        }


def export_memories(vault: Vault, fmt: str, include_archive: bool = True) -> str:
    memories = [m for m in vault.all_memories() if vault.identity.can_see(m)]
    if not include_archive:
        memories = [m for m in memories if not m.path.startswith(("archive/", "inbox/"))]
    memories.sort(key=lambda m: m.path)
    if fmt == "jsonl":
        lines = []
        for m in memories:
            record = m.to_dict()
            record["raw"] = vault.raw_text(m)
            lines.append(json.dumps(record, ensure_ascii=False, sort_keys=False))
        return "".join(line + "\n" for line in lines)
    if fmt in ("markdown", "md"):
        parts = ["# memvault export\n\n"]
        for m in memories:
            raw = vault.raw_text(m)
            parts.append(
                f"{BUNDLE_MARK}{m.path} -->\n{raw}{'' if raw.endswith(chr(10)) else chr(10)}\n"
            )
        return "".join(parts)
    raise MemvaultError(f"expected jsonl or markdown, got {fmt!r}", key="format")


def _records_jsonl(
    text: str, source: str
) -> Iterator[tuple[str | None, dict[str, Any] | None, Problem | None]]:
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield None, None, Problem(f"{source}:{n}", None, f"invalid JSON: {exc.msg}")
            continue
        if not isinstance(record, dict):
            yield None, None, Problem(f"{source}:{n}", None, "expected a JSON object")
            continue
        yield f"{source}:{n}", record, None


def _from_record(vault: Vault, record: dict[str, Any], where: str) -> tuple[str, str]:
    """(relative path, file text) for one JSONL record."""
    raw, path = record.get("raw"), record.get("path")
    if (
        isinstance(raw, str)
        and isinstance(path, str)
        and _SAFE_PATH_RE.match(path)
        and ".." not in path
    ):
        memory = check_text(raw, path)
        return path, raw if memory else raw
    meta = {k: v for k, v in record.items() if k not in ("raw", "path", "content")}
    mtype = meta.get("type")
    if mtype not in TYPES:
        raise ValidationError(f"expected one of {'|'.join(TYPES)}, got {mtype!r}", where, "type")
    if not isinstance(meta.get("id"), str) or not ID_RE.match(meta["id"]):
        raise ValidationError(f"expected a memory id, got {meta.get('id')!r}", where, "id")
    meta.setdefault("created", format_time(parse_time(meta.get("created")) or _now()))
    rel = vault.path_for(meta)
    return rel, render_new(meta, str(record.get("content", "")))


def _now() -> Any:
    from .memory import now_utc

    return now_utc()


def _seed_episodes(text: str, where: str) -> list[dict[str, Any]]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="safe").load(text)
    except YAMLError as exc:
        raise ValidationError(f"invalid YAML: {str(exc).splitlines()[0]}", where) from None
    if not isinstance(data, dict) or not isinstance(data.get("episodes"), list):
        raise ValidationError("expected a mapping with an 'episodes:' list", where, "episodes")
    return [to_plain(e) for e in data["episodes"] if isinstance(e, dict)]


def _episode_record(ep: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Map the seed's EPISODE_SCHEMA onto memvault's keys (unknown keys kept)."""
    content = ep.get("content")
    summary = ep.get("summary")
    body_parts: list[str] = []
    if isinstance(content, dict):
        summary = summary or content.get("summary")
        if content.get("detail"):
            body_parts.append(str(content["detail"]))
    elif content:
        body_parts.append(str(content))
    if summary:
        body_parts.insert(0, str(summary))
    when = ep.get("timestamp") or ep.get("created")
    meta: dict[str, Any] = {
        "type": "episodic",
        "category": slugify(str(ep.get("type") or "session"), max_words=2),
        "title": str(summary)[:80] if summary else None,
        "created": format_time(parse_time(when) or _now()),
        "session": ep.get("session_id"),
    }
    metadata: dict[str, Any] = ep["metadata"] if isinstance(ep.get("metadata"), dict) else {}
    if isinstance(metadata.get("importance"), int) and 1 <= metadata["importance"] <= 5:
        meta["importance"] = metadata["importance"]
    if metadata.get("decay_rate") in ("fast", "normal", "slow", "never"):
        meta["decay"] = metadata["decay_rate"]
    outcome = ep.get("outcome")
    if isinstance(outcome, dict):
        meta["outcome"] = str(outcome.get("result") or outcome.get("user_action") or "") or None
        if outcome.get("learned"):
            body_parts.append(f"Learned: {outcome['learned']}")
    elif outcome:
        meta["outcome"] = str(outcome)
    connections: dict[str, Any] = (
        ep["connections"] if isinstance(ep.get("connections"), dict) else {}
    )
    related = [slugify(str(r), max_words=10) for r in connections.get("related_episodes") or []]
    if related:
        meta["related_source_ids"] = [str(r) for r in connections["related_episodes"]]
    if ep.get("context"):
        meta["context"] = ep["context"]
    raw_id = str(ep.get("id") or summary or "episode")
    meta["id"] = slugify(raw_id.replace("_", "-"), max_words=12, max_len=80)
    meta["source"] = {"imported_id": raw_id}
    return {k: v for k, v in meta.items() if v is not None}, "\n\n".join(body_parts) or str(
        summary or raw_id
    )


def _detect(path: Path, text: str) -> str:
    if path.suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if path.suffix in (".yaml", ".yml"):
        return "yaml-episodes"
    if text.lstrip().startswith("{"):
        return "jsonl"
    if BUNDLE_MARK in text:
        return "markdown"
    return "yaml-episodes"


def import_file(
    vault: Vault,
    path: Path,
    fmt: str = "auto",
    *,
    allow_secrets: bool = False,
    progress: bool = False,
    skip_bad: bool = False,
) -> ImportReport:
    """Import memories from a file in one commit; existing ids are skipped (idempotent).

    A file with any bad record writes nothing (the report lists every problem) unless
    ``skip_bad``, which imports the good records and reports the rest.
    """
    text = _read_text(path)
    fmt = _detect(path, text) if fmt == "auto" else fmt
    report = ImportReport()
    planned = _plan_import(vault, path, text, fmt, report)
    with vault.locked():
        existing = {m.id: m.path for m in vault.all_memories()}
        writes: dict[str, str] = {}
        for where, rel, body in planned:
            if not _SAFE_PATH_RE.match(rel) or ".." in rel:
                report.problems.append(Problem(where, "path", f"unsafe path {rel!r}"))
                continue
            try:
                memory = check_text(body, rel)
                check_secrets(body, where, vault.config.get("security"), allow_secrets)
            except MemvaultError as exc:
                report.problems.append(Problem(where, exc.key, exc.message))
                continue
            if memory.id in existing or rel in writes or (vault.root / rel).exists():
                report.skipped += 1
                continue
            existing[memory.id] = rel
            writes[rel] = body
            report.ids.append(memory.id)
        if report.problems and not skip_bad:
            report.skipped += len(writes)
            return report
        if writes:
            report.commit = vault.commit_files(
                writes, f"memvault: import {len(writes)} memories from {path.name}"
            )
        report.added = len(writes)
    return report


def _read_text(path: Path) -> str:
    source = str(path)
    try:
        return path.read_bytes().decode("utf-8")  # no newline translation: CRLF round-trips
    except FileNotFoundError:
        raise MemvaultError("file not found", source) from None
    except UnicodeDecodeError:
        raise MemvaultError("not UTF-8 text", source) from None
    except OSError as exc:  # a folder, no permission, ...
        raise MemvaultError(f"cannot read: {exc.strerror or exc}", source) from None


def _plan_import(
    vault: Vault, path: Path, text: str, fmt: str, report: ImportReport
) -> list[tuple[str, str, str]]:
    """``(where, rel, text)`` of every record in the file; bad records go to ``report``."""
    planned: list[tuple[str, str, str]] = []
    if fmt == "jsonl":
        for where, record, problem in _records_jsonl(text, path.name):
            if problem:
                report.problems.append(problem)
                continue
            assert record is not None and where is not None
            try:
                rel, body = _from_record(vault, record, where)
                planned.append((where, rel, body))
            except ValidationError as exc:
                report.problems.append(Problem(where, exc.key, exc.message))
    elif fmt in ("markdown", "md"):
        matches = list(_BUNDLE_RE.finditer(text))
        for i, m in enumerate(matches):
            end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
            body = text[m.end() : end]
            body = body[:-1] if body.endswith("\n\n") else body
            planned.append((f"{path.name}:{m.group('path')}", m.group("path"), body))
    elif fmt == "yaml-episodes":
        for n, ep in enumerate(_seed_episodes(text, str(path))):
            meta, body = _episode_record(ep)
            rel = vault.path_for(meta)
            planned.append((f"{path.name}:episodes[{n}]", rel, render_new(meta, body)))
    else:
        raise MemvaultError(
            f"expected auto|jsonl|markdown|yaml-episodes, got {fmt!r}", key="format"
        )
    return planned
