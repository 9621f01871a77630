"""Redact, don't drop, measured on BEAM 128K: every public conversation ingested through the
real ``ingest`` path, then the git repository searched for credential-shaped strings.

    python bench/redaction.py --data path/to/BEAM/chats/100K --json      # or $BEAM_DATA
    python bench/redaction.py --limit-conversations 2                    # a quick look
    python bench/redaction.py --fault leak                               # must exit 1

The conversations are read by ``bench/beam.py`` and written as ``bench/conversations.py``
writes them (each exchange one session, one generic-JSONL transcript per session) into one
fresh vault, each imported with ``Vault.ingest`` as ``memvault ingest`` does (one commit per
session). Reported:

* turns read from the transcripts, turns kept (added to the vault), turns dropped;
* spans redacted, by kind, and the turns they were in (``IngestReport.redacted_kinds``);
* credential-shaped strings left in git, searched two ways with two pattern sets: the
  scanner's own patterns (``memvault.security.SECRET_PATTERNS``) and a second set written
  independently (``INDEPENDENT`` below, after the public rule sets of gitleaks and
  detect-secrets); each by ``git grep -P`` over every ref's tree and by a scan of every
  blob reachable from any ref (every version of every file) and every commit message.

Exit 1 when any turn is dropped or any credential-shaped string is left. ``--fault leak``
ingests every session verbatim (``allow_secrets``, redaction off) and ``--fault drop`` leaves
one turn of the first session out, to show that the check fails when the rule it guards is
broken.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.append(str(ROOT / "bench"))  # after site-packages: bench/mcp.py is no SDK

import beam  # noqa: E402
from conversations import BenchError, session_key, transcript_lines  # noqa: E402

from memvault.security import SECRET_PATTERNS  # noqa: E402

# A second pattern set, written apart from memvault's (after gitleaks' and detect-secrets'
# public rules), so that a string the scanner's own patterns miss can still be found.
INDEPENDENT: dict[str, str] = {
    "AWS key id": r"\b(?:A3T[A-Z0-9]|AKIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ASIA)[A-Z0-9]{16}\b",
    "GitHub token": r"\b(?:ghp|gho|ghu|ghs|ghr)_[0-9A-Za-z]{36}\b",
    "Slack token": r"\bxox[baprs]-[0-9A-Za-z-]{10,48}",
    "private key block": r"-----BEGIN[A-Z ]*PRIVATE KEY-----",
    "URI with user and password": r"\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@'\"]{1,64}:[^\s/@'\"]{1,128}@",
    "quoted secret assignment": (
        r"(?i)\b(?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|access[_-]?key|client[_-]?secret)"
        r"['\"]?\s*[:=]\s*['\"][^'\"\s]{6,}['\"]"
    ),
    "bearer token": r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{20,}=*",
    "Stripe key": r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}\b",
    "Google API key": r"\bAIza[0-9A-Za-z_-]{35}\b",
    "JWT": r"\beyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
    "OpenAI key": r"\bsk-[A-Za-z0-9]{32,}\b",
}
PATTERN_SETS = {"memvault": SECRET_PATTERNS, "independent": INDEPENDENT}
FAULTS = ("leak", "drop")


def git(root: Path, *args: str, data: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", *args], cwd=root, input=data, capture_output=True, check=False)
    if proc.returncode not in (0, 1):  # git grep: 1 is "no match"
        raise BenchError(f"git {args[0]} failed: {proc.stderr.decode(errors='replace')[-300:]}")
    return proc.stdout


def ingest_all(data: Any, vault: Any, work: Path, fault: str | None) -> dict[str, Any]:
    """Every session of every conversation ingested; what was read, kept and redacted."""
    read = kept = touched = 0
    kinds: dict[str, int] = {}
    started = time.perf_counter()
    first = True
    for conv in data.conversations:
        for session in conv.sessions:
            lines = transcript_lines(conv, session)
            read += len(lines)
            if fault == "drop" and first:
                lines = lines[1:]  # a turn left out: "dropped" must say so
            path = work / f"{session_key(conv, session)}.jsonl"
            path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
            report = vault.ingest(path, allow_secrets=fault == "leak")
            first = False
            if report.problems:
                raise BenchError(f"{path}: {report.problems[0]}")
            kept += report.added
            for kind, n in report.redacted_kinds.items():
                kinds[kind] = kinds.get(kind, 0) + n
            touched += int(report.notes[0].split(" in ")[1].split()[0]) if report.notes else 0
    return {
        "conversations": len(data.conversations),
        "sessions": sum(len(c.sessions) for c in data.conversations),
        "turns_read": read,
        "turns_kept": kept,
        "turns_dropped": read - kept,
        "spans_redacted": sum(kinds.values()),
        "spans_by_kind": dict(sorted(kinds.items(), key=lambda kv: -kv[1])),
        "turns_with_a_redaction": touched,
        "ingest_s": round(time.perf_counter() - started, 1),
    }


def grep_refs(root: Path) -> dict[str, dict[str, int]]:
    """``git grep -P`` over every ref's tree: matching lines per pattern, per set."""
    refs = git(root, "for-each-ref", "--format=%(refname)").decode().split()
    out: dict[str, dict[str, int]] = {}
    for name, patterns in PATTERN_SETS.items():
        found = {}
        for kind, pattern in patterns.items():
            hits = git(root, "grep", "-P", "-I", "-h", "-c", "-e", pattern, *refs).decode()
            n = sum(int(x) for x in hits.split())
            if n:
                found[kind] = n
        out[name] = found
    return out


def scan_history(root: Path) -> tuple[dict[str, dict[str, int]], list[str], int]:
    """Every blob reachable from any ref and every commit message, searched with both sets:
    matches per pattern per set, a few examples (kind and first 12 characters), blobs read."""
    objects = git(root, "rev-list", "--all", "--objects").decode().splitlines()
    ids = "".join(line.split()[0] + "\n" for line in objects).encode()
    batch = git(root, "cat-file", "--batch", data=ids)
    texts: list[str] = []
    at = 0
    while at < len(batch):
        header_end = batch.index(b"\n", at)
        _, kind, size = batch[at:header_end].decode().split()
        body = batch[header_end + 1 : header_end + 1 + int(size)]
        at = header_end + 1 + int(size) + 1
        if kind in ("blob", "commit"):  # a commit's text holds its message
            texts.append(body.decode("utf-8", "replace"))
    found: dict[str, dict[str, int]] = {}
    examples: list[str] = []
    for name, patterns in PATTERN_SETS.items():
        counts: dict[str, int] = {}
        for kind, pattern in patterns.items():
            regex = re.compile(pattern)
            for text in texts:
                for match in regex.finditer(text):
                    counts[kind] = counts.get(kind, 0) + 1
                    if len(examples) < 10:
                        examples.append(f"{name}/{kind}: {match.group(0)[:12]}…")
        found[name] = counts
    return found, examples, len(texts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data",
        default=os.environ.get("BEAM_DATA", ""),
        help="A folder of BEAM conversations, e.g. BEAM's chats/100K (default: $BEAM_DATA).",
    )
    parser.add_argument("--limit-conversations", type=int, default=0, help="Only the first N.")
    parser.add_argument("--workdir", default=None, help="Keep the vault here (default: a temp).")
    parser.add_argument(
        "--fault", choices=FAULTS, default=None, help="Break the rule on purpose (must exit 1)."
    )
    parser.add_argument("--json", action="store_true", help="Print one JSON object, only that.")
    args = parser.parse_args(argv)
    path = Path(args.data).expanduser()
    if not args.data or not beam.is_beam(path):
        print(
            f"--data (or $BEAM_DATA): not a folder of BEAM conversations: {path}", file=sys.stderr
        )
        return 2
    from memvault import Vault

    with contextlib.ExitStack() as stack:
        base = Path(args.workdir) if args.workdir else Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="memvault-redaction-")))  # fmt: skip
        try:
            with contextlib.redirect_stdout(sys.stderr):
                data = beam.load(path)
                data.conversations = data.conversations[: args.limit_conversations or None]
                work = base / "transcripts"
                work.mkdir(parents=True, exist_ok=True)
                vault = Vault.init(base / "vault")
                result = ingest_all(data, vault, work, args.fault)
                started = time.perf_counter()
                result["left_by_git_grep"] = grep_refs(vault.root)
                history, examples, blobs = scan_history(vault.root)
                result["left_in_history"] = history
                result["left_examples"] = examples
                result["objects_scanned"] = blobs
                result["scan_s"] = round(time.perf_counter() - started, 1)
        except BenchError as exc:
            print(f"bench failed: {exc}", file=sys.stderr)
            return 1
    result["data"] = str(path)
    result["fault"] = args.fault
    left = sum(
        n for part in ("left_by_git_grep", "left_in_history") for s in result[part].values()
        for n in s.values()
    )  # fmt: skip
    result["credential_shaped_left"] = left
    result["ok"] = result["turns_dropped"] == 0 and left == 0
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
    if not result["ok"]:
        print(
            f"FAILED: {result['turns_dropped']} turn(s) dropped, {left} credential-shaped "
            "string(s) left in git",
            file=sys.stderr,
        )
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
