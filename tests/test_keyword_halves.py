"""The plain keyword query of a large index, run as two halves of the rowids side by side
(memvault.index.query._in_halves): the merged halves are the whole query's answer, ties at
the cut included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault import Vault
from memvault.index import query
from memvault.index.handle import open_indexes
from memvault.transfer import import_file

WORDS = ("cache", "deploy", "budget", "schema", "invoice", "staging")


def test_two_halves_give_the_whole_answer(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = []
    for i in range(400):
        # every text twice, 200 memories apart: equal scores on both sides of the middle
        n = i % 200
        words = " ".join(WORDS[(n + j) % len(WORDS)] for j in range(1 + n % 4))
        lines.append(json.dumps({"id": f"m{i:04d}", "type": "semantic", "content": words}))
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert import_file(vault.core, source).problems == []
    vault.search("warm", log=False)
    idx = open_indexes.get(vault.root)
    assert idx is not None
    middle = idx.rowid_middle()
    score = "bm25(fts, 1.0, 1.0, 0.5)"
    asked = 0
    for count in range(1, 4):
        for start in range(len(WORDS)):
            expr = query.match_expression([WORDS[(start + j) % len(WORDS)] for j in range(count)])
            assert expr is not None
            for fetch in (1, 3, 7, 40, 1000):
                monkeypatch.setattr(query, "SPLIT_ABOVE", 10**9)
                whole = query._plain_rows(idx, expr, fetch, score)
                monkeypatch.setattr(query, "SPLIT_ABOVE", 0)
                halves = query._plain_rows(idx, expr, fetch, score)
                assert halves == whole, (expr, fetch)
                asked += any(r < middle for r, _ in whole) and any(r >= middle for r, _ in whole)
    assert asked >= 30  # of 90: the answers holding rows of both halves
