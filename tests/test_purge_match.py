"""purge --match: a text said in a transcript (and kept in memories, history, the index and
the access log) is erased everywhere; a turn that is wholly the text goes, others keep
their words around ``[purged]``; one purge.log line records it without the text."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from memvault import PermissionDeniedError, ValidationError, Vault
from memvault.purge_match import same_text
from memvault.transcripts import parse_turns

from helpers import git

PHONE = "+351 912 345 678"
DIGITS = "912 345 678"  # what any trace of it would hold


def _everything_in_git(root: Path) -> str:
    """Every object reachable from any ref (every version of every file, every commit
    message), and `git log --all -p`."""
    ids = git(root, "rev-list", "--all", "--objects")
    batch = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=root,
        input="".join(line.split()[0] + "\n" for line in ids.splitlines()).encode(),
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8", "replace")
    return batch + git(root, "log", "--all", "-p", "--format=%H%n%B")


def _grep_refs(root: Path, text: str) -> str:
    refs = git(root, "for-each-ref", "--format=%(refname)").split()
    return git(root, "grep", "-F", "-i", text, *refs, check=False)


def _files_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file())


def _said_in_a_transcript(tmp_path: Path) -> tuple[Vault, Vault]:
    """A vault where the number was said in a session, kept in a fact (edited since), held
    by a memory forgotten since, searched for (access log) and indexed."""
    vault = Vault.init(tmp_path / "v", agent="ana", team="web")
    ana = Vault.open(vault.root, agent="ana", team="web")
    ana.log_many(
        "support-call",
        [
            ("user", "Hi, I can't log in to the billing page.", None, None, None),
            ("assistant", "Which phone number is on the account?", None, None, None),
            ("user", PHONE, None, None, None),
            ("user", f"Or call me at {PHONE} after six.", None, None, None),
            ("assistant", "Thanks, I reset the login; you can sign in now.", None, None, None),
        ],
    )
    fact = ana.add("semantic", f"Ana's phone number is {PHONE} (mobile).", title="Ana's phone")
    ana.update(fact.memory.id, {"importance": 4}, "she asked to be called")
    gone = ana.add("episodic", f"Called Ana on {PHONE} about the invoice; she paid the same day")
    ana.forget(gone.memory.id, "duplicate")
    keep = ana.add("semantic", "The billing page needs a login since March.")
    ana.search(f"call {PHONE}")  # access log + index
    index = vault.root / ".memvault" / "index"
    assert DIGITS.encode() in _files_under(index)
    assert DIGITS in (vault.root / ".memvault" / "access.log").read_text()
    assert DIGITS in _everything_in_git(vault.root)
    assert keep.memory.id
    librarian = Vault.open(vault.root, agent="lib", role="librarian")
    return ana, librarian


def test_purge_by_content_leaves_no_trace(tmp_path: Path) -> None:
    ana, librarian = _said_in_a_transcript(tmp_path)
    root = ana.root
    head = git(root, "rev-parse", "HEAD")

    preview = librarian.purge_preview(PHONE)
    assert git(root, "rev-parse", "HEAD") == head  # a preview writes nothing
    hits = {f.path: f for f in preview.files}
    transcript = ana.get("session-support-call")
    assert len(hits[transcript.path].turns_removed) == 1
    assert len(hits[transcript.path].turns_redacted) == 1
    assert preview.counts()["commits"] >= 4 and preview.messages >= 1

    done = librarian.purge_text(PHONE, "GDPR erasure request #12")

    assert done.applied and done.counts() == preview.counts()
    assert DIGITS not in _everything_in_git(root)
    assert _grep_refs(root, DIGITS) == ""
    assert DIGITS not in (root / ".memvault" / "access.log").read_text()
    # the turns: the one that was only the number is gone, the other keeps its words
    turns = [
        t.text
        for t in parse_turns(Vault.open(root, agent="ana", team="web").get(transcript.id).content)
    ]
    assert turns == [
        "Hi, I can't log in to the billing page.",
        "Which phone number is on the account?",
        "Or call me at [purged] after six.",
        "Thanks, I reset the login; you can sign in now.",
    ]
    assert "Ana's phone number is [purged] (mobile)." in _everything_in_git(root)
    # recall finds nothing of it, and the rebuilt index holds none of it
    fresh = Vault.open(root, agent="ana", team="web")
    for hit in fresh.recall(f"phone {PHONE}", limit=20).hits:
        assert DIGITS not in hit.memory.content
    assert fresh.search("billing login").hits
    assert DIGITS.encode() not in _files_under(root / ".memvault" / "index")
    # one reviewable record, without the text
    log = (root / ".memvault" / "purge.log").read_text()
    [entry] = [json.loads(line) for line in log.splitlines()]
    # (the fingerprint is a salted hash: its hex digits may hold "912" by chance)
    assert DIGITS not in log and "912" not in log.replace(entry["match"]["fingerprint"], "")
    assert entry["by"] == "lib" and entry["reason"] == "GDPR erasure request #12"
    assert entry["match"]["kind"] == "text" and entry["match"]["length"] == len(PHONE)
    assert entry["hits"]["turns_removed"] == 1 and entry["hits"]["files"] == len(preview.files)
    assert same_text(entry["match"]["fingerprint"], PHONE)
    assert not same_text(entry["match"]["fingerprint"], "+351 912 345 679")
    assert git(root, "status", "--porcelain").strip() == ""
    assert subprocess.run(["git", "fsck"], cwd=root, capture_output=True).returncode == 0


def test_a_regex_and_a_scope_narrow_what_is_purged(tmp_path: Path) -> None:
    vault = Vault.init(tmp_path / "v", agent="ana", team="web")
    ana = Vault.open(vault.root, agent="ana", team="web")
    mine = ana.add("semantic", "My locker code is 4417-2281, keep it private", scope="self")
    team = ana.add("semantic", "The office door code is 8812-0044 for everyone")
    librarian = Vault.open(vault.root, agent="lib", role="librarian")
    done = librarian.purge_text(r"\b\d{4}-\d{4}\b", "codes rotate", regex=True, scope="self")
    assert [f.path for f in done.files] == [mine.memory.path]
    history = _everything_in_git(vault.root)
    assert "4417-2281" not in history and "8812-0044" in history
    # its id was made from the text: renamed, file and all
    moved = vault.root / "semantic" / "facts" / "my-locker-code-is-purged-keep-it.md"
    assert "id: my-locker-code-is-purged-keep-it" in moved.read_text()
    assert "My locker code is [purged], keep it private" in moved.read_text()
    assert not (vault.root / mine.memory.path).exists()
    assert mine.memory.path not in git(vault.root, "log", "--all", "--name-only")
    assert "8812-0044" in (vault.root / team.memory.path).read_text()


def test_purge_by_content_is_refused_without_care(tmp_path: Path) -> None:
    vault = Vault.init(tmp_path / "v", agent="ana")
    vault.add("semantic", f"Ana's phone is {PHONE}")
    with pytest.raises(PermissionDeniedError, match="librarian"):
        vault.purge_preview(PHONE)
    librarian = Vault.open(vault.root, role="librarian")
    with pytest.raises(ValidationError, match="at least 4"):
        librarian.purge_text("+3 5", "x")
    with pytest.raises(ValidationError, match="empty"):
        librarian.purge_text("x*", "x", regex=True)
    with pytest.raises(ValidationError, match="reason"):
        librarian.purge_text(PHONE, " ")
    with pytest.raises(ValidationError, match="self|team|global"):
        librarian.purge_preview(PHONE, scope="teams")
    nothing = librarian.purge_text("no such words here", "x")
    assert not nothing.applied and nothing.empty
    assert not (vault.root / ".memvault" / "purge.log").exists()


def test_cli_purge_match_shows_asks_and_erases(tmp_path: Path, cli, chdir) -> None:  # type: ignore[no-untyped-def]
    vault = Vault.init(tmp_path / "v")
    vault.log("call", "user", f"Reach me at {PHONE} please")
    chdir(vault.root)
    lib = ("--role", "librarian")
    res = cli(*lib, "purge", "--match", PHONE, "--dry-run", "--json")
    assert res.code == 0 and json.loads(res.out)["hits"]["turns_redacted"] == 1
    assert DIGITS in _everything_in_git(vault.root)
    assert cli(*lib, "purge", "--match", PHONE, "--reason", "asked", stdin="no\n").code == 130
    assert DIGITS in _everything_in_git(vault.root)
    assert cli("purge", "--match", PHONE, "--reason", "x", "--yes").code == 1  # no role
    assert cli(*lib, "purge", "--match", PHONE, "--yes").code == 1  # no reason
    res = cli(*lib, "purge", "--match", PHONE, "--reason", "asked", stdin="purge\n")
    assert res.code == 0 and "1 redacted" in res.out
    assert DIGITS not in _everything_in_git(vault.root)
    assert cli(*lib, "purge", "--match", PHONE, "--regex", "x").code == 1
