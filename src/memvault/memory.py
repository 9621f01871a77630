"""The memory model: one memory = one file; its fields and their validation.

A :class:`Memory` is an immutable value read from a file. ``meta`` holds every
front-matter key as plain JSON-compatible values (times as ISO-8601 strings), unknown
keys included; ``content`` is the Markdown body (or the ``content:`` key of a
``.yaml`` memory).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from .errors import Problem
from .values import TYPE_CHECKING, LazyPattern, Record, field
from .vocabulary import KIND_TYPE as KIND_TYPE  # the contract's words, kept importable here
from .vocabulary import SCOPES as SCOPES
from .vocabulary import STATUSES as STATUSES
from .vocabulary import TYPES as TYPES

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable
    from typing import Any

TREES = TYPES  # the top-level folders holding live memories
DECAYS = ("fast", "normal", "slow", "never")
CONFIDENCES = ("high", "medium", "low")
CATEGORIES: dict[str, tuple[str, ...]] = {
    "semantic": ("decisions", "facts", "definitions", "relationships", "constraints"),
    "procedural": ("workflows", "templates", "patterns", "heuristics"),
}
DEFAULT_CATEGORY = {"episodic": "session", "semantic": "facts", "procedural": "workflows"}
ID_RE = LazyPattern(r"^[a-z0-9][a-z0-9-]{0,127}$")
SLUG_WORD_RE = LazyPattern(r"[a-z0-9]+")

# Order in which memvault writes keys into a new file (hand-written files keep theirs).
KEY_ORDER = (
    "id",
    "type",
    "category",
    "title",
    "subject",
    "status",
    "scope",
    "agent",
    "team",
    "channel",
    "author",
    "created",
    "updated",
    "valid_from",
    "valid_to",
    "importance",
    "decay",
    "confidence",
    "relevance",
    "access_count",
    "last_accessed",
    "tags",
    "related",
    "supersedes",
    "superseded_by",
    "session",
    "outcome",
    "context",
    "trigger",
    "steps",
    "success_rate",
    "times_used",
    "last_used",
    "source",
)
TIME_KEYS = ("created", "updated", "valid_from", "valid_to", "last_accessed", "last_used")
LIST_KEYS = ("tags", "related", "trigger", "steps")


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def parse_time(value: Any) -> dt.datetime | None:
    """Parse a YAML/ISO time (date, datetime or string) into an aware UTC datetime."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("Z") or text.endswith("z"):
            text = text[:-1] + "+00:00"
        try:
            parsed = dt.datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"expected an ISO-8601 date or time, got {value!r}") from None
        return parsed.replace(tzinfo=dt.UTC) if parsed.tzinfo is None else parsed.astimezone(dt.UTC)
    raise ValueError(f"expected a date or time, got {type(value).__name__}")


AGE_UNITS = {"h": 3600, "d": 86400, "w": 7 * 86400, "m": 30 * 86400, "y": 365 * 86400}


def parse_when(value: str | None, key: str) -> dt.datetime | None:
    """A date argument as every door takes it: ISO date/time, or an age ('7d', '2w', '3m',
    '1y', '12h' ago). Bad text is a one-line error naming ``key``."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    from .errors import ValidationError

    text = value.strip().lower()
    if len(text) > 1 and text[:-1].isdigit() and text[-1] in AGE_UNITS:
        try:
            return now_utc() - dt.timedelta(seconds=int(text[:-1]) * AGE_UNITS[text[-1]])
        except (OverflowError, ValueError):  # further back than datetime reaches
            raise ValidationError(
                f"{value!r} reaches back before the year 1: give a smaller age or a date",
                key=key,
            ) from None
    try:
        return parse_time(value)
    except ValueError:
        raise ValidationError(
            f"expected a date like 2026-01-31 or an age like 7d, got {value!r}", key=key
        ) from None


def format_time(value: dt.datetime | dt.date) -> str:
    """The one textual form memvault writes times in: ``2026-11-29T22:35:00Z``."""
    if isinstance(value, dt.datetime):
        value = value.astimezone(dt.UTC) if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return value.replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
    return value.isoformat()


def slugify(text: str, max_words: int = 8, max_len: int = 60) -> str:
    """A readable, id-safe slug: ``"Deploy to prod!"`` -> ``deploy-to-prod``."""
    if text.isascii():
        ascii_text = text
    else:  # accents off (é -> e) before the non-ASCII rest is dropped
        import unicodedata

        ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    words = SLUG_WORD_RE.findall(ascii_text.lower())[:max_words]
    slug = "-".join(words)[:max_len].strip("-")
    return slug or "memory"


def to_plain(value: Any, _depth: int = 0) -> Any:
    """Convert YAML-loaded values into JSON-compatible ones (times become ISO strings)."""
    if _depth > 50:
        raise ValueError("nested too deeply (more than 50 levels)")
    if isinstance(value, (dt.datetime, dt.date)):
        return format_time(value)
    if isinstance(value, Mapping):
        return {str(k): to_plain(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v, _depth + 1) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        return value
    return str(value)


class Memory(Record, frozen=True):
    """One memory, as read from its file (immutable).

    ``path`` is relative to the vault, with POSIX separators; ``meta`` is left out of the
    hash (a dict), not out of equality.
    """

    id: str
    type: str
    path: str
    meta: Mapping[str, Any] = field(hash=False)
    content: str = ""

    def get(self, key: str, default: Any = None) -> Any:
        value = self.meta.get(key, default)
        return default if value is None else value

    @property
    def title(self) -> str:
        title = self.meta.get("title")
        if title:
            return str(title)
        for line in self.content.splitlines():
            line = line.strip().lstrip("#").strip()
            if line:
                return line[:80]
        return self.id

    @property
    def category(self) -> str:
        return str(self.get("category", DEFAULT_CATEGORY.get(self.type, "")))

    @property
    def scope(self) -> str:
        return str(self.get("scope", "team"))

    @property
    def agent(self) -> str | None:
        return self.meta.get("agent")

    @property
    def team(self) -> str | None:
        return self.meta.get("team")

    @property
    def status(self) -> str:
        if self.path.startswith("archive/") and self.meta.get("status") in (None, "active"):
            return "archived"
        if self.path.startswith("inbox/") and self.meta.get("status") in (None, "active"):
            return "proposed"
        return str(self.get("status", "active"))

    @property
    def tags(self) -> list[str]:
        return as_list(self.meta.get("tags"))

    @property
    def importance(self) -> int:
        value = self.meta.get("importance")
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else 3

    @property
    def subject(self) -> str | None:
        value = self.meta.get("subject")
        return str(value) if value else None

    def time(self, key: str) -> dt.datetime | None:
        try:
            return parse_time(self.meta.get(key))
        except ValueError:
            return None

    @property
    def created(self) -> dt.datetime | None:
        return self.time("created")

    def to_dict(self, with_content: bool = True) -> dict[str, Any]:
        """JSON form: every key of the file plus ``path`` (and ``content``)."""
        out: dict[str, Any] = dict(self.meta)
        out["id"] = self.id
        out["type"] = self.type
        out["path"] = self.path
        out.setdefault("title", self.title)
        out["status"] = self.status
        if with_content:
            out["content"] = self.content
        return out


def as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if v is not None]
    return [str(value)]


# --- validation -------------------------------------------------------------------

if TYPE_CHECKING:  # pragma: no cover
    Check = Callable[[Any], str | None]  # checks one value: None when valid, else why not


def _enum(options: tuple[str, ...]) -> Check:
    def check(value: Any) -> str | None:
        if value not in options:
            return f"expected one of {'|'.join(options)}, got {_show(value)}"
        return None

    return check


def _str(value: Any) -> str | None:
    if not isinstance(value, str):
        return f"expected a string, got {_kind(value)}"
    return None


def _int_range(low: int, high: int | None) -> Check:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"expected an integer, got {_kind(value)}"
        if value < low or (high is not None and value > high):
            bound = f"{low}-{high}" if high is not None else f">= {low}"
            return f"expected {bound}, got {value}"
        return None

    return check


def _float_range(low: float, high: float) -> Check:
    def check(value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"expected a number, got {_kind(value)}"
        if not low <= float(value) <= high:
            return f"expected {low}-{high}, got {value}"
        return None

    return check


def _time(value: Any) -> str | None:
    try:
        parse_time(value)
    except ValueError as exc:
        return str(exc)
    return None


def _str_list(value: Any) -> str | None:
    if isinstance(value, str):
        return "expected a list, got a string"
    if not isinstance(value, list):
        return f"expected a list, got {_kind(value)}"
    for item in value:
        if not isinstance(item, (str, int, float)) or isinstance(item, bool):
            return f"expected a list of strings, got an item of type {_kind(item)}"
    return None


def _id_list(value: Any) -> str | None:
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not isinstance(item, str) or not ID_RE.match(item):
            return f"expected memory id(s), got {_show(item)}"
    return None


def _str_or_list(value: Any) -> str | None:
    if isinstance(value, str):
        return None
    return _str_list(value)


def _steps(value: Any) -> str | None:
    if not isinstance(value, list):
        return f"expected a list of steps, got {_kind(value)}"
    for item in value:
        if not isinstance(item, (str, dict)):
            return f"expected each step to be text, got {_kind(item)}"
    return None


def _any(_value: Any) -> str | None:
    return None


FIELDS: dict[str, Check] = {
    "title": _str,
    "category": _str,
    "created": _time,
    "updated": _time,
    "valid_from": _time,
    "valid_to": _time,
    "scope": _enum(SCOPES),
    "agent": _str,
    "team": _str,
    "channel": _str,
    "author": _str,
    "status": _enum(STATUSES),
    "supersedes": _id_list,
    "superseded_by": _id_list,
    "subject": _str,
    "importance": _int_range(1, 5),
    "decay": _enum(DECAYS),
    "confidence": _enum(CONFIDENCES),
    "access_count": _int_range(0, None),
    "last_accessed": _time,
    "relevance": _float_range(0.0, 1.0),
    "related": _id_list,
    "tags": _str_list,
    "source": _any,
    "session": _str,
    "outcome": _str,
    "context": _any,
    "trigger": _str_or_list,
    "steps": _steps,
    "success_rate": _float_range(0.0, 1.0),
    "times_used": _int_range(0, None),
    "last_used": _time,
}


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__


def _show(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate_meta(meta: Mapping[str, Any], path: str | None = None) -> list[Problem]:
    """Every problem with a memory's keys; an empty list means valid."""
    problems: list[Problem] = []
    mid = meta.get("id")
    if mid is None or mid == "":
        problems.append(Problem(path, "id", "missing (every memory needs an id)"))
    elif not isinstance(mid, str) or not ID_RE.match(mid):
        problems.append(
            Problem(path, "id", f"expected lowercase letters, digits and '-', got {_show(mid)}")
        )
    mtype = meta.get("type")
    if mtype is None or mtype == "":
        problems.append(Problem(path, "type", "missing (episodic|semantic|procedural)"))
    elif mtype not in TYPES:
        problems.append(
            Problem(path, "type", f"expected one of {'|'.join(TYPES)}, got {_show(mtype)}")
        )
    for key, check in FIELDS.items():
        value = meta.get(key)
        if value is None:
            continue
        message = check(value)
        if message:
            problems.append(Problem(path, key, message))
    category = meta.get("category")
    if isinstance(category, str) and mtype in CATEGORIES and category not in CATEGORIES[mtype]:
        problems.append(
            Problem(
                path,
                "category",
                f"expected one of {'|'.join(CATEGORIES[mtype])}, got {_show(category)}",
            )
        )
    if meta.get("scope") == "self" and not meta.get("agent"):
        problems.append(Problem(path, "agent", "missing (a 'self' memory belongs to an agent)"))
    return problems
