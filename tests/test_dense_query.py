"""What the vector leg embeds: the query without the names of the vault's speakers.

Real vaults (git, SQLite, Chroma), transcripts imported with ``memvault.ingest.ingest_file``
(the function ``memvault ingest`` calls); the fake embedder records the texts it is asked
to embed as queries.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memvault import Vault
from memvault.embeddings.fake import FakeEmbedder
from memvault.index import ensure_fresh
from memvault.index.query import dense_query
from memvault.ingest import ingest_file

CHAT = [
    ("Anna Maria", "We moved into the flat by the harbour last spring."),
    ("jean-luc", "Lovely! I started cello lessons at the bakery's back room."),
    ("Anna Maria", "The harbour smells of fresh bread every morning."),
    ("jean-luc", "My teacher says the cello suits me."),
    ("user", "Can someone remind me to water the tomatoes?"),
    ("assistant", "I will remind you tomorrow morning."),
]


def transcript(folder: Path, session: str, lines: list[tuple[str, str]]) -> Path:
    """A generic-JSONL transcript as an agent's log holds it (a name, or only a role)."""
    path = folder / f"{session}.jsonl"
    rows = []
    for i, (who, text) in enumerate(lines):
        row: dict[str, Any] = {
            "role": who if who in ("user", "assistant") else "user",
            "content": text,
            "timestamp": f"2024-03-03T10:{i:02d}:00Z",
            "id": f"{session}-{i}",
            "session": session,
        }
        if who not in ("user", "assistant"):
            row["name"] = who
        rows.append(json.dumps(row))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def chat(tmp_path: Path) -> Vault:
    vault = Vault.init(tmp_path / "v")
    report = ingest_file(vault.core, transcript(tmp_path, "s1", CHAT))
    assert report.added == len(CHAT) and not report.problems
    vault.reindex()
    return vault


@pytest.fixture
def embedded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the (fake) embedder is asked to embed as a query."""
    texts: list[str] = []
    original = FakeEmbedder.embed_query

    def recording(self: FakeEmbedder, text: str) -> np.ndarray:
        texts.append(text)
        return original(self, text)

    monkeypatch.setattr(FakeEmbedder, "embed_query", recording)
    return texts


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did Anna Maria say about the harbour?", "What did say about the harbour?"),
        ("what did ANNA   maria say about the harbour?", "what did say about the harbour?"),
        ("Where is Anna Maria's flat?", "Where is flat?"),
        ("Where is Anna Maria’s flat?", "Where is flat?"),
        ("What did Anna say about bread?", "What did say about bread?"),  # a first name
        ("When did jean-luc start the cello?", "When did start the cello?"),
        ("When did Jean-Luc's lessons start?", "When did lessons start?"),
        ("How is jean doing?", "How is doing?"),  # the first part of a hyphenated name
        ("Did Annabel or Jeanne call?", "Did Annabel or Jeanne call?"),  # other names
        ("Anna Maria", "Anna Maria"),  # nothing but names: the query stays whole
        ("what did the user ask to be reminded of?", "what did the user ask to be reminded of?"),
        ("what did the assistant promise?", "what did the assistant promise?"),
    ],
)
def test_dense_query_leaves_out_the_speakers_names(chat: Vault, query: str, expected: str) -> None:
    assert dense_query(ensure_fresh(chat.core), query) == expected


def test_a_vault_without_speakers_embeds_the_query_as_written(vault: Vault) -> None:
    vault.add("semantic", "Anna Maria runs the bakery by the harbour", subject="bakery.owner")
    vault.reindex()
    query = "Who is Anna Maria?"
    assert dense_query(ensure_fresh(vault.core), query) == query


def test_the_vector_leg_embeds_the_query_without_names(chat: Vault, embedded: list[str]) -> None:
    found = chat.recall("What did Anna Maria say about the harbour?", explain=True, log=False)
    assert embedded[-1] == "What did say about the harbour?"
    hits = list(found)
    assert hits and all(h.explain["vector"]["query"] == embedded[-1] for h in hits)
    # ... and the named speaker's turns come first: the speaker term carries the name.
    assert hits[0].turn is not None and hits[0].turn.speaker == "Anna Maria"

    embedded.clear()
    chat.recall("where is the bakery?", log=False)
    assert embedded == ["where is the bakery?"]  # no name: embedded as asked


def test_context_embeds_the_query_without_names_once(chat: Vault, embedded: list[str]) -> None:
    block = chat.context("what did jean-luc say about the cello?", budget=400, log=False)
    assert "cello" in block.text
    # the whole query once (context's own), the query without the name once for its sections
    assert embedded == ["what did jean-luc say about the cello?", "what did say about the cello?"]


def test_a_new_speaker_is_known_after_the_next_write(
    chat: Vault, tmp_path: Path, embedded: list[str]
) -> None:
    chat.recall("what did Sam Okafor say about Cork?", log=False)
    assert embedded[-1] == "what did Sam Okafor say about Cork?"
    lines = [("Sam Okafor", "Cork was rainy all week."), ("Anna Maria", "Bring a coat!")]
    ingest_file(chat.core, transcript(tmp_path, "s2", lines))
    chat.reindex()
    chat.recall("what did Sam Okafor say about Cork?", log=False)
    assert embedded[-1] == "what did say about Cork?"


def test_a_name_that_is_a_function_word_stays_in_the_embedded_query(
    chat: Vault, tmp_path: Path
) -> None:
    ingest_file(chat.core, transcript(tmp_path, "s3", [("Will", "The deploy went fine.")]))
    chat.reindex()
    idx = ensure_fresh(chat.core)
    assert dense_query(idx, "Will the deploy work on Friday?") == "Will the deploy work on Friday?"
    assert dense_query(idx, "Did jean-luc deploy?") == "Did deploy?"


def test_a_speaker_the_search_catches_up_on_is_left_out_of_its_vector(
    chat: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A warm search starts embedding before it brings the index up to date, with the text
    # the index it read last gives; here the catch-up learns a new speaker, so the vector
    # leg must search with the query embedded again, without the new name.
    import memvault.index.query as iq

    question = "what did Sam Okafor say about Cork?"
    chat.recall(question, log=False)
    lines = [("Sam Okafor", "Cork was rainy all week."), ("Anna Maria", "Bring a coat!")]
    ingest_file(chat.core, transcript(tmp_path, "s2", lines))  # no reindex: the search catches up
    searched: list[np.ndarray] = []
    vector_leg = iq.vector_leg

    def recording(idx: Any, qvec: np.ndarray, *rest: Any) -> Any:
        searched.append(np.asarray(qvec))
        return vector_leg(idx, qvec, *rest)

    monkeypatch.setattr(iq, "vector_leg", recording)
    chat.recall(question, log=False)
    fake = FakeEmbedder()
    assert np.array_equal(searched[-1], fake.embed_query("what did say about Cork?"))
