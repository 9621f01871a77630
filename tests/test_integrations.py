"""The files in ``integrations/`` work: they parse, and every command, option and MCP tool
they name exists. The MCP configs start a real server; the hook commands run for real.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from memvault import Vault
from memvault.transcripts import parse_turns

from helpers import BIN

ROOT = Path(__file__).resolve().parents[1]
INTEGRATIONS = ROOT / "integrations"
CLAUDE = INTEGRATIONS / "claude-code"
VERBS = ("recall", "fact", "procedure", "validate", "stats", "consolidate", "episodes", "debug")
REAL_SESSION = Path(__file__).parent / "data" / "claude-code-session.jsonl"


def click_app() -> Any:
    import typer

    from memvault.cli import app

    return typer.main.get_command(app)


def command_options(name: str) -> set[str]:
    cmd = click_app().commands[name]
    return {opt for param in cmd.params for opt in (*param.opts, *param.secondary_opts)}


ROOT_OPTIONS = {opt for p in click_app().params for opt in (*p.opts, *p.secondary_opts)}


def check_invocation(argv: list[str]) -> str:
    """``argv`` (after ``memvault``) names a real command with real options; returns the command."""
    group = click_app()
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        opt = argv[i].split("=", 1)[0]
        assert opt in ROOT_OPTIONS, f"unknown root option {opt} in {argv}"
        takes_value = not any(p.is_flag for p in group.params if opt in p.opts)
        i += 2 if takes_value and "=" not in argv[i] else 1
    assert i < len(argv), f"no command in {argv}"
    name = argv[i]
    assert name in group.commands, f"'memvault {name}' is not a command"
    options = command_options(name)
    for arg in argv[i + 1 :]:
        if arg.startswith("--"):
            assert arg.split("=", 1)[0] in options, f"'memvault {name}' has no option {arg}"
    return name


@pytest.fixture
def tools(vault: Vault) -> dict[str, Any]:
    """The MCP server's tools, from an in-process server (their names and input schemas)."""
    from memvault.mcp_server import build_server

    async def main() -> dict[str, Any]:
        return {t.name: t for t in await build_server(vault).list_tools()}

    return anyio.run(main)


# --- every JSON file parses -------------------------------------------------------------


def test_every_json_file_parses() -> None:
    files = sorted(INTEGRATIONS.rglob("*.json"))
    assert {f.relative_to(INTEGRATIONS).as_posix() for f in files} >= {
        "claude-code/.mcp.json",
        "claude-code/settings.json",
        "cursor/mcp.json",
    }
    for file in files:
        json.loads(file.read_text(encoding="utf-8"))


# --- MCP client configs -----------------------------------------------------------------


def expand(value: str, env: dict[str, str]) -> str:
    """Claude Code's ${VAR} / ${VAR:-default} and Cursor's ${env:VAR} / ${userHome}."""

    def sub(m: re.Match[str]) -> str:
        body = m.group(1)
        if body == "userHome":
            return env["HOME"]
        if body.startswith("env:"):
            return env.get(body[4:], "")
        name, _, default = body.partition(":-")
        return env.get(name) or default

    return re.sub(r"\$\{([^}]+)\}", sub, value)


@pytest.mark.parametrize("config", ["claude-code/.mcp.json", "cursor/mcp.json"])
def test_mcp_config_starts_a_real_server(config: str, tmp_path: Path) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    entry = json.loads((INTEGRATIONS / config).read_text(encoding="utf-8"))["mcpServers"][
        "memvault"
    ]
    assert entry["command"] == "memvault"
    assert entry["args"][-1] == "mcp"
    home = tmp_path / "home"
    Vault.init(home / "memory")
    env = {"HOME": str(home)}  # MEMVAULT_VAULT unset: the entry's own default, ~/memory
    args = [expand(a, env) for a in entry["args"]]
    check_invocation(args)
    server_env = {k: expand(v, env) for k, v in entry.get("env", {}).items()}
    for key in (
        "MEMVAULT_EMBEDDER",
        "MEMVAULT_CACHE_DIR",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_NOSYSTEM",
    ):
        server_env[key] = os.environ[key]
    server_env["HOME"] = str(home)
    command = str(BIN / "memvault")

    async def main() -> None:
        params = StdioServerParameters(command=command, args=args, env=server_env)
        with open(tmp_path / "stderr.log", "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                init = await session.initialize()
                assert init.server_info.name == "memvault"
                names = {t.name for t in (await session.list_tools()).tools}
                assert {"remember", "recall", "context"} <= names
                res = await session.call_tool(
                    "remember", {"kind": "fact", "content": "Configured via " + config}
                )
                assert not res.is_error, res.content

    anyio.run(main)
    assert any("Configured via" in m.content for m in Vault.open(home / "memory").all_memories())


# --- Claude Code hooks ------------------------------------------------------------------


def hook_commands() -> dict[str, list[str]]:
    settings = json.loads((CLAUDE / "settings.json").read_text(encoding="utf-8"))
    out: dict[str, list[str]] = {}
    for event, matchers in settings["hooks"].items():
        for matcher in matchers:
            for hook in matcher["hooks"]:
                assert hook["type"] == "command"
                out.setdefault(event, []).append(hook["command"])
    return out


def memvault_invocations(shell: str) -> list[list[str]]:
    """The ``memvault ...`` calls inside a shell command line (up to a pipe, ``||`` or redirect)."""
    found = []
    for part in re.split(r"\|\||&&|\||;", shell):
        words = shlex.split(part.replace("2>/dev/null", "").replace(">/dev/null", ""))
        if words and words[0] == "memvault":
            found.append(words[1:])
    return found


def test_hook_settings_name_real_commands() -> None:
    commands = hook_commands()
    assert set(commands) == {"SessionStart", "UserPromptSubmit", "PreCompact", "SessionEnd", "Stop"}
    used = {
        check_invocation(argv)
        for cmds in commands.values()
        for c in cmds
        for argv in memvault_invocations(c)
    }
    assert used == {"context", "ingest"}
    for cmds in commands.values():
        for c in cmds:
            assert c.rstrip().endswith("|| true"), f"hooks must fail open: {c}"


def _bash(command: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **env, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        ["bash", "-c", command],
        input=stdin,
        capture_output=True,
        text=True,
        env=full,
        timeout=120,
        check=False,
    )


def test_session_start_hook_injects_context(vault: Vault, tmp_path: Path) -> None:
    vault.add(
        "semantic",
        "The checkout service deploys with 'make ship'",
        subject="checkout.deploy",
        title="Checkout deploys",
    )
    project = tmp_path / "checkout"
    project.mkdir()
    [command] = hook_commands()["SessionStart"]
    env = {"MEMVAULT_VAULT": str(vault.root), "CLAUDE_PROJECT_DIR": str(project)}
    payload = {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(project)}
    proc = _bash(command, env, json.dumps(payload))  # what Claude Code sends on stdin
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart" and "make ship" in out["additionalContext"]
    bare = _bash(command, env)  # no JSON at all: still the project's context
    assert "make ship" in bare.stdout, bare.stderr


def test_prompt_hook_injects_context_for_the_prompt_only_when_relevant(
    vault: Vault, tmp_path: Path
) -> None:
    vault.add("semantic", "The checkout service deploys with 'make ship'", title="Checkout")
    [command] = hook_commands()["UserPromptSubmit"]
    env = {"MEMVAULT_VAULT": str(vault.root), "CLAUDE_PROJECT_DIR": str(tmp_path)}
    asked = {"hook_event_name": "UserPromptSubmit", "cwd": str(tmp_path)}
    proc = _bash(command, env, json.dumps({**asked, "prompt": "how does checkout deploy?"}))
    assert proc.returncode == 0, proc.stderr
    assert "make ship" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    vault.set_config("search.min_score", 0.5, "a floor")
    quiet = _bash(command, env, json.dumps({**asked, "prompt": "zzzqqq blorf wibble"}))
    assert quiet.returncode == 0 and quiet.stdout == "", quiet.stdout


def test_stop_session_end_and_pre_compact_hooks_ingest_the_transcript_once(
    vault: Vault, tmp_path: Path
) -> None:
    transcript = tmp_path / "5b1e7c3a.jsonl"
    shutil.copy(REAL_SESSION, transcript)
    hook_input = json.dumps(
        {
            "session_id": "5b1e7c3a-2f4d-4e8a-9c61-0d7f3b2a9e14",
            "transcript_path": str(transcript),
            "cwd": "/home/dev/shop",
            "hook_event_name": "SessionEnd",
            "reason": "exit",
        }
    )
    # the settings' env names the agent: captured sessions are its own (scope self)
    env = {"MEMVAULT_VAULT": str(vault.root), "MEMVAULT_AGENT": "claude-code"}
    for event in ("Stop", "PreCompact", "SessionEnd"):
        [command] = hook_commands()[event]
        assert "--format claude" in command
        proc = _bash(command, env, stdin=hook_input)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    memory = Vault.open(vault.root, agent="claude-code").get(
        "session-5b1e7c3a-2f4d-4e8a-9c61-0d7f3b2a9e14"
    )
    turns = parse_turns(memory.content)
    assert len(turns) == 9  # the conversation, once: the second hook added nothing
    assert turns[-1].text.startswith("Understood: nothing is committed or pushed")


def test_a_failed_ingest_hook_says_what_was_not_saved_in_one_line_and_exits_0(
    vault: Vault, tmp_path: Path
) -> None:
    generic = tmp_path / "generic.jsonl"
    generic.write_text('{"role": "user", "content": "hi"}\n', encoding="utf-8")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json\n{]\n", encoding="utf-8")
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    cases = [
        (tmp_path / "gone.jsonl", str(vault.root), "file not found"),
        (generic, str(vault.root), "not a Claude Code session"),
        (garbage, str(vault.root), "no turn could be read"),
        (binary, str(vault.root), "not UTF-8"),
        (REAL_SESSION, str(tmp_path / "no-vault"), "not a memvault vault"),
    ]
    [command] = hook_commands()["SessionEnd"]
    for path, where, why in cases:
        hook_input = json.dumps({"session_id": "s-1", "transcript_path": str(path)})
        env = {"MEMVAULT_VAULT": where, "MEMVAULT_AGENT": "claude-code"}
        proc = _bash(command, env, stdin=hook_input)
        assert proc.returncode == 0, (path, proc.stderr)
        lines = proc.stderr.splitlines()
        assert len(lines) == 1, (path, proc.stderr)
        assert lines[0].startswith(f"memvault: session s-1 ({path}) not saved: "), lines[0]
        assert why in lines[0], lines[0]
    # a session with one bad line: the rest is saved, the line is reported
    partial = tmp_path / "partial.jsonl"
    partial.write_text(REAL_SESSION.read_text(encoding="utf-8") + "{half a line\n", "utf-8")
    hook_input = json.dumps({"session_id": "s-2", "transcript_path": str(partial)})
    env = {"MEMVAULT_VAULT": str(vault.root), "MEMVAULT_AGENT": "claude-code"}
    proc = _bash(command, env, stdin=hook_input)
    agent = Vault.open(vault.root, agent="claude-code")
    assert proc.returncode == 0 and len(parse_turns(agent.get("session-s-2").content)) == 9
    assert proc.stderr == (
        f"memvault: 1 line(s) of {partial} not saved: skipped (first: {partial}:35:"
        " invalid JSON: Expecting property name enclosed in double quotes (column 2))\n"
    )
    proc = _bash(command, {"MEMVAULT_VAULT": str(vault.root)}, stdin="{}")
    assert proc.returncode == 0
    assert proc.stderr == (
        "memvault: session ? not saved: <stdin>: the hook's input names no transcript_path\n"
    )
    assert "session-s-1" not in {m.id for m in Vault.open(vault.root).all_memories()}


def test_hooks_fail_open_without_a_vault(tmp_path: Path) -> None:
    env = {"MEMVAULT_VAULT": str(tmp_path / "no-vault"), "CLAUDE_PROJECT_DIR": str(tmp_path)}
    for event, commands in hook_commands().items():
        for command in commands:
            proc = _bash(command, env, stdin="{}")
            assert proc.returncode == 0, (event, proc.stderr)


# --- permissions ---------------------------------------------------------------------------


def test_shipped_permissions_allow_read_only_tools_by_name_and_ask_for_the_rest(
    tools: dict[str, Any],
) -> None:
    settings = json.loads((CLAUDE / "settings.json").read_text(encoding="utf-8"))
    allow, ask = settings["permissions"]["allow"], settings["permissions"]["ask"]
    read_only = {n for n, t in tools.items() if t.annotations and t.annotations.read_only_hint}
    assert {r for r in allow if r.startswith("mcp__")} == {f"mcp__memvault__{n}" for n in read_only}
    for rule in ("mcp__memvault", "mcp__memvault__*", "Bash(memvault:*)", "Bash"):
        assert rule not in allow, rule
    for tool in ("forget", "consolidate", "ingest", "remember", "log_turn"):
        assert f"mcp__memvault__{tool}" not in allow, tool
    assert {"mcp__memvault__forget", "mcp__memvault__consolidate", "mcp__memvault__ingest"} <= set(
        ask
    )
    assert {"Bash(memvault forget:*)", "Bash(memvault ingest:*)", "Bash(memvault sync:*)"} <= set(
        ask
    )
    commands = [re.fullmatch(r"Bash\(memvault (.+):\*\)", r) for r in allow if r.startswith("Bash")]
    assert all(commands), allow
    for match in commands:
        assert match is not None
        argv = match.group(1).split()
        if argv[0] in click_app().commands:  # 'debug' arrives with debug mode
            check_invocation(argv)
        assert argv[0] not in ("forget", "ingest", "add", "edit", "import", "consolidate"), argv


# --- the /memvault slash command --------------------------------------------------------


def slash_command() -> tuple[dict[str, Any], str]:
    from ruamel.yaml import YAML

    text = (CLAUDE / "commands" / "memvault.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    head, body = text[4:].split("\n---\n", 1)
    return YAML(typ="safe").load(head), body


def test_slash_command_mentions_every_memory_verb() -> None:
    front, body = slash_command()
    assert front["description"] and "$ARGUMENTS" in body
    for verb in VERBS:
        assert f"/memvault {verb}" in body, verb
        assert verb in front["argument-hint"], verb
    assert "/memory" not in body  # Claude Code's built-in: a command of that name is hidden


def test_slash_command_may_run_only_read_only_commands_unasked() -> None:
    front, _ = slash_command()
    allowed = [rule.strip() for rule in front["allowed-tools"].split(",")]
    settings = json.loads((CLAUDE / "settings.json").read_text(encoding="utf-8"))
    assert set(allowed) <= set(settings["permissions"]["allow"])
    assert not any("consolidate" in rule for rule in allowed)  # asks, even as a dry run


def test_slash_command_runs_real_commands_and_options() -> None:
    _, body = slash_command()
    spans = re.findall(r"`(memvault [^`]+)`", body)
    used = set()
    for span in spans:
        argv = shlex.split(re.sub(r"<[^>]+>", "X", span.replace("...", "")))[1:]
        if argv[0] == "debug" and "debug" not in click_app().commands:
            continue  # debug mode's command, from another part of the code
        used.add(check_invocation(argv))
    assert {"recall", "fact", "procedure", "validate", "stats", "consolidate", "episodes"} <= used


# --- prompt snippet, server instructions, docs ------------------------------------------


def known_words(tools: dict[str, Any]) -> set[str]:
    """Tool names, their argument names and the values their enums allow."""
    known = set(tools)
    for tool in tools.values():
        for name, schema in tool.input_schema.get("properties", {}).items():
            known.add(name)
            known.update(str(v) for v in schema.get("enum", []))
            for option in schema.get("anyOf", []):
                known.update(str(v) for v in option.get("enum", []))
    return known


def test_protocol_snippet_names_only_real_tools_and_arguments(tools: dict[str, Any]) -> None:
    text = (INTEGRATIONS / "agent-memory-protocol.md").read_text(encoding="utf-8")
    known = known_words(tools)
    for span in re.findall(r"`([^`]+)`", text):
        head = re.split(r"[ :]", span)[0]
        if "." in head or head.startswith("memvault") or head.isupper() or "|" in span:
            continue  # example subjects (user.editor), CLI verbs, file names
        assert head in known, f"agent-memory-protocol.md names `{span}`, which no tool has"
    for tool in (
        "context",
        "recall",
        "procedure",
        "validate",
        "remember",
        "log_turn",
        "insights",
        "forget",
    ):
        assert f"`{tool}`" in text, tool


def test_server_instructions_name_real_tools(tools: dict[str, Any]) -> None:
    from memvault.mcp_server import INSTRUCTIONS

    known = known_words(tools)
    for name in re.findall(r"`([a-z_]+)`", INSTRUCTIONS):
        assert name in known, name


def test_docs_list_every_tool_and_integration(tools: dict[str, Any]) -> None:
    agents = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    for name in tools:
        assert f"`{name}`" in agents, f"docs/agents.md does not document the {name} tool"
    for file in (
        "claude-code/.mcp.json",
        "claude-code/settings.json",
        "claude-code/commands/memvault.md",
        "cursor/mcp.json",
        "agent-memory-protocol.md",
    ):
        assert f"integrations/{file}" in agents, file
    api = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    for name in (
        "Vault.open",
        "Vault.init",
        ".add(",
        ".log(",
        ".recall(",
        ".fact(",
        ".procedure(",
        ".validate(",
        ".context(",
        ".forget(",
        "consolidate(",
        ".ingest(",
        "insights(",
    ):
        assert name in api, name


def bash_rule_matches(rule: str, command: str) -> bool:
    """Claude Code's matching of a ``Bash(...)`` rule, as its permission docs describe it:
    ``Bash(prefix:*)`` matches commands starting with the prefix; otherwise ``*`` matches any
    text (a space before it keeps a word boundary) and the rest is literal."""
    inner = rule.removeprefix("Bash(").removesuffix(")")
    if inner.endswith(":*"):
        prefix = inner[:-2]
        return command == prefix or command.startswith(prefix + " ")
    pattern = "".join(".*" if part == "*" else re.escape(part) for part in re.split(r"(\*)", inner))
    pattern = pattern.replace(r"\ .*", r"(?:\ .*)?")  # `ls *` also matches `ls`
    return re.fullmatch(pattern, command) is not None


@pytest.mark.parametrize(
    "command",
    [
        "memvault forget note-1 --reason wrong",
        "memvault -q forget X --purge --yes",
        "memvault --vault ~/memory --agent me forget X",
        "/home/me/.venv/bin/memvault forget X --purge --yes",
        "/home/me/.venv/bin/memvault -q --vault ~/m forget X",
        "memvault -q ingest chat.jsonl",
        "memvault --vault ~/m consolidate",
        "memvault -q sync",
        "memvault import dump.jsonl",
        "memvault -q allow-command validate.judge_command",
    ],
)
def test_ask_rules_match_every_form_of_a_destructive_command(command: str) -> None:
    """``memvault -q forget X --purge --yes`` slipped past ``Bash(memvault forget:*)``."""
    settings = json.loads((CLAUDE / "settings.json").read_text(encoding="utf-8"))
    ask = [r for r in settings["permissions"]["ask"] if r.startswith("Bash(")]
    assert any(bash_rule_matches(rule, command) for rule in ask), command


def test_ask_rules_leave_read_only_commands_to_the_allow_rules() -> None:
    settings = json.loads((CLAUDE / "settings.json").read_text(encoding="utf-8"))
    ask = [r for r in settings["permissions"]["ask"] if r.startswith("Bash(")]
    allow = [r for r in settings["permissions"]["allow"] if r.startswith("Bash(")]
    for command in ("memvault recall 'deploy'", "memvault -q fact 'rate limit'", "memvault stats"):
        assert not any(bash_rule_matches(rule, command) for rule in ask), command
    assert bash_rule_matches("Bash(memvault recall:*)", "memvault recall 'deploy'")
    assert any(bash_rule_matches(rule, "memvault stats") for rule in allow)


def test_the_broad_rule_note_names_what_really_keeps_asking(tmp_path: Path) -> None:
    from memvault.integrations.entries import ASK_COMMANDS, ASK_TOOLS, claude_settings
    from memvault.integrations.merge import merge_settings

    notes: list[str] = []
    doc = {"permissions": {"allow": ["Bash(memvault:*)"]}}
    merged = merge_settings(doc, claude_settings("~/memory", "cc"), "settings.json", notes)
    [note] = notes
    ask = merged["permissions"]["ask"]
    for tool in ASK_TOOLS:
        assert tool in note and f"mcp__memvault__{tool}" in ask
    for command in ASK_COMMANDS:  # every command the note names has its ask rule
        assert command in note and f"Bash(memvault {command}:*)" in ask
