"""Shared config can't run code: a command named in the tracked config (``validate.judge_command``,
``consolidate.summarizer_command``) runs only after the user on that machine allowed it.

A teammate's commit sets both to a marker-writing command; a second clone gets it with a
real ``git pull`` and must not run it (the marker stays absent) through ``memvault
validate``, ``memvault consolidate`` and the MCP ``validate`` tool, until ``memvault
allow-command``; a changed command stops running until allowed again.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shlex
import sys
from pathlib import Path

import pytest
from test_mcp import call, connect, run

from memvault import ConfigError, Vault
from memvault.trust import command_hash, record_file

from helpers import git, is_clean, run_memvault

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)  # when the transcript below was said
NOW = "2026-03-01"  # idle long enough by then to be distilled
CLAIM = "The primary database is PostgreSQL."

MARKER_SCRIPT = """\
import json, pathlib, sys
pathlib.Path(sys.argv[1]).write_text("ran", encoding="utf-8")
sys.stdin.read()
if sys.argv[2] == "judge":
    print(json.dumps({"verdict": "unknown", "why": "the marker judge ran"}))
else:
    print("A summary written by the marker summarizer.")
"""


class Team:
    """A bare remote, Alice's clone (she commits the config) and Bob's (he pulls it)."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.remote = tmp_path / "remote.git"
        git(tmp_path, "init", "-q", "--bare", "-b", "main", str(self.remote))
        alice = Vault.init(tmp_path / "alice")
        self.alice = alice.root
        alice.add("semantic", "We use PostgreSQL as the primary database.", subject="db.primary")
        alice.log("s1", "user", "Let us move the nightly backups to the new bucket.", when=T0)
        git(self.alice, "remote", "add", "origin", str(self.remote))
        git(self.alice, "push", "-q", "-u", "origin", "main")
        git(tmp_path, "clone", "-q", str(self.remote), str(tmp_path / "bob"))
        self.bob = tmp_path / "bob"
        self.script = tmp_path / "tools" / "marker.py"  # outside both vaults
        self.script.parent.mkdir()
        self.script.write_text(MARKER_SCRIPT, encoding="utf-8")
        self.judge_marker = tmp_path / "judge-ran"
        self.summary_marker = tmp_path / "summarizer-ran"

    def command(self, marker: Path, role: str, *extra: str) -> str:
        return shlex.join([sys.executable, str(self.script), str(marker), role, *extra])

    def teammate_sets(self, *extra: str) -> None:
        """Alice edits the tracked config by hand, commits and pushes; Bob pulls."""
        config = self.alice / ".memvault" / "config.yaml"
        text = config.read_text(encoding="utf-8")
        judge = json.dumps(self.command(self.judge_marker, "judge", *extra))
        summarizer = json.dumps(self.command(self.summary_marker, "summary", *extra))
        text = re.sub(r"(?m)^  summarizer_command:.*$", f"  summarizer_command: {summarizer}", text)
        if "judge_command:" in text:
            text = re.sub(r"(?m)^  judge_command:.*$", f"  judge_command: {judge}", text)
        else:
            text += f"validate:\n  judge_command: {judge}\n"
        config.write_text(text, encoding="utf-8")
        git(
            self.alice,
            "-c",
            "user.name=Alice",
            "-c",
            "user.email=alice@example.com",
            "commit",
            "-q",
            "-am",
            "use our judge and summarizer",
        )
        git(self.alice, "push", "-q")
        git(self.bob, "pull", "-q", "--no-rebase")
        self.judge_marker.unlink(missing_ok=True)
        self.summary_marker.unlink(missing_ok=True)

    def bob_validates(self) -> tuple[dict[str, object], str]:
        r = run_memvault("validate", CLAIM, "--json", cwd=self.bob)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout), r.stderr

    def bob_consolidates(self) -> tuple[dict[str, object], str]:
        args = ("consolidate", "--dry-run", "--only", "distill", "--now", NOW, "--json")
        r = run_memvault(*args, cwd=self.bob)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout), r.stderr


@pytest.fixture
def team(tmp_path: Path) -> Team:
    made = Team(tmp_path)
    made.teammate_sets()
    return made


def test_pulled_judge_runs_only_once_allowed(team: Team) -> None:
    data, err = team.bob_validates()
    assert not team.judge_marker.exists()
    assert data["judge"] == {
        "command": team.command(team.judge_marker, "judge"),
        "status": "not allowed",
    }
    assert "memvault allow-command validate.judge_command" in str(data["note"])
    assert "the marker judge ran" not in str(data["why"])
    notes = [line for line in err.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: {data['note']}"]  # one line on stderr, naming the key

    r = run_memvault("allow-command", "validate.judge_command", cwd=team.bob)
    assert r.returncode == 0, r.stderr
    data, err = team.bob_validates()
    assert team.judge_marker.exists()
    assert data["judge"]["status"] == "used" and data["note"] is None  # type: ignore[index]
    assert "note:" not in err

    # Alice changes the command: Bob's permission was for the old one
    team.teammate_sets("--v2")
    data, err = team.bob_validates()
    assert not team.judge_marker.exists()
    assert "changed since you allowed it" in str(data["note"]) and "note: " in err


def test_pulled_summarizer_runs_only_once_allowed(team: Team) -> None:
    plan, err = team.bob_consolidates()
    assert not team.summary_marker.exists()
    assert any(a["step"] == "distill" for a in plan["actions"])  # type: ignore[index, union-attr]
    (note,) = plan["notes"]  # type: ignore[misc]
    assert "consolidate.summarizer_command" in note and "built-in summarizer" in note
    assert f"note: {note}" in err.splitlines()

    r = run_memvault("allow-command", "consolidate.summarizer_command", cwd=team.bob)
    assert r.returncode == 0, r.stderr
    plan, err = team.bob_consolidates()
    assert team.summary_marker.exists() and plan["notes"] == []

    team.teammate_sets("--v2")
    plan, err = team.bob_consolidates()
    assert not team.summary_marker.exists()
    assert "changed since you allowed it" in plan["notes"][0]  # type: ignore[index]


def test_mcp_validate_runs_a_pulled_judge_only_once_allowed(team: Team) -> None:
    claim = {"statement": CLAIM}

    async def ask() -> dict[str, object]:
        async with connect(team.bob) as session:
            answer: dict[str, object] = await call(session, "validate", claim)
            return answer

    answer: dict[str, object] = {}

    async def main() -> None:
        answer.update(await ask())

    run(main)
    assert not team.judge_marker.exists()
    assert "memvault allow-command validate.judge_command" in str(answer["note"])

    Vault.open(team.bob).allow_command("validate.judge_command")
    answer.clear()
    run(main)
    assert team.judge_marker.exists() and answer["note"] is None


def test_python_api_gate_and_a_changed_command(team: Team) -> None:
    bob = Vault.open(team.bob)
    assert bob.validate(CLAIM).judge == {
        "command": team.command(team.judge_marker, "judge"),
        "status": "not allowed",
    }
    assert not team.judge_marker.exists()
    allowed = bob.allow_command("validate.judge_command")
    assert allowed.state == "allowed" and allowed.sha256 == command_hash(
        "validate.judge_command", team.command(team.judge_marker, "judge")
    )
    assert bob.validate(CLAIM).judge["status"] == "used"  # type: ignore[index]
    assert team.judge_marker.exists()
    bob.revoke_command("validate.judge_command")
    team.judge_marker.unlink()
    assert bob.validate(CLAIM).note and not team.judge_marker.exists()


def test_allow_command_lists_records_outside_the_vault_and_revokes(team: Team) -> None:
    r = run_memvault("allow-command", cwd=team.bob)
    assert r.returncode == 0, r.stderr
    assert "validate.judge_command\tnot allowed: does not run" in r.stdout
    assert "consolidate.summarizer_command\tnot allowed: does not run" in r.stdout

    r = run_memvault("allow-command", "validate.judge_command", cwd=team.bob)
    assert r.returncode == 0 and "allowed validate.judge_command: " in r.stderr
    listed = json.loads(run_memvault("allow-command", "--json", cwd=team.bob).stdout)
    states = {c["key"]: c["state"] for c in listed["commands"]}
    assert states == {
        "validate.judge_command": "allowed",
        "consolidate.summarizer_command": "not allowed",
    }

    # the record is the user's, outside the vault: nothing to commit, and a rebuilt index
    # (which deletes .memvault/index/) keeps it
    assert is_clean(team.bob)
    saved = json.loads(record_file().read_text(encoding="utf-8"))
    assert set(saved["vaults"]) == {str(team.bob.resolve())}
    assert run_memvault("reindex", "--full", cwd=team.bob).returncode == 0
    assert Vault.open(team.bob).commands()[0].state == "allowed"

    r = run_memvault("allow-command", "validate.judge_command", "--revoke", cwd=team.bob)
    assert r.returncode == 0 and "not allowed here any more" in r.stderr
    team.bob_validates()
    assert not team.judge_marker.exists()


def test_unknown_or_unset_key_is_one_clear_line(tmp_path: Path) -> None:
    vault = Vault.init(tmp_path / "v")
    r = run_memvault("allow-command", "validate.judge", cwd=vault.root)
    assert r.returncode == 1 and r.stdout == ""
    (line,) = r.stderr.strip().splitlines()
    assert "unknown key 'validate.judge'" in line
    assert "validate.judge_command" in line and "consolidate.summarizer_command" in line
    r = run_memvault("allow-command", "consolidate.summarizer_command", cwd=vault.root)
    assert r.returncode == 1 and "not set: nothing to allow" in r.stderr
    with pytest.raises(ConfigError, match="unknown key"):
        vault.allow_command("judge_command")


def test_a_command_set_on_this_machine_runs_without_allowing(team: Team) -> None:
    own = team.command(team.judge_marker, "judge", "--mine")
    r = run_memvault("validate", CLAIM, "--json", cwd=team.bob, env={"MEMVAULT_JUDGE_COMMAND": own})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["judge"]["status"] == "used" and team.judge_marker.exists()
    team.judge_marker.unlink()
    opened = Vault.open(team.bob, overrides={"validate.judge_command": own})
    assert opened.commands()[0].state == "local"
    assert opened.validate(CLAIM).judge["status"] == "used"  # type: ignore[index]
    # set through the API on this machine: allowed here, and only here
    bob = Vault.open(team.bob)
    bob.set_config("validate.judge_command", own, "my own judge")
    assert bob.commands()[0].state == "allowed"


def test_a_command_running_a_script_in_the_vault_is_flagged(tmp_path: Path) -> None:
    vault = Vault.init(tmp_path / "v")
    (vault.root / "tools").mkdir()
    (vault.root / "tools" / "judge.py").write_text("print('{}')\n", encoding="utf-8")
    config = vault.root / ".memvault" / "config.yaml"
    with config.open("a", encoding="utf-8") as handle:
        handle.write("validate:\n  judge_command: python3 tools/judge.py --strict\n")
    r = run_memvault("allow-command", "validate.judge_command", cwd=vault.root)
    assert r.returncode == 0, r.stderr
    assert "warning: validate.judge_command runs tools/judge.py from the vault" in r.stderr
    assert Vault.open(vault.root).commands()[0].vault_files == ("tools/judge.py",)
