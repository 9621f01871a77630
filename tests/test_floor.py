"""The relevance floor: "nothing relevant" is an answer, in every door.

The fake embedder has no measured floor (0): these tests set ``search.min_score`` or pass
``min_score`` the way a user would; the realmodel test checks the default model's own floor.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault import Vault
from memvault.errors import MemvaultError

FACTS = (
    "The billing service deploys to production every Tuesday after the standup.",
    "Staging runs on db-stg-3; production runs on db-prd-1.",
    "The API rate limit is 500 requests per second per tenant.",
)


@pytest.fixture
def stocked(vault: Vault) -> Vault:
    for text in FACTS:
        vault.add("semantic", text)
    vault.add("episodic", "Deploy of billing failed on Tuesday: migration lock timeout.")
    return vault


def test_an_off_topic_query_comes_back_empty_and_says_why(stocked: Vault) -> None:
    floorless = stocked.recall("zzzqqq blorf wibble quantum", min_score=0.0, log=False)
    found = stocked.recall("zzzqqq blorf wibble quantum", min_score=0.5, log=False)
    assert found.hits == () and found.nothing_relevant
    data = found.as_dict()
    assert data["nothing_relevant"] is True and data["hits"] == []
    assert data["reason"].startswith("nothing relevant")
    # the floor decided it: without one, the fake embedder's noise is a hit
    if floorless.hits:
        assert found.below_floor and "below the floor 0.50" in data["reason"]
        assert data["closest"] == pytest.approx(max(h.relevance for h in floorless.hits), abs=1e-3)


def test_the_floor_holds_the_answer_not_each_hit(stocked: Vault) -> None:
    floorless = stocked.fact("billing deploy day", min_score=0.0, log=False)
    assert floorless.hits and not floorless.nothing_relevant
    weakest = min(h.relevance for h in floorless.hits)
    strongest = max(h.relevance for h in floorless.hits)
    assert 0.0 < weakest < strongest <= 1.0
    # a weak hit beside a strong one stays: a reply that answers is often a weak match
    kept = stocked.fact("billing deploy day", min_score=(weakest + strongest) / 2, log=False)
    assert [h.id for h in kept.hits] == [h.id for h in floorless.hits]
    assert kept.closest == pytest.approx(strongest)
    gone = stocked.fact("billing deploy day", min_score=min(strongest + 0.01, 1.0), log=False)
    assert gone.nothing_relevant and gone.below_floor


def test_config_sets_the_floor_and_a_bad_value_names_the_key(stocked: Vault) -> None:
    query = "billing zebra giraffe penguin walrus"  # one word of five matches
    floorless = stocked.recall(query, min_score=0.0, log=False)
    closest = max(h.relevance for h in floorless.hits)
    assert closest < 0.9
    stocked.set_config("search.min_score", round(closest + 0.05, 2), "strict floor")
    assert stocked.recall(query, log=False).nothing_relevant
    assert stocked.recall(query, min_score=0.0, log=False).hits  # the option overrides
    stocked.set_config("search.min_score", 7, "a bad floor")
    with pytest.raises(MemvaultError, match=r"search\.min_score: expected a number from 0 to 1"):
        stocked.recall("billing", log=False)
    with pytest.raises(MemvaultError, match=r"min_score: expected a number from 0 to 1"):
        stocked.recall("billing", min_score=-1, log=False)


def test_reads_under_the_floor_are_not_logged_as_use(stocked: Vault) -> None:
    stocked.recall("zzzqqq blorf wibble", min_score=0.9)
    stocked.recall("billing deploy Tuesday", min_score=0.0)
    usage = stocked.stats()["usage"]
    assert usage["queries"] == 2
    assert usage["recall_hit_rate"] == pytest.approx(0.5)


def _logged_ids(vault: Vault) -> list[str]:
    lines = (vault.root / ".memvault" / "access.log").read_text(encoding="utf-8").splitlines()
    return json.loads(lines[-1])["ids"]


def test_only_hits_above_the_floor_on_their_own_and_near_the_top_count_as_reads(
    stocked: Vault,
) -> None:
    for n in range(6):
        stocked.add("episodic", f"Billing note {n}: the deploy checklist was read again")
    floorless = stocked.recall("billing deploy day", min_score=0.0, limit=10, log=False)
    assert len(floorless.hits) > 5
    stocked.recall("billing deploy day", min_score=0.0, limit=10)
    assert _logged_ids(stocked) == [h.id for h in floorless.hits[:5]]  # the first five
    strongest = floorless.hits[0].relevance
    weaker = sorted({h.relevance for h in floorless.hits[:5]})
    assert len(weaker) > 1 and weaker[-1] == strongest
    floor = (weaker[-2] + strongest) / 2  # the answer stands; the weaker hits are not read
    kept = stocked.recall("billing deploy day", min_score=floor, limit=10)
    assert [h.id for h in kept.hits] == [h.id for h in floorless.hits]
    above = [h.id for h in floorless.hits[:5] if h.relevance >= floor]
    assert _logged_ids(stocked) == above and len(above) < 5


def test_context_injects_nothing_off_topic(stocked: Vault) -> None:
    block = stocked.context("zzzqqq blorf wibble", budget=400, min_score=0.9, log=False)
    assert block.included == () and "nothing relevant" in block.text
    on_topic = stocked.context("billing deploy Tuesday", budget=400, min_score=0.0, log=False)
    assert on_topic.included


def test_cli_says_nothing_relevant_and_json_carries_the_flag(
    stocked: Vault,
    cli,
    chdir,  # type: ignore[no-untyped-def]
) -> None:
    chdir(stocked.root)
    text = cli("recall", "zzzqqq blorf wibble", "--min-score", "0.95")
    assert text.code == 0 and text.out == ""
    assert "nothing relevant" in text.err
    got = cli("fact", "zzzqqq blorf wibble", "--min-score", "0.95", "--json")
    data = json.loads(got.out)
    assert data["nothing_relevant"] is True and data["min_score"] == 0.95
    hit = json.loads(cli("fact", "billing deploy Tuesday", "--min-score", "0", "--json").out)
    assert hit["nothing_relevant"] is False and 0 < hit["hits"][0]["relevance"] <= 1
    bad = cli("recall", "billing", "--min-score", "1.5")
    assert bad.code != 0 and "min_score: expected a number from 0 to 1" in bad.err


@pytest.mark.realmodel
def test_default_model_floor_abstains_off_topic_and_answers_on_topic(
    real_model: None, tmp_path: Path
) -> None:
    vault = Vault.init(tmp_path / "v")
    for text in FACTS:
        vault.add("semantic", text)
    assert vault.recall("zzzqqq blorf wibble", log=False).nothing_relevant
    assert vault.recall("What is the capital of Mongolia?", log=False).nothing_relevant
    found = vault.fact("how many requests per second may a tenant send?", log=False)
    assert found.hits and "500 requests" in found.hits[0].memory.content
