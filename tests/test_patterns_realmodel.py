"""Promotion of problems that recur in other words, with the real model (all-MiniLM-L6-v2).

The episodes are ``bench/data/patterns.json``: a recurrence retold under the cosine that
links on meaning alone, and three other problems of one component (Ukrainian, where MiniLM
finds any two sentences alike). Real git, real index; the proposal's text is checked too.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from memvault import Vault
from memvault.consolidate import consolidate, promote

DATA = Path(__file__).resolve().parents[1] / "bench" / "data" / "patterns.json"
NOW = dt.datetime(2026, 12, 15, tzinfo=dt.UTC)


def series(kind: str, tags: str) -> dict[str, Any]:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    return next(s for s in data[kind] if s["tags"] == [tags])


def planted(tmp_path: Path, group: dict[str, Any]) -> tuple[Vault, list[str]]:
    vault = Vault.init(tmp_path / "v")
    ids = [
        vault.add(
            "episodic", ep["text"], created=f"{ep['day']}T10:00:00Z", outcome="failure",
            tags=group["tags"],
        ).memory.id
        for ep in group["episodes"]
    ]  # fmt: skip
    vault.reindex()
    return Vault.open(vault.root), ids


def proposals(vault: Vault) -> list[Any]:
    consolidate(vault.core, now=NOW, only=["promote"])
    return Vault.open(vault.root).inbox()


@pytest.mark.realmodel
def test_a_problem_recurring_in_other_words_is_one_proposal_stating_what_it_shares(
    real_model: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = series("recurrences", "auth")  # logins failing on clock skew, reworded
    vault, ids = planted(tmp_path, group)
    (proposal,) = proposals(vault)
    assert sorted(proposal.meta["derived_from"]) == sorted(ids)
    body = proposal.content
    assert "auth" in body and "3 of 3" in body and all(i in body for i in ids)
    assert body.startswith("Recurs in 3 episodes")
    for ep in group["episodes"]:  # the rule, not a quote of one episode
        assert ep["text"] not in body and ep["text"].rstrip(".") not in body
    # without the link for reworded pairs (shared words under the meaning-only cosine):
    # none of the three pairs reaches 0.75, and nothing is proposed
    monkeypatch.setattr(promote, "REWORDED_SHARED", 99)
    again, _ = planted(tmp_path / "again", group)
    assert proposals(again) == []


@pytest.mark.realmodel
def test_other_problems_of_one_component_are_no_pattern(
    real_model: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault, _ = planted(tmp_path, series("unrelated", "billing"))  # Ukrainian, three problems
    assert proposals(vault) == []
    monkeypatch.setattr(promote, "FOREIGN_OVERLAP", 0.0)  # the cosine alone joins them
    again, _ = planted(tmp_path / "again", series("unrelated", "billing"))
    assert len(proposals(again)) == 1
