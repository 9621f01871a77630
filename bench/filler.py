"""Filler memories for bench/consolidate.py: the facts and episodes a team's vault holds.

Sentences come from templates with several slots each (services, teams, people, tools,
regions, numbers, days), so two fillers are rarely about the same thing. Facts never repeat a
template's *key* (the slots saying what the fact is about: a service, a team and a day...),
so the filler holds no accidental contradiction; two facts of one template are look-alikes
about different things, which consolidation must leave alone. Episodes are events: the same
template filled differently is another event.
"""

# ruff: noqa: E501 -- one sentence template per line reads best
from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

SERVICES = [
    "billing", "search", "checkout", "auth", "notifications", "inventory", "shipping",
    "reporting", "recommendations", "payments", "onboarding", "media", "analytics",
    "accounts", "catalog", "pricing", "messaging", "scheduler", "export", "gateway",
    "ledger", "fraud-detection", "identity", "feature-store", "webhooks", "audit-log",
    "translation", "geo", "coupons", "subscriptions",
]  # fmt: skip
TEAMS = [
    "payments", "discovery", "platform", "mobile", "data", "growth", "core", "infra",
    "security", "support", "web", "ML", "finance", "legal", "design",
]  # fmt: skip
PEOPLE = [
    "Ana Costa", "Ben Clarke", "Chiara Rossi", "Dmitri Volkov", "Emma Schulz", "Farid Haddad",
    "Grace Lee", "Hugo Martins", "Ines Duarte", "Jonas Berg", "Kateryna Bondar", "Liam Walsh",
    "Mei Chen", "Nuno Alves", "Olga Petrova", "Pedro Lima", "Quinn Harper", "Rita Sousa",
    "Samir Khan", "Tara Nolan", "Uma Patel", "Victor Hugo Reis", "Wen Zhao", "Yara Nunes",
    "Zoe Adams", "Arjun Mehta", "Bianca Ferreira", "Caio Ramos", "Daria Kovalenko",
    "Elias Wagner", "Fatima Ali", "Gustavo Pinto", "Hana Sato", "Igor Sidorov", "Julia Novak",
    "Kenji Ito", "Lena Fischer", "Marco Bianchi", "Nadia Rahman", "Oscar Lindqvist",
]  # fmt: skip
TOOLS = [
    "Datadog", "Grafana", "Prometheus", "Sentry", "PagerDuty", "Opsgenie", "Jenkins",
    "CircleCI", "ArgoCD", "Helm", "Ansible", "Consul", "Redis", "Memcached", "RabbitMQ",
    "Kafka", "NATS", "MongoDB", "Cassandra", "ClickHouse", "Snowflake", "Airflow", "dbt",
    "Looker", "Metabase", "Jira", "Linear", "Notion", "Confluence", "Figma", "Okta",
    "1Password", "Vault", "Cloudflare", "Fastly", "Twilio", "SendGrid", "Segment",
]  # fmt: skip
STORES = ["PostgreSQL", "MySQL", "MongoDB", "DynamoDB", "Cassandra", "ClickHouse", "SQLite"]
REGIONS = ["eu-west-1", "eu-central-1", "us-east-1", "us-west-2", "ap-southeast-1", "sa-east-1"]
ENVS = ["production", "staging", "QA", "sandbox", "preview"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]  # fmt: skip
CITIES = ["Lisbon", "Porto", "Berlin", "Kyiv", "Warsaw", "Madrid", "Dublin", "Toronto"]
LANGS = ["Go", "Python", "Kotlin", "TypeScript", "Rust", "Java", "Elixir", "Swift"]
METRICS = [
    ("p95 latency", "ms", (80, 900)),
    ("error rate", "%", (1, 9)),
    ("queue depth", "messages", (500, 20000)),
    ("CPU usage", "%", (60, 95)),
    ("memory usage", "GB", (2, 48)),
    ("disk usage", "%", (70, 95)),
]
FEATURES = [
    "saved searches", "bulk export", "two-factor login", "dark mode", "gift cards",
    "multi-currency invoices", "SSO", "audit trails", "custom roles", "usage alerts",
    "offline mode", "CSV import", "webhook retries", "public API keys", "team workspaces",
]  # fmt: skip
CUSTOMERS = [
    "Acme Corp", "Globex", "Initech", "Umbrella Health", "Hooli", "Stark Logistics",
    "Wayne Retail", "Soylent Foods", "Tyrell Energy", "Vandelay Imports", "Massive Dynamic",
    "Cyberdyne", "Wonka Labs", "Pied Piper", "Blue Sun", "Oscorp", "Nakatomi Trading",
]  # fmt: skip


INCIDENTS = [
    "a full disk", "an expired certificate", "a stuck consumer", "a failed migration",
    "a traffic spike", "a leaked credential", "a bad deploy", "a DNS outage",
]  # fmt: skip


def _n(rng: random.Random, lo: int, hi: int) -> int:
    return rng.randint(lo, hi)


@dataclass(frozen=True)
class Filler:
    type: str  # semantic | episodic
    tags: tuple[str, ...]
    text: str
    key: str  # what a fact is about (template + key slots); unique among facts


def _facts(rng: random.Random) -> Iterator[tuple[str, tuple[str, ...], str]]:
    """(key, tags, text) of one fact, from a random template."""
    s, t, p = rng.choice(SERVICES), rng.choice(TEAMS), rng.choice(PEOPLE)
    env, region, tool = rng.choice(ENVS), rng.choice(REGIONS), rng.choice(TOOLS)
    metric, unit, (lo, hi) = rng.choice(METRICS)
    day, month, city = rng.choice(DAYS), rng.choice(MONTHS), rng.choice(CITIES)
    feat, cust, lang = rng.choice(FEATURES), rng.choice(CUSTOMERS), rng.choice(LANGS)
    store, s2 = rng.choice(STORES), rng.choice([x for x in SERVICES if x != s])
    incident = rng.choice(INCIDENTS)
    hour = f"{_n(rng, 7, 18):02d}:{rng.choice(['00', '15', '30', '45'])}"
    # fmt: off
    templates = [
        (f"owner:{s}", ("ownership",), f"The {s} service is maintained by the {t} team, "
         f"with {p} as its technical lead."),
        (f"alert:{s}:{metric}:{env}", ("observability",), f"In {env}, an alert pages the {s} on-call when "
         f"{metric} stays above {_n(rng, lo, hi)} {unit} for {_n(rng, 2, 15)} minutes."),
        (f"region:{s}:{env}", ("infra",), f"In {env}, the {s} service runs in {region} "
         f"on {_n(rng, 2, 24)} instances."),
        (f"store:{s}", ("data",), f"The {s} service keeps its state in {store}; "
         f"nightly dumps go to the {s}-backups bucket."),
        (f"standup:{t}", ("process",), f"The {t} team's standup happens every weekday at "
         f"{hour} in the {rng.choice(['Atlas', 'Orbit', 'Harbor', 'Lighthouse'])} room."),
        (f"retro:{t}", ("process",), f"The {t} team runs its retrospective every other "
         f"{day} afternoon, facilitated in turn by each member."),
        (f"tool:{t}:{tool}", ("tools",), f"{tool} is the tool the {t} team uses for "
         f"{rng.choice(['tracking work', 'dashboards', 'alerting', 'secrets', 'docs', 'design'])}."),
        (f"person:{p}", ("people",), f"{p} works in the {city} office on the {t} team "
         f"and speaks {rng.choice(['Portuguese', 'German', 'Ukrainian', 'Spanish', 'Polish'])}."),
        (f"contract:{cust}", ("sales",), f"{cust} signed a {_n(rng, 1, 3)}-year contract "
         f"in {month}; their account manager is {p}."),
        (f"sla:{cust}", ("support",), f"Tickets from {cust} get a first reply within "
         f"{_n(rng, 1, 8)} hours, per their support agreement."),
        (f"feature:{feat}:{s}", ("product",), f"The {feat} feature is implemented in the "
         f"{s} service and sits behind the flag {feat.replace(' ', '-')}-v{_n(rng, 1, 4)}."),
        (f"lang:{s}", ("platform",), f"The {s} service is written in {lang} and built "
         f"by {rng.choice(['Bazel', 'Make', 'Gradle', 'Poetry', 'Cargo', 'npm scripts'])}."),
        (f"retention:{s}:{env}", ("data",), f"Events written by {s} in {env} are kept "
         f"for {_n(rng, 7, 400)} days and then aggregated."),
        (f"cron:{s}", ("ops",), f"A cron job compacts the {s} tables every {day} at "
         f"{hour} UTC, taking about {_n(rng, 3, 50)} minutes."),
        (f"office:{city}", ("company",), f"The {city} office opens at "
         f"{_n(rng, 7, 9)}:30 and has {_n(rng, 12, 90)} desks on {_n(rng, 1, 4)} floors."),
        (f"budget:{t}:{month}", ("finance",), f"For {month}, the {t} team's cloud budget "
         f"is {_n(rng, 2, 60)},000 euros."),
        (f"api:{s}", ("api",), f"The public {s} endpoint accepts up to {_n(rng, 5, 500)} "
         f"requests per second per client."),
        (f"deploy:{s}:{env}", ("deploy",), f"Deploys of {s} to {env} go through {tool} "
         f"and need {_n(rng, 1, 3)} approvals."),
        (f"mentor:{p}", ("people",), f"{p} mentors new hires on the {t} team during their "
         f"first {_n(rng, 2, 6)} weeks."),
        (f"calls:{s}:{s2}", ("architecture",), f"The {s} service calls {s2} synchronously "
         f"with a {_n(rng, 2, 30) * 100} ms timeout and {_n(rng, 0, 5)} retries."),
        (f"runbook:{s}:{incident}", ("oncall",), f"The runbook for {incident} in {s} starts "
         f"with {rng.choice(['checking the dashboards', 'draining traffic', 'pausing the consumers', 'paging the owner'])} "
         f"and lives at wiki/runbooks/{s}."),
        (f"oncall:{t}:{month}", ("oncall",), f"In {month}, {p} coordinates the {t} team's "
         f"on-call rotation and its handover notes."),
        (f"queue:{s}", ("data",), f"{s} publishes its domain events on the "
         f"{s}.events topic, with {_n(rng, 3, 48)} partitions."),
    ]
    # fmt: on
    yield rng.choice(templates)


def _episode(rng: random.Random) -> tuple[tuple[str, ...], str]:
    s, s2, t, p = rng.choice(SERVICES), rng.choice(SERVICES), rng.choice(TEAMS), rng.choice(PEOPLE)
    env, tool, feat = rng.choice(ENVS), rng.choice(TOOLS), rng.choice(FEATURES)
    cust, metric, unit, (lo, hi) = rng.choice(CUSTOMERS), *rng.choice(METRICS)
    ver = f"{_n(rng, 1, 9)}.{_n(rng, 0, 30)}.{_n(rng, 0, 9)}"
    # fmt: off
    templates = [
        (("deploy",), f"Shipped {s} {ver} to {env}; the rollout took {_n(rng, 4, 55)} minutes."),
        (("oncall",), f"Paged at {_n(rng, 0, 23):02d}:{_n(rng, 10, 59)} because {s} {metric} "
         f"reached {_n(rng, lo, hi)} {unit}; {rng.choice(['scaled it out', 'restarted two pods', 'rolled back', 'waited it out'])}."),
        (("review",), f"Reviewed {p}'s pull request on the {s} {rng.choice(['retry logic', 'schema', 'cache keys', 'error messages', 'metrics'])}; "
         f"asked for {rng.choice(['more tests', 'a smaller diff', 'a migration note', 'a benchmark'])}."),
        (("meeting",), f"Planning with the {t} team: agreed to build {feat} before "
         f"{rng.choice(MONTHS)}, {p} to draft the design."),
        (("support",), f"{cust} asked why {feat} {rng.choice(['is slow', 'shows the wrong totals', 'is missing for some users', 'times out'])}; "
         f"opened ticket SUP-{_n(rng, 1000, 9999)}."),
        (("debugging",), f"Traced the {s} {rng.choice(['timeouts', 'memory growth', '500 errors', 'duplicate emails', 'slow queries'])} "
         f"to {rng.choice(['a missing index', 'an unbounded cache', 'a retry storm', 'a stale config', 'a lock held too long'])} in {s2}."),
        (("hiring",), f"Interviewed a {rng.choice(['backend', 'frontend', 'data', 'SRE', 'mobile'])} candidate "
         f"for the {t} team; {rng.choice(['strong hire', 'hire', 'no hire', 'lean hire'])} from me."),
        (("data",), f"Backfilled {_n(rng, 2, 90)} days of {s} events into the warehouse with {tool}."),
        (("learning",), f"Read {p}'s notes on {tool}; {rng.choice(['worth adopting', 'not for us yet', 'useful for the on-call guide', 'too heavy for the team'])}."),
        (("infra",), f"Rotated the {s} {rng.choice(['database password', 'API keys', 'TLS certificate', 'signing key'])} in {env} "
         f"with {p}; no downtime."),
        (("testing",), f"Added {_n(rng, 3, 40)} tests for {s}'s {rng.choice(['refund path', 'rate limiter', 'pagination', 'webhooks', 'parser'])}; coverage is now {_n(rng, 60, 95)}%."),
        (("incident",), f"Wrote the postmortem for the {s} outage on {rng.choice(DAYS)}: "
         f"{_n(rng, 5, 120)} minutes, caused by {rng.choice(['a bad deploy', 'an expired token', 'a full disk', 'a DNS change', 'a noisy neighbour'])}."),
    ]
    # fmt: on
    return rng.choice(templates)


_SPACES = re.compile(r"\s+")


def fillers(rng: random.Random, facts: int, episodes: int, taken: set[str]) -> list[Filler]:
    """``facts`` distinct facts (no two with one key) and ``episodes`` distinct episodes,
    none equal to a text in ``taken`` (which they join)."""
    out: list[Filler] = []
    keys: set[str] = set()
    tries = 0
    while sum(f.type == "semantic" for f in out) < facts:
        tries += 1
        if tries > facts * 200:
            raise SystemExit(f"the fact templates ran out of keys at {len(out)} facts")
        key, tags, text = next(_facts(rng))
        text = _SPACES.sub(" ", text)
        if key in keys or text in taken:
            continue
        keys.add(key)
        taken.add(text)
        out.append(Filler("semantic", tags, text, key))
    while len(out) < facts + episodes:
        tags, text = _episode(rng)
        text = _SPACES.sub(" ", text)
        if text in taken:
            continue
        taken.add(text)
        out.append(Filler("episodic", tags, text, ""))
    return out
