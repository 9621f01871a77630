"""The Vault API against real git repositories: init, writes as commits, reads, scopes."""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

import pytest

from memvault import Vault
from memvault.errors import (
    DuplicateIdError,
    NotFoundError,
    PermissionDeniedError,
    SecretDetectedError,
    ValidationError,
    VaultExistsError,
    VaultNotFoundError,
)
from memvault.memory import validate_meta
from memvault.store.files import parse_text
from memvault.transcripts import parse_turns

from helpers import commit_count, fact_text, git, is_clean, last_message, write


def tree_files(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file()
        and ".git" not in p.relative_to(root).parts
        and not p.relative_to(root).as_posix().startswith(".memvault/index")
    }


# --- init --------------------------------------------------------------------------------


def test_init_creates_the_layout_and_one_commit(tmp_path: Path) -> None:
    vault = Vault.init(tmp_path / "v")
    root = vault.root
    for folder in ("episodic", "semantic", "procedural", "archive", "inbox", ".memvault"):
        assert (root / folder).is_dir(), folder
    assert (root / ".git").is_dir()
    assert commit_count(root) == 1
    assert last_message(root).startswith("memvault: ")
    assert git(root, "log", "-1", "--format=%an <%ae>").strip() == "memvault <memvault@localhost>"
    tracked = set(git(root, "ls-files").split())
    assert {".gitignore", ".memvault/config.yaml", "README.md"} <= tracked
    assert is_clean(root)
    # README explains hand editing; config has commented defaults
    assert "by hand" in (root / "README.md").read_text().lower()
    config = (root / ".memvault/config.yaml").read_text()
    assert config.count("#") >= 5 and "embedder:" in config and "scope:" in config
    assert vault.all_memories() == []


def test_init_gitignore_ignores_index_and_access_log(tmp_path: Path) -> None:
    vault = Vault.init(tmp_path / "v")
    root = vault.root
    write(root, ".memvault/index/catalog.sqlite", "x")
    write(root, ".memvault/index/manifest.json", "{}")
    write(root, ".memvault/access.log", '{"kind": "query"}\n')
    ignored = git(
        root,
        "check-ignore",
        ".memvault/index/manifest.json",
        ".memvault/access.log",
        ".memvault/access.log.folding",
    )
    assert ".memvault/index/manifest.json" in ignored and ".memvault/access.log" in ignored
    assert ".memvault/access.log.folding" in ignored  # parked by a consolidation that was killed
    assert git(root, "check-ignore", ".memvault/config.yaml", check=False).strip() == ""
    assert is_clean(root)


def test_a_vault_id_of_digits_and_one_e_stays_a_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unquoted, YAML reads ``33515721700140e6`` as 3.351572170014e+19: the id would lose
    its digits and two vaults could share collections on a server (seen once in CI)."""
    import uuid

    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID("33515721700140e6" + "0" * 16))
    vault = Vault.init(tmp_path / "v")
    assert vault.config.get("index.vault_id") == "33515721700140e6"
    assert 'vault_id: "33515721700140e6"  #' in (vault.root / ".memvault/config.yaml").read_text()


def test_names_in_an_existing_config_keep_the_text_written(tmp_path: Path) -> None:
    """Configs stamped before the id was quoted, and names a person typed without quotes."""
    vault = Vault.init(tmp_path / "v")
    path = vault.root / ".memvault/config.yaml"
    text = re.sub(r'vault_id: "\w+"', "vault_id: 0123e45", path.read_text(), count=1)
    text = text.replace("  agent: null", "  agent: 007").replace("  team: null", "  team: yes")
    path.write_text(text)
    config = Vault.open(vault.root).config
    assert config.get("index.vault_id") == "0123e45"
    assert config.get("identity.agent") == "007"
    assert config.get("identity.team") == "yes"
    assert config.get("identity.role") is None
    assert config.get("index.chunk_words") == 180  # numbers stay numbers
    # read again from the parsed-config cache: the same text
    assert Vault.open(vault.root).config.get("index.vault_id") == "0123e45"


def test_init_refuses_to_clobber(tmp_path: Path) -> None:
    vault = Vault.init(tmp_path / "v")
    vault.add("semantic", "Keep me")
    before = commit_count(vault.root)
    with pytest.raises(VaultExistsError):
        Vault.init(tmp_path / "v")
    with pytest.raises(VaultExistsError):
        Vault.init(tmp_path / "v", examples=True)
    assert commit_count(vault.root) == before
    assert [m.content for m in Vault.open(vault.root).all_memories()] == ["Keep me\n"]
    # a folder that already holds memory trees (say, a vault whose .memvault/ was lost)
    other = tmp_path / "other"
    write(other, "semantic/facts/mine.md", fact_text("mine"))
    with pytest.raises(VaultExistsError):
        Vault.init(other)
    assert not (other / ".memvault").exists()


def test_init_examples_are_valid_and_dated(tmp_path: Path) -> None:
    vault = Vault.init(tmp_path / "v", examples=True)
    memories = vault.all_memories()
    kinds = {m.type for m in memories}
    assert kinds == {"episodic", "semantic", "procedural"}
    assert vault.core.scan().invalid == []
    for m in memories:
        assert "{{" not in (vault.root / m.path).read_text()
        assert m.created is not None
    assert commit_count(vault.root) == 1 and is_clean(vault.root)


def test_init_inside_an_existing_git_repo_keeps_its_history(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "notes.txt", "mine\n")
    git(root, "add", "notes.txt")
    git(root, "-c", "user.name=me", "-c", "user.email=me@x", "commit", "-q", "-m", "my commit")
    vault = Vault.init(root)
    assert commit_count(root) == 2
    assert "notes.txt" in git(root, "ls-files")
    assert vault.root == root.resolve()


def test_open_discovery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = Vault.init(tmp_path / "v")
    monkeypatch.chdir(vault.root / "semantic")
    assert Vault.open().root == vault.root
    monkeypatch.chdir(tmp_path)
    with pytest.raises(VaultNotFoundError):
        Vault.open()
    monkeypatch.setenv("MEMVAULT_VAULT", str(vault.root))
    assert Vault.open().root == vault.root
    with pytest.raises(VaultNotFoundError):
        Vault.open(tmp_path)  # an explicit path wins over the env var


# --- add ------------------------------------------------------------------------------------


def test_add_fact_writes_one_file_and_one_commit(vault: Vault) -> None:
    before = commit_count(vault.root)
    result = vault.add(
        "semantic",
        "The API rate limit is 100 req/s",
        subject="api.rate-limit",
        tags=["api", "limits"],
        importance=4,
        source="https://docs.example.com/limits",
    )
    m = result.memory
    assert m.path == "semantic/facts/the-api-rate-limit-is-100-req-s.md"
    assert m.id == "the-api-rate-limit-is-100-req-s"
    assert commit_count(vault.root) == before + 1
    assert result.commit == git(vault.root, "rev-parse", "HEAD").strip()
    msg = last_message(vault.root)
    assert msg.startswith("memvault: add semantic the-api-rate-limit-is-100-req-s")
    assert "100 req/s" in msg
    doc = parse_text((vault.root / m.path).read_text(), m.path)
    assert doc.meta["type"] == "semantic" and doc.meta["category"] == "facts"
    assert doc.meta["subject"] == "api.rate-limit" and doc.meta["tags"] == ["api", "limits"]
    assert doc.meta["importance"] == 4 and doc.meta["status"] == "active"
    assert doc.meta["valid_from"] == doc.meta["created"]
    assert doc.content == "The API rate limit is 100 req/s\n"
    assert validate_meta(doc.meta) == []
    assert is_clean(vault.root)
    assert git(vault.root, "show", "--name-only", "--format=", "HEAD").split() == [m.path]


def test_add_episode_lands_in_year_month_folder(vault: Vault) -> None:
    result = vault.add(
        "episodic",
        "Deploy failed: migrations locked the users table",
        created="2026-03-04T10:00:00Z",
        outcome="failure",
        session="sess-1",
        tags=["deploy"],
    )
    m = result.memory
    assert (
        m.path == "episodic/2026/03/2026-03-04-deploy-failed-migrations-locked-the-users-table.md"
    )
    assert m.meta["outcome"] == "failure" and m.meta["session"] == "sess-1"
    assert "valid_from" not in m.meta
    assert last_message(vault.root).startswith("memvault: add episodic ")


def test_add_procedure_with_steps_and_triggers(vault: Vault) -> None:
    result = vault.add(
        "procedural",
        "How we cut a release",
        title="Release",
        category="workflows",
        steps=["Run tests", "Tag", "Push"],
        trigger=["release", "ship"],
    )
    m = result.memory
    assert m.path == "procedural/workflows/release.md"
    assert m.meta["steps"] == ["Run tests", "Tag", "Push"]
    assert m.meta["trigger"] == ["release", "ship"]
    assert m.title == "Release"


def test_add_category_singular_is_normalised(vault: Vault) -> None:
    m = vault.add("semantic", "We use Postgres", category="decision").memory
    assert m.path.startswith("semantic/decisions/")


def test_add_keeps_unknown_keys(vault: Vault) -> None:
    m = vault.add("semantic", "Unknown keys survive", x_reviewer="alice").memory
    assert m.meta["x_reviewer"] == "alice"
    assert "x_reviewer: alice" in (vault.root / m.path).read_text()


def test_same_title_twice_gets_a_new_id(vault: Vault) -> None:
    a = vault.add("semantic", "Same words").memory
    b = vault.add("semantic", "Same words").memory
    assert a.id == "same-words" and b.id == "same-words-2"
    assert a.path != b.path


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"importance": 9}, "importance"),
        ({"scope": "everyone"}, "scope"),
        ({"decay": "sometimes"}, "decay"),
        ({"category": "gossip"}, "category"),
        ({"tags": "not-a-list"}, "tags"),
        ({"scope": "self"}, "agent"),  # self needs an agent
        ({"id": "../../x"}, "id"),
        ({"related": ["../x"]}, "related"),
    ],
)
def test_invalid_add_writes_nothing(vault: Vault, kwargs: dict[str, object], key: str) -> None:
    before = commit_count(vault.root)
    with pytest.raises(ValidationError) as info:
        vault.add("semantic", "Nothing should be written", **kwargs)
    assert info.value.key == key
    assert commit_count(vault.root) == before
    assert is_clean(vault.root)
    assert not list((vault.root / "semantic").rglob("*.md"))


def test_empty_text_is_refused(vault: Vault) -> None:
    with pytest.raises(ValidationError):
        vault.add("semantic", "  \n\n")
    with pytest.raises(ValidationError):
        vault.add("opinion", "x")


def test_explicit_duplicate_id_is_refused(vault: Vault) -> None:
    vault.add("semantic", "first", id="one")
    before = commit_count(vault.root)
    with pytest.raises(DuplicateIdError):
        vault.add("procedural", "second", id="one")
    assert commit_count(vault.root) == before


def test_secrets_are_refused(vault: Vault) -> None:
    before = commit_count(vault.root)
    with pytest.raises(SecretDetectedError) as info:
        vault.add("semantic", "the key is AKIAABCDEFGHIJKLMNOP")
    assert "AKIAAB" in str(info.value) and "AKIAABCDEFGHIJKLMNOP" not in str(info.value)
    assert commit_count(vault.root) == before
    m = vault.add("semantic", "documented example AKIAABCDEFGHIJKLMNOP", allow_secrets=True).memory
    assert m.id


def test_commit_does_not_sweep_in_the_users_staged_files(vault: Vault) -> None:
    write(vault.root, "notes.txt", "work in progress\n")
    git(vault.root, "add", "notes.txt")
    vault.add("semantic", "A memory")
    assert git(vault.root, "show", "--name-only", "--format=", "HEAD").split() == [
        "semantic/facts/a-memory.md"
    ]
    assert "A  notes.txt" in git(vault.root, "status", "--porcelain")


def test_author_is_configurable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_AUTHOR_NAME", "Robo")
    monkeypatch.setenv("MEMVAULT_AUTHOR_EMAIL", "robo@example.com")
    vault = Vault.init(tmp_path / "v")
    vault.add("semantic", "who wrote this")
    assert git(vault.root, "log", "-1", "--format=%an <%ae>|%cn <%ce>").strip() == (
        "Robo <robo@example.com>|Robo <robo@example.com>"
    )


# --- contradiction by subject -------------------------------------------------------------------


def test_newer_fact_supersedes_older_in_one_commit(vault: Vault) -> None:
    old = vault.add(
        "semantic", "The user lives in Lisbon", subject="user.city", valid_from="2024-01-01"
    ).memory
    before = commit_count(vault.root)
    result = vault.add(
        "semantic", "The user lives in Porto", subject="user.city", valid_from="2025-06-01"
    )
    new = result.memory
    assert commit_count(vault.root) == before + 1
    assert result.superseded == (old.id,)
    changed = git(vault.root, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == sorted([old.path, new.path])
    assert "Supersedes " + old.id in last_message(vault.root)
    old_now = vault.get(old.id)
    assert old_now.status == "superseded"
    assert old_now.meta["superseded_by"] == new.id
    assert old_now.meta["valid_to"].startswith("2025-06-01")
    assert new.meta["supersedes"] == old.id and new.status == "active"
    # nothing silently deleted
    assert (vault.root / old.path).exists()
    active = [m.id for m in vault.memories() if m.subject == "user.city"]
    assert active == [new.id]


def test_an_older_fact_enters_history_as_superseded(vault: Vault) -> None:
    current = vault.add(
        "semantic", "Rate limit is 200 req/s", subject="api.rate", valid_from="2025-01-01"
    ).memory
    result = vault.add(
        "semantic", "Rate limit was 100 req/s", subject="api.rate", valid_from="2023-01-01"
    )
    old = result.memory
    assert result.superseded == ()
    assert old.status == "superseded"
    assert old.meta["superseded_by"] == current.id
    assert old.meta["valid_to"].startswith("2025-01-01")
    assert vault.get(current.id).status == "active"
    assert vault.get(current.id).meta.get("superseded_by") is None


def test_supersede_rewrites_only_the_intended_keys_of_a_hand_written_fact(vault: Vault) -> None:
    hand = (
        "---\n"
        "# Written by hand; keep this comment\n"
        "type: semantic\n"
        "id: db-choice\n"
        "subject: storage.db   # the key facts share\n"
        "\n"
        "tags:\n"
        "  - db\n"
        "valid_from: 2024-01-01\n"
        "x-note: keep me\n"
        "---\n"
        "\n"
        "We use MySQL.\n"
    )
    rel = "semantic/facts/db-choice.md"
    write(vault.root, rel, hand)
    git(vault.root, "add", rel)
    git(vault.root, "-c", "user.name=me", "-c", "user.email=me@x", "commit", "-q", "-m", "hand")
    new = vault.add("semantic", "We use PostgreSQL", subject="storage.db").memory
    after = (vault.root / rel).read_text()
    diff = [
        line
        for line in difflib.unified_diff(hand.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]
    added = sorted(line[1:].split(":")[0] for line in diff if line.startswith("+"))
    removed = [line for line in diff if line.startswith("-")]
    assert removed == []
    assert added == ["status", "superseded_by", "updated", "valid_to"]
    assert f"superseded_by: {new.id}" in after
    assert after.endswith("---\n\nWe use MySQL.\n")


def test_subjects_do_not_cross_scopes_or_agents(vault: Vault) -> None:
    a = Vault.open(vault.root, agent="a")
    b = Vault.open(vault.root, agent="b")
    mine = a.add("semantic", "I prefer tabs", subject="pref.indent", scope="self").memory
    theirs = b.add("semantic", "I prefer spaces", subject="pref.indent", scope="self").memory
    assert a.get(mine.id).status == "active"
    assert b.get(theirs.id).status == "active"
    team = vault.add("semantic", "Team uses spaces", subject="pref.indent").memory
    assert team.status == "active" and "supersedes" not in team.meta


def test_supersede_chain(vault: Vault) -> None:
    ids = [
        vault.add(
            "semantic", f"Version {n}", subject="app.version", valid_from=f"202{n}-01-01"
        ).memory.id
        for n in range(1, 4)
    ]
    assert [vault.get(i).status for i in ids] == ["superseded", "superseded", "active"]
    assert vault.get(ids[0]).meta["superseded_by"] == ids[1]
    assert vault.get(ids[1]).meta["superseded_by"] == ids[2]


# --- update / replace / forget --------------------------------------------------------------------


def test_update_changes_only_given_keys(vault: Vault) -> None:
    m = vault.add("semantic", "A fact", tags=["a"]).memory
    before = (vault.root / m.path).read_text()
    result = vault.update(m.id, {"importance": 5}, "more important now")
    after = (vault.root / m.path).read_text()
    removed = [line for line in before.splitlines() if line not in after.splitlines()]
    assert removed == ["importance: 3"]
    assert result.memory.importance == 5
    assert last_message(vault.root) == f"memvault: update {m.id}: more important now"


def test_update_with_nothing_keeps_bytes_and_makes_no_commit(vault: Vault) -> None:
    m = vault.add("semantic", "A fact").memory
    before = (vault.root / m.path).read_bytes()
    count = commit_count(vault.root)
    result = vault.update(m.id, {}, "noop", touch=False)
    assert (vault.root / m.path).read_bytes() == before
    assert result.commit is None and commit_count(vault.root) == count


def test_replace_text_validates_before_writing(vault: Vault) -> None:
    m = vault.add("semantic", "A fact").memory
    before = (vault.root / m.path).read_bytes()
    count = commit_count(vault.root)
    with pytest.raises(ValidationError) as info:
        vault.replace_text(m.id, before.decode().replace("importance: 3", "importance: 11"), "bad")
    assert info.value.key == "importance"
    assert (vault.root / m.path).read_bytes() == before and commit_count(vault.root) == count
    vault.replace_text(m.id, before.decode().replace("A fact", "A better fact"), "typo")
    assert vault.get(m.id).content == "A better fact\n"
    assert last_message(vault.root) == f"memvault: edit {m.id}: typo"


def test_forget_deletes_and_records_why(vault: Vault) -> None:
    m = vault.add("semantic", "Wrong and misleading").memory
    with pytest.raises(ValidationError):
        vault.forget(m.id, "  ")
    vault.forget(m.id, "it was wrong")
    assert not (vault.root / m.path).exists()
    msg = last_message(vault.root)
    assert msg.startswith(f"memvault: forget {m.id}: it was wrong") and m.path in msg
    with pytest.raises(NotFoundError):
        vault.get(m.id)
    assert m.path not in git(vault.root, "ls-files")
    assert "Wrong and misleading" in git(vault.root, "show", f"HEAD~1:{m.path}")
    assert is_clean(vault.root)


def test_get_unknown_and_bad_ids(vault: Vault) -> None:
    with pytest.raises(NotFoundError):
        vault.get("nope")
    with pytest.raises(NotFoundError):
        vault.get("../../etc/passwd")


# --- log (conversation turns) ---------------------------------------------------------------------


def test_log_appends_turns_to_one_file_per_session(vault: Vault) -> None:
    before = commit_count(vault.root)
    r1 = vault.log("deploy-chat", "user", "Why did the deploy fail?")
    r2 = vault.log("deploy-chat", "assistant", "Migrations locked the users table.")
    r3 = vault.log("other-chat", "user", "Hello")
    assert r1.memory.path == r2.memory.path != r3.memory.path
    assert commit_count(vault.root) == before + 3
    assert last_message(vault.root).startswith("memvault: log 1 turn(s) to session other-chat")
    transcript = vault.get(r1.memory.id)
    turns = parse_turns(transcript.content)
    assert [(t.role, t.text) for t in turns] == [
        ("user", "Why did the deploy fail?"),
        ("assistant", "Migrations locked the users table."),
    ]
    assert transcript.type == "episodic" and transcript.meta["session"] == "deploy-chat"
    transcripts = [m for m in vault.all_memories() if m.category == "transcript"]
    assert len(transcripts) == 2


def test_log_turn_ids_are_idempotent(vault: Vault) -> None:
    vault.log("s1", "user", "first", turn_id="t1")
    count = commit_count(vault.root)
    result = vault.log("s1", "user", "first", turn_id="t1")
    assert result.commit is None and commit_count(vault.root) == count
    batch = vault.log_many(
        "s1",
        [
            ("user", "first", None, None, "t1"),
            ("assistant", "second", None, None, "t2"),
            ("user", "third", None, None, "t3"),
        ],
    )
    assert batch.commit is not None and commit_count(vault.root) == count + 1
    assert [t.turn_id for t in parse_turns(vault.get(batch.memory.id).content)] == [
        "t1",
        "t2",
        "t3",
    ]


def test_log_rejects_bad_roles_and_empty_sessions(vault: Vault) -> None:
    with pytest.raises(ValidationError):
        vault.log("s", "robot", "x")
    with pytest.raises(ValidationError):
        vault.log(" ", "user", "x")
    assert [m for m in vault.all_memories()] == []
    # a credential is redacted, the turn kept (a conversation with holes can't be recalled)
    kept = vault.log("s", "user", "token ghp_" + "a" * 36)
    assert kept.redacted and "ghp_" not in vault.raw_text(kept.memory)
    assert "[secret redacted" in vault.raw_text(kept.memory)


# --- scopes ---------------------------------------------------------------------------------------


def test_agents_never_see_each_others_self_memories(vault: Vault) -> None:
    a = Vault.open(vault.root, agent="alice")
    b = Vault.open(vault.root, agent="bob")
    secret = a.add("semantic", "Alice's private note", scope="self").memory
    shared = a.add("semantic", "Shared team note").memory
    assert secret.meta["agent"] == "alice"
    assert {m.id for m in a.memories()} == {secret.id, shared.id}
    assert {m.id for m in b.memories()} == {shared.id}
    with pytest.raises(NotFoundError):
        b.get(secret.id)
    assert b.get(shared.id).id == shared.id
    from memvault.transfer import export_memories

    assert secret.id not in export_memories(b.core, "jsonl")
    assert secret.id in export_memories(a.core, "jsonl")


def test_team_scope_is_per_team(vault: Vault) -> None:
    red = Vault.open(vault.root, agent="r", team="red")
    blue = Vault.open(vault.root, agent="b", team="blue")
    note = red.add("semantic", "Red team runbook location").memory
    assert note.meta["team"] == "red"
    assert [m.id for m in red.memories()] == [note.id]
    assert blue.memories() == []


def test_global_without_librarian_goes_to_inbox(vault: Vault) -> None:
    agent = Vault.open(vault.root, agent="coder")
    result = agent.add("semantic", "Company holiday is May 1", scope="global")
    assert result.inbox
    assert result.memory.path == "inbox/semantic/facts/company-holiday-is-may-1.md"
    assert result.memory.meta["status"] == "proposed"
    assert "librarian" in last_message(vault.root)
    assert agent.memories() == []  # proposed, not active


def test_librarian_writes_global_directly(vault: Vault) -> None:
    lib = Vault.open(vault.root, agent="lib", role="librarian")
    result = lib.add("semantic", "Company holiday is May 1", scope="global")
    assert not result.inbox
    assert result.memory.path == "semantic/facts/company-holiday-is-may-1.md"
    assert result.memory.status == "active"
    other = Vault.open(vault.root, agent="someone", team="x")
    assert [m.id for m in other.memories()] == [result.memory.id]


# --- pause / config -------------------------------------------------------------------------------


def test_a_pause_by_another_process_holds_for_an_open_vault(vault: Vault) -> None:
    """A long-lived writer (an agent's API object) sees a pause and a resume made elsewhere
    without reopening: the write reads the changed config first."""
    held = Vault.open(vault.root, agent="bot")
    held.add("semantic", "written before the pause")
    Vault.open(vault.root).pause(agent="bot", why="too chatty")
    with pytest.raises(PermissionDeniedError):
        held.add("semantic", "written while paused")
    Vault.open(vault.root).resume(agent="bot")
    assert held.add("semantic", "written after the resume").memory


def test_pause_refuses_writes_for_that_scope(vault: Vault) -> None:
    vault.set_config("paused", ["team"], "pause capture for scope team")
    assert last_message(vault.root) == "memvault: pause capture for scope team"
    reopened = Vault.open(vault.root)
    before = commit_count(vault.root)
    with pytest.raises(PermissionDeniedError):
        reopened.add("semantic", "should not be written")
    with pytest.raises(PermissionDeniedError):
        reopened.log("s", "user", "nor this")
    assert commit_count(vault.root) == before
    agent = Vault.open(vault.root, agent="a")
    assert agent.add("semantic", "self scope still open", scope="self").memory
    reopened.set_config("paused", [], "resume")
    assert Vault.open(vault.root).add("semantic", "writes again").memory


def test_set_config_keeps_comments(vault: Vault) -> None:
    path = vault.root / ".memvault/config.yaml"
    before = path.read_text()
    vault.set_config("paused", ["self"], "pause")
    after = path.read_text()
    removed = [line for line in before.splitlines() if line not in after.splitlines()]
    added = [line for line in after.splitlines() if line not in before.splitlines()]
    assert removed == ["paused: []"]
    assert (
        added == ["paused: [self]"]
        or added == ["paused:", "- self"]
        or added == ["paused:", "  - self"]
    )


# --- the catalog is a disposable cache ------------------------------------------------------------


def test_catalog_can_be_deleted_and_sees_hand_edits(vault: Vault) -> None:
    m = vault.add("semantic", "Cached fact").memory
    index = vault.root / ".memvault" / "index"
    import shutil

    shutil.rmtree(index)
    assert [x.id for x in Vault.open(vault.root).all_memories()] == [m.id]
    path = vault.root / m.path
    path.write_text(path.read_text().replace("Cached fact", "Edited by hand, longer"))
    assert Vault.open(vault.root).get(m.id).content == "Edited by hand, longer\n"
    write(vault.root, "semantic/facts/new-by-hand.md", fact_text("new-by-hand"))
    assert Vault.open(vault.root).get("new-by-hand").content == "Some fact.\n"
    os.unlink(path)
    with pytest.raises(NotFoundError):
        Vault.open(vault.root).get(m.id)


def test_duplicate_ids_in_files_are_reported_on_get(vault: Vault) -> None:
    write(vault.root, "semantic/facts/a.md", fact_text("same"))
    write(vault.root, "semantic/facts/b.md", fact_text("same"))
    with pytest.raises(DuplicateIdError) as info:
        vault.get("same")
    assert "semantic/facts/a.md" in str(info.value) and "semantic/facts/b.md" in str(info.value)
    with pytest.raises(DuplicateIdError):
        vault.add("semantic", "x", id="same")


def test_files_on_disk_are_the_truth(vault: Vault) -> None:
    m = vault.add("procedural", "Run the tests", title="Test run", steps=["pytest"]).memory
    text = (vault.root / m.path).read_text()
    assert text.startswith("---\nid: test-run\ntype: procedural\n")
    assert tree_files(vault.root) >= {m.path, ".memvault/config.yaml", "README.md", ".gitignore"}


@pytest.mark.parametrize(
    ("key", "value", "valid"),
    [
        ("status", "all", "active|superseded|archived|proposed|disputed|any"),
        ("type", "facts", "episodic|semantic|procedural"),
        ("scope", "public", "self|team|global"),
    ],
)
def test_a_filter_value_no_memory_can_have_is_an_error(
    vault: Vault, key: str, value: str, valid: str
) -> None:
    from memvault.scopes import Filters

    vault.add("semantic", "Something to list")
    with pytest.raises(ValidationError, match=re.escape(f"expected {valid}, got {value!r}")):
        vault.memories(Filters(**{key: value}))


def test_procedure_used_updates_the_file_in_one_commit(vault: Vault) -> None:
    proc = vault.add("procedural", "Roll back", steps=["Revert the tag", "Redeploy"]).memory
    before = commit_count(vault.root)
    vault.procedure_used(proc.id, "success")
    vault.procedure_used(proc.id, "failure", note="the tag was gone")
    third = vault.procedure_used(proc.id, "success").memory
    assert third.meta["times_used"] == 3 and third.meta["success_rate"] == 0.667
    assert third.meta["last_used"]
    assert commit_count(vault.root) == before + 3 and is_clean(vault.root)
    assert "failure: the tag was gone" in git(vault.root, "log", "-2", "--format=%s")
    text = (vault.root / proc.path).read_text(encoding="utf-8")
    assert "times_used: 3" in text and "success_rate: 0.667" in text
    assert vault.get(proc.id).content == proc.content  # the body is untouched


def test_procedure_used_refuses_other_kinds_and_outcomes(vault: Vault) -> None:
    fact = vault.add("semantic", "The staging database is db-stg-2").memory
    proc = vault.add("procedural", "Roll back", steps=["Revert"]).memory
    before = commit_count(vault.root)
    with pytest.raises(ValidationError, match="not a procedure"):
        vault.procedure_used(fact.id, "success")
    with pytest.raises(ValidationError, match="success|failure"):
        vault.procedure_used(proc.id, "worked")
    with pytest.raises(NotFoundError):
        vault.procedure_used("no-such-procedure", "success")
    assert commit_count(vault.root) == before


def test_a_hand_written_count_without_a_rate_starts_the_rate_now(vault: Vault) -> None:
    proc = vault.add("procedural", "Roll back", steps=["Revert"]).memory
    vault.update(proc.id, {"times_used": 7}, "counted by hand")
    used = vault.procedure_used(proc.id, "failure").memory
    assert used.meta["times_used"] == 8 and used.meta["success_rate"] == 0.0
