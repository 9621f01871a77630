"""validate reads who did what, negation, opposites, kinds and frequencies (issue 25).

Each test writes its facts into a real vault (git, SQLite, Chroma; the fake embedder at the
model boundary) and asks ``vault.validate`` as the CLI and MCP do. Each one fails when the rule
it names is taken out.
"""

from __future__ import annotations

import pytest

from memvault import Vault
from memvault.validate.claims import read


def _verdict(vault: Vault, facts: list[str], statement: str) -> tuple[str, str]:
    for i, text in enumerate(facts):
        vault.add("semantic", text, id=f"f-{i}")
    result = vault.validate(statement, log=False)
    return result.verdict, result.why


def _expect(vault: Vault, fact: str, statement: str, verdict: str) -> None:
    """``statement`` against ``fact`` alone gets ``verdict`` (the why shown when not)."""
    got, why = _verdict(vault, [fact], statement)
    assert got == verdict, why


# --- coverage: every content word of the claim, in one sentence of one fact ------------------


def test_a_claim_that_adds_a_word_is_not_stated(vault: Vault) -> None:
    # 3 of its 4 content words are in the fact: the old 75 % rule called it supported
    verdict, why = _verdict(
        vault, ["A man is sitting in a field."], "A man is sitting in a field with a dog."
    )
    assert verdict == "unknown", why


def test_words_from_two_sentences_are_not_a_statement(vault: Vault) -> None:
    # Russian: no roles are read, so only the one-sentence rule stands between the two
    facts = ["Врачи приехали на место. Женщина вызвала полицию."]
    verdict, why = _verdict(vault, facts, "Врачи вызвали полицию.")
    assert verdict == "unknown", why


def test_a_measured_value_still_carries_a_paraphrase(vault: Vault) -> None:
    facts = ["The public API rate limit is 250 requests per minute per API key."]
    verdict, why = _verdict(vault, facts, "The public API allows 250 requests per minute per key.")
    assert verdict == "supported", why


# --- roles -------------------------------------------------------------------------------


def test_swapped_roles_are_not_stated(vault: Vault) -> None:
    facts = ["The woman is picking up the kangaroo."]
    verdict, why = _verdict(vault, facts, "The kangaroo is picking up the woman.")
    assert verdict == "unknown", why
    assert "another role" in why


def test_a_passive_states_its_active(vault: Vault) -> None:
    facts = ["The woman is picking up the kangaroo."]
    verdict, why = _verdict(vault, facts, "The kangaroo is being picked up by the woman.")
    assert verdict == "supported", why


def test_someone_else_did_it(vault: Vault) -> None:
    facts = ["Alice led the migration to PostgreSQL and Bob reviewed it."]
    verdict, why = _verdict(vault, facts, "Bob led the migration to PostgreSQL.")
    assert verdict == "unknown", why
    assert "does something else" in why


# --- negation, opposites, light verbs ----------------------------------------------------------


def test_two_negations_do_not_cancel(vault: Vault) -> None:
    facts = ["The young boys are playing outdoors and the man is smiling nearby."]
    statement = "There is no boy playing outdoors and there is no man smiling."
    verdict, why = _verdict(vault, facts, statement)
    assert verdict == "contradicted", why


def test_nobody_negates(vault: Vault) -> None:
    verdict, why = _verdict(
        vault, ["A man is playing the guitar."], "Nobody is playing the guitar."
    )
    assert verdict == "contradicted", why


def test_a_bare_negation_needs_the_rest_stated(vault: Vault) -> None:
    facts = ["A man is playing the flute."]
    verdict, why = _verdict(vault, facts, "There is no man playing soccer.")
    assert verdict == "unknown", why


def test_an_opposite_contradicts(vault: Vault) -> None:
    facts = ["The water in the pot is hot."]
    verdict, why = _verdict(vault, facts, "The water in the pot is cold.")
    assert (verdict, why.split("] ")[-1]) == ("contradicted", "cold vs the fact's hot"), why


def test_a_light_verb_needs_one_in_the_fact(vault: Vault) -> None:
    verdict, why = _verdict(vault, ["A man is sitting in a field."], "A man is running in a field.")
    assert verdict == "unknown", why


# --- kinds ------------------------------------------------------------------------------------


def test_a_general_word_is_stated_by_one_of_its_kind(vault: Vault) -> None:
    facts = ["A man is playing a guitar."]
    verdict, why = _verdict(vault, facts, "A person is playing an instrument.")
    assert verdict == "supported", why


def test_a_specific_word_is_not_stated_by_its_kind(vault: Vault) -> None:
    facts = ["A person is playing an instrument."]
    verdict, why = _verdict(vault, facts, "A man is playing a guitar.")
    assert verdict == "unknown", why


# --- numbers and arithmetic on frequencies ---------------------------------------------------

BACKUPS = ["Database backups are taken every 6 hours and kept for 35 days."]


@pytest.mark.parametrize(
    ("statement", "verdict"),
    [
        ("Database backups are taken four times a day.", "supported"),
        ("Os backups do banco de dados são feitos quatro vezes por dia.", "supported"),
        ("Database backups are taken twice a day.", "contradicted"),
        ("Database backups are taken every 8 hours.", "contradicted"),
        ("Database backups are kept for 30 days.", "contradicted"),
    ],
)
def test_frequencies_and_numbers(vault: Vault, statement: str, verdict: str) -> None:
    got, why = _verdict(vault, BACKUPS, statement)
    assert got == verdict, why


# --- what a fact only hedges, what a claim makes absolute, and the parts of a sentence -------


@pytest.mark.parametrize(
    ("fact", "statement"),
    [
        # possible, hearsay, intent, belief, almost: in each of the four languages
        (
            "The outage is probably caused by the new load balancer.",
            "The outage is caused by the new load balancer.",
        ),
        (
            "Мужчина сообщил, что к краже может быть причастна его дочь.",
            "К краже причастна его дочь.",
        ),
        (
            "Женщине он заявил, что якобы с ней хотели расправиться бандиты.",
            "С ней хотели расправиться бандиты.",
        ),
        ("O deploy provavelmente falha às sextas.", "O deploy falha às sextas."),
        (
            "Команда сподівається перейти на Kubernetes до березня.",
            "Команда перейде на Kubernetes до березня.",
        ),
        ("Неизвестный почти не оставил следов в доме.", "Неизвестный не оставил следов в доме."),
        ("Experts believe the cache is the bottleneck.", "The cache is the bottleneck."),
        # at times only: "often" does not say "never" (nor that it holds at all times)
        (
            "Часто двигатель не позволяет нам ехать в своем темпе.",
            "Двигатель никогда не позволяет нам ехать в своем темпе.",
        ),
        ("The nightly build usually fails on Mondays.", "The nightly build fails on Mondays."),
    ],
)
def test_a_hedged_fact_does_not_state_it(vault: Vault, fact: str, statement: str) -> None:
    verdict, why = _verdict(vault, [fact], statement)
    assert verdict == "unknown", why
    assert "only says" in why


def test_a_statement_hedged_the_same_way_is_stated(vault: Vault) -> None:
    # the hedge is the claim's too: nothing unsaid
    facts = ["Мужчина сообщил, что к краже может быть причастна его дочь."]
    verdict, why = _verdict(vault, facts, "К краже может быть причастна его дочь.")
    assert verdict == "supported", why


def test_a_hedge_in_another_sentence_does_not_count(vault: Vault) -> None:
    facts = ["The nightly backup runs at 02:00. We will probably move it to 03:00 next year."]
    verdict, why = _verdict(vault, facts, "The nightly backup runs at 02:00.")
    assert verdict == "supported", why


@pytest.mark.parametrize(
    ("fact", "statement"),
    [
        (
            "Следствие установило, что пара встречалась последние два года.",
            "Пара встречалась ровно два года.",
        ),
        ("Integration tests run in CI.", "Only integration tests run in CI."),
    ],
)
def test_an_absolute_the_fact_does_not_say_is_not_stated(
    vault: Vault, fact: str, statement: str
) -> None:
    verdict, why = _verdict(vault, [fact], statement)
    assert verdict == "unknown", why
    assert "doesn't say" in why


@pytest.mark.parametrize(
    ("fact", "statement"),
    [
        # an absolute the fact says too
        ("Only integration tests run in CI.", "Only integration tests run in CI."),
        # a fact said plainly holds always, a plain negation never; a prohibition too
        ("Deploys are frozen on Fridays.", "Deploys are always frozen on Fridays."),
        ("Deploys don't happen on Fridays.", "Deploys never happen on Fridays."),
        (
            "Production deploys are frozen on Friday afternoons.",
            "We never deploy to production on a Friday afternoon.",
        ),
        # a negated or restricted modal is a prohibition, an inability or a rule, not a hedge
        ("Contractors may not access production.", "Contractors cannot access production."),
        ("Deploys can only happen through CI.", "Deploys happen through CI."),
        ("Os estagiários não podem acessar a produção.", "Os estagiários não acessam a produção."),
        ("Стажёры не могут заходить в продакшн.", "Стажёры не заходят в продакшн."),
    ],
)
def test_what_the_hedge_and_absolute_rules_leave_stated(
    vault: Vault, fact: str, statement: str
) -> None:
    verdict, why = _verdict(vault, [fact], statement)
    assert verdict == "supported", why


def test_russian_words_from_two_parts_of_a_sentence_are_not_a_statement(vault: Vault) -> None:
    # no roles are read in Russian: the parts of the sentence stand in for them
    facts = ["Кадры, на которые попали два тигра, распространились в социальных сетях."]
    verdict, why = _verdict(vault, facts, "Два тигра распространились в социальных сетях.")
    assert verdict == "unknown", why
    assert "different parts" in why


@pytest.mark.parametrize(
    ("fact", "statement"),
    [
        # a relative clause keeps the word it is about
        (
            "Полицейские поймали похитителя сосен, который прославился благодаря видео.",
            "Похититель сосен прославился благодаря видео.",
        ),
        # ... and the clause it interrupts is one part
        (
            "Бекапи бази даних, які ми робимо щоночі, зберігаються 30 днів.",
            "Бекапи бази даних зберігаються 30 днів.",
        ),
        (
            "Сервис платежей, который мы запустили в марте, работает в eu-west-1.",
            "Сервис платежей работает в eu-west-1.",
        ),
        # any part set off by commas or brackets interrupts the clause around it
        ("Релиз, по плану, выходит во вторник.", "Релиз выходит во вторник."),
        ("Сервіс авторизації (auth) працює в eu-west-1.", "Сервіс авторизації працює в eu-west-1."),
        (
            "Для сервиса платежей, как и для биллинга, используется PostgreSQL.",
            "Для сервиса платежей используется PostgreSQL.",
        ),
    ],
)
def test_a_relative_clause_and_the_clause_it_interrupts_are_parts(
    vault: Vault, fact: str, statement: str
) -> None:
    verdict, why = _verdict(vault, [fact], statement)
    assert verdict == "supported", why


# --- Portuguese as its dictionary reads it ----------------------------------------------------


@pytest.mark.parametrize(
    ("fact", "statement"),
    [
        # "cara" (a guy) is a person, not the adjective "caro" its dictionary makes of it
        ("Um cara está desenhando algumas figuras.", "Uma pessoa está desenhando algumas figuras."),
        # "garotas" is the plural of "garota", not the verb "garotar"
        ("Duas garotas estão dançando no palco.", "Duas pessoas estão dançando no palco."),
        # a role noun is a kind of person
        ("Os policiais estão correndo na praia.", "As pessoas estão correndo na praia."),
        # a passive meets its active: "cortada" -> "cortado" -> "cortar", "pela" is "by the"
        ("A senhora está cortando uma cebola.", "Uma cebola está sendo cortada pela senhora."),
        # "algo" (something) asks nothing the fact must name
        ("A mulher está cozinhando ovos.", "A mulher está cozinhando algo."),
        # two words for one thing
        ("Um garoto está tocando teclado.", "Um menino está tocando teclado."),
        ("Um cachorro está brincando com um brinquedo.", "Um cão está brincando com um brinquedo."),
        ("Um homem está andando de motocicleta.", "Um cara está andando de moto."),
        ("O homem está levantando halteres.", "O homem está levantando pesos."),
        ("O sargento está gritando com os recrutas.", "O sargento está berrando com os recrutas."),
        ("Um homem está temperando salsichas.", "Um homem está temperando carne."),
    ],
)
def test_portuguese_read_as_its_speakers_mean_it(vault: Vault, fact: str, statement: str) -> None:
    verdict, why = _verdict(vault, [fact], statement)
    assert verdict == "supported", why


def test_a_kind_of_person_is_not_stated_by_a_person(vault: Vault) -> None:
    facts = ["Uma pessoa está desenhando algumas figuras."]
    verdict, why = _verdict(vault, facts, "Um cara está desenhando algumas figuras.")
    assert verdict == "unknown", why


def test_a_plural_is_not_read_into_a_shorter_word(vault: Vault) -> None:
    # "Redis" is not read as a plural of the colour "red"
    facts = ["Redis stores user sessions and the rate-limiter counters."]
    verdict, why = _verdict(vault, facts, "User sessions are kept in Redis.")
    assert verdict == "supported", why


@pytest.mark.parametrize(
    ("fact", "statement", "expected"),
    [
        # "nenhum" (no) negates, though it is read as a count of zero too: "no dog" rules out
        # "a dog"
        (
            "Nenhum cachorro está emergindo de um lago.",
            "Um cachorro está emergindo de um lago.",
            "contradicted",
        ),
        # "menino" and "menina" are two kinds of child, not two forms of one word
        ("O menino está trotando no cavalo.", "A menina está trotando no cavalo.", "unknown"),
        # ... while a colour agrees with its noun: "vermelhas" is "vermelho"
        (
            "O menino de roupas vermelhas está pulando.",
            "O menino de roupa vermelha está pulando.",
            "supported",
        ),
        # "quintal" (a backyard) is not Thursday
        ("A reunião de equipe é no quintal.", "A reunião de equipe é na quinta-feira.", "unknown"),
        # a fish is an animal
        (
            "Um peixe está mordendo o dedo de uma pessoa.",
            "Um animal está mordendo o dedo de uma pessoa.",
            "supported",
        ),
    ],
)
def test_portuguese_words_the_rules_must_tell_apart(
    vault: Vault, fact: str, statement: str, expected: str
) -> None:
    verdict, why = _verdict(vault, [fact], statement)
    assert verdict == expected, why


# --- what a negation denies, questions, tries, "all" (fourth pass) ---------------------------


@pytest.mark.parametrize(
    ("fact", "statement", "why"),
    [
        # the fact's negation denies another word: it says the complaint was checked
        (
            "Как сообщает управление, жалобу всесторонне проверили, оказалось, что сила к "
            "гражданину не применялась.",
            "Жалобу гражданина не проверили.",
            "doesn't deny",
        ),
        (
            "The backup was restored, but the index was not rebuilt.",
            "The backup was not restored.",
            "doesn't deny",
        ),
        # a question asks; it does not say
        (
            "Означает ли это, что продукты с добавками исчезнут с прилавков?",
            "Продукты с добавками исчезнут с прилавков.",
            "asks",
        ),
        (
            "Will the payments service move to eu-west-1?",
            "The payments service will move to eu-west-1.",
            "asks",
        ),
        # a relative clause is about the words right before it, not across another part
        (
            "Когда проверили сервер, нашли в нём старый бэкап базы, который отправили в архив.",
            "Сервер отправили в архив.",
            "different parts",
        ),
        # being sure of it, a proposal, a wish: not a statement of it
        ("Он был уверен, что релиз вышел в пятницу.", "Релиз вышел в пятницу.", "believes"),
        (
            "Команда выдвинула инициативу отмены ночных деплоев.",
            "Ночные деплои отменили.",
            "wanted",
        ),
        # trying (perfective too) is not doing
        ("Супруги поссорились, и мужчина попытался убить жену.", "Мужчина убил жену.", "tried"),
        # "all" asks for more than the fact says
        (
            "Завод позволит сносить ветхие дома в районе Капотни.",
            "В Капотне сносят все ветхие дома.",
            "doesn't say all",
        ),
        (
            "В воскресенье в Липецкой области потеплеет, сообщают синоптики.",
            "В воскресенье в Липецкой области точно потеплеет.",
            "doesn't say certainly",
        ),
        # "not only" is not "only"
        (
            "Люди читают не только новости, они читают и аналитику.",
            "Люди читают только новости.",
            "doesn't say only",
        ),
        (
            "The team reads not only the logs but the traces.",
            "The team reads only the logs.",
            "doesn't say only",
        ),
    ],
)
def test_what_a_fact_with_those_words_does_not_state(
    vault: Vault, fact: str, statement: str, why: str
) -> None:
    verdict, said = _verdict(vault, [fact], statement)
    assert verdict == "unknown", said
    assert why in said


@pytest.mark.parametrize(
    ("fact", "statement"),
    [
        # two negations of one thing meet, whichever word each stands before
        ("There is no man playing the guitar.", "A man is not playing the guitar."),
        ("Жалобу гражданина не проверили.", "Жалобу гражданина не проверили."),
        # "not all" is not the absolute "all"; a plain "all" the fact says too
        ("На встрече не обсуждались отчёты подрядчика.", "На встрече обсуждались не все отчёты."),
        ("All services log to Loki.", "All services log to Loki."),
        # a question mark in another sentence of the fact asks nothing of this one
        ("The index is rebuilt nightly. Is that too often?", "The index is rebuilt nightly."),
    ],
)
def test_what_those_rules_leave_stated(vault: Vault, fact: str, statement: str) -> None:
    verdict, why = _verdict(vault, [fact], statement)
    assert verdict == "supported", why


# --- "without": a phrase denied, not the clause ------------------------------------------


@pytest.mark.parametrize(
    ("fact", "statement", "verdict"),
    [
        # ASSIN 2 tune: "sem ar" made the whole clause negative, so the run was denied
        ("Um cachorro está correndo sem ar na estrada", "Um cachorro está correndo na estrada",
         "supported"),
        ("The deploy ran without approval.", "The deploy ran.", "supported"),
        # SICK tune: still a contradiction either way round
        ("A man with a shirt is posing next to a woman",
         "A man without a shirt is posing next to a woman", "contradicted"),
        ("A man without a shirt is posing next to a woman",
         "A man with a shirt is posing next to a woman", "contradicted"),
        ("The deploy ran without approval.", "The deploy ran with approval.", "contradicted"),
        # the phrase ends at a comma: "without a lock" does not deny the writers' corrupting
        ("Without a lock, two writers corrupt the index.", "Two writers corrupt the index.",
         "supported"),
        # "sem" does not turn a forbidding word around
        ("Sem senha é proibido entrar.", "É proibido entrar.", "supported"),
    ],
)  # fmt: skip
def test_without_denies_its_phrase_not_the_clause(
    vault: Vault, fact: str, statement: str, verdict: str
) -> None:
    _expect(vault, fact, statement, verdict)


@pytest.mark.parametrize(
    ("fact", "statement", "verdict"),
    [
        # "garoto" is "menino" (one line), and a "menino" is a "criança": so is a "garoto"
        ("Dois garotos pequenos estão sentados", "Duas crianças estão sentadas", "supported"),
        # not the reverse: a child need not be a boy
        ("Duas crianças estão sentadas", "Dois garotos estão sentados", "unknown"),
        # an adult is a kind of person, not a word over every person: a baby is no adult
        ("A baby is crying.", "An adult is crying.", "unknown"),
        ("An adult is crying.", "A person is crying.", "supported"),
        # someone is a person, and a person someone (SICK tune sick-4090)
        ("Someone is slicing an onion", "A person is slicing an onion", "supported"),
        ("Uma pessoa está cortando uma cebola", "Alguém está cortando uma cebola", "supported"),
    ],
)
def test_a_synonym_of_a_kind_is_that_kind_too(
    vault: Vault, fact: str, statement: str, verdict: str
) -> None:
    _expect(vault, fact, statement, verdict)


@pytest.mark.parametrize(
    ("fact", "statement", "verdict"),
    [
        # a gerund the dictionary lacks ("comendo") is its verb, as "come" is
        ("O garoto está comendo cereal", "O garoto come cereal", "supported"),
        # a passive's participle in -ido is its verb too (ASSIN 2 tune)
        ("O garoto está comendo cereal", "Cereal está sendo comido por um garoto", "supported"),
        ("Uma senhora está fervendo macarrão", "Macarrão está sendo fervido por uma senhora",
         "supported"),
        # ... so a swap of who eats what is still read as one
        ("O garoto está comendo cereal", "Um garoto está sendo comido por um cereal", "unknown"),
        # the same word outside a passive is a noun: serving food, bringing a drink is
        # neither eating nor drinking
        ("Um garoto está servindo a comida", "Um garoto está comendo", "unknown"),
        ("A menina trouxe a bebida", "A menina está bebendo", "unknown"),
    ],
)  # fmt: skip
def test_portuguese_verb_forms_meet_their_verb(
    vault: Vault, fact: str, statement: str, verdict: str
) -> None:
    _expect(vault, fact, statement, verdict)


@pytest.mark.parametrize(
    ("fact", "statement"),
    [
        # "feito de" is "made of", "d'água" is "de água"
        ("A man is walking across a rope bridge", "A man is walking across a bridge made of rope"),
        ("Um menino está jogando com blocos de madeira",
         "Um menino está jogando com blocos feitos de madeira"),
        ("Um cachorro está nadando em um corpo d'água",
         "Um cachorro está nadando em um corpo de água"),
    ],
)  # fmt: skip
def test_what_a_thing_is_made_of_is_no_making(vault: Vault, fact: str, statement: str) -> None:
    _expect(vault, fact, statement, "supported")


@pytest.mark.parametrize(
    ("fact", "statement", "verdict"),
    [
        # a making, a comparison, a sameness still say something (a review of the pass)
        ("O backup foi cancelado", "O backup foi feito", "unknown"),
        ("The payment was refunded for the invoice", "The payment was made for the invoice",
         "unknown"),
        ("O cache usa mais de 2 GB", "O cache usa menos de 2 GB", "contradicted"),
        # ... and in English, whose "more" and "less" are function words elsewhere
        ("The cache uses more than 2 GB", "The cache uses less than 2 GB", "contradicted"),
        ("More than 100 users signed up", "Less than 100 users signed up", "unknown"),
        ("O deploy usa o mesmo servidor do staging", "O deploy usa outro servidor do staging",
         "unknown"),
        # "fora do ar" is offline, "a gente" is we, "D'Ávila" a name
        ("O servidor está fora do ar", "O servidor está ao ar livre", "unknown"),
        ("A gente usa Postgres", "As pessoas usam Postgres", "unknown"),
        ("A Ávila usa Postgres", "A D'Ávila usa Postgres", "unknown"),
        # a group counts a general word only, and never over the fact's own count of it
        ("Two engineers and a designer joined the team", "Three engineers joined the team",
         "contradicted"),
        ("Eight people work here, and a man and two women joined today",
         "Three people work here", "contradicted"),
        ("1.000 pessoas e 20 crianças visitaram o site", "21 pessoas visitaram o site",
         "contradicted"),
        # "under" is a place and a bound, not a function word that any "on" states
        ("The cat is sleeping on the bed", "The cat is sleeping under the bed", "unknown"),
        ("The cat is sleeping under the bed", "The cat is sleeping on the bed", "unknown"),
        ("The archive is over 2 GB", "The archive is under 2 GB", "unknown"),
        ("O uso de disco está acima de 90%", "O uso de disco está abaixo de 90%", "unknown"),
        ("The cat is sleeping under the bed", "The cat is sleeping under the bed", "supported"),
        ("The cat is sleeping under the bed on Mondays", "The cat is sleeping under the bed",
         "supported"),
        # ... but only against the same thing, and "below" says "under"
        ("Replica lag stays below 5 seconds on weekdays", "Replica lag stays under 5 seconds",
         "supported"),
        ("We deploy every Monday; see the freeze calendar below", "We deploy on Mondays",
         "supported"),
        ("p95 latency is kept under 300 ms on the checkout API",
         "p95 latency on the checkout API is above 300 ms", "unknown"),
        ("Навантаження CPU тримається нижче 70% у вихідні",
         "Навантаження CPU тримається вище 70% у вихідні", "unknown"),
        ("Dashboards live on Grafana, in the Platform folder",
         "Dashboards live under the Platform folder", "supported"),
        # "stage" is English before it is Portuguese for staging
        ("The canary stage takes 30 minutes", "Staging takes 30 minutes", "unknown"),
    ],
)  # fmt: skip
def test_words_that_still_say_something(
    vault: Vault, fact: str, statement: str, verdict: str
) -> None:
    _expect(vault, fact, statement, verdict)


@pytest.mark.parametrize(
    ("fact", "statement", "verdict"),
    [
        # a group named one by one is counted: a man and two girls are three people
        ("Um homem e duas meninas estão andando na praia", "Três pessoas estão andando na praia",
         "supported"),
        ("Um homem, duas mulheres e duas meninas estão andando",
         "Cinco pessoas estão andando", "supported"),
        ("A man and a woman are walking", "Two people are walking", "supported"),
        # the sum must be the statement's count, and every member of its kind
        ("A man and a woman are walking", "Three people are walking", "unknown"),
        ("Two men and a dog are walking", "Three people are walking", "contradicted"),
    ],
)  # fmt: skip
def test_a_group_named_one_by_one_is_counted(
    vault: Vault, fact: str, statement: str, verdict: str
) -> None:
    _expect(vault, fact, statement, verdict)


def test_a_missing_verb_is_named_as_its_language_has_it(vault: Vault) -> None:
    # English gets "it uses"; a Portuguese lemma is not given an English -s ("usars")
    verdict, why = _verdict(vault, ["Uma menina está costurando com uma máquina"],
                            "Alguém está usando uma máquina")  # fmt: skip
    assert verdict == "unknown" and "the fact doesn't say usar)" in why, why


@pytest.mark.parametrize(
    ("fact", "statement", "verdict"),
    [
        # Brazilian "tem" opening a sentence is "there is": the guy plays
        ("Um cara está brincando com uma bola", "Tem um cara brincando com uma bola",
         "supported"),
        # "gente" is people, as "pessoa" is a person
        ("Várias pessoas estão cantando", "Tem gente cantando", "supported"),
    ],
)  # fmt: skip
def test_portuguese_there_is_and_people(
    vault: Vault, fact: str, statement: str, verdict: str
) -> None:
    _expect(vault, fact, statement, verdict)


@pytest.mark.parametrize(
    ("fact", "statement", "verdict"),
    [
        # "ao ar livre", "do lado de fora", "lá fora" are one place (outdoors)
        ("Uma menina está correndo lá fora", "Uma menina está correndo ao ar livre", "supported"),
        ("O homem está sentado ao ar livre", "O homem está sentado do lado de fora", "supported"),
        # "fora" is outside (the dictionary made it a form of "ir"), so it still opposes "dentro"
        ("O gato está dormindo dentro de casa", "O gato está dormindo fora de casa",
         "contradicted"),
        # "sob", "embaixo de", "debaixo de" are one place, and not "on" it
        ("O homem está sentado sob um guarda-chuva",
         "O homem está sentado embaixo de um guarda-chuva", "supported"),
        ("Um cachorro está deitado na cama", "Um cachorro está deitado debaixo da cama",
         "unknown"),
    ],
)  # fmt: skip
def test_portuguese_places(vault: Vault, fact: str, statement: str, verdict: str) -> None:
    _expect(vault, fact, statement, verdict)


@pytest.mark.parametrize(
    ("text", "lang", "has", "lacks"),
    [
        # "time" is Portuguese for "team", never English's "time"
        ("The deploy took a long time", "en", "time", "team"),
        ("O time usa Postgres", "pt", "team", "time"),
        ("O deploy levou muito tempo", "pt", "time", "team"),
        # "banco(s) de dados" is one word
        ("Os bancos de dados ficam no servidor", "pt", "database", "data"),
    ],
)  # fmt: skip
def test_the_glossary_reads_a_word_in_its_own_language(
    text: str, lang: str, has: str, lacks: str
) -> None:
    words = read(text, lang).union("words")
    assert has in words and lacks not in words, sorted(words)


@pytest.mark.parametrize(
    ("fact", "statement", "verdict"),
    [
        # a fact that holds under a condition does not state that it holds
        ("The build fails if the cache is cold", "The build fails", "unknown"),
        ("If the queue is full, the API returns 503", "The API returns 503", "unknown"),
        ("Unless the flag is set, the job retries three times", "The job retries three times",
         "unknown"),
        ("O build falha se o cache estiver frio", "O build falha", "unknown"),
        ("Caso a fila esteja cheia, a API retorna 503", "A API retorna 503", "unknown"),
        ("Если очередь заполнена, API возвращает 503", "API возвращает 503", "unknown"),
        ("Якщо черга заповнена, API повертає 503", "API повертає 503", "unknown"),
        # ... the same condition in the statement is stated, and so is a concession
        ("The build fails if the cache is cold", "The build fails if the cache is cold",
         "supported"),
        ("The build passes even if the cache is cold", "The build passes", "supported"),
        # Portuguese "se" before a verb is a pronoun, not a condition
        ("API возвращает 503, если очередь заполнена", "API возвращает 503", "unknown"),
        # a condition governs its own clause, not the one a "because" hangs it on
        ("We never deploy on Fridays, because if a release breaks, nobody is around",
         "We never deploy on Fridays", "supported"),
        ("Мы не деплоим по пятницам, потому что если релиз сломается, чинить некому",
         "Мы не деплоим по пятницам", "supported"),
        ("O serviço se reinicia toda noite", "O serviço reinicia toda noite", "supported"),
        ("O caso a equipe resolveu ontem", "A equipe resolveu o caso ontem", "supported"),
    ],
)  # fmt: skip
def test_a_condition_hedges_what_it_governs(
    vault: Vault, fact: str, statement: str, verdict: str
) -> None:
    _expect(vault, fact, statement, verdict)


@pytest.mark.parametrize(
    ("fact", "statement", "verdict"),
    [
        # what is a condition: phrases, a clause's opening "se"/"caso", "but only if"
        ("We roll back the release in case the deploy fails", "We roll back the release",
         "unknown"),
        ("В случае сбоя деплоя мы откатываем релиз", "Мы откатываем релиз", "unknown"),
        ("Em caso de falha no deploy, o release é revertido", "O release é revertido",
         "unknown"),
        ("Provided the tests pass, the release ships on Friday", "The release ships on Friday",
         "unknown"),
        ("Se falhar, o job é reiniciado", "O job é reiniciado", "unknown"),
        ("Sabemos que se o cache estiver frio, o build falha", "O build falha", "unknown"),
        ("The API returns 503, but only if the queue is full", "The API returns 503", "unknown"),
        ("If the tests pass, we deploy; otherwise, we roll back", "We roll back", "unknown"),
        # what is not: a question, a manner of speaking, a contrast, a default, a noun, a pronoun
        ("The smoke test checks if the login page loads", "The smoke test checks the login page",
         "supported"),
        ("Verificamos se o cache está quente antes de cada deploy",
         "Verificamos o cache antes de cada deploy", "supported"),
        ("Если честно, бэкапы у нас делаются раз в неделю",
         "Бэкапы у нас делаются раз в неделю", "supported"),
        ("Если раньше мы деплоили по пятницам, то теперь деплоим по вторникам",
         "Теперь мы деплоим по вторникам", "supported"),
        ("Unless stated otherwise, all services run on Kubernetes",
         "All services run on Kubernetes", "supported"),
        ("Em todo caso, o backup roda às 2h", "O backup roda às 2h", "supported"),
        ("Reinicia-se o serviço toda noite", "O serviço é reiniciado toda noite", "supported"),
        # what it governs: not what comes before an "and", a dash, a colon, a line break
        ("Backups run nightly and page the on-call if they fail", "Backups run nightly",
         "supported"),
        ("Deploys run every Tuesday at 10:00 — if one fails, we roll back",
         "Deploys run every Tuesday at 10:00", "supported"),
        ("Deploys run every Tuesday at 10:00: if one fails, we roll back",
         "Deploys run every Tuesday at 10:00", "supported"),
        ("Deploys run every Tuesday at 10:00\nIf a deploy fails, roll back",
         "Deploys run every Tuesday at 10:00", "supported"),
        ("If the cache is cold, the build is slow, which is why we warm it every night",
         "We warm the cache every night", "supported"),
        ("If the deploy fails, ping #releases — rollback is automatic", "Rollback is automatic",
         "supported"),
        ("If the deploy fails, we roll back, because the old build is safe",
         "The old build is safe", "supported"),
        ("The new runner is faster, if only slightly", "The new runner is faster", "supported"),
        ("Если даже тесты упали, ночная сборка публикует артефакты",
         "Ночная сборка публикует артефакты", "supported"),
        # an indirect question asks, it does not say
        ("Check if the disk is full before restarting Postgres", "The disk is full", "unknown"),
        ("Confira se o certificado vence antes de sexta", "O certificado vence antes de sexta",
         "unknown"),
        # a statement with its own "when" sets a condition too
        ("If the deploy fails, we roll back", "When the deploy fails, we roll back",
         "supported"),
    ],
)  # fmt: skip
def test_what_a_condition_is_and_what_it_governs(
    vault: Vault, fact: str, statement: str, verdict: str
) -> None:
    _expect(vault, fact, statement, verdict)
