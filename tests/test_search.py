"""Search, recall, fact, procedure, validate and context: filters inside the query, ranking,
the access log and the command line. Real Chroma + SQLite + git; fake embedder."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from memvault import Vault
from memvault.errors import MemvaultError
from memvault.reports import read_access_log, usage_stats
from memvault.search.context import tokens

from helpers import git, is_clean, write


def as_agent(vault: Vault, agent: str, team: str = "core") -> Vault:
    return Vault.open(vault.root, agent=agent, team=team)


# --- scope and filters ---------------------------------------------------------------------


@pytest.mark.parametrize("vectors", ["memory", "chroma"])
def test_another_agents_self_memories_never_come_back_and_never_starve_results(
    vault: Vault, vectors: str
) -> None:
    if vectors == "chroma":  # small indexes are scored in memory; force the Chroma path
        vault.set_config("index.exact_below", 0, "test the Chroma path")
    bob = as_agent(vault, "bob")
    alice = as_agent(vault, "alice")
    # 50 of bob's private notes match the query better than anything alice may see.
    for i in range(50):
        bob.add(
            "semantic",
            f"kubernetes cluster upgrade secret plan number {i}",
            scope="self",
            id=f"bob-{i}",
        )
    for i in range(6):
        alice.add("semantic", f"notes on the cluster, part {i}", scope="team", id=f"team-{i}")
    alice.add("semantic", "kubernetes cluster upgrade plan of alice", scope="self", id="alice-own")
    alice.add(
        "semantic",
        "kubernetes cluster upgrade for another team",
        scope="team",
        team="other",
        id="other-team",
    )
    for fn in (alice.search, alice.recall, alice.fact):
        found = fn("kubernetes cluster upgrade secret plan", limit=5, log=False)
        ids = [h.id for h in found]
        assert len(ids) == 5, (fn.__name__, ids)
        assert not any(i.startswith("bob-") for i in ids)
        assert "other-team" not in ids
        assert ids[0] == "alice-own"
    everything = alice.search(
        "kubernetes cluster upgrade secret plan",
        limit=100,
        include_archive=True,
        include_superseded=True,
        include_inbox=True,
        log=False,
    )
    assert {h.id for h in everything} == {"alice-own", *(f"team-{i}" for i in range(6))}
    # bob sees his own, and the shared ones
    assert bob.search("kubernetes secret plan number 7", limit=3, log=False)[0].id == "bob-7"
    # with no agent identity at all, nobody's self memories are visible
    anonymous = Vault.open(vault.root, team="core")
    assert not any(
        h.scope == "self" for h in anonymous.search("kubernetes plan", limit=100, log=False)
    )


def test_filters_apply_inside_the_query(vault: Vault) -> None:
    vault.add("semantic", "Redis caches sessions", tags=["infra", "cache"], id="redis")
    vault.add(
        "semantic",
        "Redis streams feed analytics",
        tags=["analytics"],
        category="decisions",
        id="redis-streams",
    )
    vault.add(
        "episodic",
        "Redis went down during the sale",
        created="2026-01-10T09:00:00Z",
        id="redis-outage",
    )
    vault.add(
        "episodic", "Redis memory alert fired", created="2026-03-10T09:00:00Z", id="redis-alert"
    )
    vault.add("procedural", "Restart redis safely", steps=["drain", "restart"], id="redis-restart")
    ids = lambda **kw: {h.id for h in vault.search("redis", limit=20, log=False, **kw)}  # noqa: E731
    assert ids() == {"redis", "redis-streams", "redis-outage", "redis-alert", "redis-restart"}
    assert ids(type="semantic") == {"redis", "redis-streams"}
    assert ids(kind="procedure") == {"redis-restart"}
    assert ids(category="decisions") == {"redis-streams"}
    assert ids(tags=["infra"]) == {"redis"}
    assert ids(tags=["infra", "analytics"]) == set()
    assert ids(type="episodic", since="2026-02-01") == {"redis-alert"}
    assert ids(type="episodic", until="2026-02-01") == {"redis-outage"}


def test_archived_and_proposed_memories_only_on_request(vault: Vault) -> None:
    vault.add("semantic", "The old build server is jenkins", id="jenkins")
    vault.add(
        "semantic", "Global rule: jenkins pipelines need review", scope="global", id="proposal"
    )  # -> inbox
    old = vault.get("jenkins")
    write(vault.root, f"archive/{old.path}", vault.raw_text(old))
    (vault.root / old.path).unlink()
    assert [h.id for h in vault.search("jenkins", log=False)] == []
    assert [h.id for h in vault.search("jenkins", include_archive=True, log=False)] == ["jenkins"]
    assert vault.search("jenkins", include_archive=True, log=False)[0].status == "archived"
    assert "proposal" in [
        h.id for h in vault.search("jenkins review", include_inbox=True, log=False)
    ]


def test_as_of_and_supersede(vault: Vault) -> None:
    vault.add(
        "semantic",
        "The office is in Lisbon",
        subject="office.city",
        valid_from="2025-01-01",
        id="lisbon",
    )
    vault.add(
        "semantic",
        "The office is in Porto",
        subject="office.city",
        valid_from="2026-06-01",
        id="porto",
    )
    assert vault.get("lisbon").status == "superseded"
    assert [h.id for h in vault.fact("where is the office city", log=False)] == ["porto"]
    assert {h.id for h in vault.fact("office city", include_superseded=True, log=False)} == {
        "lisbon",
        "porto",
    }
    assert [h.id for h in vault.fact("office city", as_of="2026-03-01", log=False)] == ["lisbon"]
    assert [h.id for h in vault.fact("office city", as_of="2026-07-01", log=False)] == ["porto"]
    assert [h.id for h in vault.fact("office city", as_of="2024-07-01", log=False)] == []


# --- ranking ----------------------------------------------------------------------------------


def test_recall_is_routed_by_intent(vault: Vault) -> None:
    vault.add(
        "episodic",
        "We deployed the payments service",
        created="2026-02-01T10:00:00Z",
        id="deploy-episode",
    )
    vault.add(
        "semantic", "Payments service deploys go through the blue green pipeline", id="deploy-fact"
    )
    vault.add(
        "procedural",
        "How to deploy the payments service",
        steps=["build", "ship"],
        trigger=["deploy"],
        id="deploy-howto",
    )
    when = vault.recall("when did we deploy the payments service?", log=False)
    assert when.route.intent == "episodic" and when[0].id == "deploy-episode"
    how = vault.recall("how do I deploy the payments service?", log=False)
    assert how.route.intent == "procedural" and how[0].id == "deploy-howto"
    what = vault.recall("what is the payments service deploy pipeline?", log=False)
    assert what.route.intent == "semantic" and what[0].id == "deploy-fact"
    forced = vault.recall("how do I deploy the payments service?", kind="episode", log=False)
    assert [h.type for h in forced] == ["episodic"]


def test_timeline_questions_list_episodes_newest_first(vault: Vault) -> None:
    import datetime as dt

    from memvault.memory import format_time, now_utc

    for days, name in ((1, "yesterday-standup"), (3, "tuesday-outage"), (40, "old-retro")):
        when = format_time(now_utc() - dt.timedelta(days=days))
        vault.add("episodic", f"Meeting notes: {name.replace('-', ' ')}", created=when, id=name)
    found = vault.recall("what happened last week?", log=False)
    assert found.route.order == "time"
    assert [h.id for h in found] == ["yesterday-standup", "tuesday-outage"]


def test_procedures_rank_by_match_and_success_rate(vault: Vault) -> None:
    vault.add(
        "procedural",
        "Steps to rotate the api keys",
        steps=["a"],
        success_rate=0.2,
        id="rotate-flaky",
    )
    vault.add(
        "procedural",
        "Steps to rotate the api keys",
        steps=["a"],
        success_rate=0.95,
        id="rotate-good",
    )
    vault.add("procedural", "Steps to bake bread", steps=["knead"], success_rate=1.0, id="bread")
    found = vault.procedure("rotate api keys", explain=True, log=False)
    assert [h.id for h in found][:2] == ["rotate-good", "rotate-flaky"]
    assert found[0].explain["boosts"]["success_rate"] > found[1].explain["boosts"]["success_rate"]


def test_importance_breaks_near_ties(vault: Vault) -> None:
    vault.add("semantic", "Coffee machine is on floor two", importance=1, id="minor")
    vault.add("semantic", "Coffee machine is on floor two", importance=5, id="major")
    assert [h.id for h in vault.search("coffee machine floor", log=False)] == ["major", "minor"]


def test_explain_breaks_the_score_down(vault: Vault) -> None:
    vault.add("semantic", "Grafana dashboards live in the ops folder", id="grafana")
    hit = vault.search("grafana dashboards", explain=True, log=False)[0]
    ex = hit.explain
    assert ex["keyword"]["rank"] == 1 and ex["keyword"]["normalised"] == 1.0
    assert ex["vector"]["rank"] == 1 and ex["vector"]["cosine"] > 0
    assert ex["fusion"] == pytest.approx(1.0 + 2.0 * ex["vector"]["cosine"], abs=1e-3)
    assert set(ex) >= {"keyword", "vector", "fusion", "boosts", "score"}
    assert hit.as_dict()["explain"]["score"] == pytest.approx(hit.score, abs=1e-3)


def test_a_weak_best_keyword_match_is_not_a_full_point(vault: Vault) -> None:
    """Keyword scores are divided by the best match's or by a full match of the query
    (each word once, average length), whichever is larger: a best match holding one word of
    a three-word question is worth its share, a match of every word about a full point
    (exactly one at average length)."""
    vault.add("semantic", "Grafana dashboards live in the ops folder", id="grafana")
    vault.add("semantic", "Coffee machine is on floor two", id="coffee")
    vault.add("semantic", "Deploys happen on Tuesdays after the standup", id="deploys")
    vault.add("semantic", "Backups run nightly to the cold store", id="backups")
    weak = vault.search("grafana kubernetes terraform", explain=True, log=False)
    top = next(h for h in weak if h.id == "grafana").explain["keyword"]
    assert top["rank"] == 1 and 0 < top["normalised"] < 0.5
    full = vault.search("grafana dashboards", explain=True, log=False)[0].explain["keyword"]
    assert full["rank"] == 1 and full["normalised"] > 0.9


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced quote',
        "AND OR NOT",
        "NEAR(a b",
        "col:value",
        "*",
        "100% of 3.11?",
        "emoji 🚀",
        "'",
        "--",
        "a" * 500,
    ],
)
def test_any_query_text_is_accepted(vault: Vault, query: str) -> None:
    vault.add("semantic", "Python 3.11 runs 100% of services 🚀", id="py")
    vault.search(query, log=False)  # never raises


def test_empty_query_and_bad_limit_are_clear_errors(vault: Vault) -> None:
    with pytest.raises(MemvaultError, match="empty"):
        vault.search("   ")
    with pytest.raises(MemvaultError, match="limits.max_limit"):
        vault.search("x", limit=100_000)


# --- validate ---------------------------------------------------------------------------------


def test_validate_verdicts(vault: Vault) -> None:
    vault.add(
        "semantic",
        "The API rate limit is 100 requests per second",
        subject="api.rate-limit",
        id="rate",
    )
    vault.add("semantic", "We use Gemini, not OpenAI", subject="llm.vendor", id="vendor")
    vault.add(
        "semantic",
        "Deploys go out on Tuesdays",
        subject="deploy.day",
        valid_from="2025-01-01",
        id="tuesday",
    )
    vault.add(
        "semantic",
        "Deploys go out on Thursdays",
        subject="deploy.day",
        valid_from="2026-01-01",
        id="thursday",
    )
    ok = vault.validate("The API rate limit is 100 requests per second", log=False)
    assert ok.verdict == "supported" and ok.evidence[0].hit.id == "rate"
    bad = vault.validate(
        "is it true that the API rate limit is 250 requests per second?", log=False
    )
    assert bad.verdict == "contradicted" and "250" in bad.why and "100" in bad.why
    assert bad.claim == "the API rate limit is 250 requests per second"
    assert vault.validate("We use OpenAI", log=False).verdict == "contradicted"
    outdated = vault.validate("Deploys go out on Tuesdays", log=False)
    assert outdated.verdict == "contradicted" and "thursday" in outdated.why
    assert vault.validate("The cafeteria serves sushi on Mondays", log=False).verdict == "unknown"
    data = outdated.as_dict()
    assert data["verdict"] == "contradicted" and data["hits"][0]["relation"] == "contradicts"
    # as of last year, Tuesdays was right
    assert (
        vault.validate("Deploys go out on Tuesdays", as_of="2025-06-01", log=False).verdict
        == "supported"
    )


def test_recall_hands_is_it_true_questions_to_validate(vault: Vault) -> None:
    vault.add("semantic", "The API rate limit is 100 requests per second", id="rate")
    found = vault.recall(
        "Is it true that the API rate limit is 300 requests per second?", log=False
    )
    assert found.route.intent == "validate"
    assert found.note and found.note.startswith("contradicted")
    assert found[0].id == "rate"


# --- context ----------------------------------------------------------------------------------


def test_context_packs_the_template_within_budget(vault: Vault) -> None:
    vault.add(
        "episodic",
        "Migrated billing to postgres; downtime 4 minutes",
        outcome="success",
        id="ep-migrate",
    )
    vault.add("semantic", "Billing runs on postgres 16", confidence="high", id="fact-billing")
    vault.add(
        "semantic",
        "Billing downtime must stay under 5 minutes",
        category="constraints",
        id="limit-downtime",
    )
    vault.add(
        "procedural",
        "Postgres migration for billing",
        title="Migrate billing database",
        steps=["snapshot", "migrate", "verify"],
        id="proc-migrate",
    )
    # Lines that match the whole task, too many for a small budget. (Lines sharing only
    # its words found everywhere, "billing postgres", would be noise: under the floor.)
    for i in range(30):
        vault.add(
            "semantic",
            f"Billing postgres migration detail number {i} " + "lorem ipsum " * 20,
            id=f"detail-{i}",
        )
    block = vault.context("migrate billing postgres", budget=2000, log=False)
    text = block.text
    for heading in (
        "## Relevant memory",
        "### Previous episodes",
        "### Known facts",
        "### Applicable procedures",
        "### Active constraints",
    ):
        assert heading in text
    assert "[ep-migrate]" in text and "(outcome: success)" in text
    assert "[limit-downtime]" in text and "1. snapshot" in text
    assert tokens(text) <= 2000
    small = vault.context("migrate billing postgres", budget=200, log=False)
    assert tokens(small.text) <= 200
    assert small.omitted and "left out to fit the budget" in small.text
    assert len(small.included) < len(block.included)
    assert small.included[0].score >= max(line.score for line in small.omitted)
    with pytest.raises(MemvaultError, match="budget"):
        vault.context("x", budget=5)


# --- access log -------------------------------------------------------------------------------


def test_every_read_appends_to_the_access_log_and_touches_no_tracked_file(vault: Vault) -> None:
    agent = as_agent(vault, "alice")
    agent.add("semantic", "Sentry holds the error reports", id="sentry")
    head = git(vault.root, "rev-parse", "HEAD")
    agent.recall("where are the error reports?")
    agent.fact("error reports")
    agent.procedure("error reports")
    agent.search("sentry")
    agent.validate("Sentry holds the error reports")
    agent.context("error reports", budget=300)
    records = read_access_log(vault.root)
    assert [r["cmd"] for r in records] == [
        "recall",
        "fact",
        "procedure",
        "search",
        "validate",
        "context",
    ]
    for record in records:
        assert set(record) >= {"ts", "kind", "cmd", "q", "ids", "ms", "agent"}
        assert (
            record["kind"] == "query" and record["agent"] == "alice" and record["ts"].endswith("Z")
        )
    assert records[0]["ids"] == ["sentry"]
    assert usage_stats(vault.root)["queries"] == 6
    assert git(vault.root, "rev-parse", "HEAD") == head and is_clean(vault.root)


# --- command line ---------------------------------------------------------------------------


COMMANDS = ["recall", "fact", "procedure", "search", "validate", "context", "reindex"]


def test_json_output_parses(vault: Vault, cli: Any) -> None:
    vault.add("semantic", "The staging database is called stg-db", id="stg")
    for argv in (
        ["recall", "what is the staging database?"],
        ["fact", "staging database", "--explain"],
        ["procedure", "staging"],
        ["search", "staging", "--type", "semantic", "--tag", "x,y", "--since", "30d"],
        ["validate", "The staging database is called stg-db"],
        ["context", "staging database", "--budget", "300"],
        ["reindex"],
    ):
        res = cli("--vault", vault.root, *argv, "--json")
        assert res.code == 0, (argv, res.err)
        data = json.loads(res.out)
        assert isinstance(data, dict)
    res = cli("--vault", vault.root, "fact", "staging database", "--json")
    assert json.loads(res.out)["hits"][0]["id"] == "stg"
    res = cli("--vault", vault.root, "validate", "The staging database is called stg-db", "--json")
    assert json.loads(res.out)["verdict"] == "supported"


def test_cli_text_output_and_errors(vault: Vault, cli: Any) -> None:
    vault.add("semantic", "The staging database is called stg-db", id="stg")
    res = cli("--vault", vault.root, "recall", "staging database", "--explain")
    assert res.code == 0 and "stg" in res.out and "fusion" in res.out and "route:" in res.err
    res = cli("--vault", vault.root, "search", "staging", "--limit", "100000")
    assert res.code == 1 and "limits.max_limit" in res.err and res.out == ""
    res = cli("--vault", vault.root, "search", "staging", "--kind", "gossip")
    assert res.code == 1 and "kind" in res.err
    res = cli("--vault", vault.root, "context", "staging", "--budget", "300")
    assert res.code == 0 and res.out.startswith("## Relevant memory")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help_with_an_example(cli: Any, command: str) -> None:
    res = cli(command, "--help")
    assert res.code == 0 and "Example" in res.out


def test_importing_the_cli_stays_light() -> None:
    code = (
        "import sys, memvault.cli, memvault.cli.search, memvault.search, memvault.search.routing;"
        "heavy = [m for m in ('chromadb', 'torch', 'sentence_transformers', 'mcp', 'watchdog',"
        " 'onnxruntime')"
        " if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_a_snippet_of_one_long_line_is_cut(vault: Vault) -> None:
    from memvault.search.results import SNIPPET_CHARS

    blob = "minified:" + "x" * 20_000
    vault.add("semantic", f"Bundle {blob}", title="The bundled script", id="bundle")
    (hit,) = [h for h in vault.search("bundled script minified").hits if h.id == "bundle"]
    assert len(hit.snippet) <= SNIPPET_CHARS and hit.snippet.endswith("…")
    assert hit.snippet.startswith("Bundle minified:xxx")


def test_full_match_survives_a_row_count_older_than_a_words_count(vault: Vault) -> None:
    """The index caches its row count; a concurrent write may add rows holding a word after
    it was read. The idf must not take the log of a negative (bench/stress.py's readers
    crashed with 'math domain error')."""
    from memvault.index import ensure_fresh
    from memvault.index.query import full_match

    vault.add("semantic", "Deploys are frozen on Fridays")
    vault.add("semantic", "Deploys need a green build")
    idx = ensure_fresh(vault.core)
    idx._fts_rows = 0  # read before the rows a writer added since
    assert full_match(idx, ["deploys", "fridays"]) > 0


def test_context_scores_the_query_words_once_for_all_its_sections(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``context`` runs a search per section with the same words: the plain FTS5 query runs
    once, and a section whose filter lets no document through asks nothing more -- with the
    same block as when every section queries on its own."""
    import importlib
    from contextlib import nullcontext

    from memvault.index.handle import open_indexes

    ctx = importlib.import_module("memvault.search.context")  # the module, not the function
    from memvault.store.files import render_new

    writes = {}
    for n in range(150):  # more matches than a section's pool: the joined query is the fallback
        meta = {"id": f"zebra-{n}", "type": "episodic", "category": "session", "scope": "team"}
        writes[vault.core.path_for(meta)] = render_new(meta, f"Saw a zebra at the zoo, visit {n}.")
    for n in range(3):
        meta = {"id": f"fact-{n}", "type": "semantic", "category": "facts", "scope": "team"}
        writes[vault.core.path_for(meta)] = render_new(meta, f"Zebra fact {n}: stripes.")
    with vault.locked():
        vault.core.commit_files(writes, "zebras")
    vault.context("zebra zoo", budget=2000, log=False)  # each section's filter, as a server has
    idx = open_indexes.get(vault.root)
    assert idx is not None
    asked: list[str] = []
    idx.conn.set_trace_callback(lambda sql: asked.append(sql) if "ORDER BY s" in sql else None)
    shared = vault.context("zebra zoo", budget=2000, log=False)
    plain = [q for q in asked if "JOIN" not in q]
    joined = [q for q in asked if "JOIN" in q]
    assert len(plain) == 1
    # constraints: none in the vault, so no joined query for them; facts and procedures ask
    assert len(joined) == 2
    monkeypatch.setattr(ctx, "shared_keyword_rows", nullcontext)
    asked.clear()
    alone = vault.context("zebra zoo", budget=2000, log=False)
    assert len([q for q in asked if "JOIN" not in q]) == 4
    assert alone.text == shared.text


def test_a_memory_in_another_script_is_measured_against_the_floor_across_languages(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A multilingual embedder's cosines across scripts sit lower than within one language:
    an English question's right Russian paragraph can fall under the same-language floor
    and count as unrelated, while a passage sharing one name with the question outranks it.
    The floor of a pair in two scripts is ``dense_floor_across`` (docs/retrieval.md)."""
    import numpy as np

    from memvault.embeddings.fake import FakeEmbedder

    dims = FakeEmbedder().dimensions
    # The query is the first axis; each memory's cosine to it is fixed.
    cosines = {"Рахуэе": 0.45, "museum": 0.1, "Rahway": 0.45}

    def vector(text: str) -> np.ndarray:
        v = np.zeros(dims, dtype=np.float32)
        if "founded" in text:
            v[0] = 1.0
            return v
        for n, (mark, cos) in enumerate(cosines.items(), 1):
            if mark in text:
                v[0], v[n] = cos, (1 - cos**2) ** 0.5
                return v
        v[-1] = 1.0
        return v

    monkeypatch.setattr(
        FakeEmbedder, "embed_documents", lambda _, t: np.stack([vector(x) for x in t])
    )
    monkeypatch.setattr(FakeEmbedder, "embed_query", lambda _, t: vector(t))
    vault.set_config("search.weights.dense_floor", 0.5, "a calibrated embedder's floor")
    vault.set_config("search.weights.dense_floor_across", 0.3, "lower across scripts")
    vault.add(
        "semantic",
        "Компания была основана в Рахуэе, штат Нью-Джерси, и занималась электрическим освещением.",
        id="ru-answer",
    )
    vault.add(
        "semantic", "The Tesla coils of the science museum are switched on at noon.", id="name"
    )
    vault.add("semantic", "The Tesla company was started in Rahway by its engineers.", id="en-peer")
    hits = vault.recall("Who founded the Tesla Electric Light company, in which year and city?")
    ids = [h.id for h in hits.hits]
    # Across scripts the cosine of 0.45 clears the lower floor and outranks a shared name;
    # within one language the same cosine is under the floor: only its keywords count.
    assert ids[0] == "ru-answer", ids
    assert ids.index("name") > ids.index("ru-answer")


def test_an_embedder_with_one_floor_uses_it_for_a_pair_in_two_languages(vault: Vault) -> None:
    """MiniLM (and the fake embedder) declare no cross-language floor: a pair in two
    languages gets the same floor as any other, the configured one included, so English
    vaults rank as they did."""
    from memvault.search.ranking import weights

    assert weights(vault.core)["dense_floor_across"] == weights(vault.core)["dense_floor"]
    vault.set_config("search.weights.dense_floor", 0.4, "a floor of its own")
    assert weights(vault.core)["dense_floor_across"] == 0.4
