"""The index catches up through git: after memvault's own commits, hand commits, hand edits,
a branch switch or a ``reindex``, only the files git names are stat-ed and read -- and the
index ends up holding exactly what is on disk. When git can't tell (the manifest's commit
is gone), every file is compared, as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault import Vault
from memvault.index import service, store
from memvault.index.handle import open_indexes
from memvault.store.catalog import Catalog, sha256_bytes
from memvault.store.tree import walk_memory_files

from helpers import fact_text, git, write


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every walk over the whole vault (a stat of every file, a full catalog scan)."""
    seen: list[str] = []
    real_stat = service.stat_files
    real_scan = Catalog.scan

    def stat_files(root: Path) -> object:
        seen.append("stat")
        return real_stat(root)

    def scan(self: Catalog, *args: object, **kwargs: object) -> object:
        seen.append("scan")
        return real_scan(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(service, "stat_files", stat_files)
    monkeypatch.setattr(Catalog, "scan", scan)
    return seen


def _fresh_search(root: Path, query: str) -> list[str]:
    """A search as a new process makes it (no handle kept from an earlier search)."""
    open_indexes.forget(root, release_chroma=True)
    return Vault.open(root).search(query, limit=5, log=False).ids


def _indexed(root: Path) -> dict[str, str]:
    """``{path: sha}`` of what the index holds."""
    conn = store.connect(root, create=False)
    try:
        return {p: s for p, s in conn.execute("SELECT path, sha FROM docs")}
    finally:
        conn.close()


def _on_disk(root: Path) -> dict[str, str]:
    """``{path: sha}`` of the memory files (what the index must hold)."""
    return {rel: sha256_bytes((root / rel).read_bytes()) for rel, _ in walk_memory_files(root)}


def _recorded(root: Path) -> dict[str, tuple[int, int]]:
    conn = store.connect(root, create=False)
    try:
        return {p: (m, s) for p, m, s in conn.execute("SELECT path, mtime_ns, size FROM files")}
    finally:
        conn.close()


def _stats(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for path in _on_disk(root):
        st = (root / path).lstat()
        out[path] = (st.st_mtime_ns, st.st_size)
    return out


def _filled(vault: Vault, walks: list[str]) -> Path:
    """A vault of 14 facts, indexed; ``walks`` cleared (writes with ids chosen by hand scan
    every file: that is the write's business, not the search's)."""
    for i in range(12):
        vault.add("semantic", f"Filler fact number {i} about the staging cluster", id=f"f{i}")
    vault.add("semantic", "The office cat is called Biscuit", id="cat")
    vault.add("semantic", "The office dog is called Rex", id="dog")
    assert _fresh_search(vault.root, "office cat")[0] == "cat"  # index built, manifest kept
    walks.clear()
    return vault.root


def _in_step(root: Path) -> None:
    assert _indexed(root) == _on_disk(root)
    assert _recorded(root) == _stats(root)


def test_memvaults_own_writes_are_caught_up_without_a_walk(vault: Vault, walks: list[str]) -> None:
    root = _filled(vault, walks)
    Vault.open(root).add("semantic", "The printer is on the third floor", id="printer")
    Vault.open(root).forget("dog", "gone to a farm")
    walks.clear()
    assert _fresh_search(root, "where is the printer")[0] == "printer"
    assert walks == []
    _in_step(root)
    assert "dog" not in _fresh_search(root, "office dog")


def test_hand_commits_edits_moves_and_deletions_are_seen(vault: Vault, walks: list[str]) -> None:
    root = _filled(vault, walks)
    cat = next(p for p in _on_disk(root) if p.endswith("/cat.md"))
    dog = next(p for p in _on_disk(root) if p.endswith("/dog.md"))
    # an edit committed by hand, a move committed by hand, and a deletion left uncommitted
    (root / cat).write_text((root / cat).read_text().replace("Biscuit", "Waffle"))
    git(root, "add", cat)
    moved = dog.replace("/dog.md", "/dog-renamed.md")
    git(root, "mv", dog, moved)
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "by hand")
    f3 = next(p for p in _on_disk(root) if p.endswith("/f3.md"))
    (root / f3).unlink()
    assert _fresh_search(root, "office cat")[0] == "cat"
    assert "Waffle" in Vault.open(root).search("Waffle", limit=1, log=False)[0].snippet
    assert walks == []
    _in_step(root)
    conn = store.connect(root, create=False)
    try:
        paths = {p for (p,) in conn.execute("SELECT path FROM docs")}
    finally:
        conn.close()
    assert moved in paths and dog not in paths and f3 not in paths


def test_a_branch_switch_is_caught_up_through_the_diff(vault: Vault, walks: list[str]) -> None:
    root = _filled(vault, walks)
    branch = git(root, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(root, "checkout", "-qb", "other")
    Vault.open(root).add("semantic", "On the other branch the cat is called Pepper", id="pep")
    walks.clear()
    assert _fresh_search(root, "cat called Pepper")[0] == "pep"
    git(root, "checkout", "-q", branch)
    hits = _fresh_search(root, "cat called Pepper")
    assert "pep" not in hits
    assert walks == []
    _in_step(root)


def test_reindex_after_a_hand_edit_reads_only_that_file(vault: Vault, walks: list[str]) -> None:
    root = _filled(vault, walks)
    cat = next(p for p in _on_disk(root) if p.endswith("/cat.md"))
    (root / cat).write_text((root / cat).read_text().replace("Biscuit", "Waffle"))
    open_indexes.forget(root, release_chroma=True)
    report = Vault.open(root).reindex()
    assert report.changed == (cat,) and report.unchanged == 13
    assert walks == []
    _in_step(root)


def test_when_the_manifests_commit_is_gone_every_file_is_compared(
    vault: Vault, walks: list[str]
) -> None:
    root = _filled(vault, walks)
    manifest = store.read_manifest(root)
    assert manifest is not None
    store.write_manifest(root, {**manifest, "commit": "1" * 40})  # not a commit of this repo
    cat = next(p for p in _on_disk(root) if p.endswith("/cat.md"))
    (root / cat).write_text((root / cat).read_text().replace("Biscuit", "Waffle"))
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "by hand")
    assert _fresh_search(root, "Waffle")[0] == "cat"
    assert walks  # git could not tell: the whole vault was compared
    _in_step(root)


# --- where git's answer is not the whole story (found in review) ---------------------------


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    (root / rel).write_text((root / rel).read_text().replace(old, new))


def _fact(root: Path, rel: str, memory_id: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(f"---\nid: {memory_id}\ntype: semantic\n---\n\n{text}\n")


def _write_then_search(root: Path, query: str) -> None:
    """A memvault write (HEAD moves), then a new process's search."""
    Vault.open(root).add("semantic", f"Another filler fact for {query}")
    _fresh_search(root, query)


def test_files_in_an_ignored_folder_are_seen(vault: Vault, walks: list[str]) -> None:
    root = _filled(vault, walks)
    (root / ".gitignore").write_text("semantic/private/\n")
    _fact(root, "semantic/private/secret.md", "secret", "The vault key is under the mat")
    _write_then_search(root, "vault key")
    _in_step(root)
    _edit(root, "semantic/private/secret.md", "under the mat", "in the drawer")
    _fact(root, "semantic/private/secret2.md", "secret2", "Quokkas live on Rottnest")
    _write_then_search(root, "Quokkas")
    _in_step(root)


def test_a_nested_repository_in_a_memory_tree_is_compared_file_by_file(vault: Vault) -> None:
    root = vault.root
    vault.add("semantic", "Filler fact about the staging cluster", id="f0")
    _fact(root, "semantic/team/plan.md", "plan", "The team plan is to ship in May")
    git(root / "semantic/team", "init", "-q")
    _fresh_search(root, "team plan")
    _in_step(root)
    _edit(root, "semantic/team/plan.md", "in May", "in June")
    _write_then_search(root, "team plan")
    _in_step(root)


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_files_git_status_is_told_to_skip_are_compared(
    vault: Vault, walks: list[str], flag: str
) -> None:
    root = _filled(vault, walks)
    cat = next(p for p in _on_disk(root) if p.endswith("/cat.md"))
    git(root, "update-index", flag, cat)
    _edit(root, cat, "Biscuit", "Waffle")
    _write_then_search(root, "office cat")
    _in_step(root)


def test_files_back_from_a_sparse_checkout_are_indexed(vault: Vault, walks: list[str]) -> None:
    root = _filled(vault, walks)
    _fact(root, "semantic/decisions/deploy.md", "deploy", "Deploy with the blue button")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "deploy")
    _fresh_search(root, "deploy")
    git(root, "sparse-checkout", "set", "--no-cone", "/*", "!/semantic/decisions/")
    _write_then_search(root, "deploy")
    _in_step(root)
    git(root, "sparse-checkout", "disable")
    assert _fresh_search(root, "blue button")[0] == "deploy"
    _in_step(root)


def test_an_update_that_died_half_way_leaves_no_git_record_to_trust(
    vault: Vault, walks: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.index import update

    root = _filled(vault, walks)
    before = git(root, "rev-parse", "HEAD").strip()
    cat = next(p for p in _on_disk(root) if p.endswith("/cat.md"))
    _edit(root, cat, "Biscuit", "Waffle")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "waffle")

    def killed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt("killed after the index's SQLite commit")

    with monkeypatch.context() as patched, pytest.raises(KeyboardInterrupt):
        patched.setattr(update, "record_files", killed)
        _fresh_search(root, "office cat")  # the index holds Waffle; its manifest was not written
    git(root, "reset", "-q", "--hard", before)  # Biscuit again, HEAD as the manifest names it
    open_indexes.forget(root, release_chroma=True)
    Vault.open(root).reindex()
    _in_step(root)


def test_an_edit_landing_after_git_status_is_remembered(
    vault: Vault, walks: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.store.repository import Repository

    root = _filled(vault, walks)
    cat = next(p for p in _on_disk(root) if p.endswith("/cat.md"))
    _edit(root, cat, "Biscuit", "Waffle")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "waffle")
    real = Repository.scan_paths

    def late_edit(self: Repository, paths: list[str]) -> object:
        _edit(root, cat, "Waffle", "Pancake")  # saved by an editor just after git status ran
        return real(self, paths)

    with monkeypatch.context() as patched:
        patched.setattr(Repository, "scan_paths", late_edit)
        _fresh_search(root, "office cat")
    _in_step(root)  # the index holds Pancake
    git(root, "checkout", "--", cat)  # the edit is dropped: Waffle, as HEAD has it
    _fresh_search(root, "office cat")
    _in_step(root)


def test_a_submodule_moved_by_a_commit_is_compared_file_by_file(
    vault: Vault, tmp_path: Path
) -> None:
    root = vault.root
    vault.add("semantic", "Filler fact about the staging cluster", id="f0")
    shared = tmp_path / "shared"
    _fact(shared, "f-shared.md", "f-shared", "The shared cache is Redis")
    who = ("-c", "user.name=t", "-c", "user.email=t@t")
    git(shared, "init", "-q")
    git(shared, "add", ".")
    git(shared, *who, "commit", "-qm", "one")
    local = ("-c", "protocol.file.allow=always")  # a submodule from a local path
    git(root, *local, "submodule", "add", "-q", str(shared), "semantic/shared")
    git(root, *who, "commit", "-qm", "add shared facts")
    _write_then_search(root, "shared cache")
    _in_step(root)
    # an edit committed inside the submodule, then the new pointer committed in the vault
    _edit(root, "semantic/shared/f-shared.md", "Redis", "Memcached")
    git(root / "semantic/shared", *who, "commit", "-qam", "two")
    git(root, "add", "semantic/shared")
    git(root, *who, "commit", "-qm", "bump shared facts")
    _fresh_search(root, "shared cache")
    _in_step(root)


def test_a_rebuild_does_not_list_files_git_already_answers_for(vault: Vault) -> None:
    """Files the index read that were written before git status ran are not kept on the
    manifest's differing list (a rebuild of a clean vault keeps it empty)."""
    import time

    root = vault.root
    for i in range(5):
        vault.add("semantic", f"Filler fact number {i} about the staging cluster", id=f"f{i}")
    # files are dated by their ctime, which can't be put back: wait past git's margin (1 s)
    time.sleep(1.2)
    Vault.open(root).reindex(full=True)
    manifest = store.read_manifest(root)
    assert manifest is not None and manifest["dirty_paths"] == []
    _in_step(root)


def test_a_burst_of_searches_shares_one_sweep_and_still_finds_a_hand_edit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a watcher, back-to-back searches check a few files each (the time since the
    last one pays for them), not a full budget each; the pass still reaches every file."""
    from memvault.index import drift

    root = tmp_path
    for n in range(60):
        write(root, f"semantic/facts/f{n:02d}.md", fact_text(f"f{n:02d}"))
    recorded = drift.stat_files(root)
    clock = [100.0]
    monkeypatch.setattr(drift.time, "monotonic", lambda: clock[0])
    sweep = drift.DriftSweep(root)
    sweep.reset()
    # Hand edit of the last file in walk order.
    write(root, "semantic/facts/f59.md", fact_text("f59", "Changed by hand."))
    # No time passes between searches: 4 files a search, so 15 searches before it is seen.
    found = [sweep.step(recorded, budget=100, rate=1000.0, least=4) for _ in range(15)]
    assert found == [False] * 14 + [True]
    # A second apart: the whole budget (more than the vault) in one search.
    sweep.reset()
    clock[0] += 1.0
    assert sweep.step(recorded, budget=100, rate=1000.0, least=4)
