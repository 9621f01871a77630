#!/usr/bin/env python3
"""Chat becomes knowledge: facts said only in conversation, found by ``fact`` after
distillation, through the user's path (``Vault.log``, ``Vault.consolidate``, ``Vault.fact``).

A scenario written from templates in English, Ukrainian, Russian and Portuguese: each
session states one fact in a user turn (a host, an on-call day, a decision, a lead, ...; two
to three wordings per kind), among questions, hedges, hypotheticals, chit-chat and an
assistant's guess that name other values. After the transcripts are old enough, one
consolidation; later, sessions that state a new value for a third of the facts, and a
second consolidation.

Figures (every one gated; ``tune``/``test``: a fixed hash of the item's key, so a wording
tuned on is never the one reported as held out):

* ``chat_facts_distilled``: planted facts found by ``fact`` (top 5) as semantic memories
  that cite the turn that said them (target >= 0.8, overall and each half);
* ``false_fact_rate``: turns that state nothing (questions, hedges, hypotheticals,
  chit-chat, the assistant's guesses) a fact was written from, of all such turns (<= 0.02);
* ``changes_current``: of the facts stated again with a new value, those whose ``fact`` top
  hit is the new value, the old one superseded (>= 0.8);
* ``false_supersede``: planted facts not stated again that are no longer in force (0).

    python bench/distill.py --json              # the default embedder (all-MiniLM-L6-v2)
    python bench/distill.py --embedder fake     # the rule alone, quickly
    python bench/distill.py --inject-fault no-facts   # the gates fail
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)
TARGETS = {
    "chat_facts_distilled": (">=", 0.8),
    "false_fact_rate": ("<=", 0.02),
    "changes_current": (">=", 0.8),
    "false_supersede": ("<=", 0),
}

# kind -> per language: (statement wordings, question, change wording); {t} the thing, {v}
# the value. Things and values are drawn per item, so no two items are about one thing.
KINDS: dict[str, dict[str, tuple[list[str], str, str]]] = {
    "host": {
        "en": (
            [
                "The {t} database is on {v}.",
                "btw, the {t} database moved to {v}",
                "Quick note for the record: the {t} database runs on {v}.",
            ],
            "which host is the {t} database on?",
            "FYI the {t} database moved to {v} last night.",
        ),
        "uk": (
            ["База {t} працює на {v}.", "До речі, база {t} переїхала на {v}."],
            "на якому хості база {t}?",
            "База {t} переїхала на {v} вчора.",
        ),
        "ru": (
            ["База {t} работает на {v}.", "Кстати, база {t} переехала на {v}."],
            "на каком хосте база {t}?",
            "База {t} переехала на {v} вчера.",
        ),
        "pt": (
            ["O banco {t} fica no {v}.", "Aliás, o banco {t} mudou para o {v}."],
            "em qual host fica o banco {t}?",
            "O banco {t} mudou para o {v} ontem.",
        ),
    },
    "rotation": {
        "en": (
            ["{t} on-call rotates on {v}s.", "For the record, {t} on-call rotates every {v}."],
            "when does {t} on-call rotate?",
            "From now on, {t} on-call rotates on {v}s.",
        ),
        "uk": (
            ["Чергування команди {t} змінюється по {v}."],
            "коли змінюється чергування команди {t}?",
            "Відтепер чергування команди {t} змінюється по {v}.",
        ),
        "ru": (
            ["Дежурство команды {t} меняется по {v}."],
            "когда меняется дежурство команды {t}?",
            "Отныне дежурство команды {t} меняется по {v}.",
        ),
        "pt": (
            ["O plantão do time {t} muda às {v}."],
            "quando muda o plantão do time {t}?",
            "A partir de agora, o plantão do time {t} muda às {v}.",
        ),
    },
    "decision": {
        "en": (
            [
                "We decided to use Postgres {v} for {t}.",
                "Let's go with Postgres {v} for {t}.",
                "From now on, {t} uses Postgres {v}.",
            ],
            "which Postgres version do we use for {t}?",
            "We decided to use Postgres {v} for {t}.",
        ),
        "uk": (
            ["Ми вирішили використовувати Postgres {v} для {t}."],
            "яку версію Postgres ми використовуємо для {t}?",
            "Ми вирішили використовувати Postgres {v} для {t}.",
        ),
        "ru": (
            ["Мы решили использовать Postgres {v} для {t}."],
            "какую версию Postgres мы используем для {t}?",
            "Мы решили использовать Postgres {v} для {t}.",
        ),
        "pt": (
            ["Decidimos usar o Postgres {v} para {t}."],
            "qual versão do Postgres usamos para {t}?",
            "Decidimos usar o Postgres {v} para {t}.",
        ),
    },
    "lead": {
        "en": (["The {t} lead is {v}.", "Heads up: {t} is led by {v}."], "who leads {t}?", ""),
        "uk": (["Керівник {t} — {v}."], "хто керівник {t}?", ""),
        "ru": (["Руководитель {t} — {v}."], "кто руководитель {t}?", ""),
        "pt": (["O líder de {t} é {v}."], "quem é o líder de {t}?", ""),
    },
    "window": {
        "en": (
            ["The {t} deploy window starts at {v}.", "The {t} standup is at {v}."],
            "when does the {t} deploy window start?",
            "",
        ),
        "pt": (["O deploy de {t} começa às {v}."], "quando começa o deploy de {t}?", ""),
    },
}
# one thing per item, never two items about one thing (look-alikes are measured apart:
# ``false_supersede``)
THINGS = {
    kind: names.split()
    for kind, names in {
        "host": "billing search ledger payments catalog reports auth media orders quotes "
        "refunds tickets wallet pricing shipping coupons invoices webhooks",
        "rotation": "Atlas Borealis Cobalt Dynamo Ember Falcon Granite Helix Iris Juniper",
        "decision": "invoicing analytics checkout telemetry inventory ads crm archive "
        "forecasting loyalty sessions audit",
        "lead": "mobile platform growth security data design infra support qa docs",
        "window": "gateway storefront notifications scheduler backoffice exports",
    }.items()
}
DAYS = {
    "en": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"],
    "uk": ["понеділках", "вівторках", "середах", "четвергах", "п'ятницях"],
    "ru": ["понедельникам", "вторникам", "средам", "четвергам", "пятницам"],
    "pt": ["segundas", "terças", "quartas", "quintas", "sextas"],
}
NAMES = ["Ana", "Bohdan", "Carla", "Dmytro", "Elena", "Fernando", "Iryna", "Joana", "Oleh"]
# turns that state nothing: a fact written from one is a false fact
NOISE = {
    "en": [
        ("user", "Is the {t} database on {w}?"),
        ("user", "Maybe the {t} database is on {w}."),
        ("user", "I think {t} on-call rotates on Fridays."),
        ("user", "What if we moved {t} to {w}"),
        ("user", "If we used Postgres 99, deploys would be faster."),
        ("user", "Thanks, see you on Monday!"),
        ("user", "Hi! How was the weekend?"),
        ("assistant", "The {t} database is probably on {w}."),
        ("assistant", "{t} is on {w}."),
    ],
    "uk": [
        ("user", "Чи база {t} працює на {w}?"),
        ("user", "Можливо, база {t} працює на {w}."),
        ("user", "Якщо ми перейдемо на Postgres 99, буде швидше."),
        ("user", "Дякую, до понеділка!"),
        ("assistant", "База {t} працює на {w}."),
    ],
    "ru": [
        ("user", "База {t} работает на {w}?"),
        ("user", "Может, база {t} работает на {w}."),
        ("user", "Если перейдём на Postgres 99, будет быстрее."),
        ("user", "Спасибо, до понедельника!"),
        ("assistant", "База {t} работает на {w}."),
    ],
    "pt": [
        ("user", "O banco {t} fica no {w}?"),
        ("user", "Talvez o banco {t} fique no {w}."),
        ("user", "Se usarmos o Postgres 99, o deploy fica mais rápido."),
        ("user", "Valeu, até segunda!"),
        ("assistant", "O banco {t} fica no {w}."),
    ],
}


def half(key: str) -> str:
    """``tune`` or ``test``, fixed by the item's key."""
    return "tune" if hashlib.sha1(key.encode()).digest()[0] % 2 == 0 else "test"


def value(kind: str, lang: str, n: int, changed: bool = False) -> str:
    if kind == "host":
        return f"db-{n:02d}{'b' if changed else 'a'}"
    if kind == "rotation":
        return DAYS[lang][(n + (2 if changed else 0)) % 5]
    if kind == "decision":
        return str(12 + n % 5 + (4 if changed else 0))
    if kind == "lead":
        return NAMES[n % len(NAMES)]
    return f"{8 + n % 9:02d}:30"


def items() -> list[dict[str, Any]]:
    """Every planted fact: language, kind, wording, thing, value, question, split."""
    out: list[dict[str, Any]] = []
    n = 0
    for kind, langs in KINDS.items():
        used = 0
        for lang, (wordings, question, change) in langs.items():
            for w, wording in enumerate(wordings * 2):  # each wording about two things
                thing = THINGS[kind][used]
                used += 1
                key = f"{kind}:{lang}:{w}"
                v = value(kind, lang, n)
                item = {
                    "id": f"f{n}",
                    "kind": kind,
                    "lang": lang,
                    "key": key,
                    "split": half(key),
                    "thing": thing,
                    "value": v,
                    "said": wording.format(t=thing, v=v),
                    "question": question.format(t=thing),
                    # a third of the facts that can change are stated again with a new value
                    "change": (
                        change.format(t=thing, v=value(kind, lang, n, True))
                        if change and n % 3 == 0
                        else ""
                    ),
                    "new_value": value(kind, lang, n, True),
                }
                out.append(item)
                n += 1
    return out


def build(vault: Any, planted: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Log the sessions: each planted fact among noise turns; returns the noise turns."""
    noise: list[dict[str, Any]] = []
    for i, item in enumerate(planted):
        when = T0 + dt.timedelta(hours=3 * i)
        lang = item["lang"]
        turns = [("user", item["said"], item["id"])]
        for j, (role, text) in enumerate(NOISE[lang][i % 3 :: 2]):
            other = f"db-{90 + j:02d}z"
            nid = f"n{i}-{j}"
            turns.insert(j % 2, (role, text.format(t=item["thing"], w=other), nid))
            noise.append({"id": nid, "text": turns[j % 2][1], "split": item["split"]})
        for k, (role, text, tid) in enumerate(turns):
            vault.log(
                f"chat-{item['id']}", role, text, when=when + dt.timedelta(minutes=k), turn_id=tid
            )
    return noise


def distilled_facts(vault: Any) -> list[Any]:
    return [
        m
        for m in vault.all_memories()
        if m.type == "semantic" and m.meta.get("source") == "distilled"
    ]


def cites(m: Any, turn: str) -> bool:
    return any(str(e).endswith(f"#{turn}") for e in m.meta.get("evidence") or [])


def found(
    vault: Any, item: dict[str, Any], value_key: str = "value", turn: str | None = None
) -> bool:
    hits = vault.fact(item["question"], limit=5).hits
    for hit in hits:
        m = hit.memory
        if m is None or m.type != "semantic" or m.status != "active":
            continue
        if cites(m, turn or item["id"]) and item[value_key].lower() in m.content.lower():
            return True
    return False


def ratio(n: int, d: int) -> float | None:
    return round(n / d, 3) if d else None


def run(embedder: str, fault: str | None) -> dict[str, Any]:
    os.environ["MEMVAULT_EMBEDDER"] = embedder
    from memvault import Vault

    planted = items()
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        vault = Vault.init(Path(tmp) / "v")
        if fault == "no-facts":
            vault.set_config("consolidate.distill_facts", False, "fault: no facts")
        noise = build(vault, planted)
        vault.consolidate(now=T0 + dt.timedelta(days=45))
        facts = distilled_facts(vault)
        by_split: dict[str, list[bool]] = {"tune": [], "test": []}
        misses = []
        firsts = []
        for item in planted:
            ok = found(vault, item)
            firsts.append(ok)
            by_split[item["split"]].append(ok)
            if not ok:
                written = [
                    {"id": m.id, "status": m.status, "by": m.meta.get("superseded_by")}
                    for m in distilled_facts(vault)
                    if cites(m, item["id"])
                ]
                misses.append({"said": item["said"], "q": item["question"], "written": written})
        false_ids = sorted({n["id"] for n in noise for m in facts if cites(m, n["id"])})
        # the world changes: a third of the facts are said again with a new value
        later = T0 + dt.timedelta(days=60)
        changing = [it for it in planted if it["change"]]
        for i, item in enumerate(changing):
            vault.log(
                f"chat-{item['id']}-later",
                "user",
                item["change"],
                when=later + dt.timedelta(hours=i),
                turn_id=f"{item['id']}-new",
            )
        vault.consolidate(now=later + dt.timedelta(days=45))
        current = [found(vault, it, "new_value", f"{it['id']}-new") for it in changing]
        change_misses = [it["change"] for it, ok in zip(changing, current, strict=True) if not ok]
        in_force = [m for m in distilled_facts(vault) if m.status == "active"]
        first = {it["id"] for it, ok in zip(planted, firsts, strict=True) if ok}
        lost = [
            it["said"]
            for it in planted
            if not it["change"]
            and it["id"] in first
            and not any(cites(m, it["id"]) for m in in_force)
        ]
    all_ok = by_split["tune"] + by_split["test"]
    out: dict[str, Any] = {
        "embedder": embedder,
        "planted": len(planted),
        "noise_turns": len(noise),
        "chat_facts_distilled": ratio(sum(all_ok), len(all_ok)),
        "tune": {"chat_facts_distilled": ratio(sum(by_split["tune"]), len(by_split["tune"]))},
        "test": {"chat_facts_distilled": ratio(sum(by_split["test"]), len(by_split["test"]))},
        "false_fact_rate": ratio(len(false_ids), len(noise)),
        "false_facts": len(false_ids),
        "changes_current": ratio(sum(current), len(current)),
        "changes": len(current),
        "false_supersede": len(lost),
        "facts_written": len(facts),
        "seconds": round(time.monotonic() - started, 1),
        "misses": misses,
        "change_misses": change_misses,
        "false_fact_turns": [n["text"] for n in noise if n["id"] in false_ids],
        "lost": lost,
    }
    out["by_language"] = {}
    for lang in ("en", "uk", "ru", "pt"):
        oks = [
            found_ok
            for found_ok, it in zip(all_ok, _order(planted), strict=True)
            if it["lang"] == lang
        ]
        out["by_language"][lang] = ratio(sum(oks), len(oks))
    out["missed"] = check(out)
    return out


def _order(planted: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items in the order ``all_ok`` holds them (tune first, then test)."""
    return [it for it in planted if it["split"] == "tune"] + [
        it for it in planted if it["split"] == "test"
    ]


def check(out: dict[str, Any]) -> list[str]:
    """Each target missed, as a line."""
    missed = []
    places = [("all", out), ("tune", out["tune"]), ("test", out["test"])]
    places += [(f"lang {k}", {"chat_facts_distilled": v}) for k, v in out["by_language"].items()]
    for where, figures in places:
        for name, (op, target) in TARGETS.items():
            if name not in figures:
                continue
            got = figures[name]
            ok = got is not None and (got >= target if op == ">=" else got <= target)
            if not ok:
                missed.append(f"{name} {got} ({where}), target {op} {target}")
    return missed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="all-MiniLM-L6-v2")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--inject-fault", choices=["no-facts"], default=None)
    args = parser.parse_args()
    out = run(args.embedder, args.inject_fault)
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        for key in (
            "chat_facts_distilled",
            "false_fact_rate",
            "changes_current",
            "false_supersede",
        ):
            print(f"{key}: {out[key]}")
        print(f"tune/test: {out['tune']} {out['test']}; by language: {out['by_language']}")
    for line in out["missed"]:
        print(f"MISSED: {line}", file=sys.stderr)
    return 1 if out["missed"] else 0


if __name__ == "__main__":
    sys.exit(main())
