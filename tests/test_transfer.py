"""Export and import through the API: JSONL round-trips byte for byte, Markdown bundles,
hand-made JSONL records, and the seeds' YAML ``episodes:`` files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault import Vault
from memvault.errors import MemvaultError
from memvault.transfer import export_memories, import_file

from helpers import commit_count, git, is_clean, last_message, write

HAND_FILES = {
    "semantic/facts/commented.md": (
        "---\n# keep me\ntype: semantic\nid: commented   # odd order\n\ntags:\n  - a\n---\n"
        "\nBody with trailing spaces   \n\n\n"
    ),
    "semantic/facts/crlf-bom.md": (
        "\ufeff---\r\nid: crlf-bom\r\ntype: semantic\r\n---\r\n\r\nWindows.\r\n"
    ),
    "semantic/facts/no-newline.md": "---\nid: no-newline\ntype: semantic\n---\nno final newline",
    "procedural/templates/as-yaml.yaml": (
        "id: as-yaml\ntype: procedural\ncategory: templates\n# comment\n"
        "content: |\n  Template body.\n"
    ),
    "archive/semantic/facts/old.md": (
        "---\nid: old\ntype: semantic\nstatus: archived\n---\nArchived.\n"
    ),
    "inbox/semantic/facts/proposal.md": (
        "---\nid: proposal\ntype: semantic\nscope: global\nstatus: proposed\n---\nProposed.\n"
    ),
    "episodic/2025/01/2025-01-02-unicode.md": (
        "---\nid: 2025-01-02-unicode\ntype: episodic\ncreated: 2025-01-02\n---\n"
        "naïve café — 日本語 ✓\n"
    ),
}


def files_of(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for tree in ("episodic", "semantic", "procedural", "archive", "inbox"):
        for p in sorted((root / tree).rglob("*")):
            if p.is_file() and p.name != ".gitkeep":
                out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


@pytest.fixture
def source(vault: Vault) -> Vault:
    for rel, text in HAND_FILES.items():
        write(vault.root, rel, text)
    vault.add("semantic", "The API rate limit is 100 req/s", subject="api.rate", tags=["api"])
    vault.add("semantic", "The API rate limit is 200 req/s", subject="api.rate")
    vault.add(
        "episodic", "Deploy went fine", outcome="success", context={"branch": "main", "ci": [1, 2]}
    )
    vault.add("procedural", "Release", steps=["Tag", {"run": "make release"}], trigger=["release"])
    vault.log("chat", "user", "hello there")
    return vault


def test_jsonl_round_trip_is_byte_identical(source: Vault, tmp_path: Path) -> None:
    text = export_memories(source.core, "jsonl")
    lines = text.splitlines()
    assert len(lines) == len(HAND_FILES) + 5
    for line in lines:
        record = json.loads(line)
        assert record["raw"] == (source.root / record["path"]).read_bytes().decode("utf-8")
    dump = tmp_path / "dump.jsonl"
    dump.write_text(text, encoding="utf-8")
    target = Vault.init(tmp_path / "target")
    report = import_file(target.core, dump)
    assert report.problems == [] and report.added == len(lines) and report.skipped == 0
    assert files_of(target.root) == files_of(source.root)
    assert commit_count(target.root) == 2 and is_clean(target.root)
    assert export_memories(target.core, "jsonl") == text


def test_markdown_bundle_round_trip(source: Vault, tmp_path: Path) -> None:
    bundle = tmp_path / "bundle.md"
    bundle.write_bytes(export_memories(source.core, "markdown").encode("utf-8"))
    target = Vault.init(tmp_path / "target")
    report = import_file(target.core, bundle)
    assert report.problems == []
    expected = {k: v for k, v in files_of(source.root).items()}
    got = files_of(target.root)
    assert set(got) == set(expected)
    for rel in expected:
        if rel == "semantic/facts/no-newline.md":
            # the bundle is a Markdown document: a file without a final newline gains one
            assert got[rel] == expected[rel] + b"\n"
        else:
            assert got[rel] == expected[rel], rel


def test_export_without_archive(source: Vault) -> None:
    text = export_memories(source.core, "jsonl", include_archive=False)
    paths = [json.loads(line)["path"] for line in text.splitlines()]
    assert not any(p.startswith(("archive/", "inbox/")) for p in paths)
    with pytest.raises(MemvaultError):
        export_memories(source.core, "xml")


def test_export_respects_scopes(vault: Vault) -> None:
    a = Vault.open(vault.root, agent="a")
    a.add("semantic", "A's private memory", scope="self")
    a.add("semantic", "Everyone's memory")
    b = Vault.open(vault.root, agent="b")
    assert "private" not in export_memories(b.core, "jsonl")
    assert "private" not in export_memories(b.core, "markdown")
    assert "private" in export_memories(a.core, "jsonl")


def test_import_hand_made_jsonl_records(vault: Vault, tmp_path: Path) -> None:
    src = tmp_path / "made.jsonl"
    src.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {
                    "id": "made-fact",
                    "type": "semantic",
                    "category": "definitions",
                    "content": "A definition.",
                    "tags": ["x"],
                },
                {
                    "id": "made-episode",
                    "type": "episodic",
                    "created": "2024-02-03T04:05:06Z",
                    "content": "It happened.",
                },
                {"id": "made-proc", "type": "procedural", "steps": ["one"], "content": "Do it."},
            ]
        )
        + "\n\n"
    )
    report = import_file(vault.core, src)
    assert report.problems == [] and sorted(report.ids) == [
        "made-episode",
        "made-fact",
        "made-proc",
    ]
    assert vault.get("made-fact").path == "semantic/definitions/made-fact.md"
    assert vault.get("made-episode").path == "episodic/2024/02/made-episode.md"
    assert vault.get("made-proc").meta["steps"] == ["one"]
    assert last_message(vault.root) == "memvault: import 3 memories from made.jsonl"
    assert git(vault.root, "show", "--name-only", "--format=", "HEAD").count(".md") == 3


def test_import_refuses_unsafe_paths_and_secrets(vault: Vault, tmp_path: Path) -> None:
    src = tmp_path / "evil.jsonl"
    records = [
        {
            "raw": "---\nid: evil\ntype: semantic\n---\nx\n",
            "path": "../evil.md",
            "id": "evil",
            "type": "semantic",
        },
        {"raw": "---\nid: git-hook\ntype: semantic\n---\nx\n", "path": ".git/hooks/post-commit.md"},
        {"id": "leak", "type": "semantic", "content": "token ghp_" + "a" * 36},
    ]
    src.write_text("".join(json.dumps(r) + "\n" for r in records))
    before = commit_count(vault.root)
    assert import_file(vault.core, src).added == 0  # a bad record: nothing written by default
    assert commit_count(vault.root) == before
    report = import_file(vault.core, src, skip_bad=True)
    # an unsafe path is ignored: the record is re-homed by its id and type, never outside the trees
    assert report.ids == ["evil"] and vault.get("evil").path == "semantic/facts/evil.md"
    assert not (vault.root.parent / "evil.md").exists()
    assert not (vault.root / ".git/hooks/post-commit.md").exists()
    assert len(report.problems) == 2
    assert any("GitHub token" in str(p) for p in report.problems)
    assert "ghp_" not in "".join(p.read_text() for p in vault.root.rglob("*.md"))
    assert commit_count(vault.root) == before + 1


def test_import_missing_or_binary_file(vault: Vault, tmp_path: Path) -> None:
    with pytest.raises(MemvaultError) as info:
        import_file(vault.core, tmp_path / "missing.jsonl")
    assert "missing.jsonl" in str(info.value)
    binary = tmp_path / "x.jsonl"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(MemvaultError):
        import_file(vault.core, binary)


SEED = """\
# Episodes exported from the seed system (EPISODE_SCHEMA)
episodes:
  - id: "ep_2025-12-28_001"
    timestamp: "2025-12-28T14:30:00Z"
    session_id: "sess_abc123"
    type: "decision"
    context:
      query: "Devemos subir os preços?"
      intent: "DECISION"
      squad: ["CRO", "CFO", "Pre-Mortem"]
      urgency: 3
      scope: "medium"
    content:
      summary: "Subir preços 10% para novos clientes"
      detail: "Clientes atuais mantêm o preço por 12 meses."
      agents_perspectives:
        CRO: "Receita"
        CFO: "Margem"
        Pre-Mortem: "Churn"
    outcome:
      recommendation: "Subir para novos"
      user_action: "accepted"
      result: "success"
      learned: "Grandfathering evita churn"
    connections:
      related_episodes: ["ep_2025-12-20_004", "ep_2025-12-21_001"]
      related_decisions: ["dec_001"]
      related_hypotheses: ["HYP-001"]
    metadata:
      importance: 4
      decay_rate: "slow"
      last_accessed: "2025-12-28T14:30:00Z"
      access_count: 1
  - id: "ep_2025-12-30_003"
    timestamp: "2025-12-30T08:00:00Z"
    session_id: "sess_x"
    type: "feedback"
    content: "Plain string content"
    outcome:
      user_action: null
      result: null
    metadata:
      importance: 9
      decay_rate: "sometimes"
"""


def test_import_seed_episodes(vault: Vault, tmp_path: Path) -> None:
    seed = tmp_path / "seed.yaml"
    seed.write_text(SEED, encoding="utf-8")
    report = import_file(vault.core, seed)
    assert report.problems == [] and report.added == 2
    first = vault.get("ep-2025-12-28-001")
    assert first.type == "episodic" and first.category == "decision"
    assert first.path == "episodic/2025/12/ep-2025-12-28-001.md"
    assert (
        first.meta["created"] == "2025-12-28T14:30:00Z" and first.meta["session"] == "sess_abc123"
    )
    assert (
        first.importance == 4
        and first.meta["decay"] == "slow"
        and first.meta["outcome"] == "success"
    )
    assert first.meta["context"]["intent"] == "DECISION"
    assert (
        "Subir preços" in first.content
        and "Grandfathering" in first.content
        and "12 meses" in first.content
    )
    assert first.meta["source"] == {"imported_id": "ep_2025-12-28_001"}
    second = vault.get("ep-2025-12-30-003")
    assert second.content.startswith("Plain string content")
    assert second.importance == 3  # 9 is out of range: dropped, not fatal
    assert "decay" not in second.meta
    from memvault.reports import doctor_report

    problems = doctor_report(vault.core)["problems"]
    assert problems == []
    again = import_file(vault.core, seed)
    assert again.added == 0 and again.skipped == 2


def test_import_seed_yaml_errors(vault: Vault, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("episodes: [unclosed\n")
    with pytest.raises(MemvaultError) as info:
        import_file(vault.core, bad)
    assert "bad.yaml" in str(info.value)
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("facts:\n  - a\n")
    with pytest.raises(MemvaultError) as info:
        import_file(vault.core, wrong)
    assert "episodes" in str(info.value)
