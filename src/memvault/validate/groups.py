"""How many of a kind a sentence names one by one: "a man and two girls are walking" names
three people, "um homem, duas mulheres e duas meninas" five. A statement's count of the
general word ("three people are walking") is stated by that sum, where no single count of
the fact says it (:func:`memvault.validate.weigh.weigh`; "two girls" alone is not three
people).

Only a general word of :data:`lexicon.KINDS` is counted this way ("people", "pessoas",
"animals"): "two engineers and a designer" are not three engineers. Members are read from the
tokens: a count ("two", "duas", "2"; "a", "an", "um", "uma" are one; a number written with a
separator is left alone), at most :data:`BETWEEN` words that are no noun of the kinds list
(an adjective), then a noun that is one of the general word's kinds; the members are joined
by "and" / "e" or a comma. A noun named without a count ("men and women") leaves the sum
unknown.
"""

from __future__ import annotations

from functools import lru_cache

from . import lexicon as lx
from .words import Tok, tokens

# Words that name one of something, beyond the number words ("a man", "an officer").
ONE = frozenset({"a", "an"})
# Words that join the members of a group.
AND = frozenset({"and", "e", "и", "і", "та"})
# Words that may stand between a count and its noun ("two young girls", "a tall man").
BETWEEN = 2


def _count(tok: Tok) -> float | None:
    if tok.kind == "num":
        # "1.000" is a thousand in Portuguese, "1,000" in English: a count of a group is small
        return float(tok.raw) if tok.raw.isdigit() else None
    if tok.kind != "word":
        return None
    return 1.0 if tok.low in ONE else lx.NUMBER_WORDS.get(tok.low)


def _member(toks: list[Tok], i: int, kinds: frozenset[str]) -> tuple[float, int] | None:
    """The count and the index after the noun of a member starting at ``i``, if one does."""
    value = _count(toks[i])
    if value is None:
        return None
    for j in range(i + 1, min(i + 2 + BETWEEN, len(toks))):
        tok = toks[j]
        if tok.lem in kinds:
            return value, j + 1
        if tok.kind != "word" or tok.low in AND or tok.lem in lx.KIND_NOUNS or tok.after_comma:
            return None
    return None


def kinds_of(nouns: frozenset[str]) -> frozenset[str]:
    """The general words among ``nouns`` and every word of their kinds (empty when none of
    them is a general word of :data:`lexicon.KINDS`)."""
    general = [n for n in nouns if lx.KINDS.get(n)]
    return frozenset(general).union(*(lx.KINDS[n] for n in general))


@lru_cache(maxsize=4096)
def group_total(text: str, lang: str, nouns: frozenset[str]) -> float | None:
    """The sum of the counts of one group of two or more members in ``text`` whose nouns are
    among ``nouns`` or their kinds (the first such group), else None."""
    kinds = kinds_of(nouns)
    if not kinds:
        return None
    toks = tokens(text, lang)
    i = 0
    while i < len(toks):
        total, members, at = 0.0, 0, i
        while at < len(toks):
            found = _member(toks, at, kinds)
            if found is None:
                break
            total, members, at = total + found[0], members + 1, found[1]
            if at < len(toks) and toks[at].low in AND:
                at += 1
            elif not (at < len(toks) and toks[at].after_comma):
                break
        if members >= 2:
            return total
        i += 1
    return None
