"""The seeds' languages in the keyword index: detection, normalisation, lemmas, and a query
in one inflected form finding a memory written in another (real SQLite FTS5, fake embedder:
the vector leg can't help, so a hit is the keyword leg's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memvault import Vault
from memvault.index.query import query_tokens
from memvault.language import cyrillic_language, detect, keyword_text, normalise


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Ми переїхали до Лісабона минулої весни", "uk"),
        ("Мы переехали в Лиссабон прошлой весной", "ru"),
        ("Mudamos para Lisboa na primavera passada", "pt"),
        ("We moved to Lisbon last spring", "en"),
        ("Де пам'ять?", "uk"),  # short: the apostrophe word and a Ukrainian letter
        ("Кто это?", "ru"),
        ("Як налаштувати DATABASE_URL у staging?", "uk"),  # mixed: Cyrillic words lead
        ("deploy falhou: a variável não existe", "pt"),
        ("", "en"),
        ("12345", "en"),
        ("Пам’ятаєте?", "uk"),  # the apostrophe inside a word is Ukrainian's alone
        ("Хто догляне за собакою?", "uk"),  # no sign letter: the dictionaries' votes
        ("E continuava.", "pt"),
        ("The café opened", "en"),  # an accent alone is not Portuguese
    ],
)
def test_detect_short_and_mixed_texts(text: str, lang: str) -> None:
    assert detect(text) == lang


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Вполне умеренные вещи.\nError: connect ECONNREFUSED 127.0.0.1:6379 at Tcp.connect", "ru"),
        ("Прохідний фільм.\n$ git push origin main && kubectl rollout restart deploy/api", "uk"),
        ("Це природно. (see `src/billing/service.py`, `retry count`)", "uk"),
        ("TODO(ops): Это нормально. -> `nginx -t && systemctl reload nginx`", "ru"),
        ("Demorou muito.\n```python\ndef load(path):\n    return open(path).read()\n```", "pt"),
        ("Vamos tentar de novo; o teste falhou", "pt"),  # a semicolon in prose is not code
    ],
)
def test_code_beside_prose_is_not_the_texts_language(text: str, lang: str) -> None:
    assert detect(text) == lang


def test_cyrillic_words_in_an_english_text_are_told_apart() -> None:
    # Latin letters outnumber Cyrillic here, but its Cyrillic words are Russian.
    text = "The config says: не удалось подключиться к серверу (ECONNREFUSED on port 5432)"
    assert detect(text) == "en"
    assert cyrillic_language(text) == "ru"
    assert "сервер" in keyword_text(text).split()


def test_apostrophes_and_unicode_forms_are_one() -> None:
    forms = ["пам'ять", "пам\u2019ять", "пам\u02bcять", "пам\u2018ять"]
    assert {normalise(f) for f in forms} == {"пам'ять"}
    assert {keyword_text(f, "uk") for f in forms} == {keyword_text("пам'ять", "uk")}
    composed, decomposed = "vari\u00e1vel", "varia\u0301vel"
    assert composed != decomposed and normalise(composed) == normalise(decomposed)


def test_the_ukrainian_apostrophe_keeps_a_word_apart_from_its_russian_twin() -> None:
    uk, ru = keyword_text("пам'ять", "uk"), keyword_text("память", "ru")
    assert uk != ru and len(uk.split()) == 1  # one word, not "пам" and "ять"
    assert query_tokens("Де пам’ять?") == [uk]  # the query meets the text's form


@pytest.mark.parametrize(
    ("lang", "first", "second"),
    [
        ("uk", "змінну оточення", "змінні оточення"),
        ("ru", "серверами", "сервера"),
        ("pt", "variáveis", "variável"),
    ],
)
def test_inflected_forms_share_a_keyword_form(lang: str, first: str, second: str) -> None:
    assert keyword_text(first, lang) == keyword_text(second, lang)


def test_english_keeps_its_text_for_the_porter_stemmer() -> None:
    text = "The deploys were failing because the migration locked the users table"
    assert keyword_text(text) == text
    assert query_tokens("Why did the deploy fail?") == ["deploy", "fail"]


def test_question_frames_leave_the_keyword_query_but_the_words_stay_content() -> None:
    assert query_tokens("What kind of pets does Nate have?") == ["pets", "nate"]
    assert query_tokens("Which types of books did she read?") == ["books", "read"]
    assert query_tokens("How many turtles does Nate have?") == ["turtles", "nate"]
    assert query_tokens("How much did the upgrade cost?") == ["upgrade", "cost"]
    # outside the frame the same words are kept
    assert query_tokens("mypy type errors") == ["mypy", "type", "errors"]
    assert query_tokens("a kind note about sort order") == ["kind", "note", "sort", "order"]
    # a query that is nothing but a frame still searches for something
    assert query_tokens("How much?") == ["how", "much"]


def test_query_tokens_are_lemmas_without_stopwords() -> None:
    assert query_tokens("Де зберігається пам\u2019ять агента?") == [
        "зберігатися",
        "пам\u02bcять",  # not Russian "память"
        "агент",
    ]
    assert query_tokens("Onde ficam as variáveis de ambiente?") == ["ficar", "variável", "ambiente"]


CASES = [
    # (memory text, query in other inflected forms, language)
    (
        "Змінну DATABASE_URL треба задавати в конфігурації релізу, інакше деплой падає.",
        "Чому падають деплої без змінної DATABASE_URL?",
        "uk",
    ),
    (
        "Серверы базы данных перезапускаются каждую ночь в три часа.",
        "Когда перезапускается сервер базы данных?",
        "ru",
    ),
    (
        "As variáveis de ambiente ficam no cofre de segredos da equipa.",
        "Onde fica cada variável de ambiente?",
        "pt",
    ),
]


@pytest.mark.parametrize(("text", "query", "lang"), CASES, ids=[c[2] for c in CASES])
def test_a_query_finds_its_memory_in_other_inflected_forms(
    vault: Vault, text: str, query: str, lang: str
) -> None:
    others = [
        "The staging database is db-stg-2.",
        "Ми святкували день народження в офісі.",
        "Команда обедает в полдень.",
        "O almoço da equipa é ao meio-dia.",
    ]
    for other in others:
        vault.add("semantic", other)
    target = vault.add("semantic", text).memory
    hits = vault.search(query, limit=3, log=False, explain=True)
    assert hits.ids[:1] == [target.id], [(h.id, h.snippet) for h in hits]
    keyword = hits[0].explain["keyword"] if hits[0].explain else {}
    assert keyword.get("bm25", 0) > 0, "the keyword leg must be what found it"


def test_a_mixed_language_vault_serves_each_language(vault: Vault) -> None:
    ids = {lang: vault.add("semantic", text).memory.id for text, _, lang in CASES}
    for _, query, lang in CASES:
        assert vault.search(query, limit=1, log=False).ids == [ids[lang]], lang


def test_init_with_languages_picks_the_multilingual_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memvault.embeddings import e5

    monkeypatch.setattr(e5, "unavailable_reason", lambda: None)

    def configured(vault: Vault) -> str:  # the file (MEMVAULT_EMBEDDER=fake overrides it here)
        text = (vault.root / ".memvault/config.yaml").read_text(encoding="utf-8")
        return next(line for line in text.splitlines() if line.startswith("embedder:"))

    vault = Vault.init(tmp_path / "uk", languages=["uk", "RU"])
    assert vault.config.get("languages") == ["uk", "ru"]
    assert configured(vault) == "embedder: multilingual-e5-small"
    english = Vault.init(tmp_path / "en", languages=["en"])
    assert configured(english) == "embedder: all-MiniLM-L6-v2"
    monkeypatch.setattr(e5, "unavailable_reason", lambda: "no AVX2")
    fallback = Vault.init(tmp_path / "pt", languages=["pt"])
    assert configured(fallback) == "embedder: all-MiniLM-L6-v2"
    assert "can't run here (no AVX2)" in capsys.readouterr().err


def test_init_refuses_an_unknown_language_before_creating_anything(tmp_path: Path) -> None:
    from memvault.errors import ConfigError

    with pytest.raises(ConfigError, match="expected en\\|pt\\|ru\\|uk, got 'xx'"):
        Vault.init(tmp_path / "v", languages=["uk", "xx"])
    assert not (tmp_path / "v").exists()


def test_a_word_list_is_prepared_by_one_process_while_others_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from memvault.language import SIMPLEMMA_VERSION, _dictionary_file
    from memvault.store.lock import file_lock

    monkeypatch.setenv("MEMVAULT_LEMMAS_DIR", str(tmp_path))
    path = tmp_path / f"simplemma-{SIMPLEMMA_VERSION}-pt.sqlite"
    made: list[Path] = []
    # Another process preparing the list holds its lock: a new one waits, then makes it.
    with file_lock(path.with_name(path.name + ".lock")):
        waiting = threading.Thread(target=lambda: made.append(_dictionary_file("pt")))
        waiting.start()
        waiting.join(0.3)
        assert waiting.is_alive() and not path.exists()
    waiting.join()
    assert made == [path] and path.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_the_word_lists_are_read_mapped() -> None:
    """A lookup of a word met for the first time reads the list's pages through a mapping
    (docs/performance.md): the connection asks SQLite for one as large as the list."""
    from memvault.language import MMAP_BYTES, _dictionary_file, _SqliteDictionary, in_dictionary

    assert in_dictionary("paintings", "en") in (True, False)  # the English list is prepared
    words = _SqliteDictionary(_dictionary_file("en"))
    assert "painting" in words
    mapped = words._conn().execute("PRAGMA mmap_size").fetchone()[0]
    assert mapped == MMAP_BYTES >= _dictionary_file("en").stat().st_size
