"""Export and import: JSONL (exact round-trip), a Markdown bundle, and the seeds' YAML.

A JSONL record carries the memory's fields *and* its file's exact text (``raw``) and
path, so importing an export recreates byte-identical files.

Imports scale with the file, not the vault: JSONL and Markdown bundles are read one
record at a time, each record is parsed at most once (never when memvault renders it
from fields it checked), the ids already taken are read once, and the files go through
:class:`~memvault.store.bulk.BulkWrite` (batches, one sync, one commit).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from .core import Core
from .errors import MemvaultError, Problem, ValidationError, yaml_message
from .memory import ID_RE, TYPES, Memory, format_time, parse_time, slugify, to_plain, validate_meta
from .security import check_secrets
from .store.bulk import BulkWrite
from .store.files import check_text, new_memory, render_new
from .values import Record, field

FORMATS = ("auto", "jsonl", "markdown", "md", "yaml-episodes")
# (records read, bytes read, bytes in the file): called every PROGRESS_EVERY records
ImportProgress = Callable[[int, int, int], None]
PROGRESS_EVERY = 500
# one record of an import: where it comes from, its path, its text, the memory it holds
# (None: not parsed yet)
Item = tuple[str, str, str, Memory | None]

BUNDLE_MARK = "<!-- memvault:file "
_BUNDLE_RE = re.compile(r"^<!-- memvault:file (?P<path>\S+) -->\n", re.MULTILINE)
_SAFE_PATH_RE = re.compile(
    r"^(episodic|semantic|procedural|archive|inbox)/([A-Za-z0-9._-]+/)*[A-Za-z0-9._-]+\.(md|yaml|yml)$"
)


class ImportReport(Record):
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


def export_memories(vault: Core, fmt: str, include_archive: bool = True) -> str:
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
    lines: Iterator[tuple[int, str]], source: str
) -> Iterator[tuple[str | None, dict[str, Any] | None, Problem | None]]:
    for n, line in lines:
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


def _from_record(vault: Core, record: dict[str, Any], where: str) -> Item:
    """One JSONL record as an import item: its exact text (``raw``), or a file rendered
    from its fields, validated without parsing it back when that can be vouched for."""
    raw, path = record.get("raw"), record.get("path")
    if (
        isinstance(raw, str)
        and isinstance(path, str)
        and _SAFE_PATH_RE.match(path)
        and ".." not in path
    ):
        return where, path, raw, check_text(raw, path)
    meta = {k: v for k, v in record.items() if k not in ("raw", "path", "content")}
    mtype = meta.get("type")
    if mtype not in TYPES:
        raise ValidationError(f"expected one of {'|'.join(TYPES)}, got {mtype!r}", where, "type")
    if not isinstance(meta.get("id"), str) or not ID_RE.match(meta["id"]):
        raise ValidationError(f"expected a memory id, got {meta.get('id')!r}", where, "id")
    meta.setdefault("created", format_time(parse_time(meta.get("created")) or _now()))
    rel = vault.path_for(meta)
    content = str(record.get("content", ""))
    text = render_new(meta, content)
    memory = new_memory(meta, content, rel)
    if memory is None:
        return where, rel, text, check_text(text, rel)
    problems = validate_meta(memory.meta, rel)
    if problems:
        raise ValidationError(problems[0].message, rel, problems[0].key, problems)
    return where, rel, text, memory


def _now() -> Any:
    from .memory import now_utc

    return now_utc()


def _seed_episodes(text: str, where: str) -> list[dict[str, Any]]:
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="safe").load(text)
    except YAMLError as exc:
        raise ValidationError(yaml_message(exc), where) from None
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


def _detect(path: Path, head: str) -> str:
    """The format of a file, from its name or the start of its text."""
    if path.suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if path.suffix in (".yaml", ".yml"):
        return "yaml-episodes"
    if head.lstrip().startswith("{"):
        return "jsonl"
    if BUNDLE_MARK in head:
        return "markdown"
    return "yaml-episodes"


def import_file(
    vault: Core,
    path: Path,
    fmt: str = "auto",
    *,
    allow_secrets: bool = False,
    progress: ImportProgress | None = None,
    skip_bad: bool = False,
) -> ImportReport:
    """Import memories from a file in one commit; existing ids are skipped (idempotent).

    A file with any bad record writes nothing (the report lists every problem) unless
    ``skip_bad``, which imports the good records and reports the rest. The work per
    record does not grow with the vault; memory holds one batch of records. Killed
    half-way, the import is undone by the next memvault command (the journal): run it
    again and it picks up from nothing, skipping what an earlier run committed.
    """
    if fmt not in FORMATS:
        raise MemvaultError(
            f"expected auto|jsonl|markdown|yaml-episodes, got {fmt!r}", key="format"
        )
    report = ImportReport()
    security = vault.config.get("security")
    with _open_source(path) as source, vault.locked():
        size = os.fstat(source.fileno()).st_size
        fmt = _detect(path, _peek(source)) if fmt == "auto" else fmt
        taken = vault.scan().ids()  # once: every id the vault holds, in-place edits included
        bulk = BulkWrite(vault)
        seen: set[str] = set()
        good = 0
        try:
            for n, item in enumerate(_items(vault, path, source, fmt, report), 1):
                if progress is not None and n % PROGRESS_EVERY == 0:
                    progress(n, source.tell(), size)
                memory = _checked(item, report, security, allow_secrets)
                if memory is None:
                    continue
                _, rel, text, _ = item
                if memory.id in taken or rel in seen or os.path.lexists(vault.root / rel):
                    report.skipped += 1
                    continue
                taken.add(memory.id)
                seen.add(rel)
                report.ids.append(memory.id)
                good += 1
                if skip_bad or not report.problems:  # a bad record stops the writing
                    bulk.add(rel, text, memory)
            if progress is not None:
                progress(len(seen), size, size)
            if report.problems and not skip_bad:
                bulk.abort()
                report.skipped += good
                return report
            report.added = len(bulk)
            report.commit = bulk.commit(
                f"memvault: import {report.added} memories from {path.name}"
            )
        except BaseException:
            bulk.abort()
            raise
    return report


def _checked(item: Item, report: ImportReport, security: Any, allow_secrets: bool) -> Memory | None:
    """The memory an import item holds, once its path, schema and secrets are checked;
    None (and a problem in ``report``) when the item is bad."""
    where, rel, text, memory = item
    if not _SAFE_PATH_RE.match(rel) or ".." in rel:
        report.problems.append(Problem(where, "path", f"unsafe path {rel!r}"))
        return None
    try:
        memory = memory or check_text(text, rel)
        check_secrets(text, where, security, allow_secrets)
    except MemvaultError as exc:
        report.problems.append(Problem(where, exc.key, exc.message))
        return None
    return memory


@contextmanager
def _open_source(path: Path) -> Iterator[IO[bytes]]:
    """The import file opened for binary reading; a missing or unreadable file is a
    one-line error naming it."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 -- closed by the with below
    except FileNotFoundError:
        raise MemvaultError("file not found", str(path)) from None
    except OSError as exc:  # a folder, no permission, ...
        raise MemvaultError(f"cannot read: {exc.strerror or exc}", str(path)) from None
    with handle:
        yield handle


def _peek(source: IO[bytes]) -> str:
    head = source.read(65536)
    source.seek(0)
    return head.decode("utf-8", "replace")


def _lines(source: IO[bytes], name: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of each line; no newline translation, so CRLF round-trips."""
    for n, raw in enumerate(source, 1):
        try:
            yield n, raw.decode("utf-8")
        except UnicodeDecodeError:
            raise MemvaultError(f"not UTF-8 text (line {n})", name) from None


def _items(
    vault: Core, path: Path, source: IO[bytes], fmt: str, report: ImportReport
) -> Iterator[Item]:
    """Every record of the file as an import item; bad records go to ``report``."""
    if fmt == "jsonl":
        for where, record, problem in _records_jsonl(_lines(source, str(path)), path.name):
            if problem:
                report.problems.append(problem)
                continue
            assert record is not None and where is not None
            try:
                yield _from_record(vault, record, where)
            except ValidationError as exc:
                report.problems.append(Problem(where, exc.key, exc.message))
    elif fmt in ("markdown", "md"):
        yield from _bundle_items(_lines(source, str(path)), path.name)
    else:  # yaml-episodes: one YAML document, read whole
        text = "".join(line for _, line in _lines(source, str(path)))
        for n, ep in enumerate(_seed_episodes(text, str(path))):
            meta, body = _episode_record(ep)
            yield f"{path.name}:episodes[{n}]", vault.path_for(meta), render_new(meta, body), None


def _bundle_items(lines: Iterator[tuple[int, str]], name: str) -> Iterator[Item]:
    """The files of a Markdown bundle: each starts at a ``<!-- memvault:file PATH -->`` line
    and runs to the next (the blank line the export puts between files is dropped)."""
    rel: str | None = None
    body: list[str] = []

    def item() -> Item:
        text = "".join(body)
        text = text[:-1] if text.endswith("\n\n") else text
        return f"{name}:{rel}", str(rel), text, None

    for _, line in lines:
        mark = _BUNDLE_RE.fullmatch(line)
        if mark:
            if rel is not None:
                yield item()
            rel, body = mark.group("path"), []
        elif rel is not None:
            body.append(line)
    if rel is not None:
        yield item()
