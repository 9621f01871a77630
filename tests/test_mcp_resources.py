"""The MCP server as clients see it: memories listed as resources (paged with the
specification's cursor, newest first, scope rules applied), list changes announced, every
tool's text block the JSON of its structured content, and annotations as documented.

Driven like test_mcp.py: ``memvault mcp`` spawned over stdio, spoken to with the official
SDK's own clients (the handshake-era ``ClientSession`` and the 2026-07-28 ``Client``).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from memvault import Vault

from helpers import fact_text, git, run_memvault, write

# Every test starts a real MCP server over stdio (seconds each): out of the fast lane
# (pytest -m 'not slow'); test_integrations.py still starts one there.
pytestmark = pytest.mark.slow

pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp.types import PaginatedRequestParams, ResourceListChangedNotification  # noqa: E402
from test_mcp import ALL_TOOLS, DESTRUCTIVE, READ_ONLY, server_command, server_env  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REAL_SESSION = Path(__file__).parent / "data" / "claude-code-session.jsonl"


def params(root: Path, agent: str | None, team: str | None = None) -> StdioServerParameters:
    cmd = server_command(root, agent, team, None)
    return StdioServerParameters(command=cmd[0], args=cmd[1:], env=server_env(), cwd=str(root))


@asynccontextmanager
async def connect(
    root: Path, agent: str | None, team: str | None = None, notes: list[Any] | None = None
) -> AsyncIterator[ClientSession]:
    """A handshake-era client; server notifications are appended to ``notes``."""

    async def handler(message: Any) -> None:
        if notes is not None:
            notes.append(message)

    with open(root.parent / f"stderr-{agent}.log", "a", encoding="utf-8") as errlog:
        async with (
            stdio_client(params(root, agent, team), errlog=errlog) as (read, write),
            ClientSession(read, write, message_handler=handler) as session,
        ):
            await session.initialize()
            yield session


async def all_pages(session: ClientSession) -> list[list[str]]:
    """The names on every page of resources/list, following nextCursor to the end."""
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        page = await session.list_resources(params=PaginatedRequestParams(cursor=cursor))
        pages.append([r.name for r in page.resources])
        cursor = page.next_cursor
        if cursor is None:
            return pages
        assert len(pages) < 50, "nextCursor never ends"


def set_page_size(vault: Vault, size: int) -> None:
    config = vault.root / ".memvault" / "config.yaml"
    config.write_text(
        config.read_text(encoding="utf-8") + f"\nmcp:\n  page_size: {size}\n", encoding="utf-8"
    )


def day(n: int) -> str:
    return f"2026-02-{n:02d}T10:00:00Z"


@pytest.fixture
def scoped(vault: Vault) -> dict[str, str]:
    """Memories of every scope, each written on its own day (ids by what they are)."""
    root = vault.root
    alice = Vault.open(root, agent="alice", team="web")
    bob = Vault.open(root, agent="bob", team="web")
    carol = Vault.open(root, agent="carol", team="data")
    lib = Vault.open(root, agent="lib", role="librarian")
    made = {
        "alice-self": alice.add(
            "semantic", "Alice's note", id="alice-self", scope="self", created=day(1)
        ),
        "web-1": alice.add("semantic", "Web fact one", id="web-1", created=day(2)),
        "bob-self": bob.add(
            "semantic", "Bob's secret", id="bob-self", scope="self", created=day(3)
        ),
        "data-1": carol.add("semantic", "Data team fact", id="data-1", created=day(4)),
        "global-1": lib.add(
            "semantic", "Everyone's fact", id="global-1", scope="global", created=day(5)
        ),
        "web-2": bob.add("episodic", "Web episode", id="web-2", created=day(6)),
        "web-3": alice.add(
            "procedural", "Web how-to", id="web-3", steps=["a", "b"], created=day(7)
        ),
        "old-fact": alice.add(
            "semantic", "Staging is db-1", id="old-fact", subject="staging.db", created=day(8)
        ),
        "new-fact": alice.add(
            "semantic", "Staging is db-2", id="new-fact", subject="staging.db", created=day(9)
        ),
        "same-day": alice.add("semantic", "Also on day nine", id="same-day", created=day(9)),
    }
    return {k: v.memory.path for k, v in made.items()}


# --- resources/list ---------------------------------------------------------------------


def test_resources_list_pages_newest_first_with_the_scope_rules(
    vault: Vault, scoped: dict[str, str]
) -> None:
    set_page_size(vault, 3)

    async def main() -> None:
        async with connect(vault.root, "alice", "web") as alice:
            pages = await all_pages(alice)
            assert [len(p) for p in pages] == [3, 3, 1]
            # newest first; ties (day 9) by id; superseded 'old-fact' and others' private or
            # other-team memories are not listed
            assert sum(pages, []) == [
                "new-fact",
                "same-day",
                "web-3",
                "web-2",
                "global-1",
                "web-1",
                "alice-self",
            ]
            first = (await alice.list_resources()).resources[0]
            assert (str(first.uri), first.title, first.mime_type) == (
                "memvault://new-fact",
                "Staging is db-2",
                "text/markdown",
            )
            assert first.annotations is not None
            assert first.annotations.last_modified == day(9)
            assert first.annotations.priority == 0.6  # importance 3 of 5
            assert "subject staging.db" in (first.description or "")
        async with connect(vault.root, "carol", "data") as carol:
            assert sum(await all_pages(carol), []) == ["global-1", "data-1"]
        async with connect(vault.root, None) as anonymous:
            assert sum(await all_pages(anonymous), []) == ["global-1"]

    anyio.run(main)


def test_a_page_boundary_survives_a_write_between_pages(
    vault: Vault, scoped: dict[str, str]
) -> None:
    set_page_size(vault, 2)

    async def main() -> None:
        async with connect(vault.root, "alice", "web") as alice:
            first = await alice.list_resources()
            assert [r.name for r in first.resources] == ["new-fact", "same-day"]
            # a newer memory written meanwhile comes at the top, not into the next page
            Vault.open(vault.root, agent="alice", team="web").add(
                "semantic", "Written between pages", id="between", created=day(20)
            )
            second = await alice.list_resources(
                params=PaginatedRequestParams(cursor=first.next_cursor)
            )
            assert [r.name for r in second.resources] == ["web-3", "web-2"]
            assert (await alice.list_resources()).resources[0].name == "between"

    anyio.run(main)


def test_an_invalid_cursor_is_a_protocol_error(vault: Vault, scoped: dict[str, str]) -> None:
    async def main() -> None:
        async with connect(vault.root, "alice", "web") as alice:
            for cursor in ("not-a-cursor", "bm9wZQ", "WzEsMl0"):
                with pytest.raises(MCPError, match="invalid cursor") as err:
                    await alice.list_resources(params=PaginatedRequestParams(cursor=cursor))
                assert err.value.error.code == -32602  # the specification's invalid params
            assert (await alice.list_resources()).resources  # still serving

    anyio.run(main)


def test_a_listed_memory_reads_as_its_file(vault: Vault, scoped: dict[str, str]) -> None:
    async def main() -> None:
        async with connect(vault.root, "alice", "web") as alice:
            listed = (await alice.list_resources()).resources
            for resource in listed:
                content = (await alice.read_resource(str(resource.uri))).contents[0]
                path = vault.root / scoped[resource.name]
                assert content.text == path.read_text(encoding="utf-8")  # type: ignore[union-attr]
            templates = (await alice.list_resource_templates()).resource_templates
            assert "memvault://{id}" in [t.uri_template for t in templates]
            # not listed, still readable by its id; another agent's self memory is not
            superseded = await alice.read_resource("memvault://old-fact")
            assert "db-1" in superseded.contents[0].text  # type: ignore[union-attr]
            with pytest.raises(MCPError, match="no memory"):
                await alice.read_resource("memvault://bob-self")

    anyio.run(main)


# --- notifications/resources/list_changed -----------------------------------------------


async def wait_for(notes: list[Any], count: int, seconds: float = 15) -> None:
    with anyio.fail_after(seconds):
        while sum(isinstance(n, ResourceListChangedNotification) for n in notes) < count:
            await anyio.sleep(0.05)


def changes(notes: list[Any]) -> int:
    return sum(isinstance(n, ResourceListChangedNotification) for n in notes)


def test_list_changed_is_announced_after_a_write_and_when_head_moves(vault: Vault) -> None:
    notes: list[Any] = []

    async def main() -> None:
        async with connect(vault.root, "alice", "web", notes) as alice:
            caps = alice.initialize_result.capabilities  # type: ignore[union-attr]
            assert caps.resources is not None and caps.resources.list_changed is True
            await alice.call_tool("recall", {"query": "anything"})
            await alice.list_resources()
            await anyio.sleep(1.5)  # the background check runs meanwhile: reads change nothing
            assert changes(notes) == 0
            res = await alice.call_tool("remember", {"kind": "fact", "content": "A new fact"})
            assert not res.is_error
            assert changes(notes) == 1  # announced before the tool's result arrived
            new_id = res.structured_content["id"]  # type: ignore[index]
            assert new_id in [r.name for r in (await alice.list_resources()).resources]
            # a write by someone else (the CLI here) moves HEAD: announced within seconds
            proc = await anyio.to_thread.run_sync(
                lambda: run_memvault("--vault", vault.root, "add", "fact", "Written by the CLI")
            )
            assert proc.returncode == 0, proc.stderr
            await wait_for(notes, 2)
            listed = [r.title for r in (await alice.list_resources()).resources]
            assert "Written by the CLI" in listed
            # a failed write changes nothing and announces nothing
            bad = await alice.call_tool(
                "remember", {"kind": "fact", "content": "x", "importance": 9}
            )
            assert bad.is_error
            await anyio.sleep(1.5)
            assert changes(notes) == 2

    anyio.run(main)


def test_a_write_in_progress_is_announced_once_when_it_ends(vault: Vault) -> None:
    """A write moves HEAD, then the write counter, under the vault lock: the background
    check must not announce the half-done state and then the whole (seen once in CI)."""
    from memvault.paths import LOCK_PATH
    from memvault.store.lock import file_lock

    notes: list[Any] = []

    async def main() -> None:
        async with connect(vault.root, "alice", "web", notes) as alice:
            await alice.list_resources()
            with file_lock(vault.root / LOCK_PATH):  # a writer mid-write: HEAD moved
                write(vault.root, "semantic/facts/by-hand.md", fact_text("by-hand"))
                git(vault.root, "add", "-A")
                git(
                    vault.root,
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "commit",
                    "-qm",
                    "by hand",
                )
                await anyio.sleep(2.5)  # two background checks while the lock is held
                assert changes(notes) == 0
            await wait_for(notes, 1)
            await anyio.sleep(1.5)
            assert changes(notes) == 1

    anyio.run(main)


def test_list_changed_reaches_a_2026_client_listening_for_it(vault: Vault) -> None:
    from mcp import Client

    async def main() -> None:
        async with Client(params(vault.root, "alice", "web"), mode="2026-07-28") as client:
            async with client.listen(resources_list_changed=True) as events:
                proc = await anyio.to_thread.run_sync(
                    lambda: run_memvault("--vault", vault.root, "add", "fact", "Heard by listen")
                )
                assert proc.returncode == 0, proc.stderr
                with anyio.fail_after(15):
                    event = await events.__anext__()
                assert type(event).__name__ == "ResourcesListChanged"
            names = [r.title for r in (await client.list_resources()).resources]
            assert "Heard by listen" in names

    anyio.run(main)


# --- tool results and annotations ---------------------------------------------------------


def test_every_tool_returns_its_structured_content_as_its_json_text(
    vault: Vault, tmp_path: Path
) -> None:
    transcript = tmp_path / "session.jsonl"
    shutil.copy(REAL_SESSION, transcript)

    async def main() -> None:
        async with connect(vault.root, "alice", "web") as s:
            fact = await s.call_tool(
                "remember", {"kind": "fact", "content": "The API limit is 100/s", "subject": "api"}
            )
            gone = await s.call_tool("remember", {"kind": "fact", "content": "A wrong fact"})
            proc = await s.call_tool(
                "remember", {"kind": "procedure", "content": "Deploy", "steps": ["Build", "Push"]}
            )
            fact_id = fact.structured_content["id"]  # type: ignore[index]
            calls: list[tuple[str, dict[str, Any]]] = [
                ("log_turn", {"session": "s1", "text": "Hi", "rating": "helpful", "query": "Q?"}),
                ("recall", {"query": "API limit"}),
                ("fact", {"query": "API limit"}),
                ("procedure", {"query": "how do I deploy?"}),
                ("procedure_used", {"id": proc.structured_content["id"], "outcome": "success"}),  # type: ignore[index]
                ("validate", {"statement": "The API limit is 100/s"}),
                ("context", {"query": "API", "budget": 500}),
                ("show", {"id": fact.structured_content["id"]}),  # type: ignore[index]
                ("rescope", {"id": fact_id, "scope": "self", "reason": "mine"}),
                ("forget", {"id": gone.structured_content["id"], "reason": "wrong"}),  # type: ignore[index]
                ("stats", {}),
                ("recent_episodes", {"include_transcripts": True}),
                ("consolidate", {}),
                ("ingest", {"path": str(transcript), "format": "claude"}),
                ("insights", {}),
            ]
            results = {"remember": fact}
            assert not proc.is_error
            for name, args in calls:
                results[name] = await s.call_tool(name, args)
            assert set(results) == ALL_TOOLS
            for name, res in results.items():
                assert not res.is_error, (name, res.content)
                [block] = res.content
                assert res.structured_content is not None, name
                assert json.loads(block.text) == res.structured_content, name  # type: ignore[union-attr]
            context = results["context"].structured_content or {}
            assert context["text"] and "API limit" in context["text"]
            assert results["ingest"].structured_content["added"] == 9  # type: ignore[index]

    anyio.run(main)


def documented_annotations() -> dict[str, str]:
    """docs/agents.md's tools table: tool -> the annotations column."""
    text = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z_]+)` \| ([a-z, -]+) \|", text, flags=re.MULTILINE)
    return dict(rows)


def test_annotations_are_as_documented(vault: Vault) -> None:
    documented = documented_annotations()
    assert set(documented) == ALL_TOOLS

    async def main() -> None:
        async with connect(vault.root, "alice", "web") as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
        for name, doc in documented.items():
            words = {w.strip() for w in doc.split(",")}
            ann = tools[name].annotations
            assert ann is not None and ann.open_world_hint is False, name
            assert ann.read_only_hint is ("read-only" in words), name
            if ann.read_only_hint:
                continue
            assert ann.destructive_hint is ("destructive" in words), name
            assert bool(ann.idempotent_hint) is ("idempotent" in words), name
            assert words <= {"write", "idempotent", "destructive"}, (name, doc)
        assert {n for n, d in documented.items() if d == "read-only"} == READ_ONLY
        # the permissions `integrations install` writes allow exactly the read-only tools
        from memvault.integrations.entries import ASK_TOOLS, READ_ONLY_TOOLS

        assert set(READ_ONLY_TOOLS) == READ_ONLY
        assert set(ASK_TOOLS) <= ALL_TOOLS - READ_ONLY
        assert {n for n, d in documented.items() if "destructive" in d} == DESTRUCTIVE

    anyio.run(main)
