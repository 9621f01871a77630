"""Chat becomes knowledge: facts said in a transcript are distilled into semantic memories
that cite their turns, before the transcript is archived (real git, real SQLite)."""

from __future__ import annotations

import datetime as dt

import pytest

from memvault import Vault
from memvault.consolidate.statements import statements
from memvault.transcripts import split_address

from helpers import git, last_message

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def weeks(n: float) -> dt.datetime:
    return T0 + dt.timedelta(weeks=n)


def chat(vault: Vault, session: str, turns: list[tuple[str, str]], start: dt.datetime) -> None:
    for i, (role, text) in enumerate(turns):
        vault.log(session, role, text, when=start + dt.timedelta(minutes=i))


def facts(vault: Vault) -> list:
    return [m for m in vault.all_memories() if m.type == "semantic"]


def distilled(vault: Vault) -> list:
    return [m for m in facts(vault) if m.meta.get("source") == "distilled"]


def test_a_fact_said_in_chat_is_found_by_fact_and_cites_its_turn(vault: Vault) -> None:
    chat(
        vault,
        "ops-1",
        [
            ("user", "Hi! Quick note for the record: staging is on db-stg-3."),
            ("assistant", "Got it."),
            ("user", "And on-call rotates on Mondays."),
        ],
        T0,
    )
    vault.consolidate(now=weeks(6))
    hits = vault.fact("which host is staging on?").hits
    assert hits and hits[0].memory is not None
    top = hits[0].memory
    assert top.type == "semantic" and top.status == "active"
    assert top.content.strip() == "Staging is on db-stg-3."
    assert top.meta["source"] == "distilled" and top.meta["confidence"] == "medium"
    # the evidence names the turn that said it, and that address opens the turn
    (address,) = top.meta["evidence"]
    assert split_address(address)[0] == "session-ops-1"
    assert "db-stg-3" in vault.turn_window(address, around=0).turns[0].text
    assert any(m.content.strip() == "On-call rotates on Mondays." for m in distilled(vault))
    # one consolidation, one commit: the facts, the summary and the archived transcript
    assert "distill" in last_message(vault.root)
    assert vault.get("session-ops-1").path.startswith("archive/")


def test_a_transcript_is_distilled_before_it_is_archived(vault: Vault) -> None:
    """Weekly runs as a team runs them: decay would archive a fast-decaying transcript within
    weeks; it stays until it is distilled, and its facts exist by the time it is archived."""
    vault.set_config("consolidate.distill_after_days", 60, "distil after two months")
    chat(vault, "ops-2", [("user", "The deploy window is Thursday 14:00.")], T0)
    for week in range(1, 11):
        vault.consolidate(now=weeks(week))
        archived = vault.get("session-ops-2").path.startswith("archive/")
        found = [m for m in distilled(vault) if "Thursday 14:00" in m.content]
        assert archived == bool(found), f"week {week}: archived={archived}, facts={found}"
    assert vault.get("session-ops-2").path.startswith("archive/")


def test_an_old_imported_transcript_is_distilled_not_just_retained(vault: Vault) -> None:
    """Past retention.transcripts a transcript is archived by distillation, facts first."""
    vault.set_config("retention.transcripts", 30, "keep transcripts a month")
    vault.set_config("consolidate.distill_after_days", 365, "distil late")
    chat(vault, "ops-3", [("user", "The billing service runs on k8s-prod-2.")], T0)
    vault.consolidate(now=weeks(8))
    assert vault.get("session-ops-3").path.startswith("archive/")
    assert [m.content.strip() for m in distilled(vault)] == [
        "The billing service is on k8s-prod-2."
    ]


def test_a_later_chat_statement_of_a_new_value_supersedes_the_distilled_one(
    vault: Vault,
) -> None:
    chat(vault, "ops-4", [("user", "Staging is on db-stg-3.")], T0)
    vault.consolidate(now=weeks(6))
    (old,) = distilled(vault)
    chat(vault, "ops-5", [("user", "FYI staging moved to db-stg-4 last night.")], weeks(7))
    vault.consolidate(now=weeks(13))
    before = vault.get(old.id)
    assert before.status == "superseded"
    new = vault.get(str(before.meta["superseded_by"]))
    assert new.content.startswith("Staging is on db-stg-4")
    assert new.meta["supersedes"] == old.id and new.status == "active"
    top = vault.fact("staging host db-stg").hits[0].memory
    assert top is not None and top.id == new.id
    # one commit changed both files
    changed = git(vault.root, "show", "--name-only", "--format=", "HEAD").split()
    assert before.path in changed and new.path in changed


def test_a_change_said_in_the_same_conversation_supersedes_within_the_run(vault: Vault) -> None:
    chat(
        vault,
        "ops-6",
        [("user", "The API rate limit is 200 requests per second."), ("assistant", "OK.")]
        + [("user", "Update: the API rate limit is 500 requests per second.")],
        T0,
    )
    vault.consolidate(now=weeks(6))
    by_status = {m.status: m for m in distilled(vault)}
    assert set(by_status) == {"active", "superseded"}
    assert "500" in by_status["active"].content and "200" in by_status["superseded"].content


def test_a_fact_written_by_hand_is_superseded_by_a_newer_chat_statement(vault: Vault) -> None:
    vault.add("semantic", "On-call rotates on Mondays.", valid_from="2025-12-01T00:00:00Z")
    chat(vault, "ops-7", [("user", "From now on, on-call rotates on Tuesdays.")], T0)
    vault.consolidate(now=weeks(6))
    old = next(m for m in facts(vault) if "Mondays" in m.content)
    assert old.status == "superseded"
    assert "Tuesdays" in vault.get(str(old.meta["superseded_by"])).content


QUESTIONS_AND_GUESSES = [
    ("user", "Is staging on db-stg-3?"),
    ("user", "Maybe staging is on db-stg-9."),
    ("user", "I think the rate limit is 300 requests per second."),
    ("user", "What if we moved billing to k8s-prod-7"),
    ("user", "Staging is not on db-stg-5 anymore."),
    ("user", "Thanks, see you on Monday!"),
    ("assistant", "Staging is on db-stg-8."),  # the assistant's words, not the user's
    ("user", "Чи стейджинг працює на db-stg-3?"),
    ("user", "Может быть, стейджинг работает на db-stg-6."),
    ("user", "Talvez o staging fique no db-stg-7."),
]


def test_questions_hypotheticals_and_assistant_guesses_are_not_written(vault: Vault) -> None:
    chat(vault, "ops-8", QUESTIONS_AND_GUESSES, T0)
    vault.consolidate(now=weeks(6))
    assert distilled(vault) == []
    assert vault.get("session-ops-8").path.startswith("archive/")  # distilled all the same


def test_distill_facts_off_writes_no_facts(vault: Vault) -> None:
    vault.set_config("consolidate.distill_facts", False, "no facts from chat")
    chat(vault, "ops-9", [("user", "Staging is on db-stg-3.")], T0)
    vault.consolidate(now=weeks(6))
    assert distilled(vault) == [] and vault.get("session-ops-9").path.startswith("archive/")


def test_dry_run_shows_the_facts_and_writes_nothing(vault: Vault) -> None:
    chat(vault, "ops-10", [("user", "We decided to use Postgres 16.")], T0)
    head = git(vault.root, "rev-parse", "HEAD")
    plan, sha = vault.consolidate(now=weeks(6), dry_run=True)
    assert sha is None and git(vault.root, "rev-parse", "HEAD") == head
    assert any(a.step == "distill" and a.what == "fact" for a in plan.actions)
    assert any(p.startswith("semantic/decisions/") for p in plan.new_files)


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("btw, staging moved to db-stg-4", "Staging is on db-stg-4."),
        ("We decided to use Postgres 16.", "We use Postgres 16."),
        ("From now on, deploys happen on Thursdays.", "Deploys happen on Thursdays."),
        ("Стейджинг переїхав на db-stg-4.", "Стейджинг працює на db-stg-4."),
        ("Мы решили использовать Postgres 16.", "Решение: использовать Postgres 16."),
        ("O staging mudou para o db-stg-4.", "O staging fica em db-stg-4."),
    ],
)
def test_statements_are_written_one_way_so_a_change_is_the_same_pattern(
    said: str, written: str
) -> None:
    assert [s.text for s in statements(said)] == [written]


@pytest.mark.parametrize("text", [t for _, t in QUESTIONS_AND_GUESSES if _ == "user"])
def test_questions_and_hedges_are_not_statements(text: str) -> None:
    assert statements(text) == []
