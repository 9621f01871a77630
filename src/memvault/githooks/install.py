"""Install, remove and inspect memvault's git hook shims, politely.

The shims are POSIX ``sh`` scripts (``shim.sh`` in this package) carrying a marker line
with a version, so :func:`install` recognises (and upgrades) its own earlier shims and
never mistakes a foreign hook for one. A foreign hook found in place is kept as
``<name>.legacy`` and runs first; its exit status is honoured. ``core.hooksPath`` is
respected (``git rev-parse --git-path hooks``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import run_git
from ..errors import GitError
from ..values import Record
from .names import (
    ALL_HOOKS,
    BLOCKING_HOOKS,
    CLIENT_HOOKS,
    LAST_ERROR,
    LEGACY_SUFFIX,
    REINDEX_HOOKS,
    SERVER_HOOKS,
)

SHIM_MARKER = "memvault-hook-shim"
# Bump when shim.sh changes: install upgrades older shims, status calls them outdated.
# Version 1 ran ``python -m memvault.hooks``, which still works (see memvault/hooks.py).
SHIM_VERSION = 2
_VERSION_RE = re.compile(rf"{SHIM_MARKER} version=(\d+)")
_PYTHON_RE = re.compile(r"^MEMVAULT_PYTHON=(.*)$", re.MULTILINE)
_PLACEHOLDER_RE = re.compile(r"@[A-Z_]+@")


# --- repository layout ---------------------------------------------------------------


class RepoInfo(Record, frozen=True):
    """Where a repository keeps things, as git itself reports them."""

    bare: bool
    git_dir: Path  # the common git dir (shared by linked worktrees)
    toplevel: Path | None  # None for a bare repository
    hooks_dir: Path
    hooks_path_scope: str | None  # "local"/"global"/"system" when core.hooksPath is set


def repo_info(path: Path) -> RepoInfo:
    """Describe the repository at ``path`` (a worktree folder or a bare repository)."""
    path = Path(path).resolve()
    proc = run_git(
        path,
        ["rev-parse", "--is-bare-repository", "--git-common-dir", "--git-path", "hooks"],
        check=False,
    )
    if proc.returncode != 0:
        raise GitError("not a git repository (or git cannot read it)", str(path))
    bare_text, common, hooks = proc.stdout.splitlines()[:3]
    bare = bare_text.strip() == "true"
    toplevel = None
    if not bare:
        top = run_git(path, ["rev-parse", "--show-toplevel"]).stdout.strip()
        toplevel = Path(top).resolve()
    git_dir = (path / common).resolve()
    # rev-parse printed the hooks path relative to ``path``.
    hooks_dir = Path(os.path.expanduser(hooks))
    if not hooks_dir.is_absolute():
        hooks_dir = (path / hooks_dir).resolve()
    scope_proc = run_git(path, ["config", "--show-scope", "--get", "core.hooksPath"], check=False)
    scope = None
    if scope_proc.returncode == 0:
        scope = scope_proc.stdout.split("\t", 1)[0].strip() or None
    if scope is not None:
        # A relative core.hooksPath is relative to where git runs hooks: the worktree
        # top, or the git dir of a bare repository.
        raw = scope_proc.stdout.split("\t", 1)[1].strip()
        expanded = Path(os.path.expanduser(raw))
        base = git_dir if bare else (toplevel or path)
        hooks_dir = (expanded if expanded.is_absolute() else base / expanded).resolve()
    return RepoInfo(bare, git_dir, toplevel, hooks_dir, scope)


# --- shims ---------------------------------------------------------------------------


def interpreter() -> str:
    """The Python to record in shims: this one, when it can run memvault."""
    return sys.executable or ""


def shim_template() -> str:
    """``shim.sh``, the text every shim is made from."""
    from importlib.resources import files

    return files("memvault.githooks").joinpath("shim.sh").read_text(encoding="utf-8")


def render_shim(name: str, python: str | None = None, vault_dir: str = ".") -> str:
    """The text of the shim for hook ``name``."""
    blocking = name in BLOCKING_HOOKS
    values = {
        "@MARKER@": SHIM_MARKER,
        "@VERSION@": str(SHIM_VERSION),
        "@HOOK@": shlex.quote(name),
        "@KIND@": (
            "validation hook: blocks on a problem" if blocking else "reindex hook: fails open"
        ),
        "@PYTHON@": shlex.quote(interpreter() if python is None else python),
        "@VAULT_DIR@": shlex.quote(vault_dir),
        "@LEGACY@": LEGACY_SUFFIX,
        # Only reindex hooks skip memvault's own git commands: validation always runs, and
        # a push from a local clone hands MEMVAULT_INTERNAL on to the server's post-receive.
        "@SKIP_INTERNAL@": "yes" if name in REINDEX_HOOKS else "no",
        "@FAIL_STATUS@": "1" if blocking else "0",
    }
    return _PLACEHOLDER_RE.sub(lambda match: values[match.group(0)], shim_template())


def shim_version(path: Path) -> int | None:
    """The version of a memvault shim at ``path``; None when it is not one of ours."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(512).decode("utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return None
    match = _VERSION_RE.search(head)
    return int(match.group(1)) if match else None


def shim_python(path: Path) -> str:
    """The interpreter a shim records (empty when none)."""
    match = _PYTHON_RE.search(path.read_text(encoding="utf-8", errors="replace"))
    if not match or match.group(1).strip() in ("", "''"):
        return ""
    return shlex.split(match.group(1))[0]


def _write_shim(path: Path, text: str) -> None:
    from .. import atomic_write

    atomic_write(path, text)
    path.chmod(0o755)


# --- install / uninstall -------------------------------------------------------------


class HookAction(Record, frozen=True):
    hook: str
    action: str  # installed | upgraded | unchanged | removed | restored | skipped
    path: str
    detail: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"hook": self.hook, "action": self.action, "path": self.path, "detail": self.detail}


class InstallReport(Record, frozen=True):
    hooks_dir: str
    bare: bool
    actions: tuple[HookAction, ...]
    merge_driver: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not any(a.action == "skipped" for a in self.actions)

    def as_dict(self) -> dict[str, Any]:
        return {
            "hooks_dir": self.hooks_dir,
            "bare": self.bare,
            "actions": [a.as_dict() for a in self.actions],
            "merge_driver": self.merge_driver,
            "notes": list(self.notes),
            "ok": self.ok,
        }


def install(
    path: Path,
    *,
    bare: bool | None = None,
    python: str | None = None,
    hooks: Sequence[str] | None = None,
    index_url: str | None = None,
) -> InstallReport:
    """Install (or upgrade) memvault's shims in the repository at ``path``.

    A non-bare repository gets the client hooks and the merge driver registration;
    a bare one (``bare=True``) gets ``post-receive``. ``index_url`` (bare only) is stored
    as ``git config memvault.indexUrl`` for the server-side reindex.
    """
    info = repo_info(path)
    if bare is None:
        bare = info.bare
    if bare and not info.bare:
        raise GitError(
            "--bare is for a bare repository (a remote); this one has a working tree", str(path)
        )
    if not bare and info.bare:
        raise GitError("this is a bare repository: use 'memvault hooks install --bare'", str(path))
    names = tuple(hooks) if hooks else (SERVER_HOOKS if bare else CLIENT_HOOKS)
    vault_dir = "."
    if not bare and info.toplevel is not None:
        vault_dir = os.path.relpath(Path(path).resolve(), info.toplevel)
    info.hooks_dir.mkdir(parents=True, exist_ok=True)
    actions = [
        _install_one(info.hooks_dir, name, render_shim(name, python, vault_dir)) for name in names
    ]
    notes: list[str] = []
    if info.hooks_path_scope and info.hooks_path_scope != "local":
        notes.append(
            f"core.hooksPath is set in your {info.hooks_path_scope} git config: "
            "these shims run in every "
            "repository using that folder (they do nothing outside a memvault vault)"
        )
    driver = None
    if not bare:
        from .. import register_driver

        driver = register_driver(info.toplevel or Path(path))
        if not _attributes_route(Path(path)):
            notes.append(
                ".gitattributes does not route *.md/*.yaml to merge=memvault; "
                "the merge driver is idle"
            )
    if index_url:
        run_git(info.git_dir, ["config", "memvault.indexUrl", index_url])
    return InstallReport(str(info.hooks_dir), bare, tuple(actions), driver, tuple(notes))


def _attributes_route(vault_dir: Path) -> bool:
    """The vault's ``.gitattributes`` sends files to the memvault merge driver."""
    attributes = vault_dir / ".gitattributes"
    return attributes.exists() and "merge=memvault" in attributes.read_text(
        encoding="utf-8", errors="replace"
    )


def _install_one(hooks_dir: Path, name: str, text: str) -> HookAction:
    target = hooks_dir / name
    legacy = hooks_dir / f"{name}{LEGACY_SUFFIX}"
    version = shim_version(target)
    if version is not None:
        current = target.read_text(encoding="utf-8", errors="replace")
        if current == text and os.access(target, os.X_OK):
            return HookAction(name, "unchanged", str(target))
        _write_shim(target, text)
        detail = f"from version {version}" if version != SHIM_VERSION else "refreshed"
        return HookAction(name, "upgraded", str(target), detail)
    if os.path.lexists(target):
        if os.path.lexists(legacy):
            return HookAction(
                name,
                "skipped",
                str(target),
                f"a foreign hook is here and {legacy.name} exists too; "
                "move one of them away and install again",
            )
        os.replace(target, legacy)
        _write_shim(target, text)
        return HookAction(
            name, "installed", str(target), f"existing hook kept as {legacy.name} (runs first)"
        )
    _write_shim(target, text)
    return HookAction(name, "installed", str(target))


def uninstall(path: Path, *, hooks: Sequence[str] | None = None) -> InstallReport:
    """Remove memvault's shims and put back the hooks they had displaced."""
    info = repo_info(path)
    names = tuple(hooks) if hooks else ALL_HOOKS
    expected = SERVER_HOOKS if info.bare else CLIENT_HOOKS
    actions: list[HookAction] = []
    for name in names:
        target = info.hooks_dir / name
        legacy = info.hooks_dir / f"{name}{LEGACY_SUFFIX}"
        ours = shim_version(target) is not None
        if ours:
            target.unlink()
        if not os.path.lexists(target) and os.path.lexists(legacy):
            os.replace(legacy, target)
            actions.append(
                HookAction(name, "restored", str(target), f"put back from {legacy.name}")
            )
        elif ours:
            actions.append(HookAction(name, "removed", str(target)))
        elif os.path.lexists(target) and name in expected:
            actions.append(
                HookAction(name, "unchanged", str(target), "not a memvault hook; left alone")
            )
    notes: tuple[str, ...] = ()
    if not info.bare:
        notes = ("the merge driver stays registered (it only acts through .gitattributes)",)
    return InstallReport(str(info.hooks_dir), info.bare, tuple(actions), None, notes)


# --- status --------------------------------------------------------------------------


class HookState(Record, frozen=True):
    hook: str
    state: str  # installed | outdated | foreign | missing
    path: str
    version: int | None = None
    legacy: bool = False
    python: str | None = None
    python_ok: bool = True


class HooksStatus(Record, frozen=True):
    hooks_dir: str
    bare: bool
    hooks: tuple[HookState, ...]
    merge_driver: str | None
    attributes: bool
    index_url: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(h.state == "installed" and h.python_ok for h in self.hooks) and (
            self.bare or (self.merge_driver is not None and self.attributes)
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "hooks_dir": self.hooks_dir,
            "bare": self.bare,
            "hooks": [h.as_dict() for h in self.hooks],
            "merge_driver": self.merge_driver,
            "gitattributes": self.attributes,
            "index_url": self.index_url,
            "notes": list(self.notes),
            "ok": self.ok,
        }


def hook_state(hooks_dir: Path, name: str) -> HookState:
    """What is installed as hook ``name`` in ``hooks_dir``."""
    target = hooks_dir / name
    legacy = os.path.lexists(hooks_dir / f"{name}{LEGACY_SUFFIX}")
    version = shim_version(target)
    if version is None:
        state = "foreign" if os.path.lexists(target) else "missing"
        return HookState(name, state, str(target), None, legacy)
    python = shim_python(target)
    python_ok = bool(python) and os.access(python, os.X_OK)
    state = "installed" if version == SHIM_VERSION else "outdated"
    return HookState(name, state, str(target), version, legacy, python or None, python_ok)


def status(path: Path) -> HooksStatus:
    """What is installed where, and whether it would work."""
    info = repo_info(path)
    states = tuple(
        hook_state(info.hooks_dir, name) for name in (SERVER_HOOKS if info.bare else CLIENT_HOOKS)
    )
    driver = None
    attributes = False
    notes: list[str] = []
    index_url = None
    if info.bare:
        proc = run_git(info.git_dir, ["config", "--get", "memvault.indexUrl"], check=False)
        index_url = proc.stdout.strip() or None
    else:
        from .. import registered_driver

        driver = registered_driver(info.toplevel or path)
        attributes = _attributes_route(Path(path))
        if driver is None:
            notes.append("merge driver not registered: run 'memvault hooks install'")
    notes.extend(_last_error_notes(info.git_dir))
    for hook in states:
        if hook.state == "installed" and not hook.python_ok:
            notes.append(
                f"{hook.hook}: the recorded interpreter {hook.python} is gone; "
                "run 'memvault hooks install'"
            )
        if hook.state == "outdated":
            notes.append(
                f"{hook.hook}: shim version {hook.version}; run 'memvault hooks install' to upgrade"
            )
    return HooksStatus(
        str(info.hooks_dir), info.bare, states, driver, attributes, index_url, tuple(notes)
    )


def _last_error_notes(git_dir: Path) -> list[str]:
    """A note on the last background reindex, when it failed."""
    last = git_dir / "memvault" / LAST_ERROR
    try:
        data = json.loads(last.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError, OSError):
        return []
    return [
        f"the last background reindex ({data.get('hook')}, {data.get('time')}) "
        f"failed: {data.get('message')}"
    ]
