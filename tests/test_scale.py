"""Vaults far past the OS argument limit: 200,000 paths through import, the journal and
rollback, with no git command line holding them and no per-record scan of the vault.

The two 200,000-memory tests are marked slow (each writes 200,000 files: most of their
time is the filesystem's), and so is the one that writes 5,000 files twice; the rest run
the same code paths on small vaults.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memvault import Vault
from memvault.core import Core
from memvault.store import journal
from memvault.store.git import ops as gitstore
from memvault.transfer import import_file

from helpers import assert_same_memory, commit_count, git, is_clean

BIG = 200_000


def _tiny_jsonl(path: Path, n: int, prefix: str = "t") -> Path:
    """``n`` tiny facts, spread over the semantic categories (one folder holds 40,000)."""
    cats = ("facts", "decisions", "definitions", "relationships", "constraints")
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            record = {"id": f"{prefix}{i}", "type": "semantic", "category": cats[i % 5]}
            out.write(json.dumps({**record, "content": f"f{i}"}) + "\n")
    return path


@pytest.mark.slow
def test_an_import_of_200000_memories_is_one_commit(vault: Vault, tmp_path: Path) -> None:
    before = commit_count(vault.root)
    seen: list[tuple[int, int, int]] = []
    report = import_file(
        vault.core, _tiny_jsonl(tmp_path / "big.jsonl", BIG), progress=lambda *a: seen.append(a)
    )
    assert report.problems == [] and report.added == BIG and report.commit is not None
    assert commit_count(vault.root) == before + 1
    names = git(vault.root, "show", "--name-only", "--format=", "HEAD").split()
    assert len(names) == BIG and "semantic/constraints/t4.md" in names
    assert is_clean(vault.root)
    assert seen[-1][1] == seen[-1][2] and len(seen) >= BIG // 500  # the bar moved to the end
    assert vault.get("t199999").content.strip() == "f199999"


KILL_AFTER_STAGING = """
import os, signal, sys
from pathlib import Path
from memvault import Vault
from memvault.store.git import ops as gitstore
from memvault.transfer import import_file
def die(*a, **k):
    k.get("staged", lambda: None)()  # the index update the commit waits for has ended
    os.kill(os.getpid(), signal.SIGKILL)
gitstore._plumbing_commit = die  # every file is written and staged; no commit
import_file(Vault.open(sys.argv[1]).core, Path(sys.argv[2]))
"""


@pytest.mark.slow
def test_a_journal_of_200000_paths_is_undone_by_the_next_command(
    vault: Vault, tmp_path: Path
) -> None:
    vault.add("semantic", "A fact from before the import", id="before-import")
    before = commit_count(vault.root)
    source = _tiny_jsonl(tmp_path / "big.jsonl", BIG)
    proc = subprocess.run(
        [sys.executable, "-c", KILL_AFTER_STAGING, str(vault.root), str(source)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == -9, proc.stderr
    assert journal.pending(vault.root)
    staged = git(vault.root, "diff", "--cached", "--name-only", "-z").split("\0")
    assert len([p for p in staged if p]) == BIG  # killed between staging and commit
    # the next command, a reader in a new process, puts everything back
    result = subprocess.run(
        [sys.executable, "-m", "memvault", "--vault", str(vault.root), "list", "--json"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert [m["id"] for m in json.loads(result.stdout)] == ["before-import"]
    assert f"{BIG} file(s) put back" in result.stderr
    assert not journal.pending(vault.root) and is_clean(vault.root)
    assert commit_count(vault.root) == before


def test_staging_and_unstaging_take_paths_on_stdin(vault: Vault) -> None:
    """Past the argument limit (a 2 MB command line), in one call each."""
    root = vault.root
    vault.add("semantic", "Committed before", id="kept")
    kept = vault.get("kept").path
    folder = root / "semantic" / "facts"
    names = [f"semantic/facts/{'x' * 200}-{i}.md" for i in range(12_000)]  # ~2.5 MB of paths
    for rel in names:
        (root / rel).write_text(f"---\nid: {rel[15:-3]}\ntype: semantic\n---\n")
    (folder / kept.rsplit("/", 1)[1]).write_text("changed by hand\n")
    gitstore.stage(root, [*names, kept])
    staged = git(root, "diff", "--cached", "--name-only").split()
    assert len(staged) == len(names) + 1
    assert gitstore.changed_among(root, [*names, kept, "semantic/facts/nothing.md"]) == {
        *names,
        kept,
    }
    gitstore.unstage(root, [*names, kept])
    assert git(root, "diff", "--cached", "--name-only") == ""  # the index is HEAD's again
    assert "changed by hand" in (root / kept).read_text()  # the work tree is left alone


@pytest.mark.slow
def test_a_failed_import_commit_rolls_back_every_file(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*a: object, **k: object) -> None:
        raise gitstore.GitError("git commit-tree failed: disk full")

    monkeypatch.setattr(gitstore, "_plumbing_commit", fail)
    with pytest.raises(gitstore.GitError):
        import_file(vault.core, _tiny_jsonl(tmp_path / "in.jsonl", 5000))
    assert is_clean(vault.root) and not journal.pending(vault.root)
    assert git(vault.root, "diff", "--cached", "--name-only") == ""
    monkeypatch.undo()
    assert Vault.open(vault.root).all_memories() == []
    assert import_file(Vault.open(vault.root).core, tmp_path / "in.jsonl").added == 5000


def test_an_import_reads_the_vault_once_not_per_record(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import_file(vault.core, _tiny_jsonl(tmp_path / "a.jsonl", 3000, prefix="a"))
    scans: list[int] = []
    real_scan = Core.scan

    def counted(self: Core) -> object:
        scans.append(1)
        return real_scan(self)

    monkeypatch.setattr(Core, "scan", counted)
    report = import_file(vault.core, _tiny_jsonl(tmp_path / "b.jsonl", 3000, prefix="b"))
    assert report.added == 3000 and len(scans) == 1
    again = import_file(vault.core, tmp_path / "b.jsonl")  # a re-run skips what is there
    assert again.added == 0 and again.skipped == 3000 and again.commit is None


def test_an_import_with_a_bad_record_late_in_the_file_writes_nothing(
    vault: Vault, tmp_path: Path
) -> None:
    src = _tiny_jsonl(tmp_path / "in.jsonl", 5000)
    with open(src, "a", encoding="utf-8") as out:
        out.write('{"id": "Bad Id", "type": "semantic"}\n')
    before = commit_count(vault.root)
    report = import_file(vault.core, src)
    assert report.added == 0 and len(report.problems) == 1 and report.skipped == 5000
    assert commit_count(vault.root) == before and is_clean(vault.root)
    assert "in.jsonl:5001" in str(report.problems[0])
    assert not journal.pending(vault.root)


def _break_a_journal(vault: Vault) -> Path:
    """A rewrite killed before its commit, whose saved copy of the old bytes is gone."""
    m = vault.add("semantic", "The original text", id="orig").memory
    path = vault.root / m.path
    new = path.read_text().replace("The original text", "Half-done rewrite")
    journal.begin(vault.root, {m.path: path.read_bytes()}, {m.path: new}, {})
    path.write_text(new)
    folder = journal._folder(vault.root)
    os.unlink(folder / "0.bak")
    return path


def test_a_journal_that_cannot_be_undone_is_a_one_line_error_then_repaired(
    vault: Vault, cli
) -> None:
    path = _break_a_journal(vault)
    listed = cli("--vault", vault.root, "list", "--json")
    assert listed.code == 1 and listed.out == ""
    assert listed.err.count("\n") == 1 and "doctor --repair" in listed.err
    assert ".git/memvault-journal/note.json" in listed.err
    doctor = cli("--vault", vault.root, "doctor", "--json")
    assert doctor.code == 1
    assert any("could not be undone" in p["text"] for p in doctor.json()["problems"])
    repaired = cli("--vault", vault.root, "doctor", "--repair", "--json")
    assert repaired.code == 0, repaired.out
    assert any("saved copies are in" in n for n in repaired.json()["notes"])
    assert not journal.pending(vault.root)
    assert cli("--vault", vault.root, "list", "--json").code == 0
    assert "Half-done rewrite" in path.read_text()  # left as it is, for a person to decide
    kept = list(journal._folder(vault.root).parent.glob("memvault-journal.failed-*"))
    assert len(kept) == 1 and (kept[0] / "note.json").exists()


def test_the_next_write_gets_past_a_journal_that_cannot_be_undone(vault: Vault) -> None:
    _break_a_journal(vault)
    Vault.open(vault.root).add("semantic", "Written after the failure", id="after")
    assert not journal.pending(vault.root)
    assert Vault.open(vault.root).get("after").content.startswith("Written after")


def _fresh_search(vault: Vault, query: str) -> list[str]:
    """A search as a new process makes it (no handle kept from an earlier search)."""
    from memvault.index.handle import open_indexes

    open_indexes.forget(vault.root, release_chroma=True)
    return Vault.open(vault.root).search(query, limit=5, log=False).ids


def _indexed(vault: Vault) -> dict[str, str]:
    """``{path: sha}`` of what the index holds."""
    from memvault.index import store

    conn = store.connect(vault.root, create=False)
    try:
        return {p: s for p, s in conn.execute("SELECT path, sha FROM docs")}
    finally:
        conn.close()


def _on_disk(vault: Vault) -> dict[str, str]:
    from memvault.store.catalog import sha256_bytes

    return {
        p.relative_to(vault.root).as_posix(): sha256_bytes(p.read_bytes())
        for p in (vault.root / "semantic").rglob("*.md")
    }


def test_a_fresh_process_finds_hand_edits_through_git_without_statting_every_file(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.index import service

    kept = vault.add("semantic", "The office cat is called Biscuit", id="cat").memory
    dog = vault.add("semantic", "The office dog is called Rex", id="dog").memory
    vault.add("semantic", "Lunch is served at noon", id="lunch")
    assert _fresh_search(vault, "office cat")[0] == "cat"  # index built, manifest written
    walks: list[int] = []
    real = service.stat_files
    monkeypatch.setattr(service, "stat_files", lambda root: walks.append(1) or real(root))
    path = vault.root / kept.path
    # 1. a tracked file edited in place (no commit; its folder's mtime does not move)
    path.write_text(path.read_text().replace("Biscuit", "Waffle"))
    _fresh_search(vault, "Waffle")
    assert _indexed(vault) == _on_disk(vault)
    # 2. put back as HEAD has it: it differed when the index was written, so it is checked
    git(vault.root, "checkout", "--", kept.path)
    _fresh_search(vault, "Biscuit")
    assert _indexed(vault) == _on_disk(vault)
    # 3. a new file nobody committed, and 4. a tracked file deleted by hand
    (vault.root / "semantic/facts/new.md").write_text(
        "---\nid: new\ntype: semantic\n---\nThe printer is on the third floor\n"
    )
    (vault.root / dog.path).unlink()
    _fresh_search(vault, "printer")
    assert _indexed(vault) == _on_disk(vault) and dog.path not in _indexed(vault)
    # 5. nothing changed: nothing to do
    _fresh_search(vault, "printer")
    assert walks == []  # no first search of a process walked the vault


def test_without_git_a_fresh_process_still_compares_every_file(tmp_path: Path) -> None:
    from memvault.store.git.status import git_view

    assert git_view(tmp_path, {"commit": "0" * 40}) is None  # no list kept
    assert git_view(tmp_path, {"commit": "0" * 40, "dirty_paths": []}) is None  # no repo


def test_a_large_rewrite_is_one_commit_synced_once(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """commit_files past BULK_WRITES: no fsync per file, blobs packed, the catalog fed."""
    from memvault.store import repository

    import_file(vault.core, _tiny_jsonl(tmp_path / "in.jsonl", repository.BULK_WRITES + 44))
    memories = Vault.open(vault.root).all_memories()
    writes = {
        m.path: (vault.root / m.path).read_text().replace(m.content.strip(), f"{m.id} again")
        for m in memories
    }
    fsyncs: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: fsyncs.append(fd) or real_fsync(fd))
    synced: list[Path] = []
    monkeypatch.setattr(repository, "sync_filesystem", lambda root: synced.append(root))
    loose_before = int(git(vault.root, "count-objects").split()[0])
    with vault.locked():
        sha = vault.core.commit_files(writes, "memvault: rewrite them all")
    assert sha is not None and is_clean(vault.root) and synced == [vault.root]
    assert fsyncs == []
    loose = int(git(vault.root, "count-objects").split()[0]) - loose_before
    assert loose < 12  # the blobs went into a pack: only trees and the commit are loose
    assert {m.id: m.content.strip() for m in Vault.open(vault.root).all_memories()} == {
        m.id: f"{m.id} again" for m in memories
    }


# --- a consolidation's rewrites recorded without parsing them back -----------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from memvault.store.files import check_text, parse_text, rewritten_memory, update_text  # noqa: E402

_HAND_WRITTEN = (
    "---\nid: m-1\ntype: semantic\n# a comment\ntags: [a, b]\nrelevance: 0.5\n"
    "status: active\nsource:\n  session: s1\n---\n\nThe body.\n"
)
_changed = st.one_of(
    st.none(),
    st.integers(min_value=-(10**9), max_value=10**9),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.floats(min_value=0, max_value=1).map(lambda f: round(f, 2)),
    st.text(max_size=30),
    st.sampled_from(["2026-11-30T01:02:03Z", "2026-11-30", "yes", "null", "1e3", "a: b", ""]),
    st.lists(st.text(max_size=10), max_size=3),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    changes=st.dictionaries(
        st.sampled_from(
            ["relevance", "access_count", "last_accessed", "status", "tags", "supersedes"]
            + ["superseded_by", "valid_to", "updated", "related", "source", "x_custom"]
        ),
        _changed,
        max_size=4,
    )
)
def test_a_rewrite_recorded_without_parsing_equals_parsing_it(changes: dict) -> None:
    doc = parse_text(_HAND_WRITTEN, "semantic/facts/m-1.md")
    text = update_text(doc, changes)
    quick = rewritten_memory(doc, changes, "archive/semantic/facts/m-1.md")
    if quick is None:
        return  # it declined: the commit parses the text instead
    parsed = check_text(text, "archive/semantic/facts/m-1.md")
    assert_same_memory(quick, parsed, text)


def test_a_consolidation_rewrite_of_the_common_keys_is_vouched_for() -> None:
    doc = parse_text(_HAND_WRITTEN, "semantic/facts/m-1.md")
    changes = {"relevance": 0.41, "status": "archived", "updated": "2026-12-01T10:00:00Z"}
    quick = rewritten_memory(doc, changes, "archive/semantic/facts/m-1.md")
    assert quick is not None
    assert quick == check_text(update_text(doc, changes), "archive/semantic/facts/m-1.md")
