"""validate aligns a statement's missing words to the fact's by meaning (issue 25, item 2).

The vault is real (git, SQLite, Chroma); the embedder is the fake one behind a small
thesaurus, registered as a plugin like any embedder: words it lists as one meaning get one
vector, so "lawn" and "grass" are as close as a real model makes them, while every other
word keeps the fake's unrelated vector. Each test fails when the rule it names is taken
out: the alignment (a paraphrase becomes supported), or a check that must still decide
over aligned words (roles, negation, kinds, direction).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from memvault import Vault
from memvault.embeddings import (
    clear_embedder_cache,
    hookimpl,
    register_plugin,
    unregister_plugin,
)
from memvault.embeddings.fake import FakeEmbedder
from memvault.validate.align import Aligner, allowed
from memvault.validate.claims import read
from memvault.validate.weigh import weigh

# word -> the word whose meaning it shares (lemmas, as validate reads them)
THESAURUS = {
    "lawn": "grass",
    "strum": "play",
    "strumming": "play",
    "playe": "play",  # the lemma of "playing"
    "lift": "pick",
    "lifting": "pick",
    "girl": "boy",  # close in a real model too; kinds of one thing must not align
    "enabled": "disabled",  # as close in a real model (MiniLM 0.8): a prefix turns it around
    "enable": "disable",
    "gramado": "grama",
    "приобрести": "купить",
}


class ThesaurusEmbedder:
    """The fake embedder, with each listed word replaced by its meaning first."""

    def __init__(self) -> None:
        self.fake = FakeEmbedder()
        self.dimensions = self.fake.dimensions
        self.identity = "thesaurus-fake"

    def _map(self, text: str) -> str:
        return re.sub(r"\w+", lambda m: THESAURUS.get(m.group().lower(), m.group()), text)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.fake.embed_documents([self._map(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self.fake.embed_query(self._map(text))


class _Plugin:
    @hookimpl
    def memvault_register_embedders(self, register):  # type: ignore[no-untyped-def]
        register("thesaurus-fake", lambda argument: ThesaurusEmbedder())


@pytest.fixture
def thesaurus(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    plugin = _Plugin()
    register_plugin(plugin, name="thesaurus-fake-plugin")
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "thesaurus-fake")
    clear_embedder_cache()
    try:
        yield
    finally:
        unregister_plugin(plugin)
        clear_embedder_cache()


def _verdict(vault: Vault, fact: str, statement: str) -> tuple[str, str]:
    vault.add("semantic", fact, id="f-0")
    result = vault.validate(statement, log=False)
    return result.verdict, result.why


FACT = "A man is playing a guitar on the grass."


# --- the alignment ------------------------------------------------------------------------


def test_a_word_near_in_meaning_is_aligned(thesaurus: None, vault: Vault) -> None:
    verdict, why = _verdict(vault, FACT, "A man is playing a guitar on the lawn.")
    assert verdict == "supported", why
    assert "aligned lawn ~ grass" in why


def test_a_verb_near_in_meaning_is_aligned(thesaurus: None, vault: Vault) -> None:
    verdict, why = _verdict(vault, FACT, "A man is strumming a guitar on the grass.")
    assert verdict == "supported", why
    assert "aligned strum ~ play" in why


def test_portuguese_is_aligned_too(thesaurus: None, vault: Vault) -> None:
    fact = "Um homem está tocando violão no gramado."
    verdict, why = _verdict(vault, fact, "Um homem está tocando violão na grama.")
    assert verdict == "supported", why


def test_without_a_near_word_the_statement_stays_unknown(thesaurus: None, vault: Vault) -> None:
    # "beach" is near nothing of the fact: the statement says more than the fact
    verdict, why = _verdict(vault, FACT, "A man is playing a guitar on the beach.")
    assert verdict == "unknown", why


# --- what still decides over aligned words -------------------------------------------------


def test_a_role_swap_with_an_aligned_verb_is_not_supported(thesaurus: None, vault: Vault) -> None:
    vault.add("semantic", "The woman is picking up the kangaroo.", id="f-0")
    same = vault.validate("The woman is lifting the kangaroo.", log=False)
    assert same.verdict == "supported", same.why  # the verb is aligned ...
    swapped = vault.validate("The kangaroo is lifting the woman.", log=False)
    assert swapped.verdict == "unknown", swapped.why  # ... and the roles still read
    assert "another role" in swapped.why


def test_a_negation_with_an_aligned_word_is_not_supported(thesaurus: None, vault: Vault) -> None:
    verdict, why = _verdict(vault, FACT, "A man is not strumming a guitar on the grass.")
    # nor contradicted: a word near in meaning is not the fact's word
    assert verdict == "unknown", why


def test_another_kind_of_one_thing_is_never_aligned(thesaurus: None, vault: Vault) -> None:
    # the thesaurus gives "girl" the vector of "boy", as a real model nearly does
    fact = "A boy is playing a guitar on the grass."
    verdict, why = _verdict(vault, fact, "A girl is playing a guitar on the grass.")
    assert verdict == "unknown", why


def test_a_word_with_another_prefix_is_never_aligned(thesaurus: None, vault: Vault) -> None:
    # "enabled" was aligned to "disabled" and the opposite was "supported"
    fact = "Writing to the analytics replica is disabled."
    verdict, why = _verdict(vault, fact, "Writing to the analytics replica is enabled.")
    assert verdict == "unknown", why


@pytest.mark.parametrize(
    ("word", "other"),
    [
        ("enable", "disable"),
        ("import", "export"),
        ("upload", "download"),
        ("increase", "decrease"),
    ],
)
def test_prefix_variants_do_not_align(word: str, other: str) -> None:
    assert not allowed(word, other)
    assert allowed("lawn", "grass")  # unrelated forms still may


@pytest.mark.parametrize(
    ("word", "other"), [("inquire", "enquire"), ("fenómeno", "fenômeno"), ("ótimo", "óptimo")]
)
def test_a_spelling_of_the_same_word_may_align(word: str, other: str) -> None:
    assert allowed(word, other)


def test_a_direction_turned_around_is_not_stated(vault: Vault) -> None:
    verdict, why = _verdict(
        vault, "A truck is quickly going down a hill.", "A truck is quickly going up a hill."
    )
    assert verdict == "unknown", why
    assert "down, not up" in why


# --- the aligner itself -------------------------------------------------------------------


def test_russian_statements_are_not_aligned() -> None:
    # TERRa: a verb's aspect is what changes the meaning; close vectors must not bridge it
    aligner = Aligner(ThesaurusEmbedder())
    fact, claim = read("Компания купила завод."), read("Компания приобрела завод.")
    assert aligner.align({"приобрести"}, {"купить"}) == {"приобрести": "купить"}
    assert "aligned" not in weigh(claim, fact, align=aligner).why


def test_one_word_at_most_and_only_above_the_threshold() -> None:
    aligner = Aligner(ThesaurusEmbedder())
    assert aligner.align({"lawn"}, {"grass", "guitar"}) == {"lawn": "grass"}
    assert aligner.align({"lawn", "strum"}, {"grass", "play"}) == {}  # two words: not a paraphrase
    assert aligner.align({"beach"}, {"grass"}) == {}
    assert Aligner(ThesaurusEmbedder(), threshold=1.01).align({"lawn"}, {"grass"}) == {}
