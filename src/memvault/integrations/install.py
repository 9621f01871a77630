"""Installing memvault into an agent client: which files, what goes in them, writing them.

Every file is planned first (read, merged, rendered) and only then written, so a file that
cannot be merged (invalid JSON, a key of the wrong type) stops the install before anything
changes. A file whose merged content equals what it holds is not touched; a dry run writes
nothing and shows the unified diff of each file.
"""

from __future__ import annotations

import difflib
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from .. import SCOPES as MEMORY_SCOPES
from ..errors import MemvaultError, ValidationError
from ..values import Record, field
from .entries import (
    CAPTURE_SCOPE,
    CLIENTS,
    COMMAND,
    SERVER,
    claude_settings,
    mcp_entry,
    slash_command,
)
from .merge import Json, merge_server, merge_settings, parse_json, render_json

SCOPES = ("project", "user")
Action = Literal["create", "update", "unchanged"]


class FileChange(Record, frozen=True):
    """One file of an install: where, what happens to it, its text before and after."""

    path: Path
    name: str  # as the diff names it: relative to the project, or ~/... for user files
    action: Action
    before: str | None
    after: str

    def diff(self) -> str:
        """The unified diff of the change (empty when unchanged)."""
        name = self.name
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile="/dev/null" if self.before is None else f"a/{name}",
            tofile=f"b/{name}",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


class InstallReport(Record):
    """What ``install`` did (or, on a dry run, would do) to each file, and notes for the user."""

    client: str
    scope: str
    vault: str
    dry_run: bool
    files: list[FileChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    capture_scope: str | None = None  # the scope the hooks save sessions with (claude-code)

    @property
    def changed(self) -> list[FileChange]:
        return [f for f in self.files if f.action != "unchanged"]

    def as_dict(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "scope": self.scope,
            "vault": self.vault,
            "dry_run": self.dry_run,
            "capture_scope": self.capture_scope,
            "files": [
                {"path": str(f.path), "action": f.action, "diff": f.diff()} for f in self.files
            ],
            "notes": list(self.notes),
        }


class Target(Record, frozen=True):
    """A file of a client's configuration and how memvault's part is merged into it."""

    path: Path
    merge: Callable[[str | None, str, list[str]], str]  # (current text, where, notes) -> new


def json_target(path: Path, merge: Callable[[Json, str, list[str]], Json]) -> Target:
    def apply(text: str | None, where: str, notes: list[str]) -> str:
        current = parse_json(text or "", where)
        merged = merge(current, where, notes)
        if text is not None and merged == current:
            return text  # nothing to add: the file stays byte for byte as the user wrote it
        return render_json(merged)

    return Target(path, apply)


def targets(
    client: str,
    scope: str,
    vault: str,
    agent: str,
    team: str | None,
    role: str | None,
    project: Path,
    home: Path,
    command: str = COMMAND,
    capture_scope: str = CAPTURE_SCOPE,
) -> list[Target]:
    """The files ``client`` reads, for one scope, with memvault's part of each."""
    entry = mcp_entry(client, vault, agent, team, role, command)

    def server(doc: Json, where: str, notes: list[str]) -> Json:
        return merge_server(doc, entry, where, notes)

    if client == "cursor":
        base = project if scope == "project" else home
        return [json_target(base / ".cursor" / "mcp.json", server)]
    settings = claude_settings(vault, agent, team, role, command, capture_scope)

    def merged_settings(doc: Json, where: str, notes: list[str]) -> Json:
        return merge_settings(doc, settings, where, notes)

    command = slash_command()
    # Project scope: files shared through the project's git; user scope: Claude Code keeps
    # user MCP servers in ~/.claude.json and user settings under ~/.claude/.
    servers = project / ".mcp.json" if scope == "project" else home / ".claude.json"
    folder = target_folder(scope, project, home)
    return [
        json_target(servers, server),
        json_target(folder / "settings.json", merged_settings),
        Target(folder / "commands" / f"{SERVER}.md", lambda text, where, notes: command),
    ]


def read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise ValidationError("not UTF-8 text; nothing was written", str(path)) from None
    except OSError as exc:
        raise MemvaultError(f"cannot read: {exc.strerror or exc}", str(path)) from None


def write_text(path: Path, text: str) -> None:
    """Atomic replace that keeps an existing file's permissions (``~/.claude.json`` may hold
    other servers' credentials and be readable by its owner only)."""
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o666
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.memvault-{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def install(
    client: str,
    scope: str,
    *,
    vault: str,
    agent: str | None = None,
    team: str | None = None,
    role: str | None = None,
    project: Path,
    home: Path,
    dry_run: bool = False,
    command: str | None = None,
    capture_scope: str | None = None,
) -> InstallReport:
    """Merge memvault into ``client``'s configuration for ``scope``, idempotently.

    ``vault`` is written as given (``~/memory`` stays portable across a team); ``agent``
    defaults to the client's name. ``command`` is what the client runs (default: the
    absolute path of this installation's ``memvault``, see :func:`installed_command`).
    ``capture_scope``: the scope Claude Code's hooks save sessions with (default ``self``;
    Cursor has no capture hooks). With ``dry_run`` nothing is written.
    """
    if client not in CLIENTS:
        raise ValidationError(f"expected {'|'.join(CLIENTS)}, got {client!r}", key="client")
    if scope not in SCOPES:
        raise ValidationError(f"expected {'|'.join(SCOPES)}, got {scope!r}", key="scope")
    if capture_scope is not None and capture_scope not in MEMORY_SCOPES:
        raise ValidationError(
            f"expected {'|'.join(MEMORY_SCOPES)}, got {capture_scope!r}", key="capture-scope"
        )
    if capture_scope is not None and client != "claude-code":
        raise ValidationError(
            f"{client} has no capture hooks: --capture-scope is for claude-code",
            key="capture-scope",
        )
    report = InstallReport(client, scope, vault, dry_run)
    command = command or installed_command(report.notes)
    captured = capture_scope or CAPTURE_SCOPE
    if client == "claude-code":
        report.capture_scope = captured
        report.notes.append(capture_note(captured, agent or client, team))
    for target in targets(
        client, scope, vault, agent or client, team, role, project, home, command, captured
    ):
        before = read_text(target.path)
        after = target.merge(before, str(target.path), report.notes)
        action: Action = (
            "create" if before is None else "update" if after != before else "unchanged"
        )
        base = project if scope == "project" else home
        name = target.path.relative_to(base).as_posix()
        name = name if scope == "project" else f"~/{name}"
        report.files.append(FileChange(target.path, name, action, before, after))
    if client == "claude-code":
        old = target_folder(scope, project, home) / "commands" / "memory.md"
        text = read_text(old)
        if text is not None and "memvault" in text:
            report.notes.append(
                f"{old}: an older memvault's /memory command, which Claude Code's built-in"
                " /memory hides; delete it (the command is /memvault now)"
            )
    if command == COMMAND and shutil.which(COMMAND) is None:
        report.notes.append(
            "memvault is not on this PATH: the client starts `memvault` by name, so put its"
            " folder on the PATH the client runs with"
        )
    elif command != COMMAND and scope == "project":
        report.notes.append(
            f"the project's files name {command}, this machine's memvault: a teammate whose"
            " memvault is elsewhere installs with --command (or --command memvault, by name)"
        )
    if not dry_run:
        for change in report.changed:
            write_text(change.path, change.after)
    return report


def capture_note(scope: str, agent: str, team: str | None) -> str:
    """What the install says about the sessions its hooks will save."""
    who = {
        "self": f"only agent {agent} can read them",
        "team": f"team {team} can read them" if team else "the whole team can read them",
        "global": "proposed in inbox/ for review, then everyone can read them",
    }[scope]
    return (
        f"Claude Code sessions are saved at PreCompact and SessionEnd with scope {scope}: {who}"
        " (--capture-scope chooses; memvault pause --channel claude-code stops it)"
    )


def installed_command(notes: list[str]) -> str:
    """The absolute path of the ``memvault`` this Python runs (the venv's, next to the
    interpreter), else the one on the PATH; the bare name, with a note, when neither is
    found. A client started from a desktop launcher has a PATH without the venv: a bare
    ``memvault`` fails there, silently in a hook."""
    import sys

    beside = Path(sys.executable).parent / COMMAND
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(COMMAND)
    if found:
        return str(Path(found).resolve())
    notes.append("found no memvault executable: the files name `memvault` (use --command)")
    return COMMAND


def target_folder(scope: str, project: Path, home: Path) -> Path:
    return (project if scope == "project" else home) / ".claude"


def portable(path: Path, home: Path) -> str:
    """``path`` as a configuration should name it: ``~/...`` under the home folder (the same
    text then works for every member of a team), else absolute."""
    try:
        inside = path.resolve().relative_to(home.resolve()).as_posix()
    except ValueError:
        return str(path.resolve())
    return "~" if inside == "." else f"~/{inside}"
