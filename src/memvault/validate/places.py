"""Directions and places a statement and a fact turn around: "going up" is not "going down",
"under the bed" is not "on the bed", "under 2 GB" is not "over 2 GB". The words are function
words elsewhere (so the word rules do not see them); :mod:`memvault.validate.weigh` asks these
before it lets a fact state a claim.
"""

from __future__ import annotations

import re

from . import lexicon as lx


def direction_clash(claim_text: str, fact_text: str) -> tuple[str, str] | None:
    """A direction of the claim ("up", "into", "off") that the fact turns the other way
    ("down", "out", "on") and does not say itself: the words match, the meaning does not."""
    mine = set(_WORD.findall(claim_text.lower())) & lx.DIRECTIONS.keys()
    theirs = set(_WORD.findall(fact_text.lower())) & lx.DIRECTIONS.keys()
    for word in sorted(mine - theirs):
        other = lx.DIRECTIONS[word] & theirs
        if other and not lx.DIRECTIONS[word] & mine:
            return word, ", ".join(sorted(other))
    return None


_WORD = re.compile(r"\w+")


def place_clash(claim_text: str, fact_text: str) -> tuple[str, str] | None:
    """A place or bound of the claim ("under") that the fact turns around ("on", "over") for
    the same thing -- the content word after each is one -- and does not say the claim's way
    for it ("below"): "under the bed" / "on the bed", "under 2 GB" / "over 2 GB", but not
    "under 5 seconds" / "below 5 seconds on weekdays", nor "live under the folder" / "live
    on Grafana"."""
    mine = _WORD.findall(claim_text.lower())
    theirs = _WORD.findall(fact_text.lower())
    for i, word in enumerate(mine):
        side = lx.PLACE_SIDES.get(word)
        if side is None:
            continue
        what = _object(mine, i)
        placed = [j for j, w in enumerate(theirs) if _object(theirs, j) == what]
        if what is None or any(theirs[j] in side for j in placed):
            continue
        for j in placed:
            if theirs[j] in lx.PLACES[word]:
                return word, theirs[j]
    return None


def _object(words: list[str], i: int) -> str | None:
    """The first content word after ``words[i]``: what a place or bound is of."""
    j = i + 1
    while j < len(words) and words[j] in lx.FUNCTION_WORDS:
        j += 1
    return words[j] if j < len(words) else None
