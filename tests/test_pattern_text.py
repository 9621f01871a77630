"""What a proposed pattern says (consolidate/pattern_text.py): the fix most episodes name,
the outcome in the episodes' language, and no function words among the shared terms."""

from __future__ import annotations

from memvault.consolidate.pattern_text import state_pattern
from memvault.memory import Memory


def episodes(*texts: str, outcome: str = "failure") -> list[Memory]:
    return [
        Memory(
            id=f"ep-{k}",
            type="episodic",
            path=f"episodic/session/ep-{k}.md",
            meta={"outcome": outcome, "created": f"2026-10-0{k + 1}T10:00:00Z"},
            content=text,
        )
        for k, text in enumerate(texts)
    ]


def test_the_fix_most_episodes_name_is_stated_with_its_count() -> None:
    members = episodes(
        "Checkout calls to inventory timed out on DNS; fixed by restarting the resolver pods.",
        "Inventory lookups failed again, resolved by restarting resolver pods.",
        "Inventory errors from slow name resolution; workaround: raise the client timeout.",
    )
    body = state_pattern(members, members[0]).body
    # two of three name one fix in other words: the first wording, counted 2 of 3
    assert 'Fixed by "restarting the resolver pods" in 2 of 3.' in body
    assert "raise the client timeout" not in body


def test_no_fix_named_no_fix_line() -> None:
    members = episodes(
        "Inventory calls failed on DNS timeouts.",
        "Inventory errors again: the resolver did not answer.",
        "Another inventory outage from slow name resolution.",
    )
    assert "Fixed by" not in state_pattern(members, members[0]).body


def test_a_portuguese_pattern_says_its_fix_and_outcome_in_portuguese() -> None:
    members = episodes(
        "O painel não carregou porque o CORS bloqueou as chamadas à API; resolvido com a "
        "origem nova na lista.",
        "De novo o painel falhou: o navegador bloqueou as chamadas à API por CORS; corrigido "
        "com a origem nova na lista.",
        "Chamadas do painel à API barradas pelo CORS no navegador.",
    )
    said = state_pattern(members, members[0])
    assert said.language == "pt"
    assert "Resultado falha em 3 de 3." in said.body  # the outcome translated
    assert 'Resolvido com "a origem nova na lista" em 2 de 3.' in said.body
    # the keyword index's stop words are no pattern terms ("à" is in every episode)
    assert "painel" in said.terms and "CORS" in said.terms and "à" not in said.terms
