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


# --- the runner ----------------------------------------------------------------------


def _say(hook: str, message: str) -> None:
    print(f"memvault: {hook}: {message}", file=sys.stderr)


def run_hook(
    name: str,
    args: Sequence[str],
    *,
    hooks_dir: Path | None = None,
    vault_dir: str = ".",
    stdin: bytes | None = None,
) -> int:
    """Run hook ``name`` as git invoked it (cwd is the worktree top, or the bare git dir).

    Runs a displaced ``<name>.legacy`` hook first, with git's own environment; a failing
    legacy hook fails the whole hook. Returns the exit status for git.
    """
    if stdin is None and name in STDIN_HOOKS:
        stdin = sys.stdin.buffer.read()
    if hooks_dir is not None:
        legacy = Path(hooks_dir) / f"{name}{LEGACY_SUFFIX}"
        if legacy.is_file() and os.access(legacy, os.X_OK):
            import subprocess

            sys.stdout.flush()
            sys.stderr.flush()
            rc = subprocess.run([str(legacy), *args], input=stdin, check=False).returncode
            if rc != 0:
                return rc
    try:
        if name == "pre-commit":
            if args:  # the pre-commit framework passes the staged file names
                return check_named_files(args)
            return _pre_commit(Path.cwd(), vault_dir)
        if name == "post-receive":
            return _post_receive(Path.cwd(), stdin or b"")
        if name in REINDEX_HOOKS:
            return _reindex_hook(name, list(args), Path.cwd(), vault_dir)
    except Exception as exc:  # noqa: BLE001 - hooks must never take git down with a traceback
        if name in BLOCKING_HOOKS:
            _say(
                name,
                f"internal error ({type(exc).__name__}: {exc}); "
                "commit blocked (bypass: git commit --no-verify)",
            )
            return 1
        _say(name, f"skipped after an error ({type(exc).__name__}: {exc}); git is unaffected")
        return 0
    return 0


# pre-commit -------------------------------------------------------------------------


def _open_vault(root: Path) -> Any:
    """The vault at ``root``, or None when this repository holds no vault there."""
    from .vault import MARKER, Vault

    if not (root / MARKER).is_dir():
        return None
    return Vault.open(root)


def _staged_env() -> dict[str, str]:
    """Keep git's GIT_INDEX_FILE: ``git commit -a``/``git commit FILE`` stage into a temp index."""
    index = os.environ.get("GIT_INDEX_FILE")
    return {"GIT_INDEX_FILE": os.path.abspath(index)} if index else {}


def staged_paths(toplevel: Path, prefix: str = "") -> list[str]:
    """Staged (added/copied/modified/renamed) files under the memory trees, toplevel-relative."""
    specs = [f"{prefix}{tree}" for tree in MEMORY_TREES]
    proc = gitstore.run_git(
        toplevel,
        [
            "diff",
            "--cached",
            "--name-only",
            "-z",
            "--diff-filter=ACMR",
            "--no-renames",
            "--",
            *specs,
        ],
        env_extra=_staged_env(),
    )
    return [p for p in proc.stdout.split("\0") if p]


def check_staged(vault: Any, toplevel: Path) -> tuple[list[Problem], int]:
    """Validate the staged versions of memory files. Returns ``(problems, files checked)``."""
    import tempfile

    from .reports import check_files
    from .vault import Vault

    prefix = os.path.relpath(vault.root, toplevel).replace(os.sep, "/")
    prefix = "" if prefix == "." else prefix + "/"
    paths = staged_paths(toplevel, prefix)
    if not paths:
        return [], 0
    with tempfile.TemporaryDirectory(prefix="memvault-staged-") as tmp:
        tmp_root = Path(tmp).resolve()
        # One git process writes every staged blob out (the index, not the working tree).
        gitstore.run_git(
            toplevel,
            ["checkout-index", f"--prefix={tmp_root}/", "-z", "--stdin"],
            input_text="\0".join(paths) + "\0",
            env_extra=_staged_env(),
        )
        staged_root = tmp_root / prefix if prefix else tmp_root
        staged_root.mkdir(parents=True, exist_ok=True)
        shadow = Vault(staged_root, vault.config, vault.identity)
        files = [staged_root / p[len(prefix) :] for p in paths]
        problems = check_files(shadow, [f for f in files if os.path.lexists(f)])
    return problems, len(paths)


def _pre_commit(toplevel: Path, vault_dir: str) -> int:
    vault = _open_vault((toplevel / vault_dir).resolve())
    if vault is None:
        return 0
    problems, _ = check_staged(vault, toplevel)
    if not problems:
        return 0
    for problem in problems:
        print(f"Error: {problem}", file=sys.stderr)
    n = len(problems)
    _say(
        "pre-commit",
        f"commit blocked: {n} problem{'s' if n != 1 else ''} in staged memory files "
        "(fix and 'git add' them, or bypass with 'git commit --no-verify')",
    )
    return 1


def check_named_files(names: Sequence[str]) -> int:
    """Validate named files (the pre-commit framework's mode), each in its own vault.

    The framework stashes unstaged changes first, so the working tree is what is staged.
    Files outside any vault's memory trees are ignored.
    """
    from .reports import check_files
    from .vault import MARKER

    groups: dict[Path, list[Path]] = {}
    for name in names:
        path = Path(name).absolute()
        for folder in path.parents:
            if (folder / MARKER).is_dir():
                groups.setdefault(folder.resolve(), []).append(path)
                break
    problems: list[Problem] = []
    for root, files in groups.items():
        vault = _open_vault(root)
        if vault is not None:
            problems.extend(check_files(vault, files))
    for problem in problems:
        print(f"Error: {problem}", file=sys.stderr)
    return 1 if problems else 0


# reindex hooks -----------------------------------------------------------------------


def _sequence_in_progress(git_dir: Path) -> bool:
    """A rebase, am or cherry-pick/revert sequence is running (post-rewrite comes later)."""
    return any((git_dir / name).exists() for name in ("rebase-merge", "rebase-apply", "sequencer"))


def _per_worktree_git_dir(toplevel: Path) -> Path:
    proc = gitstore.run_git(toplevel, ["rev-parse", "--absolute-git-dir"], check=False)
    return Path(proc.stdout.strip() or toplevel / ".git")


def _common_git_dir(cwd: Path) -> Path:
    proc = gitstore.run_git(cwd, ["rev-parse", "--git-common-dir"], check=False)
    return (cwd / (proc.stdout.strip() or ".git")).resolve()


def hook_timeout(config: Any = None, default: float = CLIENT_TIMEOUT) -> float:
    """``$MEMVAULT_HOOK_TIMEOUT`` > ``git config memvault.hookTimeout`` > ``default`` (seconds).

    How long git waits for a reindex before it goes on in the background; 0 (the client
    default) means git never waits. A git setting, not a vault one: how long *your* git
    waits is a personal choice, and reading it costs the hook no YAML parsing.
    """
    raw = os.environ.get("MEMVAULT_HOOK_TIMEOUT")
    if raw is None and config is not None:
        raw = config.get("memvault.hookTimeout")
    try:
        return max(0.0, float(raw)) if raw is not None else default
    except (TypeError, ValueError):
        return default


LAST_ERROR = "last-error.json"
PENDING = "reindex-pending"


def _reindex_hook(name: str, args: list[str], toplevel: Path, vault_dir: str) -> int:
    from .vault import MARKER

    if name == "post-checkout" and len(args) >= 3 and args[0] == args[1] and args[2] == "1":
        return 0  # switched to the commit we were on (e.g. 'checkout -b'): nothing changed
    root = (toplevel / vault_dir).resolve()
    if not (root / MARKER).is_dir():
        return 0  # this checkout holds no vault (e.g. a shared core.hooksPath)
    dirs = gitstore.run_git(toplevel, ["rev-parse", "--absolute-git-dir", "--git-common-dir"])
    git_dir, common = dirs.stdout.splitlines()[:2]
    if name in ("post-commit", "post-checkout") and _sequence_in_progress(Path(git_dir)):
        return 0
    base = state_dir((toplevel / common).resolve())
    log = base / "hooks.log"
    _report_last_error(name, base, log, toplevel)
    wait = hook_timeout(_GitConfig(toplevel))
    # Even opening the vault (config parsing) happens in the child: git waits for nothing.
    outcome = run_bounded(lambda: reindex_queued(root, base, name), wait, log, name)
    _report(name, outcome, log, toplevel, wait)
    return 0


def _report_last_error(name: str, base: Path, log: Path, toplevel: Path) -> None:
    """A reindex that failed in the background is reported (once) by the next hook."""
    path = base / LAST_ERROR
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        path.unlink()
    except (FileNotFoundError, ValueError, OSError):
        return
    where = os.path.relpath(log, toplevel)
    _say(
        name,
        f"warning: the last reindex ({data.get('hook')}, {data.get('time')}) "
        "failed in the background "
        f"({data.get('message')}); git is unaffected, search retries later (log {where})",
    )


def reindex_queued(root: Path, base: Path, hook: str) -> dict[str, Any]:
    """Reindex the vault at ``root``, never concurrently with another writer, never waiting.

    If the vault lock is taken, leave a ``reindex-pending`` mark and return ``busy``: a
    hook that is reindexing runs once more when it finds the mark, and otherwise the index
    catches up before the next search. A failure is recorded for the next hook to report.
    """
    from .lock import try_lock
    from .vault import LOCK_PATH, Vault

    pending = base / PENDING
    result: dict[str, Any] = {"status": "ok", "message": ""}
    try:
        vault = Vault.open(root)
        for _ in range(5):
            with try_lock(root / LOCK_PATH) as got:
                if not got:
                    pending.touch()
                    return {
                        "status": "busy",
                        "message": "another memvault process is writing; "
                        "queued a reindex for after it",
                    }
            with contextlib.suppress(FileNotFoundError):
                pending.unlink()
            # The index takes the same lock itself (and waits for it): the window between
            # the probe and that is tiny, and the job is bounded by the hook timeout anyway.
            result = {"status": "ok", "message": summarize(vault.reindex())}
            if not pending.exists():
                break
    except Exception as exc:
        _record_error(base, hook, f"{type(exc).__name__}: {exc}".splitlines()[0])
        raise
    with contextlib.suppress(FileNotFoundError):
        (base / LAST_ERROR).unlink()
    return result


def _record_error(base: Path, hook: str, message: str) -> None:
    from .files import atomic_write

    try:
        data = {"hook": hook, "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "message": message}
        atomic_write(base / LAST_ERROR, json.dumps(data) + "\n")
    except OSError:
        pass


@dataclass(frozen=True)
class Outcome:
    status: str  # ok | busy | error | background
    message: str = ""
    pid: int | None = None


def run_bounded(
    job: Callable[[], dict[str, Any]], timeout: float, log_path: Path, label: str
) -> Outcome:
    """Run ``job`` in a forked, detached child; wait at most ``timeout`` seconds for it.

    The child's stdin/stdout/stderr point at ``log_path``/``/dev/null`` from the start,
    so git (or a push's side band) never waits for output that would outlive the hook.
    After the timeout the child keeps going on its own and this returns ``background``.
    """
    import select

    _trim_log(log_path)
    sys.stdout.flush()
    sys.stderr.flush()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(read_fd)
            os.setsid()
            log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            null_fd = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null_fd, 0)
            os.dup2(log_fd, 1)
            os.dup2(log_fd, 2)
            started = time.monotonic()
            print(
                f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {label} (pid {os.getpid()}): start",
                file=sys.stderr,
            )
            try:
                result = job()
            except BaseException as exc:  # noqa: BLE001 - reported to the parent, never raised
                import traceback

                traceback.print_exc()
                result = {
                    "status": "error",
                    "message": f"{type(exc).__name__}: {exc}".splitlines()[0],
                }
            print(
                f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {label}: {result.get('status')} "
                f"in {time.monotonic() - started:.2f} s: {result.get('message', '')}",
                file=sys.stderr,
            )
            # After a timeout the hook has returned and nobody listens: that is fine.
            with contextlib.suppress(OSError):
                os.write(write_fd, json.dumps(result).encode() + b"\n")
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    os.close(write_fd)
    if timeout <= 0:
        os.close(read_fd)
        return Outcome("background", pid=pid)
    try:
        deadline = time.monotonic() + timeout
        chunks = b""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return Outcome("background", pid=pid)
            ready, _, _ = select.select([read_fd], [], [], left)
            if not ready:
                return Outcome("background", pid=pid)
            data = os.read(read_fd, 65536)
            if not data:
                break
            chunks += data
    finally:
        os.close(read_fd)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    try:
        result = json.loads(chunks.decode() or "{}")
    except json.JSONDecodeError:
        result = {}
    if not result:
        return Outcome("error", "the reindex process died without a word", pid)
    return Outcome(str(result.get("status", "error")), str(result.get("message", "")), pid)


def _trim_log(path: Path, keep: int = 256 * 1024, limit: int = 1024 * 1024) -> None:
    try:
        if path.stat().st_size > limit:
            with open(path, "rb") as handle:
                handle.seek(-keep, os.SEEK_END)
                tail = handle.read()
            with open(path, "wb") as handle:
                handle.write(tail)
    except OSError:
        pass


def _report(name: str, outcome: Outcome, log: Path, base: Path, wait: float = 0.0) -> None:
    try:
        where = os.path.relpath(log, base)
    except ValueError:
        where = str(log)
    if outcome.status == "ok":
        if os.environ.get("MEMVAULT_HOOK_VERBOSE"):
            _say(name, f"reindexed: {outcome.message}")
    elif outcome.status == "busy":
        _say(name, f"index busy: {outcome.message}")
    elif outcome.status == "background":
        if wait > 0:  # only news when the user asked git to wait for the index
            _say(
                name,
                f"reindex still running after {wait:g} s; it finishes in the background "
                f"(pid {outcome.pid}, log {where})",
            )
    else:
        _say(
            name,
            f"warning: reindex failed ({outcome.message}); git is unaffected, "
            f"search retries later (log {where})",
        )


# post-receive (bare remote) ----------------------------------------------------------


def parse_ref_updates(text: str) -> list[tuple[str, str, str]]:
    """``<old> <new> <ref>`` lines as git feeds post-receive/pre-push."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            out.append((parts[0], parts[1], parts[2]))
    return out


def _post_receive(git_dir: Path, stdin: bytes) -> int:
    updates = parse_ref_updates(stdin.decode("utf-8", errors="replace"))
    branches = [
        ref[len("refs/heads/") :]
        for _, new, ref in updates
        if ref.startswith("refs/heads/") and not ZERO_SHA_RE.match(new)
    ]
    if not branches:
        return 0
    git_dir = _common_git_dir(git_dir)
    log = state_dir(git_dir) / "hooks.log"
    timeout = hook_timeout(_GitConfig(git_dir), SERVER_TIMEOUT)
    outcome = run_bounded(
        lambda: update_server_index(git_dir, branches), timeout, log, "post-receive"
    )
    if outcome.status == "ok":
        for line in outcome.message.splitlines():
            _say("post-receive", line)
    else:
        _report("post-receive", outcome, log, git_dir, timeout)
    return 0


class _GitConfig:
    """Settings read with ``git config --get`` in a repository."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def get(self, key: str, default: Any = None) -> Any:
        proc = gitstore.run_git(self.path, ["config", "--get", key], check=False)
        return proc.stdout.strip() or default


def _slug(branch: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", branch).strip("-") or "branch"


def update_server_index(git_dir: Path, branches: Sequence[str]) -> dict[str, Any]:
    """Check each branch's tip out into its worktree and reindex it there.

    One update runs at a time per repository: a second push arriving meanwhile queues its
    branches in ``memvault/pending`` and the running update takes them before it exits.
    """
    import fcntl

    base = state_dir(git_dir)
    pending = base / "pending"
    lock_fd = os.open(base / "post-receive.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        with open(pending, "a", encoding="utf-8") as handle:
            handle.write("".join(f"{b}\n" for b in branches))
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return {
                "status": "ok",
                "message": f"queued {', '.join(branches)} behind an update in progress",
            }
        lines: list[str] = []
        while True:
            try:
                queued = pending.read_text(encoding="utf-8").split()
                pending.unlink()
            except FileNotFoundError:
                queued = []
            if not queued:
                break
            for branch in dict.fromkeys(queued):
                lines.append(_index_branch(git_dir, base, branch))
        return {"status": "ok", "message": "\n".join(lines)}
    finally:
        os.close(lock_fd)


def server_index_url(git_dir: Path) -> str | None:
    proc = gitstore.run_git(git_dir, ["config", "--get", "memvault.indexUrl"], check=False)
    return proc.stdout.strip() or os.environ.get("MEMVAULT_INDEX_URL") or None


def _index_branch(git_dir: Path, base: Path, branch: str) -> str:
    from .vault import MARKER, Vault

    tip = gitstore.run_git(
        git_dir, ["rev-parse", "-q", "--verify", f"refs/heads/{branch}^{{commit}}"], check=False
    )
    sha = tip.stdout.strip()
    if not sha:
        return f"{branch}: deleted; nothing to index"
    worktree = base / "worktrees" / _slug(branch)
    worktree_for(git_dir, worktree, sha)
    if not (worktree / MARKER).is_dir():
        return f"{branch}: not a memvault vault at {sha[:10]}; skipped"
    overrides: dict[str, Any] = {}
    url = server_index_url(git_dir)
    if url:
        overrides["index.url"] = url
    # The branch, for an index that keeps branches apart on a shared server; this index is
    # the branch's own, so it also deletes the vectors of text the branch no longer has.
    overrides["index.branch"] = branch
    overrides["index.prune"] = True
    vault = Vault.open(worktree, overrides=overrides)
    report = vault.reindex()
    where = f" on {url}" if url else ""
    return f"{branch}: indexed {sha[:10]}{where} ({summarize(report)})"


def worktree_for(git_dir: Path, worktree: Path, sha: str) -> None:
    """A detached worktree of the bare repository at ``sha`` (created or moved there)."""
    if (worktree / ".git").exists():
        proc = gitstore.run_git(
            worktree, ["checkout", "-q", "--detach", "--force", sha], check=False
        )
        if proc.returncode == 0:
            gitstore.run_git(worktree, ["clean", "-q", "-fd"], check=False)
            return
    gitstore.run_git(git_dir, ["worktree", "prune"], check=False)
    worktree.parent.mkdir(parents=True, exist_ok=True)
    if worktree.exists():
        import shutil

        shutil.rmtree(worktree)
    gitstore.run_git(git_dir, ["worktree", "add", "-q", "--detach", "--force", str(worktree), sha])


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
    return run_hook(ns.name, ns.args, hooks_dir=ns.hooks_dir, vault_dir=ns.vault_dir)


if __name__ == "__main__":
    sys.exit(main())
