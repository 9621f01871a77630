"""A write's commit: one ``git update-index`` and one ``git fast-import`` when git keeps the
files' bytes as they are, the plumbing commit otherwise; exactly the written files either way.

Real git repositories; the git calls are counted by wrapping the functions that start them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memvault import Vault
from memvault.store.git import fastimport
from memvault.store.git import ops as gitstore

from helpers import commit_count, git, is_clean


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The git commands a write starts: ``run_git``'s, ``start_git``'s, and ``fast-import``."""
    seen: list[str] = []
    run_git = gitstore.run_git
    start_git = gitstore.start_git

    def counted(root: Path, args: Any, **kw: Any) -> Any:
        seen.append(args[0])
        return run_git(root, args, **kw)

    def started_early(root: Path, args: Any, **kw: Any) -> Any:
        seen.append(args[0])
        return start_git(root, args, **kw)

    conversation = fastimport._Conversation

    def started(root: Path, env: Any, **kw: Any) -> Any:
        seen.append("fast-import")
        return conversation(root, env, **kw)

    monkeypatch.setattr(gitstore, "run_git", counted)
    monkeypatch.setattr(gitstore, "start_git", started_early)
    monkeypatch.setattr(fastimport, "_Conversation", started)
    return seen


def test_a_new_fact_is_staged_and_committed_by_two_git_processes(
    vault: Vault, calls: list[str]
) -> None:
    vault.add("semantic", "The vault has history now")
    before = git(vault.root, "rev-parse", "HEAD").strip()
    calls.clear()
    written = vault.add("semantic", "The staging cluster listens on port 8443")
    assert calls == ["update-index", "fast-import"]
    head = git(vault.root, "rev-parse", "HEAD").strip()
    assert written.commit == head
    assert git(vault.root, "rev-parse", "HEAD^").strip() == before
    assert git(vault.root, "show", "--name-only", "--format=", "HEAD").split() == [
        written.memory.path
    ]
    assert git(vault.root, "log", "-1", "--format=%an <%ae>%n%B").startswith(
        "memvault <memvault@localhost>\nmemvault: add semantic the-staging-cluster"
    )
    # the index holds what HEAD holds: nothing staged, nothing changed
    assert git(vault.root, "diff", "--cached", "--name-only") == ""
    assert is_clean(vault.root) and git(vault.root, "fsck").strip() == ""


def test_a_superseding_fact_commits_both_files(vault: Vault, calls: list[str]) -> None:
    old = vault.add("semantic", "Staging listens on 8443", subject="staging.port")
    calls.clear()
    new = vault.add("semantic", "Staging listens on 9443", subject="staging.port")
    assert new.superseded == (old.memory.id,)
    assert calls == ["update-index", "fast-import"]
    changed = git(vault.root, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == sorted([old.memory.path, new.memory.path])
    assert is_clean(vault.root)


def test_a_forgotten_memory_leaves_the_tree_in_one_commit(vault: Vault, calls: list[str]) -> None:
    kept = vault.add("semantic", "A fact to forget later")
    calls.clear()
    vault.forget(kept.memory.id, "no longer true")
    assert calls[-1] == "fast-import" and "write-tree" not in calls
    status = git(vault.root, "show", "--name-status", "--format=", "HEAD").split()
    assert status == ["D", kept.memory.path]
    assert is_clean(vault.root)


def test_nothing_changed_makes_no_commit(vault: Vault) -> None:
    written = vault.add("semantic", "Committed as it is")
    count = commit_count(vault.root)
    sha = gitstore.commit(
        vault.root, "no change", gitstore.Identity("m", "m@x"), [written.memory.path]
    )
    assert sha is None and commit_count(vault.root) == count


def test_a_branch_moved_meanwhile_gets_the_commit_on_top(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault.add("semantic", "History first")
    root = vault.root
    (root / "user.txt").write_text("mine\n")
    conversation = fastimport._Conversation
    user_commit: list[str] = []
    staging: list[Any] = []
    start_git = gitstore.start_git

    def kept(r: Path, args: Any, **kw: Any) -> Any:
        staging.append(start_git(r, args, **kw))
        return staging[-1]

    def committing_meanwhile(r: Path, env: Any, **kw: Any) -> Any:
        # the user commits after memvault read HEAD and staged its file (the index is free
        # again), before fast-import moves the branch
        identity = ["-c", "user.name=u", "-c", "user.email=u@x"]
        staging[-1].wait()
        git(r, "add", "user.txt")
        git(r, *identity, "commit", "-q", "-m", "user", "--", "user.txt")
        user_commit.append(git(root, "rev-parse", "HEAD").strip())
        return conversation(r, env, **kw)

    monkeypatch.setattr(fastimport, "_Conversation", committing_meanwhile)
    monkeypatch.setattr(gitstore, "start_git", kept)
    written = vault.add("semantic", "Written while the user commits")
    assert git(root, "rev-parse", "HEAD^").strip() == user_commit[0]  # on top, not beside
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == [written.memory.path]
    assert git(root, "log", "-1", "--format=%s", "HEAD^") == "user\n"
    assert is_clean(root)


def test_an_index_that_cant_be_updated_stops_the_commit(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index is updated while fast-import starts; a failure there (another git holds the
    index's lock) must still leave no commit, as when the update ran first."""
    from memvault.errors import GitError

    vault.add("semantic", "History first")
    root = vault.root
    before = git(root, "rev-parse", "HEAD").strip()
    start_git = gitstore.start_git

    def locked_meanwhile(r: Path, args: Any, **kw: Any) -> Any:
        if args[0] == "update-index":
            (root / ".git" / "index.lock").write_text("")  # a git process of the user's
        return start_git(r, args, **kw)

    monkeypatch.setattr(gitstore, "start_git", locked_meanwhile)
    with pytest.raises(GitError, match="update-index"):
        vault.add("semantic", "Written while the index is locked")
    (root / ".git" / "index.lock").unlink()
    assert git(root, "rev-parse", "HEAD").strip() == before
    assert not list((root / "semantic").rglob("written-while*"))
    assert is_clean(root)


@pytest.mark.parametrize(
    "setup",
    [
        ["config", "core.autocrlf", "true"],
        ["config", "core.fileMode", "false"],
        ["config", "include.path", "elsewhere.cfg"],
    ],
)
def test_git_settings_that_may_change_bytes_get_the_plumbing_commit(
    vault: Vault, calls: list[str], setup: list[str]
) -> None:
    git(vault.root, *setup)
    vault.add("semantic", "History first")
    calls.clear()
    written = vault.add("semantic", "Committed the slower way")
    assert "fast-import" not in calls and "write-tree" in calls
    assert git(vault.root, "show", "--name-only", "--format=", "HEAD").split() == [
        written.memory.path
    ]


@pytest.mark.parametrize(
    ("where", "line"),
    [
        (".gitattributes", "*.md text eol=crlf"),
        ("semantic/.gitattributes", "*.md filter=lfs"),
        ("semantic/facts/.gitattributes", "* working-tree-encoding=UTF-16"),
        (".git/info/attributes", "*.md ident"),
    ],
)
def test_attributes_that_convert_bytes_get_the_plumbing_commit(
    vault: Vault, where: str, line: str
) -> None:
    path = vault.root / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(line + "\n")
    assert not fastimport.keeps_bytes(vault.root, vault.root / ".git", ["semantic/facts/x.md"])
    # a folder's attributes apply to the files under it only
    other = fastimport.keeps_bytes(vault.root, vault.root / ".git", ["procedural/workflows/x.md"])
    assert other is where.startswith("semantic/")


def test_the_vaults_own_attributes_keep_bytes(vault: Vault) -> None:
    # merge drivers and union merges say nothing about the bytes stored
    assert fastimport.keeps_bytes(vault.root, vault.root / ".git", ["semantic/facts/x.md"])


def test_a_small_commit_does_not_sync_the_pack_git_loosens_at_once(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fast-import writes a pack, syncs it, and turns a few objects into loose ones (what
    ``git commit`` writes, unsynced by default): the sync is skipped, unless the user set
    how durable objects must be."""
    vault.add("semantic", "History first")
    root = vault.root
    options: list[object] = []
    conversation = fastimport._Conversation

    def recorded(r: Path, env: Any, **kw: Any) -> Any:
        options.append(kw.get("options"))
        return conversation(r, env, **kw)

    monkeypatch.setattr(fastimport, "_Conversation", recorded)
    vault.add("semantic", "The staging cluster listens on port 8443")
    assert options == [["-c", "core.fsync=-pack"]]
    head = git(root, "rev-parse", "HEAD").strip()
    loose = root / ".git" / "objects" / head[:2] / head[2:]
    assert loose.is_file() and git(root, "fsck").strip() == ""
    git(root, "config", "core.fsync", "all")
    vault.add("semantic", "The production cluster listens on port 443")
    assert options[-1] == []
    assert is_clean(root)
