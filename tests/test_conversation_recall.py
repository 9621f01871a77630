"""Recall inside conversation transcripts: turns as hits, through the path users take.

The conversations come from ``tests/data/conversations.json`` (memvault's own small set in
LoCoMo's format: two conversations, ``Anna Maria`` / ``jean-luc`` and ``Mary-Kate`` /
``Sam Okafor``). Vaults are built with ``bench/locomo.py``'s own functions: each session
written as a generic-JSONL transcript and imported with ``memvault.ingest.ingest_file``.

Fast tests use the fake embedder; ``realmodel`` tests run all-MiniLM-L6-v2 and guard the
turn R@5 figures recorded below.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from memvault.search.ranking import WEIGHTS

from helpers import Result, git

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "conversations.json"
MARKUP = ("###", "<!--", "turn:")


def _load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("locomo_bench", ROOT / "bench" / "locomo.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


bench = _load_bench()
CONVERSATIONS = bench.load(DATA)


def build(folder: Path, index: int = 0) -> Any:
    """A vault holding one conversation of the test set (``bench.Built``)."""
    return bench.build_transcripts(CONVERSATIONS[index], folder, None)


def turn_hits(result: Any) -> list[Any]:
    hits = list(result)
    assert hits and all(h.turn is not None for h in hits), [h.address for h in hits]
    return hits


# --- the test set itself ---------------------------------------------------------------------


def test_the_test_set_loads_as_the_bench_reads_it() -> None:
    assert [c.name for c in CONVERSATIONS] == ["chat-1", "chat-2"]
    speakers = {t.speaker for c in CONVERSATIONS for t in c.turns}
    assert speakers == {"Anna Maria", "jean-luc", "Mary-Kate", "Sam Okafor"}
    assert [len(c.sessions) for c in CONVERSATIONS] == [4, 3]
    assert all(15 <= len(s.turns) <= 25 for c in CONVERSATIONS for s in c.sessions)
    questions = [q for c in CONVERSATIONS for q in c.questions]
    assert len(questions) == 49 and {q.cat for q in questions} == {1, 2, 4}
    # every question kept all its evidence (no id dropped as unknown)
    raw = json.loads(DATA.read_text(encoding="utf-8"))
    assert [len(q.evidence) for q in questions] == [
        len(q["evidence"]) for s in raw for q in s["qa"]
    ]
    lines = bench.transcript_lines(CONVERSATIONS[1], CONVERSATIONS[1].sessions[1])
    assert lines[-1]["content"].endswith(
        " [image: a black and white puppy sleeping on a running shoe]"
    )
    assert lines[1]["timestamp"] == "2023-02-02T20:06:00Z" and lines[1]["id"] == "D2:2"


def test_bench_json_is_the_only_output(capsys: pytest.CaptureFixture[str]) -> None:
    code = bench.main(["--data", str(DATA), "--limit-conversations", "1", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    result = json.loads(out)  # one JSON object, nothing else
    assert result["layout"] == "transcripts" and result["errors"] == []
    assert result["turn"]["n"] == 25 and result["heldout"]["turn"]["n"] == 0
    assert set(result["baselines"]) == {
        *("bm25", "dense", "bm25_dated", "dense_dated", "no_floor", "rrf"),
        *("keyword_leg", "vector_leg", "rrf_legs"),
    }
    assert {"R@1", "R@5", "R@10", "H@5"} <= set(result["session"]["overall"])
    assert set(result["latency_ms"]) == {"p50", "p95"}


def test_reuse_asks_the_kept_vaults_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--workdir DIR --reuse`` asks the vaults an earlier run kept instead of building them
    again (a BEAM conversation takes minutes to index); the figures are the same."""
    args = ["--data", str(DATA), "--limit-conversations", "1", "--no-baselines", "--json"]
    args += ["--workdir", str(tmp_path), "--reuse"]
    assert bench.main(args) == 0
    first = json.loads(capsys.readouterr().out)
    sentinel = next(tmp_path.glob("locomo/conv1/vault")) / "kept"
    sentinel.write_text("a rebuilt vault loses this", encoding="utf-8")
    assert bench.main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert sentinel.exists() and again["turn"] == first["turn"]
    assert bench.main([a for a in args if a != "--reuse"]) == 0  # without it: built anew
    assert not sentinel.exists()


def test_session_figures_rank_sessions_by_their_best_turn() -> None:
    session_of = {"a": 1, "b": 1, "c": 2, "d": 1, "e": 3, "f": 4}
    m = bench.score_ranking(["a", "b", "c", "d", "e", "f"], ["e", "f"], session_of)
    assert m["R@5"] == 0.5 and m["H@5"] == 1.0  # turn e is in the first 5, f is not
    # sessions in order of their best turn: 1, 2, 3, 4 -- both evidence sessions in the first 5
    assert m["sR@1"] == 0.0 and m["sR@5"] == 1.0 and m["sH@5"] == 1.0
    # ... but the first five hits reach session 3 only
    assert m["sR@5_hits"] == 0.5 and m["sH@5_hits"] == 1.0
    missed = bench.score_ranking(["a", "b", "c", "d", "e", "f"], ["f"], session_of)
    assert missed["sR@5"] == 1.0 and missed["sR@5_hits"] == 0.0 and missed["sH@5_hits"] == 0.0


def test_bench_fails_when_a_conversation_does_not_ingest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = json.loads(DATA.read_text(encoding="utf-8"))[:1]
    raw[0]["conversation"]["session_2"][3]["text"] = "   "  # a turn ingest leaves out
    data = tmp_path / "broken.json"
    data.write_text(json.dumps(raw), encoding="utf-8")
    assert bench.main(["--data", str(data), "--json", "--no-baselines"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "chat-1 session 2: ingested 18/19 turns" in captured.err


# --- BEAM's shape, through the same harness --------------------------------------------------


def _exchange(first: int, user: str, assistant: str, anchor: str | None = None) -> list[Any]:
    opening: dict[str, Any] = {"role": "user", "id": first, "content": f"{user} ->-> 1,{first}"}
    if anchor:
        opening["time_anchor"] = anchor
    return [opening, {"role": "assistant", "id": first + 1, "content": assistant}]


def write_beam(folder: Path, *, evidence: bool = True) -> Path:
    """Two made-up conversations in BEAM's layout (``<n>/chat.json``,
    ``<n>/probing_questions.json``): "1" falls in the tune split, "3" in the held-out one."""
    chat = [
        {
            "batch_number": 1,
            "time_anchor": None,
            "turns": [
                _exchange(0, "My first sprint ends on March 29.", "Noted.", "March-15-2024"),
                _exchange(2, "The dashboard API answers in about 400ms.", "That is fine."),
                _exchange(4, "I like tabs over spaces in Go code.", "Gofmt uses tabs."),
            ],
        },
        {
            "batch_number": 2,
            "time_anchor": None,
            "turns": [
                _exchange(
                    6, "After caching the dashboard API is at 250ms.", "Good.", "April-05-2024"
                ),
                _exchange(8, "The release is tagged v1.0.0 on GitHub.", "Congratulations."),
            ],
        },
    ]

    def ids(value: Any) -> dict[str, Any]:
        return {"source_chat_ids": value} if evidence else {}

    probing = {
        "information_extraction": [
            {"question": "When does my first sprint end?", **ids([0])},
            {"question": "Which version did I tag the release as?", **ids([[8]])},
        ],
        "knowledge_update": [
            {
                "question": "How fast is the dashboard API?",
                **ids({"original_info": [2], "updated_info": [6]}),
            }
        ],
        "abstention": [{"question": "What is the name of my dog?"}],
    }
    for name in ("1", "3"):
        (folder / name).mkdir(parents=True)
        (folder / name / "chat.json").write_text(json.dumps(chat), encoding="utf-8")
        (folder / name / "probing_questions.json").write_text(json.dumps(probing), encoding="utf-8")
    return folder


def test_beam_runs_beside_locomo_through_the_same_harness(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_beam(tmp_path / "beam")
    data = bench.read_set(folder)
    assert [(c.name, c.split) for c in data.conversations] == [
        ("beam-1", "tune"),
        ("beam-3", "heldout"),
    ]
    lines = bench.transcript_lines(data.conversations[0], data.conversations[0].sessions[0])
    assert [line["role"] for line in lines] == ["user", "assistant"] and "name" not in lines[0]
    assert lines[0]["content"] == "My first sprint ends on March 29."  # the marker is cut
    assert lines[0]["timestamp"] == "2024-03-15T12:00:00Z"

    code = bench.main(["--data", str(DATA), "--data", str(folder), "--json"])
    out = capsys.readouterr().out
    assert code == 0
    locomo, beam = json.loads(out)["sets"]
    assert (locomo["set"], locomo["turn"]["n"], beam["set"]) == ("locomo", 49, "beam")
    # two scored questions and one update per conversation; the abstention one is a probe
    assert (beam["turn"]["n"], beam["tune"]["turn"]["n"], beam["heldout"]["turn"]["n"]) == (6, 3, 3)
    assert set(beam["turn"]["by_category"]) == {"information_extraction", "knowledge_update"}
    assert {"R@1", "R@5", "MRR"} <= set(beam["turn"]["overall"])
    assert set(beam["baselines"]) == set(locomo["baselines"])
    assert {"bm25", "dense", "rrf", "vector_leg", "keyword_leg", "rrf_legs"} <= set(
        beam["baselines"]
    )
    assert beam["baselines"]["bm25"]["heldout"]["turn"]["n"] == 3
    abstention = beam["lifecycle"]["abstention"]
    assert abstention["n"]["all"] == {"unanswerable": 2, "answerable": 6}
    assert abstention["top_score"]["tune"]["unanswerable"] is not None
    update = beam["lifecycle"]["knowledge_update"]
    assert update["all"]["n"] == 2 and update["all"]["neither_found"] == 0.0
    assert "best-ranked turn" in beam["definitions"]["session R@k"]
    assert locomo["lifecycle"] == {"abstention": None, "knowledge_update": None}


def test_beam_without_evidence_fails_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_beam(tmp_path / "beam", evidence=False)
    assert bench.main(["--data", str(folder), "--json", "--no-baselines"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "no question with evidence" in captured.err


def test_beam_turn_ingest_leaves_out_fails_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_beam(tmp_path / "beam")
    chat = json.loads((folder / "3" / "chat.json").read_text(encoding="utf-8"))
    chat[1]["turns"][0][1]["role"] = "robot"  # ingest reports the line and skips it
    (folder / "3" / "chat.json").write_text(json.dumps(chat), encoding="utf-8")
    assert bench.main(["--data", str(folder), "--json", "--no-baselines"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "beam-3 session 4: ingested 1/2 turns" in captured.err


# --- addresses -------------------------------------------------------------------------------


def test_turn_address_round_trips_through_api_and_cli(
    tmp_path: Path, cli: Callable[..., Result]
) -> None:
    built = build(tmp_path / "chat")
    vault = built.vault
    hits = turn_hits(vault.recall("cello lessons", limit=5, log=False))
    hit = next(h for h in hits if built.dia_of[(h.id, h.turn.id)] == "D1:8")
    assert hit.address == f"{hit.id}#{hit.turn.id}" == "session-chat-1-session-1#d1-8"
    assert hit.as_dict()["address"] == hit.address and hit.as_dict()["turn"]["id"] == "d1-8"

    window = vault.turn_window(hit.address, around=1)
    data = window.as_dict()
    assert data["focus"] == hit.address
    assert [t["id"] for t in data["turns"]] == ["d1-7", "d1-8", "d1-9"]
    focus = data["turns"][1]
    assert focus["address"] == hit.address and focus["speaker"] == "jean-luc"
    assert focus["text"].startswith("Ha, poor Ollie. My news is smaller")
    assert focus["time"] == hit.turn.time == "2024-03-03T10:22:00Z"

    shown = cli("--vault", vault.root, "show", hit.address, "--around", "1", "--json")
    assert shown.code == 0, shown.err
    assert shown.json() == data
    # The CLI's own recall names the same turn, and its address works the same way.
    found = cli("--vault", vault.root, "recall", "cello lessons", "--json")
    assert found.code == 0, found.err
    listed: Any = found.json()
    addresses = [h["address"] for h in listed["hits"]]
    assert hit.address in addresses
    first: Any = cli("--vault", vault.root, "show", addresses[0], "--around", "0", "--json").json()
    assert [t["address"] for t in first["turns"]] == [addresses[0]]


def test_snippets_never_show_transcript_markup(tmp_path: Path) -> None:
    vault = build(tmp_path / "chat").vault
    questions = [q.q for q in CONVERSATIONS[0].questions] + ["###", "turn", "<!-- turn"]
    for question in questions:
        for hit in turn_hits(vault.recall(question, limit=10, log=False)):
            for mark in MARKUP:
                assert mark not in hit.snippet, (question, hit.address, hit.snippet)
            assert hit.snippet.strip() and not hit.snippet.startswith("[")


# --- a hand edit -----------------------------------------------------------------------------


def test_hand_edit_of_one_turn_reindexes_only_that_turn(tmp_path: Path) -> None:
    vault = build(tmp_path / "chat").vault
    memory = vault.get("session-chat-1-session-2")
    path = vault.root / memory.path
    text = path.read_text(encoding="utf-8")
    old = (
        "there's a balcony that looks over the harbour. I already put two tomato plants out there."
    )
    new = "the balcony gets sun all afternoon, so I planted courgettes and basil."
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")
    git(vault.root, "-c", "user.name=Editor", "-c", "user.email=editor@example.org",
        "commit", "-qam", "fix what I said about the balcony")  # fmt: skip

    report = vault.reindex()
    assert report.changed == (memory.path,) and report.changes.unchanged == 3
    assert report.embedded == 1  # the edited turn; the session's other 18 turns are reused
    assert report.reused == len(CONVERSATIONS[0].sessions[1].turns) - 1
    # Context vectors: the turn's own and its two neighbours', whose context text holds it.
    assert report.context_embedded == 3
    again = vault.reindex()
    assert (again.embedded, again.context_embedded) == (0, 0)

    hit = turn_hits(vault.recall("courgettes and basil", limit=3, log=False))[0]
    assert hit.address == "session-chat-1-session-2#d2-4"
    assert "courgettes" in hit.snippet and "tomato" not in hit.snippet
    stale = vault.recall("tomato plants", limit=10, log=False)
    assert all("tomato plants" not in h.snippet for h in stale)


# --- speakers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("speaker", "expected"),
    [
        ("Anna Maria", "anna maria"),
        ("anna  MARIA", "anna maria"),
        ("jean-luc", "jean-luc"),
        ("Jean-Luc", "jean-luc"),
    ],
)
def test_speaker_filter_with_multi_word_and_hyphenated_names(
    tmp_path: Path, speaker: str, expected: str
) -> None:
    built = build(tmp_path / "chat")
    vault = built.vault
    hits = turn_hits(vault.recall("harbour and the bakery", limit=20, speaker=speaker, log=False))
    assert {h.turn.speaker.lower() for h in hits} == {expected}
    # hits name the speaker as the transcript writes it, not lower-cased
    written = {t.speaker for t in CONVERSATIONS[0].turns if t.speaker.lower() == expected}
    assert {h.turn.speaker for h in hits} == written
    said = {t.dia_id for t in CONVERSATIONS[0].turns if t.speaker.lower() == expected}
    assert {built.dia_of[(h.id, h.turn.id)] for h in hits} <= said
    # A name that is only part of a speaker's does not match it.
    assert list(vault.recall("harbour", limit=20, speaker="Maria", log=False)) == []
    assert list(vault.recall("harbour", limit=20, speaker="jean", log=False)) == []


def test_role_filter(tmp_path: Path) -> None:
    vault = build(tmp_path / "chat").vault
    assert turn_hits(vault.recall("harbour", limit=10, role="user", log=False))
    assert list(vault.recall("harbour", limit=10, role="assistant", log=False)) == []


def _speaker_bonus(hit: Any) -> float:
    """What the fusion adds beyond keyword and vector scores and the question term (speaker
    and date bonuses)."""
    ex = hit.explain
    fusion, keyword = float(ex["fusion"]), float(ex["keyword"]["normalised"])
    asked = WEIGHTS["question"] * float(ex["asks"] or 0.0)
    return fusion - keyword - WEIGHTS["dense"] * max(float(ex["vector"]["cosine"]), 0.0) + asked


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("What did Anna tell her friend about the harbour?", "anna maria"),
        ("what did ANNA MARIA say about the harbour?", "anna maria"),
        ("What did jean-luc say about the harbour?", "jean-luc"),
        ("What did Jean-Luc say about the harbour?", "jean-luc"),
    ],
)
def test_speaker_named_in_the_question_gets_the_bonus(
    tmp_path: Path, question: str, named: str
) -> None:
    vault = build(tmp_path / "chat").vault
    hits = turn_hits(vault.recall(question, limit=20, explain=True, log=False))
    speakers = {h.turn.speaker.lower() for h in hits}
    assert speakers == {"anna maria", "jean-luc"}  # both speak of the harbour
    for hit in hits:
        bonus = _speaker_bonus(hit)
        want = WEIGHTS["speaker"] if hit.turn.speaker.lower() == named else 0.0
        assert bonus == pytest.approx(want, abs=2e-3), (hit.address, hit.explain)
    # ... and it shows in the ranking: the named speaker's turns come first.
    top = hits[0]
    assert top.turn.speaker.lower() == named, [(h.address, h.turn.speaker) for h in hits[:5]]


def test_a_bare_first_name_names_a_multi_word_speaker(tmp_path: Path) -> None:
    vault = build(tmp_path / "chat", index=1).vault
    hits = turn_hits(
        vault.recall("What did Sam say about Cork?", limit=10, explain=True, log=False)
    )
    for hit in hits:
        want = WEIGHTS["speaker"] if hit.turn.speaker.lower() == "sam okafor" else 0.0
        assert _speaker_bonus(hit) == pytest.approx(want, abs=2e-3), (hit.address, hit.explain)
    assert hits[0].turn.speaker.lower() == "sam okafor"
    filtered = turn_hits(vault.recall("Cork", limit=10, speaker="Sam Okafor", log=False))
    assert {h.turn.speaker.lower() for h in filtered} == {"sam okafor"}
    hyphen = turn_hits(vault.recall("puppy", limit=10, speaker="mary-kate", log=False))
    assert {h.turn.speaker.lower() for h in hyphen} == {"mary-kate"}


@pytest.mark.parametrize(
    ("text", "share"),
    [
        ("[8 May 2023] Hey Mel! Good to see you! How have you been?", 1 / 3),
        ("What's up with you? Anything new?", 1.0),
        ("I went to a support group yesterday.", 0.0),
        ("Is it 3.5 or 4?", 1.0),
        ("Really?! No way.", 0.5),
        ("Ти де?  Я вдома.", 0.5),
        ("你好！你去过里斯本吗？我去过。", 1 / 3),
        ("هل أنت بخير؟ نعم.", 0.5),
        ("Are you ok? 😊", 1.0),
        ("?" * 16000 + "a", 0.0),
        ("", 0.0),
    ],
)
def test_question_share_counts_the_sentences_that_ask(text: str, share: float) -> None:
    from memvault.index.query import question_share

    assert question_share(text) == pytest.approx(share)


def test_a_turn_that_asks_is_scored_below_one_that_tells(tmp_path: Path) -> None:
    """The fusion takes ``question`` x the share of a turn's sentences that are questions
    off the score of a turn someone named said; a vault can set the weight (0: off). A bare
    role's turn (a user's request to an assistant) is not scored down for asking."""
    from memvault import Vault
    from memvault.index.query import question_share

    root = tmp_path / "v"
    vault = Vault.init(root)
    lines = [
        {"role": "user", "name": "Ana", "content": "Which database did we pick for billing?"},
        {"role": "assistant", "name": "Ben", "content": "We picked PostgreSQL for billing."},
    ]
    unnamed = [{k: v for k, v in line.items() if k != "name"} for line in lines]
    for name, turns in (("named", lines), ("roles", unnamed)):
        transcript = tmp_path / f"{name}.jsonl"
        text = "".join(json.dumps({**t, "session": name}) + "\n" for t in turns)
        transcript.write_text(text, encoding="utf-8")
    from memvault.ingest import ingest_file

    ingest_file(vault.core, tmp_path / "named.jsonl")
    question = "which database did we pick for billing"

    def fusions(v: Any) -> dict[str, tuple[float, float]]:
        hits = turn_hits(v.recall(question, limit=5, explain=True, log=False))
        return {h.turn.role: (float(h.explain["fusion"]), float(h.explain["asks"])) for h in hits}

    scored = fusions(Vault.open(root))
    assert scored["user"][1] == 1.0 and scored["assistant"][1] == 0.0
    assert question_share(lines[0]["content"]) == 1.0
    Vault.open(root).set_config("search.weights.question", 0, "no question term")
    plain = fusions(Vault.open(root))
    assert plain["user"][0] - scored["user"][0] == pytest.approx(WEIGHTS["question"], abs=1e-3)
    assert plain["assistant"][0] == pytest.approx(scored["assistant"][0], abs=1e-3)

    roles = tmp_path / "roles"
    vault = Vault.init(roles)
    ingest_file(vault.core, tmp_path / "roles.jsonl")
    asked = fusions(Vault.open(roles))
    Vault.open(roles).set_config("search.weights.question", 0, "no question term")
    assert fusions(Vault.open(roles))["user"][0] == pytest.approx(asked["user"][0], abs=1e-6)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 1e400, "abc", True, [1]])
def test_a_bad_weight_is_a_one_line_error_naming_the_key(
    tmp_path: Path, cli: Callable[..., Result], value: Any
) -> None:
    vault = build(tmp_path / "chat").vault
    vault.set_config("search.weights.question", value, "a bad weight")
    result = cli("--vault", vault.root, "recall", "harbour", "--json")
    assert result.code == 1 and result.out == ""
    line = result.err.strip()
    assert "\n" not in line and "must be a finite number" in line
    assert ".memvault/config.yaml" in line and "search.weights.question" in line


def test_an_unknown_weight_lists_the_known_ones(tmp_path: Path, cli: Callable[..., Result]) -> None:
    vault = build(tmp_path / "chat").vault
    vault.set_config("search.weights.qustion", 0.1, "a typo")
    result = cli("--vault", vault.root, "recall", "harbour", "--json")
    assert result.code == 1 and "unknown weight 'qustion'" in result.err
    assert "question" in result.err and "speaker" in result.err


# --- the real model: figures through the ingest path ------------------------------------------

# Turn R@5 (percent) measured with the default embedder (all-MiniLM-L6-v2, ONNX) through
# bench/locomo.py's ingest path; a test fails when a change loses more than 3 points.
OWN_SET_TURN_R5 = 75.5  # tests/data/conversations.json, 49 questions; MiniLM floor 0.34, 2026-12-04
LOCOMO_2_TURN_R5 = 77.4  # LoCoMo conversations 1-2 (conv-26, conv-30), 231 questions; 2026-12-02
TOLERANCE = 3.0


def check_figures(result: dict[str, Any], recorded: float) -> None:
    assert result["errors"] == [] and result["stray_hits"] == 0
    assert result["layout"] == "transcripts"
    assert result["embedder"].startswith("onnx:all-MiniLM-L6-v2")
    r5 = result["turn"]["overall"]["R@5"]
    assert r5 >= recorded - TOLERANCE, (
        f"turn R@5 {r5} fell more than {TOLERANCE} points below the recorded {recorded}; "
        f"by category: {result['turn']['by_category']}"
    )


@pytest.mark.realmodel
def test_own_conversations_turn_recall(real_model: None, tmp_path: Path) -> None:
    result = bench.evaluate(CONVERSATIONS, workdir=tmp_path, baselines=False)
    assert result["turn"]["n"] == 49
    check_figures(result, OWN_SET_TURN_R5)


@pytest.mark.realmodel
@pytest.mark.skipif(
    not os.environ.get("LOCOMO_DATA"),
    reason="set LOCOMO_DATA to LoCoMo's locomo10.json (github.com/snap-research/locomo, "
    "data/locomo10.json) to run two of its conversations through the ingest path",
)
def test_locomo_two_conversations_turn_recall(real_model: None, tmp_path: Path) -> None:
    conversations = bench.load(Path(os.environ["LOCOMO_DATA"]))[:2]
    result = bench.evaluate(conversations, workdir=tmp_path, baselines=False)
    assert result["turn"]["n"] == 231
    check_figures(result, LOCOMO_2_TURN_R5)


def test_a_turn_cut_in_pieces_scores_as_the_mean_of_its_pieces(tmp_path: Path) -> None:
    """A long turn is cut in pieces of ``index.chunk_words``; scored as its best piece it got
    one draw per piece and outranked the short turn that says what was asked (BEAM: long
    assistant answers over the user's own words, ``docs/retrieval.md``)."""
    from memvault import Vault
    from memvault.ingest import ingest_file

    root = tmp_path / "v"
    vault = Vault.init(root)
    vault.set_config("index.chunk_words", 16, "short pieces")
    filler = (
        "meanwhile the garden needs watering and the cat sleeps on the warm windowsill "
        "while rain taps the old roof above the quiet kitchen table near the door"
    )
    lines = [
        {"role": "user", "content": "Our billing service deploys with a blue green rollout."},
        {
            "role": "assistant",
            "content": "Billing service deploys blue green rollout, noted. "
            + " ".join([filler] * 3),
        },
    ]
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    ingest_file(vault.core, transcript)
    hits = turn_hits(
        Vault.open(root).recall("how does billing deploy", limit=5, explain=True, log=False)
    )
    assert [h.turn.role for h in hits][:2] == ["user", "assistant"]


def test_a_long_turns_context_counts_less(tmp_path: Path) -> None:
    """A turn's dense score mixes its own cosine with its cosine in context, half and half up
    to ``context_words`` words (a short reply means what its neighbours say), less for a
    longer turn: one that says it all is not diluted by its neighbours."""
    from memvault import Vault
    from memvault.ingest import ingest_file

    root = tmp_path / "v"
    vault = Vault.init(root)
    words = "billing service deploys with a blue green rollout every friday after review"
    lines = [
        {"role": "user", "content": "The garden needs watering and the cat sleeps all day."},
        {"role": "user", "content": " ".join([words] * 12)},  # 144 words
        {"role": "assistant", "content": "Right, billing."},
        {"role": "user", "content": "Rain taps the old roof above the quiet kitchen."},
    ]
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    ingest_file(vault.core, transcript)

    def vectors() -> dict[str, dict[str, float]]:
        found = Vault.open(root).recall("billing deploys blue green", explain=True, log=False)
        hits = [h for h in turn_hits(found) if "billing" in h.snippet.lower()]
        return {h.turn.role: h.explain["vector"] for h in hits}

    def mean(v: dict[str, float]) -> float:
        return (v["own"] + v["in_context"]) / 2

    seen = vectors()
    long, short = seen["user"], seen["assistant"]
    assert short["cosine"] == pytest.approx(mean(short), abs=1e-3)
    assert abs(long["own"] - long["in_context"]) > 0.01
    assert abs(long["cosine"] - long["own"]) < abs(long["cosine"] - mean(long)) / 2
    Vault.open(root).set_config("search.weights.context_words", 1000, "every turn is short")
    assert vectors()["user"]["cosine"] == pytest.approx(mean(long), abs=1e-3)
