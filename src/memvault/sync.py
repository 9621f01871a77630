"""Sync a vault with its git remote: ``pull --rebase`` through the merge driver, then push.

Concurrent edits of the same memory meet in :mod:`memvault.merge` (registered here if
the clone lacks it): front matter merges key by key and overlapping body edits are kept
side by side as ``status: disputed``, so a rebase normally completes. When it cannot
(e.g. a memory edited on one side and deleted on the other), the rebase is aborted and
the vault is left exactly as it was: never mid-rebase, never with conflict markers.

Also here: :func:`commit_hand_edits`, shared by ``sync --commit`` and ``watch --commit``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import gitstore
from .errors import GitError
from .files import is_memory_file

MEMORY_TREES = ("episodic", "semantic", "procedural", "archive", "inbox")
WATCH_MESSAGE = "memvault: commit hand edits (watch)"
SYNC_MESSAGE = "memvault: commit hand edits (sync)"
MAX_PUSH_ATTEMPTS = 3


class SyncError(GitError):
    """``sync`` could not complete; the vault is unchanged (or only fetched)."""


class SyncConflictError(SyncError):
    """The rebase hit a conflict the merge driver cannot settle; it was aborted."""


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    author: str

    def as_dict(self) -> dict[str, str]:
        return {"sha": self.sha, "subject": self.subject, "author": self.author}


@dataclass(frozen=True)
class HandEdits:
    """Result of committing hand edits: the commit (or None) and what it held."""

    commit: str | None
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()  # left uncommitted: they would not validate

    def as_dict(self) -> dict[str, Any]:
        return {
            "commit": self.commit,
            "added": list(self.added),
            "removed": list(self.removed),
            "invalid": list(self.invalid),
        }


@dataclass(frozen=True)
class SyncReport:
    remote: str
    branch: str
    incoming: tuple[Commit, ...] = ()
    changed: tuple[str, ...] = ()  # files the incoming commits changed in this clone
    pushed: int = 0
    disputed: tuple[str, ...] = ()
    hand_edits: HandEdits | None = None
    reindex: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        return {
            "remote": self.remote,
            "branch": self.branch,
            "incoming": [c.as_dict() for c in self.incoming],
            "changed": list(self.changed),
            "pushed": self.pushed,
            "disputed": list(self.disputed),
            "hand_edits": self.hand_edits.as_dict() if self.hand_edits else None,
            "reindex": self.reindex,
            "notes": list(self.notes),
        }


# --- hand edits ----------------------------------------------------------------------


def _porcelain(root: Path, paths: Iterable[str]) -> list[tuple[str, str]]:
    """``(XY, path)`` for every change under ``paths``; a rename yields both its paths."""
    proc = gitstore.run_git(
        root,
        ["status", "--porcelain", "-z", "--untracked-files=all", "--no-renames", "--", *paths],
        check=False,
    )
    out: list[tuple[str, str]] = []
    for item in proc.stdout.split("\0"):
        if len(item) > 3:
            out.append((item[:2], item[3:]))
    return out


def _committable(name: str) -> bool:
    return name == ".gitkeep" or (not name.startswith(".") and not name.endswith("~"))


def commit_hand_edits(vault: Any, message: str = WATCH_MESSAGE) -> HandEdits:
    """Commit changes made by hand under the memory trees (one commit, vault identity).

    Files that are not valid memories are left uncommitted (listed in ``invalid``):
    the same rule the pre-commit hook applies to a person's commit.
    """
    from .catalog import parse_file

    root = vault.root
    max_bytes = vault.config.int("limits.max_file_bytes")
    with vault.locked():
        add: list[str] = []
        remove: list[str] = []
        invalid: list[str] = []
        for _code, rel in _porcelain(root, MEMORY_TREES):
            name = rel.rsplit("/", 1)[-1]
            if not _committable(name):
                continue
            if not os.path.lexists(root / rel):
                remove.append(rel)
                continue
            if is_memory_file(name):
                _, memory, _problems = parse_file(root / rel, rel, max_bytes)
                if memory is None:
                    invalid.append(rel)
                    continue
            add.append(rel)
        sha = None
        if add or remove:
            body = "\n".join([*(f"changed: {p}" for p in add), *(f"removed: {p}" for p in remove)])
            sha = gitstore.commit(
                root, f"{message}\n\n{body}", vault.git_identity, add=add, remove=remove
            )
            vault.catalog.refresh([*add, *remove])
    return HandEdits(sha, tuple(add), tuple(remove), tuple(invalid))


# --- sync ----------------------------------------------------------------------------


def _git(
    root: Path, *args: str, check: bool = True, identity: gitstore.Identity | None = None
) -> str:
    extra = None
    if identity is not None:
        # Only the committer: rebased commits keep their authors.
        extra = {"GIT_COMMITTER_NAME": identity.name, "GIT_COMMITTER_EMAIL": identity.email}
    proc = gitstore.run_git(root, list(args), check=check, env_extra=extra)
    return proc.stdout.strip()


def _in_progress(root: Path) -> str | None:
    git_dir = Path(_git(root, "rev-parse", "--absolute-git-dir"))
    for name, what in (
        ("rebase-merge", "a rebase"),
        ("rebase-apply", "a rebase or am"),
        ("MERGE_HEAD", "a merge"),
        ("CHERRY_PICK_HEAD", "a cherry-pick"),
    ):
        if (git_dir / name).exists():
            return what
    return None


def _choose_remote(root: Path, branch: str, remote: str | None) -> str:
    remotes = gitstore.remotes(root)
    if remote:
        if remote not in remotes:
            raise SyncError(
                f"no remote named {remote!r} (have: {', '.join(remotes) or 'none'})", key="remote"
            )
        return remote
    configured = _git(root, "config", "--get", f"branch.{branch}.remote", check=False)
    if configured and configured in remotes:
        return configured
    if "origin" in remotes:
        return "origin"
    if len(remotes) == 1:
        return remotes[0]
    if not remotes:
        raise SyncError(
            "this vault has no git remote; add one with 'git remote add origin URL'", key="remote"
        )
    raise SyncError(
        f"several remotes ({', '.join(remotes)}); say which with --remote", key="remote"
    )


def _tracked_changes(root: Path) -> list[str]:
    out = _git(root, "status", "--porcelain", "-z", "--untracked-files=no")
    return [item[3:] for item in out.split("\0") if len(item) > 3]


def _ensure_driver(root: Path) -> str | None:
    from .merge import register_driver, registered_driver

    current = registered_driver(root)
    if current is None:
        register_driver(root)
        return "registered the memvault merge driver in this clone's git config"
    return None


def _disputed_since(root: Path, before: str, paths: Iterable[str]) -> list[str]:
    from .merge import DISPUTE_BEGIN, is_memory_path

    out = []
    for rel in paths:
        if not is_memory_path(rel) or not (root / rel).is_file():
            continue
        text = (root / rel).read_text(encoding="utf-8", errors="replace")
        if DISPUTE_BEGIN not in text:
            continue
        old = gitstore.run_git(root, ["show", f"{before}:{rel}"], check=False)
        if old.returncode != 0 or DISPUTE_BEGIN not in old.stdout:
            out.append(rel)
    return out


def sync(
    vault: Any,
    *,
    remote: str | None = None,
    commit: bool = False,
    push: bool = True,
    reindex: bool = True,
) -> SyncReport:
    """Fetch, rebase local commits onto the remote branch, push; then reindex.

    ``commit``: first commit hand edits under the memory trees (else uncommitted changes
    to tracked files stop the sync, untouched). Raises :class:`SyncConflictError` after
    aborting a rebase the merge driver could not settle.
    """
    root = vault.root
    notes: list[str] = []
    branch = _git(root, "symbolic-ref", "--short", "-q", "HEAD", check=False)
    if not branch:
        raise SyncError("HEAD is detached; check out a branch before syncing")
    busy = _in_progress(root)
    if busy:
        raise SyncError(f"{busy} is in progress; finish or abort it first")
    remote = _choose_remote(root, branch, remote)
    merge_ref = _git(root, "config", "--get", f"branch.{branch}.merge", check=False)
    remote_branch = merge_ref.removeprefix("refs/heads/") if merge_ref else branch
    note = _ensure_driver(root)
    if note:
        notes.append(note)

    hand = None
    if commit:
        hand = commit_hand_edits(vault, SYNC_MESSAGE)
        if hand.invalid:
            notes.append(
                f"left {len(hand.invalid)} invalid file(s) uncommitted: {', '.join(hand.invalid)}"
            )
    dirty = _tracked_changes(root)
    if dirty:
        shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        raise SyncError(
            f"uncommitted changes ({shown}); commit them first, or run 'memvault sync --commit' "
            "to commit hand edits of memory files"
        )

    incoming: list[Commit] = []
    changed: list[str] = []
    disputed: list[str] = []
    pushed = 0
    remote_ref = f"refs/remotes/{remote}/{remote_branch}"
    for attempt in range(1, MAX_PUSH_ATTEMPTS + 1):
        # Network steps run without the vault lock, so agents keep writing meanwhile;
        # only the rebase (which rewrites files and HEAD) holds it.
        fetch = gitstore.run_git(root, ["fetch", "--quiet", remote], check=False)
        if fetch.returncode != 0:
            raise SyncError(f"git fetch {remote} failed: {_last_line(fetch)}", key="remote")
        have_remote = bool(_git(root, "rev-parse", "-q", "--verify", remote_ref, check=False))
        with vault.locked():
            if have_remote:
                batch = _log(root, f"HEAD..{remote_ref}")
                if batch:
                    before = _git(root, "rev-parse", "HEAD")
                    _rebase(root, remote_ref, vault.git_identity, remote, remote_branch)
                    incoming.extend(batch)
                    files = _git(root, "diff", "--name-only", "-z", before, "HEAD").split("\0")
                    files = [f for f in files if f]
                    changed.extend(f for f in files if f not in changed)
                    disputed.extend(
                        d for d in _disputed_since(root, before, files) if d not in disputed
                    )
            head = _git(root, "rev-parse", "HEAD")
        if have_remote:
            ahead = int(_git(root, "rev-list", "--count", f"{remote_ref}..{head}") or 0)
        else:
            ahead = int(_git(root, "rev-list", "--count", head) or 0)
        if not push or ahead == 0:
            break
        args = ["push", "--porcelain", remote, f"{head}:refs/heads/{remote_branch}"]
        proc = gitstore.run_git(root, args, check=False)
        notes.extend(_remote_notes(proc))
        if proc.returncode == 0:
            pushed = ahead
            if not merge_ref:
                _git(root, "fetch", "--quiet", remote, check=False)
                _git(root, "branch", f"--set-upstream-to={remote}/{remote_branch}", check=False)
            break
        text = proc.stdout + proc.stderr
        rejected = "[rejected]" in text or "non-fast-forward" in text or "fetch first" in text
        if not rejected or attempt == MAX_PUSH_ATTEMPTS:
            raise SyncError(f"git push {remote} failed: {_last_line(proc)}", key="remote")
        # Someone pushed in between: fetch and rebase again.
    summary = None
    if reindex and (changed or incoming):
        summary = _reindex(vault)
    if disputed:
        notes.append(
            f"{len(disputed)} memor{'y' if len(disputed) == 1 else 'ies'} changed on both sides: "
            "kept both versions as status: disputed (see 'memvault list --status disputed')"
        )
    return SyncReport(
        remote,
        branch,
        tuple(incoming),
        tuple(changed),
        pushed,
        tuple(disputed),
        hand,
        summary,
        tuple(notes),
    )


def _rebase(root: Path, onto: str, identity: gitstore.Identity, remote: str, branch: str) -> None:
    env = {"GIT_COMMITTER_NAME": identity.name, "GIT_COMMITTER_EMAIL": identity.email}
    proc = gitstore.run_git(root, ["rebase", "--no-autostash", onto], check=False, env_extra=env)
    if proc.returncode == 0:
        return
    conflicted = _git(root, "diff", "--name-only", "--diff-filter=U", check=False).split()
    if _in_progress(root):
        gitstore.run_git(root, ["rebase", "--abort"], check=False)
    where = ", ".join(conflicted) if conflicted else _last_line(proc)
    raise SyncConflictError(
        f"rebase onto {remote}/{branch} hit a conflict the merge driver cannot settle ({where}); "
        "rebase aborted, your vault is as it was. "
        f"Resolve it by hand: git pull --rebase {remote} {branch}",
        conflicted[0] if len(conflicted) == 1 else None,
    )


def _log(root: Path, spec: str) -> list[Commit]:
    out = _git(root, "log", "--reverse", "--format=%H%x1f%s%x1f%an", spec, check=False)
    commits = []
    for line in out.splitlines():
        parts = line.split("\x1f")
        if len(parts) == 3:
            commits.append(Commit(*parts))
    return commits


def _remote_notes(proc: Any) -> list[str]:
    """Lines a remote's memvault post-receive printed (``remote: memvault: ...``)."""
    out = []
    for line in (proc.stderr or "").splitlines():
        line = line.strip()
        if line.startswith("remote: memvault:"):
            out.append("remote " + line.removeprefix("remote: ").strip())
    return out


def _last_line(proc: Any) -> str:
    lines = [ln for ln in (proc.stderr or proc.stdout or "").strip().splitlines() if ln.strip()]
    return lines[-1] if lines else f"exit status {proc.returncode}"


def _reindex(vault: Any) -> str:
    """Fail open: a sync whose git part succeeded is a success even if the index is not."""
    try:
        return summarize(vault.reindex())
    except Exception as exc:  # noqa: BLE001
        return f"warning: reindex failed ({type(exc).__name__}: {exc}); search retries later"


def summarize(report: Any) -> str:
    """A one-line summary of whatever ``reindex`` returned."""
    if report is None:
        return "index up to date"
    for attr in ("summary", "describe"):
        value = getattr(report, attr, None)
        if callable(value):
            try:
                return str(value())
            except Exception:  # noqa: BLE001
                break
        if isinstance(value, str):
            return value
    parts = []
    for attr in ("added", "updated", "changed", "removed", "unchanged"):
        value = getattr(report, attr, None)
        if value is None and isinstance(report, dict):
            value = report.get(attr)
        if value is None:
            continue
        count = (
            value if isinstance(value, int) else len(value) if hasattr(value, "__len__") else value
        )
        parts.append(f"{count} {attr}")
    return ", ".join(parts) if parts else "index updated"
