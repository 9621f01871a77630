"""A write killed half-way (SIGKILL between writing files and committing them) is undone
by the next memvault command, reader or writer; nothing half-done is ever served."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memvault import Vault

from helpers import commit_count, git, is_clean

KILLER = """
import os, signal, sys
from memvault import Vault
from memvault.store.git import ops as gitstore
def die(*a, **k):
    os.kill(os.getpid(), signal.SIGKILL)
gitstore.commit = die  # files are written, the commit never happens
vault = Vault.open(sys.argv[1])
what = sys.argv[2]
if what == "import":
    from memvault.transfer import import_file
    from pathlib import Path
    import_file(vault.core, Path(sys.argv[3]))
elif what == "update":
    vault.update(sys.argv[3], {"importance": 5}, "raise it", content="Rewritten body")
elif what == "forget":
    vault.forget(sys.argv[3], reason="gone")
"""


def _kill_during(root: Path, *args: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", KILLER, str(root), *args], capture_output=True, text=True
    )
    assert proc.returncode == -9, proc.stderr  # it died where we wanted


def _jsonl(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "in.jsonl"
    lines = [
        json.dumps(
            {
                "id": f"imp-{i}",
                "type": "semantic",
                "category": "facts",
                "content": f"Imported fact {i}",
            }
        )
        for i in range(n)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_killed_import_is_undone_and_never_served(vault: Vault, tmp_path: Path) -> None:
    before = commit_count(vault.root)
    _kill_during(vault.root, "import", str(_jsonl(tmp_path, 30)))
    assert not is_clean(vault.root)  # 30 files written, none committed
    # a reader (no lock held by anyone) undoes it before it reads
    assert [m.id for m in Vault.open(vault.root).all_memories()] == []
    assert is_clean(vault.root) and commit_count(vault.root) == before
    # and the import can simply be run again
    from memvault.transfer import import_file

    import_file(Vault.open(vault.root).core, _jsonl(tmp_path, 30))
    assert len(Vault.open(vault.root).all_memories()) == 30


def test_a_search_after_a_killed_import_never_serves_it(vault: Vault, tmp_path: Path) -> None:
    vault.add("semantic", "An old fact about the staging database", id="old-fact")
    assert vault.search("staging database", log=False).ids == ["old-fact"]  # index built
    _kill_during(vault.root, "import", str(_jsonl(tmp_path, 20)))
    assert not is_clean(vault.root)
    # The first search (in a fresh process, as a CLI recall is) undoes the dead import
    # before it indexes anything: no uncommitted memory comes back, and nothing is left
    # behind for the index to catch up with.
    found = Vault.open(vault.root).search("Imported fact", limit=50, log=False)
    assert [i for i in found.ids if i.startswith("imp-")] == []
    assert is_clean(vault.root)
    from memvault.index import health

    assert health(Vault.open(vault.root).core) == []


def test_a_killed_rewrite_is_put_back_byte_for_byte(vault: Vault) -> None:
    m = vault.add("semantic", "Original body", id="keep-me").memory
    original = (vault.root / m.path).read_bytes()
    _kill_during(vault.root, "update", "keep-me")
    assert (vault.root / m.path).read_bytes() != original
    Vault.open(vault.root).add("semantic", "Another fact")  # a writer recovers too
    assert (vault.root / m.path).read_bytes() == original
    assert is_clean(vault.root)


def test_a_killed_forget_keeps_the_memory(vault: Vault) -> None:
    m = vault.add("semantic", "Do not lose me", id="do-not-lose").memory
    _kill_during(vault.root, "forget", "do-not-lose")
    assert not (vault.root / m.path).exists()
    assert Vault.open(vault.root).get("do-not-lose").content.startswith("Do not lose me")
    assert is_clean(vault.root)


def test_a_hand_edit_made_after_the_crash_is_left_alone(vault: Vault) -> None:
    m = vault.add("semantic", "Original body", id="edited-later").memory
    _kill_during(vault.root, "update", "edited-later")
    (vault.root / m.path).write_text((vault.root / m.path).read_text() + "\nMy own words.\n")
    Vault.open(vault.root).add("semantic", "Another fact")
    assert "My own words." in (vault.root / m.path).read_text()
    assert "edited-later" in git(vault.root, "status", "--porcelain")  # still the user's to commit


def test_a_vault_whose_git_dir_lives_elsewhere_writes_and_recovers(tmp_path: Path) -> None:
    # a submodule or a linked worktree: .git is a file naming the real git dir
    vault = Vault.init(tmp_path / "v")
    real = tmp_path / "elsewhere.git"
    (vault.root / ".git").rename(real)
    (vault.root / ".git").write_text(f"gitdir: {real}\n")
    vault = Vault.open(vault.root)
    vault.add("semantic", "Written through a gitdir file", id="via-gitdir")
    assert is_clean(vault.root)
    assert not (real / "memvault-journal" / "note.json").exists()
    _kill_during(vault.root, "forget", "via-gitdir")
    assert Vault.open(vault.root).get("via-gitdir").content.startswith("Written through")
    assert is_clean(vault.root)
