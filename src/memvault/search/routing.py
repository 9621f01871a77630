"""Intent routing (seed 004's memory manager): which kind of memory answers a question.

* "when ... / what happened ..."      -> episodic (falls back to semantic)
* "what is ... / what do we know ..." -> semantic
* "how do I ... / steps to ..."       -> procedural (ranked by match and success rate)
* "is it true that ..."               -> validate against known facts
* "should we ..."                     -> decision: facts and past episodes alike

Cue words in English, Portuguese, Russian and Ukrainian (the seeds' languages). The
earliest cue in the query wins; validation cues are checked first because they wrap
other questions ("is it true that we deployed when ...?"). A time window in the question
("what happened last week", "o que aconteceu ontem") asks for a timeline: episodes in
that window, newest first.
"""

from __future__ import annotations

import datetime as dt
import re

from ..memory import KIND_TYPE, TYPES
from ..values import Record

INTENTS = ("episodic", "semantic", "procedural", "validate", "decision", "general")

# Each cue is a regular expression matched on the lowercased query at word boundaries.
CUES: dict[str, dict[str, tuple[str, ...]]] = {
    "validate": {
        "en": (
            r"is it (?:true|correct|right|the case) that",
            r"is it true",
            r"true or false",
            r"does (?:this|that|it) (?:conflict|contradict)",
            r"(?:conflicts?|contradicts?) with",
            r"(?:verify|validate|check) (?:that|whether|if)",
            r"am i right that",
            r"do we (?:really|actually) ",
        ),
        "pt": (
            r"é verdade que",
            r"e verdade que",
            r"é correto (?:que|dizer)",
            r"está certo que",
            r"isso conflita",
            r"conflita com",
            r"contradiz",
            r"verifique se",
            r"confirma que",
        ),
        "ru": (
            r"правда ли(?:,)? что",
            r"верно ли(?:,)? что",
            r"это правда",
            r"противоречит",
            r"проверь(?:те)?(?:,)? что",
            r"так ли(?:,)? что",
        ),
        "uk": (
            r"чи правда(?:,)? що",
            r"чи вірно(?:,)? що",
            r"чи це правда",
            r"це правда",
            r"суперечить",
            r"перевір(?:те)?(?:,)? чи",
        ),
    },
    "procedural": {
        "en": (
            r"how (?:do|can|should|would|to|did) (?:i|we|you|one)\b",
            r"how to",
            r"steps? (?:to|for)",
            r"what are the steps",
            r"procedure (?:for|to)",
            r"workflow (?:for|to)",
            r"instructions? (?:for|to)",
            r"walk me through",
            r"guide (?:to|for)",
            r"recipe for",
            r"process for",
        ),
        "pt": (
            r"como (?:fazer|faço|faz|fazemos|devo|devemos|posso|podemos|se faz|lançar|configurar)",
            r"quais (?:são )?os passos",
            r"passo a passo",
            r"passos para",
            r"procedimento (?:para|de)",
            r"como\b",
        ),
        "ru": (
            r"как (?:сделать|мне|нам|нужно|надо|правильно|настроить|запустить)",
            r"какие шаги",
            r"шаги (?:для|чтобы)",
            r"инструкция",
            r"пошагово",
            r"порядок действий",
            r"как\b",
        ),
        "uk": (
            r"як (?:зробити|мені|нам|треба|потрібно|правильно|налаштувати|запустити)",
            r"які кроки",
            r"кроки (?:для|щоб)",
            r"інструкція",
            r"покроково",
            r"як\b",
        ),
    },
    "episodic": {
        "en": (
            r"when (?:did|was|were|have|had|do|does|is|will)\b",
            r"what happened",
            r"what did (?:we|i|you|they|he|she)\b",
            r"what went (?:wrong|well)",
            r"last time",
            r"have we ever",
            r"did we ever",
            r"remind me",
            r"when\b",
            r"how long ago",
            r"the time (?:we|i|when)",
        ),
        "pt": (
            r"quando\b",
            r"o que aconteceu",
            r"o que decidimos",
            r"o que fizemos",
            r"da última vez",
            r"na última vez",
            r"já (?:passamos|fizemos|tivemos)",
            r"lembra (?:de|quando)",
        ),
        "ru": (
            r"когда\b",
            r"что (?:произошло|случилось|было)",
            r"что мы (?:решили|сделали)",
            r"в прошлый раз",
            r"последний раз",
            r"помнишь",
        ),
        "uk": (
            r"коли\b",
            r"що (?:сталося|трапилося|було)",
            r"що ми (?:вирішили|зробили)",
            r"минулого разу",
            r"останній раз",
            r"пам'ятаєш",
            r"памʼятаєш",
        ),
    },
    "decision": {
        "en": (r"should (?:we|i)\b", r"do we want to", r"is it a good idea"),
        "pt": (r"devo\b", r"devemos\b", r"vale a pena"),
        "ru": (r"стоит ли", r"нужно ли", r"следует ли"),
        "uk": (r"чи варто", r"чи треба", r"чи слід"),
    },
    "semantic": {
        "en": (
            r"what (?:is|are|was|were)\b",
            r"what's\b",
            r"what do (?:we|you|i) know",
            r"who (?:is|are)\b",
            r"which\b",
            r"define\b",
            r"definition of",
            r"meaning of",
            r"what does .+ mean",
            r"tell me about",
            r"do we (?:use|have|prefer)",
        ),
        "pt": (
            r"o que (?:é|são|sabemos)",
            r"qual (?:é|o|a)\b",
            r"quais (?:são|os|as)\b",
            r"quem é",
            r"defina",
            r"definição de",
            r"significado de",
        ),
        "ru": (
            r"что (?:такое|мы знаем|известно)",
            r"какой\b",
            r"какая\b",
            r"какое\b",
            r"какие\b",
            r"кто (?:такой|такая)",
            r"определение",
        ),
        "uk": (
            r"що (?:таке|ми знаємо|відомо)",
            r"який\b",
            r"яка\b",
            r"яке\b",
            r"які\b",
            r"хто (?:такий|така)",
            r"визначення",
        ),
    },
}
CHECK_ORDER = ("validate", "procedural", "episodic", "decision", "semantic")
PRIMARY = {
    "episodic": "episodic",
    "semantic": "semantic",
    "procedural": "procedural",
    "validate": "semantic",
}

# "what happened last week": a window, asked for as a timeline.
WINDOWS: tuple[tuple[str, int, int], ...] = (
    # pattern, days back to start, days back to end (0 = now)
    (r"\btoday\b|\bhoje\b|\bсегодня\b|\bсьогодні\b", 0, 0),
    (r"\byesterday\b|\bontem\b|\bвчера\b|\bвчора\b", 1, 1),
    (r"\bthis week\b|\besta semana\b|\bна этой неделе\b|\bцього тижня\b|\bна цьому тижні\b", 7, 0),
    (
        r"\blast week\b|\bpast week\b|\bsemana passada\b|\búltima semana\b|\bна прошлой неделе\b"
        r"|\bминулого тижня\b|\bна минулому тижні\b",
        14,
        0,
    ),
    (r"\bthis month\b|\beste mês\b|\bв этом месяце\b|\bцього місяця\b", 31, 0),
    (r"\blast month\b|\bmês passado\b|\bв прошлом месяце\b|\bминулого місяця\b", 62, 0),
)
TIMELINE = re.compile(
    r"what happened|what did we do|o que aconteceu|o que fizemos"
    r"|что (?:произошло|случилось)|что мы сделали"
    r"|що (?:сталося|трапилося)|що ми зробили"
)


class Route(Record, frozen=True):
    """Where a query goes: ``intent``, the memory ``kind`` to prefer (None: all alike), whether
    to list results by time, and the cue that decided it."""

    intent: str
    kind: str | None
    order: str = "relevance"  # or "time" (newest first)
    cue: str | None = None
    language: str | None = None
    since: dt.datetime | None = None  # a timeline's window: a filter
    until: dt.datetime | None = None
    window: tuple[dt.datetime, dt.datetime] | None = None  # a period named in passing: a boost

    def as_dict(self) -> dict[str, object]:
        return {
            "intent": self.intent,
            "kind": self.kind,
            "order": self.order,
            "cue": self.cue,
            "language": self.language,
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            "window": [w.isoformat() for w in self.window] if self.window else None,
        }


_COMPILED = {
    intent: [(lang, re.compile(r"(?<!\w)" + p)) for lang, pats in langs.items() for p in pats]
    for intent, langs in CUES.items()
}
KIND_ALIASES = {
    **{t: t for t in TYPES},
    **KIND_TYPE,
    **{f"{kind}s": t for kind, t in KIND_TYPE.items()},
}


def normalise_kind(kind: str | None) -> str | None:
    """``episode``/``fact``/``procedure`` (or a type name) -> the memory type; None stays None."""
    if kind is None or kind == "" or kind == "any":
        return None
    try:
        return KIND_ALIASES[kind.strip().lower()]
    except KeyError:
        from ..errors import MemvaultError

        raise MemvaultError(
            f"expected episodic|semantic|procedural (or episode|fact|procedure), got {kind!r}",
            key="kind",
        ) from None


def route(query: str, kind: str | None = None, now: dt.datetime | None = None) -> Route:
    """Classify ``query``. ``kind`` (episodic|semantic|procedural) overrides the cues."""
    forced = normalise_kind(kind)
    text = " ".join(query.lower().split())
    window = _window(text, now)
    if forced is not None:
        return Route(forced, forced, cue=f"--kind {forced}")
    best: tuple[int, int, str, str, str] | None = None  # (position, check order, intent, cue, lang)
    for order, intent in enumerate(CHECK_ORDER):
        for lang, pattern in _COMPILED[intent]:
            m = pattern.search(text)
            if m is None:
                continue
            # validation cues win wherever they are; other intents: the earliest cue wins
            pos = -1 if intent == "validate" else m.start()
            cand = (pos, order, intent, m.group(0), lang)
            if best is None or cand[:2] < best[:2]:
                best = cand
    listing = _is_listing(text, window is not None)
    if best is None:
        if window is not None and listing:  # "yesterday?", "last week"
            return Route("episodic", "episodic", "time", None, None, *window)
        return Route("general", None, window=window)
    _, _, intent, cue, lang = best
    if intent == "episodic":
        if listing:  # "what happened last week?": that window, newest first
            since, until = window if window else (None, None)
            return Route(intent, "episodic", "time", cue, lang, since, until)
        return Route(intent, "episodic", "relevance", cue, lang, window=window)
    if intent == "decision":
        return Route(intent, None, cue=cue, language=lang, window=window)
    return Route(intent, PRIMARY[intent], cue=cue, language=lang, window=window)


# Words that may follow "what happened" in a request for a plain timeline.
_FILLER_WORDS = (
    "recently lately so far since then yet here there around us me we in the of meanwhile "
    "overall recente recentemente ultimamente недавно последнее время нещодавно останнім часом"
)
_TIMELINE_FILLERS = frozenset(_FILLER_WORDS.split())


def _is_listing(text: str, has_window: bool) -> bool:
    """A request for a timeline: "what happened?", "what happened last week?", "yesterday?".
    "What happened at the concert?" or "what did Joanna write yesterday?" ask about one
    thing (best match first; the period only weighs in)."""
    for pattern, _, _ in WINDOWS:
        text = re.sub(pattern, " ", text)
    m = TIMELINE.search(text)
    rest = re.findall(r"\w+", text[m.end() :] if m else text)
    if m is None and not has_window:
        return False
    return all(word in _TIMELINE_FILLERS for word in rest)


def _window(text: str, now: dt.datetime | None) -> tuple[dt.datetime, dt.datetime] | None:
    now = now or dt.datetime.now(dt.UTC)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    for pattern, start_back, end_back in WINDOWS:
        if re.search(pattern, text):
            start = today - dt.timedelta(days=start_back)
            end = now if end_back == 0 else today - dt.timedelta(days=end_back - 1)
            return start, end
    return None


def strip_cue(statement: str) -> str:
    """The claim inside "is it true that <claim>?" (validation cues removed)."""
    text = statement.strip()
    lowered = text.lower()
    for _, pattern in _COMPILED["validate"]:
        m = pattern.search(lowered)
        if m is not None and m.start() <= 2:
            text = text[m.end() :]
            break
    return text.strip(" ,:;?!¿").strip() or statement.strip()
