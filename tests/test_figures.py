"""README's figures table is what tools/figures.py writes from docs/figures/*.json."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("figures_tool", ROOT / "tools" / "figures.py")
assert spec is not None and spec.loader is not None
figures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(figures)


def test_readme_table_is_current() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert figures.rewritten(text) == text, "run python tools/figures.py"


def test_a_figure_edited_by_hand_is_caught() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text[text.index(figures.BEGIN) : text.index(figures.END)]
    row = next(line for line in block.splitlines() if line.startswith("| LoCoMo turn R@5"))
    edited = text.replace(row, row.replace("| LoCoMo turn R@5, % | ", "| LoCoMo turn R@5, % | 9"))
    assert edited != text
    assert figures.rewritten(edited) == text


def test_every_figure_says_what_it_measures_and_where_it_comes_from() -> None:
    block = figures.render()
    rows = [line for line in block.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) > 10
    for row in rows[1:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 4 and all(cells), row
    assert "best turn over 50 hits" in block  # the session R@5 definition, beside it
    for name, command in figures.COMMANDS.items():
        assert f"`{command}`" in block and f"docs/figures/{name}.json" in block


def test_the_session_definition_matches_the_bench() -> None:
    """The table says "best turn over 50 hits": 50 must be what the conversation bench
    (bench/locomo.py, its harness in bench/conversations.py) asks."""
    source = (ROOT / "bench" / "conversations.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    results = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "RESULTS" for t in node.targets)
    )
    assert ast.literal_eval(results) == figures.RECALL_LIMIT
    assert "limit=RESULTS" in source or "limit=50" in source
    assert "sessions ranked by their best-ranked turn" in " ".join(source.split())
