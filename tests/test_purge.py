"""forget --purge erases a memory from files, history, index and access log; pause/resume."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from memvault import PermissionDeniedError, SecretDetectedError, Vault
from memvault.purge import purge_memory

from helpers import git


def _history_text(root: Path) -> str:
    return git(root, "log", "--all", "-p", "--format=%H%n%B")


def test_purge_removes_every_trace_from_history(vault: Vault, tmp_path: Path) -> None:
    root = vault.root
    secret = vault.add("semantic", "The vault door code is 4417 zebra", title="Door code").memory
    keep = vault.add("semantic", "Lunch is served at noon on Fridays").memory
    vault.update(secret.id, {"importance": 5}, "make it important")
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "-q", "origin", "HEAD:main")
    with open(root / ".memvault" / "access.log", "a", encoding="utf-8") as handle:
        handle.write(
            json.dumps({"ts": "2026-01-01T00:00:00Z", "kind": "query", "ids": [secret.id]}) + "\n"
        )
        handle.write(
            json.dumps({"ts": "2026-01-01T00:00:00Z", "kind": "query", "ids": [keep.id]}) + "\n"
        )
    # reads a consolidation folded are kept for `stats`: they must go too
    shutil.copy(root / ".memvault" / "access.log", root / ".memvault" / "access.log.history")
    assert "zebra" in _history_text(root)

    report = purge_memory(vault.core, secret.id, "sensitive")

    assert report.remotes == ["origin"]
    history = _history_text(root)
    assert "zebra" not in history and "Door code" not in history and secret.id not in history
    assert not (root / secret.path).exists()
    assert "Lunch is served" in (root / keep.path).read_text()
    for name in ("access.log", "access.log.history"):
        log = (root / ".memvault" / name).read_text()
        assert secret.id not in log and keep.id in log
    assert not (root / ".memvault" / "index").exists()
    # the remote kept the old history, as the report says
    assert "zebra" in git(remote, "log", "--all", "-p")
    assert git(root, "remote").split() == ["origin"]
    ok = subprocess.run(["git", "fsck", "--no-progress"], cwd=root, capture_output=True)
    assert ok.returncode == 0


def test_purge_refuses_a_dirty_vault(vault: Vault) -> None:
    m = vault.add("semantic", "Something to purge later").memory
    (vault.root / "semantic" / "facts" / "loose.md").write_text(
        "---\nid: loose\ntype: semantic\n---\nx\n"
    )
    with pytest.raises(Exception, match="uncommitted"):
        purge_memory(vault.core, m.id, "x")
    assert (vault.root / m.path).exists()


def test_cli_purge_asks_for_confirmation(vault: Vault, cli, chdir) -> None:  # type: ignore[no-untyped-def]
    chdir(vault.root)
    m = vault.add("semantic", "Forget me completely please").memory
    res = cli("forget", m.id, "--reason", "test", "--purge", stdin="n\n")
    assert res.code != 0 and (vault.root / m.path).exists()
    res = cli("forget", m.id, "--reason", "test", "--purge", "--yes")
    assert res.code == 0 and not (vault.root / m.path).exists()
    assert "completely" not in _history_text(vault.root)


def test_pause_refuses_writes_to_that_scope_until_resume(vault: Vault, cli, chdir) -> None:  # type: ignore[no-untyped-def]
    chdir(vault.root)
    assert cli("pause", "--scope", "team").code == 0
    res = cli("add", "fact", "Paused scopes refuse writes")
    assert res.code == 1 and "paused" in res.err
    assert len(res.err.strip().splitlines()) == 1
    with pytest.raises(PermissionDeniedError):
        Vault.open(vault.root).add("semantic", "via the API too")
    assert cli("--agent", "x", "add", "fact", "Self scope still works", "--scope", "self").code == 0
    assert cli("resume", "--scope", "team").code == 0
    assert cli("add", "fact", "Writes work again").code == 0


@pytest.mark.parametrize(
    "text",
    [
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
        "aws key AKIAABCDEFGHIJKLMNOP here",
        "token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB",
        "connect to postgres://admin:hunter2pass@db.example.com/prod",
        "use sk-ant-abcdefghijklmnopqrstuvwxyz123456",
    ],
)
def test_a_bare_credential_is_refused_where_a_whole_text_is_written(
    vault: Vault, text: str, tmp_path: Path
) -> None:
    """add (a memory that is little but the credential) and import refuse; a logged turn is
    kept with the span redacted (tests/test_redaction.py)."""
    head = git(vault.root, "rev-parse", "HEAD")
    with pytest.raises(SecretDetectedError):
        vault.add("semantic", text)
    record = {"id": "leak", "type": "semantic", "content": text}
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(record) + "\n")
    from memvault.transfer import import_file

    report = import_file(vault.core, src)
    assert report.added == 0 and report.problems
    assert git(vault.root, "rev-parse", "HEAD") == head


def test_allow_list_and_explicit_override(vault: Vault) -> None:
    vault.add("semantic", "example key AKIAIOSFODNN7EXAMPLE from the AWS docs", allow_secrets=True)
    vault.set_config("security.allow", ["AKIAIOSFODNN7EXAMPLE"], "allow the documented example key")
    Vault.open(vault.root).add("semantic", "the docs key AKIAIOSFODNN7EXAMPLE again")


def test_redaction_per_scope(vault: Vault) -> None:
    vault.set_config("security.redact", {"team": ["email", "phone"]}, "redact PII in team scope")
    v = Vault.open(vault.root)
    m = v.add("episodic", "Call Ana at +351 912 345 678 or mail ana@example.com").memory
    assert "[email]" in m.content and "[phone]" in m.content and "ana@example.com" not in m.content
