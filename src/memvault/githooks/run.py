"""What a hook shim runs: :func:`run_hook` dispatches on the hook's name.

* ``pre-commit`` blocks a commit of invalid memory files or likely secrets
  (:mod:`memvault.githooks.check`).
* ``post-commit``, ``post-merge``, ``post-checkout``, ``post-rewrite`` and ``pre-push``
  bring the search index up to date (:meth:`Vault.reindex`) in a detached child
  (:mod:`memvault.githooks.detached`). They *fail open*: whatever goes wrong is one
  warning line on stderr and exit status 0; a failure in the background is reported, in
  one line, by the next hook. A hook never waits for the vault lock: when another
  memvault process is writing it leaves a ``reindex-pending`` mark (a reindexing hook
  runs once more when it sees it) instead of opening the index concurrently. During a
  rebase/cherry-pick/am sequence ``post-commit`` and ``post-checkout`` skip;
  ``post-rewrite`` reindexes once at the end.
* ``post-receive`` in a bare remote indexes the pushed branches
  (:mod:`memvault.githooks.server`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import MARKER, reindex_summary, run_git
from .detached import GitConfig, hook_timeout, report_outcome, run_bounded, say
from .names import (
    BLOCKING_HOOKS,
    LAST_ERROR,
    LEGACY_SUFFIX,
    LOG_NAME,
    PENDING,
    REINDEX_HOOKS,
    STDIN_HOOKS,
    state_dir,
)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m memvault.githooks [--hooks-dir D] [--vault-dir V] NAME [-- ARGS...]``.

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
        rc = _run_legacy(Path(hooks_dir) / f"{name}{LEGACY_SUFFIX}", args, stdin)
        if rc != 0:
            return rc
    try:
        if name == "pre-commit":
            from .check import check_named_files, pre_commit

            if args:  # the pre-commit framework passes the staged file names
                return check_named_files(args)
            return pre_commit(Path.cwd(), vault_dir)
        if name == "post-receive":
            from .server import post_receive

            return post_receive(Path.cwd(), stdin or b"")
        if name in REINDEX_HOOKS:
            return _reindex_hook(name, list(args), Path.cwd(), vault_dir)
    except Exception as exc:  # noqa: BLE001 - hooks must never take git down with a traceback
        if name in BLOCKING_HOOKS:
            say(
                name,
                f"internal error ({type(exc).__name__}: {exc}); "
                "commit blocked (bypass: git commit --no-verify)",
            )
            return 1
        say(name, f"skipped after an error ({type(exc).__name__}: {exc}); git is unaffected")
        return 0
    return 0


def _run_legacy(legacy: Path, args: Sequence[str], stdin: bytes | None) -> int:
    """Run the foreign hook a shim displaced, if there is one; its exit status."""
    if not (legacy.is_file() and os.access(legacy, os.X_OK)):
        return 0
    import subprocess

    sys.stdout.flush()
    sys.stderr.flush()
    return subprocess.run([str(legacy), *args], input=stdin, check=False).returncode


# --- reindex hooks ---------------------------------------------------------------------


def _sequence_in_progress(git_dir: Path) -> bool:
    """A rebase, am or cherry-pick/revert sequence is running (post-rewrite comes later)."""
    return any((git_dir / name).exists() for name in ("rebase-merge", "rebase-apply", "sequencer"))


def _reindex_hook(name: str, args: list[str], toplevel: Path, vault_dir: str) -> int:
    if name == "post-checkout" and len(args) >= 3 and args[0] == args[1] and args[2] == "1":
        return 0  # switched to the commit we were on (e.g. 'checkout -b'): nothing changed
    root = (toplevel / vault_dir).resolve()
    if not (root / MARKER).is_dir():
        return 0  # this checkout holds no vault (e.g. a shared core.hooksPath)
    dirs = run_git(toplevel, ["rev-parse", "--absolute-git-dir", "--git-common-dir"])
    git_dir, common = dirs.stdout.splitlines()[:2]
    if name in ("post-commit", "post-checkout") and _sequence_in_progress(Path(git_dir)):
        return 0
    base = state_dir((toplevel / common).resolve())
    log = base / LOG_NAME
    _report_last_error(name, base, log, toplevel)
    wait = hook_timeout(GitConfig(toplevel))
    # Even opening the vault (config parsing) happens in the child: git waits for nothing.
    outcome = run_bounded(lambda: reindex_queued(root, base, name), wait, log, name)
    report_outcome(name, outcome, log, toplevel, wait)
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
    say(
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
    from .. import Vault

    pending = base / PENDING
    result: dict[str, Any] = {"status": "ok", "message": ""}
    try:
        vault = Vault.open(root)
        for _ in range(5):
            with vault.try_locked() as got:
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
            result = {"status": "ok", "message": reindex_summary(vault.reindex())}
            if not pending.exists():
                break
    except Exception as exc:
        _record_error(base, hook, f"{type(exc).__name__}: {exc}".splitlines()[0])
        raise
    with contextlib.suppress(FileNotFoundError):
        (base / LAST_ERROR).unlink()
    return result


def _record_error(base: Path, hook: str, message: str) -> None:
    from .. import atomic_write

    data = {"hook": hook, "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "message": message}
    with contextlib.suppress(OSError):
        atomic_write(base / LAST_ERROR, json.dumps(data) + "\n")
