"""Sync a vault with its git remote: ``pull --rebase`` through the merge driver, then push.

Concurrent edits of the same memory meet in :mod:`memvault.store.mergedriver` (registered here if
the clone lacks it): front matter merges key by key and overlapping body edits are kept
side by side as ``status: disputed``, so a rebase normally completes. When it cannot
(e.g. a memory edited on one side and deleted on the other), the rebase is aborted and
the vault is left exactly as it was: never mid-rebase, never with conflict markers.

Also here: :func:`commit_hand_edits`, shared by ``sync --commit`` and ``watch --commit``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import GitError
from .paths import ALL_TREES
from .store.git import ops as gitstore
from .store.tree import is_memory_file
from .values import Record, field

if TYPE_CHECKING:
    import subprocess

    from .core import Core
    from .index import ReindexReport

    GitProc = gitstore.GitResult | subprocess.CompletedProcess[str]

WATCH_MESSAGE = "memvault: commit hand edits (watch)"
SYNC_MESSAGE = "memvault: commit hand edits (sync)"
MAX_PUSH_ATTEMPTS = 3


class SyncError(GitError):
    """``sync`` could not complete; the vault is unchanged (or only fetched)."""


class SyncConflictError(SyncError):
    """The rebase hit a conflict the merge driver cannot settle; it was aborted."""


class Commit(Record, frozen=True):
    sha: str
    subject: str
    author: str

    def as_dict(self) -> dict[str, str]:
        return {"sha": self.sha, "subject": self.subject, "author": self.author}


class HandEdits(Record, frozen=True):
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


class SyncReport(Record, frozen=True):
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


def commit_hand_edits(vault: Core, message: str = WATCH_MESSAGE) -> HandEdits:
    """Commit changes made by hand under the memory trees (one commit, vault identity).

    Files that are not valid memories are left uncommitted (listed in ``invalid``):
    the same rule the pre-commit hook applies to a person's commit.
    """
    from .store.catalog import parse_file

    root = vault.root
    max_bytes = vault.config.int("limits.max_file_bytes")
    with vault.locked():
        add: list[str] = []
        remove: list[str] = []
        invalid: list[str] = []
        for _code, rel in _porcelain(root, ALL_TREES):
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


def _git(root: Path, *args: str, check: bool = True) -> str:
    return gitstore.run_git(root, list(args), check=check).stdout.strip()


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


class _Target(Record, frozen=True):
    """Where a sync goes: this clone's branch and the remote branch it pulls and pushes."""

    branch: str
    remote: str
    remote_branch: str
    tracking: bool  # the branch has an upstream (branch.<name>.merge)

    @property
    def remote_ref(self) -> str:
        return f"refs/remotes/{self.remote}/{self.remote_branch}"


def _target(root: Path, remote: str | None) -> _Target:
    """The branch to sync and its remote; refuses a detached HEAD or a rebase in progress."""
    branch = _git(root, "symbolic-ref", "--short", "-q", "HEAD", check=False)
    if not branch:
        raise SyncError("HEAD is detached; check out a branch before syncing")
    busy = _in_progress(root)
    if busy:
        raise SyncError(f"{busy} is in progress; finish or abort it first")
    remote = _choose_remote(root, branch, remote)
    merge_ref = _git(root, "config", "--get", f"branch.{branch}.merge", check=False)
    remote_branch = merge_ref.removeprefix("refs/heads/") if merge_ref else branch
    return _Target(branch, remote, remote_branch, bool(merge_ref))


def _refuse_uncommitted(root: Path) -> None:
    out = _git(root, "status", "--porcelain", "-z", "--untracked-files=no")
    dirty = [item[3:] for item in out.split("\0") if len(item) > 3]
    if dirty:
        shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        raise SyncError(
            f"uncommitted changes ({shown}); commit them first, or run 'memvault sync --commit' "
            "to commit hand edits of memory files"
        )


def _ensure_driver(root: Path) -> str | None:
    from .store.mergedriver import register_driver, registered_driver

    current = registered_driver(root)
    if current is None:
        register_driver(root)
        return "registered the memvault merge driver in this clone's git config"
    return None


def _disputed_since(root: Path, before: str, paths: Iterable[str]) -> list[str]:
    from .store.mergedriver import DISPUTE_BEGIN, is_memory_path

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


class _Pulled(Record):
    """What the rebases of one sync brought in (a sync may rebase again after a lost race)."""

    incoming: list[Commit] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    disputed: list[str] = field(default_factory=list)


def sync(
    vault: Core,
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
    target = _target(root, remote)
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
    _refuse_uncommitted(root)
    pulled, pushed = _pull_and_push(vault, target, push, notes)
    summary = None
    if reindex and (pulled.changed or pulled.incoming):
        summary = _reindex(vault)
    if pulled.disputed:
        n = len(pulled.disputed)
        notes.append(
            f"{n} memor{'y' if n == 1 else 'ies'} changed on both sides: "
            "kept both versions as status: disputed (see 'memvault list --status disputed')"
        )
    return SyncReport(
        target.remote,
        target.branch,
        tuple(pulled.incoming),
        tuple(pulled.changed),
        pushed,
        tuple(pulled.disputed),
        hand,
        summary,
        tuple(notes),
    )


def _pull_and_push(
    vault: Core, target: _Target, push: bool, notes: list[str]
) -> tuple[_Pulled, int]:
    """Pull (rebase), then push; when someone pushed in between, pull and push again.

    Returns what came in and how many commits went out.
    """
    pulled = _Pulled()
    attempt = 1
    while True:
        head, have_remote = _pull(vault, target, pulled)
        spec = f"{target.remote_ref}..{head}" if have_remote else head
        ahead = int(_git(vault.root, "rev-list", "--count", spec) or 0)
        if not push or ahead == 0:
            return pulled, 0
        if _push(vault.root, target, head, notes, retry=attempt < MAX_PUSH_ATTEMPTS):
            return pulled, ahead
        attempt += 1


def _pull(vault: Core, target: _Target, pulled: _Pulled) -> tuple[str, bool]:
    """Fetch and rebase onto the remote branch. Returns HEAD and whether the remote has it."""
    root = vault.root
    # Network steps run without the vault lock, so agents keep writing meanwhile;
    # only the rebase (which rewrites files and HEAD) holds it.
    fetch = gitstore.run_git(root, ["fetch", "--quiet", target.remote], check=False)
    if fetch.returncode != 0:
        raise SyncError(f"git fetch {target.remote} failed: {_last_line(fetch)}", key="remote")
    remote_ref = target.remote_ref
    have_remote = bool(_git(root, "rev-parse", "-q", "--verify", remote_ref, check=False))
    with vault.locked():
        batch = _log(root, f"HEAD..{remote_ref}") if have_remote else []
        if batch:
            before = _git(root, "rev-parse", "HEAD")
            _rebase(root, remote_ref, vault.git_identity, target.remote, target.remote_branch)
            pulled.incoming.extend(batch)
            out = _git(root, "diff", "--name-only", "-z", before, "HEAD")
            files = [f for f in out.split("\0") if f]
            pulled.changed.extend(f for f in files if f not in pulled.changed)
            pulled.disputed.extend(
                d for d in _disputed_since(root, before, files) if d not in pulled.disputed
            )
        head = _git(root, "rev-parse", "HEAD")
    return head, have_remote


def _push(root: Path, target: _Target, head: str, notes: list[str], *, retry: bool) -> bool:
    """Push ``head`` to the remote branch: True when it landed, False when it was rejected
    (someone pushed first) and ``retry`` allows another round; otherwise raises."""
    remote = target.remote
    args = ["push", "--porcelain", remote, f"{head}:refs/heads/{target.remote_branch}"]
    proc = gitstore.run_git(root, args, check=False)
    notes.extend(_remote_notes(proc))
    if proc.returncode == 0:
        if not target.tracking:
            _git(root, "fetch", "--quiet", remote, check=False)
            _git(root, "branch", f"--set-upstream-to={remote}/{target.remote_branch}", check=False)
        return True
    text = proc.stdout + proc.stderr
    rejected = "[rejected]" in text or "non-fast-forward" in text or "fetch first" in text
    if not rejected or not retry:
        raise SyncError(f"git push {remote} failed: {_last_line(proc)}", key="remote")
    return False


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


def _remote_notes(proc: GitProc) -> list[str]:
    """Lines a remote's memvault post-receive printed (``remote: memvault: ...``)."""
    out = []
    for line in (proc.stderr or "").splitlines():
        line = line.strip()
        if line.startswith("remote: memvault:"):
            out.append("remote " + line.removeprefix("remote: ").strip())
    return out


def _last_line(proc: GitProc) -> str:
    lines = [ln for ln in (proc.stderr or proc.stdout or "").strip().splitlines() if ln.strip()]
    return lines[-1] if lines else f"exit status {proc.returncode}"


def _reindex(vault: Core) -> str:
    """Fail open: a sync whose git part succeeded is a success even if the index is not."""
    try:
        return reindex_summary(vault.reindex())
    except Exception as exc:  # noqa: BLE001
        return f"warning: reindex failed ({type(exc).__name__}: {exc}); search retries later"


def reindex_summary(report: ReindexReport | None) -> str:
    """A one-line summary of a reindex (None: there was nothing to do)."""
    return "index up to date" if report is None else report.summary()
