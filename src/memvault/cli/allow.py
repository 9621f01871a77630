"""``memvault allow-command [KEY] [--revoke]``: which commands named in the shared config may
run on this machine (memvault.trust)."""

from __future__ import annotations

import sys

import typer

from ..values import TYPE_CHECKING
from .common import emit_json, open_vault
from .root import app

if TYPE_CHECKING:  # pragma: no cover
    from .. import CommandStatus


@app.command("allow-command")
def allow_command(
    key: str | None = typer.Argument(
        None,
        help="validate.judge_command or consolidate.summarizer_command; "
        "none: list both and whether each may run here.",
    ),
    revoke: bool = typer.Option(
        False, "--revoke", help="Take back the permission: the command stops running here."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Let a command named in the shared config run on this machine (like `direnv allow`).

    validate.judge_command and consolidate.summarizer_command live in the tracked
    .memvault/config.yaml, so any teammate's commit can set them. memvault runs such a
    command only after you allowed that exact command here; until then validate and
    consolidate use the built-in judge and summarizer and say so in one line. The
    permission is the sha256 of the key and the command line, kept for you only outside
    the vault (allowed-commands.json in $MEMVAULT_CONFIG_DIR, else $XDG_CONFIG_HOME/memvault
    or ~/.config/memvault): it is never committed and survives reindex. A changed command
    needs allowing again. A command you set for yourself (MEMVAULT_JUDGE_COMMAND,
    MEMVAULT_SUMMARIZER_COMMAND) runs without it.

    Examples:

      memvault allow-command          (each command, and whether it may run here)

      memvault allow-command validate.judge_command

      memvault allow-command consolidate.summarizer_command --revoke

      memvault allow-command --json
    """
    vault = open_vault()
    if key is None:
        if revoke:
            raise typer.BadParameter("name the key to revoke", param_hint="KEY")
        found = vault.commands()
        if json_out:
            emit_json({"commands": [c.as_dict() for c in found]})
            return
        for status in found:
            _print(status)
        return
    status = vault.revoke_command(key) if revoke else vault.allow_command(key)
    if json_out:
        emit_json(status.as_dict())
        return
    if revoke:
        print(f"{key}: not allowed here any more; using the built-in instead", file=sys.stderr)
    elif status.source == "local":
        print(f"{key}: set on this machine (env or override): it runs as it is", file=sys.stderr)
    else:
        print(f"allowed {key}: {status.command}", file=sys.stderr)
    _warn_vault_files(status.key, status.vault_files)


def _print(status: CommandStatus) -> None:
    shown = {
        "unset": "not set",
        "local": "set on this machine: runs",
        "allowed": "allowed: runs",
        "changed": "changed since you allowed it: does not run",
        "not allowed": "not allowed: does not run",
    }[status.state]
    print(f"{status.key}\t{shown}")
    if status.command is not None:
        print(f"  {status.command}")
    if status.state == "changed":
        print(f"  (you allowed: {status.allowed_command})")
    if status.note:
        print(f"  run: memvault allow-command {status.key}")
    _warn_vault_files(status.key, status.vault_files)


def _warn_vault_files(key: str, files: tuple[str, ...]) -> None:
    if files:
        print(
            f"warning: {key} runs {', '.join(files)} from the vault: a pull can change it "
            "without changing the command line, so allowing does not cover it",
            file=sys.stderr,
        )
