"""Words as ``validate`` reads them: tokens (numbers, names, words split at hyphens and
lemmatised in the text's language), the closed word classes (weekdays, months, permission
words), numbers as written in four languages, and the slot types a clause is read into."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ..index.query import STOPWORDS
from ..language import CYRILLIC, in_dictionary, lemma
from ..values import Record, field
from . import lexicon as lx
from .glossary import ENGLISH, GLOSSARY, gloss

_TOKEN_RE = re.compile(
    r"R\$|[$€£₽₴%]"
    r"|\d{4}-\d{2}(?:-\d{2})?(?![\d-])"  # ISO date
    r"|\d{1,2}h(?:\d{2})?(?!\w)"  # Portuguese time of day: 10h, 10h30
    r"|\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?![\d.,])"  # 10 000
    r"|\d+(?:[.,:]\d+)*"
    r"|[^\W\d_][\w'-]*[^\W_'-]|[^\W\d_]"
    r"|[;.!?]|[—–]",
    re.UNICODE,
)
_PERCENTILE = re.compile(r"\b(\d{2})(?:st|nd|rd|th)\s+percentile\b|\bpercentil\s+(\d{2})\b", re.I)
IGNORED = (STOPWORDS | lx.FUNCTION_WORDS) - lx.ALL_NEGATIONS - {"over", "against"} - lx.BOUNDS


_CYRILLIC_ENDINGS = ("ами", "ях", "ах", "ов", "ів", "ом", "ой", "ы", "и", "а", "у", "е", "і")
PERMISSION = "~permission"  # the content word standing for any permission word


class Quantity(Record, frozen=True):
    """A number with its unit: ``value`` in the dimension's base unit (seconds, bytes,
    per second for a rate); ``dim`` is time|size|percent|money:<code>|rate|count|number;
    ``unit`` the counted nouns' lemmas (count and rate)."""

    value: float
    dim: str
    unit: frozenset[str]
    text: str
    context: frozenset[str]


class Clause(Record):
    """What one clause says (filled in by :func:`read`)."""

    words: set[str] = field(default_factory=set)  # content lemmas, entities included
    entities: set[str] = field(default_factory=set)  # names asserted
    rejected: set[str] = field(default_factory=set)  # names or words ruled out
    denied: set[str] = field(default_factory=set)  # every content word in a negation's scope
    lacking: set[str] = field(default_factory=set)  # the words after "without" / "sem" / "без"
    quantities: list[Quantity] = field(default_factory=list)
    versions: list[tuple[str, str]] = field(default_factory=list)  # (of what, version)
    clocks: set[int] = field(default_factory=set)  # minutes after midnight
    dates: set[tuple[int | None, int | None, int | None]] = field(default_factory=set)
    weekdays: set[str] = field(default_factory=set)
    parts: set[str] = field(default_factory=set)  # morning|afternoon|evening|night
    polarity: int = 1  # -1: frozen/forbidden/negated, +1 otherwise
    explicit: bool = False  # a permission word or a negation said so
    permission: bool = False  # a permission word (not only a negation) is there
    obligation: int = 0  # 1: required/mandatory, -1: optional
    subject: set[str] = field(default_factory=set)  # content words before the predicate
    light: set[str] = field(default_factory=set)  # verbs of lexicon.LIGHT_VERBS said
    hedges: set[str] = field(default_factory=set)  # concepts of lexicon.HEDGES said
    absolutes: set[str] = field(default_factory=set)  # concepts of lexicon.ABSOLUTES said
    conditioned: set[str] = field(default_factory=set)  # the words a condition governs
    asked: set[str] = field(default_factory=set)  # the words of an indirect question
    sentence: int = 0  # which sentence of the text the clause belongs to
    roles: tuple[Any, ...] = ()  # memvault.validate.roles.Role units (English, Portuguese)


class Tok(Record):
    raw: str
    low: str
    lem: str
    kind: str  # word|num|iso|clock|sym|punct
    used: bool = False  # read as part of a slot, not a content word
    entity: bool = False
    base: str = ""  # the dictionary lemma, before the glossary
    after_comma: bool = False  # a comma stands right before it (tokens drop commas)
    after_break: bool = False  # a colon, a bracket or a line break stands right before it


# --- tokens ------------------------------------------------------------------------------


def _lemma(word: str, lang: str) -> str:
    """The dictionary lemma, in lower case (the dictionaries capitalise names: "Friday")."""
    if CYRILLIC.search(word):
        order = ("uk", "ru") if lang == "uk" else ("ru", "uk")
        return lemma(word, order).lower()
    return lemma(word, ("pt",) if lang == "pt" else ("en",)).lower()


def canonical(word: str, lang: str) -> str:
    """A word's lemma, and the one form of words teams write several ways."""
    low = word.lower()
    if low in lx.ALIASES:
        return lx.ALIASES[low]
    glossed = gloss(low, lang)
    if glossed is not None:
        return glossed
    if lang == "en" and low in ENGLISH:
        return low  # the glossary's own word: "staging" is not the dictionary's "stage"
    noun = _kind_noun(low)
    if noun is not None:
        return noun
    lem = _lemma(low, lang)
    if low in lx.OPPOSITES and lem not in lx.OPPOSITES:
        return low  # a listed opposite the dictionary takes elsewhere ("fora" a form of "ir")
    if lang == "pt":
        lem = _gerund(low) or lem
        # the dictionary takes a participle one step at a time: "cortadas" -> "cortada" ->
        # "cortado" -> "cortar"; a passive ("está sendo cortada") meets its active ("cortando")
        for _ in range(3):
            if not lem.endswith(("ado", "ada", "ido", "ida")):
                break
            step = _lemma(lem, lang)
            if step == lem:
                break
            lem = step
    found = lx.ALIASES.get(lem) or gloss(lem, lang)
    if found is None and lem == low and CYRILLIC.search(low):
        # a loanword the dictionary lacks ("кэшем"): try it without a case ending
        for ending in _CYRILLIC_ENDINGS:
            if low.endswith(ending) and low[: -len(ending)] in GLOSSARY:
                return GLOSSARY[low[: -len(ending)]]
    return found or lem


# Portuguese gerund endings and the infinitive each comes from ("comendo" -> "comer").
_GERUNDS = (("ando", "ar"), ("endo", "er"), ("indo", "ir"))
# The words after which a Portuguese participle is a passive's verb ("está sendo comido",
# "foi servida"), not a noun or an adjective ("a comida", "um vestido", "a corrida").
_PASSIVE_BE = frozenset({"sendo", "sido", "foi", "foram", "será", "serão"})


def _gerund(low: str) -> str | None:
    """The infinitive of a Portuguese gerund, when the dictionary holds it: the dictionary
    guesses a few gerunds it lacks as verbs of their own ("comendo" -> "comendar"), so an
    eating never met its passive ("está sendo comido"). Six letters at least: "bando",
    "lendo" are left to the dictionary."""
    if len(low) < 6:
        return None
    for ending, infinitive in _GERUNDS:
        if low.endswith(ending):
            verb = low[: -len(ending)] + infinitive
            return verb if in_dictionary(verb, "pt") else None
    return None


def _participle(low: str) -> str | None:
    """The infinitive of a Portuguese participle in -ido (-ida, -idos, -idas), whose verb ends
    in -er or -ir: the one of the two the dictionary holds ("comido" -> "comer", "servida" ->
    "servir"); the dictionary reads these participles as words of their own."""
    for ending in ("idos", "idas", "ido", "ida"):
        if low.endswith(ending) and len(low) - len(ending) >= 3:
            stem = low[: -len(ending)]
            verbs = [stem + v for v in ("er", "ir") if in_dictionary(stem + v, "pt")]
            return verbs[0] if len(verbs) == 1 else None
    return None


def _passives(toks: list[Tok]) -> list[Tok]:
    """Portuguese participles in -ido after a passive's "be" read as their verb."""
    for i in range(1, len(toks)):
        if toks[i - 1].low in _PASSIVE_BE and toks[i].kind == "word":
            verb = _participle(toks[i].low)
            if verb is not None and toks[i].low not in GLOSSARY and toks[i].low not in lx.ALIASES:
                toks[i] = toks[i].replace(lem=verb)
    return toks


def _kind_noun(low: str) -> str | None:
    """``low`` as a noun of :data:`lexicon.KIND_NOUNS`: itself, or its plural (-s, -es, -ais,
    -ões; the dictionaries get the other plurals right)."""
    if low in lx.KIND_NOUNS:
        return lx.ONE_WORD.get(low, low)
    for ending, singular in (("s", ""), ("es", ""), ("ais", "al"), ("ões", "ão")):
        form = low[: -len(ending)] + singular
        # (four letters at least: Portuguese "redes" is not English "red")
        if low.endswith(ending) and len(form) >= 4 and form in lx.KIND_NOUNS:
            return lx.ONE_WORD.get(form, form)
    return None


def _keep_whole(low: str) -> bool:
    return (
        any(c.isdigit() for c in low)
        or low in GLOSSARY
        or low in lx.ALIASES
        or weekday(low, None) is not None
        or polarity_of(low) != 0
    )


def tokens(text: str, lang: str) -> list[Tok]:
    """``text``'s tokens: numbers, names and words (lemmatised, multi-word forms joined)."""
    text = _PERCENTILE.sub(lambda m: f"p{m.group(1) or m.group(2)}", text)
    out: list[Tok] = []
    end = 0
    for m in _TOKEN_RE.finditer(text):
        raw = m.group(0)
        gap = text[end : m.start()]
        comma_next = "," in gap
        break_next = any(c in gap for c in ":()[]\n")
        end = m.end()
        first = len(out)
        if raw[0].isdigit():
            kind = "iso" if "-" in raw else "clock" if raw[-1] == "h" or "h" in raw else "num"
            out.append(Tok(raw, raw, raw, kind))
        elif raw in ";.!?":
            out.append(Tok(raw, raw, raw, "punct"))
        elif not raw[0].isalnum():
            out.append(Tok(raw, raw.lower(), raw.lower(), "sym"))  # currency, %, dash
        else:
            raw = re.sub(r"'s$", "", raw) if lang == "en" else raw
            if lang == "pt" and raw.startswith("d'") and raw[2:3].islower():
                # "corpo d'água" is "corpo de água" ("de" says nothing); "D'Ávila" is a name
                raw = raw[2:]
            low = raw.lower()
            parts = [raw] if "-" not in raw or _keep_whole(low) else raw.split("-")
            if lang == "pt" and len(parts) > 1 and parts[-1].lower() == "se":
                parts = parts[:-1]  # "reinicia-se": the pronoun says nothing (nor "if")
            out.extend(
                Tok(p, p.lower(), canonical(p, lang), "word", base=_lemma(p.lower(), lang))
                for p in parts
                if p
            )
        if (comma_next or break_next) and len(out) > first:
            out[first] = out[first].replace(after_comma=comma_next, after_break=break_next)
    return _join_phrases(_passives(out) if lang == "pt" else out)


def _join_phrases(toks: list[Tok]) -> list[Tok]:
    """Read the forms of :data:`lexicon.PHRASES` as one word."""
    out: list[Tok] = []
    for tok in toks:
        out.append(tok)
        for n in (3, 2):
            tail = out[-n:]
            if len(tail) < n or any(t.kind != "word" for t in tail):
                continue
            joined = lx.PHRASES.get(tuple(t.low for t in tail)) or lx.PHRASES.get(
                tuple(t.lem for t in tail)
            )
            if joined:
                del out[-n:]
                out.append(Tok(" ".join(t.raw for t in tail), joined, joined, "word"))
                break
    return out


def clauses(toks: list[Tok]) -> list[tuple[list[Tok], bool, bool]]:
    """The clauses of a token list (split at ``;`` and sentence ends), each with whether it
    starts a sentence (its first word's capital then says nothing) and whether it ends with
    a question mark (it asks; it does not say)."""
    out: list[tuple[list[Tok], bool, bool]] = [([], True, False)]
    for tok in toks:
        if tok.kind == "punct":
            if out[-1][0]:
                out[-1] = (out[-1][0], out[-1][1], tok.raw == "?")
                out.append(([], tok.raw != ";", False))
        else:
            out[-1][0].append(tok)
    return [c for c in out if c[0]]


# --- the parts of a sentence ---------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
# (a comma or colon followed by a space: "0,5" and "16:00" are numbers; no dash: "X — Y"
# is how Russian and Ukrainian say "X is Y")
_PART_BREAK = re.compile(r"[,:]\s+|\s*[()]\s*")
# Relative words: the part they start is about the word before it ("caught the thief, who
# became famous through a video" says the thief became famous).
_RELATIVES = lx.RELATIVE_WORDS


def parts(text: str) -> list[str]:
    """``text``'s sentences cut at commas, colons and brackets: the parts a clause of
    its own can stand in. A part that starts with a relative word (who, which, где) keeps the
    last three words before it, the noun it is about. And the parts on either side of a part
    are one part too, the clause it interrupts ("Бекапи, які ми робимо щоночі, зберігаються
    30 днів", "Релиз, по плану, выходит во вторник": the backups are kept 30 days, the
    release comes out on Tuesday)."""
    out: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        pieces = [p for p in _PART_BREAK.split(sentence) if p.strip()]
        for i, piece in enumerate(pieces):
            if i and _relative(piece):
                out.append(" ".join(pieces[i - 1].split()[-3:]) + " " + piece)
            else:
                out.append(piece)
            if 0 < i < len(pieces) - 1 and not _relative(pieces[i + 1]):
                # (a relative clause is about the words right before it, not across a part)
                out.append(pieces[i - 1] + " " + pieces[i + 1])
    return out


def _relative(piece: str) -> bool:
    head = [w.lower().strip("\"'«»") for w in piece.split()[:3]]
    return any(w in _RELATIVES or w.startswith(("котор", "котр")) for w in head)


# --- word classes ------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def weekday(low: str, prev: str | None) -> str | None:
    """The weekday a word names (``mon``..``sun``), if any; ``prev`` is the word before
    (Portuguese "segunda" is a weekday only after "na", "às"...; ``None``: don't check)."""
    word = low[2:] if low.startswith("що") and len(low) > 5 else low
    if word.startswith(("середовищ", "середн")):
        return None
    for stem, day in lx.WEEKDAY_STEMS:
        if word == stem or (len(stem) > 4 and word.startswith(stem)):
            ordinal = stem in lx.PT_ORDINAL_DAYS
            if ordinal and word not in (stem, stem + "s") and not word.startswith(stem + "-"):
                continue  # "quintal" (a backyard) is not "quinta"; "quinta-feira" is
            base = word.rstrip("s")
            if prev is not None and base in lx.PT_ORDINAL_DAYS and prev not in lx.PT_DAY_CUES:
                return None
            return day
    return None


@lru_cache(maxsize=65536)
def month(low: str) -> int | None:
    for stem, number in lx.MONTH_STEMS:
        if low == stem or (len(stem) >= 4 and low not in lx.EXACT_MONTHS and low.startswith(stem)):
            return number
    return None


@lru_cache(maxsize=4096)
def polarity_of(word: str) -> int:
    """+1 for a word of permission or preference, -1 for one of prohibition, else 0 (the
    longest matching entry decides: "disallowed" is not "allowed")."""
    best, sign = 0, 0
    for entry, value in lx.POLARITY:
        hit = word == entry or (len(entry) >= 5 and word.startswith(entry))
        if hit and len(entry) > best:
            best, sign = len(entry), value
    return sign


def parse_number(text: str, lang: str) -> float | None:
    """A number as written: "10 000", "30,000" (en), "0,5" and "2.000" (pt/ru/uk), "40k"."""
    t = re.sub(r"[ \u00a0\u202f]", "", text)
    scale = 1.0
    if t[-1:] in "kK":
        t, scale = t[:-1], 1000.0
    if "," in t and "." in t:
        t = (
            t.replace(".", "").replace(",", ".")
            if t.rfind(",") > t.rfind(".")
            else t.replace(",", "")
        )
    elif "," in t:
        thousands = re.fullmatch(r"\d{1,3}(?:,\d{3})+", t)
        t = (
            t.replace(",", "")
            if thousands and (lang == "en" or t.count(",") > 1)
            else t.replace(",", ".")
        )
    elif t.count(".") == 1 and lang != "en" and re.fullmatch(r"\d{1,3}\.\d{3}", t):
        t = t.replace(".", "")
    try:
        return float(t) * scale
    except ValueError:
        return None
