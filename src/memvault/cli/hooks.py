"""Git hook commands: ``hooks install|uninstall|status``, and ``hook-run`` (what shims call)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..errors import MemvaultError
from .common import emit_json, info, open_vault, state
from .root import app

if TYPE_CHECKING:
    from ..githooks.install import HooksStatus, InstallReport

hooks_app = typer.Typer(
    help=(
        "Install, remove or inspect memvault's git hooks (validation before a commit, "
        "reindex after commit/merge/checkout/rewrite and before a push).\n\n"
        "Example: memvault hooks install"
    ),
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(hooks_app, name="hooks")


def _repo_path(repo: Path | None, bare: bool, *, any_repo: bool = False) -> Path:
    """The repository to act on: --repo, else here (--bare), else the vault.

    ``any_repo`` (uninstall/status): fall back to the current folder when no vault is
    found, so they also work in a bare remote.
    """
    if repo is not None:
        return repo.expanduser().resolve()
    if bare:
        return Path.cwd()
    if state.vault is not None:
        return Path(open_vault().root)
    from .. import find_root
    from ..errors import VaultNotFoundError

    try:
        return find_root()
    except VaultNotFoundError:
        if any_repo:
            return Path.cwd()
        from ..githooks.install import repo_info

        if repo_info(Path.cwd()).bare:
            raise MemvaultError(
                "this is a bare repository: use 'memvault hooks install --bare'"
            ) from None
        raise


def _print_actions(report: InstallReport) -> None:
    for action in report.actions:
        detail = f" ({action.detail})" if action.detail else ""
        info(f"{action.action:>9}  {action.hook}{detail}")
    info(f"hooks folder: {report.hooks_dir}")
    if report.merge_driver:
        info(f"merge driver: {report.merge_driver}")
    for note in report.notes:
        info(f"note: {note}")


@hooks_app.command("install")
def hooks_install(
    bare: bool = typer.Option(
        False, "--bare", help="In a bare remote: install post-receive (server-side reindex)."
    ),
    repo: Path | None = typer.Option(
        None, "--repo", help="Repository folder (default: the vault, or here with --bare)."
    ),
    index_url: str | None = typer.Option(
        None, "--index-url", help="With --bare: the shared Chroma server post-receive indexes into."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Install (or upgrade) the git hook shims and register the merge driver.

    pre-commit blocks invalid memory files and likely secrets; post-commit,
    post-merge, post-checkout, post-rewrite and pre-push reindex in the background
    (git does not wait; 'git config memvault.hookTimeout N' waits up to N s). An
    existing foreign hook is kept as <name>.legacy and still runs first;
    core.hooksPath is respected. Run it again after upgrading memvault.

    Example: memvault hooks install   (or, in a bare remote: memvault hooks install --bare)
    """
    from ..githooks.install import install

    if index_url and not bare:
        raise MemvaultError("--index-url is for a bare remote (with --bare)", key="index-url")
    report = install(_repo_path(repo, bare), bare=bare or None, index_url=index_url)
    if json_out:
        emit_json(report.as_dict())
    else:
        _print_actions(report)
    if not report.ok:
        raise typer.Exit(1)


@hooks_app.command("uninstall")
def hooks_uninstall(
    repo: Path | None = typer.Option(
        None, "--repo", help="Repository folder (default: the vault, or here)."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Remove memvault's hook shims and restore the hooks they displaced.

    Example: memvault hooks uninstall
    """
    from ..githooks.install import uninstall

    report = uninstall(_repo_path(repo, False, any_repo=True))
    if json_out:
        emit_json(report.as_dict())
    else:
        _print_actions(report)


@hooks_app.command("status")
def hooks_status(
    repo: Path | None = typer.Option(
        None, "--repo", help="Repository folder (default: the vault, or here)."
    ),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Show which hooks are installed, their versions, legacy hooks and the merge driver.

    Exits 1 when something is missing or outdated. Example: memvault hooks status --json
    """
    from ..githooks.install import status

    st = status(_repo_path(repo, False, any_repo=True))
    if json_out:
        emit_json(st.as_dict())
    else:
        _print_status(st)
    if not st.ok:
        raise typer.Exit(1)


def _print_status(st: HooksStatus) -> None:
    print(f"hooks folder: {st.hooks_dir}{' (bare repository)' if st.bare else ''}")
    for hook in st.hooks:
        extra = []
        if hook.version is not None:
            extra.append(f"v{hook.version}")
        if hook.legacy:
            extra.append(f"chains {hook.hook}.legacy")
        if hook.state in ("installed", "outdated") and not hook.python_ok:
            extra.append(f"interpreter missing: {hook.python}")
        print(f"{hook.state:>9}  {hook.hook}" + (f" ({', '.join(extra)})" if extra else ""))
    if not st.bare:
        print(f"merge driver: {st.merge_driver or 'not registered'}")
        print(f".gitattributes routes memory files to it: {'yes' if st.attributes else 'no'}")
    elif st.index_url:
        print(f"index url: {st.index_url}")
    for note in st.notes:
        print(f"note: {note}", file=sys.stderr)


@app.command(
    "hook-run",
    hidden=True,
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
def hook_run(
    name: str = typer.Argument(..., help="The git hook being run (pre-commit, post-commit, ...)."),
    args: list[str] | None = typer.Argument(None, help="The arguments git passed to the hook."),
    hooks_dir: Path | None = typer.Option(
        None, "--hooks-dir", help="Folder of the shim (for <name>.legacy)."
    ),
    vault_dir: str = typer.Option(
        ".", "--vault-dir", help="The vault, relative to the worktree top."
    ),
) -> None:
    """Run one git hook (what the installed shims call; not for direct use).

    Example: memvault hook-run post-commit
    """
    from ..githooks.run import run_hook

    code = run_hook(name, args or [], hooks_dir=hooks_dir, vault_dir=vault_dir)
    if code:
        raise typer.Exit(code)
