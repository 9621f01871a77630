"""Git integration commands: hooks install|uninstall|status, hook-run, watch, sync, merge-driver."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from ..errors import MemvaultError
from ._app import app, emit_json, info, open_vault, state

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
    from ..errors import VaultNotFoundError
    from ..vault import find_root

    try:
        return find_root()
    except VaultNotFoundError:
        if any_repo:
            return Path.cwd()
        from .. import hooks

        if hooks.repo_info(Path.cwd()).bare:
            raise MemvaultError(
                "this is a bare repository: use 'memvault hooks install --bare'"
            ) from None
        raise


def _print_actions(report: Any) -> None:
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
    from .. import hooks

    if index_url and not bare:
        raise MemvaultError("--index-url is for a bare remote (with --bare)", key="index-url")
    report = hooks.install(_repo_path(repo, bare), bare=bare or None, index_url=index_url)
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
    from .. import hooks

    report = hooks.uninstall(_repo_path(repo, False, any_repo=True))
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
    from .. import hooks

    st = hooks.status(_repo_path(repo, False, any_repo=True))
    if json_out:
        emit_json(st.as_dict())
    else:
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
    if not st.ok:
        raise typer.Exit(1)


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
    from .. import hooks

    code = hooks.run_hook(name, args or [], hooks_dir=hooks_dir, vault_dir=vault_dir)
    if code:
        raise typer.Exit(code)


@app.command()
def watch(
    commit: bool = typer.Option(
        False, "--commit", help="Also commit hand edits after a quiet period."
    ),
    quiet_period: float = typer.Option(
        10.0,
        "--quiet-period",
        min=0.5,
        max=86_400,
        help="Seconds without changes before --commit commits.",
    ),
    debounce: float = typer.Option(
        0.4, "--debounce", min=0.05, max=60, help="Seconds of quiet before reindexing."
    ),
    json_out: bool = typer.Option(
        False, "--json", help="Print one JSON object per reindex/commit on stdout."
    ),
) -> None:
    """Watch the memory folders and reindex hand edits as they happen (Ctrl-C stops).

    Edits, new files, moves, deletes and editors' save-by-rename reach the index within
    about a second; an invalid file is reported once and left out of the index.

    Example: memvault watch --commit --quiet-period 30
    """
    import signal
    import threading

    from ..watch import json_line
    from ..watch import watch as run_watch

    vault = open_vault()
    stop = threading.Event()

    def _term(signum: int, frame: Any) -> None:
        stop.set()

    previous = signal.signal(signal.SIGTERM, _term)
    emit = json_line if json_out else None
    say = (
        (lambda line: None)
        if state.quiet
        else (lambda line: print(line, file=sys.stderr, flush=True))
    )

    def ready() -> None:
        extra = f"; committing hand edits after {quiet_period:g} s of quiet" if commit else ""
        say(f"memvault watch: watching {vault.root} (Ctrl-C to stop){extra}")

    if not json_out:

        def emit_text(event: dict[str, Any]) -> None:
            if event.get("event") == "reindex":
                say(
                    f"memvault watch: reindexed {len(event['paths'])} change(s): "
                    f"{event.get('summary', '')}"
                )
            elif event.get("event") == "commit":
                n = len(event.get("added", [])) + len(event.get("removed", []))
                say(
                    f"memvault watch: committed {n} hand-edited file(s) "
                    f"as {str(event.get('commit'))[:10]}"
                )

        emit = emit_text
    try:
        stats = run_watch(
            vault,
            debounce=debounce,
            commit_after=quiet_period if commit else None,
            say=say,
            emit=emit,
            stop=stop,
            ready=ready,
        )
    finally:
        signal.signal(signal.SIGTERM, previous)
    say(
        f"memvault watch: done ({stats.reindexes} reindex(es), {stats.commits} commit(s), "
        f"{stats.errors} error(s))"
    )


@app.command()
def sync(
    remote: str | None = typer.Option(
        None, "--remote", help="Remote to sync with (default: the branch's, or origin)."
    ),
    commit: bool = typer.Option(False, "--commit", help="First commit hand edits of memory files."),
    push: bool = typer.Option(True, "--push/--no-push", help="Push local commits after pulling."),
    json_out: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Pull (rebase) and push, merging concurrent edits of a memory key by key.

    When both sides changed the same memory, front matter is merged (lists unioned,
    newer 'updated' wins) and overlapping body edits are both kept as status: disputed.
    A conflict the merge driver cannot settle aborts the rebase, leaving the vault as it was.

    Example: memvault sync --commit
    """
    from ..sync import sync as run_sync

    vault = open_vault()
    report = run_sync(vault, remote=remote, commit=commit, push=push)
    if json_out:
        emit_json(report.as_dict())
        return
    if report.hand_edits and report.hand_edits.commit:
        n = len(report.hand_edits.added) + len(report.hand_edits.removed)
        print(f"committed {n} hand-edited file(s) as {report.hand_edits.commit[:10]}")
    if report.incoming:
        print(f"pulled {len(report.incoming)} commit(s) from {report.remote}/{report.branch}:")
        for c in report.incoming:
            print(f"  {c.sha[:10]}  {c.subject}  ({c.author})")
        print(f"{len(report.changed)} file(s) changed")
    else:
        print(f"already up to date with {report.remote}/{report.branch}")
    for path in report.disputed:
        print(f"disputed: {path} (both versions kept)")
    print(f"pushed {report.pushed} commit(s)" if report.pushed else "nothing to push")
    if report.reindex:
        info(f"index: {report.reindex}")
    for note in report.notes:
        info(f"note: {note}")


@app.command("merge-driver")
def merge_driver(
    base: Path = typer.Argument(..., help="%O: the common ancestor's version (temp file)."),
    ours: Path = typer.Argument(..., help="%A: our version; the result is written here."),
    theirs: Path = typer.Argument(..., help="%B: their version."),
    path: str = typer.Argument("", help="%P: the file's path in the repository."),
) -> None:
    """Git merge driver for memory files: merge front matter key by key, never conflict markers.

    Lists are unioned, other keys take the side with the newer 'updated'; overlapping
    body edits are both kept and the memory marked status: disputed. Registered by
    'memvault hooks install' (and init); selected by .gitattributes.

    Example: git config merge.memvault.driver "memvault merge-driver %O %A %B %P"
    """
    from ..merge import run_driver

    code = run_driver(base, ours, theirs, path or str(ours))
    if code:
        raise typer.Exit(code)
