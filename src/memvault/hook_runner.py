"""The hook runner: what the git hook shims execute (split from :mod:`memvault.hooks`).

Reindex hooks fail open and never make git wait by default; the pre-commit hook checks
the staged memory files in one process; post-receive updates a shared index.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import gitstore
from .errors import Problem
from .hooks import (  # the shared constants and repository helpers
    LAST_ERROR,
    PENDING,
    BLOCKING_HOOKS,
    CLIENT_TIMEOUT,
    LEGACY_SUFFIX,
    MEMORY_TREES,
    REINDEX_HOOKS,
    SERVER_TIMEOUT,
    STDIN_HOOKS,
    ZERO_SHA_RE,
    state_dir,
)
from .sync import summarize


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


