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
    agents_section,
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
        {"hooks": [{"type": "command", "command": run_as(INGEST_HOOK, CMD), "timeout": 60,
                    "async": True}]},
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
    from memvault.integrations.entries import codex_server
    from memvault.integrations.text import render_table

    codex = INTEGRATIONS / "codex"
    assert (codex / "config.toml").read_text(encoding="utf-8") == render_table(
        codex_server("~/memory", "codex")
    )
    assert (codex / "AGENTS.md").read_text(encoding="utf-8") == agents_section()


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


# --- uninstall: install, again, uninstall are byte-exact round trips ---------------------

USERS_CODEX = """\
# my Codex settings
model = "o3"  # the fast one

[mcp_servers.github]
command = "gh-mcp"
args = ["serve"]

# work profile
[profiles.work]
model = "gpt-5"
"""
USERS_AGENTS = "# House rules\n\nRun `make test` before committing.\n"


def users_clean_files(project: Path, home: Path) -> None:
    """Files holding only the user's own entries, in the clients' own format."""
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"github": {"command": "gh-mcp", "args": []}}}, indent=2) + "\n",
        encoding="utf-8",
    )
    settings = {
        "model": "opus",
        "env": {"EDITOR": "vim"},
        "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(.env)"]},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]},
    }
    for base in (project, home):
        (base / ".claude" / "commands").mkdir(parents=True)
        (base / ".claude" / "settings.json").write_text(
            json.dumps(settings, indent=2) + "\n", encoding="utf-8"
        )
        (base / ".claude" / "commands" / "deploy.md").write_text("Deploy it.\n", encoding="utf-8")
        (base / ".cursor").mkdir()
        (base / ".cursor" / "mcp.json").write_text(
            '{\n  "mcpServers": {\n    "db": {\n      "command": "db-mcp"\n    }\n  }\n}\n',
            encoding="utf-8",
        )
        (base / ".codex").mkdir()
        (base / ".codex" / "config.toml").write_text(USERS_CODEX, encoding="utf-8")
    (home / ".claude.json").write_text(
        json.dumps({"numStartups": 3, "projects": {}}, indent=2) + "\n", encoding="utf-8"
    )
    (project / "AGENTS.md").write_text(USERS_AGENTS, encoding="utf-8")
    (home / ".codex" / "AGENTS.md").write_text(USERS_AGENTS, encoding="utf-8")


def contents(*folders: Path) -> dict[str, bytes]:
    return {k: v[0] for k, v in snapshot(*folders).items()}


@pytest.mark.parametrize("client", ["claude-code", "cursor", "codex"])
@pytest.mark.parametrize("scope", ["project", "user"])
def test_install_again_and_uninstall_are_byte_exact_round_trips(
    cli: Cli, memory: Vault, project: Path, home: Path, client: str, scope: str
) -> None:
    users_clean_files(project, home)
    flags = ("--team", "web", "--role", "dev")
    original = contents(project, home)
    args = (client, "--user") if scope == "user" else (client,)
    res = cli("--vault", "~/memory", *flags, "integrations", "install", *args)
    assert res.code == 0, res.err
    installed = contents(project, home)
    assert installed != original
    for path, text in original.items():  # the user's own entries are all still there
        if path in installed and path.endswith(".json"):
            mine = json.loads(text)
            assert all(k in json.loads(installed[path]) for k in mine), path
    res = cli("--vault", "~/memory", *flags, "integrations", "install", *args)
    assert res.code == 0 and all(line.startswith("unchanged") for line in res.out.splitlines())
    assert contents(project, home) == installed  # a second install changes no byte
    res = cli("--vault", "~/memory", *flags, "integrations", "uninstall", *args)
    assert res.code == 0, res.err
    assert contents(project, home) == original  # byte for byte what the user had
    res = cli("--vault", "~/memory", *flags, "integrations", "uninstall", *args)
    assert res.code == 0 and contents(project, home) == original  # again: nothing to do


def test_uninstall_from_nothing_deletes_what_install_created(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    for client in ("claude-code", "cursor", "codex"):
        install(cli, client)
        install(cli, client, "--user")
    assert (project / "AGENTS.md").exists() and (home / ".codex" / "config.toml").exists()
    for client in ("claude-code", "cursor", "codex"):
        for extra in ((), ("--user",)):
            res = cli("--vault", "~/memory", "integrations", "uninstall", client, *extra)
            assert res.code == 0, res.err
    assert contents(project, home) == {}  # every file was memvault's, so every file went


def test_uninstall_keeps_what_the_user_set_and_dry_run_writes_nothing(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    users_files(project)  # MEMVAULT_VAULT set by the user to ~/work-memory: kept at install
    install(cli, "claude-code")
    before = contents(project, home)
    res = cli("--vault", "~/memory", "integrations", "uninstall", "claude-code", "--dry-run")
    assert res.code == 0 and contents(project, home) == before
    assert "+++ /dev/null" in res.out  # the slash command would go
    res = cli("--vault", "~/memory", "integrations", "uninstall", "claude-code")
    assert "env.MEMVAULT_VAULT is '~/work-memory', not memvault's; kept it" in res.err
    s = read_json(project / ".claude" / "settings.json")
    assert s["env"] == {"MEMVAULT_VAULT": "~/work-memory", "EDITOR": "vim"}
    assert s["permissions"] == {
        "allow": ["Bash(npm test:*)", "mcp__memvault"],
        "deny": ["Read(.env)"],
    }
    assert "memvault" not in json.dumps(s["hooks"]).replace("mcp__memvault", "")
    assert s["hooks"]["SessionStart"] == [
        {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}
    ]  # memvault's hook left the user's group; the group stays
    assert read_json(project / ".mcp.json") == {
        "mcpServers": {"github": {"command": "gh-mcp", "args": []}},
        "x-note": "mine",
    }


# --- Codex --------------------------------------------------------------------------------


def test_codex_install_adds_its_table_and_section_and_keeps_the_users_comments(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    import tomllib

    codex = home / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(USERS_CODEX, encoding="utf-8")
    res = cli(
        "--vault", "~/memory", "--team", "web", "integrations", "install", "codex", "--user"
    )  # fmt: skip
    assert res.code == 0, res.err
    text = (codex / "config.toml").read_text(encoding="utf-8")
    assert text.startswith(USERS_CODEX)  # the user's text, comments and all, untouched
    config = tomllib.loads(text)
    assert config["mcp_servers"]["github"] == {"command": "gh-mcp", "args": ["serve"]}
    assert config["mcp_servers"]["memvault"] == {
        "command": CMD,
        "args": ["mcp"],
        "env": {"MEMVAULT_VAULT": "~/memory", "MEMVAULT_AGENT": "codex", "MEMVAULT_TEAM": "web"},
    }
    section = (codex / "AGENTS.md").read_text(encoding="utf-8")
    assert section == agents_section()
    # a new version of the entry is brought up to date where it stands
    install(cli, "codex", "--user", "--command", "memvault")
    again = tomllib.loads((codex / "config.toml").read_text(encoding="utf-8"))
    assert again["mcp_servers"]["memvault"]["command"] == "memvault"
    assert (codex / "config.toml").read_text(encoding="utf-8").count("[mcp_servers.memvault]") == 1
    # project scope: .codex/config.toml and the AGENTS.md at the project's root
    res = install(cli, "codex")
    assert (project / ".codex" / "config.toml").exists() and (project / "AGENTS.md").exists()
    assert "only once you trust the project" in res.err


def test_codex_bad_toml_is_named_and_nothing_is_written(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    (project / ".codex").mkdir()
    bad = project / ".codex" / "config.toml"
    bad.write_text('model = "o3\n', encoding="utf-8")
    res = cli("--vault", "~/memory", "integrations", "install", "codex")
    assert res.code == 1 and res.err.startswith(f"Error: {bad}: invalid TOML: ")
    assert res.err.count("\n") == 1
    assert bad.read_text(encoding="utf-8") == 'model = "o3\n'
    assert not (project / "AGENTS.md").exists()
    bad.write_text('mcp_servers = "none"\n', encoding="utf-8")
    res = cli("--vault", "~/memory", "integrations", "install", "codex")
    assert res.code == 1 and "mcp_servers: expected a table, got" in res.err


# --- a user's own file is kept ------------------------------------------------------------


def test_a_users_own_slash_command_is_kept_as_bak_with_a_note_and_comes_back(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    mine = project / ".claude" / "commands" / "memvault.md"
    mine.parent.mkdir(parents=True)
    mine.write_text("My own /memvault: run my script.\n", encoding="utf-8")
    res = install(cli, "claude-code")
    bak = mine.with_name("memvault.md.bak")
    assert bak.read_text(encoding="utf-8") == "My own /memvault: run my script.\n"
    assert f"note: {mine}: held your own text; kept it as memvault.md.bak" in res.err
    assert mine.read_text(encoding="utf-8") == slash_command()
    assert "held your own text" not in install(cli, "claude-code").err  # ours now: no note
    res = cli("--vault", "~/memory", "integrations", "uninstall", "claude-code")
    assert res.code == 0, res.err
    assert mine.read_text(encoding="utf-8") == "My own /memvault: run my script.\n"
    assert not bak.exists()


def test_a_second_users_file_gets_its_own_backup(
    cli: Cli, memory: Vault, project: Path, home: Path
) -> None:
    mine = project / ".claude" / "commands" / "memvault.md"
    mine.parent.mkdir(parents=True)
    mine.with_name("memvault.md.bak").write_text("older\n", encoding="utf-8")
    mine.write_text("newer\n", encoding="utf-8")
    res = install(cli, "claude-code")
    assert "kept it as memvault.md.bak.1" in res.err
    assert mine.with_name("memvault.md.bak").read_text(encoding="utf-8") == "older\n"
    assert mine.with_name("memvault.md.bak.1").read_text(encoding="utf-8") == "newer\n"
