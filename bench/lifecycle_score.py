"""The probes and figures of ``bench/lifecycle.py``: what is asked each week, what is
checked at the end, and the figures per split of seeds with their targets."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Any

import lifecycle_world as lw

TARGETS: dict[str, tuple[str, float]] = {
    "stale_answer_rate": ("<=", 0.02),
    "false_supersede_rate": ("<=", 0.01),
    "offtopic_abstain_rate": (">=", 0.9),
    "answerable_r5_loss": ("<=", 1.0),
    "chat_facts_distilled": (">=", 0.8),
    "junk_archived": (">=", 0.9),
    "bookkeeping_files_per_run": ("<=", 0.0),
    "rejected_reproposed": ("<=", 0.0),
    "procedure_rank_by_success": (">=", 0.9),
}
MEMORY_TREES = ("episodic/", "semantic/", "procedural/", "archive/", "inbox/")
EXAMPLES = 3  # misses shown per figure and seed


@dataclass
class Record:
    """What one seed's run saw."""

    seed: int
    stale: list[dict[str, Any]] = field(default_factory=list)
    answerable: list[dict[str, Any]] = field(default_factory=list)
    offtopic: list[dict[str, Any]] = field(default_factory=list)
    procedures: list[dict[str, Any]] = field(default_factory=list)
    runs: list[dict[str, Any] | None] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)
    reproposed: list[dict[str, Any]] = field(default_factory=list)
    disputes: list[dict[str, Any]] = field(default_factory=list)
    lookalikes: list[dict[str, Any]] = field(default_factory=list)
    chat: list[dict[str, Any]] = field(default_factory=list)
    junk: list[dict[str, Any]] = field(default_factory=list)
    bookkeeping: list[dict[str, Any]] = field(default_factory=list)
    cli_errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _text(hit: Any) -> str:
    """What a hit says: a turn's text, else the memory's."""
    if hit.memory is not None and hit.turn is None:
        return str(hit.memory.content)
    return str(hit.snippet)


def _favours_old(text: str, new: str, olds: list[str]) -> bool:
    """The text names an older value, and the newer not at all or only after it."""
    for old in olds:
        at = text.find(old)
        if at >= 0 and (new not in text or at < text.find(new)):
            return True
    return False


def _current(item: dict[str, Any], week: int) -> int:
    """The index of the item's version in force at the end of ``week``."""
    return max(i for i, (w, _, _) in enumerate(item["versions"]) if w <= week)


def probe_week(team: Any, world: lw.World, week: int, record: Record, rng: random.Random) -> None:
    """The week's questions, asked as the team asks them (reads are logged)."""
    vault = team.vault
    for item in world.changing:
        if item["versions"][0][0] > week:
            continue
        k = _current(item, week)
        if k == 0:
            continue
        new = item["versions"][k][1]
        olds = [v for _, v, _ in item["versions"][:k] if v != new]
        old_sentences = [t for _, v, t in item["versions"][:k] if v != new]
        q = rng.choice(item["questions"])
        hits = vault.fact(q, limit=5).hits
        top = _text(hits[0]) if hits else ""
        block = vault.context(q).text
        statement = rng.choice(item["versions"][:k])[2]
        checked = vault.validate(statement)
        verdict = checked.verdict
        flags = {
            "fact": _favours_old(top, new, olds),
            # the block is many memories: a bare value ("13", "Wednesdays") also turns up in
            # look-alikes and episodes about other things, so the fact's own sentences count
            "context": _favours_old(block, item["versions"][k][2], old_sentences),
            "validate": verdict == "supported",
        }
        record.stale.append(
            {
                "week": week,
                "key": item["key"],
                "subject": item["subject"] is not None,
                "question": q,
                "new": item["versions"][k][2],
                "old": statement,
                "top": top.strip(),
                "verdict": verdict,
                "evidence": checked.evidence_id,
                "why": checked.why,
                "stale": any(flags.values()),
                "by": [name for name, bad in flags.items() if bad],
            }
        )
    for ask in rng.sample(
        _answerable(team, world, week), min(8, len(_answerable(team, world, week)))
    ):
        with_floor = vault.recall(ask["question"], limit=5)
        without = vault.recall(ask["question"], limit=5, min_score=0.0, log=False)
        record.answerable.append(
            {
                "week": week,
                "kind": ask["kind"],
                "question": ask["question"],
                "floor": any(_answers(ask, h) for h in with_floor.hits),
                "no_floor": any(_answers(ask, h) for h in without.hits),
                "returned": len(with_floor.hits),
            }
        )
    if week >= world.weeks // 2:
        for task, proc in world.procedures.items():
            q = rng.choice(proc["questions"])
            hits = vault.procedure(q, limit=3).hits
            better = team.ids.get(proc["keys"][proc["better"]])
            record.procedures.append(
                {
                    "week": week,
                    "task": task,
                    "question": q,
                    "top": hits[0].id if hits else None,
                    "better": better,
                    "ok": bool(hits) and hits[0].id == better,
                }
            )


def _answerable(team: Any, world: lw.World, week: int) -> list[dict[str, Any]]:
    """The questions that have an answer in the vault at the end of ``week``."""
    out: list[dict[str, Any]] = []
    for look in world.lookalikes:
        mid = team.ids.get(f"{look['key']}#0")
        if mid:
            out.append({"kind": "fact", "question": look["question"], "ids": {mid}, "value": None})
    for item in world.changing:
        if item["versions"][0][0] <= week:
            k = _current(item, week)
            mid = team.ids.get(f"{item['key']}#{k}")
            q = item["questions"][0]
            out.append(
                {"kind": "changed", "question": q, "ids": {mid}, "value": item["versions"][k][1]}
            )
    for chat in world.chat:
        if chat["last_turn"] <= lw.T0 + dt.timedelta(days=7 * week + 6):
            out.append(
                {"kind": "chat", "question": chat["question"], "ids": set(), "value": chat["value"]}
            )
    for rec in world.recurring:
        ids = {team.ids[k] for k in rec["keys"] if k in team.ids}
        if ids:
            out.append({"kind": "episode", "question": rec["question"], "ids": ids, "value": None})
    return out


def _answers(ask: dict[str, Any], hit: Any) -> bool:
    if hit.id in ask["ids"]:
        return True
    return (
        ask["value"] is not None
        and ask["kind"] in ("chat", "changed")
        and ask["value"] in _text(hit)
    )


def offtopic(team: Any, query: str, record: Record) -> None:
    result = team.vault.recall(query)
    block = team.vault.context(query)
    record.offtopic.append(
        {
            "query": query,
            "abstained": not result.hits and not block.included,
            "recall": [h.id for h in result.hits][:3],
            "context": block.ids[:3],
        }
    )


def review(team: Any, world: lw.World, week: int, record: Record) -> None:
    """After each run: a person rejects the first learned proposal; every other week the
    disputes between two values of one changing fact are settled for the newest."""
    run = record.runs[-1] or {}
    proposed = {a["id"] for a in run.get("actions", []) if a.get("step") == "promote"}
    inbox = {m.id: m for m in team.vault.inbox()}
    for pid in sorted(proposed):
        m = inbox.get(pid)
        evidence = set(m.meta.get("derived_from") or []) if m is not None else set()
        for rejected in record.rejected:
            if evidence and evidence <= set(rejected["evidence"]):
                record.reproposed.append({"week": week, "id": pid, "evidence": sorted(evidence)})
    if not record.rejected:
        for pid in sorted(proposed):
            m = inbox.get(pid)
            if m is not None and m.meta.get("derived_from"):
                team.cli("support-agent", "review", "reject", pid, "--reason", "coincidence")
                record.rejected.append(
                    {"week": week, "id": pid, "evidence": sorted(m.meta["derived_from"])}
                )
                break
    if week % 2 == 1:
        listed = team.cli(lw.AGENTS[0], "dispute", "list", "--json") or []
        for dispute in listed if isinstance(listed, list) else []:
            keys = [team.keys.get(i, "?") for i in dispute.get("ids", [])]
            things = {k.split("#")[0] for k in keys}
            record.disputes.append({"week": week, "ids": dispute.get("ids"), "keys": keys})
            item = next((c for c in world.changing if {c["key"]} == things), None)
            if item is not None:
                newest = max(keys, key=lambda k: int(k.split("#")[1]))
                team.cli(lw.AGENTS[1], "dispute", "keep", team.ids[newest], "--note", "checked")


def final(team: Any, world: lw.World, record: Record) -> None:
    """The checks at the end of the last week."""
    from memvault.consolidate.decay import archive_below, config_rates, relevance

    vault = team.vault
    by_id = {m.id: m for m in vault.all_memories()}
    for look in world.lookalikes:
        m = by_id.get(team.ids.get(f"{look['key']}#0", ""))
        record.lookalikes.append(
            {
                "key": look["key"],
                "text": look["text"],
                "status": m.status if m else "missing",
                "superseded_by": m.meta.get("superseded_by") if m else None,
                "lost": m is None or m.status not in ("active", "disputed"),
            }
        )
    runs = [r for r in record.runs if r]
    last = max(
        (dt.datetime.fromisoformat(r["now"].replace("Z", "+00:00")) for r in runs), default=None
    )
    after = int(vault.config.get("consolidate.distill_after_days", 30))
    for chat in world.chat:
        if last is None or chat["last_turn"] > last - dt.timedelta(days=after):
            continue
        hits = vault.fact(chat["question"], limit=5).hits
        found = any(
            h.memory is not None
            and h.type == "semantic"
            and h.status == "active"
            and chat["value"] in h.memory.content
            for h in hits
        )
        record.chat.append(
            {
                "said": chat["said"],
                "question": chat["question"],
                "found": found,
                "top": [_text(h).strip() for h in hits[:2]],
            }
        )
    from memvault.search.accesslog import read_reads

    readers: dict[str, list[str]] = {}
    for read in read_reads(team.root):
        ids = read.get("ids") or []
        weights = read.get("w") or [1.0] * len(ids)
        for address, w in zip(ids, weights, strict=False):
            mid = str(address).split("#", 1)[0]
            readers.setdefault(mid, []).append(f"{read.get('q')} ({w})")
    rates, defaults = config_rates(vault.config)
    threshold = archive_below(vault.config)
    for junk in world.junk:
        m = by_id.get(team.ids.get(junk["key"], ""))
        if m is None or last is None:
            continue
        unread = m.replace(
            meta={k: v for k, v in m.meta.items() if k not in ("last_accessed", "access_count")}
        )
        due = relevance(unread, last - dt.timedelta(days=7), rates, defaults).value < threshold
        if due:
            used = vault.usage(m.id)  # reads live in the usage file, not the memory's own keys
            record.junk.append(
                {
                    "text": junk["text"],
                    "archived": m.status == "archived" or m.path.startswith("archive/"),
                    "access_count": used.access_count,
                    "relevance": used.relevance,
                    "decays_from": used.decays_from,
                    "read_by": sorted(set(readers.get(m.id, [])))[:5],
                }
            )
    for run in runs:
        record.bookkeeping.append(bookkeeping(run))


def bookkeeping(run: dict[str, Any]) -> dict[str, Any]:
    """The memory files a run's commit changed that it decided nothing about: files whose
    only actions are a fold of read counts or a refreshed relevance, or none at all."""
    decided: set[str] = set(run.get("new_files") or [])
    kinds: dict[str, set[str]] = {}
    for action in run.get("actions", []):
        paper = action["step"] == "fold" or (
            action["step"] == "decay" and str(action["what"]).startswith("relevance")
        )
        kinds.setdefault(action["path"], set()).add(action["step"] if paper else "decision")
        if not paper:
            decided.add(action["path"])
            if action.get("move_to"):
                decided.add(action["move_to"])
    files = [f for f in run.get("changed_files", []) if f.startswith(MEMORY_TREES)]
    extra = [f for f in files if f not in decided]
    return {
        "week": run.get("week"),
        "memory_files": len(files),
        "bookkeeping_files": len(extra),
        "examples": [
            {"path": f, "actions": sorted(kinds.get(f, {"none"}))} for f in extra[:EXAMPLES]
        ],
    }


def _ratio(part: float, whole: float) -> float | None:
    return round(part / whole, 3) if whole else None


def figures(seeds: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of a group of seeds, counts pooled, with what they count."""
    pool: dict[str, list[Any]] = {}
    for s in seeds:
        for name, value in s.items():
            if isinstance(value, list):
                pool.setdefault(name, []).extend(value)
    stale, ans, off = pool.get("stale", []), pool.get("answerable", []), pool.get("offtopic", [])
    looks, chat, junk = pool.get("lookalikes", []), pool.get("chat", []), pool.get("junk", [])
    books, procs = pool.get("bookkeeping", []), pool.get("procedures", [])
    r5_floor = _ratio(sum(a["floor"] for a in ans), len(ans))
    r5_none = _ratio(sum(a["no_floor"] for a in ans), len(ans))
    out = {
        "stale_answer_rate": _ratio(sum(s["stale"] for s in stale), len(stale)),
        "false_supersede_rate": _ratio(sum(x["lost"] for x in looks), len(looks)),
        "offtopic_abstain_rate": _ratio(sum(o["abstained"] for o in off), len(off)),
        "answerable_r5_loss": (
            round(100 * (r5_none - r5_floor), 1)
            if r5_floor is not None and r5_none is not None
            else None
        ),
        "chat_facts_distilled": _ratio(sum(c["found"] for c in chat), len(chat)),
        "junk_archived": _ratio(sum(j["archived"] for j in junk), len(junk)),
        "bookkeeping_files_per_run": _ratio(sum(b["bookkeeping_files"] for b in books), len(books)),
        "rejected_reproposed": len(pool.get("reproposed", [])) if pool.get("rejected") else None,
        "procedure_rank_by_success": _ratio(sum(p["ok"] for p in procs), len(procs)),
    }
    counts = {
        "stale_checks": len(stale),
        "stale_by": {k: sum(k in s["by"] for s in stale) for k in ("fact", "context", "validate")},
        "stale_with_subject": sum(s["stale"] for s in stale if s["subject"]),
        "stale_without_subject": sum(s["stale"] for s in stale if not s["subject"]),
        "lookalike_facts": len(looks),
        "offtopic_questions": len(off),
        "answerable_questions": len(ans),
        "r5_floor": r5_floor,
        "r5_no_floor": r5_none,
        "chat_facts_eligible": len(chat),
        "junk_due": len(junk),
        "consolidation_runs": len(books),
        "memory_files_per_run": _ratio(sum(b["memory_files"] for b in books), len(books)),
        "proposals_rejected": len(pool.get("rejected", [])),
        "disputes_listed": len(pool.get("disputes", [])),
        "procedure_checks": len(procs),
        "cli_errors": len(pool.get("cli_errors", [])),
    }
    return {"figures": out, "counts": counts}


def misses(seeds: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """A few examples of each figure's misses, per seed."""
    out: dict[str, list[Any]] = {}
    for s in seeds:
        pick = {
            "stale_answer_rate": [x for x in s["stale"] if x["stale"]],
            "false_supersede_rate": [x for x in s["lookalikes"] if x["lost"]],
            "offtopic_abstain_rate": [x for x in s["offtopic"] if not x["abstained"]],
            "answerable_r5_loss": [x for x in s["answerable"] if x["no_floor"] and not x["floor"]],
            "chat_facts_distilled": [x for x in s["chat"] if not x["found"]],
            "junk_archived": [x for x in s["junk"] if not x["archived"]],
            "bookkeeping_files_per_run": [x for x in s["bookkeeping"] if x["bookkeeping_files"]],
            "rejected_reproposed": s["reproposed"],
            "procedure_rank_by_success": [x for x in s["procedures"] if not x["ok"]],
        }
        for name, found in pick.items():
            out.setdefault(name, []).extend({"seed": s["seed"], **x} for x in found[:EXAMPLES])
    return out


def check(figs: dict[str, Any], where: str) -> list[str]:
    """Each target missed, as a line; n/a misses too (nothing measured is not a pass)."""
    missed = []
    for name, (op, target) in TARGETS.items():
        got = figs.get(name)
        ok = got is not None and (got >= target if op == ">=" else got <= target)
        if not ok:
            missed.append(
                f"{name} {got if got is not None else 'n/a'} ({where}), target {op} {target}"
            )
    return missed


def report(seeds: list[dict[str, Any]], tune: list[int], heldout: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {"targets": {k: f"{op} {v}" for k, (op, v) in TARGETS.items()}}
    for split, chosen in (("tune", tune), ("heldout", heldout)):
        group = [s for s in seeds if s["seed"] in chosen]
        out[split] = {"seeds": chosen, **figures(group), "misses": misses(group)}
    out["per_seed"] = [{"seed": s["seed"], **figures([s])["figures"]} for s in seeds]
    out["cli_errors"] = [e for s in seeds for e in s["cli_errors"]][:10]
    out["missed"] = check(out["heldout"]["figures"], "held-out") if heldout else []
    out["missed_tune"] = check(out["tune"]["figures"], "tune") if tune else []
    return out
