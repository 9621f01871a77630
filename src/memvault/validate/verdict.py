"""``validate``: does a statement agree with, contradict, or find no support in known facts?

The closest facts are found by the same hybrid search as ``fact`` (superseded ones
included, and the facts that superseded them fetched when the search missed them). The
statement and each fact are read into slots (:mod:`memvault.validate.claims`) and weighed
slot by slot (:mod:`memvault.validate.weigh`): same subject first, then names, rejected
alternatives, quantities with units, versions, dates, times, weekdays and permission.

Only facts in force decide: active ones (with ``as_of``, those valid then). A statement
that matches a superseded fact and no fact in force is **contradicted** by the fact that
superseded it. When facts in force disagree, the one closer to the statement's subject
wins (a contradiction on a tie). No fact about the subject means **unknown** -- numbers
are never compared across facts about different things.

A judge of your own (``validate.judge_command``, :mod:`memvault.validate.judge`) may give
the verdict instead; when it fails the built-in verdict stands and the result says so.
The verdict keeps its evidence: the deciding fact (``evidence_id``) and slot. See
``docs/validate.md`` for the rules and the measured figures.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Unpack

from ..errors import MemvaultError, NotFoundError
from ..search.accesslog import log_read
from ..search.engine import run
from ..search.options import FILTER_KEYS, ValidateOptions, build_filter, check_keys, check_limit
from ..search.ranking import Plan
from ..search.results import SearchHit, SearchResult, snippet
from ..search.routing import strip_cue
from ..values import Record
from .claims import read
from .weigh import Relation, weigh

if TYPE_CHECKING:  # pragma: no cover
    from ..memory import Memory
    from ..search.options import SearchOptions
    from ..store.repository import Repository
    from .align import Aligner

VERDICTS = ("supported", "contradicted", "unknown")
RELATIONS = {"supports": "supported", "contradicts": "contradicted"}


class Evidence(Record, frozen=True):
    """A fact weighed against the statement: ``relation`` is supports|contradicts|related;
    ``in_force``: whether it may decide (active, or valid at ``as_of``)."""

    hit: SearchHit
    relation: str
    why: str
    slot: str | None = None
    claim_value: str | None = None
    fact_value: str | None = None
    in_force: bool = True
    topic: float = 0.0
    matched: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.hit.as_dict(),
            "relation": self.relation,
            "why": self.why,
            "slot": self.slot,
            "claim_value": self.claim_value,
            "fact_value": self.fact_value,
            "in_force": self.in_force,
        }


class ValidationResult(Record, frozen=True):
    """The verdict, why, the facts weighed, and the deciding fact (``evidence_id``) and
    slot; ``judge`` says whether a configured judge gave the verdict (status used|failed|not
    allowed), ``note`` why one was not asked."""

    statement: str
    claim: str
    verdict: str
    why: str
    evidence: tuple[Evidence, ...]
    ms: float
    evidence_id: str | None = None
    slot: str | None = None
    judge: dict[str, Any] | None = None
    note: str | None = None  # why a configured judge was not asked (not allowed here)

    @property
    def hits(self) -> tuple[SearchHit, ...]:
        return tuple(e.hit for e in self.evidence)

    def as_dict(self) -> dict[str, Any]:
        decided = next((e for e in self.evidence if e.hit.id == self.evidence_id), None)
        return {
            "statement": self.statement,
            "claim": self.claim,
            "verdict": self.verdict,
            "why": self.why,
            "decided_by": None
            if decided is None
            else {
                "id": decided.hit.id,
                "slot": self.slot,
                "claim_value": decided.claim_value,
                "fact_value": decided.fact_value,
                "status": decided.hit.status,
            },
            "judge": self.judge,
            "note": self.note,
            "hits": [e.as_dict() for e in self.evidence],
            "ms": round(self.ms, 1),
        }


# --- the command ------------------------------------------------------------------------------


def validate(
    vault: Repository, statement: str, **options: Unpack[ValidateOptions]
) -> ValidationResult:
    """Check ``statement`` against known facts. Options: ``as_of``, ``limit`` (facts weighed,
    default 8), ``explain``, ``judge`` (False: skip ``validate.judge_command``),
    ``scope``/``tags``/``category`` and the other filters, ``log``."""
    check_keys(options, FILTER_KEYS | {"limit", "explain", "log", "kind", "judge"})
    started = time.perf_counter()
    if not statement or not statement.strip():
        raise MemvaultError("empty statement: say what to check", key="statement")
    claim_text = strip_cue(statement)
    limit = check_limit(vault, options.pop("limit", 8))
    explain = bool(options.pop("explain", False))
    log = options.pop("log", True)
    use_judge = options.pop("judge", True) is not False
    options.pop("kind", None)
    options["include_superseded"] = True
    as_of = options.get("as_of") is not None
    types, filt = build_filter(vault, options, types=("semantic",))
    # explain=True: the vector leg's cosine per fact is one of the signals weighed
    plan = Plan(types=types, filt=filt, limit=limit, prefer=None, explain=True)
    hits = run(vault, claim_text, plan).hits
    hits += _successors(vault, hits, as_of)
    evidence = _weigh_all(vault, claim_text, hits, as_of, explain)
    verdict, why, decisive, slot = decide(evidence)
    result = ValidationResult(
        statement,
        claim_text,
        verdict,
        why,
        tuple(sorted(evidence, key=_order)),
        0.0,
        decisive.hit.id if decisive is not None else None,
        slot,
    )
    command = vault.config.get("validate.judge_command")
    if command and use_judge:
        result = _with_judge(vault, str(command), result, options.get("as_of"))
    ms = (time.perf_counter() - started) * 1000
    if log:
        # Only the fact that decided the verdict was used; the others were merely weighed
        # (an "unknown" uses none), so they gain no read count from it.
        used = [result.evidence_id] if result.evidence_id and result.verdict != "unknown" else []
        log_read(vault, "validate", statement, used, ms)
    return result.replace(ms=ms)


def _order(e: Evidence) -> tuple[int, float]:
    return (
        {"contradicts": 0, "supports": 1}.get(e.relation, 2) + (0 if e.in_force else 3),
        -e.topic,
    )


def _similarity(vault: Repository, hit: SearchHit) -> float | None:
    """The fact's cosine to the statement, scaled so the embedder's floor is 0."""
    from ..index.manifest import embedder_for

    vector = (hit.explain or {}).get("vector") or {}
    cosine = vector.get("own") if vector.get("rank") is not None else None
    if cosine is None:
        return None
    floor = float(getattr(embedder_for(vault), "similarity_floor", 0.0))
    return max(0.0, min(1.0, (float(cosine) - floor) / max(1e-6, 1.0 - floor)))


def _aligner(vault: Repository) -> Aligner:
    """Word alignment by meaning with the vault's own embedder (the one its search uses)."""
    from ..index.manifest import embedder_for
    from .align import Aligner

    return Aligner(embedder_for(vault))


def _weigh_all(
    vault: Repository, claim_text: str, hits: list[SearchHit], as_of: bool, explain: bool
) -> list[Evidence]:
    claim = read(claim_text)
    align = _aligner(vault) if hits else None
    out: list[Evidence] = []
    for hit in hits:
        memory = hit.memory
        text = memory.content if memory is not None else hit.snippet
        title = memory.meta.get("title") if memory is not None else None
        if title and str(title) not in text and not str(text).startswith(str(title)[:40]):
            text = f"{title}. {text}"
        subject = memory.subject if memory is not None else None
        relation: Relation = weigh(claim, read(text), subject, _similarity(vault, hit), align)
        in_force = as_of or hit.status not in ("superseded", "archived")
        shown = hit if explain else hit.replace(explain=None)
        out.append(
            Evidence(
                shown,
                relation.kind,
                relation.why,
                relation.slot,
                relation.claim_value,
                relation.fact_value,
                in_force,
                relation.topic,
                relation.matched,
            )
        )
    return out


def _successors(vault: Repository, hits: list[SearchHit], as_of: bool) -> list[SearchHit]:
    """The facts that superseded a hit, when the search did not find them itself."""
    if as_of:
        return []
    have = {h.id for h in hits}
    out: list[SearchHit] = []
    for hit in hits:
        if hit.status != "superseded" or hit.memory is None:
            continue
        successor = hit.memory.meta.get("superseded_by")
        for sid in successor if isinstance(successor, list) else [successor]:
            if not isinstance(sid, str) or sid in have:
                continue
            try:
                memory = vault.get(sid)
            except (NotFoundError, MemvaultError):
                continue  # gone, or not visible to this identity
            have.add(sid)
            out.append(_hit_of(memory))
    return out


def _hit_of(memory: Memory) -> SearchHit:
    created = memory.created
    return SearchHit(
        id=memory.id,
        path=memory.path,
        type=memory.type,
        category=memory.category,
        title=memory.title,
        snippet=snippet(memory.content, []),
        score=0.0,
        status=memory.status,
        scope=memory.scope,
        created=created.strftime("%Y-%m-%dT%H:%M:%SZ") if created else None,
        memory=memory,
    )


def decide(evidence: list[Evidence]) -> tuple[str, str, Evidence | None, str | None]:
    """The verdict, why, the deciding evidence and slot (see the module doc)."""
    force = [e for e in evidence if e.in_force and e.relation in RELATIONS]
    if force:
        best = max(force, key=lambda e: (e.topic, e.matched, e.relation == "contradicts"))
        others = [e for e in force if e.relation != best.relation]
        newer = _newer_contradiction(best, others)
        if newer is not None:  # the newer value of the same thing wins, as in fact/recall
            why = (
                f"[{newer.hit.id}] {newer.why}; it is newer than [{best.hit.id}], which "
                "states it (both in force: memvault dispute keep settles it)"
            )
            return "contradicted", why, newer, newer.slot
        rival = _newer_in_dispute(best, [e for e in evidence if e.in_force])
        if rival is not None:  # a recorded dispute the reads settle for the newer fact
            why = (
                f"[{best.hit.id}] states it, but the newer [{rival.hit.id}] disputes it: "
                f"{rival.hit.snippet} (memvault dispute keep settles it)"
            )
            return "unknown", why, rival, "disputed"
        extra = f" ({len(others)} other fact(s) disagree)" if others else ""
        return RELATIONS[best.relation], f"[{best.hit.id}] {best.why}{extra}", best, best.slot
    outdated = [e for e in evidence if not e.in_force and e.relation == "supports"]
    if outdated:
        old = max(outdated, key=lambda e: e.topic)
        meta = old.hit.memory.meta if old.hit.memory is not None else {}
        successor = meta.get("superseded_by")
        sid = successor[0] if isinstance(successor, list) and successor else successor
        newer = next((e for e in evidence if e.hit.id == sid and e.in_force), None)
        until = meta.get("valid_to")
        why = (
            f"[{old.hit.id}] stated it"
            + (f" until {until}" if until else "")
            + (f"; superseded by [{sid}]" if sid else "; superseded since")
            + (f": {newer.hit.snippet}" if newer is not None else "")
        )
        return "contradicted", why, newer or old, "superseded"
    if not evidence:
        return "unknown", "no known fact is about this", None, None
    closest = max(evidence, key=lambda e: e.topic)
    why = f"no fact in force decides it (closest: [{closest.hit.id}] {closest.why})"
    return "unknown", why, None, None


def _since(e: Evidence) -> float:
    """When a fact took effect (epoch seconds): its ``valid_from``, else when it was written."""
    m = e.hit.memory
    if m is None:
        return 0.0
    try:
        when = m.time("valid_from") or m.created
    except ValueError:  # a hand-written date that is not one
        when = m.created
    return when.timestamp() if when is not None else 0.0


def _newer_contradiction(best: Evidence, others: list[Evidence]) -> Evidence | None:
    """A fact in force that contradicts the statement and took effect after the fact that
    supports it: two values of one thing, both in force (a dispute, or a change written
    without a subject); the newer one is what reads lead with."""
    if best.relation != "supports":
        return None
    start = _since(best)
    later = [
        e
        for e in others
        if e.relation == "contradicts" and _since(e) > start and _one_thing(e, best)
    ]
    return max(later, key=lambda e: (e.topic, _since(e)), default=None)


def _one_thing(newer: Evidence, older: Evidence) -> bool:
    """The two facts state values of one thing: a dispute links them, or they share their
    ``subject``, or (neither has one; one language) read as claim and fact they contradict
    each other.
    Two facts that each bear on the statement may be about different things (a Friday
    freeze and a weekend ban): then the newer one does not win."""
    a, b = newer.hit.memory, older.hit.memory
    if a is None or b is None:
        return False
    linked = b.meta.get("related")
    if a.id in (linked if isinstance(linked, list) else [linked]):
        return True
    if a.subject or b.subject:
        return a.subject == b.subject
    one, other = read(a.content), read(b.content)
    if one.lang != other.lang:
        return False  # across languages only a dispute or a subject says it is one thing
    return "contradicts" in (weigh(one, other).kind, weigh(other, one).kind)


def _newer_in_dispute(best: Evidence, force: list[Evidence]) -> Evidence | None:
    """A newer fact in force that an open dispute links to the supporting fact: the write
    was unsure it replaces it, and reads lead with the newer one, so the older one can't
    make the statement supported."""
    m = best.hit.memory
    if best.relation != "supports" or m is None or m.status != "disputed":
        return None
    linked = m.meta.get("related")
    ids = {str(i) for i in (linked if isinstance(linked, list) else [linked] if linked else [])}
    start = _since(best)
    later = [e for e in force if e.hit.id in ids and _since(e) > start]
    return max(later, key=_since, default=None)


def _with_judge(
    vault: Repository, command: str, result: ValidationResult, as_of: object
) -> ValidationResult:
    from .judge import JudgeFailed, ask_judge, judge_command

    allowed = judge_command(vault)  # a command from the shared config runs once allowed here
    if not allowed.runs:
        return result.replace(
            note=allowed.note, judge={"command": command, "status": "not allowed"}
        )
    facts = [_fact_payload(e) for e in result.evidence]
    payload = {
        "protocol": 1,
        "statement": result.statement,
        "claim": result.claim,
        "as_of": None if as_of is None else str(as_of),
        "facts": facts,
        "builtin": {
            "verdict": result.verdict,
            "why": result.why,
            "evidence_id": result.evidence_id,
            "slot": result.slot,
        },
    }
    timeout = vault.config.float("validate.judge_timeout")
    try:
        answer = ask_judge(command, payload, timeout)
    except JudgeFailed as exc:
        return result.replace(
            why=f"{result.why} (built-in verdict: the judge failed: {exc})",
            judge={"command": command, "status": "failed", "error": str(exc)},
        )
    return result.replace(
        verdict=answer["verdict"],
        why=f"judge: {answer['why']}",
        evidence_id=answer["evidence_id"],
        slot="judge" if answer["evidence_id"] else None,
        judge={"command": command, "status": "used", "builtin_verdict": result.verdict},
    )


def _fact_payload(e: Evidence) -> dict[str, Any]:
    memory = e.hit.memory
    meta = memory.meta if memory is not None else {}
    return {
        "id": e.hit.id,
        "title": e.hit.title,
        "text": memory.content if memory is not None else e.hit.snippet,
        "subject": meta.get("subject"),
        "status": e.hit.status,
        "in_force": e.in_force,
        "valid_from": meta.get("valid_from"),
        "valid_to": meta.get("valid_to"),
        "superseded_by": meta.get("superseded_by"),
    }


def recall(vault: Repository, query: str, **options: Unpack[SearchOptions]) -> SearchResult:
    """:func:`memvault.search.recall`, except that an "Is it true that ..." question is
    validated: its evidence comes back as hits and the verdict is in the note."""
    from .. import debug
    from ..search.api import recall as search_recall
    from ..search.routing import route

    kind = options.get("kind")
    options["route"] = the_route = options.get("route") or route(query, kind)
    if the_route.intent != "validate" or kind is not None:
        return search_recall(vault, query, **options)
    debug.note("route", the_route.as_dict())
    verdict = validate(
        vault,
        query,
        explain=bool(options.get("explain")),
        as_of=options.get("as_of"),
        log=options.get("log", True),
    )
    note = f"{verdict.verdict}: {verdict.why}"
    return SearchResult(query, "recall", the_route, verdict.hits, verdict.ms, note)
