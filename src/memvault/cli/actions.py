"""The hot commands, ``add``, ``log`` and ``show``, without typer.

The Typer commands in :mod:`memvault.cli.write` and the fast argument parser in
:mod:`memvault.cli.fast` both call these, so the two ways in behave the same.
"""

from __future__ import annotations

from pathlib import Path

from ._common import emit_json, info, open_vault, parse_when, read_text_arg, split_list

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover  (typing costs ~4 ms to import; annotations are strings)
    from typing import Optional

KIND_TYPE = {"episode": "episodic", "fact": "semantic", "procedure": "procedural"}


def add(
    kind: str,
    text: Optional[str],
    *,
    file: Optional[Path] = None,
    title: Optional[str] = None,
    id: Optional[str] = None,
    category: Optional[str] = None,
    tag: Optional[list[str]] = None,
    importance: Optional[int] = None,
    decay: Optional[str] = None,
    confidence: Optional[str] = None,
    scope: Optional[str] = None,
    subject: Optional[str] = None,
    valid_from: Optional[str] = None,
    valid_to: Optional[str] = None,
    trigger: Optional[list[str]] = None,
    step: Optional[list[str]] = None,
    outcome: Optional[str] = None,
    session: Optional[str] = None,
    source: Optional[str] = None,
    related: Optional[list[str]] = None,
    channel: Optional[str] = None,
    author: Optional[str] = None,
    message: Optional[str] = None,
    allow_secrets: bool = False,
    json_out: bool = False,
) -> None:
    """``memvault add KIND [TEXT] ...``: write one memory, print ``id<TAB>path``."""
    body = read_text_arg(text, file)
    vault = open_vault()
    fields = {
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
        KIND_TYPE[kind], body, title=title, id=id, allow_secrets=allow_secrets, message=message, **fields
    )
    if json_out:
        emit_json(
            {
                **result.memory.to_dict(),
                "commit": result.commit,
                "superseded": list(result.superseded),
                "inbox": result.inbox,
            }
        )
        return
    where = "proposed in inbox (needs review)" if result.inbox else "saved"
    print(f"{result.memory.id}\t{result.memory.path}")
    info(f"{where}; commit {result.commit[:10] if result.commit else '-'}")
    if result.superseded:
        info(f"supersedes {', '.join(result.superseded)}")


def log(
    text: Optional[str],
    *,
    session: str,
    role: str = "user",
    rating: Optional[str] = None,
    file: Optional[Path] = None,
    allow_secrets: bool = False,
    json_out: bool = False,
) -> None:
    """``memvault log --session S [TEXT]``: append a turn, print ``id<TAB>path``."""
    body = read_text_arg(text, file)
    vault = open_vault()
    extra = {"rating": rating} if rating else None
    result = vault.log(session, role, body, extra=extra, allow_secrets=allow_secrets)
    if json_out:
        emit_json({**result.memory.to_dict(with_content=False), "commit": result.commit})
        return
    print(f"{result.memory.id}\t{result.memory.path}")


def show(memory_id: str, *, raw: bool = False, json_out: bool = False) -> None:
    """``memvault show ID``: one memory, as text, JSON or the file's exact bytes."""
    import sys

    vault = open_vault()
    memory = vault.get(memory_id)
    if json_out:
        emit_json(memory.to_dict())
    elif raw:
        sys.stdout.write(vault.raw_text(memory))
    else:
        print(f"# {memory.title}  ({memory.id}, {memory.type}/{memory.category}, {memory.status})")
        print(f"path: {memory.path}")
        keys = ("scope", "agent", "team", "subject", "tags", "importance", "created", "valid_from", "valid_to")
        for key in (*keys, "superseded_by", "supersedes"):
            value = memory.meta.get(key)
            if value not in (None, "", []):
                print(f"{key}: {', '.join(value) if isinstance(value, list) else value}")
        print()
        print(memory.content)


def _time_text(value: Optional[str], key: str) -> Optional[str]:
    from ..memory import format_time

    when = parse_when(value, key)
    return format_time(when) if when else None
