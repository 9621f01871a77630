"""The catalog asks git which files can differ (memvault.store.git.status) instead of stat-ing every
file: whatever is done to the files, by hand, by git or by memvault, a scan returns what a
scan of every file returns."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from memvault import Vault
from memvault.store import catalog, tree
from memvault.store.catalog import Catalog
from memvault.store.catalog_tables import git_record, replace_git_record

from helpers import fact_text, git, write


def commit(root: Path, message: str = "by hand") -> None:
    """Commit everything (nothing to commit is fine)."""
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message, check=False)


@pytest.fixture
def guided(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Git guides every scan (not only from 5,000 files); returns the paths stat-ed one by
    one, and a walk of every file fails the test."""
    monkeypatch.setattr(catalog, "GIT_SCAN_FROM", 0)
    stated: list[str] = []
    real = catalog.listed_stat

    def counting(base: str, rel: str):  # noqa: ANN202 - an os.stat_result or None
        stated.append(rel)
        return real(base, rel)

    monkeypatch.setattr(catalog, "listed_stat", counting)
    return stated


def walked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = tree.walk_memory_files

    def counting(*args: object, **kwargs: object):  # noqa: ANN202 - the walk's iterator
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(catalog, "walk_memory_files", counting)
    return calls


def truth(root: Path, tmp_path: Path) -> dict[str, tuple[str, str | None]]:
    """``{path: (sha, id)}`` from a catalog that never saw the files: every file parsed."""
    fresh = Catalog(root, 2_000_000)
    fresh.db_path = tmp_path / f"fresh-{random.random()}.sqlite"
    return {p: (e.sha, e.id) for p, e in fresh._walk(catalog.ALL_TREES, None, 0).entries.items()}


def seen(vault: Vault) -> dict[str, tuple[str, str | None]]:
    return {p: (e.sha, e.id) for p, e in vault.core.scan().entries.items()}


def test_after_one_walk_a_scan_stats_only_what_git_names(
    vault: Vault, guided: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    walks = walked(monkeypatch)
    # Facts that differ only in a number: each would supersede the one before (rewriting it),
    # and this test counts the files each write touches.
    vault.config.set("supersede.infer", False)
    for i in range(20):
        vault.add("semantic", f"Fact number {i} about the ledger", id=f"f{i}")  # (scans)
    assert walks == [1]  # the first scan, with no record yet; git answered the others
    conn = sqlite3.connect(vault.root / ".memvault/index/catalog.sqlite")
    record, _ = git_record(conn)
    conn.close()
    assert record is not None
    git(vault.root, "merge-base", "--is-ancestor", record["commit"], "HEAD")  # a real commit
    guided.clear()
    more = vault.add("semantic", "One more fact").memory  # a generated id: no scan
    assert guided == []
    entries = vault.core.scan().entries
    assert walks == [1] and len(entries) == 21
    # the file the last commit wrote, and the one written after the last scan
    assert sorted(guided) == sorted([more.path, vault.get("f19").path])


def test_hand_edits_git_commands_and_memvault_writes_are_all_seen(
    vault: Vault, guided: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A seeded random sequence; after each step the guided scan equals a full parse."""
    walks = walked(monkeypatch)
    root = vault.root
    rng = random.Random(7)
    for i in range(12):
        vault.add("semantic", f"Seed fact {i}", id=f"s{i}")
    vault.core.scan()
    names = [f"semantic/facts/h{i}.md" for i in range(6)]
    for step in range(60):
        op = rng.choice(["edit", "new", "rm", "commit", "checkout", "stash", "add", "forget"])
        rel = rng.choice(names)
        if op == "edit" or op == "new":
            write(root, rel, fact_text(Path(rel).stem, f"Hand text {step}"))
        elif op == "rm" and (root / rel).exists():
            (root / rel).unlink()
        elif op == "commit":
            commit(root, f"step {step}")
        elif op == "checkout":
            git(root, "checkout", "--", ".")  # tracked files back to HEAD
        elif op == "stash":
            git(root, "stash", "-q", "--include-untracked")
        elif op == "add":
            vault.add("semantic", f"Written by memvault at step {step}", id=f"w{step}")
        elif op == "forget":
            ids = sorted(m.id for m in vault.all_memories() if m.id.startswith("w"))
            if ids:
                vault.forget(ids[0], "done")
        before = len(walks)
        got = seen(vault)
        assert len(walks) == before, (step, op, rel)  # git answered, no walk
        assert got == truth(root, tmp_path), (step, op, rel)


def test_a_write_outside_a_scan_and_then_undone_is_seen(
    vault: Vault, guided: list[str], tmp_path: Path
) -> None:
    """Not committed (``git.commit: false``), then removed by hand: no git answer names
    the file, only the catalog's own note of the write."""
    vault.set_config("git.commit", False, "leave writes uncommitted")
    vault = Vault.open(vault.root)
    vault.add("semantic", "Kept", id="kept")
    vault.core.scan()
    vault.add("semantic", "Written, then thrown away", id="gone")
    (vault.root / vault.get("gone").path).unlink()
    assert "gone" not in {e.id for e in vault.core.scan().entries.values()}
    assert seen(vault) == truth(vault.root, tmp_path)


def test_an_edit_put_back_after_a_scan_read_it_is_seen(
    vault: Vault, guided: list[str], tmp_path: Path
) -> None:
    vault.add("semantic", "The original text", id="orig")
    rel = vault.get("orig").path
    vault.core.scan()
    path = vault.root / rel
    path.write_text(path.read_text(encoding="utf-8").replace("original", "edited"), "utf-8")
    # the scan reads the edit after git looked: the path is kept among the differing ones
    assert "edited" in vault.core.scan().entries[rel].memory.content  # type: ignore[union-attr]
    git(vault.root, "checkout", "--", rel)  # put back: git status no longer names it
    assert "original" in vault.core.scan().entries[rel].memory.content  # type: ignore[union-attr]
    assert seen(vault) == truth(vault.root, tmp_path)


def test_an_edit_made_after_git_looked_and_put_back_later_is_seen(
    vault: Vault, guided: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The file changes between ``git status`` and the scan's read of it: the scan holds
    the edit, git named the file for another reason (a commit). Put back later, no git
    answer names it: the record must (a path re-read after git's look is kept)."""
    vault.core.scan()
    vault.add("semantic", "The original text", id="orig")  # committed: named by git diff
    rel = vault.get("orig").path
    path = vault.root / rel
    original = path.read_text(encoding="utf-8")
    real = catalog.listed_stat

    def edit_first(base: str, name: str):  # noqa: ANN202 - an os.stat_result or None
        if name == rel and "edited" not in path.read_text(encoding="utf-8"):
            path.write_text(original.replace("original", "edited"), encoding="utf-8")
        return real(base, name)

    monkeypatch.setattr(catalog, "listed_stat", edit_first)
    assert "edited" in vault.core.scan().entries[rel].memory.content  # type: ignore[union-attr]
    monkeypatch.setattr(catalog, "listed_stat", real)
    path.write_text(original, encoding="utf-8")  # put back: git status no longer names it
    assert "original" in vault.core.scan().entries[rel].memory.content  # type: ignore[union-attr]
    assert seen(vault) == truth(vault.root, tmp_path)


def test_a_scan_that_raced_a_write_keeps_the_older_record(vault: Vault) -> None:
    vault.add("semantic", "A fact", id="a")
    conn = sqlite3.connect(vault.root / ".memvault/index/catalog.sqlite", isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        assert replace_git_record(conn, {"commit": "c1", "dirty_paths": []}, git_record(conn)[1])
        conn.execute("COMMIT")
        _, writes = git_record(conn)
        vault.add("semantic", "Another fact", id="b")  # a write outside a scan
        record, now = git_record(conn)
        assert now > writes and record is not None
        assert record["dirty_paths"] == [vault.get("b").path]  # noted in the older record
        conn.execute("BEGIN IMMEDIATE")
        assert not replace_git_record(conn, {"commit": "c2", "dirty_paths": []}, writes)
        conn.execute("COMMIT")
        assert git_record(conn)[0] == record
    finally:
        conn.close()


def test_an_id_edited_in_place_is_taken_and_a_subject_finds_its_rivals(
    vault: Vault, guided: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.errors import DuplicateIdError

    vault.add("semantic", "Postgres is the database", id="db", subject="billing.database")
    vault.core.scan()
    walks = walked(monkeypatch)
    rel = vault.get("db").path
    path = vault.root / rel
    path.write_text(path.read_text(encoding="utf-8").replace("id: db", "id: renamed"), "utf-8")
    with pytest.raises(DuplicateIdError):
        vault.add("semantic", "Another", id="renamed")
    result = vault.add("semantic", "MySQL is the database", subject="billing.database")
    assert result.superseded == ("renamed",)  # the rival, found under its new id
    assert walks == []


def test_a_scan_begun_first_does_not_replace_a_later_scans_record(
    vault: Vault, guided: list[str], tmp_path: Path
) -> None:
    """Two scans overlap (an MCP server and the CLI): the one that looked at git first must
    not install its record over the other's, which holds a path it re-read late."""
    from memvault.store.catalog_tables import connect
    from memvault.store.git.status import git_view

    vault.add("semantic", "The original text", id="orig")
    rel = vault.get("orig").path
    vault.core.scan()
    cat = vault.core.catalog
    conn = connect(cat.db_path)
    record, writes = git_record(conn)
    conn.close()
    early = git_view(vault.root, record)  # scan A looks at git...
    assert early is not None
    path = vault.root / rel
    original = path.read_text(encoding="utf-8")
    path.write_text(original.replace("original", "edited"), encoding="utf-8")
    vault.core.scan()  # ...scan B reads the edit...
    cat._scan_suspects(catalog.ALL_TREES, early, writes, True)  # ...and A ends last
    path.write_text(original, encoding="utf-8")  # put back: no git answer names it
    assert seen(vault) == truth(vault.root, tmp_path)


def test_a_scan_without_git_keeps_what_it_read_among_the_suspects(
    vault: Vault, guided: list[str], tmp_path: Path
) -> None:
    """On an orphan branch (no commit: git can't say) the scan walks; what it read must stay
    named once git answers again."""
    vault.add("semantic", "The original text", id="orig")
    rel = vault.get("orig").path
    vault.core.scan()
    git(vault.root, "checkout", "-q", "--orphan", "scratch")
    path = vault.root / rel
    path.write_text(path.read_text(encoding="utf-8").replace("original", "edited"), "utf-8")
    assert seen(vault) == truth(vault.root, tmp_path)
    git(vault.root, "checkout", "-q", "-f", "main")
    assert seen(vault) == truth(vault.root, tmp_path)


def test_git_that_converts_line_endings_or_holds_a_repository_is_not_asked(
    vault: Vault, guided: list[str], tmp_path: Path
) -> None:
    """``core.autocrlf`` makes a line-ending-only edit clean to git, and a committed
    repository inside a tree (a gitlink) hides its files' edits: every file is compared."""
    from memvault.store.git.status import status_blind

    vault.add("semantic", "Line endings matter", id="eol")
    rel = vault.get("eol").path
    vault.core.scan()
    assert status_blind(vault.root, catalog.ALL_TREES) is False
    git(vault.root, "config", "core.autocrlf", "true")
    assert status_blind(vault.root, catalog.ALL_TREES) is True
    path = vault.root / rel
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert seen(vault) == truth(vault.root, tmp_path)
    git(vault.root, "config", "core.autocrlf", "false")
    inner = vault.root / "semantic" / "team"
    write(inner, "facts/inner.md", fact_text("inner", "Kept by another repository"))
    git(inner, "init", "-q")
    commit(inner, "inner")
    commit(vault.root, "a repository inside")
    assert status_blind(vault.root, catalog.ALL_TREES) is True
    write(inner, ".gitignore", "facts/\n")
    write(inner, "facts/inner.md", fact_text("inner", "Edited where no git status looks"))
    assert seen(vault) == truth(vault.root, tmp_path)


def test_the_facts_without_a_subject_are_read_by_an_index_of_their_own(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write's conflict check asks for a folder's facts without a subject: by the partial
    index on them, not a scan of every row of the vault (docs/performance.md)."""
    vault.add("semantic", "Redis holds the sessions")
    vault.add("semantic", "The API listens on 8443", subject="api.port")
    vault.add("episodic", "Deployed the billing service")
    queries: list[str] = []
    real = catalog.connect

    def traced(path: Path) -> sqlite3.Connection:
        conn = real(path)
        conn.set_trace_callback(queries.append)
        return conn

    monkeypatch.setattr(catalog, "connect", traced)
    entries = vault.core.catalog.without_subject("semantic")
    assert [e.memory.content.strip() for e in entries if e.memory] == ["Redis holds the sessions"]
    asked = [q for q in queries if q.startswith("SELECT") and "subject" in q]
    assert len(asked) == 1
    with sqlite3.connect(vault.root / ".memvault/index/catalog.sqlite") as conn:
        plan = conn.execute(f"EXPLAIN QUERY PLAN {asked[0]}").fetchall()
    assert "USING INDEX files_unsubjected" in str(plan), plan
