"""Purge by content: erase a piece of text (a phone number, a name, a pattern) wherever the
vault holds it, rather than the one file that happened to hold it.

:func:`find` is the preview: which memories hold it (and for transcripts, which turns go and
which are redacted), which other tracked files do, and which commits (their message or
their changes). :func:`purge` then, under the writer lock and on a clean vault:

1. rewrites the files as one commit: a transcript turn that is wholly the text goes, a turn
   or memory that holds it among other words keeps them with ``[purged]`` in its place, a
   memory with nothing else left goes, front-matter values are rewritten key by key;
   ``.memvault/purge.log`` gets one line saying what was asked (kind, length and a salted,
   slow hash of the text, never the text), by whom, when, why and how many hits;
2. rewrites git history with git-filter-repo (as ``forget --purge`` does): every blob and
   every commit message of every ref, so that ``git log --all -p`` and ``git grep`` over
   any ref find nothing; then expires the reflogs and prunes;
3. drops the index (Chroma, FTS5, the catalog: derived, rebuilt by the next read) and
   rewrites the access logs without it.

It is a librarian's action: it reads and rewrites every scope's memories and every commit.
``scope`` narrows it to the memories in that scope now (their files, and in history the
paths those memories ever had); commit messages are scrubbed whatever the scope.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .core import Core
from .errors import MemvaultError, PermissionDeniedError, ValidationError
from .memory import SCOPES, Memory, format_time, now_utc
from .paths import ACCESS_LOG, ACCESS_LOG_FOLDING, ACCESS_LOG_HISTORY, PURGE_LOG
from .purge import check_clean, drop_index, rewrite_history
from .store.files import check_text, load_document, update_text
from .store.git import ops as gitstore
from .transcripts import TURN_HEADER_RE
from .values import Record, field

MARKER = "[purged]"
MIN_TEXT = 4  # a shorter text would match all over the vault
KDF_ROUNDS = 200_000  # the log's hash is slow to make guessing short texts (phones) costly


class FileHit(Record, frozen=True):
    """One file holding the text, and what a purge does to it."""

    path: str
    memory_id: str | None  # None: a tracked file that is not a memory (config, README)
    action: str  # "redact" | "remove" (nothing but the text: the file goes)
    spans: int
    turns_removed: tuple[str, ...] = ()  # turn ids that are wholly the text
    turns_redacted: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "id": self.memory_id,
            "action": self.action,
            "spans": self.spans,
            "turns_removed": list(self.turns_removed),
            "turns_redacted": list(self.turns_redacted),
        }


class ContentPurge(Record):
    """A purge by content: what it finds (the preview) and, once applied, what it did."""

    kind: str  # "text" | "regex"
    length: int  # characters of the text or pattern asked for (the log keeps no more)
    scope: str | None
    files: list[FileHit] = field(default_factory=list)
    commits: list[str] = field(default_factory=list)  # commits whose changes hold it
    messages: int = 0  # commit messages holding it
    applied: bool = False
    commit: str | None = None  # HEAD after the rewrite
    remotes: list[str] = field(default_factory=list)  # still hold the old history
    access_records: int = 0  # access-log records rewritten

    @property
    def empty(self) -> bool:
        return not self.files and not self.commits and not self.messages

    def counts(self) -> dict[str, int]:
        return {
            "files": len(self.files),
            "memories_removed": sum(f.action == "remove" for f in self.files),
            "turns_removed": sum(len(f.turns_removed) for f in self.files),
            "turns_redacted": sum(len(f.turns_redacted) for f in self.files),
            "spans": sum(f.spans for f in self.files),
            "commits": len(self.commits),
            "messages": self.messages,
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "length": self.length,
            "scope": self.scope,
            "hits": self.counts(),
            "files": [f.as_dict() for f in self.files],
            "commits": list(self.commits),
            "applied": self.applied,
            "commit": self.commit,
            "remotes": list(self.remotes),
            "access_records": self.access_records,
        }


def needle(text: str, regex: bool = False) -> re.Pattern[str]:
    """The pattern a purge looks for. Text matches case-insensitively, any run of
    whitespace matching any other (a number wrapped over two lines is still found); a regex
    is Python's ``re`` syntax, as given."""
    if regex:
        try:
            pattern = re.compile(text)
        except re.error as exc:
            raise ValidationError(f"not a regular expression: {exc}", key="regex") from None
        if pattern.search("") is not None:
            raise ValidationError(
                "the regex matches empty text: it would match anywhere", key="regex"
            )
        return pattern
    words = text.split()
    if len("".join(words)) < MIN_TEXT:
        raise ValidationError(
            f"give at least {MIN_TEXT} characters to match (a shorter text is everywhere)",
            key="match",
        )
    spaced = r"\s+".join(re.escape(w) for w in words)
    # ids and file names are made from the text as a slug ("351-912-345-678"): that too
    slug = "-".join(re.findall(r"[a-z0-9]+", text.lower()))
    if len(slug) >= MIN_TEXT and slug != text.lower():
        spaced = f"{spaced}|{re.escape(slug)}"
    return re.compile(spaced, re.IGNORECASE)


def fingerprint(text: str, salt: bytes | None = None) -> str:
    """``pbkdf2-sha256$ROUNDS$SALT$HASH`` of ``text``: whoever knows the text can check a
    log line against it (:func:`same_text`); the line alone does not give it back."""
    salt = salt if salt is not None else os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", text.encode("utf-8"), salt, KDF_ROUNDS)
    return f"pbkdf2-sha256${KDF_ROUNDS}${salt.hex()}${digest.hex()}"


def same_text(stamp: str, text: str) -> bool:
    """Whether a purge log's ``fingerprint`` was made from ``text``."""
    try:
        _, rounds, salt, digest = stamp.split("$")
        made = hashlib.pbkdf2_hmac("sha256", text.encode("utf-8"), bytes.fromhex(salt), int(rounds))
    except ValueError:
        return False
    return made.hex() == digest


def _check_librarian(vault: Core) -> None:
    if not vault.identity.is_librarian:
        raise PermissionDeniedError(
            "purging by content reads and rewrites every scope's memories and all of git "
            "history: it needs the librarian role (--role librarian)",
            key="role",
        )


def _check_scope(scope: str | None) -> None:
    if scope is not None and scope not in SCOPES:
        raise ValidationError(f"expected {'|'.join(SCOPES)}, got {scope!r}", key="scope")


def find(vault: Core, text: str, *, regex: bool = False, scope: str | None = None) -> ContentPurge:
    """The preview: every memory, transcript turn, tracked file and commit holding ``text``
    (a regex with ``regex``), in ``scope`` when given. Writes nothing."""
    _check_librarian(vault)
    _check_scope(scope)
    pattern = needle(text, regex)
    found = ContentPurge("regex" if regex else "text", len(text), scope)
    rewrites = _plan_files(vault, pattern, scope)
    found.files = list(dict.fromkeys(hit for hit, _ in rewrites.values()))
    paths = _history_paths(vault, found.files) if scope else None
    found.commits, found.messages = _commits_holding(vault.root, pattern, paths)
    return found


def purge(
    vault: Core, text: str, reason: str, *, regex: bool = False, scope: str | None = None
) -> ContentPurge:
    """Erase ``text`` from the files, git history, the index and the access log (see the
    module's docstring). Rewrites history: every commit id changes."""
    if not reason or not reason.strip():
        raise ValidationError("say why (--reason): the purge log records it", key="reason")
    _check_librarian(vault)
    _check_scope(scope)
    pattern = needle(text, regex)
    root = vault.root
    with vault.locked():
        check_clean(root)
        done = ContentPurge("regex" if regex else "text", len(text), scope)
        rewrites = _plan_files(vault, pattern, scope)
        done.files = list(dict.fromkeys(hit for hit, _ in rewrites.values()))
        paths = _history_paths(vault, done.files) if scope else None
        done.commits, done.messages = _commits_holding(root, pattern, paths)
        if done.empty:
            return done
        why = pattern.sub(MARKER, " ".join(reason.split()))
        writes = {path: new for path, (_, new) in rewrites.items() if new is not None}
        removes = [path for path, (_, new) in rewrites.items() if new is None]
        for hit in done.files:
            if hit.action == "remove" and hit.memory_id:
                # a memory that goes takes the links to it along (as forget does)
                for other, rewritten in vault.unlink_references(hit.memory_id, hit.path).items():
                    if other not in rewrites:
                        writes[other] = rewritten
        writes[PURGE_LOG] = _logged(vault, done, text, why)
        counts = done.counts()
        msg = (
            f"memvault: purge by content: {why}\n\n{counts['files']} file(s), "
            f"{counts['turns_removed']} turn(s) removed, {counts['turns_redacted']} redacted, "
            f"{counts['commits']} commit(s) rewritten; the text is not recorded "
            f"({PURGE_LOG})."
        )
        vault.commit_files(writes, msg, removes=removes)
        done.remotes = rewrite_history(root, _filter_args(pattern, paths))
        done.access_records = scrub_access_logs(root, pattern)
        drop_index(root)
        done.applied = True
        done.commit = gitstore.head(root)
    return done


# --- the files -------------------------------------------------------------------------


def _plan_files(
    vault: Core, pattern: re.Pattern[str], scope: str | None
) -> dict[str, tuple[FileHit, str | None]]:
    """Every file holding the pattern: its hit and its new text (None: the file goes)."""
    out: dict[str, tuple[FileHit, str | None]] = {}
    memories = {m.path: m for m in vault.all_memories()}
    renamed = _renamed_ids(pattern, memories.values(), scope)
    if scope is None:
        listed = gitstore.run_git(vault.root, ["ls-files", "-z"]).stdout.split("\0")
        candidates = [p for p in listed if p]
    else:
        candidates = [p for p, m in memories.items() if m.scope == scope]
    for rel in sorted(candidates):
        path = vault.root / rel
        try:
            raw = path.read_bytes().decode("utf-8", "surrogateescape")
        except OSError:
            continue
        if not pattern.search(raw):
            continue
        memory = memories.get(rel)
        if memory is None:
            hit = FileHit(rel, None, "redact", len(pattern.findall(raw)))
            out[rel] = (hit, pattern.sub(MARKER, raw))
            continue
        hit, text = _scrub_memory(vault.root, memory, raw, pattern, renamed)
        moved = _moved_path(rel, memory.id, renamed)
        if moved != rel and text is not None:
            out[rel] = (hit, None)  # the old name goes, the new one holds the text
            out[moved] = (hit, text)
        else:
            out[rel] = (hit, text)
    return out


def _renamed_ids(
    pattern: re.Pattern[str], memories: Iterable[Memory], scope: str | None
) -> dict[str, str]:
    """New ids for the memories whose id holds the text (made from it): the text becomes
    ``purged`` (``call-ana-at-purged``), kept unique."""
    taken = {m.id for m in memories}
    out: dict[str, str] = {}
    for m in memories:
        if (scope is None or m.scope == scope) and pattern.search(m.id):
            base = re.sub(r"-{2,}", "-", pattern.sub("-purged-", m.id)).strip("-") or "purged"
            new, n = base, 2
            while new in taken:
                new, n = f"{base}-{n}", n + 1
            taken.add(new)
            out[m.id] = new
    return out


def _moved_path(rel: str, memory_id: str, renamed: dict[str, str]) -> str:
    if memory_id not in renamed:
        return rel
    folder, _, name = rel.rpartition("/")
    suffix = name[len(memory_id) :] if name.startswith(memory_id) else Path(name).suffix
    return f"{folder}/{renamed[memory_id]}{suffix}" if folder else f"{renamed[memory_id]}{suffix}"


def _scrub_memory(
    root: Path, memory: Memory, raw: str, pattern: re.Pattern[str], renamed: dict[str, str]
) -> tuple[FileHit, str | None]:
    spans = len(pattern.findall(raw))
    doc = load_document(root / memory.path, memory.path)
    removed: list[str] = []
    redacted: list[str] = []
    content = doc.content
    headers = list(TURN_HEADER_RE.finditer(content))
    if headers:
        parts = [_sub(pattern, content[: headers[0].start()])]
        for i, m in enumerate(headers):
            end = headers[i + 1].start() if i + 1 < len(headers) else len(content)
            section = content[m.start() : end]
            if not pattern.search(section):
                parts.append(section)
                continue
            body = content[m.end() : end]
            if pattern.search(body) and not _words_left(pattern, body):
                removed.append(m.group("tid"))
                continue
            redacted.append(m.group("tid"))
            parts.append(pattern.sub(MARKER, section))
        new_content = "".join(parts).rstrip("\n") + "\n"
        gone = len(removed) == len(headers)
    else:
        new_content = _sub(pattern, content)
        gone = pattern.search(content) is not None and not _words_left(pattern, content)
    hit = FileHit(
        memory.path, memory.id, "remove" if gone else "redact", spans, tuple(removed),
        tuple(redacted),
    )  # fmt: skip
    if gone:
        return hit, None
    changes: dict[str, Any] = {}
    for key, value in doc.meta.items():
        new_value = _sub_value(pattern, _renamed_value(value, renamed))
        if new_value != value:
            changes[key] = new_value
    changes["updated"] = format_time(now_utc())
    text = update_text(doc, changes, new_content)
    if pattern.search(text):  # in a key's name, say: replace it where it stands
        text = pattern.sub(MARKER, text)
    try:
        check_text(text, memory.path)
    except MemvaultError as exc:
        raise MemvaultError(
            f"purging it would leave an invalid file ({exc}); edit it by hand first",
            memory.path,
        ) from None
    return hit, text


def _renamed_value(value: Any, renamed: dict[str, str]) -> Any:
    """A front-matter value with every renamed id (``id``, ``related``, ``supersedes``...)
    replaced by its new one."""
    if isinstance(value, str):
        return renamed.get(value, value)
    if isinstance(value, list):
        return [_renamed_value(v, renamed) for v in value]
    return value


def _sub(pattern: re.Pattern[str], text: str) -> str:
    return pattern.sub(MARKER, text)


def _sub_value(pattern: re.Pattern[str], value: Any) -> Any:
    if isinstance(value, str):
        return pattern.sub(MARKER, value)
    if isinstance(value, list):
        return [_sub_value(pattern, v) for v in value]
    if isinstance(value, dict):
        return {k: _sub_value(pattern, v) for k, v in value.items()}
    return value


def _words_left(pattern: re.Pattern[str], text: str) -> bool:
    """Whether ``text`` says anything once the pattern is out (a letter or a digit)."""
    return re.search(r"\w", pattern.sub(" ", text)) is not None


def _logged(vault: Core, done: ContentPurge, text: str, why: str) -> str:
    """The purge log with one more line: never the text, only how to recognise it."""
    path = vault.root / PURGE_LOG
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    entry = {
        "when": format_time(now_utc()),
        "by": vault.identity.agent or vault.git_identity.name,
        "role": vault.identity.role,
        "reason": why,
        "match": {"kind": done.kind, "length": done.length, "fingerprint": fingerprint(text)},
        "scope": done.scope,
        "hits": done.counts(),
    }
    return old + json.dumps(entry, ensure_ascii=False) + "\n"


# --- history -----------------------------------------------------------------------------


def _history_paths(vault: Core, files: list[FileHit]) -> set[str]:
    """Every path the memories hit ever had (moves to archive/, renames), for a scoped
    purge's history rewrite."""
    paths = {f.path for f in files}
    for hit in files:
        if hit.memory_id:
            proc = gitstore.run_git(
                vault.root,
                ["log", "--all", "--format=", "--name-only", f"-Sid: {hit.memory_id}"],
                check=False,
            )
            paths.update(p for p in proc.stdout.split() if p)
    return paths


def _commits_holding(
    root: Path, pattern: re.Pattern[str], paths: set[str] | None
) -> tuple[list[str], int]:
    """Commits (any ref) whose changes add or remove the pattern (under ``paths`` when
    given), and how many commit messages hold it."""
    proc = gitstore.run_git(
        root,
        [
            "-c",
            "core.quotePath=false",
            "log",
            "--all",
            "-p",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--format=%x1e%H%x1f%B%x1f",
        ],
    )
    commits: list[str] = []
    messages = 0
    for record in proc.stdout.split("\x1e"):
        if not record.strip():
            continue
        sha, _, rest = record.partition("\x1f")
        message, _, patch = rest.partition("\x1f")
        if pattern.search(message):
            messages += 1
        if _patch_holds(pattern, patch, paths):
            commits.append(sha.strip())
    return commits, messages


def _patch_holds(pattern: re.Pattern[str], patch: str, paths: set[str] | None) -> bool:
    for chunk in patch.split("\ndiff --git ")[1:] if patch else []:
        header, _, body = chunk.partition("\n")
        if paths is not None and not any(f" b/{p}" in f" {header}" for p in paths):
            continue
        changed = "\n".join(
            line[1:]
            for line in body.split("\n")
            if line[:1] in "+-" and line[:3] not in ("+++", "---")
        )
        if pattern.search(changed):
            return True
    return False


_FILE_CALLBACK = """
import re as _re
rx = value.data.get("memvault_rx")
if rx is None:
    rx = value.data["memvault_rx"] = _re.compile({pattern!r}, {flags})
paths = {paths!r}
if paths is not None and filename not in paths:
    return (filename, mode, blob_id)
name = filename.decode("utf-8", "surrogateescape")
new_name = _re.sub("-{{2,}}", "-", rx.sub("-purged-", name)).replace("/-", "/").replace("-.", ".")
filename = new_name.encode("utf-8", "surrogateescape")
data = value.get_contents_by_identifier(blob_id)
if value.is_binary(data):
    return (filename, mode, blob_id)
text = data.decode("utf-8", "surrogateescape")
new = rx.sub({marker!r}, text)
if new == text:
    return (filename, mode, blob_id)
return (filename, mode, value.insert_file_with_contents(new.encode("utf-8", "surrogateescape")))
"""

_MESSAGE_CALLBACK = """
import re as _re
text = message.decode("utf-8", "surrogateescape")
new = _re.sub(_re.compile({pattern!r}, {flags}), {marker!r}, text)
return new.encode("utf-8", "surrogateescape")
"""


def _filter_args(pattern: re.Pattern[str], paths: set[str] | None) -> list[str]:
    """git-filter-repo's callbacks: the pattern replaced in every blob (of ``paths`` only,
    when given) and every commit message."""
    flags = int(pattern.flags & ~re.UNICODE)
    wanted = {p.encode("utf-8") for p in paths} if paths is not None else None
    values = {"pattern": pattern.pattern, "flags": flags, "marker": MARKER}
    return [
        "--file-info-callback",
        _FILE_CALLBACK.format(paths=wanted, **values),
        "--message-callback",
        _MESSAGE_CALLBACK.format(**values),
    ]


# --- the access log ----------------------------------------------------------------------


def scrub_access_logs(root: Path, pattern: re.Pattern[str]) -> int:
    """Rewrite the access logs (live, being folded, folded history) with the pattern
    replaced in every record (the query text, mostly); how many records changed."""
    changed = 0
    for name in (ACCESS_LOG, ACCESS_LOG_FOLDING, ACCESS_LOG_HISTORY):
        path = root / name
        if not path.exists():
            continue
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        kept = []
        for line in lines:
            if pattern.search(line) or pattern.search(_decoded(line)):
                changed += 1
                line = _scrubbed_line(pattern, line)
            kept.append(line)
        tmp = path.with_suffix(".purge-tmp")
        tmp.write_text("".join(f"{k}\n" for k in kept), encoding="utf-8")
        os.replace(tmp, path)
    return changed


def _decoded(line: str) -> str:
    try:
        return json.dumps(json.loads(line), ensure_ascii=False)
    except ValueError:
        return line


def _scrubbed_line(pattern: re.Pattern[str], line: str) -> str:
    try:
        record = json.loads(line)
    except ValueError:
        return pattern.sub(MARKER, line)
    return json.dumps(_sub_value(pattern, record), ensure_ascii=False, separators=(",", ":"))


__all__ = [
    "MARKER",
    "ContentPurge",
    "FileHit",
    "find",
    "fingerprint",
    "needle",
    "purge",
    "same_text",
]
