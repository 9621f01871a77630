"""``memvault integrations install claude-code|cursor``: the files it writes, merging into
a user's own files without losing anything, idempotence, ``--dry-run``, bad input.

Every test runs in temp folders: a project folder (the current folder) and a home folder
(``$HOME``), with a real vault.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memvault import Vault
from memvault.integrations.entries import (
    INGEST_HOOK,
    PROMPT_HOOK,
    SESSION_START,
    claude_settings,
    mcp_entry,
    run_as,
    slash_command,
)
from memvault.integrations.install import installed_command

from helpers import Result

# What an install writes as the command: this test run's own memvault, by its absolute path.
CMD = installed_command([])

ROOT = Path(__file__).resolve().parents[1]
INTEGRATIONS = ROOT / "integrations"

Cli = Callable[..., Result]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def memory(home: Path) -> Vault:
    return Vault.init(home / "memory")


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def snapshot(*folders: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``folders`` (the vault aside): its bytes and modification time."""
    out = {}
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "memory" not in path.relative_to(folder).parts[:1]:
                out[str(path)] = (path.read_bytes(), path.stat().st_mtime_ns)
    return out


def install(cli: Cli, *args: str) -> Result:
    res = cli("--vault", "~/memory", "integrations", "install", *args)
    assert res.code == 0, res.err
    return res


# --- what it writes ---------------------------------------------------------------------


def test_claude_code_project_install_writes_the_three_files(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    res = install(cli, "claude-code")
    assert res.out.split("\n")[:3] == [
        f"created\t{project / '.mcp.json'}",
        f"created\t{project / '.claude' / 'settings.json'}",
        f"created\t{project / '.claude' / 'commands' / 'memvault.md'}",
    ]
    server = read_json(project / ".mcp.json")["mcpServers"]["memvault"]
    assert server["args"] == [
        "--vault", "${MEMVAULT_VAULT:-~/memory}", "--agent", "${MEMVAULT_AGENT:-claude-code}", "mcp"
    ]  # fmt: skip
    settings = read_json(project / ".claude" / "settings.json")
    assert settings["env"] == {"MEMVAULT_VAULT": "~/memory", "MEMVAULT_AGENT": "claude-code"}
    assert "mcp__memvault__recall" in settings["permissions"]["allow"]
    assert not {"mcp__memvault", "mcp__memvault__forget", "Bash(memvault:*)"} & set(
        settings["permissions"]["allow"]
    )
    assert "mcp__memvault__forget" in settings["permissions"]["ask"]
    hooks = {
        e: [h["command"] for g in gs for h in g["hooks"]] for e, gs in settings["hooks"].items()
    }
    assert hooks == {
        "SessionStart": [run_as(SESSION_START, CMD)],
        "UserPromptSubmit": [run_as(PROMPT_HOOK, CMD)],
        "PreCompact": [run_as(INGEST_HOOK, CMD)],
        "SessionEnd": [run_as(INGEST_HOOK, CMD)],
        "Stop": [run_as(INGEST_HOOK, CMD)],
    }
    assert settings["hooks"]["Stop"][0]["hooks"][0]["async"] is True  # never holds a reply
    command = project / ".claude" / "commands" / "memvault.md"
    assert command.read_text(encoding="utf-8") == slash_command()
    assert not (home / ".claude.json").exists()  # project scope touches no user file


def test_identity_flags_go_into_the_server_entry(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    res = cli(
        "--vault", "~/memory", "--agent", "ci-bot", "--team", "web",
        "integrations", "install", "cursor",
    )  # fmt: skip
    assert res.code == 0, res.err
    server = read_json(project / ".cursor" / "mcp.json")["mcpServers"]["memvault"]
    assert server == {
        "command": CMD,
        "args": ["--vault", "~/memory", "--agent", "ci-bot", "--team", "web", "mcp"],
    }


def test_user_scope_keeps_the_rest_of_claude_json_and_its_permissions(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    state = home / ".claude.json"
    state.write_text(
        json.dumps({"numStartups": 42, "projects": {"/x": {"allowedTools": []}}}, indent=2),
        encoding="utf-8",
    )
    state.chmod(0o600)
    install(cli, "claude-code", "--user")
    data = read_json(state)
    assert data["numStartups"] == 42 and data["projects"] == {"/x": {"allowedTools": []}}
    assert data["mcpServers"]["memvault"]["command"] == CMD
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    assert (home / ".claude" / "settings.json").exists()
    assert (home / ".claude" / "commands" / "memvault.md").exists()
    assert not (project / ".mcp.json").exists() and not (project / ".claude").exists()
    install(cli, "cursor", "--user")
    assert read_json(home / ".cursor" / "mcp.json")["mcpServers"]["memvault"]["args"][1] == (
        "~/memory"
    )


# --- idempotence and the user's own entries -----------------------------------------------

OLD_SESSION_START = (
    'memvault -q context "$(basename "$CLAUDE_PROJECT_DIR")" --budget 1500 2>/dev/null || true'
)
OLD_INGEST = "memvault -q ingest --hook >/dev/null || true"


def users_files(project: Path) -> None:
    """A project whose files hold the user's own servers, hooks and rules, and the entries
    an older memvault shipped (broad permissions, hooks without --format claude)."""
    (project / ".mcp.json").write_text(
        '{"mcpServers": {"github": {"command": "gh-mcp", "args": []},'
        ' "memvault": {"command": "memvault", "args": ["mcp"]}}, "x-note": "mine"}\n',
        encoding="utf-8",
    )
    settings = {
        "model": "opus",
        "env": {"MEMVAULT_VAULT": "~/work-memory", "EDITOR": "vim"},
        "permissions": {"allow": ["Bash(npm test:*)", "mcp__memvault"], "deny": ["Read(.env)"]},
        "hooks": {
            "SessionStart": [
                {
                    "matcher": "startup",
                    "hooks": [
                        {"type": "command", "command": "echo hello"},
                        {"type": "command", "command": OLD_SESSION_START, "timeout": 30},
                    ],
                }
            ],
            "PreCompact": [{"hooks": [{"type": "command", "command": OLD_INGEST}]}],
            "SessionEnd": [
                {"hooks": [{"type": "command", "command": OLD_INGEST}]},
                {"hooks": [{"type": "command", "command": "./save-notes.sh"}]},
                {"hooks": [{"type": "command", "command": OLD_INGEST}]},
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
        },
    }
    (project / ".claude" / "commands").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(
        json.dumps(settings, indent=2) + "\n", encoding="utf-8"
    )
    (project / ".claude" / "commands" / "deploy.md").write_text("Deploy it.\n", encoding="utf-8")


def test_install_merges_into_the_users_files_and_keeps_their_entries(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    users_files(project)
    res = install(cli, "claude-code")
    servers = read_json(project / ".mcp.json")
    assert servers["mcpServers"]["github"] == {"command": "gh-mcp", "args": []}
    assert servers["x-note"] == "mine"
    assert servers["mcpServers"]["memvault"]["args"][-1] == "mcp"
    assert "--vault" in servers["mcpServers"]["memvault"]["args"]  # brought up to date
    s = read_json(project / ".claude" / "settings.json")
    assert s["model"] == "opus" and s["permissions"]["deny"] == ["Read(.env)"]
    assert s["env"]["EDITOR"] == "vim"
    assert s["env"]["MEMVAULT_VAULT"] == "~/work-memory"  # the user's value is kept...
    assert "env.MEMVAULT_VAULT is '~/work-memory'; kept it" in res.err  # ...and said so
    assert s["env"]["MEMVAULT_AGENT"] == "claude-code"
    allow = s["permissions"]["allow"]
    assert allow[:2] == ["Bash(npm test:*)", "mcp__memvault"] and "mcp__memvault__show" in allow
    assert "approves every memvault tool" in res.err
    assert s["hooks"]["SessionStart"] == [
        {
            "matcher": "startup",
            "hooks": [
                {"type": "command", "command": "echo hello"},
                {"type": "command", "command": run_as(SESSION_START, CMD), "timeout": 30},
            ],
        }
    ]  # replaced where it stood, next to the user's hook
    assert [[h["command"] for h in g["hooks"]] for g in s["hooks"]["SessionEnd"]] == [
        [run_as(INGEST_HOOK, CMD)],
        ["./save-notes.sh"],
    ]  # the duplicate is gone, the user's hook stays
    assert s["hooks"]["PreCompact"] == [
        {"hooks": [{"type": "command", "command": run_as(INGEST_HOOK, CMD), "timeout": 60}]}
    ]
    assert s["hooks"]["Stop"] == [
        {"hooks": [{"type": "command", "command": "say done"}]},
        {"hooks": [{"type": "command", "command": run_as(INGEST_HOOK, CMD), "timeout": 60, "async": True}]},
    ]  # fmt: skip
    assert (project / ".claude" / "commands" / "deploy.md").read_text() == "Deploy it.\n"


def test_installing_twice_changes_nothing_the_second_time(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    users_files(project)
    install(cli, "claude-code")
    install(cli, "cursor")
    install(cli, "claude-code", "--user")
    before = snapshot(project, home)
    for args in (("claude-code",), ("cursor",), ("claude-code", "--user")):
        res = install(cli, *args)
        assert [line.split("\t")[0] for line in res.out.splitlines()] == ["unchanged"] * (
            1 if args[0] == "cursor" else 3
        )
    assert snapshot(project, home) == before


def test_a_file_with_nothing_to_add_is_not_rewritten(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    install(cli, "cursor")
    mcp = project / ".cursor" / "mcp.json"
    compact = json.dumps(read_json(mcp), separators=(",", ":"))  # the user's own formatting
    mcp.write_text(compact, encoding="utf-8")
    assert install(cli, "cursor").out.startswith("unchanged")
    assert mcp.read_text(encoding="utf-8") == compact


# --- --dry-run ---------------------------------------------------------------------------


def test_dry_run_shows_the_diff_and_writes_nothing(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    users_files(project)
    before = snapshot(project, home)
    res = install(cli, "claude-code", "--dry-run")
    assert snapshot(project, home) == before
    out = res.out
    assert "--- a/.mcp.json\n+++ b/.mcp.json\n" in out
    assert "--- a/.claude/settings.json\n+++ b/.claude/settings.json\n" in out
    assert "--- /dev/null\n+++ b/.claude/commands/memvault.md\n" in out
    assert '-            "command": "memvault -q ingest --hook >/dev/null || true"' in out
    assert f'+            "command": {json.dumps(run_as(INGEST_HOOK, CMD))}' in out
    assert f"would be updated\t{project / '.mcp.json'}" in res.err
    # and on an empty project, nothing is created
    empty = project / "empty"
    empty.mkdir()
    res = cli(
        "--vault", "~/memory", "integrations", "install", "cursor", "--dir", empty, "--dry-run"
    )  # fmt: skip
    assert res.code == 0 and "+++ b/.cursor/mcp.json" in res.out
    assert list(empty.iterdir()) == []


def test_json_report(cli: Cli, memory: Vault, project: Path, home: Path) -> None:
    res = install(cli, "cursor", "--json", "--dry-run")
    data = json.loads(res.out)
    assert data["client"] == "cursor" and data["scope"] == "project" and data["dry_run"]
    assert data["vault"] == "~/memory"
    [file] = data["files"]
    assert file["action"] == "create" and file["diff"].startswith("--- /dev/null")


# --- bad input ---------------------------------------------------------------------------


def test_a_file_that_is_not_json_stops_the_install_before_anything_is_written(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    (project / ".claude").mkdir()
    settings = project / ".claude" / "settings.json"
    settings.write_text('{"env": {"A": 1},}\n', encoding="utf-8")
    res = cli("--vault", "~/memory", "integrations", "install", "claude-code")
    assert res.code == 1
    assert res.err.count("\n") == 1
    assert res.err.startswith(f"Error: {settings}: invalid JSON: ")
    assert "line 1, column 18" in res.err
    assert not (project / ".mcp.json").exists()  # planned first, so nothing was written
    assert settings.read_text(encoding="utf-8") == '{"env": {"A": 1},}\n'


def test_a_key_of_the_wrong_type_is_named(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text('{"hooks": []}', encoding="utf-8")
    res = cli("--vault", "~/memory", "integrations", "install", "claude-code")
    assert res.code == 1 and ": hooks: expected an object, got list" in res.err
    (project / ".mcp.json").write_text('{"mcpServers": ["x"]}', encoding="utf-8")
    res = cli("--vault", "~/memory", "integrations", "install", "cursor", "--user")
    assert res.code == 0  # cursor --user reads neither file
    res = cli("--vault", "~/memory", "integrations", "install", "claude-code")
    assert res.code == 1 and "mcpServers: expected an object, got list" in res.err


def test_usage_errors(cli: Cli, memory: Vault, project: Path, home: Path) -> None:
    res = cli("--vault", "~/memory", "integrations", "install", "vscode")
    assert res.code == 2 and "claude-code" in res.err and "cursor" in res.err
    res = cli("--vault", "~/memory", "integrations", "install", "cursor", "--project", "--user")
    assert res.code == 1 and "choose one of --project and --user" in res.err
    res = cli("--vault", project / "nowhere", "integrations", "install", "cursor")
    assert res.code == 1 and "not a memvault vault" in res.err
    assert not (project / ".cursor").exists()


def test_an_older_memory_command_is_pointed_out(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    old = project / ".claude" / "commands" / "memory.md"
    old.parent.mkdir(parents=True)
    old.write_text("Run the matching `memvault` command.\n", encoding="utf-8")
    res = install(cli, "claude-code")
    assert f"note: {old}: an older memvault's /memory command" in res.err
    assert old.exists()  # pointed out, never deleted


# --- the shipped files ---------------------------------------------------------------------


def test_the_files_in_integrations_are_what_install_writes_for_a_vault_at_home() -> None:
    """integrations/ holds the installer's output for ~/memory, for copying by hand."""
    claude = INTEGRATIONS / "claude-code"
    assert read_json(claude / ".mcp.json") == {
        "mcpServers": {"memvault": mcp_entry("claude-code", "~/memory", "claude-code")}
    }
    assert read_json(claude / "settings.json") == claude_settings("~/memory", "claude-code")
    assert (claude / "commands" / "memvault.md").read_text(encoding="utf-8") == slash_command()
    assert not (claude / "commands" / "memory.md").exists()
    assert read_json(INTEGRATIONS / "cursor" / "mcp.json") == {
        "mcpServers": {"memvault": mcp_entry("cursor", "~/memory", "cursor")}
    }


def test_the_installed_server_entry_is_a_real_command_on_the_vault(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    """The .mcp.json entry, expanded as Claude Code expands it, is `memvault mcp` on the
    vault (test_integrations.py starts the same entry, shipped in integrations/)."""
    from test_integrations import check_invocation, expand

    install(cli, "claude-code")
    entry = read_json(project / ".mcp.json")["mcpServers"]["memvault"]
    args = [expand(a, {"HOME": str(home)}) for a in entry["args"]]
    assert check_invocation(args) == "mcp"
    assert args[:4] == ["--vault", "~/memory", "--agent", "claude-code"]
    assert os.path.expanduser(args[1]) == str(memory.root)


def test_the_command_is_absolute_by_default_and_chosen_with_command(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    """A client started from a desktop launcher has no venv on its PATH: a bare `memvault`
    fails there (silently, in a hook), so the files name this memvault's absolute path."""
    assert Path(CMD).is_absolute() and Path(CMD).name == "memvault"
    res = install(cli, "claude-code")
    assert "this machine's memvault" in res.err  # a project's files are shared: said so
    assert read_json(project / ".mcp.json")["mcpServers"]["memvault"]["command"] == CMD
    install(cli, "claude-code", "--command", "memvault")  # by name, for a team
    assert read_json(project / ".mcp.json")["mcpServers"]["memvault"]["command"] == "memvault"
    settings = read_json(project / ".claude" / "settings.json")
    hooks = [h["command"] for g in settings["hooks"]["SessionEnd"] for h in g["hooks"]]
    assert hooks == [INGEST_HOOK]  # the absolute hook was replaced, not kept beside


def test_a_command_path_with_spaces_is_quoted_and_still_recognised_as_ours() -> None:
    from memvault.integrations.merge import own_hook

    hook = run_as(INGEST_HOOK, "/opt/my tools/memvault")
    assert hook.startswith("'/opt/my tools/memvault' -q ingest --hook")
    assert own_hook({"command": hook}) and own_hook({"command": INGEST_HOOK})
    assert not own_hook({"command": "/opt/other/notmemvault -q ingest --hook"})
