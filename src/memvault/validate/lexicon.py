"""The closed word classes ``validate`` reads claims with, in English, Portuguese, Russian
and Ukrainian: units, number words, weekdays, months, parts of the day, negation,
permission words (frozen/forbidden vs allowed/preferred), the words that mark a rejected
alternative ("instead of", "замість"), and a few names and words teams write several ways.

Words are matched in lower case after :func:`memvault.language.normalise`; Russian and
Ukrainian entries are lemmas or stems (the text's lemmas are looked up too), so one entry
covers a word's cases.
"""

from __future__ import annotations


def word_set(text: str) -> frozenset[str]:
    """The words of ``text``, split at spaces: how every list here is written."""
    return frozenset(text.split())


# --- units: word -> (dimension, factor to the dimension's base unit) ------------------------

_TIME = {
    "ms msec msecs millisecond milliseconds milissegundo milissegundos мс миллисекунда "
    "миллисекунд миллисекунды мілісекунда мілісекунд мілісекунди": 0.001,
    "s sec secs second seconds seg segundo segundos с сек секунда секунд секунды секунду "
    "секунди": 1.0,
    "min mins minute minutes minuto minutos мин минута минут минуты минуту хв хвилина хвилин "
    "хвилини хвилину": 60.0,
    "h hr hrs hour hours hora horas ч час часа часов годину година годин години": 3600.0,
    "day days dia dias день дня дней дні днів доба доби діб сутки суток": 86400.0,
    "week weeks semana semanas неделя недели недель неделю тиждень тижні тижнів тижня": 604800.0,
    "month months mês meses месяц месяца месяцев місяць місяці місяців": 2592000.0,
    "year years ano anos год года лет рік роки років": 31536000.0,
}
_SIZE = {
    "b byte bytes байт байта байтов": 1.0,
    "kb kib kilobyte kilobytes кб кбайт килобайт кілобайт": 1e3,
    "mb mib megabyte megabytes мб мбайт мегабайт мегабайта мегабайтов": 1e6,
    "gb gib gigabyte gigabytes гб гбайт гигабайт гігабайт": 1e9,
    "tb tib terabyte terabytes тб терабайт": 1e12,
}
_PERCENT = "% percent pct процент процента процентов відсоток відсотки відсотків"
_MONEY = {
    "usd": "$ usd dollar dollars dólar dólares доллар доллара долларов долар долари доларів",
    "eur": "€ eur euro euros евро євро",
    "brl": "r$ brl real reais",
    "rub": "₽ rub руб рубль рубля рублей",
    "uah": "₴ uah грн гривня гривні гривень",
}

UNITS: dict[str, tuple[str, float]] = {}
for _table, _dim in ((_TIME, "time"), (_SIZE, "size")):
    for _names, _factor in _table.items():
        for _name in _names.split():
            UNITS[_name] = (_dim, _factor)
for _name in _PERCENT.split():
    UNITS[_name] = ("percent", 1.0)
for _code, _names in _MONEY.items():
    for _name in _names.split():
        UNITS[_name] = (f"money:{_code}", 1.0)
# "год" is a year in Russian and an hour (abbreviated) in Ukrainian.
UNITS_UK = {"год": ("time", 3600.0)}
# Words that read "per" before a time unit: "100 requests per minute", "100 por minuto".
PER = word_set("per a an each / por ao в на за")
VERSION_WORDS = word_set("version versão versao версия версии версию версії v")
AT_WORDS = word_set("at às as в о об ao")  # "at 3 hours" is a time of day
LONG_WORDS = word_set("long old wide high large")  # "12 characters long"
# Frequencies: "every 6 hours" is "4 times a day" (a rate of times, per second).
EVERY = word_set("every each cada каждые каждый каждую каждого кожні кожен кожну кожного")
TIMES = word_set("time times vez vezes раз раза разів рази")
TIMES_NUMBERS = {"once": 1.0, "twice": 2.0}
FREQUENCY = "~times"  # the counted unit of a frequency
# Multi-word units, joined before lookup.
PHRASE_UNITS = {("per", "cent"): "percent", ("por", "cento"): "percent"}

# --- numbers written as words ---------------------------------------------------------------

NUMBER_WORDS: dict[str, float] = {}
for _value, _names in {
    0: "zero nenhum ноль нуль",
    1: "one single um uma один одна одну одного одной",
    2: "two couple dois duas два две двух дві двох",
    3: "three três три трёх трех трьох",
    4: "four quatro четыре чотири",
    5: "five cinco пять п'ять",
    6: "six seis шесть шість",
    7: "seven sete семь сім",
    8: "eight oito восемь вісім",
    9: "nine nove девять дев'ять",
    10: "ten dez десять",
    11: "eleven onze одиннадцать одинадцять",
    12: "twelve dozen doze двенадцать дванадцять",
    14: "fourteen catorze quatorze четырнадцать чотирнадцять",
    15: "fifteen quinze пятнадцать п'ятнадцять",
    20: "twenty vinte двадцать двадцять",
    24: "",
    30: "thirty trinta тридцать тридцять",
    40: "forty quarenta сорок",
    45: "",
    50: "fifty cinquenta пятьдесят п'ятдесят",
    60: "sixty sessenta шестьдесят шістдесят",
    90: "ninety noventa девяносто дев'яносто",
    100: "hundred cem сто",
    1000: "thousand mil тысяча тисяча",
}.items():
    for _name in _names.split():
        NUMBER_WORDS[_name] = float(_value)
HALF = word_set("half meio meia пол пів півтори")
# Words that are numbers only right before a unit ("an hour", "uma semana", "одну неделю").
ARTICLE_NUMBERS = word_set("a an um uma один одна одну одного одной")

# --- time of the week, day and year ---------------------------------------------------------

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_WEEKDAY_STEMS = {
    "mon": "monday mon segunda понедельник понеділ",
    "tue": "tuesday tue tues terça terca вторник вівтор",
    "wed": "wednesday wed quarta среду средам средах серед",
    "thu": "thursday thu thurs quinta четверг четвер",
    "fri": "friday fri sexta пятниц п'ятниц",
    "sat": "saturday sat sábado sabado суббот субот",
    "sun": "sunday sun domingo воскресен неділ",
}
WEEKDAY_STEMS: tuple[tuple[str, str], ...] = tuple(
    (stem, day) for day, stems in _WEEKDAY_STEMS.items() for stem in stems.split()
)
# Portuguese "segunda", "quarta", "quinta" are also ordinals: a weekday only as "-feira"
# or after one of these words.
PT_ORDINAL_DAYS = word_set("segunda terça quarta quinta sexta")
PT_DAY_CUES = word_set("na nas às as toda todas de aos")
WEEKEND = word_set("weekend weekends выходные выходных выходным вихідні вихідних вихідними")
WORKDAYS = word_set("weekdays workdays будни будние буднях будні")
PARTS_OF_DAY: dict[str, str] = {}
for _part, _names in {
    "morning": "morning mornings manhã manhãs утро утром утра ранок зранку вранці ранку",
    "afternoon": "afternoon afternoons tarde tardes обеда обід обіду",
    "evening": "evening evenings вечер вечером вечера вечір ввечері вечора",
    "night": "night nights nightly tonight noite noites madrugada ночь ночью ночи ночные "
    "ночных ніч вночі нічні нічних",
}.items():
    for _name in _names.split():
        PARTS_OF_DAY[_name] = _part

MONTH_STEMS: tuple[tuple[str, int], ...] = tuple(
    (stem, month)
    for month, stems in enumerate(
        (
            "january jan janeiro январ січ",
            "february feb fevereiro феврал лют",
            "march mar março марта март берез",
            "april apr abril апрел квіт",
            "may maio мая май трав",
            "june jun junho июн черв",
            "july jul julho июл лип",
            "august aug agosto август серп",
            "september sep sept setembro сентябр верес",
            "october oct outubro октябр жовт",
            "november nov novembro ноябр листопад",
            "december dec dezembro декабр груд",
        ),
        1,
    )
    for stem in stems.split()
)
# Stems too short or too common to be matched by prefix: whole words only.
EXACT_MONTHS = word_set("jan feb mar apr may jun jul aug sep sept oct nov dec май мая марта март")

# --- negation, permission, rejected alternatives --------------------------------------------

_ANY_NEGATION = "не нет никогда ни ні ніколи без"  # Cyrillic words in any text
NEGATIONS = {
    "en": word_set(
        "not no never none nor cannot can't don't doesn't didn't isn't aren't wasn't weren't "
        "won't shouldn't mustn't haven't hasn't without nobody nothing " + _ANY_NEGATION
    ),
    "pt": word_set("não nao nunca nem sem jamais ninguém nada nenhum nenhuma " + _ANY_NEGATION),
    "ru": word_set("не нет никогда ни без никто ничто"),
    "uk": word_set("не ні ніколи без ніхто ніщо"),
}
ALL_NEGATIONS = frozenset().union(*NEGATIONS.values())
# Negations that are prepositions: they deny the phrase they head, not the clause. Not
# Russian or Ukrainian "без": its idioms ("без пяти девять", "без сомнения") are no phrase
# denied, and TERRa's tune split did not move with it.
WITHOUT = frozenset({"without", "sem"})
# Permission words: +1 for allowed/preferred, -1 for frozen/forbidden (lemmas or stems).
_FORBIDDING = word_set(
    "disallow discourag небажан forbid prohibit ban banned freez frozen block avoid "
    "off-limits veto proib vedad vedar congel bloque evitar evita desaconselh запрет запрещ "
    "замороз заморож блокир избега нельзя недопустим заборон уника неприпустим"
)
_ALLOWING = word_set(
    "allow allowed permit prefer fine ok okay acceptable encourag recommend favourite "
    "favorite welcome ideal permiti preferi preferível liberad recomend aceitável favorit "
    "разреш можно предпочт любим рекоменд допуст нормальн приветств дозвол можна бажан "
    "улюблен найкращ"
)
POLARITY: tuple[tuple[str, int], ...] = (
    *((w, -1) for w in sorted(_FORBIDDING)),
    *((w, 1) for w in sorted(_ALLOWING)),
)
# A rejected alternative follows these: "PostgreSQL over MySQL" (after a choice verb),
# "instead of", "rather than", "decided against", "em vez de", "вместо", "замість", "а не".
REJECT_NEXT = (
    ("instead", "of"),
    ("rather", "than"),
    ("in", "place", "of"),
    ("against",),
    ("em", "vez", "de"),
    ("ao", "invés", "de"),
    ("no", "lugar", "de"),
    ("em", "lugar", "de"),
    ("вместо",),
    ("замість",),
    ("а", "не"),
    ("відмовилися", "від"),
    ("відмовились", "від"),
    ("отказались", "от"),
    ("deixamos", "de", "usar"),
    ("no", "longer", "use"),
    ("stopped", "using"),
)
CHOICE_VERBS = word_set(
    "choose chose chosen pick picked prefer preferred select selected favour favor opt opted "
    "escolhemos escolheu escolhido preferimos выбрали предпочли обрали обрано"
)
# "replaced Y with X", "moved from Y to X": Y is rejected.
REPLACE_VERBS = word_set(
    "replace replaced replacing swap swapped substituímos substituiu substituído substituída "
    "trocamos trocou заменили заменён заменен заменить замінили замінено замінити"
)
MOVE_VERBS = word_set(
    "move moved migrate migrated switch switched went migramos mudamos passamos перешли "
    "переехали мигрировали перейшли переїхали мігрували"
)
FROM_WORDS = word_set("from de da do с со з із")
PASSIVE_WORDS = word_set("was were been is are foi foram был была были было був була були було")
BY_WORDS = word_set("by with por на")
# "Jenkins was retired": what comes before is no longer in use.
RETIRED = word_set(
    "ruled-out phased-out retired dropped deprecated decommissioned removed rejected abandoned "
    "sunset discontinued "
    "descontinuado descontinuada aposentado aposentada abandonado abandonada removido rejeitado "
    "rejeitada отклонён отклонен отклонили выведен удалён удален відхилено виведено видалено"
)

# --- what a sentence only hedges, and what a statement makes absolute ---------------------


def _concepts(table: dict[str, str]) -> dict[str, str]:
    return {word: concept for concept, words in table.items() for word in words.split()}


# A sentence that says something only may be so, is said or believed to be so, or is wanted,
# planned, promised or tried does not state it: "the daughter may be involved in the theft"
# does not say she is, "they promise a thaw by Friday" does not say it will thaw. Words (and
# lemmas) -> the one concept each language's word stands for, so that a statement hedged the
# same way, in any of the four languages, is still stated. English and Portuguese modal
# verbs (may, can, pode) are not here: they moved no public figure, and a team's "may" is
# mostly a permission; Russian and Ukrainian ones moved TERRa (docs/validate.md).
HEDGES = _concepts(
    {
        "possible": "perhaps maybe possibly probably likely presumably "
        "talvez possivelmente provavelmente "
        "мочь может могут мог могла могли могло возможно вероятно наверное видимо "
        "може можуть міг могла могли можливо ймовірно мабуть напевно",
        "hearsay": "allegedly reportedly supposedly purportedly supostamente alegadamente "
        "якобы будто нібито начебто",
        "intent": "want wants wanted intend intends intended plan plans planned hope hopes "
        "hoped promise promises promised try tries tried attempt attempts attempted "
        "querer quer querem queria queriam pretende pretendem planeja planejam espera esperam "
        "prometer promete prometem prometeu tentar tenta tentam tentou "
        "propose proposes proposed propõe propõem propôs propor "
        "хотеть планировать собираться намереваться надеяться обещать пытаться стараться "
        "мечтать предлагать запланировать пообещать попытаться постараться предложить "
        "хотіти планувати збиратися сподіватися обіцяти намагатися прагнути пропонувати "
        "запланувати пообіцяти спробувати постаратися запропонувати "
        "инициатива ініціатива пусть нехай",
        "question": "whether ли чи",
        "almost": "almost nearly quase почти майже",
        "sometimes": "often usually sometimes occasionally rarely seldom mostly frequently "
        "generally normally typically frequentemente geralmente normalmente raramente "
        "ocasionalmente часто иногда обычно редко порой зачастую іноді інколи зазвичай рідко",
        "belief": "believe believes believed think thinks thought suspect suspects suspected "
        "claim claims claimed expect expects expected acredita acreditam acha acham suspeita "
        "suspeitam "
        "утверждать считать полагать думать предполагать подозревать ожидать уверенный "
        "впевнений "
        "стверджувати вважати думати припускати підозрювати очікувати",
    }
)
# Words that make a statement absolute: the fact must say the same, not merely agree with the
# rest ("the couple dated for exactly two years" is not stated by "... for the last two
# years"). "Always" and "never" are not among them: a fact said plainly holds always, and one
# said "often" is hedged (HEDGES).
ABSOLUTES = _concepts(
    {
        "already": "already уже вже",
        "exactly": "exactly exatamente ровно рівно",
        "only": "only apenas somente só только лишь тільки лише",
        "all": "all every entire todos todas tudo inteiro inteira весь все всё вся целый "
        "увесь усі все вся ціла цілий",
        "certainly": "certainly definitely surely certamente definitivamente точно "
        "непременно наверняка неодмінно",
    }
)

# Words that start a relative clause (validate.words.parts); Russian "который" and
# Ukrainian "котрий" are matched by their stems.
RELATIVE_WORDS = word_set(
    "who whom whose which where que onde cujo cuja где куда чей чья чьё чьи "
    "який яка яке які якого якої якому якій яким якими яких якою де куди чий чия чиє чиї"
)

# --- where a clause's subject ends -----------------------------------------------------

# Auxiliaries, modals and copulas: the subject ("the order service") is what comes before.
AUXILIARIES = word_set(
    "is are was were be been being am must should shall can could will would may might has have "
    "had does do did need needs "
    "é são foi foram está estão deve devem pode podem precisa precisam tem têm fica ficam vai "
    "является являются должен должна должно должны может могут будет будут есть "
    "є має мають повинен повинна повинні може можуть буде будуть — –"
)
# Words that start a new subject: "an alert fires when *memory usage* goes above 85%".
SUBORDINATORS = word_set("when if while whenever quando se enquanto когда если пока коли якщо поки")
# Words after which an English "-s" word is a verb ("RabbitMQ carries *the* events").
DETERMINERS = word_set("the a an our their its all every each no any this these those")
# Required vs optional (a third axis beside allowed/forbidden).
REQUIRED = word_set(
    "mandatory required compulsory obligatory obrigatório obrigatória обязательно обязательный "
    "обязательна обов'язково обов'язковий обов'язкова"
)
OPTIONAL = word_set(
    "optional opcional facultativo facultativa необязательно необязательный необов'язково "
    "необов'язковий"
)
# "from Monday to Friday", "de segunda a sexta", "с понедельника по пятницу"
RANGE_TO = word_set("to through thru till until a até по до -")

# --- names and words written several ways --------------------------------------------------

ALIASES = {
    "postgres": "postgresql",
    "постгрес": "postgresql",
    "k8s": "kubernetes",
    "кубернетес": "kubernetes",
    "mongo": "mongodb",
    "golang": "go",
    "js": "javascript",
    "ts": "typescript",
    "gpt": "gpt",
    "кафка": "kafka",
    "редис": "redis",
    "дженкинс": "jenkins",
    "докер": "docker",
}
# Forms of two or three words read as one (matched on the words or on their lemmas).
PHRASES = {
    ("back", "up"): "backup",
    ("time", "out"): "timeout",
    ("on", "call"): "oncall",
    ("pull", "request"): "pullrequest",
    ("merge", "request"): "pullrequest",
    ("banco", "de", "dados"): "database",
    ("base", "de", "dados"): "database",
    ("database", "data"): "database",  # "база данных", "база даних" (lemmas)
    ("database", "de", "data"): "database",  # "banco(s) de dados" (lemmas)
    ("tempo", "limite"): "timeout",
    ("nota", "fiscal"): "invoice",
    ("ar", "livre"): "fora",  # "ao ar livre", "do lado de fora", "lá fora": outdoors
    ("lado", "de", "fora"): "fora",
    ("fora", "do", "ar"): "offline",  # a server "fora do ar" is down, not outdoors
    ("a", "gente"): "nós",  # "a gente" is "we", not people
    ("ruled", "out"): "ruled-out",
    ("phased", "out"): "phased-out",
}

# Words that qualify a subject: a claim about "staging" is not decided by a fact about
# "production" (classes of mutually exclusive qualifiers).
QUALIFIERS: dict[str, str] = {}
for _cls, _names in {
    "env": "production staging dev development test testing qa sandbox preview local "
    "stage homologação стейджинг стейдж тест тестовый",
    "tier": "public internal admin private partner pública público interno internal "
    "публичный внутренний публічний внутрішній",
    "side": "frontend backend mobile web desktop ios android",
    "token": "access refresh",
    "rw": "read write",
    "role": "main replica secondary",
}.items():
    for _name in _names.split():
        QUALIFIERS[_name] = _cls

# Verbs with little content of their own ("runs on", "lives in", "is hosted on"); they
# also end a clause's subject.
VERBS = word_set(
    "use uses used using run runs running ran live lives host hosted work works happen happens "
    "take takes taken go goes went make makes made get gets begin begins start starts last "
    "lasts serve served power powered handle handles "
    "usar usamos usa usam funcionar funciona rodar roda trabalhar trabalha acontecer "
    "использовать используем используется работать работает "
    "використовувати використовуємо використовується працювати працює"
)
# Function words: never content (beyond memvault.index.query.STOPWORDS, which keeps
# "not", "over", "can" ... that this module reads as negation or choice).
_FUNCTION_WORDS = word_set(
    "we our us you your they their it its the a an is are was were be been being am do does did "
    "have has had having will would shall should can could may might must need needs needed "
    "to of in on at by for with from as into onto about than then this that these those "
    "there here which who whom what when where how also still now currently always just only "
    "use used uses using all any each every some other same such very more most less least "
    "up down out over under within after before until since during per via through "
    "and or but if so because while both either "
    "get got go goes going make makes made take takes taken run runs running ran live lives "
    "host hosted last lasts work works happen happens begin begins start starts maximum minimum "
    "max enough "
    "como depois fazer faz trabalhar trabalha acontecer acontece máximo mínimo "
    "после работать работает происходить проходить проводиться составлять составляет делать "
    "максимум минимум після працювати працює відбуватися відбувається проходити проводитися "
    "становити становить робити "
    "algum alguma alguns algumas something algo что-то щось "
    "pelo pela pelos pelas dum duma neste nesta nesse nessa naquele "
    "naquela deste desta desse dessa daquele daquela dele dela deles delas seus suas "
    "usamos usa usar é são foi ser estar está estão o os a as um uma de da do das dos em no na "
    "nos nas por para com que se ao aos à às e ou mas até nosso nossa nossos nossas seu sua "
    "deve devem pode podem precisa precisam tem têm ter fica ficam "
    # (the English words above in Portuguese: also, still, now, currently, only, there, here,
    # each, between, during, since, through; not "mais"/"menos", "mesmo"/"outro", "muito",
    # "sempre": "mais de 2 GB" is not "menos de 2 GB")
    "também ainda agora atualmente só apenas lá aqui ali cada entre durante desde através "
    "мы наш наша наше наши у нас в во на по с со к о об от до из за для и или но а что это "
    "быть есть был была были будет используем используется использовать можем должен должна "
    "должно должны сейчас теперь всегда уже "
    "ми наш наша наше наші в нас у на по з зі до від для і й та або але а що це бути є був "
    "була було були буде використовуємо використовується використовувати має мають зараз "
    "тепер завжди вже"
)

FUNCTION_WORDS = _FUNCTION_WORDS | VERBS
# The verbs among the function words: not content for a subject, but a claim's "is running"
# is not stated by a fact that says "is sitting" (see weigh: any verb of these in the fact
# stands for the claim's, as "runs on" and "is hosted on" do).
LIGHT_VERBS = VERBS | word_set(
    "get gets got going make makes made take takes taken run runs running ran live lives host "
    "hosted last lasts work works happen happens begin begins start starts fazer faz trabalhar "
    "trabalha acontecer acontece работать работает делать працювати працює робити"
)

# --- kinds: a general word is stated by a fact that names one of its kind ---------------------

# "A person is playing" is stated by "a man is playing" (not the reverse). Lemmas, in the four
# languages; each line: the general words, then the words of their kind.
_KINDS = (
    (
        "person people someone somebody human pessoa gente alguém человек кто-то людина хтось",
        "man woman boy girl child kid lady guy gentleman teenager teen toddler baby adult player "
        "student policeman officer cyclist biker rider skateboarder surfer dancer singer "
        "musician worker chef cook doctor nurse soldier athlete runner swimmer climber skier "
        "snowboarder performer artist driver tourist wrestler boxer "
        "homem mulher menino menina criança garoto garota rapaz moça senhora senhor bebê "
        "cara adolescente estudante policial motociclista ciclista jogador jogadora dançarino "
        "dançarina cantor cantora músico trabalhador cozinheiro cozinheira médico médica "
        "soldado atleta artista motorista surfista skatista turista "
        "мужчина женщина мальчик девочка ребёнок ребенок девушка парень "
        "студент полицейский велосипедист мотоциклист танцор певец певица музыкант рабочий "
        "повар врач солдат спортсмен водитель турист игрок "
        "чоловік жінка хлопчик дівчинка дитина дівчина хлопець "
        "поліцейський мотоцикліст танцюрист співак співачка робітник кухар лікар водій "
        "гравець",
    ),
    ("child kid criança ребёнок ребенок дитина", "boy girl toddler baby menino menina"),
    (
        "animal pet animal животное тварина",
        "dog puppy cat kitten horse bird cow sheep goat pig monkey "
        "fish rat mouse rabbit frog turtle snake lion tiger bear deer duck chicken kangaroo "
        "elephant dolphin squirrel badger cheetah camel zebra giraffe parrot "
        "cachorro cão gato cavalo pássaro peixe rato coelho sapo tartaruga cobra leão tigre "
        "urso veado pato galinha canguru elefante golfinho esquilo texugo chita camelo zebra "
        "girafa papagaio filhote gambá skunk "
        "собака кошка лошадь птица рыба крыса мышь кролик лягушка черепаха змея лев тигр "
        "медведь олень утка курица кенгуру слон дельфин белка "
        "кіт кінь птах риба щур миша кролик жаба черепаха змія лев тигр ведмідь олень качка "
        "курка кенгуру слон дельфін білка",
    ),
    ("woman lady mulher senhora", "woman lady mulher senhora"),
    # one thing, two words (a line of synonyms: each is stated by the others)
    ("boy menino garoto", "boy menino garoto"),
    ("girl menina garota", "girl menina garota"),
    ("dog cão cachorro", "dog cão cachorro"),
    ("kid child", "kid child"),
    (
        "someone somebody alguém person people pessoa gente",
        "someone somebody alguém person people pessoa gente",
    ),
    ("cut cortar резать різати", "slice chop dice fatiar picar"),
    (
        "instrument instrumento инструмент інструмент",
        "guitar piano keyboard violin drum drums flute trumpet saxophone cello harp "
        "violão guitarra teclado violino bateria flauta trompete гитара пианино скрипка "
        "гітара піаніно скрипка",
    ),
    (
        "vehicle veículo транспорт",
        "car truck bus motorcycle bike bicycle van jeep carro caminhão ônibus moto bicicleta jipe",
    ),
    ("plane airplane aeroplane avião", "plane airplane aeroplane avião"),
    ("motorcycle motorbike moto motocicleta", "motorcycle motorbike moto motocicleta"),
    ("path trail trilha", "path trail trilha"),
    ("rope cord corda", "rope cord corda"),
    ("man guy homem cara", "man guy homem cara"),
    ("teen teenager teenage adolescente", "teen teenager teenage adolescente"),
    ("show display exibir mostrar", "show display exibir mostrar"),
    ("jump leap pular saltar", "jump leap pular saltar"),
    ("weight weights peso pesos", "barbell dumbbell haltere"),
    ("shout yell gritar berrar", "shout yell gritar berrar"),
    ("quickly rapidly rapidamente velozmente", "quickly rapidly rapidamente velozmente"),
    ("fighter lutador combatente", "fighter lutador combatente"),
    ("pasta massa macarrão", "pasta massa macarrão"),
    ("meat carne", "sausage salsicha steak bife"),
    ("sofa couch sofá", "sofa couch sofá"),
    ("sob embaixo debaixo", "sob embaixo debaixo"),  # under (English's is a function word)
    (
        "color colour cor цвет колір",
        "black white red blue green yellow brown orange pink purple gray grey tan "
        "preto preta branco branca vermelho vermelha azul verde amarelo amarela marrom "
        "laranja rosa roxo roxa cinza черный чёрный белый красный синий зеленый зелёный "
        "желтый жёлтый коричневый оранжевый розовый серый чорний білий червоний синій "
        "зелений жовтий коричневий помаранчевий рожевий сірий",
    ),
)
KINDS: dict[str, frozenset[str]] = {}
for _general, _kinds in _KINDS:
    for _word in _general.split():
        KINDS[_word] = KINDS.get(_word, frozenset()) | word_set(_kinds) - {_word}
# A kind's other words are kinds too: a line of synonyms ("boy menino garoto") makes a
# "garoto" a child as "boy" is.
_SAME = {w: word_set(g) for g, k in _KINDS if g == k for w in g.split()}
for _word, _members in list(KINDS.items()):
    KINDS[_word] = _members.union(*(_SAME.get(k, frozenset()) for k in _members)) - {_word}
# Every noun of the kinds above: read as itself, whatever a dictionary makes of it (its
# Portuguese lemmas make "cara" (guy) "caro", "garotas" "garotar").
KIND_NOUNS = frozenset(w for _general, _kinds in _KINDS for w in f"{_general} {_kinds}".split())
# ... except where two of them are one word: a Portuguese colour agrees with its noun.
ONE_WORD = {"vermelha": "vermelho", "branca": "branco", "preta": "preto", "amarela": "amarelo"}
ONE_WORD |= {"roxa": "roxo"}

# --- opposites: a claim with one of these is not stated by a fact with the other ------------

# Bounds of a value: "more than 100" is not "less than 100" (English's are function words
# elsewhere; Portuguese's are content words already).
BOUNDS = word_set("more less fewer")

_OPPOSITES = (
    ("more mais", "less fewer menos"),
    ("near close nearby perto близко поблизу", "far distant longe далеко"),
    ("full cheio cheia полный повний", "empty vazio vazia пустой порожній"),
    ("inside indoors dentro внутри всередині", "outside outdoors fora снаружи зовні"),
    (
        "small little tiny pequeno pequena маленький малый маленький",
        "big large huge giant grande enorme большой огромный великий величезний",
    ),
    ("clean limpo limpa чистый чистий", "dirty sujo suja грязный брудний"),
    ("hot quente горячий гарячий", "cold frio fria холодный холодний"),
    ("open aberto aberta открытый відкритий", "closed shut fechado fechada закрытый закритий"),
    ("wet molhado molhada мокрый мокрий", "dry seco seca сухой сухий"),
    ("young jovem молодой молодий", "old elderly velho velha старый старий"),
    (
        "fast quick quickly rapidly rápido rápida быстрый швидкий",
        "slow slowly lento lenta devagar медленный повільний",
    ),
    ("happy feliz счастливый щасливий", "sad triste грустный сумний"),
    ("add adicionar добавить додати", "remove remover убрать прибрати"),
    ("front frente перед", "behind atrás позади за"),
)


def _both_ways(pairs: tuple[tuple[str, str], ...]) -> dict[str, frozenset[str]]:
    """Each word of either side of a pair -> the words of the other side."""
    out: dict[str, frozenset[str]] = {}
    for one, other in pairs:
        for a, b in ((one, other), (other, one)):
            for word in a.split():
                out[word] = out.get(word, frozenset()) | word_set(b)
    return out


OPPOSITES = _both_ways(_OPPOSITES)

# --- directions: particles that are not content words, yet "going up" is not "going down" ----

_DIRECTIONS = (
    ("up upward upwards cima", "down downward downwards baixo"),
    ("into in inside", "out outside"),
    ("on onto", "off"),
)
DIRECTIONS = _both_ways(_DIRECTIONS)
# Where a thing is, or a bound: "under the bed" is not "on the bed", "under 2 GB" not "over
# 2 GB" -- but each word has other senses ("on Mondays", "over 7 days", "see below"), so a
# place turns only against the same thing (validate.places.place_clash).
_PLACES = (
    ("under below beneath underneath abaixo", "on onto above over atop acima"),
    ("под під ниже нижче", "над выше вище"),
)
PLACES = _both_ways(_PLACES)
PLACE_SIDES = {w: word_set(side) for pair in _PLACES for side in pair for w in side.split()}
