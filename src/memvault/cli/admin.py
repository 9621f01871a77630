"""Maintenance commands that are neither reads nor writes of single memories."""

from __future__ import annotations

import typer

from ._app import app


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


_ = typer
