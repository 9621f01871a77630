"""Conflicts on write (seed 004's ``assert``): is a new fact about the same thing as a fact
in force, with another value?

With a ``subject`` the writer said so (:meth:`memvault.core.Core.add`). Without one it is
inferred in two steps:

1. **Nearest facts by meaning**: the vault's own hybrid search for the new text among the
   facts in force of the same owner, kept when their cosine is at least the embedder's
   :data:`CANDIDATE_COSINE` (measured, see ``docs/lifecycle.md``; ``supersede.similarity``
   overrides it).
2. **The slots that differ**, read by validate's slot reader (:mod:`memvault.validate.claims`,
   weighed by :mod:`memvault.validate.weigh`) and the word diff of consolidation
   (:mod:`memvault.consolidate.compare`). The differing slot must be the *value*: the words
   that say what the fact is about stay the same. "The staging host is db-stg-3" and "The
   production host is db-prd-1" differ in what they are about (a qualifier), "Team A's
   on-call rotates Mondays" and "Team B's ... Fridays" in the subject's name and the day: neither
   replaces the other.

:func:`judge` answers ``supersede`` (one template, the value replaced: a number with its unit,
a name, a date, a weekday, a place, a permission flipped), ``dispute`` (validate's slots
contradict, but the sentences are worded apart: unsure), or nothing.

Step 2 needs no model and no index, so it runs first when the owner has few facts in force
without a subject (:data:`WORDS_FIRST`): when it finds none the new fact could replace, the
search (which loads the embedder and brings the index up to date) is skipped. Only a fact the
word rule picks can conflict, so this changes no outcome; it keeps most writes as cheap as
they were before conflicts were looked for (``docs/performance.md``).
"""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .memory import Memory, format_time
from .values import Record

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Mapping

    from .index import Index
    from .store.repository import Repository
    from .validate.claims import Claim
    from .validate.weigh import WordKeys

# Cosine of the new fact to a fact in force below which it is not even compared, per
# embedder: the lowest cosine of a value change on the 'tune' half of
# bench/data/supersede.json and bench/data/consolidate.json's contradictions, less 0.05
# (bench/supersede.py; docs/lifecycle.md). An embedder not listed: its similarity floor
# scaled like MiniLM's.
CANDIDATE_COSINE = {"all-MiniLM-L6-v2": 0.56, "multilingual-e5-small": 0.78, "fake": 0.5}
CANDIDATES = 8  # nearest facts weighed
_WORD = re.compile(r"\w+")
# Up to this many facts in force without a subject, the word rule weighs each before any
# search: ~1-3 ms a fact, against a search's model load and index update (docs/performance.md).
WORDS_FIRST = 200
ACTIONS = ("supersede", "dispute")
# The statuses a search returns unless asked (search.options.DEFAULT_STATUSES), named here so
# that a write the word rule settles never imports the search.
IN_FORCE = ("active", "disputed")


class Conflict(Record, frozen=True):
    """A fact in force the new fact conflicts with: ``action`` supersede|dispute, the slot
    that differs, why, and the cosine that made it a candidate."""

    memory: Memory
    action: str
    slot: str
    why: str
    similarity: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.memory.id,
            "action": self.action,
            "slot": self.slot,
            "why": self.why,
            "similarity": round(self.similarity, 3),
        }


def judge(new: str, old: str) -> tuple[str, str, str] | None:
    """``(action, slot, why)`` when ``new`` states another value of what ``old`` is about;
    None when they are about different things or agree (see the module docstring)."""
    from .consolidate.compare import compare
    from .validate.weigh import weigh

    if not may_conflict(new, old):
        return None
    relation = weigh(_claim(new), _claim(old))
    diff = compare(old, new)
    someone = _someone_else(_claim(new), _claim(old))
    if someone and relation.kind != "contradicts":
        # "Dara now leads the platform team" / "The platform team is led by Emeka": the same
        # act on the same thing by another person. Often a change (a lead, an owner), but
        # two people may both have done it: unsure, a dispute.
        return "dispute", "agent", someone
    if relation.kind == "related" and relation.slot == "subject":
        # The new fact may say more about its thing than the old one ("moved to", "rate
        # limit"): read the other way, the old fact's value is replaced. Unsure: a dispute.
        back = weigh(_claim(old), _claim(new))
        if back.kind == "contradicts" and back.slot not in ("negation", "polarity"):
            return "dispute", back.slot, back.why
        return None
    if relation.kind == "related" and relation.slot == "qualifier":
        return None  # validate's slots: about another thing ("staging" / "production")
    shape = diff.contradiction
    if shape == "value" and _numbered_label(old, new):
        return None  # "notes on the cluster, part 2": a label naming another thing
    if shape and (relation.kind == "contradicts" or shape != "swap"):
        # one sentence pattern, only the value replaced (or flipped), after the words
        # that say what it is about
        slot = relation.slot if relation.kind == "contradicts" else shape
        what = relation.why if relation.kind == "contradicts" else f"{shape} replaced"
        return "supersede", slot, what
    if diff.variant:
        return None  # one pattern, but more than the value changed: another thing
    if relation.kind == "contradicts" or shape:
        why = relation.why if relation.kind == "contradicts" else f"{shape}, worded apart"
        return "dispute", relation.slot if relation.kind == "contradicts" else shape, why
    return None


def may_conflict(new: str, old: str) -> bool:
    """False only when :func:`judge` surely answers None, told from each text's words read
    once (cached), without weighing the pair: every answer of :func:`judge` needs one of

    * the same act on the same thing (a verb and its patient) in both (someone else did it);
    * validate's same subject, either way round (a contradiction, or a dispute read back):
      at least :data:`~memvault.validate.weigh.SAME_SUBJECT` of the words held;
    * the word diff's template variant (a replaced value): enough words in common.

    A write weighs the new fact against each of its owner's facts in force; most share too
    few words for any of these, and this skips them (``docs/performance.md``)."""
    from .consolidate.compare import may_be_variant
    from .validate.weigh import SAME_SUBJECT, topic_bound

    a, b = _read(new), _read(old)
    if a.acts & b.acts:
        return True
    floor = SAME_SUBJECT - 1e-9
    if topic_bound(a.claim, b.keys) >= floor or topic_bound(b.claim, a.keys) >= floor:
        return True
    return may_be_variant(old, new)


class _Reading(Record, frozen=True):
    """A text as :func:`may_conflict` looks at it: validate's claim, its words as look-ups,
    and its (verb, patient) pairs."""

    claim: Claim
    keys: WordKeys
    acts: frozenset[tuple[str, frozenset[str]]]


@lru_cache(maxsize=4096)
def _read(text: str) -> _Reading:
    from .validate.weigh import word_keys

    claim = _claim(text)
    acts = frozenset(
        (verb, role.patient)
        for clause in claim.clauses
        for role in clause.roles
        if role.patient
        for verb in role.verbs
    )
    return _Reading(claim, word_keys(claim.union("words")), acts)


def _someone_else(new: Claim, old: Claim) -> str:
    """Why the two say the same act on the same thing was done by different people ("" when
    they don't): validate's roles (:mod:`memvault.validate.roles`), passives read back as
    actives."""
    named_new, named_old = _capitalised(new.text), _capitalised(old.text)
    for a in (r for c in new.clauses for r in c.roles):
        for b in (r for c in old.clauses for r in c.roles):
            same_act = bool(a.verbs & b.verbs) and a.patient and a.patient == b.patient
            # people by name only: "The wallet staging database" is no one's act
            people = a.agent <= named_new and b.agent <= named_old
            if same_act and people and a.agent and b.agent and not a.agent & b.agent:
                who, was = " ".join(sorted(a.agent)), " ".join(sorted(b.agent))
                return f"agent: {who} vs the fact's {was}"
    return ""


def _capitalised(text: str) -> set[str]:
    """The words written with a capital (names; the sentence's first word too)."""
    return {w.lower() for w in _WORD.findall(text) if w[:1].isupper()}


@lru_cache(maxsize=4096)
def _claim(text: str) -> Claim:
    """validate's reading of ``text`` (cached: the new fact is weighed against many)."""
    from .validate.claims import read

    return read(text)


def _numbered_label(old: str, new: str) -> bool:
    """The one difference is a whole number closing the sentence right after a word ("part
    2", "plan number 7"): it names which thing, it is not a value of it."""
    from .consolidate.compare import words

    a, b = words(old), words(new)
    if len(a) != len(b) or len(a) < 2:
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x.key != y.key]
    if diff != [len(a) - 1] or not (a[-1].key.isdigit() and b[-1].key.isdigit()):
        return False
    before = old.split()[-2] if len(old.split()) >= 2 else ""
    return before.isalpha() and a[-2].content and not a[-2].slot  # not "September 12"


def candidate_cosine(vault: Repository) -> float:
    """The cosine a fact in force must reach to be weighed (``supersede.similarity``, else
    the embedder's measured :data:`CANDIDATE_COSINE`)."""
    configured = vault.config.get("supersede.similarity")
    if configured is not None:
        return float(configured)
    name = str(vault.config.get("embedder") or "")
    if name in CANDIDATE_COSINE:
        return CANDIDATE_COSINE[name]
    if name.startswith("fake"):
        return CANDIDATE_COSINE["fake"]
    from .index.manifest import configured_embedder

    floor = float(getattr(configured_embedder(vault), "similarity_floor", 0.0))
    return floor + (1.0 - floor) * CANDIDATE_COSINE["all-MiniLM-L6-v2"]


def find_conflicts(
    vault: Repository, meta: Mapping[str, Any], content: str, index: Index | None = None
) -> list[Conflict]:
    """The facts in force (active or disputed) of the new fact's owner that it supersedes
    or disputes, nearest first. Reads the index (``index``: one already brought up to date,
    as consolidation holds under the vault lock); writes nothing."""
    from .search.engine import run
    from .search.options import build_filter
    from .search.ranking import Plan

    text = _text(meta.get("title"), content)
    if not text.strip():
        return []
    verdicts: dict[str, tuple[str, str, str] | None] = {}
    rivals = _rivals(vault, meta)
    if len(rivals) <= WORDS_FIRST:
        for m in rivals:
            old_text = _text(m.meta.get("title"), m.content)
            if old_text not in verdicts:
                verdicts[old_text] = judge(text, old_text)
        if not any(verdicts.values()):
            return []  # the word rule picks none: no search can find a conflict
    _, filt = build_filter(vault, {}, types=("semantic",))
    plan = Plan(types=("semantic",), filt=filt, limit=CANDIDATES, prefer=None, explain=True)
    hits = run(vault, text, plan, index=index).hits
    floor = candidate_cosine(vault)
    found: list[Conflict] = []
    for hit in hits:
        old = hit.memory
        if old is None or old.id == meta.get("id") or not same_owner(old, meta):
            continue
        if old.subject and old.subject != meta.get("subject"):
            continue  # the writer named what it is about: the subject rule decides
        vector = (hit.explain or {}).get("vector") or {}
        cosine = vector.get("own") if vector.get("rank") is not None else None
        if cosine is None:
            continue
        old_text = _text(old.meta.get("title"), old.content)
        verdict = verdicts[old_text] if old_text in verdicts else judge(text, old_text)
        # The cosine keeps far-apart sentences out; the same act on the same thing by
        # another person ("agent") is about the same thing however the names embed.
        if verdict is not None and (float(cosine) >= floor or verdict[1] == "agent"):
            found.append(Conflict(old, *verdict, similarity=float(cosine)))
    return found


def _rivals(vault: Repository, meta: Mapping[str, Any]) -> list[Memory]:
    """The facts the search could return as conflicts: in force, without a subject (a fact
    with one is left to the subject rule), of the new fact's owner; read off the catalog after
    a look at the folders and a stat of each (no scan: the write takes none unless it needs
    one)."""
    vault.catalog.quick_sync(("semantic",))
    out: list[Memory] = []
    for entry in vault.catalog.without_subject("semantic"):
        m = entry.memory
        if m is None or m.id == meta.get("id") or m.status not in IN_FORCE:
            continue
        if same_owner(m, meta):
            out.append(m)
    return out


def _text(title: object, content: str) -> str:
    # (a fact's body as written ends with a newline; as a write gives it, without: one text,
    # so the fact a write read as new is found read when the next write weighs it)
    content = content.strip("\n")
    title = str(title or "").strip()
    if title and title not in content:
        return f"{title}. {content}"
    return content


def same_owner(m: Memory, meta: Mapping[str, Any]) -> bool:
    """A fact of the same scope and owner (agent for ``self``, team for ``team``): facts
    never supersede across owners."""
    return (
        m.type == "semantic"
        and m.scope == meta.get("scope")
        and (m.scope != "self" or m.agent == meta.get("agent"))
        and (m.scope != "team" or m.team == meta.get("team"))
    )


def superseded_keys(winner: str, since: dt.datetime, now: str | None = None) -> dict[str, Any]:
    """The keys a fact superseded by ``winner`` gets (its tombstone): status, ``valid_to``
    (when the winner took over), ``superseded_by``; ``updated`` when ``now`` is given."""
    keys: dict[str, Any] = {
        "status": "superseded",
        "valid_to": format_time(since),
        "superseded_by": winner,
    }
    if now is not None:
        keys["updated"] = now
    return keys


def disputed_keys(m: Memory, other: str) -> dict[str, Any]:
    """The keys that record a dispute on ``m``: status disputed, related to the other fact."""
    related = m.meta.get("related")
    have = [
        str(r) for r in (related if isinstance(related, list) else [related] if related else [])
    ]
    return {"status": "disputed", "related": sorted({*have, other})}
