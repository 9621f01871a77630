"""Git hooks: polite install/uninstall/status of small shims, and the runner they call.

The shims are POSIX ``sh`` scripts carrying a marker line with a version, so ``install``
recognises (and upgrades) its own earlier shims and never mistakes a foreign hook for
one. A foreign hook found in place is kept as ``<name>.legacy`` and runs first; its exit
status is honoured. ``core.hooksPath`` is respected (``git rev-parse --git-path hooks``).

Each shim runs ``<python> -P -m memvault.hooks NAME`` with the interpreter recorded at
install time (``memvault hook-run NAME`` without the CLI framework's start-up cost, which
matters on every commit), falling back to ``memvault hook-run`` on ``PATH``. Both land in
:func:`run_hook`:

* ``pre-commit`` validates the *staged* memory files (``git checkout-index`` of the
  staged blobs into a temporary folder, then :func:`memvault.reports.check_files`, all
  in one process) and blocks the commit on an invalid file or a likely secret.
  ``git commit --no-verify`` stays the escape hatch.
* ``post-commit``, ``post-merge``, ``post-checkout``, ``post-rewrite`` and ``pre-push``
  bring the search index up to date (:meth:`Vault.reindex`). They *fail open*: whatever
  goes wrong is one warning line on stderr and exit status 0. The reindex runs in a
  forked child with its output detached to the log, and by default git does not wait
  for it at all: loading the vector store alone takes seconds, and a search refreshes
  the index lazily anyway, so a commit only pays for starting Python. Set
  ``git config memvault.hookTimeout N`` (or ``$MEMVAULT_HOOK_TIMEOUT``) to let git wait up
  to N seconds (warnings then appear inline); a failure in the background is reported, in
  one line, by the next hook. A hook never waits for the vault lock: when another
  memvault process is writing it leaves a ``reindex-pending`` mark (a reindexing hook
  runs once more when it sees it) instead of opening the index concurrently.
* Commits made by memvault itself (``MEMVAULT_INTERNAL=1``, set by
  :func:`memvault.gitstore.run_git`) skip the reindex in the shim, before Python even
  starts: memvault refreshes its catalog after each write and the index lazily.
* During a rebase/cherry-pick/am sequence ``post-commit`` and ``post-checkout`` skip;
  ``post-rewrite`` reindexes once at the end.
* ``post-receive`` (``hooks install --bare``, in a bare remote) checks each pushed
  branch out into a detached worktree under ``<git-dir>/memvault/worktrees/`` and runs
  the reindex there, against ``git config memvault.indexUrl`` (a shared Chroma server)
  when set, else the worktree's own configuration. Concurrent pushes queue behind one
  running update instead of indexing in parallel. Here git waits (30 s by default,
  ``git config memvault.hookTimeout``) so the pusher sees ``remote: memvault: ...``.

Logs of background work go to ``<git-dir>/memvault/hooks.log``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import gitstore
from .errors import Problem
from .sync import summarize

SHIM_MARKER = "memvault-hook-shim"
SHIM_VERSION = 1  # bump when the shim text changes: install upgrades older ones
CLIENT_HOOKS = (
    "pre-commit",
    "post-commit",
    "post-merge",
    "post-checkout",
    "post-rewrite",
    "pre-push",
)
SERVER_HOOKS = ("post-receive",)
ALL_HOOKS = CLIENT_HOOKS + SERVER_HOOKS
REINDEX_HOOKS = ("post-commit", "post-merge", "post-checkout", "post-rewrite", "pre-push")
BLOCKING_HOOKS = ("pre-commit",)  # our check may stop git; all others fail open
STDIN_HOOKS = ("pre-push", "post-rewrite", "post-receive", "pre-receive", "reference-transaction")
CLIENT_TIMEOUT = 0.0  # client hooks: never make git wait for the index (see module doc)
SERVER_TIMEOUT = 30.0  # post-receive: the pusher learns whether the shared index took it
LEGACY_SUFFIX = ".legacy"
MEMORY_TREES = ("episodic", "semantic", "procedural", "archive", "inbox")
ZERO_SHA_RE = re.compile(r"^0+$")
LAST_ERROR = "last-error.json"
PENDING = "reindex-pending"
_VERSION_RE = re.compile(rf"{SHIM_MARKER} version=(\d+)")


# --- repository layout ---------------------------------------------------------------


@dataclass(frozen=True)
class RepoInfo:
    """Where a repository keeps things, as git itself reports them."""

    bare: bool
    git_dir: Path  # the common git dir (shared by linked worktrees)
    toplevel: Path | None  # None for a bare repository
    hooks_dir: Path
    hooks_path_scope: str | None  # "local"/"global"/"system" when core.hooksPath is set


def repo_info(path: Path) -> RepoInfo:
    """Describe the repository at ``path`` (a worktree folder or a bare repository)."""
    path = Path(path).resolve()
    proc = gitstore.run_git(
        path,
        ["rev-parse", "--is-bare-repository", "--git-common-dir", "--git-path", "hooks"],
        check=False,
    )
    if proc.returncode != 0:
        raise gitstore.GitError("not a git repository (or git cannot read it)", str(path))
    bare_text, common, hooks = proc.stdout.splitlines()[:3]
    bare = bare_text.strip() == "true"
    toplevel = None
    if not bare:
        top = gitstore.run_git(path, ["rev-parse", "--show-toplevel"]).stdout.strip()
        toplevel = Path(top).resolve()
    git_dir = (path / common).resolve()
    # Relative hook paths are relative to where git runs hooks: the worktree top, or the
    # git dir of a bare repository. rev-parse printed ours relative to ``path``.
    hooks_dir = Path(os.path.expanduser(hooks))
    if not hooks_dir.is_absolute():
        hooks_dir = (path / hooks_dir).resolve()
    scope_proc = gitstore.run_git(
        path, ["config", "--show-scope", "--get", "core.hooksPath"], check=False
    )
    scope = (
        scope_proc.stdout.split("\t", 1)[0].strip() or None if scope_proc.returncode == 0 else None
    )
    if scope is not None:
        raw = scope_proc.stdout.split("\t", 1)[1].strip()
        expanded = Path(os.path.expanduser(raw))
        base = git_dir if bare else (toplevel or path)
        hooks_dir = (expanded if expanded.is_absolute() else base / expanded).resolve()
    return RepoInfo(bare, git_dir, toplevel, hooks_dir, scope)


def state_dir(git_dir: Path) -> Path:
    """memvault's private folder inside the git dir (logs, queues, server worktrees)."""
    path = git_dir / "memvault"
    path.mkdir(parents=True, exist_ok=True)
    return path


# --- shims ---------------------------------------------------------------------------


def interpreter() -> str:
    """The Python to record in shims: this one, when it can run memvault."""
    return sys.executable or ""


def render_shim(name: str, python: str | None = None, vault_dir: str = ".") -> str:
    """The text of the shim for hook ``name``."""
    py = interpreter() if python is None else python
    fail_status = 1 if name in BLOCKING_HOOKS else 0
    kind = (
        "validation hook: blocks on a problem"
        if name in BLOCKING_HOOKS
        else "reindex hook: fails open"
    )
    internal = ""
    if name in REINDEX_HOOKS:
        # Not for pre-commit (validation always runs) nor post-receive (a push from a
        # local clone hands the variable on to the server side).
        internal = (
            'if [ "${MEMVAULT_INTERNAL:-}" = 1 ]; then\n'
            "    # memvault's own git commands: it keeps its catalog and index fresh by itself.\n"
            f'    legacy="$HERE/$HOOK{LEGACY_SUFFIX}"\n'
            '    if [ -x "$legacy" ]; then exec "$legacy" "$@"; fi\n'
            "    exit 0\n"
            "fi\n"
        )
    return f"""#!/bin/sh
# {SHIM_MARKER} version={SHIM_VERSION} hook={name}
# Installed by 'memvault hooks install' ({kind}). 'memvault hooks uninstall' removes it
# and restores the hook that was here before (kept meanwhile as {name}{LEGACY_SUFFIX}, run first).
HOOK={shlex.quote(name)}
MEMVAULT_PYTHON={shlex.quote(py)}
MEMVAULT_VAULT_DIR={shlex.quote(vault_dir)}
HERE=$(cd "$(dirname "$0")" && pwd)
{internal}if [ -n "$MEMVAULT_PYTHON" ] && [ -x "$MEMVAULT_PYTHON" ]; then
    exec "$MEMVAULT_PYTHON" -P -m memvault.hooks \\
        --hooks-dir "$HERE" --vault-dir "$MEMVAULT_VAULT_DIR" "$HOOK" -- "$@"
fi
if command -v memvault >/dev/null 2>&1; then
    exec memvault hook-run --hooks-dir "$HERE" --vault-dir "$MEMVAULT_VAULT_DIR" "$HOOK" -- "$@"
fi
echo "memvault: $HOOK hook: memvault not found ($MEMVAULT_PYTHON is gone, none on PATH);" \\
    "run 'memvault hooks install' again, or 'memvault hooks uninstall'" >&2
if [ -x "$HERE/$HOOK{LEGACY_SUFFIX}" ]; then "$HERE/$HOOK{LEGACY_SUFFIX}" "$@" || exit $?; fi
exit {fail_status}
"""


def shim_version(path: Path) -> int | None:
    """The version of a memvault shim at ``path``; None when it is not one of ours."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(512).decode("utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return None
    match = _VERSION_RE.search(head)
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class HookAction:
    hook: str
    action: str  # installed | upgraded | unchanged | removed | restored | skipped
    path: str
    detail: str = ""

    def as_dict(self) -> dict[str, str]:
        return {"hook": self.hook, "action": self.action, "path": self.path, "detail": self.detail}


@dataclass(frozen=True)
class InstallReport:
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


def _write_shim(path: Path, text: str) -> None:
    from .files import atomic_write

    atomic_write(path, text)
    path.chmod(0o755)


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
        raise gitstore.GitError(
            "--bare is for a bare repository (a remote); this one has a working tree", str(path)
        )
    if not bare and info.bare:
        raise gitstore.GitError(
            "this is a bare repository: use 'memvault hooks install --bare'", str(path)
        )
    names = tuple(hooks) if hooks else (SERVER_HOOKS if bare else CLIENT_HOOKS)
    vault_dir = "."
    if not bare and info.toplevel is not None:
        vault_dir = os.path.relpath(Path(path).resolve(), info.toplevel)
    info.hooks_dir.mkdir(parents=True, exist_ok=True)
    actions: list[HookAction] = []
    for name in names:
        actions.append(_install_one(info.hooks_dir, name, render_shim(name, python, vault_dir)))
    notes: list[str] = []
    if info.hooks_path_scope and info.hooks_path_scope != "local":
        notes.append(
            f"core.hooksPath is set in your {info.hooks_path_scope} git config: "
            "these shims run in every "
            "repository using that folder (they do nothing outside a memvault vault)"
        )
    driver = None
    if not bare:
        from .merge import register_driver

        driver = register_driver(info.toplevel or Path(path))
        attributes = Path(path) / ".gitattributes"
        if not attributes.exists() or "merge=memvault" not in attributes.read_text(
            encoding="utf-8", errors="replace"
        ):
            notes.append(
                ".gitattributes does not route *.md/*.yaml to merge=memvault; "
                "the merge driver is idle"
            )
    if index_url:
        gitstore.run_git(info.git_dir, ["config", "memvault.indexUrl", index_url])
    return InstallReport(str(info.hooks_dir), bare, tuple(actions), driver, tuple(notes))


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
        elif os.path.lexists(target) and name in (CLIENT_HOOKS if not info.bare else SERVER_HOOKS):
            actions.append(
                HookAction(name, "unchanged", str(target), "not a memvault hook; left alone")
            )
    notes: tuple[str, ...] = ()
    if not info.bare:
        notes = ("the merge driver stays registered (it only acts through .gitattributes)",)
    return InstallReport(str(info.hooks_dir), info.bare, tuple(actions), None, notes)


@dataclass(frozen=True)
class HookState:
    hook: str
    state: str  # installed | outdated | foreign | missing
    path: str
    version: int | None = None
    legacy: bool = False
    python: str | None = None
    python_ok: bool = True

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class HooksStatus:
    hooks_dir: str
    bare: bool
    hooks: tuple[HookState, ...]
    merge_driver: str | None
    attributes: bool
    index_url: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

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


_PY_RE = re.compile(r"^MEMVAULT_PYTHON=(.*)$", re.MULTILINE)


def status(path: Path) -> HooksStatus:
    """What is installed where, and whether it would work."""
    info = repo_info(path)
    names = SERVER_HOOKS if info.bare else CLIENT_HOOKS
    states: list[HookState] = []
    for name in names:
        target = info.hooks_dir / name
        legacy = os.path.lexists(info.hooks_dir / f"{name}{LEGACY_SUFFIX}")
        version = shim_version(target)
        if version is None:
            state = "foreign" if os.path.lexists(target) else "missing"
            states.append(HookState(name, state, str(target), None, legacy))
            continue
        text = target.read_text(encoding="utf-8", errors="replace")
        match = _PY_RE.search(text)
        py = (
            shlex.split(match.group(1))[0]
            if match and match.group(1).strip() not in ("", "''")
            else ""
        )
        py_ok = bool(py) and os.access(py, os.X_OK)
        state = "installed" if version == SHIM_VERSION else "outdated"
        states.append(HookState(name, state, str(target), version, legacy, py or None, py_ok))
    driver = None
    attributes = False
    notes: list[str] = []
    index_url = None
    if info.bare:
        proc = gitstore.run_git(info.git_dir, ["config", "--get", "memvault.indexUrl"], check=False)
        index_url = proc.stdout.strip() or None
    else:
        from .merge import registered_driver

        driver = registered_driver(info.toplevel or path)
        attr_path = Path(path) / ".gitattributes"
        attributes = attr_path.exists() and "merge=memvault" in attr_path.read_text(
            encoding="utf-8", errors="replace"
        )
        if driver is None:
            notes.append("merge driver not registered: run 'memvault hooks install'")
    last = info.git_dir / "memvault" / LAST_ERROR
    if last.exists():
        try:
            data = json.loads(last.read_text(encoding="utf-8"))
            notes.append(
                f"the last background reindex ({data.get('hook')}, {data.get('time')}) "
                f"failed: {data.get('message')}"
            )
        except (ValueError, OSError):
            pass
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
        str(info.hooks_dir), info.bare, tuple(states), driver, attributes, index_url, tuple(notes)
    )


# The runner lives in hook_runner.py (imported lazily: `python -m memvault.hooks` runs
# this file as __main__, and hook_runner imports the constants above from memvault.hooks).
def __getattr__(name: str) -> Any:
    from . import hook_runner

    try:
        return getattr(hook_runner, name)
    except AttributeError:
        raise AttributeError(f"module 'memvault.hooks' has no attribute {name!r}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m memvault.hooks [--hooks-dir D] [--vault-dir V] NAME [-- ARGS...]``.

    The same as ``memvault hook-run`` without the CLI framework's start-up cost: the
    shims call this, since it runs on every commit.
    """
    import argparse

    parser = argparse.ArgumentParser(prog="memvault hook-run")
    parser.add_argument("--hooks-dir", type=Path, default=None)
    parser.add_argument("--vault-dir", default=".")
    parser.add_argument("name")
    parser.add_argument("args", nargs="*")
    ns = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    from .hook_runner import run_hook

    return run_hook(ns.name, ns.args, hooks_dir=ns.hooks_dir, vault_dir=ns.vault_dir)


if __name__ == "__main__":
    sys.exit(main())
