"""The MCP server, driven the way agents drive it: ``memvault mcp`` spawned as a subprocess
and spoken to over stdio with the official SDK's own client.

Effects are checked on the vault (files, commits), not only on the replies.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from memvault import Vault

from helpers import BIN, commit_count, git, run_memvault

# Every test starts a real MCP server over stdio (seconds each): out of the fast lane
# (pytest -m 'not slow'); test_integrations.py still starts one there.
pytestmark = pytest.mark.slow

pytest.importorskip("mcp")

from mcp import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

READ_ONLY = {
    "recall",
    "fact",
    "procedure",
    "validate",
    "context",
    "show",
    "stats",
    "recent_episodes",
    "insights",
}
WRITES = {"remember", "log_turn", "ingest", "procedure_used", "rescope"}
DESTRUCTIVE = {"forget", "consolidate"}
ALL_TOOLS = READ_ONLY | WRITES | DESTRUCTIVE


def server_env() -> dict[str, str]:
    """What the spawned server needs: the test's fake embedder, cache and config folders, git
    isolation."""
    keep = (
        "MEMVAULT_EMBEDDER",
        "MEMVAULT_CACHE_DIR",
        "MEMVAULT_CONFIG_DIR",  # the commands this user allowed (a judge set by the test)
        "GIT_CONFIG_NOSYSTEM",
        "GIT_CONFIG_GLOBAL",
        "PYTHONPATH",
        "HF_HUB_OFFLINE",
    )
    return {k: os.environ[k] for k in keep if k in os.environ}


def server_command(root: Path, agent: str | None, team: str | None, role: str | None) -> list[str]:
    exe = BIN / "memvault"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "memvault"]
    args = ["--vault", str(root)]
    for flag, value in (("--agent", agent), ("--team", team), ("--role", role)):
        if value:
            args += [flag, value]
    return [*cmd, *args, "mcp"]


@asynccontextmanager
async def connect(
    root: Path, agent: str | None = None, team: str | None = None, role: str | None = None
) -> AsyncIterator[ClientSession]:
    cmd = server_command(root, agent, team, role)
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=server_env(), cwd=str(root))
    log = root.parent / f"mcp-stderr-{agent or 'anon'}.log"
    with open(log, "a", encoding="utf-8") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def run(fn: Callable[[], Awaitable[None]]) -> None:
    anyio.run(fn)


async def call(session: ClientSession, tool: str, args: dict[str, Any] | None = None) -> Any:
    """Call a tool that must succeed; returns its JSON data."""
    res = await session.call_tool(tool, args or {})
    text = res.content[0].text if res.content else ""  # type: ignore[union-attr]
    assert not res.is_error, f"{tool}{args}: {text}"
    if res.structured_content is not None:
        data = res.structured_content
        return data["result"] if set(data) == {"result"} else data
    return json.loads(text)


async def fail(session: ClientSession, tool: str, args: dict[str, Any] | None = None) -> str:
    """Call a tool that must fail; returns the error text."""
    res = await session.call_tool(tool, args or {})
    assert res.is_error, f"{tool}{args} should have failed: {res.content}"
    return res.content[0].text  # type: ignore[union-attr]


def ids_in(data: Any) -> set[str]:
    """Every memory id mentioned anywhere in a result (hits, sources, nested memories)."""
    found: set[str] = set()
    if isinstance(data, dict):
        for key, value in data.items():
            if key in ("id", "memory_id") and isinstance(value, str):
                found.add(value)
            found |= ids_in(value)
    elif isinstance(data, list):
        for item in data:
            found |= ids_in(item)
    return found


def text_of(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False)


@pytest.fixture
def root(vault: Vault) -> Path:
    return vault.root


# --- tools and their annotations --------------------------------------------------------


def test_tools_are_listed_with_annotations_and_descriptions(root: Path) -> None:
    async def main() -> None:
        async with connect(root, agent="alice", team="web") as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == ALL_TOOLS
            for name, tool in tools.items():
                ann = tool.annotations
                assert ann is not None, name
                assert ann.read_only_hint is (name in READ_ONLY), name
                if name not in READ_ONLY:
                    assert ann.destructive_hint is (name in DESTRUCTIVE), name
                assert tool.description and len(tool.description) > 60, name
                props = tool.input_schema.get("properties", {})
                assert not {"agent", "team", "role", "author"} & set(props), (
                    f"{name} lets the caller pick an identity"
                )
                for prop, schema in props.items():
                    assert schema.get("description") or prop in ("query", "limit"), (
                        f"{name}.{prop} has no description"
                    )
            remember = tools["remember"].input_schema
            assert set(remember["required"]) == {"kind", "content"}
            assert remember["properties"]["kind"]["enum"] == ["episode", "fact", "procedure"]
            templates = (await s.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == [
                "memvault://{id}",
                "memvault://{id}/turn/{turn}",
            ]

    run(main)


def test_initialize_carries_the_protocol_and_identity(root: Path) -> None:
    async def main() -> None:
        cmd = server_command(root, "alice", "web", None)
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=server_env())
        with open(os.devnull, "w") as devnull:
            async with stdio_client(params, errlog=devnull) as (r, w), ClientSession(r, w) as s:
                init = await s.initialize()
                assert init.server_info.name == "memvault"
                assert (
                    init.instructions
                    and "remember" in init.instructions
                    and "agent=alice" in init.instructions
                )

    run(main)


# --- writing and reading ----------------------------------------------------------------


def test_remember_writes_files_and_commits(root: Path) -> None:
    async def main() -> None:
        async with connect(root, agent="alice", team="web") as s:
            before = commit_count(root)
            fact = await call(
                s,
                "remember",
                {
                    "kind": "fact",
                    "content": "The staging database is db-stg-2",
                    "subject": "staging.db",
                    "tags": ["database"],
                },
            )
            episode = await call(
                s,
                "remember",
                {
                    "kind": "episode",
                    "content": "Deploy failed: the migration locked the users table",
                    "outcome": "failure",
                },
            )
            proc = await call(
                s,
                "remember",
                {
                    "kind": "procedure",
                    "content": "Roll back a failed deploy",
                    "steps": ["Revert the tag", "Redeploy"],
                    "trigger": ["rollback"],
                },
            )
            assert commit_count(root) == before + 3
            assert (
                fact["path"].startswith("semantic/facts/")
                and fact["scope"] == "team"
                and not fact["inbox"]
            )
            assert episode["path"].startswith("episodic/") and proc["path"].startswith(
                "procedural/workflows/"
            )
            newer = await call(
                s,
                "remember",
                {
                    "kind": "fact",
                    "content": "The staging database is db-stg-3",
                    "subject": "staging.db",
                },
            )
            assert newer["superseded"] == [fact["id"]]
            shown = await call(s, "show", {"id": proc["id"]})
            assert (
                shown["steps"] == ["Revert the tag", "Redeploy"]
                and shown["agent"] == "alice"
                and shown["team"] == "web"
            )
        vault = Vault.open(root, agent="alice", team="web")
        assert vault.get(fact["id"]).status == "superseded"
        assert vault.get(episode["id"]).get("outcome") == "failure"
        assert "memvault: add semantic" in git(root, "log", "--format=%s")

    run(main)


def test_recall_fact_procedure_validate_context(root: Path) -> None:
    async def main() -> None:
        async with connect(root, agent="alice", team="web") as s:
            fact = await call(
                s,
                "remember",
                {
                    "kind": "fact",
                    "content": "The API rate limit is 100 requests per second",
                    "subject": "api.rate-limit",
                },
            )
            ep = await call(
                s,
                "remember",
                {
                    "kind": "episode",
                    "content": "Deploy failed because the migration locked the users table",
                    "outcome": "failure",
                },
            )
            proc = await call(
                s,
                "remember",
                {
                    "kind": "procedure",
                    "content": "Release a new version",
                    "steps": ["Run the tests", "Tag the release", "Push the tag"],
                    "trigger": ["release"],
                },
            )
            assert ep["id"] in ids_in(
                await call(s, "recall", {"query": "what happened with the deploy migration?"})
            )
            assert fact["id"] in ids_in(await call(s, "fact", {"query": "API rate limit"}))
            only_facts = await call(s, "recall", {"query": "rate limit deploy", "kind": "fact"})
            assert only_facts["hits"] and {h["type"] for h in only_facts["hits"]} == {"semantic"}
            assert proc["id"] in ids_in(
                await call(s, "procedure", {"query": "how do I release a new version?"})
            )
            verdict = await call(
                s, "validate", {"statement": "The API rate limit is 100 requests per second"}
            )
            assert fact["id"] in ids_in(verdict) or fact["id"] in text_of(verdict)
            res = await s.call_tool("context", {"query": "deploy and release", "budget": 800})
            assert not res.is_error
            block = res.content[0].text  # type: ignore[union-attr]
            assert "Release a new version" in block or proc["id"] in block
            # warm: a second query is fast (no process start, no model load)
            start = time.perf_counter()
            for _ in range(5):
                await call(s, "recall", {"query": "rate limit"})
            assert (time.perf_counter() - start) / 5 < 1.0

    run(main)


def test_validate_asks_the_judge_unless_told_not_to(root: Path, tmp_path: Path) -> None:
    """The judge argument reaches the vault: the configured judge command gives the verdict
    by default, and ``judge: false`` keeps to the built-in rules."""
    script = tmp_path / "judge.py"
    script.write_text(
        "import json, sys\n"
        "json.load(sys.stdin)\n"
        'print(json.dumps({"verdict": "unknown", "why": "the judge is not sure"}))\n',
        encoding="utf-8",
    )
    vault = Vault.open(root, agent="alice", team="web")
    vault.add(
        "semantic",
        "We chose PostgreSQL over MySQL for the main application database, mainly for JSONB.",
        subject="db.primary",
        category="decisions",
        id="f-db",
    )
    vault.set_config("validate.judge_command", f"{sys.executable} {script}", "use a judge")
    claim = {"statement": "MySQL is the primary database."}

    async def main() -> None:
        async with connect(root, agent="alice", team="web") as s:
            judged = await call(s, "validate", claim)
            assert judged["verdict"] == "unknown" and "the judge is not sure" in judged["why"]
            assert judged["judge"]["status"] == "used"
            assert judged["judge"]["builtin_verdict"] == "contradicted"
            plain = await call(s, "validate", {**claim, "judge": False})
            assert plain["verdict"] == "contradicted" and plain.get("judge") is None
            assert "f-db" in ids_in(plain)

    run(main)


# --- identity and scopes ----------------------------------------------------------------


def test_another_agents_self_memory_is_never_returned(root: Path) -> None:
    async def main() -> None:
        async with connect(root, agent="alice", team="web") as a:
            secret = await call(
                a,
                "remember",
                {
                    "kind": "fact",
                    "content": "Alice's private launch codename is BLUEBIRD",
                    "scope": "self",
                    "subject": "alice.codename",
                },
            )
            await call(
                a,
                "log_turn",
                {
                    "session": "alice-notes",
                    "text": "Shared plan",
                    "query": "plan?",
                    "rating": "helpful",
                },
            )
            shared = await call(
                a,
                "remember",
                {
                    "kind": "fact",
                    "content": "The team codename is REDWOOD",
                    "subject": "team.codename",
                },
            )
        sid = secret["id"]
        async with connect(root, agent="bob", team="web") as b:
            attempts = [
                ("show", {"id": sid}),
                ("remember", {"kind": "fact", "content": "x", "agent": "alice"}),
                ("recall", {"query": "codename", "agent": "alice"}),
                ("insights", {"by_agent": "alice", "role": "librarian"}),
            ]
            for tool, args in attempts:
                await fail(b, tool, args)
            for tool, args in (
                ("stats", {}),
                ("recent_episodes", {"last": 100, "include_transcripts": True}),
                ("insights", {"by_agent": "alice"}),
                ("insights", {}),
                ("consolidate", {}),
            ):
                data = await call(b, tool, args)
                assert sid not in text_of(data) and "BLUEBIRD" not in text_of(data), tool
            assert (await call(b, "stats"))["by_scope"].get("self", 0) == 0
            with pytest.raises(Exception, match="no memory"):
                await b.read_resource(f"memvault://{sid}")
            assert (
                "REDWOOD" in (await b.read_resource(f"memvault://{shared['id']}")).contents[0].text
            )  # type: ignore[union-attr]
            text = await fail(b, "forget", {"id": sid, "reason": "bob tries"})
            assert "no memory" in text
        assert Vault.open(root, agent="alice").get(sid).id == sid  # still there

    run(main)


def test_search_tools_never_leak_another_agents_self_memory(root: Path) -> None:
    async def main() -> None:
        async with connect(root, agent="alice", team="web") as a:
            secret = await call(
                a,
                "remember",
                {
                    "kind": "fact",
                    "content": "Alice's private launch codename is BLUEBIRD",
                    "scope": "self",
                    "subject": "alice.codename",
                },
            )
        async with connect(root, agent="bob", team="web") as b:
            for tool, args in (
                (
                    "recall",
                    {
                        "query": "private launch codename BLUEBIRD",
                        "include_archive": True,
                        "limit": 50,
                    },
                ),
                ("recall", {"query": "when did alice pick the codename BLUEBIRD?", "limit": 50}),
                ("fact", {"query": "BLUEBIRD codename", "limit": 50}),
                ("procedure", {"query": "BLUEBIRD", "limit": 50}),
                ("validate", {"statement": "Alice's private launch codename is BLUEBIRD"}),
                ("context", {"query": "BLUEBIRD launch codename", "budget": 5000}),
            ):
                res = await b.call_tool(tool, args)
                body = res.content[0].text  # type: ignore[union-attr]
                assert secret["id"] not in body and "BLUEBIRD" not in body.replace(
                    args.get("query", args.get("statement", "")), ""
                ), tool
        async with connect(root, agent="alice", team="web") as a:
            assert secret["id"] in ids_in(await call(a, "fact", {"query": "BLUEBIRD codename"}))

    run(main)


def test_team_scope_and_global_writes(root: Path) -> None:
    async def main() -> None:
        async with connect(root, agent="alice", team="web") as a:
            team = await call(
                a,
                "remember",
                {
                    "kind": "fact",
                    "content": "Web deploys go out on Tuesdays",
                    "subject": "web.deploy-day",
                },
            )
            proposed = await call(
                a,
                "remember",
                {
                    "kind": "fact",
                    "content": "The company is called Acme",
                    "scope": "global",
                    "subject": "company.name",
                },
            )
            assert (
                proposed["inbox"]
                and proposed["status"] == "proposed"
                and proposed["path"].startswith("inbox/")
            )
        async with connect(root, agent="carol", team="data") as c:
            await fail(c, "show", {"id": team["id"]})
        async with connect(root, agent="lib", role="librarian") as lib:
            official = await call(
                lib,
                "remember",
                {
                    "kind": "fact",
                    "content": "Support hours are 9 to 5 CET",
                    "scope": "global",
                    "subject": "support.hours",
                },
            )
            assert not official["inbox"] and official["status"] == "active"
        async with connect(root, agent="carol", team="data") as c:
            assert (await call(c, "show", {"id": official["id"]}))["scope"] == "global"
            text = await fail(c, "forget", {"id": official["id"], "reason": "not mine"})
            assert "librarian" in text

    run(main)


def test_self_scope_needs_an_agent(root: Path) -> None:
    async def main() -> None:
        async with connect(root) as anon:
            text = await fail(
                anon, "remember", {"kind": "fact", "content": "mine", "scope": "self"}
            )
            assert "needs an agent identity" in text

    run(main)


# --- bad input --------------------------------------------------------------------------


def test_malformed_arguments_return_errors_and_the_server_keeps_answering(root: Path) -> None:
    async def main() -> None:
        async with connect(root, agent="alice") as s:
            cases: list[tuple[str, dict[str, Any], str]] = [
                ("remember", {}, "kind: Field required"),
                (
                    "remember",
                    {"kind": "thought", "content": "x"},
                    "kind: Input should be 'episode', 'fact' or 'procedure'",
                ),
                (
                    "remember",
                    {"kind": "fact", "content": ""},
                    "content: String should have at least 1 character",
                ),
                (
                    "remember",
                    {"kind": "fact", "content": "x", "importance": 9},
                    "importance: Input should be less than or equal to 5",
                ),
                ("remember", {"kind": "fact", "content": "x", "tags": "not-a-list"}, "tags"),
                (
                    "remember",
                    {"kind": "fact", "content": "x", "valid_from": "next tuesday"},
                    "valid_from",
                ),
                (
                    "remember",
                    {"kind": "fact", "content": "x", "scop": "self"},
                    "unknown argument(s) for remember: scop",
                ),
                (
                    "remember",
                    {
                        "kind": "fact",
                        "content": "token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
                    },
                    "looks like a GitHub token",
                ),
                ("show", {"id": "../../etc/passwd"}, "not a memory id"),
                ("show", {"id": "no-such-memory"}, "no memory with id 'no-such-memory'"),
                ("forget", {"id": "no-such-memory", "reason": "x"}, "reason"),
                ("recent_episodes", {"last": "many"}, "last"),
                ("recall", {"query": "x", "since": "the dawn of time"}, "since"),
                ("ingest", {"path": "/no/such/file.jsonl"}, "file not found"),
                ("log_turn", {"session": "s", "text": "x", "rating": "great"}, "rating"),
                ("no_such_tool", {}, "no_such_tool"),
            ]
            for tool, args, expected in cases:
                text = await fail(s, tool, args)
                assert expected in text, (tool, args, text)
                assert "Traceback" not in text
                assert (await call(s, "stats"))["total"] >= 0  # still alive after every bad call
            ok = await call(s, "remember", {"kind": "fact", "content": "Still alive"})
            assert ok["id"]

    run(main)


def test_garbage_on_the_wire_does_not_kill_the_server(root: Path) -> None:
    env = {
        **server_env(),
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/tmp"),
    }
    proc = subprocess.Popen(
        server_command(root, "alice", None, None),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    assert proc.stdin and proc.stdout

    def send(obj: Any) -> None:
        assert proc.stdin
        proc.stdin.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
        proc.stdin.flush()

    try:
        send("this is not json")
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        )
        replies = [json.loads(proc.stdout.readline())]
        while not any(r.get("id") == 1 for r in replies):
            replies.append(json.loads(proc.stdout.readline()))
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "stats", "arguments": "not an object"},
            }
        )
        send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "stats", "arguments": {}},
            }
        )
        answered: dict[int, Any] = {}
        while 3 not in answered:
            msg = json.loads(proc.stdout.readline())
            if "id" in msg:
                answered[msg["id"]] = msg
        assert "error" in answered[2] or answered[2].get("result", {}).get("isError")
        assert answered[3]["result"]["isError"] is False
        # a clean end: closing stdin ends the server with exit code 0
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_clean_session_end_leaves_no_process_and_a_clean_vault(root: Path) -> None:
    async def main() -> None:
        async with connect(root, agent="alice") as s:
            await call(s, "remember", {"kind": "episode", "content": "Session one"})

    start = time.perf_counter()
    run(main)
    assert time.perf_counter() - start < 30
    assert git(root, "status", "--porcelain").strip() == ""
    assert not (root / ".git" / "index.lock").exists()


# --- resources --------------------------------------------------------------------------


def test_memories_are_resources(root: Path) -> None:
    async def main() -> None:
        async with connect(root, agent="alice") as s:
            m = await call(
                s,
                "remember",
                {"kind": "fact", "content": "Resources work", "title": "Resource test"},
            )
            res = await s.read_resource(f"memvault://{m['id']}")
            content = res.contents[0]
            assert content.mime_type == "text/markdown"
            assert content.text == (root / m["path"]).read_text(encoding="utf-8")  # type: ignore[union-attr]
            with pytest.raises(Exception, match="no memory"):
                await s.read_resource("memvault://nope")
            assert (await call(s, "stats"))["total"] == 1  # alive

    run(main)


# --- the other tools --------------------------------------------------------------------


def test_log_turn_ingest_and_insights(root: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "chat.jsonl"
    transcript.write_text(
        "\n".join(
            json.dumps(r)
            for r in (
                {
                    "role": "user",
                    "content": "How do we price Basic?",
                    "timestamp": "2026-01-05T10:00:00Z",
                },
                {
                    "role": "assistant",
                    "content": "At $12.",
                    "timestamp": "2026-01-05T10:00:05Z",
                    "rating": "helpful",
                },
            )
        )
        + "\ngarbage\n",
        encoding="utf-8",
    )

    async def main() -> None:
        async with connect(root, agent="cfo") as s:
            logged = await call(
                s,
                "log_turn",
                {
                    "session": "pricing",
                    "text": "Raise to $12.",
                    "query": "What about pricing?",
                    "rating": "not_helpful",
                    "context": "pricing",
                },
            )
            assert logged["added"] and logged["id"] == "session-pricing"
            before = commit_count(root)
            first = await call(s, "ingest", {"path": str(transcript), "session": "imported"})
            assert first["added"] == 2 and first["problems"] == [
                f"{transcript}:3: invalid JSON: Expecting value (column 1)"
            ]
            again = await call(s, "ingest", {"path": str(transcript), "session": "imported"})
            assert again["added"] == 0 and again["commit"] is None
            assert commit_count(root) == before + 1
            data = await call(s, "insights", {"topic": "pricing"})
            assert data["summary"]["interactions"] == 2
            assert data["summary"]["by_rating"] == {"helpful": 1, "neutral": 0, "not_helpful": 1}
            episodes = await call(s, "recent_episodes", {"include_transcripts": True})
            assert {"session-pricing", "session-imported"} <= {
                e["id"] for e in episodes["episodes"]
            }

    run(main)


def test_forget_and_consolidate(root: Path) -> None:
    vault = Vault.open(root, agent="alice")
    old = vault.add(
        "episodic", "An ancient, unimportant episode", importance=1, created="2020-01-01T00:00:00Z"
    ).memory

    async def main() -> None:
        async with connect(root, agent="alice") as s:
            gone = await call(s, "remember", {"kind": "fact", "content": "Wrong fact"})
            before = commit_count(root)
            res = await call(s, "forget", {"id": gone["id"], "reason": "it was wrong"})
            assert res["commit"] and not (root / gone["path"]).exists()
            assert commit_count(root) == before + 1
            assert "forget" in git(root, "log", "-1", "--format=%s")

            before = commit_count(root)
            plan = await call(s, "consolidate")
            assert plan["applied"] is False and plan["commit"] is None
            assert any(a["id"] == old.id and "archive" in a["what"] for a in plan["actions"])
            assert commit_count(root) == before
            assert (root / old.path).exists()
            done = await call(s, "consolidate", {"apply": True})
            assert done["applied"] is True and done["commit"]
            assert commit_count(root) == before + 1
            assert not (root / old.path).exists() and (root / "archive" / old.path).exists()

    run(main)


def test_writes_serialise_with_the_cli_and_other_servers(root: Path) -> None:
    async def main() -> None:
        async with (
            connect(root, agent="alice", team="web") as a,
            connect(root, agent="bob", team="web") as b,
        ):
            before = commit_count(root)

            async def burst(s: ClientSession, who: str) -> None:
                for i in range(5):
                    await call(
                        s, "remember", {"kind": "episode", "content": f"{who} did thing {i}"}
                    )

            async def cli_burst() -> None:
                for i in range(3):
                    proc = await anyio.to_thread.run_sync(
                        lambda i=i: run_memvault("--vault", root, "add", "fact", f"CLI fact {i}")
                    )
                    assert proc.returncode == 0, proc.stderr

            async with anyio.create_task_group() as tg:
                tg.start_soon(burst, a, "alice")
                tg.start_soon(burst, b, "bob")
                tg.start_soon(cli_burst)
            assert commit_count(root) == before + 13
            assert git(root, "status", "--porcelain").strip() == ""
            # the server sees what the CLI wrote, without a restart
            assert (await call(a, "stats"))["by_type"]["semantic"] == 3

    run(main)


def test_config_changes_reach_a_running_server(root: Path) -> None:
    async def main() -> None:
        async with connect(root, agent="alice") as s:
            await call(s, "remember", {"kind": "fact", "content": "before pause"})
            proc = await anyio.to_thread.run_sync(
                lambda: run_memvault("--vault", root, "pause", "--scope", "team")
            )
            assert proc.returncode == 0, proc.stderr
            text = await fail(s, "remember", {"kind": "fact", "content": "during pause"})
            assert "paused" in text
            await call(
                s, "remember", {"kind": "fact", "content": "private is fine", "scope": "self"}
            )

    run(main)


def test_importing_the_cli_does_not_import_mcp() -> None:
    code = (
        "import sys, memvault.cli; "
        "print([m for m in ('mcp', 'memvault.mcp_server') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_hand_edits_reach_a_running_server(root: Path) -> None:
    """The server watches the trees: a file edited by hand is found by the next calls (a
    warm call checks the files that changed, not every file of the vault)."""

    async def top(s: ClientSession, query: str) -> list[str]:
        data = await call(s, "recall", {"query": query})
        return [h["id"] for h in data["hits"]][:1]

    async def eventually(s: ClientSession, query: str, ok: Callable[[list[str]], bool]) -> bool:
        for _ in range(100):  # file events arrive within milliseconds; allow a slow machine
            if ok(await top(s, query)):
                return True
            await anyio.sleep(0.03)
        return False

    def hand(mid: str, body: str) -> str:
        return f"---\nid: {mid}\ntype: semantic\n---\n\n{body}\n"

    async def main() -> None:
        async with connect(root, agent="alice") as s:
            await call(s, "remember", {"kind": "fact", "content": "The API rate limit is 100/s"})
            await call(s, "recall", {"query": "rate limit"})
            path = root / "semantic" / "facts" / "cat.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(hand("cat", "The office cat is called Biscuit"), encoding="utf-8")
            assert await eventually(s, "office cat Biscuit", lambda ids: ids == ["cat"])
            time.sleep(0.01)
            path.write_text(hand("cat", "The office cat is called Waffle"), encoding="utf-8")
            assert await eventually(s, "office cat Waffle", lambda ids: ids == ["cat"])
            path.unlink()
            assert await eventually(s, "office cat Waffle", lambda ids: "cat" not in ids)

    run(main)


def test_procedure_used_updates_the_procedure(root: Path) -> None:
    async def main() -> None:
        async with connect(root, agent="alice", team="web") as s:
            proc = await call(
                s,
                "remember",
                {"kind": "procedure", "content": "Roll back", "steps": ["Revert", "Redeploy"]},
            )
            before = commit_count(root)
            first = await call(
                s, "procedure_used", {"id": proc["id"], "outcome": "failure", "note": "no tag"}
            )
            second = await call(s, "procedure_used", {"id": proc["id"], "outcome": "success"})
            assert (first["times_used"], first["success_rate"]) == (1, 0.0)
            assert (second["times_used"], second["success_rate"]) == (2, 0.5)
            assert commit_count(root) == before + 2
            assert "failure: no tag" in git(root, "log", "-2", "--format=%s").splitlines()[1]
            bad = await s.call_tool("procedure_used", {"id": proc["id"], "outcome": "maybe"})
            assert bad.is_error
            assert commit_count(root) == before + 2

    run(main)


def test_log_turn_keeps_a_turn_with_a_connection_string_redacted(root: Path) -> None:
    conn = "postgresql://blog:hunter22secret@db.internal:5432/blog"

    async def main() -> None:
        async with connect(root, agent="alice", team="web") as s:
            res = await call(
                s,
                "log_turn",
                {
                    "session": "flask-setup",
                    "text": f"Set SQLALCHEMY_DATABASE_URI = '{conn}' in config.py, then migrate.",
                    "query": "Where does the database URL go?",
                },
            )
            assert res["added"] and len(res["notes"]) == 1
            note = res["notes"][0]
            assert "redacted 1 secret-looking span(s) in 1 turn(s) (1 password in URL)" in note
            assert "--allow-secrets" not in note
            turns = await call(s, "show", {"id": f"{res['id']}"})
            text = text_of(turns)
            assert "[secret redacted: password in URL]db.internal:5432/blog" in text
            assert "hunter22secret" not in text and "then migrate" in text

    run(main)
    assert "hunter22secret" not in git(root, "log", "--all", "-p")


def test_a_secret_refusal_speaks_mcp_not_cli(root: Path) -> None:
    async def main() -> None:
        async with connect(root, agent="alice", team="web") as s:
            before = commit_count(root)
            res = await s.call_tool(
                "remember", {"kind": "fact", "content": "the key is AKIAABCDEFGHIJKLMNOP"}
            )
            text = res.content[0].text  # type: ignore[union-attr]
            assert res.is_error and "refused" in text
            assert "--allow-secrets" not in text and "can't override" in text
            assert commit_count(root) == before

    run(main)


def test_an_unreadable_line_gets_a_json_rpc_error_and_the_server_keeps_answering(
    root: Path,
) -> None:
    """Over the real stdio pipe, as a client writes: a line that is not JSON gets -32700
    Parse error, JSON that is no request gets -32600, both with id null, and the next request
    is answered as usual."""
    lines = [
        "{not json",
        '{"jsonrpc": "2.0", "id": 1, "method": "ping"}',
        "[1, 2]",
        '{"jsonrpc": "2.0", "id": 2, "method": "ping"}',
    ]
    cmd = server_command(root, "alice", None, None)
    proc = subprocess.Popen(
        [*cmd[:-1], "mcp", "--no-warm"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **server_env()},
    )
    assert proc.stdin is not None and proc.stdout is not None
    timer = threading.Timer(60, proc.kill)  # a server that never answers fails, not hangs
    timer.start()
    try:
        proc.stdin.write("".join(line + "\n" for line in lines))
        proc.stdin.flush()
        answers = [json.loads(proc.stdout.readline()) for _ in lines]
        proc.stdin.close()
        stderr = proc.stderr.read() if proc.stderr else ""
        code = proc.wait()
    finally:
        timer.cancel()
    errors = [a for a in answers if "error" in a]
    assert [(a["id"], a["error"]["code"]) for a in errors] == [(None, -32700), (None, -32600)]
    assert errors[0]["error"]["message"].startswith("Parse error")
    assert errors[1]["error"]["message"].startswith("Invalid Request")
    assert sorted(a["id"] for a in answers if "result" in a) == [1, 2]
    assert code == 0 and "unreadable line (-32700)" in stderr
