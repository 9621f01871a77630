"""What two similar texts differ in, word by word: the evidence dedup and promotion decide on.

A small embedding model puts a statement and its reworded twin anywhere from cosine 0.6 to
0.95, and two statements of one template about different things (another service, another
number) in the same range. The words tell them apart:

* a **template variant** keeps most words in the same order (``difflib`` ratio of at least
  ``VARIANT_RATIO``; or the same first ``OPENING_WORDS`` words; or words replaced one for one
  with nothing added; or the same slots swapped) and replaces some content word: the same
  sentence said about something else, never a duplicate. A reworded twin shares far fewer
  words in order;
* a **conflict**: each side names a slot the other lacks (a number, a name, a date), the
  negations differ, or a polarity word flips (allowed / forbidden): never a duplicate. In a
  reworded pair (not template-shaped) a negation conflicts only when what it negates -- the
  next ``NEGATION_SCOPE`` content words of its clause -- is said on the other side: "must
  stay in the EU" / "not allowed to move outside the EU" rewords one rule, while "Backups
  are encrypted" / "We never encrypt backups" negates the other's verb;
* a **contradiction** is a template variant whose one difference is a value -- slots
  replaced by slots, or two slots swapped -- after the words that say what the statement is
  about (the first ``SUBJECT_SHARE`` of it), or a negation or polarity flip anywhere.

Slots: tokens with a digit, number words (mapped to digits), month and weekday names, and
names (capitalised inside a sentence, or with capitals inside the word: PostgreSQL, iOS).
Words compare by a short stem (``STEM`` letters), so "Postgres" meets "PostgreSQL" and
"tables" meets "table". A name on one side is said on the other by its acronym ("EU" /
"European Union") or inside a compound word ("UI" / "ui-kit").
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from functools import lru_cache

from ..language import detect, lemma
from ..values import Record

VARIANT_RATIO = 0.65  # tuned on the 'tune' half of bench/data/consolidate.json
OPENING_WORDS = 4  # this many same words first, then a replaced one: a template variant
SUBJECT_SHARE = 0.3  # the first 30 % of the words name what a statement is about
STEM = 6
NEGATION_SCOPE = 2  # content words after a negation, in its clause, that it negates


def _list(text: str) -> list[str]:
    return text.split()


TOKEN = re.compile(r"\w+(?:['’]\w+)*(?:[-_.:/]\w+)*")  # a word, as :func:`words` reads them
_SENTENCE_END = re.compile(r"[.!?;:]\s*$")
DIGIT = re.compile(r"\d")  # a decimal digit, found by one C loop
_CLAUSE_BREAK = re.compile(r"[.!?;:,()\u2014]")  # punctuation that ends a negation's reach
NEGATIONS = frozenset(
    _list(
        """not no never don't doesn't isn't aren't won't can't cannot didn't wasn't weren't
    hasn't haven't shouldn't mustn't nor nothing nobody none without não nunca nem
    jamais nada ninguém sem не нет никогда ничего ні ніколи нічого без"""
    )
)
# Words of opposite poles; a statement whose word moves to the other pole says the opposite.
# Matched by prefix, so inflections count (запрещён / запрещено, proibido / proibidas).
_ALLOW = tuple(
    _list(
        """allow permit enabl open support prefer requir encourag mandator active availab
    approv accept recommend unfrozen permitid ativad aberto obrigat разреш включ открыт
    дозвол увімкн відкрит"""
    )
)
_DENY = tuple(
    _list(
        """forbid prohibit frozen freez disabl closed deprecat discourag optional ban block
    inactive unavailab reject disallow paus suspend proibid desativ fechad запрещ выключ
    закрыт заборон вимкн закрит"""
    )
)
_NUMBER_GROUPS = (  # the words for 0, 1, 2 ... 12
    "zero",
    "one first um uma primeiro один одна первый перший",
    "two second dois duas segundo два две второй дві другий двух двох",
    "three third três terceiro три третий третій трёх трьох",
    "four fourth quatro quarto четыре четвёртый чотири четырёх чотирьох",
    "five fifth cinco quinto пять п'ять",
    "six sixth seis sexto шесть шість",
    "seven seventh sete sétimo семь сім",
    "eight eighth oito oitavo восемь вісім",
    "nine ninth nove nono девять дев'ять",
    "ten tenth dez décimo десять",
    "eleven",
    "twelve",
)
NUMBER_WORDS = {w: str(i) for i, group in enumerate(_NUMBER_GROUPS) for w in group.split()}
NUMBER_WORDS.update({"twenty": "20", "thirty": "30", "тридцать": "30", "тридцять": "30"})
NUMBER_WORDS.update({"forty": "40", "fifty": "50", "sixty": "60", "hundred": "100"})
_MONTHS = _list(
    """january february march april may june july august september october november
    december janeiro fevereiro março abril maio junho julho agosto setembro outubro
    novembro dezembro январ феврал март апрел июн июл август сентябр октябр ноябр декабр
    січ лют берез квіт травн червн липн серпн верес жовтн листопад грудн"""
)
_WEEKDAYS = _list(
    """monday tuesday wednesday thursday friday saturday sunday segunda terça quarta quinta
    sexta sábado domingo понедельник вторник сред четверг пятниц суббот воскресен
    понеділ вівтор серед четвер п'ятниц субот неділ"""
)
_CALENDAR = tuple(_MONTHS + _WEEKDAYS)
# Units after a number are part of its value ("200 ms" is not "200 seconds"); by prefix.
_UNITS = tuple(
    _list(
        """ms millisecond s sec second minute min h hour hr day week month year kb mb gb tb
    byte request rps qps req attempt retr time percent % euro eur dollar usd node
    instance seat user core cpu segundo minuto hora dia semana mês mes ano pedido секунд
    минут час дн недел месяц год запрос секунд хвилин годин днів тижн місяц рок запит"""
    )
)
STOPWORDS = frozenset(
    _list(
        """a an the of to and in on at by for from with is are was were be been it its this
    that these those we our us you your they their he she his her i my me as or but if
    then so do does did has have had will would can could should must may might all any
    each every some there here also just only very more most than too into onto over
    under about after before again once per via o os a as um uma de do da dos das e em
    no na nos nas por para com que é são и в во на с со к по о от до за из у не что это
    как а но же ли і та та з зі до від що це як але"""
    )
)


class Word(Record, frozen=True):
    key: str  # what it compares by: stem, or the digits of a number
    slot: bool
    negation: bool
    pole: int  # +1 allow, -1 deny, 0 neither
    content: bool  # not a stop word
    name: bool  # a capitalised word (not an acronym, no digit): a person, a product, a place
    clause: int = 0  # which clause of the text (counted at punctuation) the word is in


def _stem(word: str) -> str:
    if word.endswith(("'s", "’s")):
        word = word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:STEM]


def _pole(low: str) -> int:
    if low.startswith(_DENY):
        return -1
    if low.startswith(_ALLOW):
        return 1
    return 0


@lru_cache(maxsize=65536)
def words(text: str) -> tuple[Word, ...]:
    """The words of ``text`` as :class:`Word` s (cached: each memory is compared often)."""
    out: list[Word] = []
    lang = detect(text)
    after_number = False
    portuguese = lang == "pt"  # there "no" is "in the", not a negation
    clause, end = 0, 0
    for m in TOKEN.finditer(text):
        raw = m.group()
        clause += bool(_CLAUSE_BREAK.search(text, end, m.start()))
        gap, end = end, m.end()
        low = raw.lower().replace("’", "'")
        if lang != "en" and low.isalpha():
            low = lemma(low, (lang,))  # "одного" / "один", "recibos" / "recibo"
        # the text before it ends a sentence: only the gap after the previous word can
        # (a word ends in a letter or digit)
        start = m.start() == 0 or bool(_SENTENCE_END.search(text, gap, m.start()))
        number = NUMBER_WORDS.get(low)
        digits = DIGIT.search(low) is not None
        # English writes months and days capitalised ("may" is a verb); pt, ru, uk don't.
        dated = len(low) > 2 and (raw[:1].isupper() or lang != "en")
        calendar = ""
        if dated and low.startswith(_CALENDAR):
            calendar = next(p for p in _CALENDAR if low.startswith(p))
        name = (raw[:1].isupper() and not start) or any(ch.isupper() for ch in raw[1:])
        if number is not None:
            key = number
        elif digits:
            key = low.rstrip("s") if low[:-1].isdigit() else low
        elif calendar:
            key = calendar  # "terças-feiras" and "terças" are one day
        else:
            key = _stem(low)
        unit = after_number and low.startswith(_UNITS)  # "200 ms" / "200 s"
        after_number = bool(number or digits)
        out.append(
            Word(
                key=key,
                slot=bool(number or digits or calendar or name or unit),
                negation=(low in NEGATIONS and not (portuguese and low == "no"))
                or low.endswith("n't"),
                pole=_pole(low),
                content=low not in STOPWORDS,
                name=name and not raw.isupper() and not digits,
                clause=clause,
            )
        )
    return tuple(out)


class Difference(Record, frozen=True):
    ratio: float  # difflib ratio of the two word sequences (1.0: the same words in order)
    variant: bool  # a template variant: same words in order, a content word replaced
    conflict: str  # why the two cannot say the same ("" if nothing found)
    contradiction: str  # the shape of a contradiction ("" if none): number, negation, ...
    shared: int  # content words (stems) both use
    overlap: float  # shared / the content words of the shorter side
    language: str  # the language both are written in ("" if they differ; Latin ones: en)
    specifics: bool  # one side names a slot (number, name, date) the other lacks
    names: bool  # each side names someone or something (capitalised) the other does not


def _negations(ws: tuple[Word, ...]) -> int:
    return sum(w.negation for w in ws)


def _poles(ws: tuple[Word, ...], unique: set[str]) -> set[int]:
    return {w.pole for w in ws if w.pole and w.key in unique}


def forget_texts() -> None:
    """Drop what was remembered about texts (after a plan: a server process lives on)."""
    from ..language import forget_texts as forget_languages

    for cached in (words, _compare, _tokens, _compound_parts):
        cached.cache_clear()
    forget_languages()


Opcode = tuple[str, int, int, int, int]  # difflib's (tag, i1, i2, j1, j2)


def _content_ops(ops: Sequence[Opcode], wa: tuple[Word, ...], wb: tuple[Word, ...]) -> list[Opcode]:
    """The edits that touch a content word on either side (validate's function words, such
    as "now" and "currently", are not content here)."""
    from ..validate.lexicon import FUNCTION_WORDS

    def weighty(side: tuple[Word, ...]) -> bool:
        return any(w.content and w.key not in FUNCTION_WORDS for w in side)

    return [op for op in ops if weighty(wa[op[1] : op[2]]) or weighty(wb[op[3] : op[4]])]


def compare(a: str, b: str) -> Difference:
    """How ``a`` and ``b`` differ (see the module docstring)."""
    return _compare(a, b)


@lru_cache(maxsize=65536)
def _compare(a: str, b: str) -> Difference:
    wa, wb = words(a), words(b)
    ka, kb = [w.key for w in wa], [w.key for w in wb]
    matcher = difflib.SequenceMatcher(None, ka, kb, autojunk=False)
    ratio = matcher.ratio()
    ops = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    only_a, only_b = set(ka) - set(kb), set(kb) - set(ka)
    slots_a = {w.key for w in wa if w.slot and w.key in only_a}
    slots_b = {w.key for w in wb if w.slot and w.key in only_b}
    _acronyms(a, b, slots_a, slots_b)
    _compounds(slots_a, slots_b)
    _parts_of_compounds(a, b, slots_a, slots_b)
    names_a = {w.key for w in wa if w.name and w.key in slots_a}
    names_b = {w.key for w in wb if w.name and w.key in slots_b}
    swapped = _swapped(wa, wb)
    shaped = _shaped(matcher, ka, kb) or swapped
    negation = _negations(wa) % 2 != _negations(wb) % 2
    if negation and not shaped:  # reworded: only a negation of something the other says
        negation = _negates_other(wa, wb) or _negates_other(wb, wa)
    flip = bool(_poles(wa, only_a) & {-p for p in _poles(wb, only_b)})
    conflict = ""
    if negation:
        conflict = "negation"
    elif flip:
        conflict = "polarity"
    elif slots_a and slots_b:
        conflict = "values"
    elif swapped:
        conflict = "swap"
    replaced = any(
        tag == "replace" and any(w.content for w in wa[i1:i2]) and any(w.content for w in wb[j1:j2])
        for tag, i1, i2, j1, j2 in ops
    )
    variant = shaped and (replaced or bool(conflict))
    contradiction = ""
    if variant:
        if conflict in ("negation", "polarity"):
            contradiction = conflict
        elif swapped:
            contradiction = "swap"
        elif len(edits := _content_ops(ops, wa, wb)) == 1 and edits[0][0] == "replace":
            # a function word added or dropped beside the value ("... now runs on X") is
            # not a second difference
            _, i1, i2, j1, j2 = edits[0]
            late = i1 >= SUBJECT_SHARE * max(len(wa), len(wb))
            values = any(w.slot for w in wa[i1:i2]) and any(w.slot for w in wb[j1:j2])
            if late and values:
                contradiction = "value"
    content_a, content_b = {w.key for w in wa if w.content}, {w.key for w in wb if w.content}
    shared = len(content_a & content_b)
    # Cyrillic against Latin, or Russian against Ukrainian: two languages. Latin-script ones
    # are not told apart here (a short English sentence can read as Portuguese).
    lang_a, lang_b = detect(a), detect(b)
    if lang_a not in ("ru", "uk") and lang_b not in ("ru", "uk"):
        lang_a = lang_b = "en" if "en" in (lang_a, lang_b) else lang_a
    return Difference(
        round(ratio, 3),
        variant,
        conflict,
        contradiction,
        shared,
        round(shared / max(1, min(len(content_a), len(content_b))), 3),
        lang_a if lang_a == lang_b else "",
        bool(slots_a or slots_b),
        bool(names_a and names_b),
    )


def may_be_variant(a: str, b: str) -> bool:
    """False only when :func:`compare` surely finds no template variant of ``a`` and ``b``
    (so no contradiction either), from their words alone: each way :func:`_shaped` (or
    :func:`_swapped`) accepts a pair needs the same first ``OPENING_WORDS`` words, or enough
    words in common that even all of them matched in order would reach its ratio or its
    half. No ``difflib``: a count of shared words."""
    ka, kb = [w.key for w in words(a)], [w.key for w in words(b)]
    total = len(ka) + len(kb)
    if not total or (len(ka) >= OPENING_WORDS and ka[:OPENING_WORDS] == kb[:OPENING_WORDS]):
        return True
    counts: dict[str, int] = {}
    for key in ka:
        counts[key] = counts.get(key, 0) + 1
    shared = 0
    for key in kb:
        if counts.get(key, 0) > 0:
            counts[key] -= 1
            shared += 1
    # (difflib's ratio is 2 * matched / total; matched words are at most the shared ones)
    slack = 1e-9
    by_ratio = 2 * shared >= VARIANT_RATIO * total - slack
    return by_ratio or shared >= 0.5 * max(len(ka), len(kb)) - slack


def _shaped(matcher: difflib.SequenceMatcher[str], ka: list[str], kb: list[str]) -> bool:
    """The two word sequences are one sentence pattern: most words the same in order; or the
    same opening words, then other ones ("Traced the checkout timeouts to a stale config" /
    "... to a retry storm"); or words replaced one for one, nothing added or left out, the
    most of it the same (a template filled in differently: "Traced the X emails to Y in Z")."""
    blocks = matcher.get_opcodes()
    ops = [op for op in blocks if op[0] != "equal"]
    opening = ops[0][1] if ops else len(ka)
    same = sum(i2 - i1 for tag, i1, i2, _, _ in blocks if tag == "equal")
    filled = all(
        tag == "replace" and i2 - i1 == j2 - j1 for tag, i1, i2, j1, j2 in ops
    ) and same >= 0.5 * max(len(ka), len(kb))
    return matcher.ratio() >= VARIANT_RATIO or opening >= OPENING_WORDS or filled


def _negated(ws: tuple[Word, ...]) -> list[list[int]]:
    """What each negation of ``ws`` negates: the positions of the next ``NEGATION_SCOPE``
    content words of its clause (none: the negation ends its clause)."""
    return [
        [
            j
            for j in range(i + 1, len(ws))
            if ws[j].clause == w.clause and ws[j].content and not ws[j].negation
        ][:NEGATION_SCOPE]
        for i, w in enumerate(ws)
        if w.negation
    ]


def _negates_other(ws: tuple[Word, ...], other: tuple[Word, ...]) -> bool:
    """A negation in ``ws`` denies what ``other`` says: it negates one of the other's words
    ("never encrypt" / "encrypted"), or a polarity word of the pole the other states, not
    negated, ("aren't required" / "mandatory"). A negation that ends its clause is taken to
    deny the statement."""
    keys = {x.key for x in other}
    denied = {j for scope in _negated(other) for j in scope}
    poles = {x.pole for j, x in enumerate(other) if x.pole and j not in denied}
    for scope in _negated(ws):
        if not scope or keys.intersection(ws[j].key for j in scope):
            return True
        if poles.intersection(ws[j].pole for j in scope):  # "not required" / "mandatory"
            return True
    return False


def _parts_of_compounds(a: str, b: str, slots_a: set[str], slots_b: set[str]) -> None:
    """A name or acronym on one side that is a part of a compound word on the other ("UI" /
    "ui-kit") is said on both: dropped from the side's unique slots. Numbers are not
    ("3" is not said by "node-3")."""
    for mine, other_text in ((slots_a, b), (slots_b, a)):
        if not mine:
            continue
        parts = _compound_parts(other_text)
        mine.difference_update(
            {k for k in mine if k in parts and not any(ch.isdigit() for ch in k)}
        )


@lru_cache(maxsize=65536)
def _compound_parts(text: str) -> frozenset[str]:
    """The stems of the parts of the text's compound words ("ui-kit": "ui", "kit")."""
    return frozenset(
        _stem(p.lower())
        for token in _tokens(text)
        for p in re.split(r"[-_./:]", token)
        if p and p != token
    )


@lru_cache(maxsize=65536)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(TOKEN.findall(text))


def _compounds(slots_a: set[str], slots_b: set[str]) -> None:
    """A compound slot on one side with a part that is the other side's slot ("OOM-killed" /
    "OOM") is one slot: dropped from both sides' unique slots."""
    for mine, theirs in ((slots_a, slots_b), (slots_b, slots_a)):
        for key in list(mine):
            parts = {_stem(p) for p in re.split(r"[-_./:]", key) if p}
            if len(parts) > 1 and parts & theirs:
                mine.discard(key)
                theirs.difference_update(parts)


def _acronyms(a: str, b: str, slots_a: set[str], slots_b: set[str]) -> None:
    """An acronym on one side and its words on the other ("EU" / "European Union") are one
    slot: drop both from the sides' unique slots."""
    for text, mine, other, other_text in ((a, slots_a, slots_b, b), (b, slots_b, slots_a, a)):
        for token in _tokens(text):
            if len(token) < 2 or not token.isupper() or _stem(token.lower()) not in mine:
                continue
            names = [t for t in _tokens(other_text) if t[:1].isupper()]
            for i in range(len(names) - len(token) + 1):
                run = names[i : i + len(token)]
                if "".join(t[0] for t in run) == token:
                    mine.discard(_stem(token.lower()))
                    other.difference_update(_stem(t.lower()) for t in run)
                    break


def _swapped(wa: tuple[Word, ...], wb: tuple[Word, ...]) -> bool:
    """The same slots in another order ("PostgreSQL over MySQL" / "MySQL over PostgreSQL")
    with the other words in place."""
    sa = [w.key for w in wa if w.slot]
    sb = [w.key for w in wb if w.slot]
    if len(sa) < 2 or sa == sb or sorted(sa) != sorted(sb):
        return False
    rest_a = [w.key for w in wa if not w.slot]
    rest_b = [w.key for w in wb if not w.slot]
    return rest_a == rest_b
