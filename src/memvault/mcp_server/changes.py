"""Announcing that the list of memories changed (``notifications/resources/list_changed``).

Every write to a vault moves its git HEAD (one commit per write) and bumps its write
counter, whoever makes it: this server, the CLI, a git pull, another server. Both are
read without a process (a few ``stat``/``read`` calls), so the server checks them right
after each of its own tool calls and once a second in the background, and announces a
change when either moved.

The SDK delivers the announcement two ways, one per protocol era: clients that opened
with the ``initialize`` handshake get it on the connection (``ServerSession``), clients
of the 2026-07-28 protocol through their ``subscriptions/listen`` stream (the
subscription bus). A client told of a change asks ``resources/list`` again.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS  # the SDK's own types package

from .. import Vault

WATCH_SECONDS = 1.0  # how often the background check looks at HEAD and the write counter

VaultState = tuple[str | None, int]


def vault_state(vault: Vault) -> VaultState:
    """HEAD's commit and the write counter: both move on every write."""
    return vault.state()


class ChangeAnnouncer:
    """Remembers the vault's state and announces list changes to the connected client."""

    def __init__(self, vault: Vault, bus: InMemorySubscriptionBus) -> None:
        self.vault = vault
        self.bus = bus
        self.last = vault_state(vault)
        self.session: ServerSession | None = None  # the handshake-era client's connection

    async def capture(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Server middleware: keep the connection of a handshake-era client once it is
        initialised (stdio serves one client, so the latest is the one)."""
        if ctx.method != "initialize" and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self.session = ctx.session
        return await call_next(ctx)

    async def check(self, now: VaultState | None = None) -> bool:
        """Announce a change if HEAD or the write counter moved since the last check."""
        if now is None:
            now = vault_state(self.vault)  # a few tiny reads: cheaper than a hop to a thread
        if now == self.last:
            return False
        self.last = now
        await self.announce()
        return True

    async def announce(self) -> None:
        await self.bus.publish(ResourcesListChanged())
        if self.session is not None:
            try:
                await self.session.send_resource_list_changed()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self.session = None  # the client is gone; stdin closing ends the server

    async def watch(self, interval: float = WATCH_SECONDS) -> None:
        """Check forever, every ``interval`` seconds (a background task of the server)."""
        while True:
            await anyio.sleep(interval)
            try:
                # A write moves HEAD, then the write counter, both under the vault lock:
                # looked at in between, one write would be announced twice. So the state
                # is read only while no writer holds the lock (the next tick looks again).
                with self.vault.try_locked() as free:
                    now = vault_state(self.vault) if free else None
                if now is not None:
                    await self.check(now)
            except OSError as exc:  # a vault mid-rewrite (e.g. a checkout): try again later
                print(f"memvault mcp: change check skipped ({exc})", file=sys.stderr)

    @asynccontextmanager
    async def watching(self, interval: float = WATCH_SECONDS) -> AsyncIterator[None]:
        """Run :meth:`watch` in the background for as long as the block runs."""
        async with anyio.create_task_group() as group:
            group.start_soon(self.watch, interval)
            try:
                yield
            finally:
                group.cancel_scope.cancel()
