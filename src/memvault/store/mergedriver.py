"""The git merge driver for memory files: merge front matter key by key, never markers.

Git calls ``memvault merge-driver %O %A %B %P`` (registered by :func:`register_driver`,
selected by ``.gitattributes``) when both sides of a merge or rebase changed the same
file. For a memory file (under ``episodic/``, ``semantic/``, ``procedural/``,
``archive/`` or ``inbox/``):

* front matter is merged key by key against the common ancestor: a key changed on one
  side only takes that change; when both changed it, list fields (``tags``, ``related``,
  ``trigger``, ``supersedes``...) are unioned (an item either side deliberately removed
  stays removed), counters add up (``access_count``, ``times_used``), ``updated`` and
  ``last_accessed`` take the later time, mappings merge recursively, and any other
  scalar takes the value of the side with the newer ``updated``;
* the body is merged line by line (``git merge-file``); when the edits overlap, both
  versions are kept in the body, one after the other, and the memory gets
  ``status: disputed`` so a person (or ``memvault list --status disputed``) finds it.
  A procedure's ``steps`` changed on both sides are treated the same way.

The result never contains conflict markers, and no edit to the body is lost. Only a
file that none of the three versions can be parsed as a memory, and whose text does not
merge cleanly, is left to git as an ordinary conflict (exit status 1). Files outside the
memory trees (``README.md``, ``.memvault/config.yaml``) get git's ordinary text merge,
except the usage records (``.memvault/usage.jsonl``), merged id by id: reads add up, the
later read wins (:func:`memvault.store.usage.merge`).
"""

from __future__ import annotations

import json
import shlex
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ValidationError
from ..memory import LIST_KEYS, parse_time
from ..paths import ALL_TREES, USAGE_PATH
from ..values import Record
from .files import Document, parse_text, update_text
from .git import ops as gitstore
from .tree import MEMORY_SUFFIXES

DRIVER_NAME = "memvault"
DRIVER_LABEL = "memvault: merge memory files key by key (never conflict markers)"

# Keys whose values are sets of items: both sides' additions are kept.
UNION_KEYS = frozenset((*LIST_KEYS, "related", "supersedes", "superseded_by")) - {"steps"}
# Counters: both sides' increments count.
COUNTER_KEYS = frozenset(("access_count", "times_used"))
# Times where the later one is right whoever wrote it.
LATEST_KEYS = frozenset(("updated", "last_accessed"))
# Body-like keys: when both sides changed them, both versions are kept (disputed).
CONTENT_KEYS = frozenset(("steps",))

DISPUTE_BEGIN = "<!-- memvault:disputed -->"
DISPUTE_END = "<!-- /memvault:disputed -->"


class _Missing:
    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return "MISSING"


MISSING: Any = _Missing()


class MergeResult(Record, frozen=True):
    """The merged text and what happened. ``conflict``: markers left, git must stop."""

    text: str
    conflict: bool = False
    disputed: bool = False
    notes: tuple[str, ...] = ()


class _Side(Record, frozen=True):
    text: str
    doc: Document | None  # None when the text is not a parseable memory file
    label: str

    @property
    def meta(self) -> dict[str, Any]:
        return dict(self.doc.meta) if self.doc is not None else {}

    @property
    def body(self) -> str:
        return self.doc.content if self.doc is not None else ""

    def when(self) -> Any:
        for key in ("updated", "created"):
            try:
                value = parse_time(self.meta.get(key))
            except ValueError:
                value = None
            if value is not None:
                return value
        return None


# --- public entry points -----------------------------------------------------------


def is_memory_path(path: str) -> bool:
    parts = path.replace("\\", "/").lstrip("./").split("/")
    return len(parts) > 1 and parts[0] in ALL_TREES and parts[-1].endswith(MEMORY_SUFFIXES)


def merge_texts(base: str | None, ours: str, theirs: str, path: str) -> MergeResult:
    """Three-way merge of one file's texts (``base`` None: no common ancestor)."""
    base_text = base or ""
    if ours == theirs:
        return MergeResult(ours)
    if base is not None and ours == base_text:
        return MergeResult(theirs, notes=(f"{path}: took the incoming version",))
    if base is not None and theirs == base_text:
        return MergeResult(ours)
    if path.replace("\\", "/").endswith(USAGE_PATH):
        from .usage import merge as merge_usage

        return MergeResult(merge_usage(base_text, ours, theirs))
    if not is_memory_path(path):
        merged, clean = text_merge(base_text, ours, theirs)
        return MergeResult(merged, conflict=not clean)
    sides = [
        _side(text, path, label)
        for text, label in ((base_text, "base"), (ours, "ours"), (theirs, "theirs"))
    ]
    b, o, t = sides
    if o.doc is None or t.doc is None:
        return _merge_unparseable(b, o, t, path)
    return _merge_memories(b, o, t, path)


def merge_files(base: Path, ours: Path, theirs: Path, path: str) -> MergeResult:
    """Merge the three temp files git hands a driver and write the result over ``ours``."""
    base_text = _read(base)
    result = merge_texts(
        base_text if base_text else None, _read(ours) or "", _read(theirs) or "", path
    )
    from .files import atomic_write

    atomic_write(ours, result.text)
    return result


def run_driver(base: Path, ours: Path, theirs: Path, path: str) -> int:
    """What ``memvault merge-driver`` does; returns git's expected exit status."""
    result = merge_files(base, ours, theirs, path)
    for note in result.notes:
        print(f"memvault: {note}", file=sys.stderr)
    return 1 if result.conflict else 0


def driver_command(python: str | None = None) -> str:
    """The command line git runs; an absolute interpreter so it works outside the venv."""
    exe = python or sys.executable
    if exe and Path(exe).is_absolute():
        return f"{shlex.quote(exe)} -P -m memvault merge-driver %O %A %B %P"
    return "memvault merge-driver %O %A %B %P"


def register_driver(root: Path, command: str | None = None) -> str:
    """Register the ``memvault`` merge driver in the repository's config (``.git/config``).

    ``.gitattributes`` (written by ``memvault init``) routes ``*.md``/``*.yaml`` to it;
    git ignores that line until the driver is defined here. Idempotent. Returns the
    command registered.
    """
    cmd = command or driver_command()
    gitstore.run_git(root, ["config", "--local", f"merge.{DRIVER_NAME}.name", DRIVER_LABEL])
    gitstore.run_git(root, ["config", "--local", f"merge.{DRIVER_NAME}.driver", cmd])
    return cmd


def registered_driver(root: Path) -> str | None:
    """The registered driver command, or None."""
    proc = gitstore.run_git(root, ["config", "--get", f"merge.{DRIVER_NAME}.driver"], check=False)
    return proc.stdout.strip() or None


# --- text merge (git merge-file) -----------------------------------------------------


def text_merge(base: str, ours: str, theirs: str) -> tuple[str, bool]:
    """Line-based three-way merge. Returns ``(text, clean)``; unclean text has markers."""
    with tempfile.TemporaryDirectory(prefix="memvault-merge-") as tmp:
        files = []
        for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
            p = Path(tmp) / name
            p.write_text(text, encoding="utf-8", newline="")
            files.append(str(p))
        proc = gitstore.run_git(
            Path(tmp),
            ["merge-file", "-p", "-L", "ours", "-L", "base", "-L", "theirs", *files],
            check=False,
        )
    if proc.returncode < 0 or proc.returncode > 127:
        raise ValidationError(f"git merge-file failed: {proc.stderr.strip()}")
    return proc.stdout, proc.returncode == 0


# --- memory merge ------------------------------------------------------------------


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", errors="surrogateescape")
    except FileNotFoundError:
        return None


def _side(text: str, path: str, label: str) -> _Side:
    try:
        return (
            _Side(text, parse_text(text, path), label) if text.strip() else _Side(text, None, label)
        )
    except ValidationError:
        return _Side(text, None, label)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _as_items(value: Any) -> list[Any]:
    if value is MISSING or value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _union(b: Any, o: Any, t: Any) -> Any:
    base, ours, theirs = _as_items(b), _as_items(o), _as_items(t)
    base_keys = {_key(x) for x in base}
    ours_keys = {_key(x) for x in ours}
    theirs_keys = {_key(x) for x in theirs}
    removed = (base_keys - ours_keys) | (base_keys - theirs_keys)
    out: list[Any] = []
    seen: set[str] = set()
    for item in [*ours, *theirs]:
        k = _key(item)
        if k in seen or k in removed:
            continue
        seen.add(k)
        out.append(item)
    # A single id stays a single id (``superseded_by: x``) unless both sides now name one.
    if len(out) == 1 and not isinstance(o, list) and not isinstance(t, list):
        return out[0]
    return out if out or isinstance(o, list) or isinstance(t, list) else MISSING


def _latest(o: Any, t: Any) -> Any:
    try:
        ot, tt = parse_time(o), parse_time(t)
    except ValueError:
        return o
    if ot is None:
        return t
    if tt is None:
        return o
    return t if tt > ot else o


def _merge_value(
    key: str, b: Any, o: Any, t: Any, newer_is_theirs: bool, conflicts: list[str]
) -> Any:
    if _key(o) == _key(t) and (o is MISSING) == (t is MISSING):
        return o
    if (o is MISSING and b is MISSING) or (
        o is not MISSING and b is not MISSING and _key(o) == _key(b)
    ):
        return t  # only theirs changed (or added) it
    if (t is MISSING and b is MISSING) or (
        t is not MISSING and b is not MISSING and _key(t) == _key(b)
    ):
        return o
    # Both sides changed the key, differently.
    if o is MISSING or t is MISSING:
        # One side deleted it, the other edited it: keep the edit (never lose one).
        return t if o is MISSING else o
    if key in CONTENT_KEYS:
        if isinstance(o, list) and isinstance(t, list):
            # Steps are lines of a procedure: non-overlapping edits combine like text.
            lines = ["\n".join(_key(x) for x in _as_items(v)) + "\n" for v in (b, o, t)]
            text, clean = text_merge(*lines)
            if clean:
                return [json.loads(line) for line in text.splitlines() if line.strip()]
        conflicts.append(key)
        return t if newer_is_theirs else o
    if key in UNION_KEYS or (isinstance(o, list) and isinstance(t, list)):
        return _union(b, o, t)
    if key in COUNTER_KEYS and all(isinstance(v, int) and not isinstance(v, bool) for v in (o, t)):
        base_n = b if isinstance(b, int) and not isinstance(b, bool) else 0
        return base_n + (o - base_n) + (t - base_n)
    if key in LATEST_KEYS:
        return _latest(o, t)
    if isinstance(o, Mapping) and isinstance(t, Mapping):
        base_map = b if isinstance(b, Mapping) else {}
        merged: dict[str, Any] = {}
        for sub in [*o.keys(), *(k for k in t if k not in o)]:
            value = _merge_value(
                sub,
                base_map.get(sub, MISSING),
                o.get(sub, MISSING),
                t.get(sub, MISSING),
                newer_is_theirs,
                conflicts,
            )
            if value is not MISSING:
                merged[sub] = value
        return merged
    return t if newer_is_theirs else o


def _merge_memories(b: _Side, o: _Side, t: _Side, path: str) -> MergeResult:
    notes: list[str] = []
    o_when, t_when = o.when(), t.when()
    newer_is_theirs = bool(t_when and (o_when is None or t_when > o_when))
    bm, om, tm = b.meta, o.meta, t.meta
    content_conflicts: list[str] = []
    merged: dict[str, Any] = {}
    for key in [*om.keys(), *(k for k in tm if k not in om)]:
        if key == "content" and o.doc is not None and o.doc.fmt == "yaml":
            continue  # a .yaml memory's body: merged below with the Markdown bodies
        value = _merge_value(
            key,
            bm.get(key, MISSING),
            om.get(key, MISSING),
            tm.get(key, MISSING),
            newer_is_theirs,
            content_conflicts,
        )
        if value is not MISSING:
            merged[key] = value

    body, body_clean = _merge_body(b.body, o.body, t.body)
    disputed = not body_clean or bool(content_conflicts)
    if disputed:
        newer, older = (t, o) if newer_is_theirs else (o, t)
        extra = {k: older.meta.get(k) for k in content_conflicts}
        # The newer version stays the memory's text (so its title and search text make
        # sense); the other version follows in a clearly marked block.
        kept = body if body_clean else newer.body
        body = _dispute_block(kept, older, "" if body_clean else older.body, extra)
        merged["status"] = "disputed"
        what = ", ".join((["body"] if not body_clean else []) + content_conflicts)
        notes.append(f"{path}: both sides changed the {what}; kept both versions, status: disputed")
    template = o.doc
    assert template is not None
    return MergeResult(_render(template, merged, body), disputed=disputed, notes=tuple(notes))


def _merge_body(base: str, ours: str, theirs: str) -> tuple[str, bool]:
    if ours.rstrip() == theirs.rstrip():
        return ours, True
    if ours.rstrip() == base.rstrip():
        return theirs, True
    if theirs.rstrip() == base.rstrip():
        return ours, True
    merged, clean = text_merge(_nl(base), _nl(ours), _nl(theirs))
    return (merged, True) if clean else (ours, False)


def _nl(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"


def _describe(side: _Side) -> str:
    meta = side.meta
    bits = []
    if meta.get("updated"):
        bits.append(f"updated {meta['updated']}")
    elif meta.get("created"):
        bits.append(f"created {meta['created']}")
    if meta.get("author"):
        bits.append(f"by {meta['author']}")
    return ", ".join(bits) or "no date"


def _dispute_block(kept: str, older: _Side, older_body: str, extra: Mapping[str, Any]) -> str:
    """``kept`` (the newer text), then the other version in a marked block, with a how-to."""
    what = (
        " and ".join((["text"] if older_body.strip() else []) + [f"`{k}`" for k in extra]) or "text"
    )
    lines = [
        DISPUTE_BEGIN,
        "**Disputed:** this memory was changed in two places at once and the changes to its "
        f"{what}",
        "overlap. Above is the newer version; below is the other one, kept so nothing is lost.",
        "Keep what is right, delete this block and set `status: active`.",
        "",
        f"### Other version ({_describe(older)})",
        "",
    ]
    if older_body.strip():
        lines += [older_body.strip("\n"), ""]
    for key, value in extra.items():
        lines += [f"`{key}` in that version:", ""]
        for item in _as_items(value):
            text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
            lines.append(f"- {text}")
        lines.append("")
    lines.append(DISPUTE_END)
    block = "\n".join(lines) + "\n"
    return _nl(kept).rstrip("\n") + "\n\n" + block if kept.strip() else block


def _render(template: Document, merged: Mapping[str, Any], body: str) -> str:
    current = dict(template.meta)
    if template.fmt == "yaml":
        current.pop("content", None)
    changes: dict[str, Any] = {}
    for key, value in merged.items():
        if key not in current or _key(current[key]) != _key(value):
            changes[key] = value
    for key in current:
        if key not in merged:
            changes[key] = None
    content = body if body != template.content else None
    if not changes and content is None:
        return template.text()
    return update_text(template, changes, content)


def _merge_unparseable(b: _Side, o: _Side, t: _Side, path: str) -> MergeResult:
    """At least one side is not a readable memory: text merge, else keep both raw."""
    merged, clean = text_merge(b.text, o.text, t.text)
    if clean:
        return MergeResult(merged)
    keep, other = (o, t) if o.doc is not None else (t, o)
    if keep.doc is None:
        return MergeResult(
            merged,
            conflict=True,
            notes=(
                f"{path}: neither side is a readable memory file; "
                "left git's conflict markers to resolve by hand",
            ),
        )
    fence = "~~~~"
    raw = other.text if other.text.endswith("\n") else other.text + "\n"
    body = (
        _nl(keep.body).rstrip("\n")
        + "\n\n"
        + "\n".join(
            [
                DISPUTE_BEGIN,
                "**Disputed:** the other side of a merge changed this memory into a file memvault",
                "cannot read (kept verbatim below). Merge what matters, delete this block and set",
                "`status: active`.",
                "",
                fence + "text",
                raw.rstrip("\n"),
                fence,
                DISPUTE_END,
                "",
            ]
        )
    )
    meta = dict(keep.meta)
    meta["status"] = "disputed"
    if keep.doc.fmt == "yaml":
        meta.pop("content", None)
    return MergeResult(
        _render(keep.doc, meta, body),
        disputed=True,
        notes=(
            f"{path}: one side is not a readable memory; "
            "kept it verbatim in the body, status: disputed",
        ),
    )
