"""``memvault debug on|off|status``: debug mode for one vault, for the user running it."""

from __future__ import annotations

import enum

import typer

from .common import emit_json, open_vault
from .root import app


class Action(enum.StrEnum):
    on = "on"
    off = "off"
    status = "status"


@app.command("debug")
def debug_(
    action: Action = typer.Argument(
        Action.status, help="on, off, or status (the default): is debug mode on here?"
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Debug mode for this vault, for you only. While it is on, every read command (recall,
    fact, procedure, search, validate, context, show, list, episodes, stats, ...) prints on
    stderr how it got its answer: the route, the filters, both legs' top candidates with
    their scores (keyword BM25 and vector cosine), the boosts, and the time each stage took.
    Stdout is unchanged, so --json output still parses; MCP tool results gain a "debug"
    field.

    The switch is kept per user outside the vault (debug.json in memvault's cache folder,
    $MEMVAULT_CACHE_DIR or ~/.cache/memvault), so it never reaches your team through git.
    MEMVAULT_DEBUG=1 (or 0) overrides it for one process.

    Examples:

      memvault debug on

      memvault recall "when did we deploy billing?"   (the trace goes to stderr)

      MEMVAULT_DEBUG=1 memvault fact "rate limit" --json 2>trace.txt

      memvault debug status --json

      memvault debug off
    """
    from .. import debug

    vault = open_vault()
    if action is Action.status:
        found = debug.setting(vault.root)
    else:
        found = debug.switch(vault.root, action is Action.on)
    if json_out:
        emit_json(found.as_dict())
        return
    state = "on" if found.on else "off"
    why = {
        "env": f"set by {debug.ENV}={found.as_dict()['env']} for this process",
        "user": f"since {found.since}, for you only ({found.file})",
        "default": "the default",
    }[found.source]
    print(f"debug mode {state} for {found.vault} ({why})")
    if found.source == "env" and action is not Action.status:
        print(f"note: {debug.ENV} overrides the switch in this shell", flush=True)
