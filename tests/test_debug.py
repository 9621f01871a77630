"""Debug mode: ``memvault debug on|off|status``, the trace every read prints on stderr, and
the ``debug`` field of MCP read results. Real vaults, the real CLI (in-process and as a
console script) and the real MCP server over stdio."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memvault import Vault, debug

from helpers import Result, git, is_clean, run_memvault

Cli = Callable[..., Result]


def ok(result: Result) -> Result:
    assert result.code == 0, f"exit {result.code}\nstdout: {result.out}\nstderr: {result.err}"
    return result


@pytest.fixture
def v(vault: Vault) -> Path:
    vault.add("semantic", "PostgreSQL is the primary database", id="use-postgres", tags=["db"])
    vault.add("semantic", "The API rate limit is 100 requests per second", id="rate-limit")
    vault.add(
        "episodic",
        "The deploy failed because DATABASE_URL was missing",
        id="deploy-failed",
        importance=4,
        # A fixed date: the index embeds an episode with its date, and the fake embedder's
        # vectors (hashed letter triples) would otherwise change with the day the test runs.
        created="2026-11-20T10:00:00Z",
    )
    vault.add(
        "procedural",
        "Release a new version",
        id="release",
        steps=["Run the tests", "Tag the release"],
        trigger=["release"],
    )
    return vault.root


def without_ms(data: Any) -> Any:
    """A JSON result without its timings (they differ from run to run)."""
    if isinstance(data, dict):
        return {k: without_ms(x) for k, x in data.items() if k != "ms"}
    if isinstance(data, list):
        return [without_ms(x) for x in data]
    return data


# --- the switch ---------------------------------------------------------------------------


def test_switch_is_per_user_outside_the_vault(cli: Cli, v: Path, cache_dir: Path) -> None:
    head = git(v, "rev-parse", "HEAD")
    config = (v / ".memvault/config.yaml").read_bytes()
    status = ok(cli("--vault", v, "debug", "status", "--json")).json()
    assert status["on"] is False and status["source"] == "default"
    assert "debug mode off" in ok(cli("--vault", v, "debug")).out
    on = ok(cli("--vault", v, "debug", "on", "--json")).json()
    assert on["on"] is True and on["source"] == "user" and on["since"]
    assert Path(on["file"]) == cache_dir / "debug.json"
    stored = json.loads((cache_dir / "debug.json").read_text())
    assert list(stored["vaults"]) == [str(v.resolve())]
    # nothing in the vault changed: no commit, no tracked or untracked file
    assert git(v, "rev-parse", "HEAD") == head and is_clean(v)
    assert (v / ".memvault/config.yaml").read_bytes() == config
    assert ok(cli("--vault", v, "debug", "status", "--json")).json()["on"] is True
    assert ok(cli("--vault", v, "debug", "off", "--json")).json()["on"] is False
    assert json.loads((cache_dir / "debug.json").read_text())["vaults"] == {}


def test_switch_is_per_vault(cli: Cli, v: Path, tmp_path: Path) -> None:
    other = Vault.init(tmp_path / "other").root
    ok(cli("--vault", v, "debug", "on"))
    assert ok(cli("--vault", other, "debug", "status", "--json")).json()["on"] is False
    assert "debug: recall" in ok(cli("--vault", v, "recall", "database")).err
    assert "debug:" not in ok(cli("--vault", other, "recall", "database")).err


def test_environment_overrides_the_switch(
    cli: Cli, v: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMVAULT_DEBUG", "1")
    status = ok(cli("--vault", v, "debug", "status", "--json")).json()
    assert status["on"] is True and status["source"] == "env"
    assert "debug: fact" in ok(cli("--vault", v, "fact", "database")).err
    ok(cli("--vault", v, "debug", "on"))
    monkeypatch.setenv("MEMVAULT_DEBUG", "off")
    assert "debug:" not in ok(cli("--vault", v, "fact", "database")).err
    monkeypatch.setenv("MEMVAULT_DEBUG", "maybe")
    bad = cli("--vault", v, "fact", "database")
    assert bad.code == 1 and bad.out == ""
    assert bad.err.strip().splitlines() == [
        "Error: MEMVAULT_DEBUG: expected one of 1|on|true|yes|0|off|false|no, got 'maybe'"
    ]


def test_unknown_action_lists_the_valid_ones(cli: Cli, v: Path) -> None:
    bad = cli("--vault", v, "debug", "loud")
    assert bad.code == 2
    assert "on" in bad.err and "off" in bad.err and "status" in bad.err


# --- the trace on stderr --------------------------------------------------------------------


def test_recall_trace_shows_route_filters_legs_boosts_and_timings(cli: Cli, v: Path) -> None:
    plain = ok(cli("--vault", v, "--agent", "alice", "recall", "when did the deploy fail?"))
    assert "debug:" not in plain.err
    ok(cli("--vault", v, "debug", "on"))
    traced = ok(cli("--vault", v, "--agent", "alice", "recall", "when did the deploy fail?"))
    assert traced.out == plain.out  # stdout unchanged
    err = traced.err
    assert "\ndebug: recall · " in "\n" + err
    assert "identity: agent alice" in err
    assert "route: episodic, cue" in err
    assert "filter: types episodic,semantic,procedural · statuses active,disputed" in err
    assert "viewer_agent alice" in err
    assert "keyword leg (FTS5 BM25): " in err and "vector leg (exact" in err
    for stage in ("index check", "keyword leg", "vector leg", "fuse and boost", "materialise"):
        assert f"{stage} " in err
    # the fused list ends with the hit's score, its boosts named (recency: an episode)
    fused = err.split("fused and boosted:")[1].splitlines()[1]
    assert fused.strip().startswith("1. deploy-failed  keyword #1")
    assert "importance x1.05" in fused and "recency x" in fused


def test_json_output_is_unchanged_and_the_trace_matches_it(cli: Cli, v: Path) -> None:
    args = ("--vault", v, "fact", "database rate limit", "--json", "--limit", "2")
    plain = ok(cli(*args))
    ok(cli("--vault", v, "debug", "on"))
    traced = ok(cli(*args))
    assert without_ms(traced.json()) == without_ms(plain.json())
    hits = traced.json()["hits"]  # type: ignore[index]
    assert hits and all("explain" not in h for h in hits)
    # the fused top names the same memories, in the same order, with the same scores
    lines = traced.err.split("fused and boosted:")[1].strip().splitlines()
    for n, hit in enumerate(hits, 1):
        assert lines[n - 1].strip().startswith(f"{n}. {hit['id']} ")
        assert lines[n - 1].endswith(f"= {hit['score']}")


READS = [
    ("recall", "deploy", "--json"),
    ("fact", "database", "--json"),
    ("procedure", "release", "--json"),
    ("search", "postgres", "--json"),
    ("validate", "PostgreSQL is the primary database", "--json"),
    ("context", "deploy the release", "--json"),
    ("show", "release", "--json"),
    ("list", "--json"),
    ("episodes", "--json"),
    ("stats", "--json"),
    ("history", "release", "--json"),
]


@pytest.mark.parametrize("argv", READS, ids=[a[0] for a in READS])
def test_every_read_command_prints_a_trace_and_keeps_stdout_json(
    cli: Cli, v: Path, argv: tuple[str, ...]
) -> None:
    ok(cli("--vault", v, "debug", "on"))
    res = ok(cli("--vault", v, *argv))
    json.loads(res.out)
    # (other notes, e.g. a word list prepared once, may come first)
    assert any(line.startswith(f"debug: {argv[0]} · ") for line in res.err.splitlines())
    assert f"vault: {v.resolve()}" in res.err
    searches = {"recall", "fact", "procedure", "search", "validate", "context"}
    assert ("query 1:" in res.err) == (argv[0] in searches)


def test_show_and_list_say_what_they_found(cli: Cli, v: Path) -> None:
    ok(cli("--vault", v, "debug", "on"))
    shown = ok(cli("--vault", v, "show", "release"))
    assert "found: release in procedural/workflows/release.md (active)" in shown.err
    listed = ok(cli("--vault", v, "list", "--type", "semantic"))
    assert "filters: type semantic" in listed.err and "found: 2 memories" in listed.err


def test_a_failing_read_prints_only_its_error(cli: Cli, v: Path) -> None:
    ok(cli("--vault", v, "debug", "on"))
    res = cli("--vault", v, "show", "no-such-memory")
    assert res.code == 1 and len(res.err.strip().splitlines()) == 1
    assert res.err.startswith("Error: ")


def test_writes_print_no_trace(cli: Cli, v: Path) -> None:
    ok(cli("--vault", v, "debug", "on"))
    res = ok(cli("--vault", v, "add", "fact", "Redis holds the sessions"))
    assert "debug:" not in res.err


def test_console_script_fast_path_and_typer_path(v: Path) -> None:
    assert run_memvault("--vault", v, "debug", "on").returncode == 0
    shown = run_memvault("--vault", v, "show", "release", "--json")  # the fast parser
    assert shown.returncode == 0 and json.loads(shown.stdout)["id"] == "release"
    assert "\ndebug: show · " in "\n" + shown.stderr
    found = run_memvault("--vault", v, "recall", "postgres database", "--json")
    assert found.returncode == 0 and json.loads(found.stdout)["hits"][0]["id"] == "use-postgres"
    assert "query 1: 'postgres database'" in found.stderr
    off = run_memvault("--vault", v, "recall", "postgres", env={"MEMVAULT_DEBUG": "0"})
    assert off.returncode == 0 and "debug:" not in off.stderr


# --- the library ------------------------------------------------------------------------------


def test_trace_holds_both_legs_and_the_fused_top(vault: Vault, v: Path) -> None:
    plain = vault.search("database postgres", limit=3)
    with debug.tracing("search") as trace:
        traced = vault.search("database postgres", limit=3)
    assert [(h.id, h.score) for h in traced] == [(h.id, h.score) for h in plain]
    assert all(h.explain is None for h in traced)
    data = trace.as_dict()
    assert data["route"]["intent"] == "general" and data["options"] == {"limit": 3}
    (query,) = data["queries"]
    assert query["plan"]["limit"] == 3 and query["plan"]["filter"]["statuses"] == [
        "active",
        "disputed",
    ]
    assert query["keyword_top"][0]["id"] == "use-postgres" and query["keyword_top"][0]["bm25"] > 0
    assert {c["id"] for c in query["vector_top"]} <= {
        "use-postgres",
        "rate-limit",
        "deploy-failed",
        "release",
    }
    cosines = [c["cosine"] for c in query["vector_top"]]
    assert cosines == sorted(cosines, reverse=True)
    assert [f["id"] for f in query["fused_top"]][: len(traced)] == [h.id for h in traced]
    assert query["fused_top"][0]["score"] == round(traced[0].score, 4)
    assert set(query["timings_ms"]) >= {"index check", "keyword leg", "vector leg"}
    assert debug.current() is None  # the trace ended with the block


def test_no_trace_no_cost(vault: Vault, v: Path) -> None:
    assert debug.current() is None
    debug.lap("keyword leg")  # no active trace: nothing to record, nothing raised
    debug.keep("legs", object())
    assert debug.begin_query("x", {}) is None


# --- MCP ----------------------------------------------------------------------------------------


def test_mcp_results_carry_debug_only_while_it_is_on(v: Path) -> None:
    from test_mcp import connect, run

    async def main() -> None:
        async with connect(v, agent="alice") as s:
            before = await s.call_tool("fact", {"query": "database"})
            assert not before.is_error and before.structured_content is not None
            assert "debug" not in before.structured_content
            assert run_memvault("--vault", v, "debug", "on").returncode == 0
            during = await s.call_tool("fact", {"query": "database"})
            data = during.structured_content
            assert data is not None and "debug" in data
            trace = data["debug"]
            assert trace["command"] == "fact" and trace["identity"]["agent"] == "alice"
            assert trace["queries"][0]["fused_top"][0]["id"] == data["hits"][0]["id"]
            # the text block is the structured content's JSON, debug included (the MCP
            # specification); the rest of the data is as before
            body = json.loads(during.content[0].text)  # type: ignore[union-attr]
            assert body == data
            body.pop("debug")
            assert without_ms(body) == without_ms(json.loads(before.content[0].text))  # type: ignore[union-attr]
            shown = await s.call_tool("show", {"id": "release"})
            assert shown.structured_content is not None and "debug" in shown.structured_content
            wrote = await s.call_tool("remember", {"kind": "fact", "content": "Redis is a cache"})
            assert not wrote.is_error and wrote.structured_content is not None
            assert "debug" not in wrote.structured_content
            assert run_memvault("--vault", v, "debug", "off").returncode == 0
            after = await s.call_tool("fact", {"query": "database"})
            assert after.structured_content is not None and "debug" not in after.structured_content

    run(main)
