"""The server: one open vault, the tools registered over it, and the stdio loop.

Unknown arguments are refused (a misspelt ``scope`` must not silently become a team
memory); every failure comes back as an MCP error result with a one-line message, and
the server itself never dies on input.
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading
import traceback
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
import pydantic
from mcp.server import NotificationOptions
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared._context_streams import create_context_streams
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    CallToolResult,
    ErrorData,
    InputRequiredResult,
    JSONRPCError,
    ListResourcesResult,
    PaginatedRequestParams,
    ToolAnnotations,
)

from .. import Vault, debug
from ..errors import MemvaultError, NotFoundError, SecretDetectedError
from .args import READ
from .changes import ChangeAnnouncer
from .resources import InvalidCursor, ResourceList
from .results import traced
from .tools import define_tools

IDENTITY_KEYS = ("agent", "team", "role", "author", "identity")

INSTRUCTIONS = """\
memvault is your long-term memory: plain files in a git repository that persist across
sessions and are shared with your team.
- At the start of a task, call `context` (or `recall`) with the task in a few words.
- Before a multi-step task, call `procedure`; before relying on a remembered claim, `validate` it.
- When you learn something durable (a preference, a decision, a fact about the project),
  `remember` it as a fact with a `subject` key; after finishing or failing a task, `remember`
  an episode with its outcome; when you work out a reusable how-to, `remember` a procedure.
- Write self-contained text (it is read later without this conversation); never store secrets.
- Use `log_turn` with a rating to record how helpful an answer was; `insights` reads those back.
Your identity (agent/team/role) is fixed by the server; you see your own, your team's and
global memories only."""


def pydantic_message(name: str, exc: pydantic.ValidationError) -> str:
    """A tool's argument errors in one line: ``where: what`` for each."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return f"invalid arguments for {name}: " + "; ".join(parts)


def unknown_arguments(name: str, given: dict[str, Any], allowed: set[str]) -> str | None:
    """The error for arguments a tool does not take (identity ones explained), or ``None``."""
    unknown = sorted(set(given) - allowed)
    if not unknown:
        return None
    ident = [k for k in unknown if k in IDENTITY_KEYS]
    why = ""
    if ident:
        why = (
            f"; identity ({', '.join(ident)}) is fixed when the server starts"
            " and cannot be set per call"
        )
    return (
        f"unknown argument(s) for {name}: {', '.join(unknown)}{why};"
        f" expected: {', '.join(sorted(allowed))}"
    )


class MemvaultMCP(MCPServer[Any]):
    """MCPServer that refuses unknown arguments and words argument errors in one line, lists
    the vault's memories as resources page by page, and announces when that list changes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.allowed: dict[str, set[str]] = {}
        self.memvault: Session | None = None
        self.changes: ChangeAnnouncer | None = None

    def register(self, fn: Callable[..., Any], annotations: ToolAnnotations, title: str) -> None:
        self.allowed[fn.__name__] = set(inspect.signature(fn).parameters)
        self.add_tool(fn, title=title, annotations=annotations, description=inspect.getdoc(fn))

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        allowed = self.allowed.get(name)
        if allowed is not None and isinstance(arguments, dict):
            refusal = unknown_arguments(name, arguments, allowed)
            if refusal:
                raise ToolError(refusal)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, pydantic.ValidationError):
                raise ToolError(pydantic_message(name, exc.__cause__)) from exc.__cause__
            raise
        finally:
            if self.changes is not None:  # a write announces itself before its result
                await self.changes.check()

    # The SDK's MCPServer lists only resources registered one by one, all on one page; a
    # vault's memories change with every write, so this server answers resources/list
    # itself (the SDK routes the request to this method).
    async def _handle_list_resources(
        self, ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        session = self.memvault
        if session is None:  # pragma: no cover - build_server always sets it
            return ListResourcesResult(resources=[])
        cursor = params.cursor if params is not None else None
        try:
            resources, next_cursor = await anyio.to_thread.run_sync(session.list_page, cursor)
        except InvalidCursor as exc:
            raise MCPError(code=INVALID_PARAMS, message=str(exc)) from None
        except MemvaultError as exc:  # the vault's side, e.g. a bad mcp.page_size
            raise MCPError(code=INTERNAL_ERROR, message=str(exc)) from None
        return ListResourcesResult(resources=resources, next_cursor=next_cursor)

    async def run_stdio_async(self) -> None:
        """The SDK's stdio loop, declaring ``resources.listChanged`` to handshake-era clients
        (MCPServer has no other way to declare it, and clients only act on list changes a
        server declares; 2026-07-28 clients learn it from ``subscriptions/listen``)."""
        server = self._lowlevel_server
        options = server.create_initialization_options(NotificationOptions(resources_changed=True))
        async with stdio_server() as (read_stream, write_stream):
            relay_send, relay_receive = create_context_streams[SessionMessage | Exception](0)
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(answer_unreadable, read_stream, relay_send, write_stream)
                await server.run(relay_receive, write_stream, options)
                tasks.cancel_scope.cancel()


async def answer_unreadable(read_stream: Any, relay: Any, write_stream: Any) -> None:
    """Pass the client's messages on; answer a line that is not one, as JSON-RPC 2.0 says:
    ``-32700 Parse error`` for a line that is not JSON, ``-32600 Invalid Request`` for JSON
    that is no request, both with ``id: null``. (The SDK's stdio reader hands such a line on
    as an exception, and the session drops it, leaving the client waiting.)"""
    async with relay:
        async for item in read_stream:
            if not isinstance(item, Exception):
                await relay.send(item)
                continue
            errors = item.errors() if isinstance(item, pydantic.ValidationError) else []
            parse = any(e.get("type") == "json_invalid" for e in errors)
            code, message = (
                (PARSE_ERROR, "Parse error") if parse else (INVALID_REQUEST, "Invalid Request")
            )
            detail = str(errors[0].get("msg")) if errors else type(item).__name__
            error = ErrorData(code=code, message=f"{message}: {detail}"[:300])
            print(f"memvault mcp: unreadable line ({code}): {detail}", file=sys.stderr)
            await write_stream.send(
                SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error))
            )


class Session:
    """One open vault shared by every call; a lock serialises calls inside the server."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.lock = threading.RLock()
        self.resources = ResourceList(vault)

    def refresh(self) -> None:
        """Pick up config changes made by the CLI (e.g. ``pause``); identity stays as started."""
        self.vault.reload_config()

    def list_page(self, cursor: str | None) -> tuple[list[Any], str | None]:
        """A page of ``resources/list`` (see :mod:`.resources`), read under the lock."""
        with self.lock:
            self.refresh()
            return self.resources.page(cursor)

    def guard(
        self, fn: Callable[..., CallToolResult], reads: bool = False
    ) -> Callable[..., CallToolResult]:
        """Run a tool body under the lock; expected errors become one-line MCP errors.
        A tool that ``reads`` carries a ``debug`` trace while debug mode is on."""

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> CallToolResult:
            with self.lock:
                try:
                    self.refresh()
                    if reads and debug.enabled(self.vault.root):
                        return traced(self.vault, fn, args, kwargs)
                    return fn(*args, **kwargs)
                except SecretDetectedError as exc:
                    # A tool has no override: the agent leaves the credential out (or a
                    # person allow-lists it), said in MCP's terms rather than the CLI's.
                    raise ToolError(
                        f"{exc}; an agent can't override this: write it without the"
                        " credential, or ask the user to allow-list it"
                    ) from exc
                except MemvaultError as exc:
                    raise ToolError(str(exc)) from exc
                except ToolError:
                    raise
                except Exception as exc:  # a bug: keep the server alive, say where to look
                    print(f"memvault mcp: {fn.__name__} failed:", file=sys.stderr)
                    traceback.print_exc(file=sys.stderr)
                    message = f"internal error ({type(exc).__name__}: {exc})"
                    raise ToolError(f"{message}; details on the server's stderr") from exc

        return wrapper


def build_server(vault: Vault) -> MemvaultMCP:
    """The MCP server over one open vault (tests can drive it in-process too)."""
    session = Session(vault)
    ident = vault.identity
    who = ", ".join(
        f"{k}={v}"
        for k, v in (("agent", ident.agent), ("team", ident.team), ("role", ident.role))
        if v
    )
    bus = InMemorySubscriptionBus()
    changes = ChangeAnnouncer(vault, bus)

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[None]:
        async with changes.watching():  # HEAD moved by the CLI, git or another server
            yield

    server = MemvaultMCP(
        "memvault",
        title="memvault: long-term memory",
        instructions=INSTRUCTIONS + (f"\nYou are: {who}." if who else ""),
        version=package_version(),
        log_level="WARNING",
        subscriptions=bus,
        lifespan=lifespan,
    )
    server.middleware.append(changes.capture)
    server.changes = changes
    for fn, hints, title in define_tools(vault):
        server.register(session.guard(fn, reads=hints is READ), hints, title)

    @server.resource(
        "memvault://{id}",
        name="memory",
        title="A memory",
        description=(
            "One memory file (front matter + text) by id."
            " Another agent's self memories are not found."
        ),
        mime_type="text/markdown",
    )
    def read_memory(id: str) -> str:
        with session.lock:
            try:
                return vault.raw_text(vault.get(id))
            except NotFoundError as exc:
                raise ResourceNotFoundError(str(exc)) from None
            except MemvaultError as exc:
                raise ResourceError(str(exc)) from None

    @server.resource(
        "memvault://{id}/turn/{turn}",
        name="turn",
        title="A conversation turn",
        description="One turn of a session transcript with two turns before and after it.",
        mime_type="text/markdown",
    )
    def read_turn(id: str, turn: str) -> str:
        with session.lock:
            try:
                found = vault.turn_window(f"{id}#{turn}", around=2)
            except NotFoundError as exc:
                raise ResourceNotFoundError(str(exc)) from None
            except MemvaultError as exc:
                raise ResourceError(str(exc)) from None
        return "\n\n".join(
            f"### {t.speaker} · {t.when}"
            + (" (this turn)" if t.turn_id == turn else "")
            + f"\n\n{t.text}"
            for t in found.turns
        )

    server.memvault = session
    return server


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("memvault")
    except PackageNotFoundError:  # pragma: no cover
        return "0+unknown"


def warm(vault: Vault, lock: threading.RLock) -> None:
    """Load the embedder and open the index before the first call (off the main thread)."""
    # Warming is an optimisation: a failure here shows up again, with context, on the
    # first real search, so it is only reported.
    try:
        with lock:
            vault.warm()
    except Exception as exc:
        print(f"memvault mcp: warm-up skipped ({type(exc).__name__}: {exc})", file=sys.stderr)


def serve(vault: Vault, *, warm_up: bool = True) -> None:
    """Serve ``vault`` over stdio until the client closes the connection."""
    server = build_server(vault)
    assert server.memvault is not None
    if not vault.identity.agent:
        print(
            "memvault mcp: no agent identity (--agent or MEMVAULT_AGENT):"
            " 'self' memories are not available",
            file=sys.stderr,
        )
    # Hand edits reach the index through file events, so a call checks only the files
    # that changed instead of statting its way through the vault on every call.
    from ..watch import feed_searches, stop_feed

    feed = feed_searches(vault.root)
    if warm_up:
        threading.Thread(
            target=warm, args=(vault, server.memvault.lock), name="memvault-warm", daemon=True
        ).start()
    try:
        server.run("stdio")
    finally:
        stop_feed(feed)
