"""``memvault ui``: serve the web inspector (the server lives in :mod:`memvault.ui`)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from ..errors import MemvaultError
from . import options
from .common import info, open_vault
from .options import typer_parameters
from .root import app

DEFAULT_PORT = 8765


@app.command("ui")
@typer_parameters(options.UI)
def ui(*, port: int | None, host: str, open_browser: bool, json_out: bool) -> None:
    """Serve a local web inspector: browse, search, read, edit, forget, pause capture,
    review the inbox, export, consolidate -- as the identity given by the root options.

    It listens on 127.0.0.1 (this machine only) and prints a URL carrying a random access
    token: open that one. Every change is one commit, authored as the inspector.

    Example: memvault ui --open

    Example: memvault --agent claude-code --team web --role librarian ui --port 9000
    """
    from ..ui import Server  # starlette, uvicorn, jinja2: loaded only here

    if port is not None and not 0 <= port <= 65535:
        raise MemvaultError(f"expected 0-65535, got {port}", key="port")
    vault = open_vault()
    server = Server(vault, host=host, port=DEFAULT_PORT if port is None else port)
    address: dict[str, Any] = {"url": server.url, "port": server.port, "pid": os.getpid()}
    if json_out:
        print(json.dumps(address), flush=True)
    else:
        print(server.url, flush=True)
    if host not in ("127.0.0.1", "localhost", "::1"):
        info(
            f"warning: listening on {host}: other machines can reach it (the token still guards it)"
        )
    info(f"memvault ui: serving {vault.root}; ^C stops it")
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:  # pragma: no cover - uvicorn handles ^C itself
        pass
    print("memvault ui: stopped", file=sys.stderr)
