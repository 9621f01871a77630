#!/usr/bin/env python3
"""Try every kind of bad input on a real vault and print what the user sees.

Prints a Markdown table (input, command, exit code, the message) — docs/bad-input.md is
this script's output — and checks after each case that the vault is intact: the other
memories still load and `git fsck` is clean.

    python bench/bad_input.py > docs/bad-input.md
    python bench/bad_input.py --json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def memvault(root: Path, *args: str, stdin: bytes | None = None) -> tuple[int, str, str]:
    env = dict(os.environ)
    env.setdefault("MEMVAULT_EMBEDDER", "fake")
    proc = subprocess.run(
        [sys.executable, "-m", "memvault", "--vault", str(root), *args],
        input=stdin or b"",
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    return (
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def put(root: Path, rel: str, data: bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def fm(body: str) -> bytes:
    return body.encode("utf-8")


BOMB = (
    "---\nid: bomb\ntype: semantic\n"
    "a: &a [x, x, x, x, x, x, x, x, x]\n"
    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    "d: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "---\nboom\n"
)
DEEP = "---\nid: deep\ntype: semantic\nx: " + "[" * 200 + "]" * 200 + "\n---\ndeep\n"

# (label, setup files {rel: bytes}, command args, stdin)
CASES: list[tuple[str, dict[str, bytes], list[str], bytes | None]] = [
    (
        "malformed YAML",
        {"semantic/facts/bad.md": fm("---\nid: bad\ntype: semantic\ntags: [a, b\n---\nx\n")},
        ["check", "semantic/facts/bad.md"],
        None,
    ),
    (
        "importance out of range",
        {"semantic/facts/imp.md": fm("---\nid: imp\ntype: semantic\nimportance: 9\n---\nx\n")},
        ["check", "semantic/facts/imp.md"],
        None,
    ),
    (
        "wrong type (tags as a string)",
        {"semantic/facts/tags.md": fm("---\nid: tags\ntype: semantic\ntags: api\n---\nx\n")},
        ["check", "semantic/facts/tags.md"],
        None,
    ),
    (
        "missing id",
        {"semantic/facts/noid.md": fm("---\ntype: semantic\n---\nx\n")},
        ["check", "semantic/facts/noid.md"],
        None,
    ),
    (
        "missing type",
        {"semantic/facts/notype.md": fm("---\nid: notype\n---\nx\n")},
        ["check", "semantic/facts/notype.md"],
        None,
    ),
    (
        "id that is a path",
        {"semantic/facts/path.md": fm("---\nid: ../../x\ntype: semantic\n---\nx\n")},
        ["check", "semantic/facts/path.md"],
        None,
    ),
    (
        "duplicate ids",
        {
            "semantic/facts/d1.md": fm("---\nid: same\ntype: semantic\n---\none\n"),
            "semantic/facts/d2.md": fm("---\nid: same\ntype: semantic\n---\ntwo\n"),
        },
        ["doctor"],
        None,
    ),
    (
        "not UTF-8",
        {
            "semantic/facts/latin1.md": "---\nid: latin\ntype: semantic\n---\ncaf\xe9\n".encode(
                "latin-1"
            )
        },
        ["check", "semantic/facts/latin1.md"],
        None,
    ),
    (
        "binary file",
        {"semantic/facts/bin.md": b"---\nid: bin\x00\x01\x02"},
        ["check", "semantic/facts/bin.md"],
        None,
    ),
    ("empty file", {"semantic/facts/empty.md": b""}, ["check", "semantic/facts/empty.md"], None),
    (
        "no front matter",
        {"semantic/facts/plain.md": fm("just some text\n")},
        ["check", "semantic/facts/plain.md"],
        None,
    ),
    (
        "CRLF line endings and a BOM (accepted)",
        {
            "semantic/facts/crlf.md": (
                b"\xef\xbb\xbf---\r\nid: crlf\r\ntype: semantic\r\n---\r\nWindows file\r\n"
            )
        },
        ["check", "semantic/facts/crlf.md"],
        None,
    ),
    (
        "YAML alias bomb (billion laughs)",
        {"semantic/facts/bomb.md": fm(BOMB)},
        ["check", "semantic/facts/bomb.md"],
        None,
    ),
    (
        "deeply nested YAML",
        {"semantic/facts/deep.md": fm(DEEP)},
        ["check", "semantic/facts/deep.md"],
        None,
    ),
    (
        "10 MB memory file",
        {
            "semantic/facts/huge.md": fm(
                "---\nid: huge\ntype: semantic\n---\n" + "x" * 10_000_000 + "\n"
            )
        },
        ["check", "semantic/facts/huge.md"],
        None,
    ),
    (
        "file name with odd characters (accepted)",
        {
            "semantic/facts/ñame with spaces (1).md": fm(
                "---\nid: odd-name\ntype: semantic\n---\nodd\n"
            )
        },
        ["show", "odd-name"],
        None,
    ),
    (
        "memory text that looks like a credential",
        {},
        ["add", "fact", "deploy key AKIAABCDEFGHIJKLMNOP"],
        None,
    ),
    ("invalid UTF-8 on stdin", {}, ["add", "fact"], b"caf\xe9 \xff\n"),
    ("invalid UTF-8 in a query", {}, ["recall", "caf\udce9"], None),
    ("absurd --limit", {}, ["recall", "deploy", "--limit", "1000000000"], None),
    ("negative --budget", {}, ["context", "deploy", "--budget", "-5"], None),
    ("absurd --budget", {}, ["context", "deploy", "--budget", "999999999"], None),
    ("unknown memory id", {}, ["show", "no-such-memory"], None),
    ("id argument that is a path", {}, ["forget", "../../etc/passwd", "--reason", "x"], None),
    ("bad --since value", {}, ["list", "--since", "last tuesday"], None),
    ("bad --now value", {}, ["consolidate", "--dry-run", "--now", "soon"], None),
    ("unknown consolidation step", {}, ["consolidate", "--dry-run", "--only", "sleep"], None),
    (
        "invalid config value",
        {".memvault/config.yaml": fm("decay:\n  rates: {fast: 2}\n")},
        ["list"],
        None,
    ),
    (
        "import of a broken JSONL line",
        {"in.jsonl": fm('{"id": "ok-one", "type": "semantic", "content": "fine"}\n{not json\n')},
        ["import", "{root}/in.jsonl"],
        None,
    ),
    ("unknown option", {}, ["list", "--colour"], None),
    # found by fuzzing (tests/test_fuzz_cli.py, bench/fuzz.py)
    (
        "impossible date in hand-written front matter (created: 2026-02-30)",
        {
            "semantic/facts/feb30.md": fm(
                "---\nid: feb30\ntype: semantic\ncreated: 2026-02-30\n---\nx\n"
            )
        },
        ["check", "semantic/facts/feb30.md"],
        None,
    ),
    (
        "YAML scalar that can't be built (n: -_)",
        {
            "semantic/facts/underscore.md": fm(
                "---\nid: underscore\ntype: semantic\nn: -_\n---\nx\n"
            )
        },
        ["check", "semantic/facts/underscore.md"],
        None,
    ),
    ("import of a folder", {}, ["import", "{root}/semantic"], None),
    ("export --output to a folder", {}, ["export", "--output", "{root}/semantic"], None),
]


def _message(out: str, err: str) -> str:
    errors = [ln for ln in err.splitlines() if ln.startswith(("Error", "Usage", "Aborted"))]
    if errors:
        return errors[0]
    lines = [ln for ln in out.splitlines() if ln.strip()] or [
        ln for ln in err.splitlines() if ln.strip()
    ]
    return lines[0] if lines else ""


def run_case(
    root: Path, label: str, files: dict[str, bytes], args: list[str], stdin: bytes | None
) -> dict:
    backup = {}
    for rel, data in files.items():
        path = root / rel
        if path.exists():
            backup[rel] = path.read_bytes()
        put(root, rel, data)
    args = [a.replace("{root}", str(root)) for a in args]
    if label.startswith("symlink"):
        pass
    code, out, err = memvault(root, *args, stdin=stdin)
    message = _message(out, err)
    for rel in files:
        path = root / rel
        if rel in backup:
            path.write_bytes(backup[rel])
        elif path.exists():
            path.unlink()
    # the rest of the vault is unaffected (checked once the bad file is gone again)
    ok_code, ok_out, _ = memvault(root, "show", "keeper", "--json")
    intact = ok_code == 0 and json.loads(ok_out)["content"].startswith("The keeper")
    fsck = (
        subprocess.run(["git", "fsck", "--no-progress"], cwd=root, capture_output=True).returncode
        == 0
    )
    return {
        "input": label,
        "command": "memvault "
        + " ".join(a if " " not in a else repr(a) for a in args).replace(str(root) + "/", ""),
        "exit": code,
        "message": message.replace(str(root) + "/", "").replace(str(Path.home()), "~")[:200],
        "traceback": "Traceback" in err,
        "vault_intact": intact and fsck,
    }


def symlink_case(root: Path, outside: Path) -> dict:
    target = outside / "secret.md"
    target.write_text("---\nid: outside\ntype: semantic\n---\nsecret outside the vault\n")
    link = root / "semantic" / "facts" / "link.md"
    link.symlink_to(target)
    code, out, err = memvault(root, "check", "semantic/facts/link.md")
    code2, out2, _ = memvault(root, "show", "outside")
    link.unlink()
    return {
        "input": "symlink pointing outside the vault",
        "command": "memvault check semantic/facts/link.md",
        "exit": code,
        "message": _message(out, err) + ("" if code2 != 0 else " (BUG: followed)"),
        "traceback": "Traceback" in err,
        "vault_intact": code2 != 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("MEMVAULT_EMBEDDER", "fake")
    from memvault import Vault

    with tempfile.TemporaryDirectory(prefix="mv-bad-") as tmp:
        root = Path(tmp) / "v"
        vault = Vault.init(root)
        vault.add("semantic", "The keeper memory must survive every bad input", id="keeper")
        rows = [run_case(root, *case) for case in CASES]
        rows.append(symlink_case(root, Path(tmp)))
    if args.json:
        print(json.dumps(rows))
        return
    print("# Bad input: what the user sees\n")
    print(
        "Generated by `python bench/bad_input.py > docs/bad-input.md` on a real vault. "
        "After every case the"
    )
    print(
        "script checks that the other memories still load and `git fsck` is clean "
        "(column *intact*)."
    )
    print("Exit codes: 0 ok, 1 expected error (one line), 2 usage error, 3 bug (crash log).\n")
    print("| input | command | exit | what the user sees | intact |")
    print("|---|---|---|---|---|")
    for r in rows:
        msg = r["message"].replace("|", "\\|")
        cmd = r["command"].replace("|", "\\|")
        intact = "yes" if r["vault_intact"] else "NO"
        print(f"| {r['input']} | `{cmd[:70]}` | {r['exit']} | {msg} | {intact} |")
    bad = [r for r in rows if r["traceback"] or not r["vault_intact"] or r["exit"] == 3]
    print(f"\n{len(rows)} inputs tried; {len(bad)} with a traceback, a crash or damage.")


if __name__ == "__main__":
    main()
