"""Reading and writing memory files: the only module that touches their bytes.

Two formats hold the same keys:

* Markdown with YAML front matter (``---`` fenced), the body is the content;
* a plain ``.yaml`` mapping with a ``content:`` key.

Rewrites are surgical: a changed key replaces only the lines of that key, a new key is
appended at the end of the front matter, everything else (comments, key order, blank
lines, line endings, a BOM, the body) stays byte-for-byte. Writes are atomic.
"""

from __future__ import annotations

import _thread
import datetime as dt
import io
import os
import re
from collections.abc import Mapping
from pathlib import Path

from ..errors import Problem, ValidationError, yaml_message
from ..memory import KEY_ORDER, Memory, format_time, to_plain, validate_meta
from ..values import TYPE_CHECKING, LazyPattern, Record

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

DEFAULT_MAX_BYTES = 2_000_000
MAX_DEPTH = 30
BOM = "\ufeff"
_FENCE_RE = LazyPattern(r"^---[ \t]*\r?$", re.MULTILINE)
_ANCHOR_HINT_RE = LazyPattern(r"[&*][^\s,\]\}]")


class Document(Record):
    """A memory file's text split into its parts, kept verbatim for round-trips."""

    path: str
    fmt: str  # "md" or "yaml"
    bom: str
    newline: str
    head: str  # front matter text (md) or the whole text (yaml), without BOM
    body: str  # md only: everything after the closing fence line
    meta: dict[str, Any]  # plain values

    def text(self) -> str:
        if self.fmt == "yaml":
            return self.bom + self.head
        return f"{self.bom}---{self.newline}{self.head}---{self.newline}{self.body}"

    @property
    def content(self) -> str:
        if self.fmt == "yaml":
            value = self.meta.get("content")
            return "" if value is None else str(value)
        return self.body.lstrip("\r\n") if self.body.startswith(("\n", "\r\n")) else self.body

    def to_memory(self) -> Memory:
        meta = {k: v for k, v in self.meta.items() if k != "content" or self.fmt == "md"}
        return Memory(
            id=str(meta.get("id")),
            type=str(meta.get("type")),
            path=self.path,
            meta=meta,
            content=self.content,
        )


_safe_loaders: dict[int, Any] = {}  # per thread (threading.local would import threading)


def _yaml(typ: str = "safe") -> Any:
    """A ruamel YAML instance (the safe loader is cached per thread: building one is costly)."""
    if typ == "safe":
        cached = _safe_loaders.get(_thread.get_ident())
        if cached is not None:
            return cached
    from ruamel.yaml import YAML

    yaml = YAML(typ=typ, pure=typ != "safe")
    yaml.allow_duplicate_keys = False
    if typ == "safe":
        _safe_loaders[_thread.get_ident()] = yaml
    return yaml


def _depth(value: Any, level: int = 0) -> int:
    if level > MAX_DEPTH:
        return level
    if isinstance(value, Mapping):
        return max((_depth(v, level + 1) for v in value.values()), default=level + 1)
    if isinstance(value, list):
        return max((_depth(v, level + 1) for v in value), default=level + 1)
    return level


def _load_mapping(text: str, path: str) -> dict[str, Any]:
    """Load YAML safely: no aliases (billion-laughs), bounded depth, a mapping at the top."""
    from ruamel.yaml.error import YAMLError

    if _ANCHOR_HINT_RE.search(text):
        from ruamel.yaml.events import AliasEvent

        try:
            for event in _yaml("safe").parse(io.StringIO(text)):
                if isinstance(event, AliasEvent):
                    raise ValidationError(
                        "YAML aliases (*name) are not allowed in memory files", path, None
                    )
        except YAMLError as exc:
            raise ValidationError(yaml_message(exc), path, None) from None
    try:
        data = _yaml("safe").load(text)
    except YAMLError as exc:
        raise ValidationError(yaml_message(exc), path, None) from None
    except RecursionError:
        raise ValidationError("YAML nested too deeply", path, None) from None
    except (ValueError, KeyError, TypeError, OverflowError) as exc:
        # ruamel's constructors raise these for scalars that look typed but aren't valid:
        # 2026-02-30, 0x_, "!!int x", "!!bool x"...
        raise ValidationError(f"invalid YAML value: {_short_error(exc)}", path, None) from None
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ValidationError("front matter must be a mapping of keys", path, None)
    if _depth(data) > MAX_DEPTH:
        raise ValidationError(f"YAML nested deeper than {MAX_DEPTH} levels", path, None)
    try:
        plain = to_plain(data)
    except ValueError as exc:
        raise ValidationError(str(exc), path, None) from None
    return dict(plain)


def _short_error(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"unrecognised value {exc.args[0]!r}" if isinstance(exc, KeyError) and exc.args else text


def parse_text(text: str, path: str, meta: dict[str, Any] | None = None) -> Document:
    """Split and parse a memory file's text (``meta``: this very text's front matter, known
    already: only split). Raises :class:`ValidationError`."""
    bom = BOM if text.startswith(BOM) else ""
    if bom:
        text = text[1:]
    newline = "\r\n" if "\r\n" in text[:4096] else "\n"
    if "\x00" in text:
        raise ValidationError("binary file (NUL bytes), not a memory", path, None)
    if path.endswith((".yaml", ".yml")):
        meta = _load_mapping(text, path)
        return Document(path, "yaml", bom, newline, text, "", meta)
    first = _FENCE_RE.match(text)
    if not text.strip():
        raise ValidationError("empty file", path, None)
    if not first:
        raise ValidationError("no front matter: the file must start with a '---' line", path, None)
    closing = _FENCE_RE.search(text, first.end())
    if not closing:
        raise ValidationError("front matter is not closed by a '---' line", path, None)
    head_start = first.end() + 1  # after the newline of the opening fence
    head = text[head_start : closing.start()]
    rest = text[closing.end() :]
    body = rest[1:] if rest.startswith("\n") else rest
    meta = _load_mapping(head, path) if meta is None else meta
    return Document(path, "md", bom, newline, head, body, meta)


def read_bytes(abs_path: Path, rel: str, max_bytes: int = DEFAULT_MAX_BYTES) -> str:
    """Read a memory file's text, refusing symlinks, huge files and non-UTF-8 bytes."""
    try:
        st = abs_path.lstat()
    except FileNotFoundError:
        raise ValidationError("file not found", rel, None) from None
    if abs_path.is_symlink():
        raise ValidationError("symbolic links are not followed", rel, None)
    if st.st_size > max_bytes:
        raise ValidationError(
            f"file is {st.st_size:,} bytes, "
            f"over the limit of {max_bytes:,} (limits.max_file_bytes)",
            rel,
            None,
        )
    raw = abs_path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationError(f"not UTF-8 text (byte {exc.start})", rel, None) from None


def load_document(abs_path: Path, rel: str, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    return parse_text(read_bytes(abs_path, rel, max_bytes), rel)


def load_memory(abs_path: Path, rel: str, max_bytes: int = DEFAULT_MAX_BYTES) -> Memory:
    """Load and validate one memory file. Raises :class:`ValidationError` with all problems."""
    doc = load_document(abs_path, rel, max_bytes)
    problems = validate_meta(doc.meta, rel)
    if problems:
        raise ValidationError(str(problems[0]).split(": ", 2)[-1], rel, problems[0].key, problems)
    return doc.to_memory()


# --- rendering ---------------------------------------------------------------------


_RESERVED_RE = LazyPattern(
    r"^(?:~|null|Null|NULL|true|True|TRUE|false|False|FALSE|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF"
    r"|[-+]?(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][-+]?\d+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
    r"|[-+]?\d[\d_]*\.[\d_]*(?:[eE][-+]?\d+)?|0b[01_]+|0x[0-9a-fA-F_]+|0o[0-7_]+)$"
)
_PRINTABLE_RE = LazyPattern("^[\t\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*$")
_SAFE_PLAIN_RE = LazyPattern(r"^[A-Za-z0-9_(][^\n\r\t]*$")


def _safe_plain(value: str) -> bool:
    """``_SAFE_PLAIN_RE`` without compiling it for the common case (a plain ASCII start)."""
    first = value[0]
    if first.isascii() and (first.isalnum() or first in "_("):
        return "\n" not in value and "\r" not in value and "\t" not in value
    return bool(_SAFE_PLAIN_RE.match(value))


def _reserved(value: str) -> bool:
    """Whether YAML reads the plain text as something else (null, bool, number)."""
    if len(value) > 5 and value[0].isalpha():
        return False  # the longest reserved word is 5 letters; numbers don't start with one
    return bool(_RESERVED_RE.match(value))


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _double_quoted(value: str) -> str:
    """A YAML double-quoted scalar that round-trips any string exactly."""
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif _PRINTABLE_RE.match(ch) and ch not in "\x85\u2028\u2029\ufeff":
            out.append(ch)
        elif ord(ch) <= 0xFF:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def _scalar(value: Any) -> str | None:
    """Fast YAML text for simple scalars (most keys); None when ruamel must do it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (dt.datetime, dt.date)):
        return format_time(value)
    if isinstance(value, str):
        printable = (value.isascii() and value.isprintable()) or _PRINTABLE_RE.match(
            value.replace("\n", "")
        )
        if not printable or any(c in value for c in "\r\x85\u2028\u2029\ufeff"):
            return _double_quoted(value)  # control characters, NEL, CR: escaped
        if "\n" in value:
            if value.endswith("\n\n") or value.startswith((" ", "\n", "\t")) or " \n" in value:
                return _double_quoted(value)  # a literal block can't hold these exactly
            return None  # a readable literal block (ruamel)
        if _looks_like_time(value):
            return value
        if (
            value
            and _safe_plain(value)
            and not _reserved(value)
            and ": " not in value
            and " #" not in value
            and not value.endswith((":", " "))
            and "\t" not in value
        ):
            return value
        return "'" + value.replace("'", "''") + "'"
    return None


def _render_value_yaml(key: str, value: Any, seq_indent: int) -> str:
    """Render ``key: value`` as YAML text ending in a newline."""
    simple = _scalar(value)
    if simple is not None:
        return f"{key}: {simple}\n"
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, str) and _flowable(v) and _scalar(v) == v for v in value)
    ):
        return f"{key}: [{', '.join(value)}]\n"
    if (
        isinstance(value, list)
        and value
        and all(_scalar(v) is not None and not isinstance(v, (list, dict)) for v in value)
    ):
        pad = " " * seq_indent
        return f"{key}:\n" + "".join(f"{pad}- {_scalar(v)}\n" for v in value)
    from ruamel.yaml.comments import CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString

    def prepare(v: Any) -> Any:
        if isinstance(v, list) and v and all(_flowable(x) for x in v):
            seq = CommentedSeq(v)
            seq.fa.set_flow_style()
            return seq
        if isinstance(v, str) and (_scalar(v) or "").startswith('"'):
            return DoubleQuotedScalarString(v)  # nested too: CR, NEL, control characters escaped
        if isinstance(v, str) and "\n" in v:
            return LiteralScalarString(v)
        if isinstance(v, (dt.datetime, dt.date)):
            return format_time(v)
        if isinstance(v, list):
            return [prepare(x) for x in v]
        if isinstance(v, Mapping):
            return {k: prepare(x) for k, x in v.items()}
        return v

    yaml = _yaml("rt")
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=seq_indent + 2, offset=seq_indent)
    out = io.StringIO()
    yaml.dump({key: prepare(value)}, out)
    text = out.getvalue()
    if isinstance(value, str) and _looks_like_time(value):
        # A time written by memvault stays an unquoted YAML timestamp, like a hand-typed one.
        text = f"{key}: {value}\n"
    return text


_PLAIN_RE = LazyPattern(r"^[A-Za-z0-9_][A-Za-z0-9_ ./@+-]{0,39}$")  # no ':' (flow context)


def _flowable(value: Any) -> bool:
    return (
        isinstance(value, str)
        and bool(_PLAIN_RE.match(value))
        and ": " not in value
        and not value.endswith(":")
    )


_TIME_TEXT_RE = LazyPattern(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:\d{2})?)?\Z")


def _looks_like_time(value: str) -> bool:
    return len(value) >= 10 and value[0].isdigit() and bool(_TIME_TEXT_RE.match(value))


def _ordered(meta: Mapping[str, Any]) -> list[tuple[str, Any]]:
    rank = {k: i for i, k in enumerate(KEY_ORDER)}
    return sorted(meta.items(), key=lambda kv: (rank.get(kv[0], len(rank)), 0))


def render_new(meta: Mapping[str, Any], content: str, fmt: str = "md") -> str:
    """The text of a brand-new memory file (keys in memvault's canonical order)."""
    items = [(k, v) for k, v in _ordered(meta) if v is not None and v != [] and k != "content"]
    head = "".join(_render_value_yaml(k, v, 2) for k, v in items)
    if fmt == "yaml":
        return head + _render_value_yaml("content", content, 2)
    body = content if content.endswith("\n") or not content else content + "\n"
    return f"---\n{head}---\n\n{body}"


def new_memory(meta: Mapping[str, Any], content: str, path: str) -> Memory | None:
    """The memory ``render_new(meta, content)`` parses back to, computed without YAML.

    Writes use it to skip parsing their own output (and importing ruamel). It
    vouches only for what it can prove: ints, bools, strings written as plain or quoted
    scalars and lists of them. Anything else (floats, nested maps, multi-line strings,
    non-canonical times, YAML files) returns None: parse the text then.
    """
    if not path.endswith(".md") or "\x00" in content:
        return None
    plain: dict[str, Any] = {}
    for key, value in _ordered(meta):
        if value is None or value == [] or key == "content":
            continue
        if isinstance(value, list):
            if not all(isinstance(v, str) and _same_string(v) for v in value):
                return None
            plain[key] = list(value)
        elif isinstance(value, (bool, int)) or (isinstance(value, str) and _same_string(value)):
            plain[key] = value
        else:
            return None
    body = content if content.endswith("\n") or not content else content + "\n"
    return Memory(str(plain.get("id")), str(plain.get("type")), path, plain, body.lstrip("\r\n"))


def rewritten_memory(doc: Document, changes: Mapping[str, Any], path: str) -> Memory | None:
    """What ``update_text(doc, changes)`` parses back to (at ``path``), without YAML when
    every changed value loads back as itself (None: parse the text then)."""
    if doc.fmt != "md" or "content" in changes:
        return None
    meta = dict(doc.meta)
    for key, value in changes.items():
        if value is None:
            meta.pop(key, None)
        elif _loads_as_itself(value):
            meta[key] = list(value) if isinstance(value, list) else value
        else:
            return None
    if validate_meta(meta, path):
        return None
    return Memory(str(meta.get("id")), str(meta.get("type")), path, meta, doc.content)


def _loads_as_itself(value: Any) -> bool:
    """As :func:`new_memory` vouches: strings, lists of them, ints, bools; and floats that
    :func:`_scalar` writes without an exponent."""
    if isinstance(value, list):
        return bool(value) and all(isinstance(v, str) and _same_string(v) for v in value)
    if isinstance(value, float):
        text = repr(value)
        return "." in text and text.lstrip("-").replace(".", "", 1).isdigit()
    return isinstance(value, (bool, int)) or (isinstance(value, str) and _same_string(value))


def _same_string(value: str) -> bool:
    """Whether a string rendered by :func:`_scalar` loads back as the very same string."""
    text = _scalar(value)
    if text is None or "\n" in value:
        return False
    if text == value and _looks_like_time(value):
        from ..memory import parse_time

        parsed = parse_time(value)  # loads as a time: only canonical ones round-trip
        return parsed is not None and format_time(parsed) == value
    return True


_TOP_KEY_RE = LazyPattern(r"^([^\s#:'\"-][^:]*?|'[^']*'|\"[^\"]*\"):(\s|$)")


def _key_spans(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Line spans [start, end) of each top-level key in a block mapping's lines."""
    starts: list[tuple[str, int]] = []
    for i, line in enumerate(lines):
        if not line or line[0] in " \t#\r\n":
            continue
        m = _TOP_KEY_RE.match(line)
        if m:
            starts.append((m.group(1).strip("'\""), i))
        elif line.rstrip() in ("---", "..."):
            return {}
        # a "- item" at column 0 continues the previous key's block sequence
    spans: dict[str, tuple[int, int]] = {}
    for n, (key, start) in enumerate(starts):
        end = starts[n + 1][1] if n + 1 < len(starts) else len(lines)
        # trailing comment/blank lines belong visually to the next key: keep them in place
        block = re.search(
            r":[ \t]+[|>][-+0-9]*[ \t]*(#.*)?$", lines[start]
        )  # a block scalar owns its lines
        while end - 1 > start and (
            (not lines[end - 1] or lines[end - 1].startswith("#"))
            or (
                not block
                and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#"))
            )
        ):
            end -= 1
        spans[key] = (start, end)
    return spans


def _seq_indent(head: str) -> int:
    m = re.search(r"^[^\s#][^\n]*:\s*\r?\n(\s*)- ", head, re.MULTILINE)
    return len(m.group(1)) if m else 0


def update_text(doc: Document, changes: Mapping[str, Any], content: str | None = None) -> str:
    """Rewrite only the keys in ``changes`` (``None`` deletes a key); keep all else verbatim.

    ``content`` replaces the body (Markdown) or the ``content`` key (YAML) when given.
    """
    head = doc.head
    nl = doc.newline
    changes = dict(changes)
    if doc.fmt == "yaml" and content is not None:
        changes["content"] = content
    lines = head.replace("\r\n", "\n").split("\n")
    trailing_newline = head.endswith("\n") or head == ""
    if lines and lines[-1] == "":
        lines.pop()
    spans = _key_spans(lines)
    top_keys = set(doc.meta.keys())
    if not spans and top_keys:
        raise ValidationError(
            "front matter is not a plain block mapping; memvault cannot rewrite it safely",
            doc.path,
            None,
        )
    indent = _seq_indent(head)
    # Apply from the bottom so earlier spans keep their line numbers.
    edits: list[tuple[int, int, list[str]]] = []
    appended: list[str] = []
    for key, value in changes.items():
        if key in spans:
            start, end = spans[key]
            new = (
                []
                if value is None
                else _render_value_yaml(key, value, indent).rstrip("\n").split("\n")
            )
            edits.append((start, end, new))
        elif value is not None and value != []:
            appended.extend(_render_value_yaml(key, value, indent).rstrip("\n").split("\n"))
    for start, end, new in sorted(edits, reverse=True):
        lines[start:end] = new
    # New keys go after the last key line, before trailing blank/comment lines.
    insert_at = len(lines)
    while insert_at > 0 and not lines[insert_at - 1]:
        insert_at -= 1
    lines[insert_at:insert_at] = appended
    new_head = "\n".join(lines) + ("\n" if trailing_newline and lines else "")
    if nl == "\r\n":
        new_head = new_head.replace("\n", "\r\n")
    body = doc.body
    if doc.fmt == "md" and content is not None:
        lead = nl if doc.body.startswith(("\n", "\r\n")) else ""
        text = content if content.endswith("\n") or not content else content + "\n"
        body = lead + (text.replace("\n", "\r\n") if nl == "\r\n" else text)
    result = Document(doc.path, doc.fmt, doc.bom, nl, new_head, body, {})
    return result.text()


# --- atomic writes -----------------------------------------------------------------


def atomic_write(path: Path, text: str, *, durable: bool = True) -> None:
    """Write via a temp file in the same folder and ``os.replace``: never half a file.
    ``durable=False``: no fsync (a bulk write syncs the filesystem once, at the end)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new, exclusive temp file next to ``path`` (what tempfile.mkstemp does, without
    importing tempfile and random on every write)."""
    base = f"{path.parent}{os.sep}.{path.name}.{os.getpid()}"
    for n in range(1000):
        tmp = f"{base}.{n}.tmp"
        try:
            return os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666
            ), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temp name for {path}")


def check_text(text: str, path: str) -> Memory:
    """Parse and validate text destined for ``path``; raise on the first problem."""
    doc = parse_text(text, path)
    problems = validate_meta(doc.meta, path)
    if problems:
        first = problems[0]
        raise ValidationError(first.message, path, first.key, problems)
    return doc.to_memory()


def problems_of(abs_path: Path, rel: str, max_bytes: int = DEFAULT_MAX_BYTES) -> list[Problem]:
    """All problems of one file (parse errors included), for ``doctor``/``validate``."""
    try:
        doc = load_document(abs_path, rel, max_bytes)
    except ValidationError as exc:
        return [Problem(rel, exc.key, exc.message)]
    return validate_meta(doc.meta, rel)
