"""Generated memories for bench/scale.py: conversation turns and facts a vault really holds.

* **Turns** (half of the memories), as LoCoMo and REALTALK record them: two people talking
  across dated sessions about their lives (family, hobbies, work, trips, pets, health,
  plans), each turn an episodic memory with its speaker and session. Sentences come from
  templates with several slots, so turns rarely repeat.
* **Facts** (a third): what a team's agents learn -- services, stores, owners, limits,
  decisions, people's preferences --, some with a ``subject`` (a newer fact on one subject
  supersedes the older), and about one in a hundred restated in other words (what
  consolidation should merge).
* **Procedures** (the rest): steps for the chores of a team.

Deterministic for a seed. ``records(n, seed)`` yields JSONL records as ``memvault import``
reads them (fields and ``content``; ids unique).
"""

# ruff: noqa: E501 -- one sentence template per line reads best
from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Iterator
from typing import Any

PEOPLE = [
    "Caroline", "Melanie", "Jon", "Gina", "John", "Maria", "Joanna", "Nate", "Tim", "Audrey",
    "Andrew", "Evan", "Sam", "Calvin", "Dave", "Deborah", "Jolene", "James", "Priya", "Olek",
    "Rafael", "Yuki", "Amara", "Lucas", "Ingrid", "Tomasz", "Fatima", "Diego", "Hana", "Kofi",
]  # fmt: skip
RELATIVES = [
    "mom",
    "dad",
    "sister",
    "brother",
    "grandma",
    "cousin",
    "daughter",
    "son",
    "aunt",
    "best friend",
]
HOBBIES = [
    "pottery", "painting", "rock climbing", "baking sourdough", "salsa dancing", "chess",
    "gardening", "photography", "playing the violin", "knitting", "surfing", "running",
    "birdwatching", "woodworking", "writing poems", "yoga", "skateboarding", "cooking Thai food",
]  # fmt: skip
PLACES = [
    "Lisbon", "the Rockies", "Kyoto", "a lake cabin", "Barcelona", "the coast", "Vermont",
    "Cape Town", "Oaxaca", "Edinburgh", "the Alps", "Hanoi", "Yosemite", "Tbilisi", "Porto",
]  # fmt: skip
PETS = [
    ("dog", "Luna"),
    ("cat", "Oliver"),
    ("dog", "Max"),
    ("cat", "Bella"),
    ("parrot", "Kiwi"),
    ("rabbit", "Coco"),
    ("dog", "Bailey"),
]
BOOKS = [
    "Becoming",
    "Dune",
    "The Alchemist",
    "Educated",
    "Sapiens",
    "Circe",
    "Project Hail Mary",
    "Little Women",
]
FEELINGS = [
    "so proud",
    "a bit nervous",
    "really grateful",
    "exhausted but happy",
    "thrilled",
    "kind of overwhelmed",
    "at peace",
]
EVENTS = [
    "a support group meeting", "my first marathon", "a charity bake sale", "a job interview",
    "our neighborhood cleanup", "a family reunion", "an open mic night", "a pottery workshop",
    "the school play", "a volunteering shift at the shelter", "my cousin's wedding",
]  # fmt: skip
JOBS = [
    "nurse",
    "teacher",
    "software engineer",
    "counselor",
    "chef",
    "graphic designer",
    "park ranger",
    "accountant",
]

TURNS = [
    "I went to {event} yesterday and honestly I feel {feeling}.",
    "Guess what -- I finally signed up for {hobby} classes! First one is on {day}.",
    "My {relative} just got back from {place}, they brought me the nicest souvenirs.",
    "How is {pet_name} doing? Last time you said your {pet} wasn't eating much.",
    "{pet_name} is great! We took the {pet} to the vet and it was just a tummy thing.",
    "I've been reading {book} before bed, it's making me rethink a lot of things.",
    "We're planning a trip to {place} in {month}, any tips on where to stay?",
    "Work has been intense -- I'm training to become a {job} and the exams are in {month}.",
    "I spent the whole weekend {hobby}; my hands are sore but it was worth it.",
    "Thanks for asking about my {relative}, the surgery went well and they're home now.",
    "Remember when we talked about {hobby}? I bought my own gear last {day}.",
    "It's been {n} years since I moved here and it finally feels like home.",
    "I ran into {friend} at {event}, we hadn't seen each other since college!",
    "My kids made me a card for my birthday, I cried a little, not going to lie.",
    "I'm thinking of adopting a {pet}, do you think I'm ready for that?",
    "The photos from {place} came out amazing, I'll send you the one of the sunset.",
    "I volunteered at {event} and met people with stories like mine. It helped.",
    "Can you believe my {relative} took up {hobby} at {age}? It's so inspiring.",
    "I finished {book} last night -- the ending completely surprised me.",
    "We had a small fire in the kitchen on {day}, everyone is fine, just a lot of smoke.",
    "I'm {feeling} about the new job as a {job}; the team seems kind.",
    "Last {month} I tried {hobby} for the first time and fell in love with it.",
    "My {relative} and I are doing a {n}-day hiking trip near {place} next month.",
    "Honestly I needed that talk, thanks for always listening, {friend}.",
]  # fmt: skip

SERVICES = [
    "billing",
    "search",
    "checkout",
    "auth",
    "notifications",
    "inventory",
    "shipping",
    "reporting",
    "payments",
    "onboarding",
    "ledger",
    "webhooks",
    "gateway",
    "scheduler",
    "catalog",
]
STORES = ["PostgreSQL 15", "MySQL 8", "Redis", "DynamoDB", "ClickHouse", "SQLite", "MongoDB"]
REGIONS = ["eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-southeast-1"]
TEAMS = ["payments", "platform", "mobile", "data", "growth", "infra", "security", "support", "web"]
TOOLS = [
    "Grafana",
    "Sentry",
    "PagerDuty",
    "ArgoCD",
    "Helm",
    "Kafka",
    "Airflow",
    "dbt",
    "Linear",
    "Okta",
    "Terraform",
]
LANGS = ["Go", "Python", "Kotlin", "TypeScript", "Rust", "Java", "Elixir"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]

# (subject template or None, fact template, restatement used for planted near-duplicates)
FACTS = [
    ("svc.{service}.store", "The {service} service keeps its data in {store} in {region}.", "{service} stores everything in {store} ({region})."),
    ("svc.{service}.owner", "The {team} team owns the {service} service; {person} is the on-call lead.", "{person} from the {team} team leads on-call for {service}."),
    ("svc.{service}.limit", "The {service} API is rate limited to {n}00 requests per second per client.", "Clients may send at most {n}00 requests/s to the {service} API."),
    ("svc.{service}.lang", "The {service} service is written in {lang} and deployed with {tool}.", "{service} is a {lang} codebase shipped through {tool}."),
    (None, "Deploys of {service} are frozen on {day}s after 16:00 UTC.", "No {service} deploys on {day} afternoons (after 16:00 UTC)."),
    (None, "{person} prefers code reviews in the morning and short pull requests.", "{person} likes small PRs, reviewed before noon."),
    (None, "Alerts for {service} go to the #{team}-alerts channel and page through PagerDuty.", "{service} alerts land in #{team}-alerts and page via PagerDuty."),
    ("person.{person}.city", "{person} lives in {place} and works remotely on {day}s.", "{person} is based in {place}, remote on {day}s."),
    (None, "{person}'s {relative} is a {job}, which is why they care about {hobby}.", "{person} got into {hobby} because their {relative} is a {job}."),
    ("svc.{service}.timeout", "The {service} client timeout is {n} seconds, with {m} retries.", "{service} calls time out after {n}s and retry {m} times."),
    (None, "We decided in {month} to move {service} metrics from Grafana to {tool}.", "Since {month}, {service} metrics live in {tool} instead of Grafana."),
    (None, "Backups of the {service} database run nightly and are kept for {n} days.", "The {service} DB is backed up every night, retained {n} days."),
]  # fmt: skip
PROCEDURES = [
    ("Rotate the {service} credentials", ["Create a new key in {tool}", "Deploy {service} with the new key", "Revoke the old key after {n} hours"]),
    ("Roll back a bad {service} deploy", ["Find the last good release in {tool}", "Run the rollback job for {service}", "Post in #{team}-alerts"]),
    ("Onboard a new engineer to {team}", ["Grant Okta groups for {team}", "Pair with {person} on a {service} ticket", "Review the {service} runbook"]),
    ("Restore {service} from backup", ["Stop writes to {service}", "Restore the snapshot into {store}", "Verify row counts, then resume writes"]),
    ("Investigate {service} latency", ["Open the {service} dashboard in {tool}", "Compare p95 with last {day}", "Check {store} slow queries"]),
]  # fmt: skip


DAYS_SPAN = 180  # the history a vault holds: half a year of a team's agents


def _slots(rng: random.Random) -> dict[str, Any]:
    pet, pet_name = rng.choice(PETS)
    return {
        "event": rng.choice(EVENTS), "feeling": rng.choice(FEELINGS), "hobby": rng.choice(HOBBIES),
        "day": rng.choice(DAYS), "relative": rng.choice(RELATIVES), "place": rng.choice(PLACES),
        "pet": pet, "pet_name": pet_name, "book": rng.choice(BOOKS), "month": rng.choice(MONTHS),
        "job": rng.choice(JOBS), "n": rng.randint(2, 19), "m": rng.randint(1, 5),
        "friend": rng.choice(PEOPLE), "age": rng.randint(55, 81), "service": rng.choice(SERVICES),
        "store": rng.choice(STORES), "region": rng.choice(REGIONS), "team": rng.choice(TEAMS),
        "person": rng.choice(PEOPLE), "tool": rng.choice(TOOLS), "lang": rng.choice(LANGS),
    }  # fmt: skip


def _slug(text: str, words: int = 6) -> str:
    return "-".join(re.findall(r"[a-z0-9]+", text.lower())[:words]) or "memory"


def _time(base: dt.datetime, minutes: float) -> str:
    return (base + dt.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def records(n: int, seed: int = 17, end: dt.datetime | None = None) -> Iterator[dict[str, Any]]:
    """``n`` import records (a few more: restated facts): turns, facts and procedures,
    interleaved as they accrue over the ``DAYS_SPAN`` days before ``end`` (default: now)."""
    rng = random.Random(seed)
    end = end or dt.datetime.now(dt.UTC)
    start = end - dt.timedelta(days=DAYS_SPAN)
    step = DAYS_SPAN * 24 * 60 / max(n, 1)  # minutes between two memories, on average
    minutes = 0.0
    session, speakers, turn_no = "", ("", ""), 0
    for i in range(n):
        minutes += rng.uniform(0.2, 1.8) * step
        kind = rng.random()
        slots = _slots(rng)
        if kind < 0.5:  # a conversation turn
            if turn_no == 0 or rng.random() < 0.05:
                speakers = tuple(rng.sample(PEOPLE, 2))  # type: ignore[assignment]
                session, turn_no = f"conv-{i}-session-{rng.randint(1, 30)}", 0
            speaker = speakers[turn_no % 2]
            text = rng.choice(TURNS).format(**slots)
            turn_no += 1
            yield {
                "id": f"{_slug(text)}-{i}",
                "type": "episodic",
                "category": "conversation",
                "created": _time(start, minutes),
                "title": f"{speaker}: {text[:60]}",
                "session": session,
                "speaker": speaker,
                "tags": [speaker.lower(), "conversation"],
                "importance": rng.randint(1, 4),
                "content": f"{speaker}: {text}",
            }
        elif kind < 0.84:  # a fact
            subject, template, restated = rng.choice(FACTS)
            text = template.format(**slots)
            record: dict[str, Any] = {
                "id": f"{_slug(text)}-{i}",
                "type": "semantic",
                "category": rng.choice(
                    ["facts", "facts", "decisions", "relationships", "constraints"]
                ),
                "created": _time(start, minutes),
                "tags": [slots["service"], slots["team"]],
                "importance": rng.randint(2, 5),
                "content": text,
            }
            if subject and rng.random() < 0.03:
                record["subject"] = subject.format(**slots).lower().replace(" ", "-")
            yield record
            if rng.random() < 0.01:  # the same fact restated: a near-duplicate to merge
                again = restated.format(**slots)
                yield {
                    **record,
                    "id": f"{_slug(again)}-{i}-again",
                    "content": again,
                    "created": _time(start, minutes + 60),
                }
        else:  # a procedure
            title, steps = rng.choice(PROCEDURES)
            name = title.format(**slots)
            yield {
                "id": f"{_slug(name)}-{i}",
                "type": "procedural",
                "category": "workflows",
                "created": _time(start, minutes),
                "title": name,
                "steps": [s.format(**slots) for s in steps],
                "trigger": [slots["service"], _slug(name, 2)],
                "importance": 3,
                "content": f"{name}. Used when {slots['service']} needs it.",
            }
