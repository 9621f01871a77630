"""The count of a group named one by one (``memvault.validate.groups``), read from real
tokens (the lemmatiser's dictionaries, the kinds list): what ``validate`` compares a
statement's count of people with."""

from __future__ import annotations

import pytest

from memvault.validate.groups import group_total


@pytest.mark.parametrize(
    ("text", "lang", "total"),
    [
        ("A man and a woman are walking", "en", 2.0),
        ("A man, a woman and two girls are walking on the beach", "en", 4.0),
        ("2 men and 3 women are waiting", "en", 5.0),
        ("Two young boys and an old man are fishing", "en", 3.0),
        ("Um homem, duas mulheres e duas meninas estão andando", "pt", 5.0),
        ("Duas meninas e uma senhora estão dançando", "pt", 3.0),
        # one member is no group; a member that is no person ends it
        ("A man is walking", "en", None),
        ("Two men and a dog are walking", "en", None),
        # a noun without a count leaves the sum unknown ("women" may be any number)
        ("A man and women are walking", "en", None),
        # two clauses are not one group
        ("A man is walking and a woman is singing", "en", None),
    ],
)
def test_group_total(text: str, lang: str, total: float | None) -> None:
    assert group_total(text, lang, frozenset({"person"})) == total
