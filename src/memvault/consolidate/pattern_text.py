"""The statement of a learned pattern: what its episodes share, not a quote of one of them.

No model writes it: the words most episodes use (compared by stem, lemmatised outside
English, :func:`.compare.words`), in the order the most typical episode says them and in its
spelling; the outcome they had, counted; what fixed it when episodes say so ("fixed by ...")
and in how many; the dates; every episode it came from. The frame around it is in the
episodes' language (en, pt, ru, uk). ``summarizer_command`` stays the way to have a model
word a rule, after ``memvault allow-command``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from ..index.query import STOPWORDS
from ..language import detect
from ..memory import Memory
from .compare import DIGIT, TOKEN, words

# A word is part of the pattern when at least this share of the episodes use it.
SHARED_SHARE = 0.5
MAX_TERMS = 8

# The frame of a statement, per language: the recurrence, the outcome (and the words for the
# two outcomes an episode records), the fix, the sources.
FRAMES: dict[str, dict[str, str]] = {
    "en": {
        "title": "Recurring: {terms}",
        "rule": "Recurs in {n} episodes ({first} to {last}): {terms}.",
        "outcome": "Outcome {outcome} in {k} of {n}.",
        "success": "success",
        "failure": "failure",
        "fix": 'Fixed by "{fix}" in {k} of {n}.',
        "more": "Also said in some: {terms}.",
        "sources": "From every episode: {ids}.",
    },
    "pt": {
        "title": "Recorrente: {terms}",
        "rule": "Repete-se em {n} episódios ({first} a {last}): {terms}.",
        "outcome": "Resultado {outcome} em {k} de {n}.",
        "success": "sucesso",
        "failure": "falha",
        "fix": 'Resolvido com "{fix}" em {k} de {n}.',
        "more": "Dito também em alguns: {terms}.",
        "sources": "De todos os episódios: {ids}.",
    },
    "ru": {
        "title": "Повторяется: {terms}",
        "rule": "Повторяется в {n} эпизодах ({first} – {last}): {terms}.",
        "outcome": "Итог {outcome} в {k} из {n}.",
        "success": "успех",
        "failure": "неудача",
        "fix": "Исправлено «{fix}» в {k} из {n}.",
        "more": "Ещё в некоторых: {terms}.",
        "sources": "Из всех эпизодов: {ids}.",
    },
    "uk": {
        "title": "Повторюється: {terms}",
        "rule": "Повторюється в {n} епізодах ({first} – {last}): {terms}.",
        "outcome": "Підсумок {outcome} у {k} з {n}.",
        "success": "успіх",
        "failure": "невдача",
        "fix": "Виправлено «{fix}» у {k} з {n}.",
        "more": "Ще в деяких: {terms}.",
        "sources": "З усіх епізодів: {ids}.",
    },
}
# What introduces a fix in an episode, per language; the fix is the rest of its clause.
_FIX = re.compile(
    r"\b(?:fixed (?:it )?by|resolved (?:it )?by|solved (?:it )?by|workaround:|fix:|"
    r"corrigido com|resolvido com|resolvemos com|исправили|починили|решили|"
    r"виправили|полагодили|вирішили)\s+([^.;!?\n]+)",
    re.IGNORECASE,
)


class Statement:
    """A pattern's title and body, made by :func:`state_pattern`."""

    def __init__(self, title: str, body: str, language: str, terms: list[str]) -> None:
        self.title, self.body, self.language, self.terms = title, body, language, terms


def shared_terms(members: Sequence[Memory], central: Memory) -> tuple[list[str], list[str]]:
    """The content words most members use (in ``central``'s order and spelling), and those
    some others use (two or more members, not most)."""
    spelling: dict[str, str] = {}
    order: dict[str, int] = {}
    for rank, m in enumerate([central, *members]):  # central's order first, then the others'
        for pos, (key, raw) in enumerate(_content_words(m.content)):
            spelling.setdefault(key, raw)
            order.setdefault(key, pos + (10_000 * rank))
    seen = [{key for key, _ in _content_words(m.content)} for m in members]
    counts = Counter(k for keys in seen for k in keys)
    need = max(2, -(-len(members) * SHARED_SHARE // 1))
    most = sorted((k for k, c in counts.items() if c >= need), key=order.__getitem__)
    some = sorted((k for k, c in counts.items() if 2 <= c < need), key=order.__getitem__)
    return [spelling[k] for k in most][:MAX_TERMS], [spelling[k] for k in some][:MAX_TERMS]


def _content_words(text: str) -> list[tuple[str, str]]:
    """(stem, spelling) of the content words of ``text``, in order, each once. Numbers are
    left out: they are what differs between occurrences (a count, a version, a time); so are
    the keyword index's stop words (``index.query.STOPWORDS``: function words of en, pt, ru
    and uk, some of which the word diff keeps)."""
    out: list[tuple[str, str]] = []
    taken: set[str] = set()
    for token, w in zip(TOKEN.finditer(text), words(text), strict=True):
        if not w.content or w.negation or w.key in taken or DIGIT.search(w.key):
            continue
        if token.group().lower() in STOPWORDS:
            continue
        taken.add(w.key)
        raw = token.group()
        out.append((w.key, raw.lower() if raw[:1].isupper() and raw[1:].islower() else raw))
    return out


def _fixes(members: Sequence[Memory]) -> tuple[str, int]:
    """The fix most members name (its first wording) and how many name it."""
    found = []
    for m in members:
        hit = _FIX.search(m.content)
        if hit:
            found.append(hit.group(1).strip())
    if not found:
        return "", 0
    groups: list[list[str]] = []
    for fix in found:
        keys = {k for k, _ in _content_words(fix)}
        for group in groups:
            lead = {k for k, _ in _content_words(group[0])}
            if keys and lead and len(keys & lead) >= 0.5 * min(len(keys), len(lead)):
                group.append(fix)
                break
        else:
            groups.append([fix])
    best = max(groups, key=len)
    return best[0], len(best)


def state_pattern(members: Sequence[Memory], central: Memory) -> Statement:
    """The rule ``members`` (episodes of one recurrence, oldest first) share, in their
    language, citing every one of them."""
    language = detect("\n".join(m.content for m in members))
    frame = FRAMES.get(language, FRAMES["en"])
    most, some = shared_terms(members, central)
    terms = ", ".join(most) or ", ".join(some) or central.title
    n = len(members)
    days = sorted(m.created.date().isoformat() for m in members if m.created is not None)
    first, last = (days[0], days[-1]) if days else ("?", "?")
    lines = [frame["rule"].format(n=n, first=first, last=last, terms=terms)]
    outcomes = Counter(str(m.meta["outcome"]) for m in members if m.meta.get("outcome"))
    if outcomes:
        outcome, k = outcomes.most_common(1)[0]
        said = frame.get(outcome, outcome)  # an outcome of another name is kept as written
        lines.append(frame["outcome"].format(outcome=said, k=k, n=n))
    fix, k = _fixes(members)
    if fix:
        lines.append(frame["fix"].format(fix=fix, k=k, n=n))
    if most and some:
        lines.append(frame["more"].format(terms=", ".join(some)))
    lines.append(frame["sources"].format(ids=", ".join(sorted(m.id for m in members))))
    title = frame["title"].format(terms=", ".join(most[:5]) or terms)[:80]
    return Statement(title, "\n\n".join(lines), language, most)
