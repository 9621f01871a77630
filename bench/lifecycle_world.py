"""The world of ``bench/lifecycle.py``: twelve weeks of a team's work, drawn per seed from
templates, so that a figure measures what the vault does with a kind of event rather than
with one sentence.

:func:`world` returns the :class:`Event` list (sorted by time) and what the scorer must
know about it: the facts that change (half written with ``--subject``, half without), the
look-alike facts about other things that must stay in force beside each other, facts said
only in chat, problems that recur in other words, two procedures for each of three tasks
(one better, which one drawn per seed) and junk episodes. Values are unique within a seed
(host names, numbers, days within a kind), so a value found in a hit names the fact.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Any

T0 = dt.datetime(2026, 1, 5, 8, 0, tzinfo=dt.UTC)  # a Monday
AGENTS = ("ops-agent", "dev-agent", "support-agent")
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
# three sets of names, so a name found in a hit says which kind of memory it came from: team
# leads (a fact that changes), release managers (said in chat), everyone else (episodes)
LEADS = ["Ana", "Bruno", "Chen", "Dara", "Emeka"]
MANAGERS = ["Kofi", "Lena", "Mats"]
PEOPLE = ["Farah", "Goran", "Hana", "Ivo", "Jun"]

# kind -> (first wordings, change wordings, questions, things, value maker). {t} the thing,
# {v} the value. The first wording is the fact as written; a change says the new value in
# one of the change wordings.
CHANGING: dict[str, tuple[list[str], list[str], list[str], list[str]]] = {
    "host": (
        [
            "The {t} database runs on {v}.",
            "The {t} database is hosted on {v}.",
            "Our {t} database lives on {v}.",
        ],
        [
            "The {t} database runs on {v}.",
            "The {t} database moved to {v}.",
            "The {t} database now runs on {v}.",
            "We migrated the {t} database to {v}.",
        ],
        [
            "which host is the {t} database on?",
            "where does the {t} database run?",
            "{t} database host",
        ],
        [
            "billing",
            "search",
            "ledger",
            "payments",
            "catalog",
            "reports",
            "auth",
            "media",
            "orders",
        ],
    ),
    "rate": (
        [
            "The {t} API rate limit is {v} requests per second.",
            "The {t} API allows {v} requests per second.",
        ],
        [
            "The {t} API rate limit is {v} requests per second.",
            "The {t} API rate limit is now {v} requests per second.",
            "We changed the {t} API rate limit to {v} requests per second.",
        ],
        ["what is the {t} API rate limit?", "how many requests per second does the {t} API allow?"],
        ["partner", "export", "geocoding", "pricing", "upload", "reporting"],
    ),
    "oncall": (
        ["Team {t} on-call rotates on {v}s.", "The {t} team hands over on-call every {v}."],
        [
            "Team {t} on-call rotates on {v}s.",
            "Team {t} on-call now rotates on {v}s.",
            "From now on the {t} team hands over on-call every {v}.",
        ],
        ["when does team {t} on-call rotate?", "which day does the {t} team hand over on-call?"],
        ["Atlas", "Borealis", "Cobalt", "Dynamo", "Ember", "Falcon"],
    ),
    "lead": (
        ["The {t} team is led by {v}.", "{v} leads the {t} team."],
        ["The {t} team is led by {v}.", "{v} now leads the {t} team."],
        ["who leads the {t} team?", "who is the {t} team lead?"],
        ["mobile", "platform", "growth", "security", "data", "design"],
    ),
    "timeout": (
        ["The {t} job times out after {v} seconds.", "The {t} job has a timeout of {v} seconds."],
        [
            "The {t} job times out after {v} seconds.",
            "The {t} job timeout is now {v} seconds.",
            "We set the {t} job timeout to {v} seconds.",
        ],
        ["what is the {t} job timeout?", "how long before the {t} job times out?"],
        ["invoice-sync", "report-build", "index-rebuild", "log-shipping", "thumbnail"],
    ),
    "version": (
        ["The {t} service uses Postgres {v}.", "The {t} service runs on Postgres {v}."],
        [
            "The {t} service uses Postgres {v}.",
            "The {t} service was upgraded to Postgres {v}.",
            "The {t} service now runs on Postgres {v}.",
        ],
        [
            "which Postgres version does the {t} service use?",
            "what Postgres does the {t} service run?",
        ],
        ["checkout", "inventory", "analytics", "crm", "shipping"],
    ),
}

# Look-alikes: two facts about two things that read alike ({a}/{b} the two values). Both stay
# in force; neither may replace the other.
LOOKALIKES: dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]], list[str]]] = {
    "env-host": (
        [
            ("The staging {t} database runs on {a}.", "The production {t} database runs on {b}."),
            ("The {t} staging database is on {a}.", "The {t} production database is on {b}."),
        ],
        [
            ("which host is the staging {t} database on?", ""),
            ("which host is the production {t} database on?", ""),
        ],
        ["wallet", "coupons", "invoices", "webhooks", "tickets", "refunds"],
    ),
    "oncall-pair": (
        [
            ("Team {t} on-call rotates on {a}s.", "Team {u} on-call rotates on {b}s."),
            (
                "The {t} team hands over on-call every {a}.",
                "The {u} team hands over on-call every {b}.",
            ),
        ],
        [("when does team {t} on-call rotate?", ""), ("when does team {u} on-call rotate?", "")],
        ["Granite", "Helix", "Iris", "Juniper", "Kestrel", "Lumen", "Magnet", "Nimbus"],
    ),
    "latency": (
        [
            (
                "The p95 latency target for the {t} API is {a} ms.",
                "The p99 latency target for the {t} API is {b} ms.",
            ),
        ],
        [
            ("what is the p95 latency target of the {t} API?", ""),
            ("what is the p99 latency target of the {t} API?", ""),
        ],
        ["search", "checkout", "feed", "chat"],
    ),
    "backup": (
        [
            ("Staging backups of {t} run at {a}.", "Production backups of {t} run at {b}."),
            ("The {t} staging backup starts at {a}.", "The {t} production backup starts at {b}."),
        ],
        [
            ("when do the staging {t} backups run?", ""),
            ("when do the production {t} backups run?", ""),
        ],
        ["warehouse", "archive", "metrics", "mailer"],
    ),
}

CHAT: list[tuple[str, str, str]] = [
    # (said in a user turn, the question, what the value looks like)
    ("btw, the {t} cache moved to {v}", "which host is the {t} cache on?", "host"),
    (
        "Quick note for the record: the {t} queue runs on {v}.",
        "which host is the {t} queue on?",
        "host",
    ),
    ("For the record, the {t} standup is at {v}.", "when is the {t} standup?", "time"),
    ("We decided to use Redis {v} for {t}.", "which Redis version do we use for {t}?", "number"),
    ("From now on, {t} deploys happen on {v}s.", "which day do {t} deploys happen?", "day"),
    ("Heads up: the {t} release manager is {v}.", "who is the {t} release manager?", "person"),
]
CHAT_THINGS = [
    "notifications",
    "scheduler",
    "gateway",
    "storefront",
    "backoffice",
    "exporter",
    "sync-worker",
]
CHAT_NOISE = [
    ("user", "Is the {t} cache on cache-zz-{n}?"),
    ("user", "Maybe we should move {t} to a bigger box."),
    ("user", "I think the {t} standup might move to 11:00."),
    ("user", "What if we tried Redis 99 for {t}"),
    ("assistant", "The {t} queue is probably on queue-zz-{n}."),
    ("user", "Thanks, that helps!"),
    ("user", "Hi! Quick question before the meeting."),
    ("assistant", "Sure, I can look that up."),
]

# Problems that recur in other words: one family per problem, each occurrence another wording.
RECURRING: dict[str, list[str]] = {
    "migration-lock": [
        "Deploy of {s} failed: the users table migration held a lock for ten minutes.",
        "The {s} rollout stalled because a schema migration locked the users table.",
        "Again a migration on the users table blocked the {s} deploy with a lock timeout.",
        "{s} release aborted: lock wait timeout while migrating the users table.",
    ],
    "disk-full": [
        "The {s} build agents ran out of disk space and the pipeline failed.",
        "CI for {s} broke again: no space left on device on the build runner.",
        "Builds of {s} failed because the runner's disk filled up with old docker images.",
        "Pipeline red for {s}: the build machine disk was full.",
    ],
    "cert-expiry": [
        "The {s} endpoint went down because its TLS certificate expired.",
        "Clients of {s} got certificate errors: the cert had expired overnight.",
        "An expired certificate took the {s} API offline for an hour.",
    ],
    "oom": [
        "The {s} worker was OOM-killed during the nightly batch.",
        "Nightly batch on {s} crashed: out of memory, the kernel killed the worker.",
        "{s} workers died again from memory exhaustion in the night job.",
    ],
}
RECURRING_QUESTIONS = {
    "migration-lock": "what keeps going wrong with {s} deploys?",
    "disk-full": "why do the {s} builds fail?",
    "cert-expiry": "why did the {s} endpoint go down?",
    "oom": "why does the {s} nightly batch crash?",
}
SERVICES = ["billing-api", "storefront", "ledger-svc", "notifier", "gateway", "reports-svc"]

ROUTINE = [
    "Shipped {s} {n}.{m} to production.",
    "Paired with {p} on the {s} dashboard.",
    "Reviewed open pull requests for {s} with {p}.",
    "Wrote the quarterly capacity notes for {s}.",
]
JUNK = [
    "The coffee machine on floor {n} was out of beans.",
    "Lunch delivery arrived {n} minutes late.",
    "The printer near the kitchen jammed again.",
    "Someone left the meeting room whiteboard full of doodles.",
    "{p} watered the office plants.",
    "The parking garage gate was stuck open this morning.",
    "Cake in the kitchen for {p}'s birthday.",
]
# the inspector's searches: a person browsing what the junk is about
BROWSE = ["coffee machine", "printer jammed", "lunch delivery", "office plants", "parking gate"]
# agents' reads about other things: the junk may come back low in the list
NOISE_READS = [
    "what happened this week",
    "notes from the kitchen sync",
    "floor plan of the office",
    "anything late this morning",
    "status of the birthday planning",
    "what is left on the whiteboard",
]
OFFTOPIC = [
    "zzzqqq blorf wibble",
    "hi",
    "what is the capital of Peru?",
    "best banana bread recipe",
    "how tall is Mount Everest?",
    "who won the 1998 football world cup?",
    "translate good morning into French",
    "a good name for a grey cat",
    "how do I knit a scarf?",
    "what's the plot of Hamlet?",
    "lyrics of happy birthday",
    "how many moons does Jupiter have?",
    "recommend a sci-fi novel",
    "what rhymes with orange",
    "is a tomato a fruit?",
    "how to grow basil on a balcony",
    "when did the Roman empire fall?",
    "tips for a marathon",
    "thanks!",
    "ok",
]

# task -> two procedures: (title, trigger, steps) and the questions that ask for the task
PROCEDURES: dict[str, tuple[list[tuple[str, list[str], list[str]]], list[str]]] = {
    "tls": (
        [
            (
                "Rotate the TLS certificate with certbot",
                ["tls", "certificate"],
                ["Run certbot renew on the edge hosts", "Reload nginx", "Check the expiry date"],
            ),
            (
                "Rotate the TLS certificate by hand",
                ["tls", "certificate"],
                ["Generate a CSR", "Upload it to the CA portal", "Replace the files and reload"],
            ),
        ],
        [
            "how do I rotate the TLS certificate?",
            "renew the TLS cert",
            "certificate rotation steps",
        ],
    ),
    "restore": (
        [
            (
                "Restore the database from the nightly snapshot",
                ["restore", "database"],
                ["Fetch the latest snapshot", "Run pg_restore into a new instance", "Switch DNS"],
            ),
            (
                "Restore the database by replaying WAL",
                ["restore", "database"],
                ["Start a fresh replica", "Replay the WAL archive", "Promote the replica"],
            ),
        ],
        [
            "how do I restore the database?",
            "database restore procedure",
            "recover the db from backup",
        ],
    ),
    "rollback": (
        [
            (
                "Roll back a deploy with helm rollback",
                ["rollback", "deploy"],
                ["Find the previous release", "Run helm rollback", "Watch the error rate"],
            ),
            (
                "Roll back a deploy by reverting the merge",
                ["rollback", "deploy"],
                ["Revert the merge commit", "Wait for CI", "Redeploy main"],
            ),
        ],
        ["how do I roll back a bad deploy?", "rollback steps for a deploy", "undo a release"],
    ),
}
SUCCESS = (0.85, 0.25)  # the better and the worse procedure's chance of success


@dataclass
class Event:
    """One thing that happens: ``kind`` says what, ``at`` when, ``data`` the rest."""

    at: dt.datetime
    kind: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class World:
    seed: int
    weeks: int
    events: list[Event]
    changing: list[dict[str, Any]]  # each: key, kind, thing, subject, versions [(week, v, text)]
    lookalikes: list[dict[str, Any]]  # each: key, text, value, question, pair
    chat: list[dict[str, Any]]  # each: key, said, question, value, last_turn
    recurring: list[dict[str, Any]]  # each: family, service, texts, question
    procedures: dict[str, dict[str, Any]]  # task -> titles, better index, questions
    junk: list[dict[str, Any]]  # each: key, text, importance


def _cap(text: str) -> str:
    return text[0].upper() + text[1:]


def _when(rng: random.Random, week: int, day: int | None = None) -> dt.datetime:
    d = rng.randrange(5) if day is None else day
    return T0 + dt.timedelta(
        days=7 * week + d, hours=1 + rng.randrange(8), minutes=rng.randrange(60)
    )


def _value(kind: str, rng: random.Random, thing: str, used: set[str]) -> str:
    while True:
        if kind == "host":
            v = f"db-{thing[:3]}-{rng.randrange(10, 99)}"
        elif kind == "rate":
            v = str(rng.choice(range(100, 2100, 100)))
        elif kind == "lead":
            v = rng.choice(LEADS)
        elif kind == "timeout":
            v = str(rng.choice(range(30, 930, 30)))
        elif kind == "version":
            v = str(rng.randrange(10, 18))
        else:
            raise ValueError(kind)
        if v not in used:
            used.add(v)
            return v


def _changing(rng: random.Random, weeks: int, events: list[Event]) -> list[dict[str, Any]]:
    out = []
    n = 0
    for kind, (firsts, changes, questions, things) in CHANGING.items():
        for thing in rng.sample(things, 2):
            used: set[str] = set()
            days = rng.sample(DAYS, 3)
            key = f"{kind}:{thing}"
            # the first value early; one or two changes later, while the run lasts
            first_week = rng.randrange(0, max(1, min(2, weeks - 1)))
            change_weeks = sorted(
                rng.sample(
                    range(first_week + 1, weeks),
                    min(weeks - first_week - 1, 2 if n % 4 == 0 else 1),
                )
            )
            versions = []
            for i, week in enumerate([first_week, *change_weeks]):
                v = days[i] if kind == "oncall" else _value(kind, rng, thing, used)
                template = rng.choice(firsts if i == 0 else changes)
                text = template.format(t=thing, v=v)
                text = text[0].upper() + text[1:]
                versions.append((week, v, text))
            item = {
                "key": key,
                "kind": kind,
                "thing": thing,
                # half the changing facts are written with a subject, half without
                "subject": f"{kind}.{thing}" if n % 2 == 0 else None,
                "versions": versions,
                "questions": [q.format(t=thing) for q in questions],
            }
            out.append(item)
            for i, (week, _, text) in enumerate(versions):
                events.append(
                    Event(
                        _when(rng, week),
                        "fact",
                        {
                            "key": key,
                            "version": i,
                            "text": text,
                            "subject": item["subject"],
                            "agent": rng.choice(AGENTS),
                            "cli": rng.random() < 0.5,
                        },
                    )
                )
            n += 1
    return out


def _lookalikes(rng: random.Random, weeks: int, events: list[Event]) -> list[dict[str, Any]]:
    out = []
    hosts = iter(rng.sample(range(10, 99), 40))
    for kind, (pairs, questions, things) in LOOKALIKES.items():
        count = 2 if kind != "latency" else 1
        # no thing in two pairs: two pairs about one thing would be a change, not look-alikes
        drawn = rng.sample(things, 2 * count)
        for p in range(count):
            (ta, tb) = rng.choice(pairs)
            t, u = drawn[2 * p], drawn[2 * p + 1]
            if kind == "env-host":
                a, b = f"db-stg-{next(hosts)}", f"db-prd-{next(hosts)}"
            elif kind == "oncall-pair":
                a, b = rng.sample(DAYS, 2)
            elif kind == "latency":
                a, b = str(rng.choice(range(100, 400, 20))), str(rng.choice(range(500, 1500, 50)))
            else:
                a, b = (
                    f"0{rng.randrange(0, 5)}:{rng.choice(['00', '30'])}",
                    f"{rng.randrange(20, 24)}:15",
                )
            week = rng.randrange(0, max(1, weeks - 1))
            first = rng.random() < 0.5
            for side, (template, value, q) in enumerate(
                ((ta, a, questions[0][0]), (tb, b, questions[1][0]))
            ):
                text = template.format(t=t, u=u, a=a, b=b)
                key = f"{kind}:{p}:{side}"
                out.append(
                    {
                        "key": key,
                        "text": text[0].upper() + text[1:],
                        "value": value,
                        "question": q.format(t=t, u=u),
                        "pair": f"{kind}:{p}",
                    }
                )
                # the two written by two agents within days, in either order
                at = _when(rng, week, (0 if (side == 0) == first else 2))
                events.append(
                    Event(
                        at,
                        "fact",
                        {
                            "key": key,
                            "version": 0,
                            "text": out[-1]["text"],
                            "subject": None,
                            "agent": AGENTS[side],
                            "cli": side == 1,
                        },
                    )
                )
    return out


def _chat(rng: random.Random, weeks: int, events: list[Event]) -> list[dict[str, Any]]:
    """One session per fact said only in chat, among turns that state nothing; half logged
    turn by turn (``log``), half ingested from a JSONL file (``ingest``)."""
    out = []
    things = rng.sample(CHAT_THINGS, len(CHAT_THINGS))
    for i, (said, question, shape) in enumerate(rng.sample(CHAT, len(CHAT))):
        thing = things[i % len(things)]
        if shape == "host":
            v = f"{thing[:4]}-{rng.randrange(10, 99)}"
        elif shape == "time":
            v = f"{rng.randrange(9, 12):02d}:{rng.choice(['00', '15', '45'])}"
        elif shape == "number":
            v = str(rng.randrange(5, 8))
        elif shape == "day":
            v = rng.choice(DAYS)
        else:
            v = rng.choice(MANAGERS)
        week = rng.randrange(0, max(1, min(weeks - 1, 7)))
        start = _when(rng, week)
        turns = [("user", said.format(t=thing, v=v))]
        for role, text in rng.sample(CHAT_NOISE, 3):
            turns.insert(
                rng.randrange(len(turns) + 1), (role, text.format(t=thing, n=rng.randrange(10, 99)))
            )
        timed = [
            (role, text, start + dt.timedelta(minutes=2 * k))
            for k, (role, text) in enumerate(turns)
        ]
        key = f"chat:{i}"
        out.append(
            {
                "key": key,
                "said": turns and said.format(t=thing, v=v),
                "question": question.format(t=thing),
                "value": v,
                "last_turn": timed[-1][2],
                "session": f"chat-{i}-{thing}",
            }
        )
        events.append(
            Event(
                start,
                "chat",
                {"key": key, "session": out[-1]["session"], "turns": timed, "ingest": i % 2 == 1},
            )
        )
    return out


def _recurring(rng: random.Random, weeks: int, events: list[Event]) -> list[dict[str, Any]]:
    out = []
    for family in rng.sample(sorted(RECURRING), 2):
        service = rng.choice(SERVICES)
        texts = rng.sample(RECURRING[family], 3)
        spread = sorted(rng.sample(range(0, max(3, min(weeks, 8))), 3))
        item = {
            "family": family,
            "service": service,
            "texts": [_cap(t.format(s=service)) for t in texts],
            "question": RECURRING_QUESTIONS[family].format(s=service),
            "keys": [],
        }
        for j, (text, week) in enumerate(zip(item["texts"], spread, strict=True)):
            key = f"ep:{family}:{j}"
            item["keys"].append(key)
            events.append(
                Event(
                    _when(rng, min(week, weeks - 1)),
                    "episode",
                    {
                        "key": key,
                        "text": text,
                        "outcome": "failure",
                        "importance": 3,
                        "agent": rng.choice(AGENTS),
                    },
                )
            )
        out.append(item)
    return out


def _routine_and_junk(rng: random.Random, weeks: int, events: list[Event]) -> list[dict[str, Any]]:
    for week in range(weeks):
        for _ in range(2):
            text = rng.choice(ROUTINE).format(
                s=rng.choice(SERVICES),
                p=rng.choice(PEOPLE),
                n=rng.randrange(1, 9),
                m=rng.randrange(0, 20),
            )
            events.append(
                Event(
                    _when(rng, week),
                    "episode",
                    {
                        "key": None,
                        "text": text,
                        "outcome": "success",
                        "importance": 3,
                        "agent": rng.choice(AGENTS),
                    },
                )
            )
    junk = []
    for i, template in enumerate(rng.sample(JUNK, 5)):
        text = template.format(n=rng.randrange(2, 40), p=rng.choice(PEOPLE))
        importance = 1 if i % 2 == 0 else 2
        key = f"junk:{i}"
        junk.append({"key": key, "text": text, "importance": importance})
        events.append(
            Event(
                _when(rng, min(weeks - 1, i // 2)),
                "episode",
                {
                    "key": key,
                    "text": text,
                    "outcome": None,
                    "importance": importance,
                    "agent": rng.choice(AGENTS),
                },
            )
        )
    return junk


def _procedures(rng: random.Random, weeks: int, events: list[Event]) -> dict[str, dict[str, Any]]:
    out = {}
    for task, (procs, questions) in PROCEDURES.items():
        better = rng.randrange(2)
        out[task] = {
            "titles": [p[0] for p in procs],
            "better": better,
            "questions": questions,
            "keys": [f"proc:{task}:{i}" for i in range(2)],
        }
        for i, (title, trigger, steps) in enumerate(procs):
            events.append(
                Event(
                    _when(rng, 0, i),
                    "procedure",
                    {
                        "key": f"proc:{task}:{i}",
                        "title": title,
                        "trigger": trigger,
                        "steps": steps,
                        "agent": rng.choice(AGENTS),
                    },
                )
            )
        for week in range(1, weeks):
            for _ in range(2):
                i = rng.randrange(2)
                ok = rng.random() < SUCCESS[0 if i == better else 1]
                events.append(
                    Event(
                        _when(rng, week),
                        "used",
                        {
                            "key": f"proc:{task}:{i}",
                            "outcome": "success" if ok else "failure",
                            "agent": rng.choice(AGENTS),
                        },
                    )
                )
    return out


def _reads(rng: random.Random, weeks: int, events: list[Event]) -> None:
    offtopic = rng.sample(OFFTOPIC, len(OFFTOPIC))
    for week in range(weeks):
        for _ in range(3):
            events.append(Event(_when(rng, week), "noise", {"query": rng.choice(NOISE_READS)}))
        for _ in range(2):
            events.append(Event(_when(rng, week), "browse", {"query": rng.choice(BROWSE)}))
        for k in range(3):
            events.append(
                Event(
                    _when(rng, week),
                    "offtopic",
                    {"query": offtopic[(3 * week + k) % len(offtopic)]},
                )
            )


def world(seed: int, weeks: int) -> World:
    """The events of ``weeks`` weeks for ``seed``, in time order, and what they planted."""
    rng = random.Random(seed)
    events: list[Event] = []
    changing = _changing(rng, weeks, events)
    lookalikes = _lookalikes(rng, weeks, events)
    chat = _chat(rng, weeks, events)
    recurring = _recurring(rng, weeks, events)
    junk = _routine_and_junk(rng, weeks, events)
    procedures = _procedures(rng, weeks, events)
    _reads(rng, weeks, events)
    events.sort(key=lambda e: e.at)
    return World(seed, weeks, events, changing, lookalikes, chat, recurring, procedures, junk)
