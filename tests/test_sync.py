"""``memvault sync``: a bare remote and two clones, real fetch/rebase/push."""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault import Vault
from memvault.store.files import parse_text
from memvault.store.mergedriver import registered_driver
from memvault.sync import SyncConflictError, SyncError, commit_hand_edits, sync

from helpers import git, write

MARKERS = ("<<<<<<<", ">>>>>>>")


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Vault, Vault, Path]:
    """A bare remote, clone A (made by init and pushed) and clone B (git clone)."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    a = Vault.init(tmp_path / "a")
    git(a.root, "remote", "add", "origin", str(remote))
    git(a.root, "push", "-q", "-u", "origin", "main")
    git(tmp_path, "clone", "-q", str(remote), str(tmp_path / "b"))
    b = Vault.open(tmp_path / "b")
    return a, b, remote


def _markers_anywhere(root: Path) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        if ".git" in path.parts or ".memvault" in path.parts or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if any(m in text for m in MARKERS):
            hits.append(str(path))
    return hits


def test_non_conflicting_edits_travel_both_ways(clones: tuple[Vault, Vault, Path]) -> None:
    a, b, _ = clones
    a.add("semantic", "Postgres is the main database.", id="db-choice")
    report = sync(a.core)
    assert report.pushed == 1 and not report.incoming
    b.add("semantic", "Deploys happen on Tuesdays.", id="deploy-day")
    report = sync(b.core)
    assert [c.subject for c in report.incoming] == [
        "memvault: add semantic db-choice: Postgres is the main database."
    ]
    assert report.pushed == 1 and report.disputed == ()
    assert "semantic/facts/db-choice.md" in report.changed
    assert b.get("db-choice").content.startswith("Postgres")
    report = sync(a.core)
    assert len(report.incoming) == 1 and report.pushed == 0
    assert a.get("deploy-day")
    assert git(a.root, "rev-parse", "HEAD") == git(b.root, "rev-parse", "HEAD")
    assert _markers_anywhere(a.root) == [] and _markers_anywhere(b.root) == []


def test_rebased_commits_keep_their_authors(clones: tuple[Vault, Vault, Path]) -> None:
    a, b, _ = clones
    a.add("semantic", "Fact from A.", id="from-a")
    sync(a.core)
    write(
        b.root,
        "semantic/facts/by-hand.md",
        "---\nid: by-hand\ntype: semantic\n---\n\nWritten by a person.\n",
    )
    git(b.root, "add", "semantic/facts/by-hand.md")
    git(
        b.root,
        "-c",
        "user.name=Ada",
        "-c",
        "user.email=ada@example.com",
        "commit",
        "-q",
        "-m",
        "by hand",
    )
    sync(b.core)
    author = git(
        b.root, "log", "-1", "--format=%an <%ae>", "--", "semantic/facts/by-hand.md"
    ).strip()
    assert author == "Ada <ada@example.com>"


def test_same_memory_edited_in_both_clones_is_merged_not_conflicted(
    clones: tuple[Vault, Vault, Path],
) -> None:
    a, b, _ = clones
    a.add("semantic", "The build takes ten minutes.", id="build-time", tags=["ci"])
    sync(a.core)
    sync(b.core)
    a.update(
        "build-time",
        {"tags": ["ci", "slow"], "updated": "2026-03-01T10:00:00Z"},
        "A's view",
        content="The build takes twelve minutes on the new runners.",
    )
    b.update(
        "build-time",
        {"tags": ["ci", "cache"], "updated": "2026-03-01T11:00:00Z"},
        "B's view",
        content="The build takes four minutes with the cache warm.",
    )
    sync(a.core)
    report = sync(b.core)
    path = "semantic/facts/build-time.md"
    assert report.disputed == (path,)
    assert report.pushed == 1
    assert _markers_anywhere(b.root) == []
    text = (b.root / path).read_text(encoding="utf-8")
    meta = parse_text(text, path).meta
    assert sorted(meta["tags"]) == ["cache", "ci", "slow"]
    assert meta["status"] == "disputed"
    assert "twelve minutes" in text and "four minutes" in text
    assert git(b.root, "status", "--porcelain").strip() == ""
    assert not (b.root / ".git" / "rebase-merge").exists()
    # A pulls the merged result: both clones agree, still no markers.
    report = sync(a.core)
    assert (a.root / path).read_text(encoding="utf-8") == text
    assert _markers_anywhere(a.root) == []
    assert [m.id for m in a.memories(_disputed())] == ["build-time"]


def _disputed():  # type: ignore[no-untyped-def]
    from memvault import Filters

    return Filters(status="disputed")


def test_conflict_the_driver_cannot_settle_aborts_cleanly(
    clones: tuple[Vault, Vault, Path],
) -> None:
    a, b, _ = clones
    a.add("semantic", "Old fact.", id="old-fact")
    sync(a.core)
    sync(b.core)
    a.forget("old-fact", "wrong")
    sync(a.core)
    b.update("old-fact", {"importance": 5}, "still matters", content="Old fact, corrected.")
    head = git(b.root, "rev-parse", "HEAD")
    with pytest.raises(SyncConflictError, match="rebase aborted"):
        sync(b.core)
    assert git(b.root, "rev-parse", "HEAD") == head
    assert (
        not (b.root / ".git" / "rebase-merge").exists()
        and not (b.root / ".git" / "rebase-apply").exists()
    )
    assert git(b.root, "status", "--porcelain").strip() == ""
    assert "Old fact, corrected." in (b.root / "semantic/facts/old-fact.md").read_text(
        encoding="utf-8"
    )
    assert _markers_anywhere(b.root) == []


def test_uncommitted_hand_edits_stop_sync_unless_committed(
    clones: tuple[Vault, Vault, Path],
) -> None:
    a, _, _ = clones
    a.add("semantic", "Original.", id="hand")
    sync(a.core)
    path = a.root / "semantic/facts/hand.md"
    path.write_text(
        path.read_text(encoding="utf-8").replace("Original.", "Edited by hand."), encoding="utf-8"
    )
    with pytest.raises(SyncError, match="uncommitted changes"):
        sync(a.core)
    write(a.root, "semantic/facts/broken.md", "---\nid: Broken Id\ntype: semantic\n---\n\nx\n")
    report = sync(a.core, commit=True)
    assert report.hand_edits is not None and report.hand_edits.added == ("semantic/facts/hand.md",)
    assert report.hand_edits.invalid == ("semantic/facts/broken.md",)
    assert report.pushed == 1
    assert git(a.root, "log", "-1", "--format=%s").strip() == "memvault: commit hand edits (sync)"
    assert (a.root / "semantic/facts/broken.md").exists()  # left alone, uncommitted


def test_fresh_clone_gets_the_merge_driver(clones: tuple[Vault, Vault, Path]) -> None:
    _, b, _ = clones
    assert registered_driver(b.root) is None
    report = sync(b.core)
    assert registered_driver(b.root) is not None
    assert any("merge driver" in n for n in report.notes)


def test_no_remote_is_a_clear_error(vault: Vault) -> None:
    with pytest.raises(SyncError, match="no git remote"):
        sync(vault.core)


def test_first_push_to_an_empty_remote_sets_upstream(tmp_path: Path) -> None:
    remote = tmp_path / "r.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    v = Vault.init(tmp_path / "v")
    git(v.root, "remote", "add", "origin", str(remote))
    report = sync(v.core)
    assert report.pushed == 1
    assert git(v.root, "rev-parse", "--abbrev-ref", "main@{upstream}").strip() == "origin/main"


def test_commit_hand_edits_handles_deletes_and_moves(vault: Vault) -> None:
    vault.add("semantic", "One.", id="one")
    vault.add("semantic", "Two.", id="two")
    (vault.root / "semantic/facts/one.md").unlink()
    (vault.root / "semantic/decisions").mkdir()
    (vault.root / "semantic/facts/two.md").rename(vault.root / "semantic/decisions/two.md")
    result = commit_hand_edits(vault.core)
    assert result.commit is not None
    assert set(result.removed) == {"semantic/facts/one.md", "semantic/facts/two.md"}
    assert result.added == ("semantic/decisions/two.md",)
    assert git(vault.root, "status", "--porcelain").strip() == ""
    assert commit_hand_edits(vault.core).commit is None


def test_cli_sync_json(clones: tuple[Vault, Vault, Path], cli, chdir) -> None:  # type: ignore[no-untyped-def]
    import json

    a, b, _ = clones
    a.add("semantic", "Via the CLI.", id="via-cli")
    chdir(a.root)
    result = cli("sync", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert data["pushed"] == 1 and data["remote"] == "origin" and data["branch"] == "main"
    chdir(b.root)
    result = cli("sync")
    assert result.code == 0
    assert "pulled 1 commit(s)" in result.out
