"""Conflicts on write without a subject (issue 26, seed 004's ``assert``), and disputes.

Real git, real SQLite, the fake embedder (texts sharing words are near): a newer value of
the same thing supersedes the fact in force in one commit; look-alikes about different
things stay in force side by side; an unsure write records a dispute, which ``dispute
keep`` or the passing of ``disputes.newer_wins_after`` resolves. The rule itself
(:func:`memvault.conflicts.judge`) is checked on every written pair of
``bench/data/supersede.json``; ``bench/supersede.py`` measures it with the real models.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memvault import Vault, conflicts
from memvault.conflicts import judge
from memvault.search import engine

from helpers import Result, commit_count, git, last_message

Cli = Callable[..., Result]

DATA = Path(__file__).resolve().parents[1] / "bench" / "data" / "supersede.json"
OLD = "The API rate limit is 200 requests per second"
NEW = "The API rate limit is 500 requests per second"
REWORDED = "We now allow 900 requests per second on the API"


def test_a_new_value_without_a_subject_supersedes_in_one_commit(vault: Vault) -> None:
    old = vault.add("semantic", OLD).memory
    before = commit_count(vault.root)
    result = vault.add("semantic", NEW)
    new = result.memory
    assert result.superseded == (old.id,) and result.disputed == ()
    assert commit_count(vault.root) == before + 1
    changed = git(vault.root, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(changed) == sorted([old.path, new.path])
    assert f"Supersedes {old.id} (inferred: " in last_message(vault.root)
    tomb = vault.get(old.id)
    assert tomb.status == "superseded" and tomb.meta["superseded_by"] == new.id
    assert (vault.root / old.path).exists() and new.meta["supersedes"] == old.id
    # every read prefers the newer value
    assert vault.fact("api rate limit", log=False).hits[0].id == new.id
    assert old.id not in [h.id for h in vault.recall("what is the api rate limit", log=False).hits]
    assert "200 requests" not in vault.context("api rate limit").text
    verdict = vault.validate(OLD, log=False)
    assert verdict.verdict == "contradicted" and verdict.evidence_id == new.id


def test_the_cli_says_what_a_write_supersedes(vault: Vault, cli: Cli) -> None:
    first = cli("--vault", vault.root, "add", "fact", OLD)
    assert first.code == 0, first.err
    old_id = first.out.split("\t")[0]
    r = cli("--vault", vault.root, "add", "fact", NEW, "--json")
    assert r.code == 0, r.err
    written: Any = r.json()
    assert written["superseded"] == [old_id]
    new_id = written["id"]
    r = cli("--vault", vault.root, "add", "fact", "The API rate limit is 800 requests per second")
    assert r.code == 0 and f"supersedes {new_id}" in r.err


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The staging host is db-stg-3", "The production host is db-prd-1"),
        ("Team A on-call rotates Mondays", "Team B on-call rotates Fridays"),
        ("The auth service timeout is 30 seconds", "The billing service timeout is 10 seconds"),
        ("Sprint 41 focuses on onboarding", "Sprint 42 focuses on billing"),
    ],
)
def test_look_alikes_about_different_things_stay_in_force(
    vault: Vault, first: str, second: str
) -> None:
    a = vault.add("semantic", first).memory
    result = vault.add("semantic", second)
    assert result.superseded == () and result.disputed == ()
    assert vault.get(a.id).status == "active" and result.memory.status == "active"


@pytest.mark.parametrize("words_first", [0, conflicts.WORDS_FIRST])
def test_weighing_words_before_the_search_changes_no_outcome(
    vault: Vault, monkeypatch: pytest.MonkeyPatch, words_first: int
) -> None:
    """0: every write searches first, as when the owner has many facts without a subject."""
    monkeypatch.setattr(conflicts, "WORDS_FIRST", words_first)
    old = vault.add("semantic", OLD).memory
    staging = vault.add("semantic", "The staging host is db-stg-3").memory
    assert vault.add("semantic", "The production host is db-prd-1").superseded == ()
    result = vault.add("semantic", NEW)
    assert result.superseded == (old.id,) and result.disputed == ()
    disputed = vault.add("semantic", REWORDED)
    assert disputed.superseded == () and disputed.disputed == (result.memory.id,)
    assert vault.get(staging.id).status == "active"


def test_a_fact_the_word_rule_pairs_with_none_never_searches(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault.add("semantic", OLD)
    vault.add("semantic", "Redis holds the sessions")
    searched: list[str] = []
    real_run = engine.run

    def run(vault: Any, query: str, *args: Any, **kwargs: Any) -> Any:
        searched.append(query)
        return real_run(vault, query, *args, **kwargs)

    monkeypatch.setattr(engine, "run", run)
    result = vault.add("semantic", "The billing team meets on Thursdays")
    assert result.superseded == () and searched == []  # no model, no index
    assert vault.add("semantic", NEW).superseded != () and searched == [NEW]


def test_facts_written_or_edited_by_hand_are_weighed_as_they_are_now(vault: Vault) -> None:
    vault.add("semantic", "Redis holds the sessions")  # the catalog knows the folder
    hand = vault.root / "semantic/facts/by-hand.md"
    hand.write_text("---\nid: by-hand\ntype: semantic\n---\nThe VPN gateway is vpn-1\n")
    assert vault.add("semantic", "The VPN gateway is vpn-2").superseded == ("by-hand",)
    edited = vault.add("semantic", "The cache TTL is 5 minutes").memory
    path = vault.root / edited.path
    path.write_text(path.read_text().replace("cache TTL", "session TTL"))
    assert vault.add("semantic", "The session TTL is 9 minutes").superseded == (edited.id,)


def test_facts_of_another_owner_are_never_superseded(tmp_path: Path) -> None:
    Vault.init(tmp_path / "v")
    librarian = Vault.open(tmp_path / "v", agent="lib", role="librarian")
    ana = Vault.open(tmp_path / "v", agent="ana", team="core")
    shared = librarian.add("semantic", OLD, scope="global").memory
    result = ana.add("semantic", NEW, scope="team")  # ana sees the global fact: not hers
    assert result.superseded == () and ana.get(shared.id).status == "active"


def test_an_unsure_write_records_a_dispute_that_keep_resolves(vault: Vault, cli: Cli) -> None:
    old = vault.add("semantic", OLD).memory
    result = vault.add("semantic", REWORDED)
    new = result.memory
    assert result.superseded == () and result.disputed == (old.id,)
    assert new.status == "disputed" and new.meta["related"] == [old.id]
    assert vault.get(old.id).status == "disputed"
    assert f"Disputes {old.id}" in last_message(vault.root)
    listed = cli("--vault", vault.root, "dispute", "list", "--json")
    assert listed.code == 0, listed.err
    disputes: Any = listed.json()
    assert [d["ids"] for d in disputes] == [[old.id, new.id]]
    before = commit_count(vault.root)
    r = cli("--vault", vault.root, "dispute", "keep", old.id, "--note", "the gateway says 200")
    assert r.code == 0, r.err
    assert commit_count(vault.root) == before + 1
    assert "the gateway says 200" in last_message(vault.root)
    kept, lost = vault.get(old.id), vault.get(new.id)
    assert kept.status == "active" and kept.meta["supersedes"] == new.id
    assert lost.status == "superseded" and lost.meta["superseded_by"] == old.id
    assert vault.disputes() == []
    assert cli("--vault", vault.root, "dispute", "list").err.strip() == "no open disputes"


def test_keep_of_a_fact_that_is_not_disputed_is_a_one_line_error(vault: Vault, cli: Cli) -> None:
    m = vault.add("semantic", OLD).memory
    r = cli("--vault", vault.root, "dispute", "keep", m.id)
    assert r.code == 1 and "is not disputed" in r.err and len(r.err.strip().splitlines()) == 1


def test_the_newer_wins_a_dispute_after_the_configured_time(vault: Vault) -> None:
    old = vault.add("semantic", OLD).memory
    new = vault.add("semantic", REWORDED).memory
    soon, _ = vault.consolidate(_days_later(vault, 3), only=["supersede"])
    assert soon.empty and vault.get(new.id).status == "disputed"
    plan, sha = vault.consolidate(_days_later(vault, 15), only=["supersede"])
    assert sha is not None
    assert vault.get(old.id).meta["superseded_by"] == new.id
    assert vault.get(new.id).status == "active" and vault.disputes() == []


def test_newer_wins_never_keeps_a_dispute_for_review(vault: Vault) -> None:
    vault.set_config("disputes.newer_wins_after", "never", "keep disputes for review")
    vault.add("semantic", OLD)
    new = vault.add("semantic", REWORDED).memory
    plan, _ = vault.consolidate(_days_later(vault, 400), only=["supersede"])
    assert plan.empty and vault.get(new.id).status == "disputed"


def _days_later(vault: Vault, days: int) -> dt.datetime:
    return dt.datetime.now(dt.UTC) + dt.timedelta(days=days)


def _pairs(kind: str) -> list[tuple[str, str]]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    if kind == "changes":
        return [(x["old"], x["new"]) for x in data["changes"]]
    return [(x["a"], x["b"]) for x in data["lookalikes"]]


@pytest.mark.parametrize(("old", "new"), _pairs("changes"))
def test_the_rule_reads_a_new_value_of_one_thing(old: str, new: str) -> None:
    verdict = judge(new, old)
    assert verdict is not None and verdict[0] == "supersede", verdict


# The thing and the value replaced in one run of words: only validate's slots tell that
# "staging" and "production" (or "team A" and "team B") name what the fact is about.
RUN_TOGETHER = [
    ("Rate limit: staging 200 rps", "Rate limit: production 500 rps"),
    ("Current on-call: team A, Mondays", "Current on-call: team B, Fridays"),
    ("notes on the cluster, part 1", "notes on the cluster, part 2"),
    # two things' identifiers differing in their number; "staging" read as a verb
    (
        "The wallet staging database is on db-stg-67.",
        "The webhooks staging database is on db-stg-43.",
    ),
]


@pytest.mark.parametrize(("a", "b"), _pairs("lookalikes") + RUN_TOGETHER)
def test_the_rule_never_replaces_another_thing(a: str, b: str) -> None:
    assert judge(b, a) is None and judge(a, b) is None


def test_reads_lead_with_the_newer_fact_of_an_open_dispute(vault: Vault) -> None:
    old = vault.add("semantic", OLD).memory
    time.sleep(1.1)  # created times are to the second
    new = vault.add("semantic", REWORDED).memory
    assert vault.get(new.id).status == "disputed"
    for found in (
        vault.fact("api rate limit", log=False),
        vault.recall("api rate limit", log=False),
    ):
        ids = [h.id for h in found.hits]
        assert ids.index(new.id) < ids.index(old.id), ids
    block = vault.context("api rate limit", budget=400, log=False)
    assert block.ids.index(new.id) < block.ids.index(old.id)


# A value changed in other words: the old fact's value read as replaced, or the same act on
# the same thing by someone else (the 12-week bench's stale answers, bench/lifecycle.py).
WORDED_APART = [
    (
        "The search database runs on db-sea-51.",
        "The search database now runs on db-sea-27.",
        "supersede",
    ),
    (
        "The payments database is hosted on db-pay-46.",
        "The payments database moved to db-pay-98.",
        "dispute",
    ),
    (
        "The geocoding API allows 300 requests per second.",
        "The geocoding API rate limit is now 900 requests per second.",
        "dispute",
    ),
    ("The platform team is led by Emeka.", "Dara now leads the platform team.", "dispute"),
    ("Dara leads the design team.", "The design team is led by Ana.", "dispute"),
]


@pytest.mark.parametrize(("old", "new", "action"), WORDED_APART)
def test_a_change_worded_apart_supersedes_or_disputes(old: str, new: str, action: str) -> None:
    verdict = judge(new, old)
    assert verdict is not None and verdict[0] == action, verdict


def test_validate_answers_by_the_newer_of_two_facts_in_force(vault: Vault) -> None:
    old = vault.add("semantic", "The payments database is hosted on db-pay-46.").memory
    time.sleep(1.1)  # created times are to the second
    new = vault.add("semantic", "The payments database moved to db-pay-98.").memory
    assert vault.get(old.id).status == "disputed"
    # validate reads the old statement against the newer value, as fact and recall do
    verdict = vault.validate("The payments database is hosted on db-pay-46.", log=False)
    assert verdict.verdict == "contradicted" and verdict.evidence_id == new.id, verdict.why
    assert vault.validate("The payments database is on db-pay-98.", log=False).verdict == (
        "supported"
    )
    lead = vault.add("semantic", "The platform team is led by Emeka.").memory
    time.sleep(1.1)
    vault.add("semantic", "Dara now leads the platform team.")
    assert vault.get(lead.id).status == "disputed"
    # a dispute the roles found: the older fact no longer makes the statement supported
    emeka = vault.validate("The platform team is led by Emeka.", log=False)
    assert emeka.verdict == "unknown" and "disputes it" in emeka.why, emeka.why


CONSOLIDATE = DATA.parent / "consolidate.json"


def _written_pairs() -> list[tuple[str, str]]:
    """Every pair of bench/data's supersede and consolidate sets, both ways round."""
    pairs = _pairs("changes") + _pairs("lookalikes") + RUN_TOGETHER
    shared = json.loads(CONSOLIDATE.read_text(encoding="utf-8"))
    for key in ("contradictions", "lookalikes", "paraphrases"):
        pairs += [(x["a"], x["b"]) for x in shared[key] if x.get("type", "semantic") == "semantic"]
    return pairs + [(b, a) for a, b in pairs]


def test_the_quick_look_skips_only_pairs_the_rule_never_pairs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``may_conflict`` is a bound, not a second rule: wherever the whole rule pairs two facts
    it says "maybe". Checked on the written pairs and on pairs across them (mostly about
    different things), where it must also spare most of the weighing."""
    import random

    pairs = _written_pairs()
    texts = sorted({t for pair in pairs for t in pair})
    rng = random.Random(3)
    across = [(rng.choice(texts), rng.choice(texts)) for _ in range(1500)]
    quick = conflicts.may_conflict
    looked = {pair: quick(*pair) for pair in pairs + across}
    monkeypatch.setattr(conflicts, "may_conflict", lambda new, old: True)
    paired = [pair for pair in pairs + across if judge(*pair) is not None]
    assert len(paired) > 100  # (the sets hold that many changes)
    assert [pair for pair in paired if not looked[pair]] == []
    skipped = sum(not looked[pair] for pair in across)
    assert skipped > 0.8 * len(across), skipped


def test_a_write_weighs_no_fact_it_shares_too_few_words_with(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memvault.validate import weigh

    vault.add("semantic", OLD)
    vault.add("semantic", "Redis holds the sessions for the checkout service")
    weighed: list[str] = []
    real = weigh.weigh

    def counted(claim: Any, fact: Any, *args: Any, **kwargs: Any) -> Any:
        weighed.append(fact.text.strip())
        return real(claim, fact, *args, **kwargs)

    monkeypatch.setattr(weigh, "weigh", counted)
    result = vault.add("semantic", "The billing team meets on Thursdays")
    assert result.superseded == () and weighed == []
    assert vault.add("semantic", NEW).superseded != () and OLD in weighed


def test_a_fact_read_when_written_is_not_read_again_by_the_next_write(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The words of a new fact, read by its own write, serve the next write that weighs it
    (its body on disk ends with a newline the write's text lacks: one text for both)."""
    from memvault.validate import claims

    vault.add("semantic", "The quarterly audit covers the ledger exports")
    vault.add("semantic", "Lunch orders close at eleven on Fridays")
    read: list[str] = []
    real = claims.read

    def counted(text: str, *args: Any, **kwargs: Any) -> Any:
        read.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(claims, "read", counted)
    vault.add("semantic", "The parking garage opens at seven")
    assert read == ["The parking garage opens at seven"]
