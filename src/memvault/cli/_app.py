"""The Typer app, shared options and output helpers for every command module."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer

from ._common import (  # noqa: F401  (re-exported for the command modules)
    emit_json,
    info,
    open_vault,
    parse_when,
    read_text_arg,
    split_list,
    state,
)

app = typer.Typer(
    name="memvault",
    help=(
        "Long-term memory for AI agents, kept as Markdown/YAML files in a git repository.\n\n"
        "Example:\n\n"
        "  memvault init ~/memory --examples && cd ~/memory\n\n"
        "  memvault add fact 'The API rate limit is 100 req/s' --subject api.rate-limit\n\n"
        "  memvault recall 'what is the rate limit?'"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _root(
    vault: Optional[Path] = typer.Option(
        None, "--vault", "-V", help="Vault folder (default: $MEMVAULT_VAULT, else walk up from here)."
    ),
    agent: Optional[str] = typer.Option(None, "--agent", help="Act as this agent ($MEMVAULT_AGENT)."),
    team: Optional[str] = typer.Option(None, "--team", help="The agent's team ($MEMVAULT_TEAM)."),
    role: Optional[str] = typer.Option(
        None, "--role", help="Role, e.g. 'librarian' to write scope global ($MEMVAULT_ROLE)."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Less output on stderr."),
) -> None:
    state.vault, state.agent, state.team, state.role, state.quiet = vault, agent, team, role, quiet


def console(stderr: bool = False) -> Any:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() else 160  # pipes and logs: don't squeeze tables to 80 columns
    return Console(stderr=stderr, highlight=False, soft_wrap=False, width=width)
