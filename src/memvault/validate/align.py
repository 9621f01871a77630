"""Word alignment by meaning: a content word of the statement that the fact does not hold
(by form, lemma or list) is matched to the fact's word nearest in meaning, by the vault
embedder's cosine of the two single words ("lawn" for "grass", "strumming" for "playing").

:func:`memvault.validate.weigh.weigh` asks for an alignment only where the rules would
answer "related" because words are missing; the statement is then read again with each
aligned word replaced by its fact word (in its words, subject and roles) and weighed by
the same rules, so every check that decides before support -- numbers, names, negation,
opposites, roles, the one-sentence rule -- still decides: "the lady is not lifting the
kangaroo" read as "the woman is not picking up the kangaroo" is still a negation, and
"the kangaroo is lifting the lady" still a role swap.

Words are never aligned to a listed opposite ("cold" to "hot"), to the same stem behind
another prefix ("enabled" / "disabled", "bicicleta" / "motocicleta") nor to another kind of
the same thing ("woman" to "man", "cat" to "dog": :data:`lexicon.KINDS` siblings), whose
vectors are close although they name different things. Names, numbers and values are not
words here: they must match as they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import lexicon as lx

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ..embeddings.base import Embedder

# The cosine of two single words, scaled so the embedder's "unrelated" floor is 0 (as the
# sentence similarity is), above which a word of the statement may stand for a fact word.
# Chosen on the public sets' tune splits (docs/validate.md): MiniLM's word cosines spread
# from 0, e5's crowd above its floor, so each family has its own.
WORD_ALIGN = 0.65
WORD_ALIGN_BY_FAMILY = {"e5": 0.70}
# The languages whose statements are aligned: those whose roles are read (word order
# carries them), so a swap of aligned words is still caught. In Russian (TERRa) aligned
# words made false "supported" at every threshold: e5 puts a verb near its outcome or its
# noun ("убить"/"умереть", "помочь"/"помощь"), which is what its hypotheses change.
LANGUAGES = ("en", "pt")
# At most this many words of a statement may be aligned: a statement that needs two says
# something else more often than not (docs/validate.md, the tune splits).
MAX_ALIGNED = 1

# Word vectors, by embedder identity and word: statements and facts reuse a small
# vocabulary, and a single word costs as much to embed as a sentence.
_CACHE: dict[tuple[str, str], np.ndarray] = {}
_CACHE_MAX = 200_000


def threshold_for(embedder: Embedder) -> float:
    identity = str(getattr(embedder, "identity", ""))
    for family, value in WORD_ALIGN_BY_FAMILY.items():
        if family in identity.lower():
            return value
    return WORD_ALIGN


class Aligner:
    """Aligns the statement's missing words to a fact's words with one embedder's single-word
    cosines (scaled by its ``similarity_floor``); ``threshold`` is the least scaled cosine
    that aligns."""

    def __init__(
        self, embedder: Embedder, threshold: float | None = None, most: int = MAX_ALIGNED
    ) -> None:
        self.embedder = embedder
        self.most = most
        self.identity = str(getattr(embedder, "identity", repr(embedder)))
        self.floor = float(getattr(embedder, "similarity_floor", 0.0))
        self.threshold = threshold_for(embedder) if threshold is None else threshold

    def vectors(self, words: set[str]) -> dict[str, np.ndarray]:
        new = sorted(w for w in words if (self.identity, w) not in _CACHE)
        if new:
            if len(_CACHE) + len(new) > _CACHE_MAX:
                _CACHE.clear()
            for word, row in zip(new, self.embedder.embed_documents(new), strict=True):
                _CACHE[(self.identity, word)] = row
        return {w: _CACHE[(self.identity, w)] for w in words}

    def similarity(self, a: str, b: str) -> float:
        """The two words' cosine, scaled so the floor is 0 and identical words 1."""
        v = self.vectors({a, b})
        cosine = float(v[a] @ v[b])
        return (cosine - self.floor) / max(1e-6, 1.0 - self.floor)

    def align(self, missing: set[str], candidates: set[str]) -> dict[str, str]:
        """Each missing word to its nearest candidate at or above the threshold, one
        candidate per word (the closest pairs first); words of one kind or opposites never
        pair."""
        pool = {c for c in candidates if c}
        words = {w for w in missing if w}
        if not pool or not words or len(words) > self.most:
            return {}
        vec = self.vectors(words | pool)
        scored = sorted(
            (
                ((float(vec[w] @ vec[c]) - self.floor) / max(1e-6, 1.0 - self.floor), w, c)
                for w in words
                for c in pool
                if allowed(w, c)
            ),
            reverse=True,
        )
        out: dict[str, str] = {}
        used: set[str] = set()
        for score, word, cand in scored:
            if score < self.threshold:
                break
            if word in out or cand in used:
                continue
            out[word] = cand
            used.add(cand)
        return out


def _kind_of() -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for general, kinds in lx.KINDS.items():
        for kind in kinds:
            out.setdefault(kind, set()).add(general)
    return {k: frozenset(v) for k, v in out.items()}


_KIND_OF = _kind_of()  # word -> the general words it is a kind of


def derived(word: str, other: str) -> bool:
    """One word made from the other ("muddy"/"mud", "rider"/"ride", "excitement"/
    "exciting"): another word class, so another role in the sentence ("a muddy field" is
    not "the mud on a field"); the rules' own forms (:func:`weigh.near`) are matched before."""
    if word in other or other in word:
        return True
    if _prefix_variants(word, other):
        return True
    n = 0
    for x, y in zip(word, other, strict=False):
        if x != y:
            break
        n += 1
    return n >= 5


def _prefix_variants(word: str, other: str) -> bool:
    """The same stem after another short prefix ("enable"/"disable", "import"/"export",
    "upload"/"download", "increase"/"decrease"): a prefix that changes the direction or
    the sign, never the same thing said in other words."""
    n = 0
    for x, y in zip(reversed(word), reversed(other), strict=False):
        if x != y:
            break
        n += 1
    if n < 4 or len(word) - n > 4 or len(other) - n > 4:
        return False
    return not _one_edit(word[: len(word) - n], other[: len(other) - n])


def _one_edit(a: str, b: str) -> bool:
    """One letter changed, added or dropped: a spelling ("inquire" / "enquire", "fenómeno" /
    "fenômeno", "ótimo" / "óptimo"), not another prefix."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) <= 1
    short, long = sorted((a, b), key=len)
    return any(long[:k] + long[k + 1 :] == short for k in range(len(long)))


def allowed(word: str, other: str) -> bool:
    """May ``word`` stand for ``other``? Not an opposite, not a word made from the other,
    nor another kind of one thing."""
    if other in lx.OPPOSITES.get(word, frozenset()) or derived(word, other):
        return False
    shared = _KIND_OF.get(word, frozenset()) & _KIND_OF.get(other, frozenset())
    return not (shared - {word, other})
