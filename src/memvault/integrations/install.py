"""Installing memvault into an agent client, and uninstalling it: which files, what goes in
them, writing them.

Every file is planned first (read, merged, rendered) and only then written, so a file that
cannot be merged (invalid JSON, a key of the wrong type) stops the install before anything
changes. A file whose merged content equals what it holds is not touched; a dry run writes
nothing and shows the unified diff of each file. A file that memvault replaces whole (the
slash command) and that holds something else is kept as ``NAME.bak`` first, with a note;
uninstall puts it back.
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
    agents_section,
    claude_settings,
    codex_server,
    mcp_entry,
    slash_command,
)
from .merge import (
    Json,
    merge_server,
    merge_settings,
    parse_json,
    remove_server,
    remove_settings,
    render_json,
)
from .text import merge_codex, merge_section, remove_codex, remove_section

SCOPES = ("project", "user")
Action = Literal["create", "update", "unchanged", "delete"]


class FileChange(Record, frozen=True):
    """One file of an install: where, what happens to it, its text before and after."""

    path: Path
    name: str  # as the diff names it: relative to the project, or ~/... for user files
    action: Action
    before: str | None
    after: str  # "" for a file that is deleted
    backup: Path | None = None  # where the file's text is kept before it is replaced

    def diff(self) -> str:
        """The unified diff of the change (empty when unchanged)."""
        name = self.name
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile="/dev/null" if self.before is None else f"a/{name}",
            tofile="/dev/null" if self.action == "delete" else f"b/{name}",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


class InstallReport(Record):
    """What ``install`` or ``uninstall`` did (or, on a dry run, would do) to each file, and
    notes for the user."""

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


Merge = Callable[[str | None, str, list[str]], str]  # (current text, where, notes) -> new
# (current text, where, notes) -> new text, or None: the file goes (memvault created it)
Remove = Callable[[str, str, list[str]], str | None]


class Target(Record, frozen=True):
    """A file of a client's configuration: how memvault's part is merged into it, how it is
    taken out again, and whether the file is memvault's whole (replaced, not merged)."""

    path: Path
    merge: Merge
    remove: Remove
    whole: bool = False


def json_target(
    path: Path,
    merge: Callable[[Json, str, list[str]], Json],
    remove: Callable[[Json, str, list[str]], Json],
) -> Target:
    def apply(text: str | None, where: str, notes: list[str]) -> str:
        current = parse_json(text or "", where)
        merged = merge(current, where, notes)
        if text is not None and merged == current:
            return text  # nothing to add: the file stays byte for byte as the user wrote it
        return render_json(merged)

    def take_out(text: str, where: str, notes: list[str]) -> str | None:
        current = parse_json(text, where)
        rest = remove(current, where, notes)
        if rest == current:
            return text
        return render_json(rest) if rest else None

    return Target(path, apply, take_out)


def text_target(
    path: Path,
    merge: Callable[[str, str, list[str]], str],
    remove: Callable[[str, str], str],
) -> Target:
    """A text file memvault merges into (``config.toml``, ``AGENTS.md``); a file left empty by
    the removal goes."""

    def take_out(text: str, where: str, notes: list[str]) -> str | None:
        rest = remove(text, where)
        return rest if rest.strip() or rest == text else None

    return Target(path, lambda text, where, notes: merge(text or "", where, notes), take_out)


def whole_target(path: Path, text: str) -> Target:
    """A file that is memvault's whole (the slash command): written as ``text``; removed only
    while it still holds ``text``."""

    def take_out(current: str, where: str, notes: list[str]) -> str | None:
        if current == text:
            return None
        notes.append(f"{where}: not memvault's (changed since install); kept it")
        return current

    return Target(path, lambda current, where, notes: text, take_out, whole=True)


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
    base = project if scope == "project" else home
    if client == "codex":
        # Codex reads ~/.codex/config.toml and ~/.codex/AGENTS.md; in a project it reads
        # .codex/config.toml (once the project is trusted) and the AGENTS.md at its root.
        table = codex_server(vault, agent, team, role, command)
        section = agents_section()
        folder = base / ".codex"
        return [
            text_target(
                folder / "config.toml",
                lambda text, where, notes: merge_codex(text, table, where, notes),
                remove_codex,
            ),
            text_target(
                (folder if scope == "user" else project) / "AGENTS.md",
                lambda text, where, notes: merge_section(text, section),
                lambda text, where: remove_section(text),
            ),
        ]
    entry = mcp_entry(client, vault, agent, team, role, command)

    def server(doc: Json, where: str, notes: list[str]) -> Json:
        return merge_server(doc, entry, where, notes)

    if client == "cursor":
        return [json_target(base / ".cursor" / "mcp.json", server, remove_server)]
    settings = claude_settings(vault, agent, team, role, command, capture_scope)

    def merged_settings(doc: Json, where: str, notes: list[str]) -> Json:
        return merge_settings(doc, settings, where, notes)

    def removed_settings(doc: Json, where: str, notes: list[str]) -> Json:
        return remove_settings(doc, settings, where, notes)

    # Project scope: files shared through the project's git; user scope: Claude Code keeps
    # user MCP servers in ~/.claude.json and user settings under ~/.claude/.
    servers = project / ".mcp.json" if scope == "project" else home / ".claude.json"
    folder = target_folder(scope, project, home)
    return [
        json_target(servers, server, remove_server),
        json_target(folder / "settings.json", merged_settings, removed_settings),
        whole_target(folder / "commands" / f"{SERVER}.md", slash_command()),
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


def check_choice(client: str, scope: str) -> None:
    if client not in CLIENTS:
        raise ValidationError(f"expected {'|'.join(CLIENTS)}, got {client!r}", key="client")
    if scope not in SCOPES:
        raise ValidationError(f"expected {'|'.join(SCOPES)}, got {scope!r}", key="scope")


def check_capture(client: str, capture_scope: str | None) -> None:
    """``--capture-scope``: a scope of memories, and only for a client with capture hooks."""
    if capture_scope is not None and capture_scope not in MEMORY_SCOPES:
        raise ValidationError(
            f"expected {'|'.join(MEMORY_SCOPES)}, got {capture_scope!r}", key="capture-scope"
        )
    if capture_scope is not None and client != "claude-code":
        raise ValidationError(
            f"{client} has no capture hooks: --capture-scope is for claude-code",
            key="capture-scope",
        )


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
    check_choice(client, scope)
    check_capture(client, capture_scope)
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
        backup = None
        if target.whole and action == "update" and before is not None:
            backup = backup_path(target.path, before)
            report.notes.append(
                f"{target.path}: held your own text; kept it as {backup.name}"
                " (uninstall puts it back)"
            )
        name = display_name(target.path, scope, project, home)
        report.files.append(FileChange(target.path, name, action, before, after, backup))
    if client == "claude-code":
        old = target_folder(scope, project, home) / "commands" / "memory.md"
        text = read_text(old)
        if text is not None and "memvault" in text:
            report.notes.append(
                f"{old}: an older memvault's /memory command, which Claude Code's built-in"
                " /memory hides; delete it (the command is /memvault now)"
            )
    if client == "codex" and scope == "project":
        report.notes.append(
            "Codex reads a project's .codex/config.toml only once you trust the project"
            " (Codex asks when it starts there); --user installs for every project"
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
        apply(report)
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


def uninstall(
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
) -> InstallReport:
    """Take out of ``client``'s configuration what :func:`install` put in, and nothing else.

    memvault's server entry, hooks (any version) and section go; its permission rules go;
    an ``env`` value goes only when it is the one install would write with the same
    arguments. A key left empty goes, a file left empty goes, and a file that install kept
    as ``.bak`` comes back. Files hold the user's own entries as they were.
    """
    check_choice(client, scope)
    report = InstallReport(client, scope, vault, dry_run)
    command = command or installed_command([])
    for target in targets(
        client, scope, vault, agent or client, team, role, project, home, command
    ):
        before = read_text(target.path)
        if before is None:
            continue
        after = target.remove(before, str(target.path), report.notes)
        saved = target.path.with_name(target.path.name + ".bak")
        kept = read_text(saved) if target.whole and after is None else None
        name = display_name(target.path, scope, project, home)
        if kept is not None:  # the user's own file, kept aside by install: put back
            report.files.append(FileChange(target.path, name, "update", before, kept))
            bak = display_name(saved, scope, project, home)
            report.files.append(FileChange(saved, bak, "delete", kept, ""))
        elif after is None:
            report.files.append(FileChange(target.path, name, "delete", before, ""))
        else:
            action: Action = "update" if after != before else "unchanged"
            report.files.append(FileChange(target.path, name, action, before, after))
    if not dry_run:
        apply(report)
    return report


def apply(report: InstallReport) -> None:
    """Write the report's changes: backups first, then each file."""
    for change in report.changed:
        if change.backup is not None and change.before is not None:
            write_text(change.backup, change.before)
    for change in report.changed:
        if change.action == "delete":
            change.path.unlink(missing_ok=True)
        else:
            write_text(change.path, change.after)


def backup_path(path: Path, text: str) -> Path:
    """Where to keep ``path``'s text: ``NAME.bak``, unless that holds other text already
    (then ``NAME.bak.1``, ...)."""
    candidate = path.with_name(path.name + ".bak")
    n = 0
    while True:
        held = read_text(candidate)
        if held is None or held == text:
            return candidate
        n += 1
        candidate = path.with_name(f"{path.name}.bak.{n}")


def display_name(path: Path, scope: str, project: Path, home: Path) -> str:
    """``path`` as a diff names it: relative to the project, or ``~/...`` for user files."""
    base = project if scope == "project" else home
    name = path.relative_to(base).as_posix()
    return name if scope == "project" else f"~/{name}"


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
