"""``memvault ui``: a local web inspector over the same :class:`~memvault.Vault` API the CLI
uses -- browse, search, read a memory with its history, edit, forget, pause capture,
review the inbox, export, consolidate.

>>> from memvault import Vault
>>> from memvault.ui import Server
>>> server = Server(Vault.open("~/memory"), port=0)        # doctest: +SKIP
>>> server.start(); print(server.url)                        # doctest: +SKIP

It binds 127.0.0.1 unless told otherwise and admits only the holder of the random token
in the URL it prints (see :mod:`memvault.ui.security`).

May import: memvault's public API, ``memvault.errors`` and ``memvault.debug``; nothing else
of the core (``tools/layout.py --check``).
"""

from __future__ import annotations

import socket
import threading
from typing import TYPE_CHECKING

from .security import Guard, new_token
from .session import Session, ui_author

if TYPE_CHECKING:  # pragma: no cover
    import uvicorn

    from .. import Vault

__all__ = ["Server", "open_vault_for_ui"]

LOCAL_NAMES = ("127.0.0.1", "localhost")


def open_vault_for_ui(vault: Vault) -> Vault:
    """``vault`` with its commits authored as the inspector (the identity is kept)."""
    from .. import Vault as VaultClass

    ident = vault.identity
    name = str(vault.config.get("git.author_name", "memvault"))
    return VaultClass.open(
        vault.root,
        agent=ident.agent,
        team=ident.team,
        role=ident.role,
        overrides={"git.author_name": ui_author(name, ident.agent)},
    )


def machine_names() -> set[str]:
    """The names and addresses other machines may reach this one by: its host name, its
    fully qualified name, and every address those resolve to (no network is asked beyond
    the resolver)."""
    import socket

    names = {socket.gethostname(), socket.getfqdn()}
    for name in list(names):
        try:
            found = socket.getaddrinfo(name, None)
        except OSError:
            continue
        names.update(str(info[4][0]) for info in found)
    return {n for n in names if n}


class Server:
    """The inspector on ``host:port`` (0: a free port), served by uvicorn."""

    def __init__(
        self, vault: Vault, host: str = "127.0.0.1", port: int = 0, token: str | None = None
    ) -> None:
        self.host = host
        self.socket = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.socket.bind((host, port))
        except OSError as exc:
            self.socket.close()
            from ..errors import MemvaultError

            raise MemvaultError(
                f"cannot listen on {host}:{port}: {exc.strerror}", key="port"
            ) from None
        self.socket.listen(128)  # connections wait in the backlog until uvicorn serves them
        self.port = int(self.socket.getsockname()[1])
        self.token = token or new_token()
        if host in ("0.0.0.0", "::"):  # every address of this machine: its names answer
            names = {*LOCAL_NAMES, host, *machine_names()}
        elif host in ("127.0.0.1", "localhost", "::1"):
            names = {*LOCAL_NAMES, host}
        else:
            names = {host}
        self.guard = Guard(self.token, self.port, names)
        self.session = Session(open_vault_for_ui(vault), self.guard)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def base(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def url(self) -> str:
        """The address to open: it carries the access token."""
        return f"{self.base}/?token={self.token}"

    def _uvicorn(self) -> uvicorn.Server:
        import uvicorn

        from .app import create_app

        config = uvicorn.Config(
            create_app(self.session),
            log_level="warning",
            access_log=False,
            server_header=False,
            lifespan="off",
        )
        self._server = uvicorn.Server(config)
        return self._server

    def serve_forever(self) -> None:
        """Serve until interrupted (^C)."""
        self.session.listing.start_sweep()
        self._uvicorn().run(sockets=[self.socket])

    def start(self) -> None:
        """Serve from a background thread (tests, benchmarks); :meth:`stop` ends it."""
        import time

        server = self._uvicorn()
        self.session.listing.start_sweep()
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)

    def stop(self) -> None:
        self.session.listing.stop()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.socket.close()
