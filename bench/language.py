"""Language detection (``memvault.language.detect``) measured on NTREX-128's sentences.

    python bench/language.py --data path/to/public/multilingual --json
    python bench/language.py --data path/to/public/multilingual --split tune   # while tuning

NTREX-128 (MicrosoftTranslator/NTREX, CC BY-SA 4.0; where to get it: ``docs/retrieval.md``)
holds 1,997 news sentences translated line by line into every language; this bench reads the
English, Portuguese, Russian and Ukrainian files (``ntrex.{eng-US,por,rus,ukr}.txt`` or the
repository's own ``newstest2019-ref.<lang>.txt``, with ``DOCUMENT_IDS.tsv``), as
``bench/public_retrieval.py`` does. Every sentence is detected three ways:

* ``short``: the sentences of at most 8 words (words as the keyword index counts them);
* ``all``: every sentence;
* ``mixed``: the sentence inside a developer's note that mixes code and prose: the sentence,
  then one of :data:`CODE` (a shell command, a config line, a stack-trace line, a code
  fence, an inline path and identifier, an SQL query ...), picked by a fixed hash of the
  sentence's line number, so every run and machine builds the same passages. The code is
  English identifiers and keywords; the expected language stays the sentence's.

Sentences are split tune/test by a fixed hash of their document (``hash_split("ntrex",
document)``, 40 % tune, as the retrieval bench splits NTREX): the detector's rules are
tuned on ``tune`` and the figures that count are ``test``'s.

Reported: accuracy per language and kind, per split, the languages taken instead, and a
few misses. Targets, on the test split, for every language: ``short`` and ``mixed`` >=
:data:`TARGET`. The exit code is 1 when a target is missed, 2 when the data can't be read.
``--json`` prints one JSON object and nothing else on stdout.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.append(str(ROOT / "bench"))  # after site-packages: bench/mcp.py is no SDK

TARGET = 0.98
SHORT_WORDS = 8
KINDS = ("short", "all", "mixed")
SPLITS = ("tune", "test")
LANGS = ("en", "pt", "ru", "uk")  # NTREX_LANGS' keys: what detect() may answer
_CYRILLIC_LETTER = re.compile("[\u0400-\u04ff]")
_LATIN_LETTER = re.compile("[A-Za-z\u00c0-\u024f]")
_SCRIPT = {"en": _LATIN_LETTER, "pt": _LATIN_LETTER, "ru": _CYRILLIC_LETTER, "uk": _CYRILLIC_LETTER}

# Code that a developer's note puts next to prose; ``{s}`` is the sentence.
CODE = (
    "{s}\n$ git push origin main && kubectl rollout restart deployment/api",
    "{s}\nexport DATABASE_URL=postgres://app:secret@db.internal:5432/orders",
    "{s}\nError: connect ECONNREFUSED 127.0.0.1:6379 at TCPConnectWrap.afterConnect",
    "{s}\n```python\ndef load_settings(path):\n    return yaml.safe_load(open(path))\n```",
    "{s} (see `src/billing/invoice_service.py`, `retry_count`)",
    "{s}\nSELECT id, created_at FROM users WHERE email = ? ORDER BY created_at DESC;",
    "{s}\nconst timeoutMs = config.get('request_timeout', 3000);",
    "TODO(ops): {s} -> `nginx -t && systemctl reload nginx`",
)


def load_sentences(folder: Path) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Every NTREX sentence in en/pt/ru/uk that holds a letter of its language's script:
    [{lang, line, doc, split, text}], and how many lines per language were left out."""
    from public_retrieval import NTREX_LANGS, hash_split, ntrex_file

    ids_file = ntrex_file(folder, "DOCUMENT_IDS.tsv")
    if ids_file is None:
        raise SystemExit(f"{folder}: no ntrex.DOCUMENT_IDS.tsv (or DOCUMENT_IDS.tsv)")
    docs = [d.strip() for d in ids_file.read_text(encoding="utf-8").splitlines()]
    out: list[dict[str, Any]] = []
    skipped: Counter[str] = Counter()
    english: list[str] = []
    for lang, code in NTREX_LANGS.items():  # English first
        path = ntrex_file(folder, f"{code}.txt")
        if path is None:
            raise SystemExit(f"{folder}: no ntrex.{code}.txt (or newstest2019-ref.{code}.txt)")
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) != len(docs):
            raise SystemExit(f"{path}: {len(lines)} lines, {len(docs)} document ids")
        for n, (doc, text) in enumerate(zip(docs, lines, strict=True)):
            if lang == "en":
                english.append(text)
            if not _SCRIPT[lang].search(text) or (lang != "en" and text == english[n]):
                skipped[lang] += 1  # a quote left untranslated ("Il faut bien le faire.")
            elif text.strip():
                split = "tune" if hash_split("ntrex", doc) == "tune" else "test"
                out.append({"lang": lang, "line": n, "doc": doc, "split": split, "text": text})
    return out, dict(skipped)


def mixed(sentence: str, line: int) -> str:
    """The sentence in a note with code: the :data:`CODE` template a hash of ``line`` picks."""
    digest = hashlib.sha256(f"code:{line}".encode()).hexdigest()
    return CODE[int(digest[:8], 16) % len(CODE)].format(s=sentence.strip())


def cases(sentences: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """(kind, lang, split, text) for every sentence and kind it belongs to."""
    from memvault.language import WORD

    out = []
    for s in sentences:
        kinds = {"all": s["text"], "mixed": mixed(s["text"], s["line"])}
        if len(WORD.findall(s["text"])) <= SHORT_WORDS:
            kinds["short"] = s["text"]
        for kind, text in kinds.items():
            out.append({**s, "kind": kind, "text": text})
    return out


def measure(items: list[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy per split, language and kind; what was taken instead; a few misses."""
    from memvault.language import detect

    groups: dict[tuple[str, str, str], list[bool]] = defaultdict(list)
    instead: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    misses: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for item in items:
        got = detect(item["text"])
        key = (item["split"], item["lang"], item["kind"])
        groups[key].append(got == item["lang"])
        if got != item["lang"]:
            instead[key][got] += 1
            if len(misses[key]) < 3:
                misses[key].append(item["text"])
    result: dict[str, Any] = {}
    for split in SPLITS:
        result[split] = {}
        for lang in LANGS:
            result[split][lang] = {}
            for kind in KINDS:
                got = groups.get((split, lang, kind), [])
                key = (split, lang, kind)
                result[split][lang][kind] = {
                    "accuracy": round(sum(got) / len(got), 4) if got else None,
                    "n": len(got),
                    "taken_for": dict(instead[key]),
                    "misses": misses[key],
                }
    return result


def failures(result: dict[str, Any]) -> list[str]:
    """The targets the test split misses (``short`` and ``mixed`` >= TARGET per language)."""
    out = []
    for lang in LANGS:
        for kind in ("short", "mixed"):
            fig = result["test"][lang][kind]
            if fig["n"] == 0:
                out.append(f"test {lang} {kind}: no sentences to measure")
            elif fig["accuracy"] < TARGET:
                out.append(f"test {lang} {kind}: {fig['accuracy']:.4f} < {TARGET}")
    return out


def render(result: dict[str, Any], splits: tuple[str, ...]) -> str:
    lines = [
        f"language detection on NTREX-128: accuracy (n); target {TARGET} on test short/mixed",
        f"{'':14}" + "".join(f"{k:>16}" for k in KINDS),
    ]
    for split in splits:
        for lang in LANGS:
            cells = []
            for kind in KINDS:
                fig = result[split][lang][kind]
                acc = "-" if fig["accuracy"] is None else f"{fig['accuracy']:.4f}"
                cells.append(f"{acc + ' (' + str(fig['n']) + ')':>16}")
            lines.append(f"{split + ' ' + lang:14}" + "".join(cells))
    for split in splits:
        for lang in LANGS:
            for kind in KINDS:
                for text in result[split][lang][kind]["misses"][:1]:
                    taken = result[split][lang][kind]["taken_for"]
                    lines.append(f"miss {split} {lang} {kind} (as {taken}): {text[:100]!r}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--data",
        required=True,
        help="The folder holding NTREX-128's ntrex.{eng-US,por,rus,ukr}.txt and "
        "ntrex.DOCUMENT_IDS.tsv (or the repository's own names).",
    )
    ap.add_argument(
        "--split",
        choices=("all", *SPLITS),
        default="all",
        help="Splits to show (default: all); the targets are always checked on test.",
    )
    ap.add_argument("--json", action="store_true", help="Print one JSON object, nothing else.")
    args = ap.parse_args(argv)
    folder = Path(args.data)
    if folder.is_file():
        folder = folder.parent
    try:
        sentences, skipped = load_sentences(folder)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:
        print(f"error: {exc.code}", file=sys.stderr)
        return 2
    result = measure(cases(sentences))
    missed = failures(result)
    splits = SPLITS if args.split == "all" else (args.split,)
    if args.json:
        out = {
            "data": str(folder),
            "target": TARGET,
            "short_words": SHORT_WORDS,
            "left_out": skipped,
            "splits": {s: result[s] for s in splits},
            "failures": missed,
        }
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(render(result, splits))
    for line in missed:
        print(f"target missed: {line}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
