"""How many of a kind a sentence names one by one: "a man and two girls are walking" names
three people, "um homem, duas mulheres e duas meninas" five. A statement's count of the
general word ("three people are walking") is stated by that sum, where no single count of
the fact says it (:func:`memvault.validate.weigh.weigh`; "two girls" alone is not three
people).

Members are read from the tokens: a count ("two", "duas", "2"; "a", "an", "um", "uma" are one),
at most :data:`BETWEEN` words (an adjective), then a noun that is a kind of the general word
(:data:`lexicon.KINDS`); the members are joined by "and" / "e" or a comma. A noun named
without a count ("men and women") leaves the sum unknown.
"""

from __future__ import annotations

from collections.abc import Callable

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
        try:
            return float(tok.raw)
        except ValueError:
            return None
    if tok.kind != "word":
        return None
    return 1.0 if tok.low in ONE else lx.NUMBER_WORDS.get(tok.low)


def _member(toks: list[Tok], i: int, is_kind: Callable[[str], bool]) -> tuple[float, int] | None:
    """The count and the index after the noun of a member starting at ``i``, if one does."""
    value = _count(toks[i])
    if value is None:
        return None
    for j in range(i + 1, min(i + 2 + BETWEEN, len(toks))):
        tok = toks[j]
        if tok.kind != "word" or tok.low in AND or (j > i + 1 and tok.after_comma):
            return None
        if is_kind(tok.lem):
            return value, j + 1
    return None


def group_total(text: str, lang: str, is_kind: Callable[[str], bool]) -> float | None:
    """The sum of the counts of one group of two or more members in ``text`` whose nouns
    satisfy ``is_kind`` (the first such group), else None."""
    toks = tokens(text, lang)
    i = 0
    while i < len(toks):
        total, members, at = 0.0, 0, i
        while at < len(toks):
            found = _member(toks, at, is_kind)
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
