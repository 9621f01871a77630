"""Weighing one fact against a claim, slot by slot: is the fact about the same thing, and
if so does it state the claim, rule it out, or leave it open?

1. **Same subject?** The share of the claim's content words (lemmas, names) the fact
   holds, its ``subject`` key's words included -- values the two share count too. A claim
   about "staging" is not judged by a fact about "production", nor "p95" by "p99"
   (qualifiers of one class that differ). Across languages, where words can't meet, the
   embedding similarity of the two stands in for the share of words.
2. **Slots**, only when the subject is the same: a name the fact rejects ("PostgreSQL over
   MySQL"); a quantity of the same dimension (200 ms vs 200 s; 14 days = 2 weeks) matched
   with the fact's quantity in the clause about the same thing; a version of the same
   software; a date, a time of day, a weekday; a name in place of the fact's ("us-east-1"
   for "eu-west-1"); permission (preferred vs frozen, allowed vs never).
3. **Supports** when nothing conflicts, every value of the claim is in the fact, one sentence
   of the fact holds every content word of the claim (75 % when a measured value of it
   matched), a general word counting as held by one of its kind ("person": "man"), and who
   does what agrees (:mod:`memvault.validate.roles`), and no direction is turned ("up" for
   "down"); **contradicts** on a conflict (an opposite, a polarity, a value); else
   **related**.
4. **Aligned words**, with an aligner: a claim left related only for words the fact lacks
   is weighed again with one of them replaced by the fact's word nearest in meaning
   (:mod:`memvault.validate.align`); only a support is taken from that second reading.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ..values import Record
from . import lexicon as lx
from .align import LANGUAGES as ALIGN_LANGUAGES
from .claims import Claim, read
from .conditions import WHEN, valued_words
from .groups import group_total, kinds_of
from .places import direction_clash, place_clash
from .roles import ROLE_LANGUAGES, Role
from .words import PERMISSION, Clause, Quantity, parts

if TYPE_CHECKING:  # pragma: no cover
    from .align import Aligner

# Share of the claim's words (and matched values) a fact must hold: to be judged about the
# same subject (a conflict can then contradict), and to state the claim (support).
SAME_SUBJECT = 0.6
STATES = 1.0
# ... unless the claim is anchored: a measured value of it (not a bare count) that the fact
# holds too carries the content, and this share of its words suffices.
STATES_ANCHORED = 0.75
# A conflict of permission alone ("preferred" vs "frozen") needs the closer match.
PERMISSION_SUBJECT = 0.66
# Embedding similarity, scaled so 0 is the embedder's "unrelated" floor and 1 identical:
# above this, a fact in another language is taken to be about the claim's subject.
CROSS_LANGUAGE = 0.5
CROSS_LANGUAGE_WORDS = 0.34


class Relation(Record, frozen=True):
    """How one fact bears on a claim: ``kind`` supports|contradicts|related; ``slot`` the
    slot that decided (choice, number, version, date, time, weekday, name, permission,
    words); the claim's and the fact's values for it."""

    kind: str
    slot: str
    why: str
    claim_value: str | None = None
    fact_value: str | None = None
    topic: float = 0.0
    matched: int = 0  # values of the claim the fact holds too


def near(a: str, b: str) -> bool:
    """Same word, or forms of one word ("reviewer"/"review", "versioned"/"versioning",
    "cutting"/"cut": English gerunds the lemmatiser leaves as they are)."""
    if a == b:
        return True
    if a in lx.KIND_NOUNS and b in lx.KIND_NOUNS:
        return False  # two nouns of the kinds list are two words ("menino" / "menina")
    gerund = a.endswith("ing") or b.endswith("ing") or a == b + "e" or b == a + "e"
    if gerund and a.isascii() and b.isascii() and _gerund_stem(a) == _gerund_stem(b):
        return True
    if len(a) < 5 or len(b) < 5 or a.startswith("~") or b.startswith("~"):
        return False
    if any(c.isdigit() for c in a + b):
        return False  # an identifier ("db-sea-51" / "db-sea-27") is one name, not a form
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n >= 5 and n >= 0.75 * min(len(a), len(b))


def _gerund_stem(word: str) -> str:
    """ "cutting", "cut" -> "cut"; "slicing", "slice" -> "slic"; "playe" (sic) -> "play"."""
    if word.endswith("ing") and len(word) > 5:
        stem = word[:-3]
        return stem[:-1] if stem[-1] == stem[-2] and stem[-1] not in "aeiouls" else stem
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _in(word: str, words: set[str]) -> bool:
    """Is ``word`` among ``words``: itself, a form of it, or one of its kind ("person":
    "man")?"""
    return (
        word in words
        or any(near(word, w) for w in words)
        or bool(lx.KINDS.get(word, set()) & words)
    )


class WordKeys(Record, frozen=True):
    """A set of words as look-ups that find every word :func:`_in` can match among them:
    the words, their gerund stems, their first five letters (:func:`near`'s shared prefix)."""

    words: frozenset[str]
    stems: frozenset[str]
    prefixes: frozenset[str]


def word_keys(words: set[str]) -> WordKeys:
    """The :class:`WordKeys` of ``words``."""
    return WordKeys(
        frozenset(words),
        frozenset(_gerund_stem(w) for w in words),
        frozenset(w[:5] for w in words if len(w) >= 5),
    )


def _may_be_in(word: str, keys: WordKeys) -> bool:
    """True whenever ``_in(word, keys.words)`` is (and sometimes when it is not): set
    look-ups for :func:`near`'s word-by-word loop. Each way :func:`near` matches implies
    one of them: the same word; the same gerund stem; a shared prefix of five letters or
    more."""
    return (
        word in keys.words
        or _gerund_stem(word) in keys.stems
        or (len(word) >= 5 and word[:5] in keys.prefixes)
        or bool(lx.KINDS.get(word, frozenset()) & keys.words)
    )


def topic_bound(claim: Claim, fact: WordKeys) -> float:
    """An upper bound of the share of ``claim``'s words and values that a fact with the words
    ``fact`` holds, as :func:`weigh` reads it with no ``subject`` and no ``similarity``. Below
    :data:`SAME_SUBJECT`, :func:`weigh` can only answer "related": a conflict needs the same
    subject. Costs set look-ups, where :func:`weigh` compares word with word."""
    claim_words = claim.union("words")
    # each value of the claim can match at most once (:func:`_values`)
    values = sum(
        len(c.quantities) + len(c.versions) + len(c.dates) + len(c.clocks) + len(c.weekdays)
        for c in claim.clauses
    )
    # (a permission word counts as held: whether it is depends on the fact's clauses)
    hits = sum(1 for w in claim_words if w == PERMISSION or _may_be_in(w, fact))
    total = len(claim_words) + values
    return (hits + values) / total if total else 0.0


def _best_clause(claim: Claim, fact: Claim) -> Clause:
    words = claim.union("words")
    return max(
        fact.clauses, key=lambda c: len({w for w in words if _in(w, c.words)}), default=Clause()
    )


def _qualifier_clash(claim_words: set[str], fact_words: set[str]) -> tuple[str, str] | None:
    """A qualifier of the claim that the fact replaces by another of its class ("staging"
    vs "production"), or a numbered label ("p95" vs "p99", "sev2" vs "sev1")."""
    for cls in set(lx.QUALIFIERS.values()):
        mine = {w for w in claim_words if lx.QUALIFIERS.get(w) == cls}
        theirs = {w for w in fact_words if lx.QUALIFIERS.get(w) == cls}
        if mine and theirs and not mine & theirs:
            return ", ".join(sorted(mine)), ", ".join(sorted(theirs))
    for word in claim_words - fact_words:
        stem = word.rstrip("0123456789")
        if stem and stem != word and stem.isalpha():
            for other in fact_words:
                if other != word and other.rstrip("0123456789") == stem and other != stem:
                    return word, other
    return None


def weigh(
    claim: Claim,
    fact: Claim,
    subject: str | None = None,
    similarity: float | None = None,
    align: Aligner | None = None,
) -> Relation:
    """The relation of ``fact`` to ``claim`` (see the module doc); ``similarity``: their
    embedding similarity scaled to 0..1 (None if unknown). With ``align``, a claim the
    rules leave "related" only for words the fact lacks is weighed again with those words
    aligned to the fact's by meaning (:mod:`memvault.validate.align`)."""
    relation, matched = _weigh(claim, fact, subject, similarity)
    if relation.kind == "supports" and not _stated_in_a_part(claim, fact, subject, similarity):
        why = "its words stand in different parts of the fact's sentence (no one part says it)"
        return Relation("related", "part", why, topic=relation.topic, matched=matched)
    if (
        align is not None
        and relation.kind == "related"
        and relation.slot in ALIGNABLE
        and claim.lang == fact.lang
        and claim.lang in ALIGN_LANGUAGES
    ):
        pairs = _alignment(claim, fact, subject, align)
        if pairs:
            again, again_matched = _weigh(_substituted(claim, pairs), fact, subject, similarity)
            # Only a support is taken from aligned words: a word near in meaning is not
            # the fact's word, so it may not make a negation or a value a contradiction.
            if again.kind == "supports":
                said = ", ".join(f"{w} ~ {f}" for w, f in sorted(pairs.items()))
                return again.replace(why=f"{again.why} (aligned {said})", matched=again_matched)
    return relation.replace(matched=matched)


def _stated_in_a_part(
    claim: Claim, fact: Claim, subject: str | None, similarity: float | None
) -> bool:
    """Whether one part of a sentence of ``fact`` (:func:`memvault.validate.words.parts`)
    states ``claim`` -- asked only of languages whose roles are not read (Russian and
    Ukrainian: free word order), where it stands in for the role check. "Кадры, на которые
    попали два тигра, распространились" does not say the tigers spread; "поймали похитителя,
    который прославился" does say the thief became famous."""
    if fact.lang in ROLE_LANGUAGES:
        return True
    pieces = parts(fact.text)
    if len(pieces) < 2:
        return True
    for piece in pieces:
        part = read(piece, fact.lang)
        if part.clauses and _weigh(claim, part, subject, similarity)[0].kind == "supports":
            return True
    return False


# The reasons to try an alignment: missing subject words, too few words stated.
ALIGNABLE = ("subject", "words", "role")


def _alignment(claim: Claim, fact: Claim, subject: str | None, align: Aligner) -> dict[str, str]:
    """The claim's content words the fact does not hold, each to the fact's word nearest in
    meaning that the claim does not hold either (names and values are never aligned)."""
    claim_words = claim.union("words") - claim.union("entities") - {PERMISSION}
    fact_words = fact.union("words") | _subject_words(subject)
    missing = {w for w in claim_words if not _in(w, fact_words)}
    if not missing:
        return {}
    free = fact.union("words") - fact.union("entities") - fact.union("rejected")
    candidates = {w for w in free if not _in(w, claim_words) and not any(c.isdigit() for c in w)}
    return align.align(missing, candidates)


def _substituted(claim: Claim, pairs: dict[str, str]) -> Claim:
    """The claim with each aligned word replaced by its fact word: in its words, subject
    and roles, so the same rules read it as the fact's words."""

    def swap(words: Iterable[str]) -> set[str]:
        return {pairs.get(w, w) for w in words}

    def head(word: str | None) -> str | None:
        return pairs.get(word, word) if word else word

    clauses = tuple(
        c.replace(
            words=swap(c.words),
            subject=swap(c.subject),
            roles=tuple(
                r.replace(
                    agent=frozenset(swap(r.agent)),
                    patient=frozenset(swap(r.patient)),
                    agent_head=head(r.agent_head),
                    patient_head=head(r.patient_head),
                    verbs=frozenset(swap(r.verbs)),
                )
                for r in c.roles
            ),
        )
        for c in claim.clauses
    )
    return claim.replace(clauses=clauses)


def _weigh(
    claim: Claim, fact: Claim, subject: str | None, similarity: float | None
) -> tuple[Relation, int]:
    claim_words = claim.union("words")
    fact_words = fact.union("words") | _subject_words(subject)
    clash = _qualifier_clash(claim_words, fact_words)
    if clash:
        why = f"about {clash[0]}; the fact is about {clash[1]}"
        return Relation("related", "qualifier", why, *clash), 0
    clause = _best_clause(claim, fact)
    values = _values(claim, fact, clause)
    if clause.polarity < 0 and any(c.polarity > 0 for c in claim.clauses):
        # A prohibition is scoped ("frozen on weekends"): another day or time is not ruled
        # out by it, nor allowed -- the fact is silent there.
        scoped = [c for c in values.conflicts if c[0] in ("weekday", "time", "date")]
        values.conflicts = [c for c in values.conflicts if c not in scoped]
        values.unmatched += [(slot, mine) for slot, mine, _ in scoped]
    topic = _topic(claim, fact, claim_words, fact_words, values.matched, similarity)
    missing = sorted({w for c in claim.clauses for w in c.subject if not _in(w, fact_words)})
    if missing and topic < 1.0:
        why = f"the fact is not about {', '.join(missing)}"
        return Relation("related", "subject", why, ", ".join(missing), topic=topic), values.matched
    if topic < SAME_SUBJECT:
        return Relation(
            "related", "words", f"not about the same thing (overlap {topic:.2f})", topic=topic
        ), values.matched
    # One sentence of the fact must state it: words gathered from several sentences of a
    # long fact ("the medics ..." in one, "called the police" in another) are not a statement.
    key = _subject_words(subject)
    by_sentence = [
        _topic(claim, fact, claim_words, words | key, values.matched, similarity)
        for words in fact.sentences()
    ]
    stated = max(by_sentence)
    conflict = _conflict(claim, fact, clause, values, claim_words, fact_words, topic, stated)
    if conflict is not None:
        return conflict, values.matched
    verbs = claim.union("light")
    plain = not claim.union("entities") and not values.matched_slots
    if verbs and plain and not fact.union("light") and not verbs & fact_words:
        # "is running" is not stated by "is sitting": a light verb needs one in the fact,
        # unless a name or a value carries the claim ("the build uses Vite")
        said = ", ".join(sorted(verbs))
        # (an English verb reads as "it uses"; another language's lemma is quoted as it is)
        why = (
            f"the fact doesn't say it {said}s"
            if claim.lang == "en"
            else f"the fact doesn't say {said}"
        )
        return Relation("related", "verb", why, said, topic=topic), values.matched
    swap = _role_swap(claim, fact)
    if swap is not None:
        word, role = swap
        why = (
            f"the fact doesn't say it {word} (its agent does something else)"
            if role == "verb"
            else f"the fact has {word} in another role (not the {role})"
        )
        return Relation("related", "role", why, word, topic=topic), values.matched
    if values.unmatched:
        what = values.unmatched[0]
        return Relation(
            "related", what[0], f"the fact doesn't state {what[1]}", what[1], topic=topic
        ), values.matched
    extra = _unmatched_names(claim, fact_words)
    if extra:
        return Relation(
            "related", "name", f"the fact doesn't mention {', '.join(sorted(extra))}", topic=topic
        ), values.matched
    turned = direction_clash(claim.text, fact.text) or place_clash(claim.text, fact.text)
    if turned is not None:
        why = f"the fact says {turned[1]}, not {turned[0]}"
        return Relation("related", "direction", why, *turned, topic=topic), values.matched
    return _statement(claim, fact, values, by_sentence, topic)


def _statement(
    claim: Claim, fact: Claim, values: _Values, by_sentence: list[float], topic: float
) -> tuple[Relation, int]:
    """The last word once nothing conflicts and the fact is about the claim: supported when
    one sentence of the fact holds the claim's words (``by_sentence``: each sentence's share)
    and says it as plainly as the claim does."""
    stated = max(by_sentence)
    enough = (STATES_ANCHORED if _anchored(claim, values) else STATES) - 1e-9
    if stated < enough:
        return Relation(
            "related",
            "words",
            f"same subject, but no sentence of the fact states it (overlap {stated:.2f})",
            topic=topic,
        ), values.matched
    unsaid = _unsaid(claim, fact, [score >= enough for score in by_sentence])
    if unsaid is not None:
        return unsaid.replace(topic=topic), values.matched
    slot, mine, theirs = values.matched_slots[0] if values.matched_slots else ("words", None, None)
    why = f"the fact states it ({slot}: {mine})" if mine else "the fact states it"
    return Relation("supports", slot, why, mine, theirs, topic), values.matched


def _unsaid(claim: Claim, fact: Claim, stating: list[bool]) -> Relation | None:
    """Why the sentences of ``fact`` that hold the claim's words still don't state it: each
    of them only hedges it (probably, allegedly, wants, believes, often: lexicon.HEDGES) where the
    claim does not, or the claim makes it absolute (only, exactly, already:
    lexicon.ABSOLUTES) where the fact does not. ("Always" and "never" ask nothing more: a
    fact stated plainly says it always holds, and one that says "often" is hedged.)"""
    denied = _denial_mismatch(claim, fact, stating)
    if denied is not None:
        return denied
    absolute = claim.union("absolutes") - fact.union("absolutes")
    if absolute:
        word = min(absolute)
        return Relation("related", "absolute", f"the fact doesn't say {word}", word)
    mine = claim.union("hedges")
    hedged = [
        sorted(hedges - mine)
        for hedges, states in zip(fact.sentences("hedges"), stating, strict=True)
        if states
    ]
    if hedged and all(hedged):
        concept = hedged[0][0]
        return Relation("related", "hedge", f"the fact only says {HEDGED[concept]}", concept)
    return _conditioned(claim, fact, stating)


def _conditioned(claim: Claim, fact: Claim, stating: list[bool]) -> Relation | None:
    """A fact whose stating sentences say it only under a condition ("the build fails if the
    cache is cold": :mod:`memvault.validate.conditions`) does not state a claim that sets
    none ("when" counts as one here): every word of the claim stands where it governs."""
    if claim.union("conditioned") or WHEN.search(claim.text):
        return None
    # the claim's words and its values' words ("every Tuesday at 10:00": a weekday and a
    # time carry it, its content words may be one)
    said: set[str] = set()
    for slot, why in (
        ("conditioned", "the fact says it holds only under a condition"),
        ("asked", "the fact only asks whether it is so"),
    ):
        scopes = [c for c, states in zip(fact.sentences(slot), stating, strict=True) if states]
        if not scopes or not all(scopes):
            continue
        said = said or claim.union("words") | valued_words(claim.text, claim.lang)
        if said and all(all(_in(w, c) for w in said) for c in scopes):
            return Relation("related", "condition", why)
    return None


def _denial_mismatch(claim: Claim, fact: Claim, stating: list[bool]) -> Relation | None:
    """Why a fact whose sentence holds the claim's words still doesn't state it: the claim
    denies what no stating sentence denies ("the complaint was not checked" against "the
    complaint was checked; no force was used"): their negations cover no word in common.
    And "without X" (which leaves the clause's polarity: skiing "without fear" is skiing):
    a claim without X against a fact that has it, or the other way round, contradicts."""
    scopes = [d for d, states in zip(fact.sentences("denied"), stating, strict=True) if states]
    mine = claim.union("denied")
    if not any(scopes) and not claim.union("lacking"):
        # a negated claim against a fact with no negation: the polarity rules have spoken
        return None
    kept = [
        w - d
        for w, d, states in zip(
            fact.sentences("words"), fact.sentences("denied"), stating, strict=True
        )
        if states
    ]
    for words in kept:
        had = sorted(w for w in claim.union("lacking") if _in(w, words))
        if had:
            return Relation("contradicts", "negation", f"the fact has {had[0]}", had[0])
    lacked = [w for w, states in zip(fact.sentences("lacking"), stating, strict=True) if states]
    said = claim.union("words") - mine
    for lacks in lacked:
        gone = sorted(w for w in said if _in(w, lacks))
        if gone:
            return Relation("contradicts", "negation", f"the fact says without {gone[0]}", gone[0])
    if mine and not any(any(_in(w, scope) for w in mine) for scope in scopes):
        word = min(mine)
        return Relation("related", "negation", f"the fact doesn't deny {word}", word)
    return None


# How "unknown" says what a hedged fact does say (keys: lexicon.HEDGES' concepts).
HEDGED = {
    "possible": "it may be so",
    "hearsay": "it is said to be so",
    "intent": "it is wanted, planned or tried",
    "almost": "it is almost so",
    "sometimes": "it is so at times",
    "belief": "someone believes or claims it",
    "question": "someone asks whether it is so",
}


def _anchored(claim: Claim, values: _Values) -> bool:
    """Does the fact hold a measured value of the claim (a time, size, date, version...;
    not a bare count, and not a name: names alone let news-like claims through)?"""
    if any(slot != "number" for slot, _, _ in values.matched_slots):
        return True
    measured = any(
        q.dim.startswith("rate:") or _base(q.dim) != "count"
        for c in claim.clauses
        for q in c.quantities
    )
    return measured and bool(values.matched_slots)


def _role_swap(claim: Claim, fact: Claim) -> tuple[str, str] | None:
    """The head of a role of the claim that the fact has only as the head of the other
    role: "the kangaroo is picking up the woman" for "the woman is picking up the kangaroo"."""
    if claim.lang != fact.lang or claim.lang not in ROLE_LANGUAGES:
        return None
    units = [u for c in fact.clauses for u in c.roles if u.acts]
    agents = {w for u in units for w in u.agent}
    patients = {w for u in units for w in u.patient}
    agent_heads = {u.agent_head for u in units if u.agent_head}
    patient_heads = {u.patient_head for u in units if u.patient_head}
    for c in claim.clauses:
        for u in c.roles:
            if not u.acts:
                continue
            verb = _other_verb(u, units)
            if verb is not None:
                return verb, "verb"
            head = None if u.relative else u.agent_head
            if head and not _in(head, agents) and _in(head, patient_heads):
                return head, "agent"
            head = u.patient_head
            if head and not _in(head, patients) and _in(head, agent_heads):
                return head, "patient"
    return None


def _other_verb(u: Role, units: list[Role]) -> str | None:
    """The claim's agent does something else in the fact: "a man is slicing an onion" for
    "a man is eating onion slices", "a clown is singing" for "people are singing and a clown
    is dancing"."""
    if u.relative or not u.agent_head or not u.verbs:
        return None
    theirs = [f for f in units if _in(u.agent_head, set(f.agent))]
    verbs = {v for f in theirs for v in f.verbs}
    if not verbs or any(_in(v, verbs) for v in u.verbs):
        return None
    return ", ".join(sorted(u.verbs))


def _subject_words(subject: str | None) -> set[str]:
    if not subject:
        return set()
    return {w.lower() for w in subject.replace("-", ".").replace("_", ".").split(".") if len(w) > 1}


def _topic(
    claim: Claim,
    fact: Claim,
    claim_words: set[str],
    fact_words: set[str],
    matched_values: int,
    similarity: float | None,
) -> float:
    has_permission = any(c.permission for c in fact.clauses)
    hits = sum(
        1 for w in claim_words if (has_permission if w == PERMISSION else _in(w, fact_words))
    )
    total = len(claim_words) + matched_values
    share = (hits + matched_values) / total if total else 0.0
    if claim.lang != fact.lang and similarity is not None and similarity >= CROSS_LANGUAGE:
        # Across languages some words can't meet: a close embedding, with a shared value
        # or name and some words in common, stands in for the rest.
        shared = matched_values + len(claim.union("entities") & fact_words)
        if shared and share >= CROSS_LANGUAGE_WORDS:
            share = max(share, min(1.0, share + similarity - CROSS_LANGUAGE))
    return share


class _Values(Record):
    matched: int
    matched_slots: list[tuple[str, str, str]]  # (slot, claim value, fact value)
    conflicts: list[tuple[str, str, str]]
    unmatched: list[tuple[str, str]]  # (slot, claim value)


def _fmt(q: Quantity) -> str:
    return q.text


def _base(dim: str) -> str:
    base = dim.split(":", 1)[1] if dim.startswith("rate:") else dim
    return "count" if base == "number" else base


def _comparable(a: Quantity, b: Quantity) -> bool:
    """Same dimension (a rate with a rate); counts of the same thing."""
    if a.dim.startswith("rate:") != b.dim.startswith("rate:") or _base(a.dim) != _base(b.dim):
        return False
    if _base(a.dim) == "count" and a.unit and b.unit:
        return any(_in(u, set(b.unit)) for u in a.unit)
    return True


def _equal(a: Quantity, b: Quantity) -> bool:
    same_unit = _base(a.dim) != "money" or a.unit == b.unit  # 12,000 USD is not 12,000 EUR
    return same_unit and math.isclose(a.value, b.value, rel_tol=1e-6)


def _compare_quantity(q: Quantity, clause: Clause, fact: Claim, out: _Values) -> None:
    pool = [r for r in clause.quantities if _comparable(q, r)] or [
        r for c in fact.clauses for r in c.quantities if _comparable(q, r)
    ]
    # a group named one by one ("a man and two girls") counts the general word ("three
    # people"), unless the fact counts that word itself ("eight people ... two women")
    direct = any(r.unit & q.unit for r in pool)
    if not direct and not any(_equal(q, r) for r in pool) and _group_states(q, fact):
        out.matched += 1
        out.matched_slots.append(("number", _fmt(q), _fmt(q)))
        return
    if not pool:
        out.unmatched.append(("number", _fmt(q)))
        return
    equal = [r for r in pool if _equal(q, r)]
    best = max(pool, key=lambda r: len(q.context & r.context))
    best_score = len(q.context & best.context)
    clearly = sum(1 for r in pool if len(q.context & r.context) == best_score) == 1
    if equal and not (clearly and best not in equal and best_score > 0):
        out.matched += 1
        out.matched_slots.append(("number", _fmt(q), _fmt(equal[0])))
    else:
        out.conflicts.append(("number", _fmt(q), _fmt(best if clearly else pool[0])))


def _group_states(q: Quantity, fact: Claim) -> bool:
    """Does ``fact`` name ``q``'s count of its noun one by one ("a man and two girls" for
    "three people")?"""
    if _base(q.dim) != "count" or q.dim.startswith("rate:") or not kinds_of(q.unit):
        return False
    total = group_total(fact.text, fact.lang, q.unit)
    return total is not None and math.isclose(total, q.value)


def _values(claim: Claim, fact: Claim, clause: Clause) -> _Values:
    """Each value of the claim against the fact's: matched, conflicting or not stated."""
    out = _Values(0, [], [], [])
    for c in claim.clauses:
        for q in c.quantities:
            _compare_quantity(q, clause, fact, out)
        for key, version in c.versions:
            theirs = [v for k, v in _all(fact, "versions") if k == key or not k or not key]
            _compare_set("version", {version}, set(theirs), out)
    _compare_set("date", _dates(claim), _dates(fact), out, compatible=_date_match)
    _compare_set("time", _clocks(claim), _clocks(fact), out)
    _compare_set("weekday", claim.union("weekdays"), fact.union("weekdays"), out)
    return out


def _all(claim: Claim, name: str) -> list[tuple[str, str]]:
    return [v for c in claim.clauses for v in getattr(c, name)]


def _dates(claim: Claim) -> set[str]:
    return {
        "-".join("?" if p is None else str(p) for p in d) for c in claim.clauses for d in c.dates
    }


def _clocks(claim: Claim) -> set[str]:
    return {f"{m // 60:02d}:{m % 60:02d}" for c in claim.clauses for m in c.clocks}


def _date_match(a: str, b: str) -> bool:
    return all(x == y or "?" in (x, y) for x, y in zip(a.split("-"), b.split("-"), strict=True))


def _compare_set(
    slot: str,
    mine: set[str],
    theirs: set[str],
    out: _Values,
    compatible: Callable[[str, str], bool] | None = None,
) -> None:
    same = compatible or str.__eq__
    for value in sorted(mine):
        match = next((t for t in sorted(theirs) if same(value, t)), None)
        if match is not None:
            out.matched += 1
            out.matched_slots.append((slot, value, match))
        elif theirs:
            out.conflicts.append((slot, value, ", ".join(sorted(theirs))))
        else:
            out.unmatched.append((slot, value))


def _unmatched_names(claim: Claim, fact_words: set[str]) -> set[str]:
    return {e for e in claim.union("entities") if not _in(e, fact_words)}


def _conflict(
    claim: Claim,
    fact: Claim,
    clause: Clause,
    values: _Values,
    claim_words: set[str],
    fact_words: set[str],
    topic: float,
    share: float,
) -> Relation | None:
    """The first slot on which the fact rules the claim out, if any; ``share``: the most
    of the claim's words one sentence of the fact holds."""
    rejected = fact.union("rejected")
    stated = {w for c in fact.clauses for w in c.words - c.rejected}
    asserted = claim_words - claim.union("rejected") - {PERMISSION}
    ruled_out = {w for w in asserted if w in rejected and w not in stated}
    if ruled_out:
        names = ", ".join(sorted(ruled_out))
        return Relation("contradicts", "choice", f"the fact rules out {names}", names, names, topic)
    denied = claim.union("rejected") & fact.union("entities")
    if denied and not claim.union("rejected") & rejected:
        names = ", ".join(sorted(denied))
        return Relation(
            "contradicts", "choice", f"the fact states {names}", f"not {names}", names, topic
        )
    if values.conflicts:
        slot, mine, theirs = values.conflicts[0]
        return Relation(
            "contradicts", slot, f"{slot}: {mine} vs the fact's {theirs}", mine, theirs, topic
        )
    opposite = _opposite(claim_words, fact_words)
    if opposite is not None:
        mine, theirs = opposite
        why = f"{mine} vs the fact's {theirs}"
        return Relation(OPPOSITE_VERDICT, "opposite", why, mine, theirs, topic)
    substitute = _substitute(claim, clause, fact_words, claim_words)
    if substitute is not None:
        mine, theirs = substitute
        return Relation(
            "contradicts", "name", f"{mine} vs the fact's {theirs}", mine, theirs, topic
        )
    return _permission_conflict(claim, clause, topic, share)


OPPOSITE_VERDICT = "contradicts"


def _opposite(claim_words: set[str], fact_words: set[str]) -> tuple[str, str] | None:
    """A word of the claim whose opposite the fact says instead ("hot" for "cold")."""
    for word in sorted(claim_words - fact_words):
        theirs = lx.OPPOSITES.get(word, frozenset()) & fact_words
        if theirs and not theirs & claim_words:
            return word, ", ".join(sorted(theirs))
    return None


def _substitute(
    claim: Claim, clause: Clause, fact_words: set[str], claim_words: set[str]
) -> tuple[str, str] | None:
    """A name of the claim in place of the fact's, all else equal ("us-east-1" for "eu-west-1")."""
    mine = {e for e in claim.union("entities") if not _in(e, fact_words)}
    theirs = {e for e in clause.entities if not _in(e, claim_words)}
    plain = claim_words - claim.union("entities") - {PERMISSION}
    if mine and theirs and all(_in(w, fact_words) for w in plain):
        return ", ".join(sorted(mine)), ", ".join(sorted(theirs))
    return None


def _permission_conflict(
    claim: Claim, clause: Clause, topic: float, share: float
) -> Relation | None:
    """Allowed/preferred against frozen/forbidden (a negation flips either); required
    against optional."""
    for c in claim.clauses:
        if c.obligation and clause.obligation and c.obligation != clause.obligation:
            mine = "required" if c.obligation > 0 else "optional"
            theirs = "required" if clause.obligation > 0 else "optional"
            why = f"the claim says {mine}; the fact says {theirs}"
            return Relation("contradicts", "permission", why, mine, theirs, topic)
        if c.polarity == clause.polarity or not (c.explicit or clause.explicit):
            continue
        if topic < PERMISSION_SUBJECT:
            continue
        if not (c.permission or clause.permission) and share < STATES:
            # a bare negation contradicts only the fact that states the rest: "there is no
            # man playing soccer" says nothing against "a man is playing the flute"
            continue
        mine = "allowed" if c.polarity > 0 else "not allowed"
        theirs = "allowed" if clause.polarity > 0 else "not allowed"
        return Relation(
            "contradicts",
            "permission",
            f"the claim says {mine}; the fact says {theirs}",
            mine,
            theirs,
            topic,
        )
    return None
