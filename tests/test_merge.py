"""The merge driver: key-by-key front matter, unioned lists, disputed bodies, no markers.

Unit tests call :func:`memvault.store.mergedriver.merge_texts`; the integration tests let real
``git merge`` / ``git rebase`` call the registered driver in a vault.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memvault import Vault
from memvault.store.files import parse_text
from memvault.store.mergedriver import (
    DISPUTE_BEGIN,
    driver_command,
    is_memory_path,
    merge_texts,
    register_driver,
    registered_driver,
)

from helpers import git

PATH = "semantic/facts/sky.md"
MARKERS = ("<<<<<<<", ">>>>>>>", "\n=======\n")

BASE = """---
id: sky
type: semantic
category: facts
# hand-written comment, kept by the merge
title: Sky colour
tags: [weather, sky]
importance: 3
access_count: 2
updated: 2026-01-01T00:00:00Z
---

The sky is blue.

A second paragraph that nobody touches.
"""


def edit(text: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    return text


def meta_of(text: str, path: str = PATH) -> dict:
    return dict(parse_text(text, path).meta)


def no_markers(text: str) -> bool:
    return not any(m in text for m in MARKERS)


def test_both_edit_tags_and_body_gives_union_and_dispute() -> None:
    ours = edit(
        BASE,
        ("tags: [weather, sky]", "tags: [weather, sky, ours-tag]"),
        ("The sky is blue.", "The sky is azure."),
        ("2026-01-01T00", "2026-01-02T00"),
    )
    theirs = edit(
        BASE,
        ("tags: [weather, sky]", "tags: [weather, sky, theirs-tag]"),
        ("The sky is blue.", "The sky is cyan."),
        ("2026-01-01T00", "2026-01-03T00"),
    )
    result = merge_texts(BASE, ours, theirs, PATH)
    assert not result.conflict and result.disputed
    assert no_markers(result.text)
    meta = meta_of(result.text)
    assert meta["tags"] == ["weather", "sky", "ours-tag", "theirs-tag"]
    assert meta["status"] == "disputed"
    assert meta["updated"] == "2026-01-03T00:00:00Z"
    assert "The sky is azure." in result.text and "The sky is cyan." in result.text
    # The newer version stays the memory's text, the other one follows in a marked block.
    body = parse_text(result.text, PATH).content
    assert (
        body.index("The sky is cyan.") < body.index(DISPUTE_BEGIN) < body.index("The sky is azure.")
    )
    assert "# hand-written comment, kept by the merge" in result.text
    assert any("disputed" in n for n in result.notes)


def test_non_overlapping_body_edits_merge_without_dispute() -> None:
    ours = edit(BASE, ("The sky is blue.", "The sky is blue, mostly."))
    theirs = edit(BASE, ("nobody touches.", "nobody touches. Well, almost."))
    result = merge_texts(BASE, ours, theirs, PATH)
    assert not result.disputed and not result.conflict
    assert "The sky is blue, mostly." in result.text and "Well, almost." in result.text
    assert "status" not in meta_of(result.text)


def test_scalar_conflict_newer_updated_wins_either_way() -> None:
    ours = edit(BASE, ("importance: 3", "importance: 5"), ("2026-01-01T00", "2026-01-05T00"))
    theirs = edit(BASE, ("importance: 3", "importance: 1"), ("2026-01-01T00", "2026-01-04T00"))
    assert meta_of(merge_texts(BASE, ours, theirs, PATH).text)["importance"] == 5
    assert meta_of(merge_texts(BASE, theirs, ours, PATH).text)["importance"] == 5


def test_one_sided_changes_are_taken_and_deletions_respected() -> None:
    ours = edit(BASE, ("importance: 3\n", ""))  # ours deletes a key
    theirs = edit(BASE, ("title: Sky colour", "title: The colour of the sky"))
    meta = meta_of(merge_texts(BASE, ours, theirs, PATH).text)
    assert "importance" not in meta
    assert meta["title"] == "The colour of the sky"


def test_delete_versus_edit_keeps_the_edit() -> None:
    ours = edit(BASE, ("importance: 3\n", ""))
    theirs = edit(BASE, ("importance: 3", "importance: 4"))
    assert meta_of(merge_texts(BASE, ours, theirs, PATH).text)["importance"] == 4


def test_list_removal_on_one_side_stays_removed() -> None:
    ours = edit(BASE, ("tags: [weather, sky]", "tags: [sky, added-here]"))  # drops 'weather'
    theirs = edit(BASE, ("tags: [weather, sky]", "tags: [weather, sky, added-there]"))
    assert meta_of(merge_texts(BASE, ours, theirs, PATH).text)["tags"] == [
        "sky",
        "added-here",
        "added-there",
    ]


def test_counters_add_and_times_take_the_latest() -> None:
    ours = edit(BASE, ("access_count: 2", "access_count: 5"), ("2026-01-01T00", "2026-01-09T00"))
    theirs = edit(BASE, ("access_count: 2", "access_count: 4"), ("2026-01-01T00", "2026-01-08T00"))
    meta = meta_of(merge_texts(BASE, ours, theirs, PATH).text)
    assert meta["access_count"] == 2 + 3 + 2
    assert meta["updated"] == "2026-01-09T00:00:00Z"


def test_mappings_merge_recursively() -> None:
    base = edit(BASE, ("importance: 3", "importance: 3\nsource:\n  session: s1\n  url: http://a"))
    ours = edit(base, ("session: s1", "session: s2"))
    theirs = edit(base, ("url: http://a", "url: http://b"))
    meta = meta_of(merge_texts(base, ours, theirs, PATH).text)
    assert meta["source"] == {"session": "s2", "url": "http://b"}


def test_steps_merge_like_lines_and_dispute_when_they_overlap() -> None:
    path = "procedural/workflows/release.md"
    base = (
        "---\nid: release\ntype: procedural\nsteps:\n  - build\n  - test\n  - ship\n"
        "---\n\nRelease.\n"
    )
    ours = edit(base, ("- ship", "- ship to prod"))
    theirs = edit(base, ("- build", "- build clean"))
    result = merge_texts(base, ours, theirs, path)
    assert not result.disputed
    assert meta_of(result.text, path)["steps"] == ["build clean", "test", "ship to prod"]
    theirs2 = edit(
        base,
        ("- ship", "- ship to staging"),
        ("\n---\n\n", "\nupdated: 2026-02-01T00:00:00Z\n---\n\n"),
    )
    result = merge_texts(base, ours, theirs2, path)
    assert result.disputed and no_markers(result.text)
    meta = meta_of(result.text, path)
    assert meta["steps"][-1] == "ship to staging"  # newer side's steps
    assert "ship to prod" in result.text  # the other version is kept in the body


def test_yaml_memory_merges_content_key() -> None:
    path = "semantic/facts/sky.yaml"
    base = "id: sky\ntype: semantic\ntags: [a]\ncontent: |\n  The sky is blue.\n"
    ours = edit(base, ("tags: [a]", "tags: [a, b]"), ("blue", "azure"))
    theirs = edit(base, ("tags: [a]", "tags: [a, c]"), ("blue", "cyan"))
    result = merge_texts(base, ours, theirs, path)
    assert result.disputed and no_markers(result.text)
    meta = meta_of(result.text, path)
    assert meta["tags"] == ["a", "b", "c"]
    assert "azure" in meta["content"] and "cyan" in meta["content"]


def test_no_common_ancestor() -> None:
    ours = BASE
    theirs = edit(
        BASE, ("tags: [weather, sky]", "tags: [other]"), ("The sky is blue.", "The sky is grey.")
    )
    result = merge_texts(None, ours, theirs, PATH)
    assert no_markers(result.text) and result.disputed
    assert set(meta_of(result.text)["tags"]) == {"weather", "sky", "other"}


def test_unreadable_side_is_kept_verbatim_as_disputed() -> None:
    ours = edit(BASE, ("The sky is blue.", "The sky is azure."))
    theirs = "not a memory any more\n<<< someone pasted junk\n"
    result = merge_texts(BASE, ours, theirs, PATH)
    assert result.disputed and not result.conflict
    assert "someone pasted junk" in result.text
    assert meta_of(result.text)["status"] == "disputed"


def test_neither_side_readable_is_a_real_conflict() -> None:
    result = merge_texts("a\n", "b\n", "c\n", PATH)
    assert result.conflict


def test_files_outside_the_memory_trees_get_a_text_merge() -> None:
    assert not is_memory_path("README.md") and is_memory_path(PATH)
    clean = merge_texts("a\nb\nc\n", "A\nb\nc\n", "a\nb\nC\n", "README.md")
    assert clean.text == "A\nb\nC\n" and not clean.conflict
    assert merge_texts("a\n", "b\n", "c\n", "README.md").conflict


def test_trivial_cases() -> None:
    ours = edit(BASE, ("blue", "azure"))
    assert merge_texts(BASE, ours, BASE, PATH).text == ours
    assert merge_texts(BASE, BASE, ours, PATH).text == ours
    assert merge_texts(BASE, ours, ours, PATH).text == ours


# --- real git -----------------------------------------------------------------------------


@pytest.fixture
def identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Tester")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "tester@example.com")


def _commit_file(root: Path, rel: str, text: str, message: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")
    git(root, "add", rel)
    git(root, "commit", "-q", "-m", message)


@pytest.mark.parametrize("how", ["merge", "rebase"])
def test_git_merge_and_rebase_use_the_driver(vault: Vault, identity: None, how: str) -> None:
    root = vault.root
    register_driver(root)
    _commit_file(root, PATH, BASE, "add sky")
    git(root, "checkout", "-q", "-b", "other")
    _commit_file(
        root,
        PATH,
        edit(
            BASE,
            ("tags: [weather, sky]", "tags: [weather, sky, b-tag]"),
            ("The sky is blue.", "The sky is cyan."),
            ("2026-01-01T00", "2026-01-03T00"),
        ),
        "b",
    )
    git(root, "checkout", "-q", "main")
    _commit_file(
        root,
        PATH,
        edit(
            BASE,
            ("tags: [weather, sky]", "tags: [weather, sky, a-tag]"),
            ("The sky is blue.", "The sky is azure."),
            ("2026-01-01T00", "2026-01-02T00"),
        ),
        "a",
    )
    if how == "merge":
        proc = subprocess.run(
            ["git", "merge", "-q", "--no-edit", "other"], cwd=root, capture_output=True, text=True
        )
    else:
        git(root, "checkout", "-q", "other")
        proc = subprocess.run(["git", "rebase", "main"], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    text = (root / PATH).read_text(encoding="utf-8")
    assert no_markers(text)
    meta = meta_of(text)
    assert set(meta["tags"]) == {"weather", "sky", "a-tag", "b-tag"}
    assert meta["status"] == "disputed"
    assert "azure" in text and "cyan" in text
    assert git(root, "status", "--porcelain").strip() == ""


def test_register_driver_is_idempotent_and_uses_an_absolute_interpreter(vault: Vault) -> None:
    first = register_driver(vault.root)
    assert register_driver(vault.root) == first == registered_driver(vault.root)
    assert first.endswith("-m memvault merge-driver %O %A %B %P")
    assert os.path.isabs(first.split()[0].strip("'"))
    assert git(vault.root, "config", "merge.memvault.name").strip()
    assert driver_command("memvault-python") == "memvault merge-driver %O %A %B %P"


def test_cli_merge_driver(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    base, ours, theirs = (tmp_path / n for n in ("base", "ours", "theirs"))
    base.write_text(BASE)
    ours.write_text(edit(BASE, ("tags: [weather, sky]", "tags: [x]")))
    theirs.write_text(edit(BASE, ("The sky is blue.", "The sky is teal.")))
    result = cli("merge-driver", base, ours, theirs, PATH)
    assert result.code == 0
    merged = ours.read_text()
    assert "tags: [x]" in merged and "teal" in merged and no_markers(merged)
    # Not a memory and not mergeable: exit 1, like git's own text merge.
    base.write_text("a\n")
    ours.write_text("b\n")
    theirs.write_text("c\n")
    assert cli("merge-driver", base, ours, theirs, "README.md").code == 1
