"""What memvault adds to an agent client's configuration: its MCP server entry, Claude
Code's environment, permissions and hooks, the ``/memvault`` slash command, and Codex's
``config.toml`` table and ``AGENTS.md`` section.

The files in the repository's ``integrations/`` folder are these entries rendered for a
vault at ``~/memory`` (``tests/test_integrations_install.py`` keeps them equal).
"""

from __future__ import annotations

import shlex
from importlib import resources
from typing import Any

CLIENTS = ("claude-code", "cursor", "codex")
SERVER = "memvault"  # the server's name in every client's configuration

# Claude Code names an MCP tool mcp__<server>__<tool> in permission rules.
READ_ONLY_TOOLS = (
    "recall",
    "fact",
    "procedure",
    "validate",
    "context",
    "show",
    "stats",
    "recent_episodes",
    "insights",
)
# Tools and commands that stay behind the user's prompt even under a wider allow rule
# (Claude Code checks ask rules before allow rules). consolidate's dry run is one call of
# the same tool as its apply, so the tool as a whole asks; so does the command, whose
# `--dry-run` is one flag away from applying.
ASK_TOOLS = ("forget", "consolidate", "ingest")
READ_ONLY_COMMANDS = (
    "recall",
    "fact",
    "procedure",
    "validate",
    "context",
    "show",
    "list",
    "search",
    "episodes",
    "stats",
    "history",
    "insights",
    "why",
    "debug status",
)
# Commands that delete, rewrite, publish or let code run: forget (--purge rewrites history),
# consolidate, ingest, sync (pushes), import, allow-command (lets a shared command run).
ASK_COMMANDS = ("forget", "consolidate", "ingest", "sync", "import", "allow-command")

# Both read the hook's JSON on stdin: the prompt, or the project's folder (README title, git
# remote, recent files) at a session start. Nothing is printed when nothing is relevant.
SESSION_START = "memvault -q context --hook --budget 1500 || true"
PROMPT_HOOK = "memvault -q context --hook --budget 600 || true"
# Captured sessions are saved with a scope chosen at install (--capture-scope, default self:
# only the agent that had the conversation reads it) and channel claude-code, so that
# `memvault pause --channel claude-code` stops the capture.
CAPTURE_SCOPE = "self"
CAPTURE_CHANNEL = "claude-code"


def ingest_hook(scope: str = CAPTURE_SCOPE) -> str:
    """The PreCompact/SessionEnd hook's command, saving sessions with ``scope``."""
    return (
        f"memvault -q ingest --hook --format claude --scope {scope} --channel {CAPTURE_CHANNEL}"
        " >/dev/null || true"
    )


INGEST_HOOK = ingest_hook()
COMMAND = "memvault"  # the hooks' and the server's command, as the shipped files name it


def run_as(hook: str, command: str) -> str:
    """``hook`` (written for ``memvault`` on the PATH) run by ``command`` instead: an absolute
    path works where a client's PATH lacks memvault's folder (a desktop launcher's)."""
    if command == COMMAND:
        return hook
    return shlex.quote(command) + hook.removeprefix(COMMAND)


def tool_rule(tool: str) -> str:
    return f"mcp__{SERVER}__{tool}"


def command_rule(command: str) -> str:
    return f"Bash(memvault {command}:*)"


def ask_rules(command: str) -> list[str]:
    """Rules that match ``command`` however memvault is called: by name or by path, with or
    without global options before the verb (``memvault -q forget X --purge --yes``,
    ``/venv/bin/memvault --vault ~/m forget X``). Claude Code's ``*`` matches any text,
    anywhere in a rule; a rule that matches more than the command only asks more often."""
    return [
        command_rule(command),
        f"Bash(memvault * {command} *)",
        f"Bash(*/memvault {command} *)",
        f"Bash(*/memvault * {command} *)",
    ]


def server_args(vault: str, agent: str, team: str | None, role: str | None) -> list[str]:
    """``memvault`` arguments that serve ``vault`` as ``agent`` (and team, role)."""
    args = ["--vault", vault, "--agent", agent]
    for flag, value in (("--team", team), ("--role", role)):
        if value:
            args += [flag, value]
    return [*args, "mcp"]


def mcp_entry(
    client: str,
    vault: str,
    agent: str,
    team: str | None = None,
    role: str | None = None,
    command: str = COMMAND,
) -> dict[str, Any]:
    """The ``mcpServers.memvault`` entry for ``client``.

    Claude Code expands ``${VAR:-default}`` in an entry, so each user may point a shared
    project entry at their own vault or name with MEMVAULT_VAULT / MEMVAULT_AGENT; Cursor's
    ``${env:VAR}`` has no default, so its entry names the vault itself.
    """
    if client == "claude-code":
        args = server_args(
            f"${{MEMVAULT_VAULT:-{vault}}}", f"${{MEMVAULT_AGENT:-{agent}}}", team, role
        )
        return {"type": "stdio", "command": command, "args": args, "env": {}}
    return {"command": command, "args": server_args(vault, agent, team, role)}


def claude_settings(
    vault: str,
    agent: str,
    team: str | None = None,
    role: str | None = None,
    command: str = COMMAND,
    capture_scope: str = CAPTURE_SCOPE,
) -> dict[str, Any]:
    """What memvault adds to Claude Code's settings.json (``capture_scope``: the scope the
    ingest hooks save sessions with).

    ``env`` reaches every command Claude Code runs (the slash command's ``memvault`` calls
    and the hooks); the allow list names the read-only tools and commands one by one; the
    hooks inject context at session start and for every prompt (nothing when nothing is
    relevant), and ingest the transcript before a compaction, at session end and, in the
    background, after every reply (Stop), failing open. The team and role reach the hooks
    through ``env``, as the MCP server's arguments.
    """
    allow = [tool_rule(t) for t in READ_ONLY_TOOLS] + [command_rule(c) for c in READ_ONLY_COMMANDS]
    ask = [tool_rule(t) for t in ASK_TOOLS] + [r for c in ASK_COMMANDS for r in ask_rules(c)]
    ingest = [
        {
            "hooks": [
                {
                    "type": "command",
                    "command": run_as(ingest_hook(capture_scope), command),
                    "timeout": 60,
                }
            ]
        }
    ]
    # Stop ends every reply: the fallback when SessionEnd is cut short (Claude Code may exit
    # before a session-end hook finishes). It runs in the background ("async") so a reply is
    # never held up; ingest skips the turns already saved, so the three hooks overlap safely.
    stop = [
        {
            "hooks": [
                {
                    "type": "command",
                    "command": run_as(INGEST_HOOK, command),
                    "timeout": 60,
                    "async": True,
                }
            ]
        }
    ]
    env = {"MEMVAULT_VAULT": vault, "MEMVAULT_AGENT": agent}
    if team:
        env["MEMVAULT_TEAM"] = team
    if role:
        env["MEMVAULT_ROLE"] = role
    return {
        "env": env,
        "permissions": {"allow": allow, "ask": ask},
        "hooks": {
            "SessionStart": [
                {
                    "matcher": "startup|resume|clear|compact",
                    "hooks": [
                        {
                            "type": "command",
                            "command": run_as(SESSION_START, command),
                            "timeout": 30,
                        }
                    ],
                }
            ],
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {"type": "command", "command": run_as(PROMPT_HOOK, command), "timeout": 15}
                    ]
                }
            ],
            "PreCompact": ingest,
            "SessionEnd": ingest,
            "Stop": stop,
        },
    }


def slash_command() -> str:
    """The ``/memvault`` command file (``.claude/commands/memvault.md``)."""
    return resources.files(__package__).joinpath("memvault.md").read_text(encoding="utf-8")


def codex_server(
    vault: str,
    agent: str,
    team: str | None = None,
    role: str | None = None,
    command: str = COMMAND,
) -> dict[str, Any]:
    """The ``[mcp_servers.memvault]`` table of Codex's ``config.toml``. Codex expands no
    variables in it, so the vault and the identity are written out, in ``env`` (Codex passes
    the server only a short list of its own variables, so nothing else reaches it)."""
    env = {"MEMVAULT_VAULT": vault, "MEMVAULT_AGENT": agent}
    if team:
        env["MEMVAULT_TEAM"] = team
    if role:
        env["MEMVAULT_ROLE"] = role
    return {"command": command, "args": ["mcp"], "env": env}


# The AGENTS.md section is kept between these lines; an install replaces what is between
# them, an uninstall removes them and what is between.
SECTION_START = "<!-- memvault:start (memvault integrations install codex) -->"
SECTION_END = "<!-- memvault:end -->"


def agents_section() -> str:
    """memvault's section of Codex's ``AGENTS.md``: when to recall and remember (Codex has
    no prompt hook memvault installs, so the model is asked to call the tools itself)."""
    body = resources.files(__package__).joinpath("agents-section.md").read_text(encoding="utf-8")
    return f"{SECTION_START}\n{body.rstrip()}\n{SECTION_END}\n"
