"""Memory text as HTML that cannot run anything: Markdown rendered by markdown-it-py with
raw HTML off, then cleaned by nh3 (Ammonia) to an allow-list of tags, attributes and URL
schemes. Two layers on purpose: a stored ``<script>`` is shown as text by the first, and
anything that slipped through (a ``javascript:`` link, an event attribute) is dropped by
the second. The pages also forbid every script in their Content-Security-Policy."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from ..values import Record

if TYPE_CHECKING:  # pragma: no cover
    from markdown_it import MarkdownIt

    from .. import Memory

TAGS = {
    "p", "br", "hr", "em", "strong", "del", "s", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td", "img",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}


@functools.cache
def _markdown() -> MarkdownIt:
    from markdown_it import MarkdownIt

    # html off: raw HTML in a memory is text, never markup
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable(
        ["table", "strikethrough"]
    )


def clean(html: str) -> str:
    """``html`` reduced to the allow-list (links get rel="noopener noreferrer nofollow")."""
    import nh3

    return nh3.clean(
        html,
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
    )


def markdown(text: str) -> Markup:
    """Markdown text as sanitised HTML, safe to put in a page as it is."""
    return Markup(clean(_markdown().render(text or "")))


class TurnView(Record, frozen=True):
    """One turn of a transcript as the memory page shows it."""

    id: str
    speaker: str
    role: str
    when: str
    html: Markup


def turns(memory: Memory) -> list[TurnView]:
    """The turns of a transcript memory (empty for any other memory)."""
    from .. import parse_turns

    if memory.type != "episodic" or "<!-- turn:" not in memory.content:
        return []
    return [
        TurnView(t.turn_id, t.speaker, t.role, t.when, markdown(t.text))
        for t in parse_turns(memory.content)
    ]


class DiffLine(Record, frozen=True):
    kind: str  # add, del, hunk, meta, same
    text: str


def diff_lines(patch: str) -> list[DiffLine]:
    """A unified diff as classified lines (the template escapes the text)."""
    out: list[DiffLine] = []
    for line in patch.splitlines():
        if line.startswith(("+++", "---", "diff ", "index ", "new file", "deleted file")):
            kind = "meta"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "same"
        out.append(DiffLine(kind, line))
    return out


def plain(value: Any) -> str:
    """A front-matter value as one line of text (lists joined, dicts as key: value)."""
    if isinstance(value, list):
        return ", ".join(plain(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {plain(v)}" for k, v in value.items())
    return "" if value is None else str(value)
