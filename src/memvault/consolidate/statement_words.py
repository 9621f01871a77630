"""The words the chat statement reader (:mod:`memvault.consolidate.statements`) knows, in
the seeds' languages (English, Ukrainian, Russian, Portuguese): what makes a sentence a
question, a hedge, a negation or a greeting; what counts as a value; the verbs that state
a fact (and the one way each is written); the phrases of a decision.

Kept apart from the reader: this is vocabulary to extend (a language, a verb), the reader is
the rule.
"""

from __future__ import annotations

import re


def _words(*items: str) -> str:
    """An alternation of phrases, longest first, matched as whole words."""
    ordered = sorted({re.escape(i).replace(r"\ ", r"\s+") for i in items}, key=len, reverse=True)
    return r"(?<!\w)(?:" + "|".join(ordered) + r")(?!\w)"


FLAGS = re.IGNORECASE | re.UNICODE

# --- what a statement must not be ----------------------------------------------------------

QUESTION_START = re.compile(
    r"^\s*"
    + _words(
        # en
        *[
            "what",
            "who",
            "whom",
            "whose",
            "where",
            "when",
            "why",
            "how",
            "which",
            "is",
            "are",
            "am",
            "do",
            "does",
            "did",
            "can",
            "could",
            "should",
            "would",
            "will",
            "shall",
            "has",
            "have",
            "was",
            "were",
            "isn't",
            "aren't",
            "don't",
            "doesn't",
            "any",
            "anyone",
            "anybody",
        ],
        "do you know",
        "i wonder",
        # uk / ru
        *[
            "що",
            "хто",
            "де",
            "коли",
            "чому",
            "навіщо",
            "як",
            "який",
            "яка",
            "яке",
            "які",
            "скільки",
            "чи",
            "чий",
            "что",
            "кто",
            "где",
            "когда",
            "почему",
            "зачем",
            "как",
            "какой",
            "какая",
            "какое",
            "какие",
            "сколько",
            "чей",
            "разве",
            "неужели",
        ],
        # pt
        *[
            "que",
            "quem",
            "onde",
            "quando",
            "porque",
            "como",
            "qual",
            "quais",
            "quanto",
            "quantos",
            "será",
        ],
        "por que",
        "o que",
        "você sabe",
        "vocês sabem",
    ),
    FLAGS,
)
HEDGE = re.compile(
    _words(
        # en: hedges, hypotheticals, plans and proposals not yet decided
        *[
            "maybe",
            "perhaps",
            "probably",
            "possibly",
            "might",
            "could",
            "would",
            "should",
            "if",
            "unless",
            "suppose",
            "supposing",
            "assuming",
            "assume",
            "imagine",
            "hypothetically",
            "guess",
            "suspect",
            "seems",
            "seem",
            "apparently",
            "likely",
            "unlikely",
            "wish",
            "hope",
            "hopefully",
            "planning",
            "considering",
            "propose",
            "proposal",
            "suggest",
            "suggestion",
            "wonder",
            "unsure",
            "gonna",
        ],
        "i think",
        "we think",
        "i believe",
        "i feel",
        "not sure",
        "in theory",
        "kind of",
        "sort of",
        "let's say",
        "what if",
        "may be",
        "plan to",
        "plans to",
        "going to",
        "want to",
        "would like",
        "thinking about",
        "will",
        "'ll",
        # uk
        *[
            "може",
            "можливо",
            "мабуть",
            "напевно",
            "напевне",
            "якщо",
            "якби",
            "гадаю",
            "здається",
            "припустімо",
            "припустимо",
            "уявімо",
            "ймовірно",
            "плануємо",
            "збираємося",
            "пропоную",
            "варто",
            "хотілося",
        ],
        "думаю",
        "не впевнений",
        "не впевнена",
        "треба б",
        # ru
        *[
            "может",
            "возможно",
            "наверное",
            "наверно",
            "если",
            "думаю",
            "кажется",
            "предположим",
            "допустим",
            "представим",
            "вероятно",
            "планируем",
            "собираемся",
            "предлагаю",
            "стоит",
            "хотелось",
            "бы",
            "ли",
        ],
        "не уверен",
        "не уверена",
        # pt
        *[
            "talvez",
            "acho",
            "achamos",
            "provavelmente",
            "possivelmente",
            "suponha",
            "supondo",
            "imagina",
            "imagine",
            "hipoteticamente",
            "parece",
            "poderia",
            "poderíamos",
            "deveria",
            "deveríamos",
            "seria",
            "planejamos",
            "pretendemos",
            "proponho",
            "sugiro",
            "vamos",
        ],
        "não tenho certeza",
        "pode ser",
        "quem sabe",
    ),
    FLAGS,
)
# Portuguese "se" is "if" at the start of a clause ("chama-se", "se chama" are not).
IF_PT = re.compile(r"(?:^|,\s*)se\s", FLAGS)
NEGATION = re.compile(
    r"n't\b|"
    + _words(
        # not "no": Portuguese "in the" ("fica no db-stg-3")
        *["not", "never", "nobody", "nothing", "none", "neither", "nor"],
        "no longer",
        *["не", "ні", "ніколи", "ніхто", "нічого", "нет", "никогда", "никто", "ничего"],
        *["não", "nunca", "nenhum", "nenhuma", "ninguém", "nada"],
    ),
    FLAGS,
)
GREETING = re.compile(
    r"^\s*"
    + _words(
        *["hi", "hello", "hey", "thanks", "thx", "bye", "cheers", "lol", "haha"],
        "thank you",
        "good morning",
        "good night",
        "see you",
        *["привіт", "дякую", "вітаю", "бувай"],
        "добрий день",
        "доброго ранку",
        *["привет", "спасибо", "пока", "здравствуйте"],
        "добрый день",
        "доброе утро",
        *["olá", "oi", "obrigado", "obrigada", "tchau", "valeu"],
        "bom dia",
        "boa tarde",
        "boa noite",
        "até logo",
    ),
    FLAGS,
)
# Who a statement may be about: not a bare pronoun ("it is on 3", "I am in Lisbon at 5").
VAGUE_SUBJECTS = frozenset(
    [
        "i",
        "you",
        "he",
        "she",
        "it",
        "they",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "which",
        "who",
        "everything",
        "something",
        "anything",
        "me",
        "him",
        "her",
        "them",
        "я",
        "ти",
        "ви",
        "він",
        "вона",
        "воно",
        "вони",
        "це",
        "то",
        "там",
        "тут",
        "ты",
        "вы",
        "он",
        "она",
        "оно",
        "они",
        "это",
        "там",
        "тут",
        "eu",
        "tu",
        "você",
        "vocês",
        "ele",
        "ela",
        "eles",
        "elas",
        "isso",
        "isto",
        "aquilo",
        "lá",
        "aqui",
    ]
)
# Leading words that carry no content: "btw, staging is on db-stg-3".
LEAD_IN = re.compile(
    r"^\s*(?:"
    + _words(
        *[
            "ok",
            "okay",
            "so",
            "also",
            "and",
            "btw",
            "fyi",
            "note",
            "yes",
            "yeah",
            "right",
            "well",
            "alright",
            "update",
            "reminder",
            "anyway",
        ],
        "by the way",
        "just so you know",
        "just fyi",
        "heads up",
        "for the record",
        "quick update",
        "good news",
        "remember",
        *["до речі", "нагадую", "отже", "так", "ок", "добре", "оновлення", "також"],
        "для довідки",
        "до відома",
        "на замітку",
        *["кстати", "напоминаю", "итак", "так", "ок", "хорошо", "обновление", "также"],
        "для справки",
        "к сведению",
        *["aliás", "então", "ok", "bom", "atualização", "lembrete", "também"],
        "para constar",
        "lembrando",
        "só pra avisar",
        "só para avisar",
        "pois é",
    )
    + r")\s*[,:!\u2014-]*\s*",
    FLAGS,
)

# --- what a value is -------------------------------------------------------------------------

WEEKDAYS = (
    r"(?<!\w)(?:mon|tues|wednes|thurs|fri|satur|sun)days?(?!\w)"
    r"|(?<!\w)(?:що)?(?:понеділ|вівтор|серед|четвер|п['’]ятниц|субот|неділ)\w*"
    r"|(?<!\w)(?:понедельник|вторник|сред[аыу]|среда[мх]|четверг|пятниц|суббот|воскресень)\w*"
    r"|(?<!\w)(?:segunda|terça|terca|quarta|quinta|sexta)(?:s)?(?:-feiras?)?(?!\w)"
    r"|(?<!\w)(?:sábado|sabado|domingo)s?(?!\w)"
)
MONTHS = (
    r"(?<!\w)(?:january|february|march|april|june|july|august|september|october|november"
    r"|december|січ|лют|берез|квіт|трав|черв|лип|серп|верес|жовт|листопад|груд|январ|феврал"
    r"|март|апрел|ма[йя]|июн|июл|август|сентябр|октябр|ноябр|декабр|janeiro|fevereiro|março"
    r"|abril|maio|junho|julho|agosto|setembro|outubro|novembro|dezembro)\w*"
)
VALUE = re.compile(
    r"\d"  # a number, a version, a time, a date
    r"|[#@]\w"  # a channel, a handle
    r"|\w[-_./:]\w"  # an identifier: db-stg-3, api.example.com, eu-west-1
    r"|`[^`]+`|\"[^\"]+\"|«[^»]+»"  # quoted
    r"|(?<=\s)[A-ZА-ЯІЇЄҐ][\w'’-]*"  # a name inside the sentence
    rf"|{WEEKDAYS}|{MONTHS}",
    re.UNICODE,
)

# --- what a statement looks like ------------------------------------------------------------

# Verbs that state where something is, now: written as one verb so that a move later is the
# same sentence pattern with another value.
MOVE_EN = _words(
    *(
        f"{aux}{verb} to"
        for aux in ("", "has ", "have ", "was ", "were ", "has been ", "have been ")
        for verb in ("moved", "migrated", "switched", "changed", "relocated")
    ),
    "now runs on",
    "now run on",
    "now lives on",
    "now lives in",
    "now lives at",
    "is now on",
    "are now on",
    "is now in",
    "are now in",
    "is now at",
    "are now at",
    "is now",
    "are now",
)
ON_EN = _words(
    "runs on",
    "run on",
    "is running on",
    "are running on",
    "is hosted on",
    "are hosted on",
    "is hosted at",
    "is deployed on",
    "are deployed on",
    "lives on",
    "live on",
    "sits on",
    "is on",
    "are on",
)
IN_EN = _words(
    "lives in",
    "live in",
    "is based in",
    "are based in",
    "is located in",
    "are located in",
    "is in",
    "are in",
)
STATE_EN = _words(
    "rotates on",
    "rotate on",
    "changes on",
    "change on",
    "changes every",
    "rotates every",
    "rotate every",
    "rotates",
    "rotate",
    "happens on",
    "happen on",
    "happens every",
    "happen every",
    "happens at",
    "runs every",
    "run every",
    "runs at",
    "run at",
    "starts at",
    "start at",
    "starts on",
    "ends at",
    "ends on",
    "is due on",
    "is due",
    "are due",
    "expires on",
    "expire on",
    "takes place on",
    "is every",
    "are every",
    "is scheduled for",
    "are scheduled for",
    "is set to",
    "are set to",
    "is called",
    "are called",
    "is named",
    "are named",
    "is owned by",
    "are owned by",
    "is managed by",
    "is run by",
    "is led by",
    "is at",
    "are at",
    "owns",
    "own",
    "leads",
    "lead",
    "uses",
    "use",
    "deploy on",
    "deploys on",
    "deploy every",
    "deploy at",
    "release on",
    "releases on",
    "meet on",
    "meet every",
    "meets on",
    "meets every",
    "meet at",
    "meets at",
    "is",
    "are",
    "equals",
)
MOVE_UK = _words(
    *(f"{v} на" for v in ("переїхав", "переїхала", "переїхало", "переїхали", "перейшов")),
    *(f"{v} на" for v in ("перейшла", "перейшло", "перейшли", "перенесли", "переведено")),
    "тепер працює на",
    "тепер працюють на",
    "тепер на",
)
ON_UK = _words(
    "працює на",
    "працюють на",
    "розміщений на",
    "розміщено на",
    "знаходиться на",
    "крутиться на",
    "живе на",
)
STATE_UK = _words(
    *[
        "змінюється",
        "міняється",
        "ротується",
        "відбувається",
        "відбуваються",
        "проходить",
        "проходять",
        "буває",
        "називається",
        "звуть",
        "використовує",
        "використовуємо",
        "використовують",
        "деплоїмо",
        "релізимо",
        "є",
    ],
    "починається о",
    "починається в",
    "закінчується о",
    "знаходиться в",
    "знаходиться у",
    "живе в",
    "живе у",
    "це",
    "—",
)
MOVE_RU = _words(
    *(f"{v} на" for v in ("переехал", "переехала", "переехало", "переехали", "перешёл")),
    *(f"{v} на" for v in ("перешел", "перешла", "перешло", "перешли", "перенесли")),
    "теперь работает на",
    "теперь работают на",
    "теперь на",
)
ON_RU = _words(
    "работает на",
    "работают на",
    "размещён на",
    "размещен на",
    "находится на",
    "крутится на",
    "живёт на",
    "живет на",
)
STATE_RU = _words(
    *[
        "меняется",
        "сменяется",
        "ротируется",
        "проходит",
        "проходят",
        "происходит",
        "бывает",
        "называется",
        "зовут",
        "использует",
        "используем",
        "используют",
        "деплоим",
        "релизим",
        "является",
    ],
    "начинается в",
    "заканчивается в",
    "находится в",
    "живёт в",
    "живет в",
    "это",
    "—",
)
MOVE_PT = _words(
    *(f"{v} para" for v in ("mudou", "mudou-se", "migrou", "passou", "foi movido", "foi migrado")),
    *(f"agora {v}" for v in ("está no", "está na", "está em", "roda no", "roda na", "roda em")),
    "agora fica no",
    "agora fica na",
    "agora fica em",
)
ON_PT = _words(
    *(f"{v} {p}" for v in ("está", "fica", "roda", "mora") for p in ("no", "na", "em")),
    *(f"{v} {p}" for v in ("estão", "ficam", "rodam") for p in ("no", "na", "em")),
    "está hospedado no",
    "está hospedado em",
    "está hospedada no",
    "está hospedada em",
)
STATE_PT = _words(
    *[
        "é",
        "são",
        "muda",
        "mudam",
        "reveza",
        "revezam",
        "alterna",
        "alternam",
        "gira",
        "acontece",
        "acontecem",
        "usa",
        "usamos",
        "usam",
        "chama-se",
    ],
    "se chama",
    "começa às",
    "começa em",
    "termina às",
    "vence em",
    "roda toda",
    "roda às",
)
# (pattern, canonical verb: None keeps the verb as said; "on" picks on/in/is by the value)
PREDICATES: tuple[tuple[re.Pattern[str], str | None], ...] = tuple(
    (re.compile(p, FLAGS), c)
    for p, c in (
        (MOVE_EN, "on"),
        (ON_EN, "on"),
        (IN_EN, "is in"),
        (STATE_EN, None),
        (MOVE_UK, "працює на"),
        (ON_UK, "працює на"),
        (STATE_UK, None),
        (MOVE_RU, "работает на"),
        (ON_RU, "работает на"),
        (STATE_RU, None),
        (MOVE_PT, "fica em"),
        (ON_PT, "fica em"),
        (STATE_PT, None),
    )
)
# When it was said, not what: "moved to db-stg-4 last night" states "is on db-stg-4".
WHEN_SAID = re.compile(
    r"(?:\s*,)?\s+"
    + _words(
        *["yesterday", "today", "tonight", "now", "recently", "again", "already"],
        "last night",
        "this morning",
        "this week",
        "last week",
        "earlier today",
        "as of today",
        "as of now",
        *[
            "вчора",
            "сьогодні",
            "тепер",
            "зараз",
            "вже",
            "вчера",
            "сегодня",
            "теперь",
            "сейчас",
            "уже",
        ],
        "минулого тижня",
        "цього тижня",
        "на прошлой неделе",
        "на этой неделе",
        *["ontem", "hoje", "agora", "já"],
        "semana passada",
        "esta semana",
        "essa semana",
    )
    + r"\s*$",
    FLAGS,
)
PT_ARTICLE = re.compile(r"^(?:o|a|os|as)\s+", FLAGS)

# "We decided to use Postgres 16", "from now on, deploys happen on Thursdays"
DECIDED = re.compile(
    r"^(?:(?:we|the team|everyone|i)\s+)?(?:have\s+|'ve\s+|just\s+|finally\s+|all\s+)*"
    r"(?P<verb>decided|agreed|settled|chose|picked|went with|are going with|'re going with)"
    r"(?:\s+(?P<link>to|that|on|upon))?\s*:?\s+(?P<rest>.+)$"
    r"|^(?:(?:ми|команда)\s+)?(?P<uk>вирішили|домовилися|домовились|погодилися|погодились"
    r"|обрали|вибрали|зупинилися\s+на|зупинились\s+на)\s*,?\s*(?P<uk_that>що\s+)?(?P<uk_rest>.+)$"
    r"|^(?:(?:мы|команда)\s+)?(?P<ru>решили|договорились|договорилась|согласились|выбрали"
    r"|остановились\s+на)\s*,?\s*(?P<ru_that>что\s+)?(?P<ru_rest>.+)$"
    r"|^(?:(?:nós|a\s+equipe|o\s+time)\s+)?(?P<pt>decidimos|combinamos|concordamos|escolhemos"
    r"|optamos\s+por|fechamos\s+com|ficou\s+decidido|ficou\s+combinado|está\s+decidido)"
    r"\s*,?\s*(?P<pt_that>que\s+)?(?:em\s+|por\s+)?(?P<pt_rest>.+)$"
    r"|^(?:let's|let\s+us|we'll|we\s+will|we're|we\s+are)\s+go(?:ing)?\s+with\s+(?P<go_rest>.+)$"
    r"|^(?:decision|it\s+was\s+decided|it's\s+decided)\s*(?::|that)\s*(?P<en_rest>.+)$",
    FLAGS,
)
FROM_NOW = re.compile(
    r"^(?:from\s+now\s+on|going\s+forward|starting\s+today|as\s+of\s+today|відтепер|віднині"
    r"|надалі|з\s+цього\s+моменту|з\s+сьогодні|отныне|впредь|с\s+этого\s+момента"
    r"|с\s+сегодняшнего\s+дня|a\s+partir\s+de\s+agora|a\s+partir\s+de\s+hoje"
    r"|daqui\s+para\s+frente|daqui\s+pra\s+frente|de\s+agora\s+em\s+diante)\s*[,:\u2014-]*\s*"
    r"(?P<rest>.+)$",
    FLAGS,
)
DECISION_PREFIX = {"uk": "Рішення", "ru": "Решение", "pt": "Decisão"}
SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
