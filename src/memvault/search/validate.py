"""``validate``: does a statement agree with, contradict, or find no support in known facts?

The closest facts are found by the same hybrid search as ``fact`` (superseded ones
included, to recognise a claim that *used to* be true). Each is then compared with the
statement word by word:

* **contradicted** when a fact on the same topic holds another value (a number, a name,
  a version: "the rate limit is 200" vs "the rate limit is 100"), when the fact negates
  what the statement asserts ("we use Gemini, not OpenAI" vs "we use OpenAI"), when one
  of the two is negated and the other not, or when the statement matches a fact that has
  since been superseded;
* **supported** when an active fact says the same: the statement's words and values are
  in it;
* **unknown** otherwise.

What it cannot judge, honestly: paraphrase with no shared words ("the DB" vs "Postgres"
is only matched if a fact's ``subject`` or words connect them), arithmetic and units
("100 req/s" vs "6000 req/min"), implication across several facts, and sarcasm or
hedging. "unknown" means "no fact decides it", not "false".
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Unpack

from ..errors import MemvaultError
from .accesslog import log_read
from .engine import run
from .options import FILTER_KEYS, ValidateOptions, build_filter, check_keys, check_limit
from .ranking import Plan
from .results import SearchHit
from .routing import strip_cue

if TYPE_CHECKING:  # pragma: no cover
    from ..repository import Repository

VERDICTS = ("supported", "contradicted", "unknown")
_TOKEN = re.compile(r"\d+(?:[.,:/]\d+)*%?|[^\W\d_][\w'’-]*", re.UNICODE)
_NEGATION = re.compile(
    r"(?<!\w)(?:not|no|never|none|nor|cannot|can't|don't|doesn't|didn't|isn't|aren't|wasn't|weren't|won't|"
    r"shouldn't|without|não|nao|nunca|nem|sem|не|нет|никогда|ні|ніколи|без)(?!\w)|n't(?!\w)"
)
_NEGATORS = (
    "not no never none nor cannot without não nao nunca nem sem не нет никогда ні ніколи без"
)
_NEGATION_WORDS = frozenset(_NEGATORS.split())


@dataclass(frozen=True)
class Evidence:
    """A fact weighed against the statement: ``relation`` is supports|contradicts|related."""

    hit: SearchHit
    relation: str
    why: str

    def as_dict(self) -> dict[str, Any]:
        return {**self.hit.as_dict(), "relation": self.relation, "why": self.why}


@dataclass(frozen=True)
class ValidationResult:
    statement: str
    claim: str
    verdict: str
    why: str
    evidence: tuple[Evidence, ...]
    ms: float

    @property
    def hits(self) -> tuple[SearchHit, ...]:
        return tuple(e.hit for e in self.evidence)

    def as_dict(self) -> dict[str, Any]:
        return {
            "statement": self.statement,
            "claim": self.claim,
            "verdict": self.verdict,
            "why": self.why,
            "hits": [e.as_dict() for e in self.evidence],
            "ms": round(self.ms, 1),
        }


# --- comparing two sentences ---------------------------------------------------------------


def _stem(word: str) -> str:
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if w[:1].isdigit():
        return w.rstrip("%").replace(",", ".")
    for suffix in ("ing", "ed", "es", "s"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


@dataclass(frozen=True)
class _Sentence:
    terms: frozenset[str]  # stemmed content words (values included)
    values: frozenset[str]  # numbers and names (stemmed)
    numbers: frozenset[str]
    negated: bool
    negated_values: frozenset[str]  # values right after a negation word


def _analyse(text: str) -> _Sentence:
    from ..index.query import STOPWORDS

    terms: set[str] = set()
    values: set[str] = set()
    numbers: set[str] = set()
    negated_values: set[str] = set()
    negate_left = 0
    sentence_start = True
    for m in _TOKEN.finditer(text):
        raw = m.group(0)
        low = raw.lower()
        before = text[max(0, m.start() - 2) : m.start()]
        if re.search(r"[.!?:;]\s*$", before) or m.start() == 0:
            sentence_start = True
        if low in _NEGATION_WORDS or low.endswith("n't"):
            negate_left = 3
            sentence_start = False
            continue
        stem = _stem(raw)
        is_number = raw[:1].isdigit()
        is_name = not is_number and (
            any(c.isupper() for c in raw[1:]) or (raw[:1].isupper() and not sentence_start)
        )
        sentence_start = False
        if low in STOPWORDS and not is_number:
            negate_left = max(0, negate_left - 1)
            continue
        terms.add(stem)
        if is_number:
            numbers.add(stem)
        if is_number or is_name:
            values.add(stem)
            if negate_left:
                negated_values.add(stem)
        negate_left = max(0, negate_left - 1)
    return _Sentence(
        frozenset(terms),
        frozenset(values),
        frozenset(numbers),
        bool(_NEGATION.search(text.lower())),
        frozenset(negated_values),
    )


def compare(claim: str, fact_text: str, subject: str | None = None) -> tuple[str, str]:
    """``(relation, why)`` of one fact to a claim: supports|contradicts|related."""
    s, f = _analyse(claim), _analyse(fact_text)
    if not s.terms:
        return "related", "the statement has no content words to compare"
    shared = s.terms & f.terms
    coverage = len(shared) / len(s.terms)
    plain = s.terms - s.values
    plain_cover = len(plain & f.terms) / len(plain) if plain else 1.0
    subject_words = {_stem(w) for w in re.split(r"[._/\s-]+", subject or "") if len(w) > 1}
    on_subject = bool(subject_words) and bool(subject_words & s.terms)
    shared_values = s.values & f.values
    hit_negated = (s.values & f.negated_values) - s.negated_values
    if hit_negated and not s.negated:
        return "contradicts", f"the fact rules out {', '.join(sorted(hit_negated))}"
    topic = (
        on_subject
        or (bool(shared_values) and plain_cover >= 0.5)
        or (coverage >= 0.6 and plain_cover >= 0.6)
    )
    if not topic:
        return "related", f"shares {len(shared)} of {len(s.terms)} words; not enough to decide"
    only_s, only_f = s.values - f.values, f.values - s.values
    nums_s, nums_f = s.numbers - f.numbers, f.numbers - s.numbers
    if nums_s and nums_f:
        return (
            "contradicts",
            f"same topic, another value: {', '.join(sorted(nums_s))} "
            f"vs {', '.join(sorted(nums_f))}",
        )
    names_s, names_f = only_s - s.numbers, only_f - f.numbers
    if names_s and names_f and (on_subject or shared_values or plain_cover >= 0.75):
        return (
            "contradicts",
            f"same topic, another value: {', '.join(sorted(names_s))} "
            f"vs {', '.join(sorted(names_f))}",
        )
    agrees = coverage >= 0.75 or (bool(s.values) and not only_s and plain_cover >= 0.5)
    if agrees and not only_s:
        if s.negated != f.negated:
            return (
                "contradicts",
                "one of the two is negated" if not hit_negated else "the fact negates it",
            )
        return "supports", "the fact states it" + (
            f" (values {', '.join(sorted(shared_values))})" if shared_values else ""
        )
    if only_s:
        return "related", f"the fact doesn't mention {', '.join(sorted(only_s))}"
    return "related", f"shares {len(shared)} of {len(s.terms)} words; not enough to decide"


# --- the command ------------------------------------------------------------------------------


def validate(
    vault: Repository, statement: str, **options: Unpack[ValidateOptions]
) -> ValidationResult:
    """Check ``statement`` against known facts. Options: ``as_of``, ``limit`` (facts weighed,
    default 8), ``explain``, ``scope``/``tags``/``category`` and the other filters, ``log``."""
    check_keys(options, FILTER_KEYS | {"limit", "explain", "log", "kind"})
    started = time.perf_counter()
    if not statement or not statement.strip():
        raise MemvaultError("empty statement: say what to check", key="statement")
    claim = strip_cue(statement)
    limit = check_limit(vault, options.pop("limit", 8))
    explain = bool(options.pop("explain", False))
    log = options.pop("log", True)
    options.pop("kind", None)
    options["include_superseded"] = True
    types, filt = build_filter(vault, options, types=("semantic",))
    plan = Plan(types=types, filt=filt, limit=limit, prefer=None, explain=explain)
    hits, _ = run(vault, claim, plan)
    # With as_of, the search returned only facts valid then: a fact superseded later was
    # the truth at that date.
    as_of = options.get("as_of") is not None
    evidence: list[Evidence] = []
    for hit in hits:
        text = hit.memory.content if hit.memory is not None else hit.snippet
        title = hit.memory.meta.get("title") if hit.memory is not None else None
        if title and str(title) not in text:
            text = f"{title}. {text}"
        subject = hit.memory.subject if hit.memory is not None else None
        relation, why = compare(claim, text, subject)
        if hit.status == "superseded" and not as_of:
            if relation == "supports":
                successor = hit.memory.meta.get("superseded_by") if hit.memory is not None else None
                until = hit.memory.meta.get("valid_to") if hit.memory is not None else None
                relation = "contradicts"
                why = (
                    "this was true"
                    + (f" until {until}" if until else "")
                    + (f"; superseded by {successor}" if successor else "; superseded since")
                )
            else:
                relation = "related"
                why = "superseded fact: " + why
        evidence.append(Evidence(hit, relation, why))
    verdict, why = _verdict(evidence, as_of)
    evidence.sort(key=lambda e: {"contradicts": 0, "supports": 1}.get(e.relation, 2))
    ms = (time.perf_counter() - started) * 1000
    if log:
        log_read(vault, "validate", statement, [e.hit.id for e in evidence], ms)
    return ValidationResult(statement, claim, verdict, why, tuple(evidence), ms)


def _verdict(evidence: Sequence[Evidence], as_of: bool = False) -> tuple[str, str]:
    active = [e for e in evidence if e.hit.status != "superseded" or as_of]
    against = [e for e in active if e.relation == "contradicts"]
    support = [e for e in active if e.relation == "supports"]
    outdated = [
        e
        for e in evidence
        if e.hit.status == "superseded" and e.relation == "contradicts" and not as_of
    ]
    if against:
        e = against[0]
        extra = f" ({len(support)} other fact(s) agree)" if support else ""
        return "contradicted", f"[{e.hit.id}] {e.why}{extra}"
    if support:
        e = support[0]
        return "supported", f"[{e.hit.id}] {e.why}"
    if outdated:
        e = outdated[0]
        return "contradicted", f"[{e.hit.id}] {e.why}"
    if not evidence:
        return "unknown", "no known fact is about this"
    return (
        "unknown",
        f"no known fact decides it (closest: [{evidence[0].hit.id}] {evidence[0].why})",
    )
