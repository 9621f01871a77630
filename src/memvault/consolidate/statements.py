"""What a chat turn states as fact: the built-in (offline, rule-based) reader behind
distillation's facts.

A sentence of a user's turn becomes a statement when it has the shape of one -- what it is
about, a stating verb, and a concrete value ("Staging is on db-stg-3", "On-call rotates on
Mondays", "We decided to use Postgres 16", "From now on, deploys happen on Thursdays") --
in English, Ukrainian, Russian or Portuguese. Skipped: questions, hedges and hypotheticals
("maybe", "I think", "if", "what if", plans not yet decided), negations, greetings, and
sentences with no concrete value (a number, an identifier such as ``db-stg-3``, a name, a
weekday, a month, a time). Values and decisions are stated the same way each time
(:func:`canonical`): "Staging moved to db-stg-4" reads as "Staging is on db-stg-4", so the
write-time conflict rule (:mod:`memvault.conflicts`) sees one sentence pattern with its
value replaced, and the newer supersedes.

Recall matters less here than precision: a fact written wrongly is in force and answers
``fact``; a fact missed is still in the archived transcript. Measured by
``bench/distill.py`` (docs/consolidation.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..values import Record
from .statement_words import (
    DECIDED,
    DECISION_PREFIX,
    FLAGS,
    FROM_NOW,
    GREETING,
    HEDGE,
    IF_PT,
    LEAD_IN,
    NEGATION,
    PREDICATES,
    PT_ARTICLE,
    QUESTION_START,
    SENTENCE,
    VAGUE_SUBJECTS,
    VALUE,
    WEEKDAYS,
    WHEN_SAID,
)

MAX_WORDS = 25  # a longer sentence is a story, not a statement
MAX_SUBJECT_WORDS = 7


class Statement(Record, frozen=True):
    """A fact or decision read from one sentence: the text to write, its kind
    (``facts`` | ``decisions``) and the sentence as said."""

    text: str
    category: str
    said: str


def statements(text: str) -> list[Statement]:
    """The statements of one turn's text, in order (see the module docstring)."""
    out: list[Statement] = []
    for raw in SENTENCE.split(text or ""):
        found = read_sentence(raw)
        if found is not None:
            out.append(found)
    return out


def read_sentence(raw: str) -> Statement | None:
    """One sentence as a statement, or None when it is not one."""
    said = " ".join(raw.replace("’", "'").split()).strip()
    if not said or said.endswith("?") or said.startswith(("#", ">", "-", "*", "|")):
        return None
    body = said.rstrip(".!;… ")
    while True:
        stripped = LEAD_IN.sub("", body, count=1)
        if stripped == body:
            break
        body = stripped
    found = _read(body, said)
    head, colon, rest = body.partition(":")
    if found is None and colon and len(head.split()) <= 5 and not VALUE.search(head):
        found = _read(rest.strip(), said)  # "quick note for the record: staging is on ..."
    return found


def _read(body: str, said: str) -> Statement | None:
    words = body.split()
    if not 2 <= len(words) <= MAX_WORDS or GREETING.search(body) or QUESTION_START.search(body):
        return None
    decided = _decision(body)
    if decided is not None:
        return _checked(decided, "decisions", said)
    if _unsure(body):
        return None
    stated = _statement(body)
    return _checked(stated, "facts", said) if stated else None


def _checked(text: str, category: str, said: str) -> Statement | None:
    if _unsure(text) or not VALUE.search(text):  # its first word is no name
        return None
    text = text[0].upper() + text[1:]
    return Statement(text if text.endswith(".") else text + ".", category, said)


def _unsure(text: str) -> bool:
    """Hedged, hypothetical, planned or negated: not a fact to hold."""
    return bool(HEDGE.search(text) or IF_PT.search(text) or NEGATION.search(text))


def _decision(body: str) -> str | None:
    """A decision in force, stated as the rule it sets: "We use Postgres 16"."""
    now_on = FROM_NOW.match(body)
    if now_on:
        rest = _future_to_present(now_on.group("rest"))
        # uk/ru/pt drop the pronoun ("Відтепер деплоїмо по четвергах"): kept as said
        return _statement(rest) or (rest if rest.split()[0].lower() == "we" else body)
    found = DECIDED.match(body)
    if found is None:
        return None
    if found.group("verb"):
        rest, link = _future_to_present(found.group("rest")), (found.group("link") or "").lower()
        if link == "that":
            return _statement(rest) or rest
        if link == "to":
            return f"We {rest}"
        return f"We use {rest}"
    if found.group("go_rest"):
        return f"We use {found.group('go_rest')}"
    if found.group("en_rest"):
        return _future_to_present(found.group("en_rest"))
    for lang in ("uk", "ru", "pt"):
        if found.group(lang):
            rest = found.group(f"{lang}_rest")
            if lang == "pt":
                rest = PT_ARTICLE.sub("", rest)
            if found.group(f"{lang}_that"):
                return _statement(rest) or rest
            return f"{DECISION_PREFIX[lang]}: {rest}"
    return None


def _future_to_present(text: str) -> str:
    """In a decision, "we will deploy" / "we'll deploy" is the rule "we deploy"."""
    return re.sub(r"(?<=\w)'ll\s+|(?<!\w)(?:will|shall)\s+", " ", text, flags=FLAGS).replace(
        "  ", " "
    )


def _statement(body: str) -> str | None:
    """``subject verb value`` with the verb written one way, or None."""
    best: tuple[int, re.Match[str], str | None] | None = None
    for pattern, canonical in PREDICATES:
        found = pattern.search(body)
        if found and found.start() > 0 and (best is None or found.start() < best[0]):
            best = (found.start(), found, canonical)
    if best is None:
        return None
    _, verb, canonical = best
    subject = body[: verb.start()].strip(" ,:")
    value = body[verb.end() :].strip(" ,:")
    subject_words = subject.split()
    if not subject_words or not value or len(subject_words) > MAX_SUBJECT_WORDS or ":" in subject:
        return None
    if len(subject_words) == 1 and subject_words[0].lower() in VAGUE_SUBJECTS:
        return None
    if subject_words[0].lower() in ("i", "you", "я", "ти", "ты", "eu", "você"):
        return None  # the speaker's or listener's doings: chat, not a fact of the team
    value = WHEN_SAID.sub("", value).strip(" ,")
    if not VALUE.search(" " + value):
        return None
    said_verb = " ".join(verb.group(0).split())
    if canonical == "fica em":
        value = PT_ARTICLE.sub("", value)
    if canonical == "on":
        canonical = _on_or_in(said_verb, value)
    return f"{subject} {canonical or said_verb} {value}"


def _on_or_in(verb: str, value: str) -> str:
    """English: the place a thing is now, one verb whatever verb said it moved there."""
    plural = verb.split()[0].lower() in ("are", "run", "live", "were", "have")
    be = "are" if plural else "is"
    if re.match(r"\d{1,2}(?:[:.]\d\d|\s*[ap]\.?m\b)", value, FLAGS):
        return f"{be} at"  # a time of day
    if re.search(r"\d|\w[-_.]\w", value) or re.match(WEEKDAYS, value, FLAGS):
        return f"{be} on"  # a host, a cluster, a version
    if verb.lower().endswith((" in", " at")):
        return f"{be} {verb.split()[-1].lower()}"
    if re.match(r"[A-Z]", value):
        return f"{be} in"  # a place named
    return be


def distinct(found: Iterable[Statement]) -> list[Statement]:
    """Each statement text once, the first kept."""
    seen: set[str] = set()
    out: list[Statement] = []
    for s in found:
        key = s.text.casefold()
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out
