"""The person's controls over what is captured (docs/privacy.md): a scope on every write
path, pause per agent, channel and scope, rescope, and what was forgotten staying visible.

Real git, SQLite, Chroma (fake embedder), the real MCP client over stdio, the inspector
over HTTP and the real ``memvault`` hook command.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ui_support

from memvault import PermissionDeniedError, ValidationError, Vault

from helpers import commit_count, git, is_clean, last_message, run_memvault

SECRET = "zanzibar phone number 0777123456"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A vault with two agents of one team: alice and bob."""
    return Vault.init(tmp_path / "v").root


def alice(root: Path) -> Vault:
    return Vault.open(root, agent="alice", team="web")


def bob(root: Path) -> Vault:
    return Vault.open(root, agent="bob", team="web")


def transcript(path: Path, *texts: str) -> Path:
    lines = [{"role": "user", "content": t, "timestamp": "2026-01-05T10:00:00Z"} for t in texts]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture
def serve() -> Iterator[Any]:
    yield from ui_support.serving()


# --- a scope on every write path -----------------------------------------------------------


def test_a_self_session_is_invisible_to_a_teammate_through_cli_api_and_inspector(
    root: Path, cli: Any, serve: Any, tmp_path: Path
) -> None:
    as_alice = ("--vault", root, "--agent", "alice", "--team", "web")
    as_bob = ("--vault", root, "--agent", "bob", "--team", "web")
    r = cli(*as_alice, "log", "-S", "dm-carol", "--scope", "self", SECRET)
    assert r.code == 0, r.err
    tid, rel = r.out.strip().split("\t")
    r = cli(*as_alice, "ingest", transcript(tmp_path / "t.jsonl", f"again: {SECRET}"),
            "--session", "dm-dave", "--scope", "self")  # fmt: skip
    assert r.code == 0, r.err
    # and one shared session, so that "invisible" is not "nothing works"
    assert cli(*as_alice, "log", "-S", "standup", "zanzibar standup notes").code == 0
    mine = alice(root)
    assert {m.id for m in mine.memories()} >= {tid, "session-dm-dave", "session-standup"}
    assert mine.get(tid).scope == "self" and mine.get(tid).agent == "alice"
    # CLI
    assert cli(*as_bob, "show", tid).code == 1
    listed = json.loads(cli(*as_bob, "list", "--json").out)
    assert {m["id"] for m in listed} == {"session-standup"}
    found = cli(*as_bob, "recall", "zanzibar phone number", "--json", "--min-score", "0")
    assert "0777123456" not in found.out and "session-standup" in found.out
    assert "0777123456" in cli(*as_alice, "recall", "zanzibar phone", "--min-score", "0").out
    # API
    theirs = bob(root)
    with pytest.raises(Exception, match="no memory"):
        theirs.get(tid)
    assert {m.id for m in theirs.memories()} == {"session-standup"}
    hits = theirs.recall("zanzibar phone number", min_score=0.0).hits
    assert {h.id.split("#")[0] for h in hits} == {"session-standup"}
    with pytest.raises(PermissionDeniedError, match="another agent"):
        theirs.log("dm-carol", "user", "bob writes into alice's session")
    # the inspector, serving bob
    ui = serve(theirs)
    assert ui.client.get(f"/m/{tid}").status_code == 404
    page = ui.client.get("/search", params={"q": "zanzibar phone number"}).text
    assert "0777123456" not in page and "dm-carol" not in page
    assert "dm-carol" not in ui.client.get("/").text
    assert is_clean(root) and rel.startswith("episodic/")


def test_the_default_scope_of_captured_sessions_is_configurable(root: Path) -> None:
    mine = alice(root)
    assert mine.log("s1", "user", "hello").memory.scope == "team"  # defaults.scope
    mine.set_config("capture.scope", "self", "capture sessions as self")
    assert alice(root).log("s2", "user", "hello").memory.scope == "self"
    assert alice(root).log("s3", "user", "hi", scope="team").memory.scope == "team"
    # turns added to a session keep its scope; naming another one says how to move it
    with pytest.raises(ValidationError, match="rescope session-s2 --scope team"):
        alice(root).log("s2", "user", "more", scope="team")
    with pytest.raises(PermissionDeniedError, match="needs an agent identity"):
        Vault.open(root).log("s4", "user", "nobody could read this")


def test_a_global_session_goes_to_review_unless_a_librarian_logs_it(root: Path) -> None:
    proposed = alice(root).log("all-hands", "user", "for everyone", scope="global")
    assert proposed.memory.path.startswith("inbox/") and proposed.memory.status == "proposed"
    assert "proposed in inbox/" in last_message(root)
    assert "session-all-hands" not in {m.id for m in bob(root).memories()}
    lib = Vault.open(root, agent="lib", role="librarian").log("town", "user", "hi", scope="global")
    assert not lib.memory.path.startswith("inbox/") and lib.memory.status == "active"


@pytest.mark.slow
def test_mcp_log_turn_and_ingest_take_a_scope_and_self_stays_private(
    root: Path, tmp_path: Path
) -> None:
    from test_mcp import call, connect, fail, run

    file = transcript(tmp_path / "chat.jsonl", f"ingested: {SECRET}")

    async def go() -> None:
        async with connect(root, agent="alice", team="web") as s:
            res = await call(s, "log_turn", {"session": "dm", "text": SECRET, "scope": "self"})
            assert res["scope"] == "self"
            await call(s, "ingest", {"path": str(file), "session": "dm2", "scope": "self"})
            text = await fail(s, "log_turn", {"session": "x", "text": "t", "scope": "everyone"})
            assert "scope" in text
        async with connect(root, agent="bob", team="web") as s:
            assert "no memory" in await fail(s, "show", {"id": "session-dm"})
            found = await call(s, "recall", {"query": "zanzibar phone number", "min_score": 0})
            assert "0777123456" not in json.dumps(found)

    run(go)
    assert alice(root).get("session-dm2").scope == "self"


# --- rescope -------------------------------------------------------------------------------


def test_rescope_moves_a_memory_in_one_commit_with_adds_rules(root: Path, cli: Any) -> None:
    mine = alice(root)
    mine.log("dm", "user", SECRET)  # team by default: bob sees it
    assert bob(root).get("session-dm")
    before = commit_count(root)
    r = cli("--vault", root, "--agent", "alice", "--team", "web", "rescope", "session-dm",
            "--scope", "self", "--reason", "a direct message")  # fmt: skip
    assert r.code == 0, r.err
    assert commit_count(root) == before + 1 and is_clean(root)
    assert last_message(root) == "memvault: rescope session-dm: team -> self: a direct message"
    with pytest.raises(Exception, match="no memory"):
        bob(root).get("session-dm")
    # bob can't take alice's team memory as his own; global goes to review
    mine.add("semantic", "The office opens at 8", id="office")
    with pytest.raises(PermissionDeniedError, match="written by agent alice"):
        bob(root).rescope("office", "self")
    moved = alice(root).rescope("office", "global")
    assert moved.inbox and moved.memory.path == "inbox/semantic/facts/office.md"
    assert not (root / "semantic/facts/office.md").exists()
    with pytest.raises(ValidationError, match="expected self|team|global"):
        alice(root).rescope("office", "everyone")


# --- pause ---------------------------------------------------------------------------------


def test_a_paused_agent_is_refused_on_every_path_while_another_is_not(
    root: Path, cli: Any, tmp_path: Path
) -> None:
    assert cli("--vault", root, "pause", "--agent", "bob", "--why", "on leave").code == 0
    assert last_message(root) == "memvault: pause capture for agent bob: on leave"
    assert Vault.open(root).config.get("paused") == [{"agent": "bob"}]
    file = transcript(tmp_path / "t.jsonl", "a captured turn")
    before = commit_count(root)
    as_bob = ("--vault", root, "--agent", "bob", "--team", "web")
    refusals = [
        cli(*as_bob, "log", "-S", "s", "a turn"),
        cli(*as_bob, "add", "fact", "a fact"),
        cli(*as_bob, "ingest", file, "--session", "t"),
    ]
    for r in refusals:
        assert r.code == 1 and r.err.count("\n") == 1, r.err
        assert "capture is paused for agent 'bob'" in r.err and "resume --agent bob" in r.err
    with pytest.raises(PermissionDeniedError, match="paused for agent 'bob'"):
        bob(root).log_turn("s", "rated reply", rating="helpful")
    # the Claude Code hook: one line on stderr, exit 0, nothing saved
    payload = json.dumps({"transcript_path": str(file), "session_id": "h1"})
    hook = run_memvault(*as_bob, "-q", "ingest", "--hook", "--format", "claude", "--scope",
                        "self", "--channel", "claude-code", stdin=payload)  # fmt: skip
    assert hook.returncode == 0 and "not saved" in hook.stderr and "paused" in hook.stderr
    assert hook.stderr.count("\n") == 1
    assert commit_count(root) == before and is_clean(root)
    # alice goes on, on every path
    as_alice = ("--vault", root, "--agent", "alice", "--team", "web")
    assert cli(*as_alice, "log", "-S", "s", "a turn").code == 0
    assert cli(*as_alice, "add", "fact", "a fact by alice").code == 0
    assert cli(*as_alice, "ingest", file, "--session", "t").code == 0
    assert cli("--vault", root, "resume", "--agent", "bob").code == 0
    assert cli(*as_bob, "log", "-S", "s2", "back").code == 0


@pytest.mark.slow
def test_a_paused_agent_is_refused_over_mcp_while_another_is_not(root: Path) -> None:
    from test_mcp import call, connect, fail, run

    bob(root).pause(agent="bob")

    async def go() -> None:
        async with connect(root, agent="bob", team="web") as s:
            for tool, args in (
                ("log_turn", {"session": "s", "text": "a turn"}),
                ("remember", {"kind": "fact", "content": "a fact"}),
            ):
                assert "capture is paused for agent 'bob'" in await fail(s, tool, args)
        async with connect(root, agent="alice", team="web") as s:
            await call(s, "log_turn", {"session": "s", "text": "a turn"})

    run(go)


def test_pause_by_channel_and_by_combination(root: Path, cli: Any) -> None:
    v = Vault.open(root)
    assert v.pause(channel="slack:#hr") and v.pause(agent="bob", scope="team")
    again = cli("--vault", root, "pause", "--channel", "slack:#hr")
    assert again.out.endswith("(it already was)\n")
    with pytest.raises(PermissionDeniedError, match="channel 'slack:#hr'"):
        alice(root).log("hr", "user", "salary talk", channel="slack:#hr")
    with pytest.raises(PermissionDeniedError, match="channel 'slack:#hr'"):
        alice(root).add("semantic", "salary bands", channel="slack:#hr")
    alice(root).log("ops", "user", "deploy talk", channel="slack:#ops")
    with pytest.raises(PermissionDeniedError, match="agent 'bob', scope 'team'"):
        bob(root).log("b1", "user", "team talk")
    assert bob(root).log("b2", "user", "his own notes", scope="self").commit  # not matched
    listed = json.loads(cli("--vault", root, "pause", "--list", "--json").out)
    assert listed == [
        {"agent": None, "channel": "slack:#hr", "scope": None},
        {"agent": "bob", "channel": None, "scope": "team"},
    ]
    shown = cli("--vault", root, "pause", "--list").out
    assert "memvault resume --agent bob --scope team" in shown
    r = cli("--vault", root, "resume", "--agent", "bob")  # not that rule: nothing lifted
    assert "was not paused" in r.out and "still paused: agent 'bob', scope 'team'" in r.err
    assert cli("--vault", root, "pause").code == 1  # nothing named


def test_resume_with_an_unknown_scope_is_a_usage_error_listing_the_scopes(
    root: Path, cli: Any
) -> None:
    r = cli("--vault", root, "resume", "--scope", "foo")
    assert r.code == 2 and "'foo' is not one of 'self', 'team', 'global'" in r.err
    with pytest.raises(ValidationError, match="expected self|team|global, got 'foo'"):
        Vault.open(root).resume("foo")


def test_the_installed_hooks_capture_sessions_as_self_and_say_so(
    root: Path, cli: Any, tmp_path: Path
) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    r = cli("--vault", root, "--agent", "alice", "integrations", "install", "claude-code",
            "--dir", project, "--command", "memvault")  # fmt: skip
    assert r.code == 0, r.err
    assert "sessions are saved at PreCompact and SessionEnd with scope self" in r.err
    settings = json.loads((project / ".claude/settings.json").read_text())
    command = settings["hooks"]["SessionEnd"][0]["hooks"][0]["command"]
    assert "--scope self --channel claude-code" in command
    r = cli("--vault", root, "--team", "web", "integrations", "install", "claude-code", "--dir",
            project, "--command", "memvault", "--capture-scope", "team", "--json")  # fmt: skip
    assert json.loads(r.out)["capture_scope"] == "team"
    settings = json.loads((project / ".claude/settings.json").read_text())
    hooks = settings["hooks"]["SessionEnd"]
    assert len(hooks) == 1 and "--scope team" in hooks[0]["hooks"][0]["command"]
    bad = cli("--vault", root, "integrations", "install", "cursor", "--dir", project,
              "--capture-scope", "team")  # fmt: skip
    assert bad.code == 1 and "no capture hooks" in bad.err
    del home


# --- what was forgotten stays visible ------------------------------------------------------


def test_history_of_a_forgotten_id_shows_its_record(root: Path, cli: Any, serve: Any) -> None:
    mine = alice(root)
    mine.add("semantic", "The staging password rotates monthly", id="rotation")
    mine.forget("rotation", "wrong: it rotates weekly now")
    as_alice = ("--vault", root, "--agent", "alice", "--team", "web")
    r = cli(*as_alice, "history", "rotation")
    assert r.code == 0, r.err
    first = r.out.splitlines()[0]
    assert first.startswith("forgotten ") and "by agent:alice" in first
    assert first.endswith(": wrong: it rotates weekly now")
    assert "memvault: add semantic rotation" in r.out  # git history still holds it
    data = json.loads(cli(*as_alice, "history", "rotation", "--json").out)
    assert data["forgotten"]["action"] == "forgotten" and data["forgotten"]["by"] == "agent:alice"
    assert data["forgotten"]["path"] == "semantic/facts/rotation.md" and data["commits"]
    # another team sees no record of a team memory it never could see
    other = cli("--vault", root, "--agent", "eve", "--team", "ops", "history", "rotation")
    assert other.code == 1 and "no memory" in other.err
    assert cli(*as_alice, "history", "never-existed").code == 1
    page = serve(mine).client.get("/m/rotation")
    assert page.status_code == 200 and "wrong: it rotates weekly now" in page.text
    assert "agent:alice" in page.text


def test_history_of_a_purged_id_shows_when_who_and_why_but_no_content(root: Path, cli: Any) -> None:
    pytest.importorskip("git_filter_repo")
    mine = alice(root)
    mine.add("semantic", SECRET, id="carol-phone", scope="self")
    mine.purge("carol-phone", "asked to be erased")
    r = cli("--vault", root, "--agent", "alice", "history", "carol-phone", "--json")
    assert r.code == 0, r.err
    record = json.loads(r.out)["forgotten"]
    assert record["action"] == "purged" and record["by"] == "agent:alice"
    assert record["reason"] == "asked to be erased" and record["path"] is None
    assert "0777123456" not in r.out and not json.loads(r.out)["commits"]
    log = git(root, "log", "--all", "-p")
    assert "0777123456" not in log and "carol-phone" not in log  # the id is kept as a hash
    mallory = cli("--vault", root, "--agent", "mallory", "history", "carol-phone")
    assert mallory.code == 1  # a self memory's record is its agent's
