"""The seeds' languages -- English, Portuguese, Russian, Ukrainian -- in the keyword index.

FTS5's ``porter`` stemmer only knows English: "змінну" and "змінні" are different words to
it, so a Ukrainian query missed the Ukrainian memory it paraphrased. Here every text gets,
besides what is shown and embedded, a *keyword form* that the keyword index holds:

* Unicode NFC, and one apostrophe (Ukrainian writes ``ʼ``, ``’`` and ``'`` alike);
* Cyrillic words lemmatised as Ukrainian or Russian (the text's language first), Latin
  words of a Portuguese text lemmatised as Portuguese; English is left to ``porter``;
* a Ukrainian apostrophe inside a word is written ``ʼ`` (U+02BC, a letter to Unicode), so
  the keyword tokenizer, which splits on ``'``, keeps the word whole, and Ukrainian
  ``пам'ять`` stays apart from Russian ``память`` (dropping the apostrophe made them one).

The same function makes the query's keyword form, so both sides meet on lemmas. Lemmas
come from simplemma's dictionaries (MIT). Loading one into memory takes seconds, too long
for a command-line search, so each language's dictionary is copied once into a SQLite
file in the user cache (``$MEMVAULT_LEMMAS_DIR`` overrides where) and looked up word by
word.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Iterator, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from .paths import user_cache_dir
from .store.lock import file_lock

SIMPLEMMA_VERSION = "2.0.0"  # the dictionaries' format is read through simplemma's own loader

# The apostrophe of a Cyrillic word's keyword form: a letter to FTS5's unicode61 tokenizer.
KEYWORD_APOSTROPHE = "\u02bc"
_APOSTROPHES = re.compile("[\u2019\u02bc\u0060\u00b4\u2018\u02b9]")
WORD = re.compile(r"\w+(?:'\w+)*", re.UNICODE)
CYRILLIC = re.compile("[\u0400-\u04ff]")
_LATIN = re.compile("[A-Za-z\u00c0-\u024f]")
_UK_LETTERS = set("іїєґІЇЄҐ")
_RU_LETTERS = set("ыэъёЫЭЪЁ")
_PT_LETTERS = set("ãõçâêôàáéíóúÃÕÇÂÊÔÀÁÉÍÓÚ")


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_UK_WORDS = _word_set(
    "що як це та і й або але для про від до ми ви він вона вони чи є цей яка які коли де "
    "тому також вже ще щоб його її їх "
)
_RU_WORDS = _word_set(
    "что как это и или но для про от до мы вы он она они ли есть этот кто какой где когда "
    "почему также уже еще ещё чтобы его её их был была было были нет при "
)
# Portuguese words that are not also English words ("a", "as", "do", "no" are both).
_PT_WORDS = _word_set(
    "que não para com uma dos das na em é se por mais como mas ou ao pelo pela isso este "
    "esta são foi também quando onde porque qual quais sobre entre e o os um de da "
)
_EN_WORDS = _word_set(
    "the and is are was were to of in on for with that this it what how when where why "
    "who which be by from "
)


def normalise(text: str) -> str:
    """NFC, and every apostrophe-like mark as ``'``."""
    return _APOSTROPHES.sub("'", unicodedata.normalize("NFC", text))


def detect(text: str) -> str:
    """The text's language among :data:`LANGUAGES` (``en`` when nothing says otherwise).

    Structure first: code is left out (code fences, inline code, lines of code, and tokens
    shaped like identifiers, paths, numbers or acronyms), then the script more of the
    remaining words are written in decides Cyrillic (uk/ru) or Latin (pt/en), so that a
    Ukrainian note naming ``DATABASE_URL`` or followed by a shell command stays Ukrainian.
    Within a script: the letters only one language writes, its common words, then the words
    only one language's dictionary knows (see :func:`cyrillic_language`)."""
    # Consolidation asks again and again about the same memories (each is in many pairs):
    # short texts are remembered, so that most of those calls are a lookup.
    return _detect_short(text) if len(text) <= 2000 else _detect(text)


@lru_cache(maxsize=200_000)
def _detect_short(text: str) -> str:
    return _detect(text)


def forget_texts() -> None:
    """Drop the remembered languages of short texts (a long-lived process, after a job)."""
    _detect_short.cache_clear()


def _detect(text: str) -> str:
    words = prose_words(text) or WORD.findall(normalise(text))
    cyrillic = [w for w in words if CYRILLIC.search(w)]
    latin = [w for w in words if _LATIN.search(w) and not CYRILLIC.search(w)]
    if len(cyrillic) > len(latin):
        return _cyrillic(cyrillic)
    return _latin(latin) if latin else "en"


# Code inside prose: fenced blocks, `inline code`, and lines of Latin-only code (an
# assignment, a call, a shell prompt, a statement keyword) are not the text's language.
_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_CODE_LINE = re.compile(
    r"[={}]|;\s*$|&&|\|\||://|->|\w\(|^\s*(?:\$|>>>|#!|%)\s"
    r"|^\s*(?:def|class|import|from|return|const|let|var|export|if|for|while|async|await"
    r"|SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP)\b"
)
# A token shaped like code: an identifier with ``_`` or camelCase, a path, a dotted name,
# a call, a number or version, a Latin acronym (``ECONNREFUSED``, ``CBS``).
_CODE_TOKEN = re.compile(r"_|\d|\w\(|[a-z][A-Z]|\w[./:\\@]\w|^\W*[A-Z]{2,}\W*$")


def prose_words(text: str) -> list[str]:
    """The words of ``text`` that are prose: code blocks, inline code, Latin-only lines of
    code and code-shaped tokens are left out; the words are :func:`normalise`-d (after the
    code is out: ``normalise`` reads a backtick as an apostrophe)."""
    text = normalise(_INLINE_CODE.sub(" ", _FENCE.sub("\n", text)))
    words: list[str] = []
    for line in text.splitlines():
        tokens = line.split()
        prose = [t for t in tokens if not _CODE_TOKEN.search(t)]
        if not CYRILLIC.search(line) and (
            _CODE_LINE.search(line) or 2 * len(prose) <= len(tokens)  # mostly code: a log line
        ):
            continue
        for token in prose:
            words += WORD.findall(token)
    return words


def _words(text: str) -> list[str]:
    return [w.lower() for w in WORD.findall(normalise(text))]


def cyrillic_language(text: str) -> str:
    """Ukrainian or Russian, for the Cyrillic words of ``text`` (see :func:`_cyrillic`)."""
    return _cyrillic([w for w in WORD.findall(normalise(text)) if CYRILLIC.search(w)])


def _cyrillic(words: list[str]) -> str:
    """Ukrainian or Russian, for these Cyrillic words: the letters only one of them writes
    (``і ї є ґ`` and an apostrophe inside a word / ``ы э ъ ё``), their common words, and the
    words that only one of the two dictionaries knows. Ukrainian text nearly always shows
    one of its letters, so words with no sign either way are taken as Russian."""
    lower = [w.lower() for w in words]
    # a letter or a common word is near-certain; a dictionary's vote (which holds loanwords
    # and rare forms) weighs half as much
    uk = 2 * sum(ch in _UK_LETTERS or ch == "'" for w in lower for ch in w)
    ru = 2 * sum(ch in _RU_LETTERS for w in lower for ch in w)
    uk += 2 * sum(w in _UK_WORDS for w in lower)
    ru += 2 * sum(w in _RU_WORDS for w in lower)
    votes = _dictionary_votes(lower, ("uk", "ru"))
    uk, ru = uk + votes["uk"], ru + votes["ru"]
    return "uk" if uk > ru else "ru"


def latin_language(text: str) -> str:
    """Portuguese or English, for the Latin words of ``text`` (see :func:`_latin`)."""
    return _latin([w for w in WORD.findall(normalise(text)) if _LATIN.search(w)])


def _latin(words: list[str]) -> str:
    """Portuguese or English, for these Latin words: Portuguese's letters, the two
    languages' common words, and the words only one of the two dictionaries knows.
    Portuguese needs a word of its own (accents alone don't make "café" Portuguese) and
    more signs than English, the default."""
    lower = [w.lower() for w in words]
    letters = sum(ch in _PT_LETTERS for w in lower for ch in w)
    votes = _dictionary_votes(lower, ("pt", "en"))
    pt_words = 2 * sum(w in _PT_WORDS for w in lower) + votes["pt"]
    en = 2 * sum(w in _EN_WORDS for w in lower) + votes["en"]
    return "pt" if pt_words and letters + pt_words > en else "en"


_VOTING_WORDS = 40  # the first distinct words are plenty to tell two languages apart


def _dictionary_votes(words: list[str], langs: tuple[str, str]) -> dict[str, int]:
    """For each of two languages, how many of ``words`` (distinct, the first
    :data:`_VOTING_WORDS`) only its dictionary knows."""
    votes = dict.fromkeys(langs, 0)
    for word in list(dict.fromkeys(words))[:_VOTING_WORDS]:
        known = [lang for lang in langs if in_dictionary(word, lang)]
        if len(known) == 1:
            votes[known[0]] += 1
    return votes


@lru_cache(maxsize=200_000)
def in_dictionary(word: str, lang: str) -> bool:
    """Whether ``lang``'s lemma dictionary holds ``word`` (False without simplemma)."""
    try:
        return word in _DICTIONARIES.get_dictionary(lang)
    except ImportError:  # simplemma missing and no copy made yet: no votes
        return False


def keyword_text(text: str, lang: str | None = None) -> str:
    """``text``'s keyword form (see the module doc); ``lang``: its language, if known."""
    if not text:
        return ""
    text = normalise(text)
    lang = lang or detect(text)
    if lang == "en" and not CYRILLIC.search(text):
        return text  # English: porter does the rest
    return " ".join(keyword_words(text, lang))


def keyword_words(text: str, lang: str) -> Iterator[str]:
    """The keyword form of each word of an already normalised ``text`` whose language is
    ``lang``; Cyrillic words in a text of another language are told apart (uk or ru) from
    the text itself."""
    first = lang if lang in ("uk", "ru") else cyrillic_language(text)
    cyrillic_order = ("ru", "uk") if first == "ru" else ("uk", "ru")
    for word in WORD.findall(text):
        lower = word.lower()
        if CYRILLIC.search(lower):
            yield lemma(lower, cyrillic_order).replace("'", KEYWORD_APOSTROPHE)
        elif lang == "pt":
            yield lemma(lower, ("pt",))
        else:
            yield lower


@lru_cache(maxsize=200_000)
def lemma(word: str, langs: tuple[str, ...]) -> str:
    """The word's lemma in the first of ``langs`` that knows it (else the word itself)."""
    try:
        lemmatizer = _lemmatizer()
    except ImportError:  # simplemma missing: keyword search stays exact-word
        return word
    return str(lemmatizer.lemmatize(word, langs))


# --- dictionaries kept in SQLite ----------------------------------------------------------


MMAP_BYTES = 256 * 1024 * 1024  # above the largest dictionary (Russian, ~70 MB)


class _SqliteDictionary(Mapping[str, str]):
    """One language's form -> lemma table, read a word at a time."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._local = threading.local()

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(f"file:{self._path}?mode=ro", uri=True)
            # Mapped, a word looked up for the first time reads its pages without a system
            # call each: ~50 -> ~4 us a new word (a warm search meets several per question).
            conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            self._local.conn = conn
        return conn

    def get(self, key: str, default: Any = None) -> Any:
        row = self._conn().execute("SELECT lemma FROM lemmas WHERE form = ?", (key,)).fetchone()
        return row[0] if row is not None else default

    def __getitem__(self, key: str) -> str:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return str(value)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __iter__(self) -> Iterator[str]:
        for (form,) in self._conn().execute("SELECT form FROM lemmas"):
            yield str(form)

    def __len__(self) -> int:
        return int(self._conn().execute("SELECT count(*) FROM lemmas").fetchone()[0])


class _SqliteDictionaryFactory:
    """simplemma's ``DictionaryFactory``: dictionaries from SQLite copies in the user cache."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, _SqliteDictionary] = {}

    def get_dictionary(self, lang: str) -> Mapping[str, str]:
        with self._lock:
            found = self._open.get(lang)
            if found is None:
                found = self._open[lang] = _SqliteDictionary(_dictionary_file(lang))
            return found


def _dictionary_file(lang: str) -> Path:
    """The SQLite copy of simplemma's dictionary for ``lang``, made on first use."""
    folder = Path(os.environ.get("MEMVAULT_LEMMAS_DIR") or user_cache_dir() / "lemmas")
    path = folder / f"simplemma-{SIMPLEMMA_VERSION}-{lang}.sqlite"
    if path.exists():
        return path
    from simplemma.strategies.dictionaries.dictionary_factory import (
        _load_dictionary_from_disk,  # the shipped data's reader (simplemma is pinned)
    )

    folder.mkdir(parents=True, exist_ok=True)
    with file_lock(path.with_name(path.name + ".lock"), timeout=300, label="word list"):
        if path.exists():  # another process made it meanwhile
            return path
        import sys

        print(f"memvault: preparing the {lang} word list (once)", file=sys.stderr)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        conn = sqlite3.connect(tmp)
        try:
            conn.execute("CREATE TABLE lemmas (form TEXT PRIMARY KEY, lemma TEXT) WITHOUT ROWID")
            data = _load_dictionary_from_disk(lang)
            conn.executemany(
                "INSERT OR REPLACE INTO lemmas VALUES (?, ?)",
                ((k.decode(), v.decode()) for k, v in data.items()),
            )
            conn.commit()
        finally:
            conn.close()
        os.replace(tmp, path)
    return path


_DICTIONARIES = _SqliteDictionaryFactory()


@lru_cache(maxsize=1)
def _lemmatizer() -> Any:
    from simplemma import Lemmatizer
    from simplemma.strategies import DefaultStrategy

    strategy = DefaultStrategy(dictionary_factory=_DICTIONARIES)
    return Lemmatizer(lemmatization_strategy=strategy)
