"""Reading a sentence into the slots ``validate`` compares: content words (lemmas), names
(entities) and the alternatives a sentence rejects, quantities with their units, versions,
times of day, dates, weekdays, parts of the day, and permission (allowed/preferred vs
frozen/forbidden, flipped by a negation).

A sentence is read clause by clause (split at ``;`` and sentence ends), so "access tokens
expire after 1 hour; refresh tokens after 30 days" keeps each number with its subject.
Words are lemmatised in the text's language (:mod:`memvault.language`); the closed word
classes come from :mod:`memvault.validate.lexicon`.
"""

from __future__ import annotations

from ..language import CYRILLIC, detect, normalise
from ..values import Record
from . import lexicon as lx
from .conditions import asked, governed, is_condition
from .roles import read_roles
from .slots import read_slots
from .words import IGNORED, Clause, Tok, clauses, month, tokens, weekday


class Claim(Record, frozen=True):
    text: str
    lang: str
    clauses: tuple[Clause, ...]

    def union(self, name: str) -> set[str]:
        out: set[str] = set()
        for clause in self.clauses:
            out |= getattr(clause, name)
        return out

    def sentences(self, name: str = "words") -> list[set[str]]:
        """Slot ``name`` of each sentence (its clauses split at ``;`` together), in order."""
        out: dict[int, set[str]] = {}
        for clause in self.clauses:
            out.setdefault(clause.sentence, set()).update(getattr(clause, name))
        return list(out.values())


def read(text: str, lang: str | None = None) -> Claim:
    """The slots of ``text`` (a statement or a fact), clause by clause."""
    text = normalise(text)
    lang = lang or detect(text)
    found: list[Clause] = []
    sentence = -1
    for part, starts_sentence, asks in clauses(tokens(text, lang)):
        sentence += starts_sentence or not found
        clause = _read_clause(part, lang, starts_sentence).replace(sentence=sentence)
        if asks:
            clause.hedges.add("question")
        found.append(clause)
    return Claim(text, lang, tuple(found))


def _read_clause(toks: list[Tok], lang: str, sentence_start: bool) -> Clause:
    clause = Clause()
    cyrillic_text = lang in ("ru", "uk")
    for i, tok in enumerate(toks):
        if tok.kind != "word":
            continue
        first = i == 0 and sentence_start
        upper_inside = any(c.isupper() for c in tok.raw[1:])
        has_digit = any(c.isdigit() for c in tok.raw)
        latin_in_cyrillic = cyrillic_text and not CYRILLIC.search(tok.raw)
        capitalised = tok.raw[:1].isupper() and not first and tok.raw != "I"
        if has_digit or upper_inside or latin_in_cyrillic or capitalised:
            tok.entity = weekday(tok.low, None) is None and month(tok.low) is None
    read_slots(toks, clause, lang)
    clause.subject = _subject(toks, lang)
    clause.roles = read_roles(toks, lang, lambda i: _predicate_starts(toks, i, lang))
    for i, tok in enumerate(toks):
        if tok.kind != "word":
            continue
        # (a word the slot readers took still hedges; "may" the month is a date, not a hedge)
        for table, found in ((lx.HEDGES, clause.hedges), (lx.ABSOLUTES, clause.absolutes)):
            concept = table.get(tok.low) or table.get(tok.lem)
            a_date = tok.used and tok.low in lx.EXACT_MONTHS
            if concept is not None and not a_date and not _negated_modal(toks, i, concept):
                found.add(concept)
        if is_condition(toks, i):
            clause.conditioned |= governed(toks, i)
        clause.asked |= asked(toks, i)
        if tok.used or _made_of(toks, i):
            continue
        if tok.entity:
            name = lx.ALIASES.get(tok.low, tok.low)
            clause.words.add(name)
            if name not in clause.rejected:
                clause.entities.add(name)
        elif tok.lem not in IGNORED and tok.low not in IGNORED and tok.low not in lx.ALL_NEGATIONS:
            clause.words.add(tok.lem)
        elif tok.low in lx.LIGHT_VERBS or tok.lem in lx.LIGHT_VERBS:
            clause.light.add(tok.base or tok.lem)
    return clause


_MADE_OF = {
    "made": ("of", "from"),
    **dict.fromkeys(("feito", "feita", "feitos", "feitas"), ("de", "do", "da", "dos", "das")),
}


def _made_of(toks: list[Tok], i: int) -> bool:
    """ "a bridge made of rope", "blocos feitos de madeira": what a thing is of, not a making
    nor a word of its own ("wooden blocks"); "the backup was made", "o backup foi feito"
    still say something was done."""
    nxt = toks[i + 1].low if i + 1 < len(toks) else ""
    return nxt in _MADE_OF.get(toks[i].low, ())


def _negated_modal(toks: list[Tok], i: int, concept: str) -> bool:
    """Whether the word at ``i`` is a negated or restricted modal ("не могут", "не можуть",
    "может только"): a prohibition, an inability or a rule, which says what does not happen
    -- not a hedge; or a negated "only" or "all" ("не только", "not all"), which is not
    absolute."""
    if concept in ("only", "all"):  # "not only", "не все": not absolute
        return i > 0 and toks[i - 1].low in lx.ALL_NEGATIONS
    if concept != "possible":
        return False
    near = [toks[j] for j in (i - 1, i + 1) if 0 <= j < len(toks)]
    return any(
        t.low in lx.ALL_NEGATIONS or t.low.endswith("n't") or lx.ABSOLUTES.get(t.low) == "only"
        for t in near
    )


def _predicate_starts(toks: list[Tok], i: int, lang: str) -> bool:
    """Does token ``i`` begin the predicate (an auxiliary, a value, a verb)?"""
    tok = toks[i]
    if tok.kind != "word":
        return tok.raw not in ("R$", "$")  # a number, a date, a dash
    if tok.low in lx.AUXILIARIES or tok.lem in lx.VERBS or tok.low in lx.VERBS:
        return True
    if tok.low in lx.FUNCTION_WORDS:  # "uma" is not the verb "umar"
        return False
    if CYRILLIC.search(tok.low):  # an inflected verb: its lemma is an infinitive
        return tok.base != tok.low and tok.base.endswith(("ть", "ти", "ться", "тися", "чь"))
    if lang == "pt":
        return tok.base != tok.low and tok.base.endswith(("ar", "er", "ir"))
    nxt = toks[i + 1] if i + 1 < len(toks) else None
    third_person = tok.low.endswith("s") and not tok.low.endswith("ss") and len(tok.low) > 3
    return (
        third_person
        and i > 0
        and nxt is not None
        and (nxt.low in lx.DETERMINERS or nxt.entity or nxt.kind == "num")
    )


def _subject(toks: list[Tok], lang: str) -> set[str]:
    """The content words of the clause's subject: before its predicate, and after "when"."""
    subject: set[str] = set()
    inside = True
    for i, tok in enumerate(toks):
        if tok.low in lx.SUBORDINATORS:
            inside = True
            continue
        if not inside:
            continue
        if _predicate_starts(toks, i, lang):
            inside = False
        elif tok.used:  # a weekday, a unit, a number word: a value, not the subject
            continue
        elif tok.entity:
            subject.add(lx.ALIASES.get(tok.low, tok.low))
        elif tok.lem not in IGNORED and tok.low not in IGNORED:
            subject.add(tok.lem)
    return subject
