"""The Typer app every command module registers on: its global options, ``version``, and
the rich console for tables."""

from __future__ import annotations

from pathlib import Path

import typer

from .common import console, state
from .options import GLOBAL, typer_parameters

__all__ = ["app", "console"]

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
@typer_parameters(GLOBAL)
def _root(
    *, vault: Path | None, agent: str | None, team: str | None, role: str | None, quiet: bool
) -> None:
    state.vault, state.agent, state.team, state.role, state.quiet = vault, agent, team, role, quiet


@app.command()
def version() -> None:
    """Print memvault's version.

    Example: memvault version
    """
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as pkg_version

    try:
        print(pkg_version("memvault"))
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        print("0+unknown")
