"""Intent routing: cue words in English, Portuguese, Russian and Ukrainian; --kind overrides."""

from __future__ import annotations

import datetime as dt

import pytest

from memvault.errors import MemvaultError
from memvault.search.routing import normalise_kind, route, strip_cue

CASES = [
    # (query, intent, preferred kind)
    ("When did we deploy the billing service?", "episodic", "episodic"),
    ("what happened with the migration", "episodic", "episodic"),
    ("What is the API rate limit?", "semantic", "semantic"),
    ("what do we know about the customer churn", "semantic", "semantic"),
    ("How do I release a new version?", "procedural", "procedural"),
    ("steps to rotate the keys", "procedural", "procedural"),
    ("Is it true that we use OpenAI?", "validate", "semantic"),
    ("should we switch to Rust?", "decision", None),
    # Portuguese
    ("Quando fizemos o deploy do billing?", "episodic", "episodic"),
    ("O que aconteceu na reunião de pricing?", "episodic", "episodic"),
    ("Qual é o CAC target?", "semantic", "semantic"),
    ("O que sabemos sobre churn?", "semantic", "semantic"),
    ("Como devo analisar um concorrente?", "procedural", "procedural"),
    ("É verdade que usamos OpenAI?", "validate", "semantic"),
    ("Isso conflita com alguma decisão?", "validate", "semantic"),
    # Russian
    ("Когда мы выпустили версию 2.0?", "episodic", "episodic"),
    ("Что произошло с базой данных?", "episodic", "episodic"),
    ("Что такое CAC?", "semantic", "semantic"),
    ("Как сделать релиз?", "procedural", "procedural"),
    ("Правда ли, что мы используем Postgres?", "validate", "semantic"),
    # Ukrainian
    ("Коли ми оновили сервер?", "episodic", "episodic"),
    ("Що сталося з оплатою?", "episodic", "episodic"),
    ("Що таке PMF?", "semantic", "semantic"),
    ("Як зробити реліз?", "procedural", "procedural"),
    ("Чи правда, що ми використовуємо Gemini?", "validate", "semantic"),
]


@pytest.mark.parametrize(("query", "intent", "kind"), CASES)
def test_cues_per_language(query: str, intent: str, kind: str | None) -> None:
    r = route(query)
    assert (r.intent, r.kind) == (intent, kind), r


@pytest.mark.parametrize(
    ("query", "language"),
    [
        ("when did it break", "en"),
        ("quando quebrou", "pt"),
        ("когда сломалось", "ru"),
        ("коли зламалося", "uk"),
    ],
)
def test_language_is_reported(query: str, language: str) -> None:
    assert route(query).language == language


def test_no_cue_is_general() -> None:
    r = route("postgres jsonb performance")
    assert (r.intent, r.kind, r.order) == ("general", None, "relevance")


def test_kind_overrides_the_cues() -> None:
    assert route("how do I deploy?", kind="episode").kind == "episodic"
    assert route("when did we deploy?", kind="fact").intent == "semantic"
    assert route("anything", kind="procedural").kind == "procedural"
    with pytest.raises(MemvaultError):
        route("x", kind="gossip")


def test_validation_cue_wins_wherever_it_is() -> None:
    assert route("when we deployed, is it true that it failed?").intent == "validate"


def test_earliest_cue_wins() -> None:
    assert route("what is the process when deploying").intent == "semantic"
    assert route("when was the definition of done changed").intent == "episodic"


def test_time_windows_ask_for_a_timeline() -> None:
    now = dt.datetime(2026, 11, 29, 15, 0, tzinfo=dt.UTC)
    r = route("what happened last week?", now=now)
    assert (r.intent, r.order) == ("episodic", "time")
    assert r.since == dt.datetime(2026, 11, 15, tzinfo=dt.UTC) and r.until == now
    assert route("o que aconteceu ontem?", now=now).since == dt.datetime(
        2026, 11, 28, tzinfo=dt.UTC
    )
    assert route("что произошло вчера", now=now).order == "time"
    assert route("що сталося цього тижня", now=now).order == "time"
    # "when did X" asks about one thing: best match first, not a timeline
    assert route("when did Caroline go to the support group?").order == "relevance"
    assert (
        route("what happened to the payment service outage last quarter in the EU region").order
        == "relevance"
    )


def test_strip_cue_and_kind_aliases() -> None:
    assert strip_cue("Is it true that we deploy on Fridays?") == "we deploy on Fridays"
    assert strip_cue("É verdade que usamos OpenAI?") == "usamos OpenAI"
    assert strip_cue("We deploy on Fridays") == "We deploy on Fridays"
    assert [normalise_kind(k) for k in ("episode", "facts", "procedure", None)] == [
        "episodic",
        "semantic",
        "procedural",
        None,
    ]
