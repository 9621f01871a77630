"""Who does what: a clause's roles, so "the woman is picking up the kangaroo" does not state
"the kangaroo is picking up the woman".

A clause of an English or Portuguese sentence (subject-verb-object languages, where word order
carries the roles) is read into units of agent and patient: the phrase before the predicate and
the one after it, each with its head (the last word of its first run of content words: "a
*man* with a jersey", "a big green *ball*"). Passives swap them back ("a shirt is being worn
by a man": the man wears it), a relative or participle clause is a unit of its own whose agent
is the noun it follows ("a boy *who is hitting* a ball", "a man *wearing* a hat"), and "and"
before a new subject starts a new unit. Russian and Ukrainian order their words freely: no
roles are read there, and the rule that uses them says nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from ..values import Record, field
from . import lexicon as lx
from .words import IGNORED, Tok


def _w(text: str) -> frozenset[str]:
    return frozenset(text.split())


ROLE_LANGUAGES = ("en", "pt")
_RELATIVES = {"en": _w("who which whose"), "pt": _w("que quem")}
_BY = {"en": _w("by"), "pt": _w("por pelo pela pelos pelas")}
_AND = {"en": _w("and or"), "pt": _w("e ou")}
_BE = {
    "en": _w("is are was were be been being"),
    "pt": _w("é são foi foram está estão estava estavam sendo sido ser"),
}
_BEING = _w("being been sendo sido")  # the next word is a participle: a passive
# Words that open a new subject after "and": "... and *a* man is looking".
_OPENERS = {
    "en": _w("a an the some one two three four five several many there his her their"),
    "pt": _w("um uma o a os as uns umas dois duas três alguns algumas há"),
}
# Prepositions the stopword lists lack: they end a phrase, they are not its head.
_PREPOSITIONS = _w(
    "near behind beside across along toward towards around inside outside between among "
    "underneath beneath below above past onto upon off perto atrás dentro fora sobre sob "
    "entre junto diante"
)
# Endings of English irregular participles whose lemma differs ("worn", "sold", "caught").
_IRREGULAR = ("en", "wn", "rn", "ne", "ld", "ght", "ung", "uck", "ot", "lt", "pt", "id", "nk")


class Phrase(Record):
    words: list[str] = field(default_factory=list)
    head: str | None = None
    run: list[str] = field(default_factory=list)

    def add(self, word: str) -> None:
        self.words.append(word)
        if self.head is None:
            self.run.append(word)

    def stop(self) -> None:
        """A preposition or the like: the first run of content words (the head's) is over."""
        if self.head is None and self.run:
            self.head = self.run[-1]

    def done(self) -> tuple[frozenset[str], str | None]:
        self.stop()
        return frozenset(self.words), self.head


class Role(Record, frozen=True):
    agent: frozenset[str]
    patient: frozenset[str]
    agent_head: str | None
    patient_head: str | None
    relative: bool = False  # a relative clause's: its agent is a noun the clause describes
    verbs: frozenset[str] = frozenset()  # the verbs' lemmas ("play" of "is playing")
    # active | passive | copula ("is a guitar player") | light (a verb of lexicon.VERBS:
    # "runs on", "is powered by" say where, not who does what to whom)
    kind: str = "active"

    @property
    def acts(self) -> bool:
        """Does the unit say who does what to whom (an active verb, a passive's "by")?"""
        return self.kind == "active" or self.kind == "passive" and self.agent_head is not None


def verb_form(tok: Tok, lang: str) -> bool:
    """A participle or gerund ("wearing", "worn", "vestindo", "usado")."""
    low = tok.low
    if lang == "en":
        irregular = tok.base != low and not low.endswith("s")
        return low.endswith(("ing", "ed")) or irregular and low.endswith(_IRREGULAR)
    return low.endswith(("ndo", "ado", "ada", "ados", "adas", "ido", "ida", "idos", "idas"))


def _content(tok: Tok) -> str | None:
    if tok.kind != "word" or tok.used and not tok.entity or tok.low in _PREPOSITIONS:
        return None
    if tok.entity:
        return lx.ALIASES.get(tok.low, tok.low)
    if tok.lem in IGNORED or tok.low in IGNORED or tok.low in lx.ALL_NEGATIONS:
        return None
    return tok.lem


class _Reader:
    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.units: list[Role] = []
        self.agent, self.patient, self.by = Phrase(), Phrase(), Phrase()
        self.passive = self.after_by = self.relative = False
        self.kind = ""
        self.verbs: set[str] = set()

    def close(self) -> None:
        subject, subject_head = self.agent.done()
        rest, rest_head = self.patient.done()
        by, by_head = self.by.done()
        kind, verbs = self.kind, frozenset(self.verbs)
        if kind == "active" and self.passive:
            kind = "passive"
        if not kind:  # no predicate was found: the roles are not known
            pass
        elif self.passive:
            self.units.append(
                Role(by, subject | rest, by_head, subject_head, self.relative, verbs, kind)
            )
        elif subject or rest:
            self.units.append(
                Role(subject, rest, subject_head, rest_head, self.relative, verbs, kind)
            )
        self.agent, self.patient, self.by = Phrase(), Phrase(), Phrase()
        self.passive = self.after_by = self.relative = False
        self.kind = ""
        self.verbs = set()

    def predicate(self, toks: list[Tok], i: int, word: str | None) -> None:
        """Token ``i``, after the predicate began: a passive, its "by", an object, a verb."""
        tok, lang = toks[i], self.lang
        low = tok.low
        if low in _BE[lang] and _passive_ahead(toks, i, lang):
            self.passive = True
            if self.kind in ("active", "copula"):
                self.kind = _kind_at(toks, i, lang)
        elif self.passive and low in _BY[lang] and _agent_follows(toks, i, lang):
            self.patient.stop()
            self.after_by = True
        elif word is not None and not verb_form(tok, lang):
            (self.by if self.after_by else self.patient).add(word)
        elif verb_form(tok, lang) and not self.after_by:
            self.verbs.add(tok.lem)
        elif word is None and low not in _AND[lang]:
            (self.by if self.after_by else self.patient).stop()


def read_roles(toks: list[Tok], lang: str, starts: Callable[[int], bool]) -> tuple[Role, ...]:
    """The clause's units; ``starts(i)``: does token ``i`` begin the predicate (an auxiliary,
    a verb, a value)?"""
    if lang not in ROLE_LANGUAGES:
        return ()
    r = _Reader(lang)
    head: Phrase | None = None  # the main subject while a participle clause is read
    in_subject, existential, skip = True, False, -1
    for i, tok in enumerate(toks):
        low = tok.low
        nxt = toks[i + 1].low if i + 1 < len(toks) else ""
        if i == skip:
            continue
        # "there is a man playing", "há" / "tem um cara brincando" (Brazilian "tem" opens a
        # sentence as "there is"; later it is "has"): the man plays
        if (low in ("there", "há") or low == "tem" and i == 0) and in_subject:
            skip, existential = (i + 1 if nxt in _BE[lang] else -1), True
            continue
        opener = nxt in _OPENERS[lang] or (i + 1 < len(toks) and toks[i + 1].entity)
        if low in _AND[lang] and (not in_subject or head) and opener:
            r.close()
            in_subject, head = True, None
            continue
        if low in _RELATIVES[lang] and in_subject and r.agent.words and head is None:
            # "a woman, who is seated, is singing": the relative clause is read as a
            # participle's, the main predicate follows
            head = Phrase(list(r.agent.words), r.agent.head, list(r.agent.run))
            r.agent.stop()
            continue
        if low in _RELATIVES[lang] and not in_subject:
            last = _last_phrase(toks, i)
            r.close()
            for noun in last:
                r.agent.add(noun)
            in_subject = r.relative = True
            continue
        word = _content(tok)
        if in_subject:
            if starts(i):
                in_subject = False
                if head is not None:  # the participle clause ends; the main predicate follows
                    r.close()
                    r.agent, head = head, None
                r.kind = _kind_at(toks, i, lang)
                if _verb(tok, lang):  # "a man *plays* the guitar"
                    r.verbs.add(tok.lem)
                r.passive = (
                    r.kind == "passive" or low in _BE[lang] and _passive_ahead(toks, i, lang)
                )
            elif word is not None and r.agent.words and verb_form(tok, lang):
                r.verbs.add(tok.lem)
                if existential or not any(starts(j) for j in range(i + 1, len(toks))):
                    # "there is a man playing", "Bob led the migration": the main verb
                    in_subject = existential = False
                    r.kind = _verb_kind(tok)
                elif existential:
                    in_subject = existential = False
                    r.kind = _verb_kind(tok)
                elif head is None:  # "a man *wearing* a hat is sitting"
                    r.kind = _verb_kind(tok)
                    if not low.endswith(("ing", "ndo")):  # "the invoices *issued*": passive
                        r.kind, r.passive = "passive", True
                    head = Phrase(list(r.agent.words), r.agent.head, list(r.agent.run))
                    r.agent.stop()
            elif word is not None:
                (r.patient if head is not None else r.agent).add(word)
            elif r.agent.words and low not in _AND[lang]:
                (r.patient if head is not None else r.agent).stop()
            continue
        r.predicate(toks, i, word)
    if head is not None:
        r.close()
        r.agent = head
    r.close()
    return tuple(r.units)


def _verb(tok: Tok, lang: str) -> bool:
    """Is this predicate's first word its verb (not an auxiliary, a negation, a value)?"""
    low = tok.low
    skip = low in _BE[lang] or low in lx.AUXILIARIES or low in lx.ALL_NEGATIONS
    return tok.kind == "word" and not skip and not tok.used and not low.endswith("n't")


def _verb_kind(tok: Tok) -> str:
    return "light" if tok.lem in lx.VERBS or tok.base in lx.VERBS else "active"


def _kind_at(toks: list[Tok], i: int, lang: str) -> str:
    """The kind of the predicate that starts at ``i`` (see :class:`Role`)."""
    be = False
    for j in range(i, min(i + 5, len(toks))):
        tok = toks[j]
        if tok.low in _BE[lang]:
            be = True
            if _passive_ahead(toks, j, lang):
                participle = next((t for t in toks[j + 1 : j + 5] if t.low not in _BE[lang]), tok)
                return "light" if _verb_kind(participle) == "light" else "passive"
            continue
        skip = tok.low in lx.AUXILIARIES or tok.low in lx.ALL_NEGATIONS
        if skip or tok.low.endswith(("ly", "mente")) or tok.low.endswith("n't"):
            continue
        if tok.kind != "word":
            return "copula"
        if be and not tok.low.endswith(("ing", "ndo")):
            return "copula"
        if j > i and verb_form(tok, lang) and not tok.low.endswith(("ing", "ndo")):
            return "passive"  # "ficam arquivadas", "must stay locked": no one does it here
        return _verb_kind(tok)
    return "copula" if be else ""


def _agent_follows(toks: list[Tok], i: int, lang: str) -> bool:
    """Is the "by" at ``i`` a passive's agent? Portuguese "por" is also "for" ("por 5 anos",
    "por exigência legal"): an agent there takes an article ("por uma senhora")."""
    if lang != "pt" or toks[i].low != "por":
        return True
    return i + 1 < len(toks) and toks[i + 1].low in _OPENERS[lang]


def _passive_ahead(toks: list[Tok], i: int, lang: str) -> bool:
    """Is the "be" at ``i`` a passive's ("is being cut", "was worn", "foi escrito")?"""
    after_being = False
    for j in range(i, min(i + 4, len(toks))):
        tok = toks[j]
        if tok.low in _BE[lang] or tok.low.endswith(("ly", "mente")):  # "is abruptly knocked"
            after_being = after_being or tok.low in _BEING
            continue
        if after_being:
            return True
        if tok.low.endswith(("ing", "ndo")):
            return False
        nxt = toks[j + 1].low if j + 1 < len(toks) else ""
        return after_being or verb_form(tok, lang) or nxt in _BY[lang]
    return False


def _last_phrase(toks: list[Tok], i: int) -> list[str]:
    """The content words right before ``toks[i]``: the noun a relative clause follows."""
    out: list[str] = []
    for tok in reversed(toks[:i]):
        word = _content(tok)
        if word is None:
            if out:
                break
            continue
        out.append(word)
    return out[::-1]
