"""Every shell command in README.md and docs/agents.md runs as written, from any folder.

Each ``sh``/``bash``/``shell`` block runs as one bash script (``set -e``, stdin closed) in
an empty folder, with ``$HOME`` a scratch folder that holds a vault at ``~/memory`` (with
the example memories) and the files the examples name: ``chat.jsonl`` and
``hook-input.json`` in the folder, a Claude Code session under ``~/.claude/projects/``.
Paths under ``/tmp/`` are moved into a scratch folder. No ``MEMVAULT_VAULT`` is set, so a
command has to name its vault (``--vault``, ``MEMVAULT_VAULT=...``) or ``cd`` into one.
The test embedder stands in for the model (tests/conftest.py), and ``BROWSER`` is
``true`` (``memvault ui --open`` must not start a browser).

Commands of external clients are checked, not run for real: ``claude`` is a stand-in that
reads a ``claude mcp add`` line the way Claude Code's CLI does (scope, transport, env, the
server's name, ``--`` and the command) and then starts the server it names, which must
serve and end cleanly (exit 0 when the client closes stdin).

Blocks in any other language (``text`` or ``console`` for output, ``python``, ``json``,
...) are not run; a block without a language is an error, so that a new block says what
it is. An HTML comment on the line before a shell block changes how it runs:

- ``<!-- docs-test: skip: REASON -->``: not run (the reason is required);
- ``<!-- docs-test: installed -->``: the block starts by installing memvault
  (``python3 -m venv``, ``. .venv/bin/activate``, ``pip install``); this test runs inside
  that install, so those steps are left out and the rest runs;
- ``<!-- docs-test: from-checkout -->``: run from the repository's root (``bench/``);
- ``<!-- docs-test: runs-until-stopped -->``: a server; it passes if it is still running
  after 10 seconds (it is then stopped) or ended with exit 0.

The same convention is described in the README's Development section.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from memvault import Vault

from helpers import BIN

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "docs/agents.md")
SHELL = ("sh", "bash", "shell")
MARKERS = ("skip", "installed", "from-checkout", "runs-until-stopped")
TIMEOUT = 600  # seconds per block: the quick benchmark run takes a minute on a busy machine
SERVER_GRACE = 10  # seconds a runs-until-stopped block must stay up
REAL_SESSION = Path(__file__).parent / "data" / "claude-code-session.jsonl"
INSTALL_STEPS = (
    re.compile(r"python3? -m venv \S+"),
    re.compile(r"\. \S*/bin/activate"),
    re.compile(r"(python3? -m )?pip install .+"),
)
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>```+|~~~+)(?P<info>.*)$")
MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<body>.*?)\s*-->\s*$")


@dataclass
class Block:
    doc: str
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    markers: dict[str, str]  # marker -> its argument (the reason, for skip)

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def blocks(doc: str) -> list[Block]:
    """The fenced blocks of ``doc`` with the docs-test markers on the lines just above."""
    lines = (ROOT / doc).read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = m.group("indent"), m.group("fence")
        end = i + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        body = [
            line[len(indent) :] if line.startswith(indent) else line for line in lines[i + 1 : end]
        ]
        markers: dict[str, str] = {}
        j = i - 1
        while j >= 0 and MARKER.match(lines[j]):
            name, _, arg = MARKER.match(lines[j]).group("body").partition(":")  # type: ignore[union-attr]
            markers[name.strip()] = arg.strip()
            j -= 1
        lang = m.group("info").strip().split()[0] if m.group("info").strip() else ""
        found.append(Block(doc, i + 1, lang, "\n".join(body) + "\n", markers))
        i = end + 1
    return found


ALL = [b for doc in DOCS for b in blocks(doc)]
SHELL_BLOCKS = [b for b in ALL if b.lang in SHELL]


def test_every_block_says_what_it_is_and_markers_are_known() -> None:
    for block in ALL:
        assert block.lang, f"{block.where}: a fenced block needs a language (sh, text, python, ...)"
        unknown = set(block.markers) - set(MARKERS)
        assert not unknown, f"{block.where}: unknown docs-test marker(s) {unknown}; know {MARKERS}"
        if block.markers and block.lang not in SHELL:
            pytest.fail(f"{block.where}: docs-test markers are for shell blocks, not {block.lang}")
        if "skip" in block.markers:
            assert block.markers["skip"], f"{block.where}: say why it is skipped (skip: REASON)"


def test_the_docs_hold_the_commands_this_test_runs() -> None:
    runnable = [b for b in SHELL_BLOCKS if "skip" not in b.markers]
    by_doc = {doc: [b for b in runnable if b.doc == doc] for doc in DOCS}
    assert len(by_doc["README.md"]) >= 2 and len(by_doc["docs/agents.md"]) >= 6, by_doc
    skipped = [b.where for b in SHELL_BLOCKS if "skip" in b.markers]
    assert len(skipped) <= 3, f"more blocks skipped than run-able ones justify: {skipped}"
    text = "".join(b.text for b in runnable)
    for command in ("memvault init", "claude mcp add", "integrations install", "ingest --hook"):
        assert command in text, command


# --- running a block ---------------------------------------------------------------------

CLAUDE_STAND_IN = '''\
"""Stand-in for Claude Code's `claude` in the docs test: reads `claude mcp add` as the real
CLI does, then starts the server it names with stdin closed and requires exit 0."""
import os, subprocess, sys

args = sys.argv[1:]
if args[:2] != ["mcp", "add"]:
    sys.exit(f"claude stand-in: only 'claude mcp add' is known here, got {args}")
rest = args[2:]
if "--" not in rest:
    sys.exit("claude mcp add: expected '<name> -- <command> [args...]'")
opts, command = rest[: rest.index("--")], rest[rest.index("--") + 1 :]
env, names, i = {}, [], 0
while i < len(opts):
    opt = opts[i]
    if opt in ("-e", "--env"):
        key, eq, value = opts[i + 1].partition("=")
        if not key or not eq:
            sys.exit(f"claude mcp add: -e expects KEY=value, got {opts[i + 1]!r}")
        env[key] = value
        i += 2
    elif opt in ("-s", "--scope"):
        if opts[i + 1] not in ("local", "project", "user"):
            sys.exit(f"claude mcp add: unknown scope {opts[i + 1]!r}")
        i += 2
    elif opt in ("-t", "--transport"):
        if opts[i + 1] != "stdio":
            sys.exit(f"claude mcp add: expected a stdio server, got {opts[i + 1]!r}")
        i += 2
    elif opt.startswith("-"):
        sys.exit(f"claude mcp add: unknown option {opt!r}")
    else:
        names.append(opt)
        i += 1
if len(names) != 1 or not command:
    sys.exit(f"claude mcp add: expected one name and a command, got {names} and {command}")
proc = subprocess.run(command, env={**os.environ, **env}, stdin=subprocess.DEVNULL, timeout=120)
print(f"claude stand-in: server {names[0]!r} started and ended with exit {proc.returncode}")
sys.exit(proc.returncode)
'''


@dataclass
class Sandbox:
    work: Path
    home: Path
    scratch: Path
    env: dict[str, str]


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    home, work, scratch, bin_dir = (tmp_path / n for n in ("home", "work", "scratch", "bin"))
    for folder in (home, work, scratch, bin_dir):
        folder.mkdir()
    Vault.init(home / "memory", examples=True)
    session = home / ".claude" / "projects" / "-home-me-app" / "3f2a9c1e.jsonl"
    session.parent.mkdir(parents=True)
    shutil.copy(REAL_SESSION, session)
    (work / "chat.jsonl").write_text(
        json.dumps(
            {"role": "user", "content": "How do we deploy?", "timestamp": "2026-01-05T10:00:00Z"}
        )
        + "\n"
        + json.dumps(
            {"role": "assistant", "content": "With make ship.", "timestamp": "2026-01-05T10:00:09Z"}
        )
        + "\n",
        encoding="utf-8",
    )
    hook = {
        "session_id": "3f2a9c1e",
        "transcript_path": str(session),
        "hook_event_name": "SessionEnd",
    }
    (work / "hook-input.json").write_text(json.dumps(hook), encoding="utf-8")
    claude = bin_dir / "claude"
    claude.write_text(f"#!{sys.executable}\n{CLAUDE_STAND_IN}", encoding="utf-8")
    claude.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(
        HOME=str(home),
        PATH=os.pathsep.join([str(bin_dir), str(BIN), env.get("PATH", "")]),
        BROWSER="true",
    )
    return Sandbox(work, home, scratch, env)


def script_of(block: Block, sandbox: Sandbox) -> str:
    text = block.text.replace("/tmp/", f"{sandbox.scratch}/")
    if "installed" in block.markers:
        lines = text.splitlines()
        first = next(n for n, line in enumerate(lines) if line.strip() and not line.startswith("#"))
        steps = lines[first].split(" && ")
        dropped = 0
        while steps and any(p.fullmatch(steps[0].strip()) for p in INSTALL_STEPS):
            steps.pop(0)
            dropped += 1
        assert dropped, f"{block.where}: marked 'installed' but it starts with no install step"
        lines[first] = " && ".join(steps)
        text = "\n".join(lines) + "\n"
    return "set -eo pipefail\n" + text


def report(block: Block, script: str, code: int | None, out: str, err: str) -> str:
    return (
        f"{block.where}: the block failed (exit {code}). It must work as written from any"
        " folder; a block that cannot run here needs a docs-test marker (see this test's"
        f" docstring).\n--- script\n{script}--- stdout (end)\n{out[-3000:]}\n"
        f"--- stderr (end)\n{err[-3000:]}"
    )


def stop(proc: subprocess.Popen[str]) -> None:
    """Stop a block's process group (the shell and whatever it started)."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def start(script: str, cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        ["bash", "-c", script],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: stopping it stops what it started
    )


@pytest.mark.slow  # bash and real memvault processes, seconds a block
@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=[b.where for b in SHELL_BLOCKS])
def test_shell_block_runs(block: Block, sandbox: Sandbox) -> None:
    if "skip" in block.markers:
        pytest.skip(f"marked in the docs: {block.markers['skip']}")
    script = script_of(block, sandbox)
    cwd = ROOT if "from-checkout" in block.markers else sandbox.work
    server = "runs-until-stopped" in block.markers
    proc = start(script, cwd, sandbox.env)
    began = time.monotonic()
    try:
        out, err = proc.communicate(timeout=SERVER_GRACE if server else TIMEOUT)
    except subprocess.TimeoutExpired:
        stop(proc)
        out, err = proc.communicate()
        if server:
            return  # still serving after the grace period: it started
        pytest.fail(
            f"{block.where}: still running after {time.monotonic() - began:.0f} s; a server"
            " needs <!-- docs-test: runs-until-stopped -->\n"
            + report(block, script, None, out, err)
        )
    assert proc.returncode == 0, report(block, script, proc.returncode, out, err)


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """`.ci/run` runs the README's second command, and nothing else (its last line)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert command.endswith("python -m pytest")
    assert f"```bash\n{command}\n```" in readme
