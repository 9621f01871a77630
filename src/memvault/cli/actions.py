"""The hot commands, ``add``, ``log``, ``show`` and ``episodes``, without typer.

The Typer commands in :mod:`memvault.cli.write` and the fast argument parser in
:mod:`memvault.cli.fast` both call these, so the two ways in behave the same. Every
parameter is required: the defaults live in the option table (:mod:`memvault.cli.options`),
and both ways in pass every argument and option of the command.
"""

from __future__ import annotations

from pathlib import Path

from .. import KIND_TYPE, debug, parse_when
from ..values import TYPE_CHECKING
from .common import (
    KEEP_HINT,
    emit_json,
    info,
    open_vault,
    print_table,
    read_text_arg,
    split_list,
)

if TYPE_CHECKING:  # pragma: no cover
    from .. import MemoryFields, WriteResult


def add(
    kind: str,
    text: str | None,
    *,
    file: Path | None,
    title: str | None,
    id: str | None,
    category: str | None,
    tag: list[str] | None,
    importance: int | None,
    decay: str | None,
    confidence: str | None,
    scope: str | None,
    subject: str | None,
    valid_from: str | None,
    valid_to: str | None,
    trigger: list[str] | None,
    step: list[str] | None,
    outcome: str | None,
    session: str | None,
    source: str | None,
    related: list[str] | None,
    channel: str | None,
    author: str | None,
    message: str | None,
    allow_secrets: bool,
    json_out: bool,
) -> None:
    """``memvault add KIND [TEXT] ...``: write one memory, print ``id<TAB>path``."""
    body = read_text_arg(text, file)
    vault = open_vault()
    fields: MemoryFields = {
        "category": category,
        "tags": split_list(tag),
        "importance": importance,
        "decay": decay,
        "confidence": confidence,
        "scope": scope,
        "subject": subject,
        "valid_from": _time_text(valid_from, "valid_from"),
        "valid_to": _time_text(valid_to, "valid_to"),
        "trigger": split_list(trigger),
        "steps": list(step or []),
        "outcome": outcome,
        "session": session,
        "source": source,
        "related": split_list(related),
        "channel": channel,
        "author": author,
    }
    result = vault.add(
        KIND_TYPE[kind],
        body,
        title=title,
        id=id,
        allow_secrets=allow_secrets,
        message=message,
        **fields,
    )
    if json_out:
        emit_json(
            {
                **result.memory.to_dict(),
                "commit": result.commit,
                "superseded": list(result.superseded),
                "disputed": list(result.disputed),
                "inbox": result.inbox,
                "notes": list(result.notes),
            }
        )
        return
    _say_added(result)


def _say_added(result: WriteResult) -> None:
    where = "proposed in inbox (needs review)" if result.inbox else "saved"
    print(f"{result.memory.id}\t{result.memory.path}")
    info(f"{where}; commit {result.commit[:10] if result.commit else '-'}")
    _notes(result.notes)
    if result.superseded:
        info(f"supersedes {', '.join(result.superseded)}")
    if result.disputed:
        info(
            f"not sure whether it replaces {', '.join(result.disputed)}: recorded a dispute "
            "(memvault dispute list)"
        )


def log(
    text: str | None,
    *,
    session: str,
    role: str,
    name: str | None,
    rating: str | None,
    scope: str | None,
    channel: str | None,
    file: Path | None,
    allow_secrets: bool,
    json_out: bool,
) -> None:
    """``memvault log --session S [TEXT]``: append a turn, print ``id<TAB>path``."""
    body = read_text_arg(text, file)
    vault = open_vault()
    extra = {k: v for k, v in (("name", name), ("rating", rating)) if v} or None
    result = vault.log(
        session,
        role,
        body,
        extra=extra,
        allow_secrets=allow_secrets,
        scope=scope,
        channel=channel,
    )
    if json_out:
        emit_json(
            {
                **result.memory.to_dict(with_content=False),
                "commit": result.commit,
                "notes": list(result.notes),
            }
        )
        return
    print(f"{result.memory.id}\t{result.memory.path}")
    if result.memory.path.startswith("inbox/") and result.commit:
        info("scope global: the session is proposed in inbox/ for review")
    _notes(result.notes)


def _notes(notes: tuple[str, ...]) -> None:
    """What was redacted, one line per file, with the CLI's way to keep such text."""
    for note in notes:
        info(f"note: {note}{KEEP_HINT}")


def show(memory_id: str, *, raw: bool, around: int | None, json_out: bool) -> None:
    """``memvault show ID``: one memory, as text, JSON or the file's exact bytes; a turn
    address (``session-x#turn``) shows that turn with its neighbours."""
    import sys

    vault = open_vault()
    if "#" in memory_id:
        window = vault.turn_window(memory_id, around=2 if around is None else around)
        debug.note("found", f"{memory_id} in {window.memory.path}, {len(window.turns)} turn(s)")
        if json_out:
            emit_json(window.as_dict())
            return
        memory = window.memory
        print(f"# {memory.title}  ({memory.id}, {memory.path})")
        for turn in window.turns:
            mark = ">" if turn.turn_id == window.focus else " "
            print(f"\n{mark} {turn.speaker} · {turn.when}  [{memory.id}#{turn.turn_id}]")
            print(turn.text)
        return
    memory = vault.get(memory_id)
    debug.note("found", f"{memory.id} in {memory.path} ({memory.status})")
    if json_out:
        emit_json(memory.to_dict())
    elif raw:
        sys.stdout.write(vault.raw_text(memory))
    else:
        print(f"# {memory.title}  ({memory.id}, {memory.type}/{memory.category}, {memory.status})")
        print(f"path: {memory.path}")
        keys = (
            "scope",
            "agent",
            "team",
            "subject",
            "tags",
            "importance",
            "created",
            "valid_from",
            "valid_to",
        )
        for key in (*keys, "superseded_by", "supersedes"):
            value = memory.meta.get(key)
            if value not in (None, "", []):
                print(f"{key}: {', '.join(value) if isinstance(value, list) else value}")
        print()
        print(memory.content)


def episodes(*, last: int, include_transcripts: bool, json_out: bool) -> None:
    """``memvault episodes --last N``: the most recent episodes, newest first."""

    vault = open_vault()
    items = vault.episodes(last, include_transcripts=include_transcripts)
    debug.note("filters", {"type": "episodic", "last": last, "transcripts": include_transcripts})
    debug.note("found", f"{len(items)} episodes")
    if json_out:
        emit_json([m.to_dict() for m in items])
        return
    rows = [
        {
            "created": str(m.get("created", ""))[:16],
            "id": m.id,
            "outcome": m.get("outcome", ""),
            "title": m.title,
        }
        for m in items
    ]
    print_table(rows, ["created", "id", "outcome", "title"])


def _time_text(value: str | None, key: str) -> str | None:
    from .. import format_time

    when = parse_when(value, key)
    return format_time(when) if when else None
