"""Conditions: a sentence that says something holds under a condition ("if the cache is cold,
the build fails") does not say that it holds, nor that the condition is met.

:func:`governed` gives the words a condition of a clause governs; ``validate`` then does not
take the clause as stating a claim whose words all stand there, unless the claim sets a
condition of its own (:func:`memvault.validate.weigh.weigh`).

What is a condition, in the four languages:

* "if", "unless", "otherwise", "in case", "provided (that)", "as long as"; Portuguese "se",
  "caso", "senão", "em caso de", "contanto que"; Russian "если", "ежели", "иначе", "в случае",
  "при условии"; Ukrainian "якщо", "інакше", "у разі";
* but not a concession ("even if", "mesmo se", "даже если", "навіть якщо"), an indirect
  question ("we check if the cache is warm", "verificamos se"), a manner of speaking ("если
  честно", "если что", "якщо чесно"), a contrast ("если раньше ..., то теперь ..."), a default
  ("unless stated otherwise"), Portuguese "se" as a pronoun ("se reinicia", "reinicia-se") or
  "caso" as a noun ("o caso", "em todo caso").

What it governs is read from the clause's parts (cut at commas, colons, brackets, dashes and
line breaks): when the condition opens a part that other parts follow ("If X, Y"; "Y — if X,
Z": not Y), that part and the ones after, up to one that starts a relative clause ("..., which
is why we warm it") or a reason ("..., because Z") or a dash, colon or line break after the
consequent ("If X, Y — Z": not Z); when it opens the last part ("Y, if X"; "Y, but only if
X"), the parts up to its own; when it stands inside a part ("Y if X"), its part from the last
"and" before it, and the parts after ("backups run nightly and page the
on-call if they fail": not the running; "we never deploy on Fridays, because if a release
breaks, nobody is around": not the deploying).

An indirect question ("check if the disk is full") is read the same way by :func:`asked`: what
it asks is not said.
"""

from __future__ import annotations

import re

from . import lexicon as lx
from .lexicon import word_set
from .words import Tok, tokens, weekday

CONDITIONS = word_set("if unless otherwise если ежели иначе якщо інакше senão")
# Portuguese "se" / "caso": a condition at a clause's start, or before what starts one.
_PT_CONDITIONS = word_set("se caso")
_CLAUSE_STARTS = word_set(
    "o a os as um uma uns umas não ele ela eles elas você vocês eu nós houver for forem "
    "estiver estiverem tiver tiverem"
)
# Two words that make one condition, read at the second: "in case", "em caso (de)", ...
_PAIRS = frozenset(
    {
        ("in", "case"),
        ("provided", "that"),
        ("long", "as"),  # "as long as"
        ("em", "caso"),
        ("contanto", "que"),
        ("в", "случае"),
        ("при", "условии"),
        ("у", "разі"),
        ("в", "разі"),
    }
)
_CONCESSIVE = word_set("even as mesmo даже навіть matter independente independentemente")
# Conditions only where a clause opens: "Provided the tests pass, ..." ("he provided logs").
_OPENING = word_set("provided assuming")
# "Unless stated otherwise" is a default, not a condition.
_DEFAULTS = word_set("stated noted specified indicated")
# After these words a condition is something else: a manner of speaking, a contrast, a default.
_NOT_AFTER_IT = (
    word_set(
        "честно что коротко кратко серьезно серьёзно раньше прежде даже чесно що коротко "
        "серйозно раніше навіть only liga"
    )
    | _DEFAULTS
)
# Before a noun "caso" is "case": "o caso", "em todo caso", "neste caso".
_CASE_OWNERS = word_set(
    "todo toda qualquer nenhum cada este esse aquele neste nesse naquele último primeiro "
    "outro seu nosso meu"
)
# Lemmas after which "if" / "se" asks "whether".
_WHETHER = word_set(
    "check verify see ask know decide wonder test confirm determine "
    "verificar checar conferir saber perguntar ver testar confirmar"
)
# Words that, opening a part before its condition, leave it governing what came before.
_RESTRICTIVE = word_set("but only just mas só apenas но только лишь але лише тільки")
_AND = word_set("and e и і та")
# A part that gives a reason ("..., because we must register") says it as so: no condition
# before it governs it, as none governs a relative clause.
_BECAUSE = word_set("because since поскольку потому ибо оскільки бо porque pois")
# A statement with its own "when" sets a condition of its own.
WHEN = re.compile(r"\b(?:when|whenever|quando|когда|коли)\b", re.IGNORECASE)


def is_condition(toks: list[Tok], i: int) -> bool:
    """Whether the word at ``i`` makes (part of) its clause conditional."""
    low = toks[i].low
    prev = toks[i - 1].low if i else ""
    after = toks[i + 1].low if i + 1 < len(toks) else ""
    if prev in _CONCESSIVE or prev in _DEFAULTS or after in _NOT_AFTER_IT:
        return False
    if (prev, low) in _PAIRS:
        return True
    opens = i == 0 or toks[i].after_comma or toks[i].after_break
    if low in _OPENING:
        return opens
    if low in CONDITIONS:
        return not (low == "if" and _asks(toks, i))
    if low not in _PT_CONDITIONS or _asks(toks, i):
        return False
    if low == "caso" and (prev in _CASE_OWNERS or (prev in lx.FUNCTION_WORDS and not opens)):
        return False
    return opens or after in _CLAUSE_STARTS


def _asks(toks: list[Tok], i: int) -> bool:
    """Whether "if" / "se" at ``i`` follows a verb of asking or checking, so it means
    "whether" ("we check if", "verificamos se"; not "sabemos que se": "que" comes between)."""
    for j in range(i - 1, max(-1, i - 4), -1):
        if toks[j].low in ("que", "that"):
            return False
        if toks[j].lem in _WHETHER or toks[j].low in _WHETHER:
            return True
    return False


def governed(toks: list[Tok], i: int) -> set[str]:
    """The words (lemmas, forms and names) the condition at ``i`` governs (module doc)."""
    starts = [0] + [j for j in range(1, len(toks)) if _part_starts(toks, j)] + [len(toks)]
    c = max(k for k in range(len(starts) - 1) if starts[k] <= i)
    lead = toks[starts[c] : i]
    last = c + 2 == len(starts)
    # the scope ends at a dash, a colon or a line break after the part that follows its own
    # ("If X, Y — Z", "If X, Y\nZ": not Z; "If X: Y" still governs Y)
    stop = next((j for j in range(starts[c + 1] + 1, len(toks)) if _hard(toks, j)), len(toks))
    stop = min([s for s in starts[c + 1 : -1] if toks[s].low in _BECAUSE] + [stop])
    if all(t.low in _RESTRICTIVE for t in lead) and c and last:  # "Y, if X"; "Y, but only if X"
        scope = toks[: starts[c + 1]]
    elif not lead:  # "If X, Y" (up to a relative clause); "Y: if X, Z" governs Z
        ends = [s for s in starts[c + 1 : -1] if toks[s].low in lx.RELATIVE_WORDS]
        scope = toks[starts[c] : min(ends[0] if ends else stop, stop)]
    else:  # "Y if X": from the last "and" before it
        ands = [j for j in range(starts[c], i) if toks[j].low in _AND]
        scope = toks[(ands[-1] + 1 if ands else starts[c]) : stop]
    return _forms(scope)


def asked(toks: list[Tok], i: int) -> set[str]:
    """The words of the indirect question "if" / "se" at ``i`` opens ("check if the disk is
    full before restarting": the disk being full is asked, not said), to the end of its part;
    empty when it opens none."""
    if toks[i].low not in ("if", "se") or not _asks(toks, i):
        return set()
    end = next((j for j in range(i + 1, len(toks)) if _part_starts(toks, j)), len(toks))
    return _forms(toks[i:end])


def _forms(scope: list[Tok]) -> set[str]:
    return {w for t in scope for w in (t.lem, t.low, lx.ALIASES.get(t.low, t.low))}


def _part_starts(toks: list[Tok], j: int) -> bool:
    return toks[j].after_comma or _hard(toks, j)


def _hard(toks: list[Tok], j: int) -> bool:
    return toks[j].after_break or toks[j - 1].raw in ("—", "–")


def valued_words(text: str, lang: str) -> set[str]:
    """The words of ``text`` that carry values -- numbers, times, dates, weekdays -- as the
    tokens read them (a claim's content words leave them out)."""
    return {
        t.low
        for t in tokens(text, lang)
        if t.kind in ("num", "clock", "iso") or weekday(t.low, None) is not None
    }
