"""Filling a clause's slots from its tokens: times and dates, versions, quantities with
their units, permission and negation, and the alternatives a clause rejects ("PostgreSQL
over MySQL", "instead of", "replaced webpack with Vite", "а не", "замість").

Every reader marks the tokens it consumed (``used``), so a unit, a weekday or "instead"
is not also counted as a content word.
"""

from __future__ import annotations

from . import lexicon as lx
from .words import (
    IGNORED,
    PERMISSION,
    Clause,
    Quantity,
    Tok,
    month,
    parse_number,
    polarity_of,
    weekday,
)


def read_slots(toks: list[Tok], clause: Clause, lang: str) -> None:
    """Fill ``clause`` from ``toks`` (one clause's tokens, entities already marked)."""
    _times(toks, clause, lang)
    _weekday_ranges(toks, clause, lang)
    _dates(toks, clause)
    _versions(toks, clause, lang)
    _quantities(toks, clause, lang)
    _permission(toks, clause, lang)
    _rejections(toks, clause)


def _word(toks: list[Tok], i: int) -> str:
    return toks[i].low if 0 <= i < len(toks) else ""


def _times(toks: list[Tok], clause: Clause, lang: str) -> None:
    """Times of day, weekdays, the weekend, parts of the day."""
    for i, tok in enumerate(toks):
        if tok.kind == "clock":
            hours, _, minutes = tok.low.partition("h")
            clause.clocks.add(int(hours) * 60 + int(minutes or 0))
            tok.used = True
        elif tok.kind == "num" and ":" in tok.raw:
            parts = tok.raw.split(":")
            if len(parts) == 2 and int(parts[0]) < 24 and int(parts[1]) < 60:
                clause.clocks.add(int(parts[0]) * 60 + int(parts[1]))
                tok.used = True
        elif tok.kind == "num" and _word(toks, i + 1) in ("am", "pm", "a.m", "p.m"):
            value = parse_number(tok.raw, lang)
            if value is not None and value <= 12:
                clause.clocks.add(
                    int(value % 12 + (12 if _word(toks, i + 1)[0] == "p" else 0)) * 60
                )
                tok.used = toks[i + 1].used = True
        elif tok.kind == "word" and not tok.used:
            day = weekday(tok.low, _word(toks, i - 1))
            if day is not None and not tok.entity:
                clause.weekdays.add(day)
                tok.used = True
            elif tok.low in lx.WEEKEND or tok.lem in lx.WEEKEND:
                clause.weekdays |= {"sat", "sun"}
                tok.used = True
            elif tok.low in lx.WORKDAYS:
                clause.weekdays |= {"mon", "tue", "wed", "thu", "fri"}
                tok.used = True
            elif tok.low in lx.PARTS_OF_DAY:
                clause.parts.add(lx.PARTS_OF_DAY[tok.low])
                tok.used = True
            elif tok.low == "fim" and _word(toks, i + 1) == "de" and _word(toks, i + 2) == "semana":
                clause.weekdays |= {"sat", "sun"}
                for t in toks[i : i + 3]:
                    t.used = True


def _weekday_ranges(toks: list[Tok], clause: Clause, lang: str) -> None:
    """ "from Monday to Friday", "de segunda a sexta", "с понедельника по пятницу"."""
    for i in range(len(toks) - 2):
        first = weekday(toks[i].low, None)
        last = weekday(toks[i + 2].low, None)
        if first and last and toks[i + 1].low in lx.RANGE_TO:
            a, b = lx.WEEKDAYS.index(first), lx.WEEKDAYS.index(last)
            span = range(a, b + 1) if a <= b else [*range(a, 7), *range(0, b + 1)]
            clause.weekdays |= {lx.WEEKDAYS[d] for d in span}


def _small_int(tok: Tok | None, top: int) -> int | None:
    if tok is None or tok.kind != "num" or tok.used or not tok.raw.isdigit():
        return None
    value = int(tok.raw)
    return value if 1 <= value <= top else None


def _dates(toks: list[Tok], clause: Clause) -> None:
    """ISO dates, "20 December", "December 20, 2024", "20 de dezembro", "March 2024", years."""

    def at(j: int) -> Tok | None:
        return toks[j] if 0 <= j < len(toks) else None

    for i, tok in enumerate(toks):
        if tok.kind == "iso":
            y, m, *d = (int(p) for p in tok.raw.split("-"))
            clause.dates.add((y, m, d[0] if d else None))
            tok.used = True
            continue
        if tok.kind != "word" or tok.used:
            continue
        number = month(tok.low)
        if number is None:
            continue
        before = at(i - 2) if _word(toks, i - 1) in ("de", "of") else at(i - 1)
        day_tok = (
            before if _small_int(before, 31) else at(i + 1) if _small_int(at(i + 1), 31) else None
        )
        j = i + 2 if day_tok is at(i + 1) and day_tok is not None else i + 1
        if _word(toks, j) in ("de", ","):
            j += 1
        year_tok = at(j) if _small_int(at(j), 2100) and int(toks[j].raw) >= 1900 else None
        capital_month = tok.raw[:1].isupper() and tok.low not in ("may", "mar")
        if day_tok is None and year_tok is None and not capital_month:
            continue
        clause.dates.add(
            (
                int(year_tok.raw) if year_tok else None,
                number,
                int(day_tok.raw) if day_tok else None,
            )
        )
        for t in (tok, day_tok, year_tok):
            if t is not None:
                t.used = True
    for tok in toks:  # a year on its own: "in 2024"
        if _small_int(tok, 2100) and int(tok.raw) >= 1990:
            clause.dates.add((int(tok.raw), None, None))
            tok.used = True


def _versions(toks: list[Tok], clause: Clause, lang: str) -> None:
    """ "Python 3.12", "version 1.29", "версии 1.27": a version, keyed by what it is of."""
    for i, tok in enumerate(toks):
        if tok.kind != "num" or tok.used:
            continue
        prev = toks[i - 1] if i > 0 else None
        after_word = prev is not None and prev.low in lx.VERSION_WORDS
        after_name = prev is not None and prev.entity
        dotted = "." in tok.raw and not (lang != "en" and "," in tok.raw)
        if not (after_word or (after_name and dotted)):
            continue
        key = ""
        for j in range(i - 1, max(-1, i - 4), -1):
            if toks[j].entity:
                key = lx.ALIASES.get(toks[j].low, toks[j].low)
                break
        clause.versions.append(
            (key, tok.raw.rstrip("0").rstrip(".") if "." in tok.raw else tok.raw)
        )
        tok.used = True
        if after_word and prev is not None:
            prev.used = True


def _unit(tok: Tok | None, lang: str) -> tuple[str, float] | None:
    if tok is None or tok.kind not in ("word", "sym"):
        return None
    if lang == "uk" and tok.low in lx.UNITS_UK:
        return lx.UNITS_UK[tok.low]
    return lx.UNITS.get(tok.low) or lx.UNITS.get(tok.lem)


def _number_at(toks: list[Tok], i: int, lang: str) -> tuple[float, int] | None:
    """The number starting at token ``i`` and how many tokens it takes (digits, number
    words, "half an hour"), or ``None``."""
    tok = toks[i]
    if tok.used:
        return None
    if tok.kind == "num":
        value = parse_number(tok.raw, lang)
        return (value, 1) if value is not None else None
    if tok.kind != "word":
        return None
    nxt = _unit(toks[i + 1] if i + 1 < len(toks) else None, lang)
    if tok.low in lx.HALF:
        step = 2 if _word(toks, i + 1) in lx.ARTICLE_NUMBERS else 1
        unit = _unit(toks[i + step] if i + step < len(toks) else None, lang)
        return (0.5, step) if unit else None
    if tok.low in lx.TIMES_NUMBERS:  # "twice a day"
        return lx.TIMES_NUMBERS[tok.low], 1
    if tok.low in lx.EVERY and nxt is not None and nxt[0] == "time" and i + 1 < len(toks):
        return 1.0, 1  # "every hour": one hour
    if tok.low in lx.ARTICLE_NUMBERS:
        ok = nxt is not None and nxt[0] in ("time", "size") and _word(toks, i + 1) != "second"
        return (1.0, 1) if ok and not _after_number(toks, i) else None
    value = lx.NUMBER_WORDS.get(tok.low)
    return (value, 1) if value is not None else None


def _after_number(toks: list[Tok], i: int) -> bool:
    """Is token ``i`` the "a" of "250 requests a minute" (a rate, not a number)?"""
    return any(t.kind == "num" for t in toks[max(0, i - 3) : i])


def _quantities(toks: list[Tok], clause: Clause, lang: str) -> None:
    i = 0
    while i < len(toks):
        found = _number_at(toks, i, lang)
        if found is None:
            i += 1
            continue
        value, width = found
        quantity, end = _quantity(toks, i, width, value, lang)
        at_hour = i > 0 and toks[i - 1].low in lx.AT_WORDS and quantity.dim == "time"
        if at_hour and quantity.value % 3600 == 0 and quantity.value <= 24 * 3600:
            clause.clocks.add(int(quantity.value // 60))  # "at 3 o'clock", "в 3 часа"
        else:
            clause.quantities.append(quantity)
        for t in toks[i:end]:
            # the counted nouns ("250 *requests* per minute") are content words too
            t.used = t.lem not in quantity.unit or quantity.dim.endswith("money")
        i = end


def _quantity(toks: list[Tok], i: int, width: int, value: float, lang: str) -> tuple[Quantity, int]:
    """The quantity whose number is at ``i``: its unit, a count noun, "per minute"."""
    j = i + width
    if toks[i].low in lx.HALF and _word(toks, j) in lx.ARTICLE_NUMBERS:
        j += 1
    dim, unit_words = "number", frozenset[str]()
    before = toks[i - 1] if i > 0 else None
    if toks[i].raw.endswith("%") or _word(toks, j) == "%":
        dim, j = "percent", j + (_word(toks, j) == "%")
    elif before is not None and before.kind == "sym" and before.low in lx.UNITS:
        dim = lx.UNITS[before.low][0]
        before.used = True
    elif (unit := _unit(toks[j] if j < len(toks) else None, lang)) is not None:
        dim, value, j = unit[0], value * unit[1], j + 1
    every = toks[i].low in lx.EVERY or (before is not None and before.low in lx.EVERY)
    if dim == "time" and every and value:
        # "every 6 hours": once per 6 hours, a frequency like "4 times a day"
        dim, value, unit_words = "rate:count", 1.0 / value, frozenset({lx.FREQUENCY})
        if before is not None and before.low in lx.EVERY:
            before.used = True
        text = " ".join(t.raw for t in toks[i - (toks[i].low not in lx.EVERY) : j])
        return Quantity(value, dim, unit_words, text, _context(toks, i)), j
    if toks[i].low in lx.TIMES_NUMBERS:
        dim, unit_words = "count", frozenset({lx.FREQUENCY})
    if dim.startswith("money:"):  # one dimension, the currency as its unit: USD vs EUR
        dim, unit_words = "money", frozenset({dim[6:]})
    if dim == "number":
        nouns: list[str] = []
        k = j
        while (
            k < len(toks)
            and len(nouns) < 2
            and toks[k].kind == "word"
            and toks[k].low not in lx.PER
        ):
            if toks[k].lem not in lx.FUNCTION_WORDS and not toks[k].used:
                nouns.append(toks[k].lem)
            elif nouns:
                break
            k += 1
        if nouns:
            times = any(toks[n].low in lx.TIMES for n in range(j, k))
            dim, unit_words, j = "count", frozenset({lx.FREQUENCY} if times else nouns), k
    if _word(toks, j) in lx.LONG_WORDS:
        j += 1
    # "... per minute", "por minuto", "в минуту": a rate (per second)
    for k in range(j, min(j + 3, len(toks) - 1)):
        if toks[k].low in lx.PER and (per := _unit(toks[k + 1], lang)) and per[0] == "time":
            dim, value, j = f"rate:{dim}", value / per[1], max(j, k + 2)
            break
    text = " ".join(t.raw for t in toks[i:j])
    return Quantity(value, dim, unit_words, text, _context(toks, i)), j


def _context(toks: list[Tok], i: int) -> frozenset[str]:
    return frozenset(t.lem for t in toks[max(0, i - 2) : i] if t.kind == "word")


def _permission(toks: list[Tok], clause: Clause, lang: str) -> None:
    """Permission words and negations: the clause's polarity. A negation right before a
    name (only function words between) rejects that name instead ("we do not use X"); one
    right before a permission word flips that word ("not allowed"); any other negation
    makes the clause negative, however many there are ("there is no boy playing and no man
    smiling" does not cancel out)."""
    sign, explicit, permission, negated = 1, False, False, False
    for i, tok in enumerate(toks):
        # (a word read as a count of zero, "nenhum cachorro", still negates)
        if tok.kind != "word" or (tok.used and not _is_negation(tok, lang)):
            continue
        if _is_negation(tok, lang):
            tok.used = True
            nxt = toks[i + 1] if i + 1 < len(toks) else None
            if nxt is not None and lx.ABSOLUTES.get(nxt.low) == "only":
                continue  # "not only X": X and more, not a denial
            target = _negated_name(toks, i)
            if target is not None:
                clause.rejected.add(target)
                continue
            if tok.low in lx.WITHOUT:
                # "without X" denies X, not what the clause says ("skiing without fear")
                lacks = _next_terms(toks, i + 1, stop_at_comma=True)
                clause.denied.update(lacks)
                clause.lacking.update(lacks)
                continue
            explicit = True
            bound = any(
                not t.used and (polarity_of(t.low) or polarity_of(t.lem))
                for t in toks[i + 1 : i + 4]
                if t.kind == "word"
            )
            negated = negated or not bound
            if not bound:
                clause.denied.update(_scope(toks, i, lang))
            continue
        if tok.low in lx.REQUIRED or tok.low in lx.OPTIONAL:
            tok.used = True
            negated_word = i > 0 and toks[i - 1].low in lx.NEGATIONS.get(lang, ())
            required = (tok.low in lx.REQUIRED) != negated_word
            clause.obligation = 1 if required else -1
            clause.words.add(PERMISSION)
            continue
        value = polarity_of(tok.low) or polarity_of(tok.lem)
        if value:
            tok.used = True
            if any(
                _is_negation(t, lang) and t.low not in lx.WITHOUT for t in toks[max(0, i - 3) : i]
            ):
                value = -value
            sign, explicit, permission = sign * value, True, True
            clause.words.add(PERMISSION)
    clause.polarity = -sign if negated else sign
    clause.explicit, clause.permission = explicit, permission


def _is_negation(tok: Tok, lang: str) -> bool:
    return tok.kind == "word" and (tok.low in lx.NEGATIONS.get(lang, ()) or tok.low.endswith("n't"))


def _scope(toks: list[Tok], i: int, lang: str) -> set[str]:
    """The content words the negation at ``i`` denies: every one after it to the end of its
    clause (``;`` or the sentence's end), past auxiliaries, function words and negations
    ("не проверили" -> проверить; "there is no man playing" -> man, play)."""
    return {
        tok.lem
        for tok in toks[i + 1 :]
        if tok.kind == "word"
        and not _is_negation(tok, lang)
        and tok.low not in lx.AUXILIARIES
        and tok.lem not in IGNORED
        and tok.low not in IGNORED
    }


def _negated_name(toks: list[Tok], i: int) -> str | None:
    for tok in toks[i + 1 : i + 5]:
        if tok.entity:
            return lx.ALIASES.get(tok.low, tok.low)
        if tok.kind != "word" or tok.lem not in lx.FUNCTION_WORDS:
            return None
    return None


def _rejections(toks: list[Tok], clause: Clause) -> None:
    """Alternatives the clause rules out."""
    lows = [t.low for t in toks]
    for i, tok in enumerate(toks):
        if tok.kind != "word":
            continue
        for pattern in lx.REJECT_NEXT:
            if tuple(lows[i : i + len(pattern)]) == pattern and _pattern_applies(lows, i, pattern):
                for t in toks[i : i + len(pattern)]:
                    t.used = True
                clause.rejected |= _next_terms(toks, i + len(pattern))
        if tok.low == "over" and any(w in lx.CHOICE_VERBS for w in lows[:i]):
            tok.used = True
            clause.rejected |= _next_terms(toks, i + 1)
        if tok.low in lx.CHOICE_VERBS:
            tok.used = True
        if tok.low in lx.REPLACE_VERBS:
            tok.used = True
            passive = i > 0 and lows[i - 1] in lx.PASSIVE_WORDS
            clause.rejected |= _previous_terms(toks, i) if passive else _next_terms(toks, i + 1)
        if tok.low in lx.MOVE_VERBS and lows[i + 1 : i + 2] and lows[i + 1] in lx.FROM_WORDS:
            tok.used = True
            clause.rejected |= _next_terms(toks, i + 2)
        if tok.low in lx.RETIRED:
            tok.used = True
            clause.rejected |= _previous_terms(toks, i)


def _pattern_applies(lows: list[str], i: int, pattern: tuple[str, ...]) -> bool:
    if pattern == ("against",):  # "decided against X", not "SQL against the database"
        return i > 0 and lows[i - 1] in ("decided", "voted", "argued", "went")
    return True


def _run(toks: list[Tok], start: int, step: int, stop_at_comma: bool = False) -> set[str]:
    """The names and content words of the phrase that starts at ``start`` (walking by
    ``step``), function words before it skipped: "instead of *Elasticsearch*", "*header-based
    API versioning* was rejected", "а не в *App Center*"."""
    i = start
    while 0 <= i < len(toks) and _filler(toks[i]):
        i += step
    terms: set[str] = set()
    while 0 <= i < len(toks) and not _filler(toks[i]) and len(terms) < 4:
        tok = toks[i]
        if stop_at_comma and terms and tok.after_comma:
            break
        terms.add(lx.ALIASES.get(tok.low, tok.low) if tok.entity else tok.lem)
        i += step
    return terms


def _filler(tok: Tok) -> bool:
    return tok.kind != "word" or (
        not tok.entity and (tok.lem in lx.FUNCTION_WORDS or tok.low in lx.PASSIVE_WORDS)
    )


def _next_terms(toks: list[Tok], start: int, stop_at_comma: bool = False) -> set[str]:
    return _run(toks, start, 1, stop_at_comma)


def _previous_terms(toks: list[Tok], end: int) -> set[str]:
    return _run(toks, end - 1, -1)
