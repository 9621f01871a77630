"""Readers for public retrieval sets, as ``bench/multilingual.py --data PATH`` takes them.

None of these files is in the repository; each comes from its authors (where, and under which
licence: ``docs/retrieval.md``, "Public sets"). ``--data`` is a folder holding any of them, or
one file; each set becomes one or more *tasks*, each task one vault:

* ``xquad.ru.json`` (XQuAD, SQuAD format): the 240 Russian paragraphs are the passages;
  every Russian question asks for its paragraph (ru -> ru), and with ``xquad.en.json`` beside
  it every English question of the same id too (en -> ru).
* ``faquad.pt.json`` (FaQuAD): Portuguese paragraphs, Portuguese questions (pt -> pt).
* ``ntrex.{eng-US,por,rus,ukr}.txt`` + ``ntrex.DOCUMENT_IDS.tsv`` (NTREX-128, line-aligned
  news sentences; the repository's own names, ``newstest2019-ref.<lang>.txt`` and
  ``DOCUMENT_IDS.tsv``, are read too): each document's sentences, joined, are one passage;
  a sentence in another language asks for its document: en and ru sentences -> Ukrainian
  documents, en -> Russian documents, en -> Portuguese documents (three vaults).

Queries are split by a fixed hash of their passage's id (paragraph or document):
:data:`TUNE_SHARE` percent of the passages' queries are ``tune``, the rest ``test``. Every
passage stays in the vault either way: the split only says which queries count.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

TUNE_SHARE = 40  # percent of the passages (and so their queries) that are tune

NTREX_LANGS = {"en": "eng-US", "pt": "por", "ru": "rus", "uk": "ukr"}
# (passage language, query languages): one vault per passage language
NTREX_TASKS = (("uk", ("en", "ru")), ("ru", ("en",)), ("pt", ("en",)))


def hash_split(set_name: str, key: str) -> str:
    """``tune`` or ``test``, fixed by the passage id (the same on every machine and run)."""
    digest = hashlib.sha256(f"{set_name}:{key}".encode()).hexdigest()
    return "tune" if int(digest[:8], 16) % 100 < TUNE_SHARE else "test"


def task(name: str, passages: list[dict[str, Any]], queries: list[dict[str, Any]]) -> Any:
    """A task in ``bench/multilingual.py``'s data format (plus its name)."""
    return {"name": name, "passages": passages, "queries": queries}


def squad_task(
    name: str, path: Path, lang: str, others: dict[str, Path] | None = None
) -> dict[str, Any]:
    """Paragraphs of a SQuAD-format file as passages; its questions (and, for each file in
    ``others`` {language: path}, the questions with the same ids) ask for them."""
    data = json.loads(path.read_text(encoding="utf-8"))
    passages: list[dict[str, Any]] = []
    where: dict[str, str] = {}  # question id -> passage id
    queries: list[dict[str, Any]] = []
    for article in data["data"]:
        for n, paragraph in enumerate(article["paragraphs"]):
            pid = f"{article.get('title', 'doc')}-{n}"
            split = hash_split(name, pid)
            passages.append({"id": pid, "lang": lang, "text": paragraph["context"].strip()})
            for qa in paragraph["qas"]:
                where[qa["id"]] = pid
                queries.append(_query(qa["id"], lang, "same", qa["question"], pid, split))
    split_of = {q["relevant"][0]: q["split"] for q in queries}
    for other, other_path in (others or {}).items():
        other_data = json.loads(other_path.read_text(encoding="utf-8"))
        for article in other_data["data"]:
            for paragraph in article["paragraphs"]:
                for qa in paragraph["qas"]:
                    pid = where.get(qa["id"])
                    if pid is not None:
                        kind = "same" if other == lang else "cross"
                        queries.append(
                            _query(
                                f"{other}-{qa['id']}",
                                other,
                                kind,
                                qa["question"],
                                pid,
                                split_of[pid],
                            )
                        )
    return task(name, passages, queries)


def _query(qid: str, lang: str, kind: str, text: str, pid: str, split: str) -> dict[str, Any]:
    return {
        "id": qid,
        "lang": lang,
        "kind": kind,
        "q": text.strip(),
        "relevant": [pid],
        "split": split,
    }


def ntrex_file(folder: Path, name: str) -> Path | None:
    """``ntrex.<name>`` as saved here, or the NTREX repository's own name for it."""
    upstream = name if name.endswith(".tsv") else f"newstest2019-ref.{name}"
    return next((p for p in (folder / f"ntrex.{name}", folder / upstream) if p.is_file()), None)


def ntrex_tasks(folder: Path) -> list[dict[str, Any]]:
    """NTREX-128's documents in Ukrainian, Russian and Portuguese, asked for by a sentence in
    another language (:data:`NTREX_TASKS`)."""
    files = {lang: ntrex_file(folder, f"{code}.txt") for lang, code in NTREX_LANGS.items()}
    if missing := [NTREX_LANGS[lang] for lang, path in files.items() if path is None]:
        raise SystemExit(f"{folder}: NTREX files missing for {', '.join(missing)}")
    ids_file = ntrex_file(folder, "DOCUMENT_IDS.tsv")
    assert ids_file is not None
    doc_ids = ids_file.read_text(encoding="utf-8").splitlines()
    lines = {
        lang: path.read_text(encoding="utf-8").splitlines()
        for lang, path in files.items()
        if path is not None
    }
    for lang, got in lines.items():
        if len(got) != len(doc_ids):
            raise SystemExit(f"ntrex.{NTREX_LANGS[lang]}.txt: {len(got)} lines, ids {len(doc_ids)}")
    docs = list(dict.fromkeys(d.strip() for d in doc_ids))
    out = []
    for doc_lang, query_langs in NTREX_TASKS:
        body: dict[str, list[str]] = {d: [] for d in docs}
        for doc, sentence in zip(doc_ids, lines[doc_lang], strict=True):
            body[doc.strip()].append(sentence.strip())
        passages = [{"id": d, "lang": doc_lang, "text": "\n".join(body[d])} for d in docs]
        queries = [
            _query(
                f"{q_lang}-{i}",
                q_lang,
                "cross",
                lines[q_lang][i],
                doc.strip(),
                hash_split("ntrex", doc.strip()),
            )
            for q_lang in query_langs
            for i, doc in enumerate(doc_ids)
            if lines[q_lang][i].strip()
        ]
        out.append(task(f"ntrex-{doc_lang}", passages, queries))
    return out


def read(path: Path) -> list[dict[str, Any]] | None:
    """The tasks of a public set's folder or file; None when ``path`` is a file of our own
    format (``{"passages": ..., "queries": ...}``)."""
    folder = path if path.is_dir() else path.parent
    name = "" if path.is_dir() else path.name
    tasks: list[dict[str, Any]] = []
    xquad_ru = folder / "xquad.ru.json"
    if (not name or name.startswith("xquad.")) and xquad_ru.is_file():
        english = folder / "xquad.en.json"
        others = {"en": english} if english.is_file() else {}
        tasks.append(squad_task("xquad", xquad_ru, "ru", others))
    faquad = folder / "faquad.pt.json"
    if (not name or name.startswith("faquad")) and faquad.is_file():
        tasks.append(squad_task("faquad", faquad, "pt"))
    ntrex = not name or name.startswith(("ntrex", "newstest2019", "DOCUMENT_IDS"))
    if ntrex and ntrex_file(folder, "DOCUMENT_IDS.tsv") is not None:
        tasks += ntrex_tasks(folder)
    if tasks:
        return tasks
    if path.is_dir():
        raise SystemExit(f"{path}: no public set found (xquad.ru.json, faquad.pt.json, ntrex.*)")
    return None
