"""Merging memvault's part into text files that are not JSON: Codex's ``config.toml`` (the
``[mcp_servers.memvault]`` table) and an ``AGENTS.md`` (a section between marker lines).

The rules are those of :mod:`.merge`: the user's text is kept as it is (comments, order,
blank lines), memvault's part is brought up to date where it stands, or appended at the end
after one blank line; removing it takes away the part and that blank line, so install then
uninstall gives back the file's bytes.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import ValidationError
from .entries import SECTION_END, SECTION_START, SERVER

TABLE = f"mcp_servers.{SERVER}"
# The header of memvault's table, or of one of its sub-tables ([mcp_servers.memvault.env]).
OWN_HEADER = re.compile(
    rf"^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*\"?{SERVER}\"?[ \t]*(\]|\.)", re.M
)
ANY_HEADER = re.compile(r"^[ \t]*\[", re.M)


def parse_toml(text: str, where: str) -> Any:
    """``text`` as a tomlkit document; a one-line error naming the file."""
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        message = str(exc).splitlines()[0] if str(exc) else "invalid TOML"
        raise ValidationError(
            f"invalid TOML: {message}; fix it by hand, nothing was written", where
        ) from None


def server_table(doc: Any, where: str) -> Any:
    """``doc``'s ``mcp_servers.memvault`` (``None`` when absent); a wrong type is an error."""
    servers = doc.get("mcp_servers")
    if servers is None:
        return None
    if not isinstance(servers, dict):
        raise ValidationError(
            f"expected a table, got {type(servers).__name__}; nothing was written",
            where,
            "mcp_servers",
        )
    return servers.get(SERVER)


def render_table(entry: dict[str, Any]) -> str:
    """``[mcp_servers.memvault]`` as memvault writes it: scalars and arrays, ``env`` inline."""
    import tomlkit

    table = tomlkit.table()
    for key, value in entry.items():
        if isinstance(value, dict):
            inline = tomlkit.inline_table()
            inline.update(value)
            table[key] = inline
        else:
            table[key] = value
    doc = tomlkit.document()
    doc.add("mcp_servers", tomlkit.table(is_super_table=True))
    doc["mcp_servers"][SERVER] = table
    return tomlkit.dumps(doc)


def merge_codex(text: str, entry: dict[str, Any], where: str, notes: list[str]) -> str:
    """Codex's ``config.toml`` with ``[mcp_servers.memvault]`` set to ``entry``."""
    doc = parse_toml(text, where)
    current = server_table(doc, where)
    if current is not None and current.unwrap() == entry:
        return text
    block = render_table(entry)
    if current is not None:
        notes.append(f"{where}: brought [{TABLE}] up to date (see the diff)")
        cut = cut_table(text)
        if cut is not None:
            before, after = cut
            merged = before + block + after
        else:  # memvault's table written some other way (inline, dotted keys)
            doc["mcp_servers"][SERVER] = parse_toml(block, where)["mcp_servers"][SERVER]
            merged = doc.as_string()
    else:
        merged = append_block(text, block)
    check = parse_toml(merged, where)  # e.g. `mcp_servers = {...}` inline can't take a table
    if server_table(check, where) is None or server_table(check, where).unwrap() != entry:
        raise ValidationError(
            f"could not add [{TABLE}] to this file's layout; add it by hand", where, "mcp_servers"
        )
    return merged


def remove_codex(text: str, where: str) -> str:
    """Codex's ``config.toml`` without ``[mcp_servers.memvault]`` (and the blank line that
    install put before it)."""
    doc = parse_toml(text, where)
    if server_table(doc, where) is None:
        return text
    cut = cut_table(text)
    if cut is not None:
        before, after = cut
        out = remove_block(before, after)
    else:
        del doc["mcp_servers"][SERVER]
        if not doc["mcp_servers"]:
            del doc["mcp_servers"]
        out = doc.as_string()
    if server_table(parse_toml(out, where), where) is not None:  # pragma: no cover - defensive
        raise ValidationError(f"could not remove [{TABLE}]; remove it by hand", where)
    return out


def cut_table(text: str) -> tuple[str, str] | None:
    """``text`` split around memvault's table and its sub-tables: (before, after), or
    ``None`` when the table is not written as ``[mcp_servers.memvault]`` headers."""
    start = OWN_HEADER.search(text)
    if start is None:
        return None
    begin = start.start()
    end = len(text)
    for header in ANY_HEADER.finditer(text, start.end()):
        if not OWN_HEADER.match(text, header.start()):
            end = header.start()
            break
    if OWN_HEADER.search(text, end):
        return None  # more of memvault's tables further down: not one block
    # Blank and comment lines at the table's end belong to what follows it (a comment
    # above the next table is about that table).
    lines = text[begin:end].splitlines(keepends=True)
    while len(lines) > 1 and (not lines[-1].strip() or lines[-1].lstrip().startswith("#")):
        lines.pop()
    stop = begin + sum(len(line) for line in lines)
    return text[:begin], text[stop:]


def append_block(text: str, block: str) -> str:
    """``block`` at the end of ``text``, after one blank line (none in an empty file)."""
    if not text.strip():
        return text + block
    return text + ("\n" if text.endswith("\n") else "\n\n") + block


def remove_block(before: str, after: str) -> str:
    """The text around a removed block, without the blank line :func:`append_block` put
    before it (when the block was last)."""
    if not after and before.endswith("\n\n"):
        return before[:-1]
    if not after and not before.strip():
        return before
    return before + after


def merge_section(text: str, section: str) -> str:
    """``text`` with memvault's marked section replaced, or appended when absent."""
    span = section_span(text)
    if span is None:
        return append_block(text, section)
    start, end = span
    return text[:start] + section + text[end:]


def remove_section(text: str) -> str:
    """``text`` without memvault's marked section (and the blank line before it)."""
    span = section_span(text)
    if span is None:
        return text
    start, end = span
    return remove_block(text[:start], text[end:])


def section_span(text: str) -> tuple[int, int] | None:
    """Where memvault's section is: from its start line to the end of its end line."""
    start = text.find(SECTION_START)
    if start < 0 or (start > 0 and text[start - 1] != "\n"):
        return None
    end = text.find(SECTION_END, start)
    if end < 0:
        return None
    end += len(SECTION_END)
    if text.startswith("\n", end):
        end += 1
    return start, end
