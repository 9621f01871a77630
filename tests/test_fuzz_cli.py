"""Hypothesis fuzzing of the command line's argument paths and of the front-matter parser.

The CLI is driven in-process through ``memvault.cli.main(argv)`` on a real vault, with
argv built from each command's *real* options (read from the Typer app, so a new option
is fuzzed without touching this file) and values chosen to hurt: odd unicode, huge and
negative numbers, empty strings, option-looking text, dates that don't exist, paths that
aren't there. Lone surrogates become U+FFFD and NUL is dropped, as happens to a real argv
(``main()`` cleans ``sys.argv`` the same way; the OS can't pass NUL at all).

Properties, for every call:
- the exit code is 0, 1 or 2 (3 means an internal bug; an exception escaping ``main`` is
  a bug too); 130 only where the command asked for a confirmation on an empty stdin;
- an expected error (1) is exactly one line on stderr, starting with ``Error:``; a usage
  error (2) names the problem; no traceback ever reaches the user;
- ``--json`` output that exits 0 parses with ``json.loads``;
and after every example: ``git fsck`` is clean, nothing is left uncommitted, and
``memvault doctor`` finds the vault valid.

The same machinery runs for longer in ``bench/fuzz.py``.
"""

from __future__ import annotations

import contextlib
import enum
import io
import json
import os
import re
import subprocess
import sys
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from memvault import Vault
from memvault.errors import MemvaultError, ValidationError
from memvault.store.files import check_text, parse_text

# Hypothesis fuzzing of the CLI and the parser: out of the fast lane (pytest -m 'not slow').
pytestmark = pytest.mark.slow

# --- which commands are fuzzed ------------------------------------------------------------

READ_COMMANDS = (
    "recall",
    "search",
    "fact",
    "procedure",
    "context",
    "validate",
    "list",
    "show",
    "episodes",
    "stats",
    "why",
    "history",
    "export",
    "check",
    "doctor",
    "insights",
    "review list",
    "dispute list",
    "version",
    "debug",  # switches a per-user file (in the test's cache folder): reads then print traces
)
WRITE_COMMANDS = (
    "add",
    "log",
    "forget",
    "procedure-used",
    "import",
    "ingest",
    "consolidate",
    "reindex",
    "pause",
    "resume",
    "rescope",
    "review accept",
    "review reject",
    "dispute keep",
    "init",
)
# Commands left out, and why: each one either never returns or acts outside the vault.
NOT_FUZZED = {
    "mcp": "serves stdio until the client leaves",
    "watch": "runs until interrupted",
    "edit": "opens $EDITOR",
    "sync": "pulls and pushes remotes",
    "hooks install": "installs git hooks (every later commit would run them)",
    "hooks uninstall": "see hooks install",
    "hooks status": "see hooks install",
    "merge-driver": "called by git with its own temp files",
    "hook-run": "called by the installed hook shims",
    "review": "the group itself (its subcommands are fuzzed)",
    "dispute": "the group itself (its subcommands are fuzzed)",
    "ui": "serves the web inspector until interrupted (tests/test_ui_*.py drive it)",
    "integrations install": "writes client config files outside the vault; its bad input is "
    "tested in tests/test_integrations_install.py",
    "integrations uninstall": "see integrations install",
    "allow-command": "writes the user's record of allowed commands outside the vault; its bad "
    "input (unknown and unset keys) is tested in tests/test_allow.py",
    "purge": "rewrites all of git history (librarian only); its bad input is tested in "
    "tests/test_purge_match.py",
}
# Exit 1 of these is a report (every problem found, one per line), not one error message.
REPORTING_COMMANDS = {"doctor", "check", "import", "ingest"}

# --- values that hurt ---------------------------------------------------------------------

ODD_TEXT = [
    "",
    " ",
    "-",
    "--",
    "-x",
    "0",
    "-1",
    "1",
    "3",
    "5",
    "7",
    "1001",
    str(2**63),
    str(-(2**63)),
    "9" * 40,
    "-" + "9" * 40,
    "1e309",
    "-1e309",
    "nan",
    "inf",
    "-inf",
    "0x10",
    "1_000",
    "٣",
    "７",
    "\ufffd",
    "\u202eevil",
    "\u200b",
    "é",
    "🙂",
    "日本語",
    "x" * 3000,
    "a\nb",
    "\r\n",
    "\t",
    "'",
    '"',
    "\\",
    "%s",
    "{}",
    "{0}",
    "*",
    "AND",
    "OR",
    "NOT",
    "NEAR(a b)",
    '"unterminated',
    "^",
    "a:b",
    "col:value",
    "../../etc/passwd",
    "/",
    ".",
    "..",
    "semantic/facts/x.md",
    "self",
    "team",
    "global",
    "librarian",
    "fact",
    "episode",
    "procedure",
    "episodic",
    "semantic",
    "procedural",
    "facts",
    "decisions",
    "workflows",
    "session",
    "2026-01-31",
    "2026-13-45",
    "0001-01-01",
    "9999-12-31T23:59:59Z",
    "2026-02-30",
    "7d",
    "-7d",
    "0d",
    "99999999999d",
    "1h",
    "3m",
    "2w",
    "relevance",
    "time",
    "any",
    "active",
    "superseded",
    "archived",
    "proposed",
    "user",
    "assistant",
    "system",
    "up",
    "down",
    "jsonl",
    "markdown",
    "md",
    "yaml-episodes",
    "auto",
    "fold",
    "decay",
    "dedup",
    "archive",
    "supersede",
    "fold,decay",
    "high",
    "low",
    "never",
    "fast",
    "normal",
    "slow",
    "helpful",
    "when did we deploy",
    "how do I release",
    "what is the database",
    "is it true that we use MySQL",
]
NUMBERS = st.one_of(
    st.integers(-5, 1005),
    st.sampled_from([0, -1, 2**31, 2**63, -(2**63), 10**30, -(10**30)]),
    st.integers(),
).map(str)
FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "1e400", "-0.0"]),
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def argv_safe(text: str) -> str:
    """What a real argv can carry: no NUL; undecodable bytes arrive as U+FFFD."""
    return _SURROGATE.sub("\ufffd", text.replace("\x00", ""))


RANDOM_TEXT = st.text(max_size=60)
TEXT = st.one_of(
    st.sampled_from(ODD_TEXT),
    RANDOM_TEXT,
    st.lists(st.sampled_from(ODD_TEXT), max_size=3).map(" ".join),
)


# --- the workspace: a vault, a scratch folder and input files -----------------------------


@dataclass
class Workspace:
    """A real vault with some of everything, beside a scratch folder used as the cwd.

    Every path the fuzzer passes points inside ``base``: nothing is written elsewhere.
    """

    base: Path
    vault: Path
    scratch: Path
    ids: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)

    @classmethod
    def create(cls, base: Path) -> Workspace:
        vault_root = base / "v"
        scratch = base / "cwd" / "here"
        scratch.mkdir(parents=True)
        vault = Vault.init(vault_root, examples=True)
        vault.add(
            "semantic",
            "Deploys happen Tuesday to Thursday",
            id="deploy-window",
            subject="deploy.window",
            category="constraints",
            tags=["deploy"],
        )
        vault.add(
            "procedural",
            "Roll back when the error rate passes 2%",
            id="rollback",
            steps=["Stop the deploy", "Revert the tag"],
            trigger=["rollback"],
        )
        vault.add(
            "episodic",
            "The Friday deploy broke checkout",
            id="friday-deploy",
            outcome="failure",
            related=["deploy-window"],
        )
        Vault.open(vault_root, agent="alice", team="core").add(
            "semantic", "Alice keeps her notes short", id="alice-notes", scope="self"
        )
        Vault.open(vault_root, agent="bob").add(
            "semantic", "Proposed: everyone uses UTC", id="utc", scope="global"
        )
        vault.log("s1", "user", "How do we deploy on Fridays?")
        vault.log("s1", "assistant", "We don't.", extra={"rating": "helpful"})
        ids = [m.id for m in Vault.open(vault_root).core.scan().memories]
        files = {
            "good.jsonl": json.dumps(
                {"id": "imported-one", "type": "semantic", "content": "imported"}
            )
            + "\n",
            "bad.jsonl": '{"id": "x", "type": "nope"}\nnot json\n',
            "garbage.bin": b"\x89PNG\r\n\x1a\n\x00\xff\xfe",
            "latin1.txt": "caf\xe9\n".encode("latin-1"),
            "transcript.txt": "User: hello\nAssistant: hi there\n",
            "episodes.yaml": "episodes:\n  - id: ep-one\n    content: an episode\n",
            "memory.md": "---\nid: loose\ntype: semantic\n---\nloose file\n",
            "bomb.md": "---\nid: bomb\ntype: semantic\na: &a [x, x, x]\nb: &b [*a, *a, *a]\n"
            "c: [*b, *b, *b]\n---\n",
            "empty.txt": "",
        }
        for name, data in files.items():
            path = scratch / name
            path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
        (scratch / "adir").mkdir()
        inputs = [
            *files,
            "adir",
            "missing.jsonl",
            "",
            "-",
            ".",
            "..",
            "no/such/dir/x.md",
            str(vault_root / "semantic" / "facts" / "python-version.md"),
            str(vault_root),
        ]
        outputs = [
            "out.jsonl",
            "out/new.md",
            "adir",
            "",
            "-",
            "good.jsonl",
            "no/such/dir/x",
            "../sibling.jsonl",
            "newvault",
            "adir/inner",
        ]
        return cls(base, vault_root, scratch, ids, inputs, outputs)


# --- argv generation from the real command tree -------------------------------------------


@dataclass(frozen=True)
class Param:
    name: str
    opts: tuple[str, ...]
    kind: str  # flag | int | float | path | choice | text
    argument: bool
    multiple: bool
    nargs: int
    required: bool
    choices: tuple[str, ...] = ()
    output: bool = False


def _kind_of(annotation: object) -> tuple[str, tuple[str, ...]]:
    args = typing.get_args(annotation)
    if (
        typing.get_origin(annotation) in (list, typing.Union)
        or type(annotation).__name__ == "UnionType"
    ):
        inner = [a for a in args if a is not type(None)]
        annotation = inner[0] if inner else str
    if annotation is bool:
        return "flag", ()
    if annotation is int:
        return "int", ()
    if annotation is float:
        return "float", ()
    if annotation is Path:
        return "path", ()
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "choice", tuple(str(m.value) for m in annotation)
    return "text", ()


def command_table() -> dict[str, list[Param]]:
    """``{"review accept": [Param, ...], ...}`` for every leaf command of the real app."""
    import typer.main

    from memvault.cli import app

    table: dict[str, list[Param]] = {}

    def walk(group: typing.Any, prefix: str) -> None:
        for name, cmd in group.commands.items():
            path = f"{prefix}{name}"
            if hasattr(cmd, "commands"):
                walk(cmd, path + " ")
                if getattr(cmd, "invoke_without_command", False) or cmd.params:
                    table[path] = []
                continue
            params = []
            for p in cmd.params:
                kind, choices = _kind_of(p.type_descriptor.annotation)
                if getattr(p, "is_flag", False):
                    kind = "flag"
                params.append(
                    Param(
                        name=p.name,
                        opts=tuple(p.opts),
                        kind=kind,
                        argument=p.param_type_name == "argument",
                        multiple=bool(p.multiple),
                        nargs=p.nargs,
                        required=bool(p.required),
                        choices=choices,
                        output=(path, p.name) in {("export", "output"), ("init", "path")},
                    )
                )
            table[path] = params

    walk(typer.main.get_command(app), "")
    return table


ROOT_OPTIONS = ("--agent", "--team", "--role")
IDENTITY_VALUES = [
    "alice",
    "bob",
    "carol",
    "core",
    "ops",
    "librarian",
    "",
    "Alice",
    "../x",
    "a b",
    "🙂",
]


@dataclass
class Call:
    argv: list[str]
    stdin: bytes
    command: str
    json_flag: bool
    may_prompt: bool

    def __repr__(self) -> str:
        return f"Call(argv={self.argv!r}, stdin={self.stdin[:80]!r})"


def calls(ws: Workspace, commands: tuple[str, ...]) -> st.SearchStrategy[Call]:
    table = command_table()
    ids = ws.ids + ["missing-id", "UPPER", "../x", "a" * 200]

    @st.composite
    def one(draw: st.DrawFn) -> Call:
        command = draw(st.sampled_from(commands))
        params = table[command]

        def value(p: Param) -> str:
            if p.kind == "int":
                return draw(st.one_of(NUMBERS, TEXT))
            if p.kind == "float":
                return draw(st.one_of(FLOATS, NUMBERS, TEXT))
            if p.kind == "path":
                if p.output:  # written to: only paths inside the workspace, never random text
                    return draw(st.sampled_from(ws.outputs))
                return (  # only read: random text is harmless
                    draw(st.one_of(st.sampled_from(ws.inputs), TEXT))
                    if draw(st.integers(0, 9)) == 0
                    else draw(st.sampled_from(ws.inputs))
                )
            if p.kind == "choice":
                return draw(st.one_of(st.sampled_from(p.choices), TEXT))
            if p.name in ("memory_id", "related", "id"):
                return draw(st.one_of(st.sampled_from(ids), TEXT))
            return draw(TEXT)

        tokens: list[str] = []
        json_flag = False
        options = [p for p in params if not p.argument]
        chosen = draw(st.lists(st.sampled_from(options), max_size=6)) if options else []
        # A required option is usually given: otherwise nearly every call stops at "missing option".
        for p in options:
            if p.required and p not in chosen and draw(st.integers(0, 4)) > 0:
                chosen.append(p)
        for p in chosen:
            opt = draw(st.sampled_from(p.opts))
            if p.kind == "flag":
                tokens.append(opt)
                json_flag = json_flag or opt == "--json"
            else:
                tokens += [opt, value(p)]
        if draw(st.integers(0, 15)) == 0:
            tokens.append(draw(st.sampled_from(["--nope", "-Z", "--json=yes", "--limit"])))
        positional: list[str] = []
        for p in (p for p in params if p.argument):
            if p.nargs == -1:
                positional += [value(p) for _ in range(draw(st.integers(0, 3)))]
            # now and then a required argument is missing
            elif (p.required or draw(st.booleans())) and draw(st.integers(0, 12)) > 0:
                positional.append(value(p))
        order = draw(st.sampled_from(["options-first", "args-first", "separator"]))
        if order == "args-first":
            rest = positional + tokens
        elif order == "separator":
            rest = tokens + (["--"] if positional else []) + positional
        else:
            rest = tokens + positional
        root: list[str] = []
        if draw(st.integers(0, 20)) > 0:
            root += ["--vault", str(ws.vault)]
        else:
            root += ["--vault", draw(st.sampled_from(ws.inputs + ["nowhere"]))]
        for opt in draw(st.lists(st.sampled_from(ROOT_OPTIONS), max_size=2, unique=True)):
            root += [opt, draw(st.one_of(st.sampled_from(IDENTITY_VALUES), TEXT))]
        if draw(st.booleans()):
            root.append("-q")
        stdin = draw(
            st.one_of(
                st.just(b""),
                st.binary(max_size=64),
                TEXT.map(lambda s: argv_safe(s).encode("utf-8")),
                st.sampled_from([b"y\n", b"n\n", b"\xff\xfe not utf-8"]),
            )
        )
        argv = [argv_safe(a) for a in [*root, *command.split(), *rest]]
        may_prompt = command == "forget" and "--purge" in argv and not ({"--yes", "-y"} & set(argv))
        return Call(argv, stdin, command, json_flag, may_prompt)

    return one()


# --- running a call and checking what the user sees ---------------------------------------


@dataclass
class Outcome:
    code: int
    out: str
    err: str


@contextlib.contextmanager
def _streams(stdin: bytes) -> Iterator[tuple[io.TextIOWrapper, io.TextIOWrapper]]:
    saved = sys.stdin, sys.stdout, sys.stderr
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", write_through=True)
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout, sys.stderr = out, err
    try:
        yield out, err
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


def invoke(argv: list[str], stdin: bytes = b"") -> Outcome:
    """``memvault.cli.main(argv)`` with its own stdin/stdout/stderr; an escaping exception fails."""
    from memvault.cli import main

    with _streams(stdin) as (out, err):
        try:
            code = main(list(argv))
        except BaseException as exc:  # noqa: BLE001 - anything escaping main() is the finding
            if isinstance(exc, KeyboardInterrupt):
                raise
            code = -1
            print(f"UNCAUGHT {type(exc).__name__}: {exc}", file=sys.stderr)
        out.flush()
        err.flush()
        return Outcome(
            code, out.buffer.getvalue().decode("utf-8"), err.buffer.getvalue().decode("utf-8")
        )  # type: ignore[attr-defined]


def _crash_details(err: str) -> str:
    match = re.search(r"details in (\S+\.log)", err)
    if match and Path(match.group(1)).exists():
        return Path(match.group(1)).read_text(encoding="utf-8")[-3000:]
    return ""


def check_outcome(call: Call, res: Outcome) -> None:
    """The properties every single call must have (raises AssertionError)."""
    where = f"{call!r}\nexit {res.code}\nstdout: {res.out[-500:]!r}\nstderr: {res.err[-1500:]!r}"
    allowed = {0, 1, 2} | ({130} if call.may_prompt else set())
    assert res.code in allowed, f"{where}\n{_crash_details(res.err)}"
    assert "Traceback" not in res.err, where
    lines = [line for line in res.err.splitlines() if line.strip()]
    if res.code == 1 and call.command not in REPORTING_COMMANDS:
        assert len(lines) == 1 and lines[0].startswith("Error: "), (
            f"expected one error line\n{where}"
        )
    if res.code == 1:
        assert (res.out + res.err).strip(), f"exit 1 without a word\n{where}"
    if res.code == 2:
        assert any("Error" in line for line in lines), f"usage error without a message\n{where}"
    if res.code == 0 and call.json_flag:
        try:
            json.loads(res.out)
        except ValueError as exc:
            raise AssertionError(f"--json output does not parse: {exc}\n{where}") from None


def doctor_problems(vault: Path) -> list[str]:
    res = invoke(["--vault", str(vault), "doctor", "--json"])
    assert res.code in (0, 1), f"doctor exit {res.code}: {res.err}"
    return [p["text"] for p in json.loads(res.out)["problems"]]


def vault_invariants(vault: Path) -> None:
    """After any sequence of commands: git is sound, nothing half-done, doctor is happy."""
    fsck = subprocess.run(
        ["git", "fsck", "--no-progress"], cwd=vault, capture_output=True, text=True, check=False
    )
    assert fsck.returncode == 0, f"git fsck: {fsck.stdout}{fsck.stderr}"
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=vault,
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    assert status.strip() == "", f"uncommitted changes left behind:\n{status}"
    assert not (vault / ".git" / "index.lock").exists(), "git index.lock left behind"
    problems = doctor_problems(vault)
    assert not problems, f"doctor: {problems}"


def fuzz_cli(
    ws: Workspace,
    commands: tuple[str, ...],
    max_examples: int,
    stats: dict[str, int] | None = None,
    **overrides: typing.Any,
) -> None:
    """Run the CLI property over ``commands`` (used by the tests and by bench/fuzz.py)."""

    @settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
        **overrides,
    )
    @given(batch=st.lists(calls(ws, commands), min_size=1, max_size=3))
    def prop(batch: list[Call]) -> None:
        for call in batch:
            note(repr(call))
            # Relative paths in the argv ('init .', '--output out.jsonl') resolve here: never
            # anywhere but the workspace (a bench run once initialised a vault in the checkout).
            if Path.cwd().resolve() != ws.scratch.resolve():
                raise RuntimeError(f"fuzzing from {Path.cwd()}, not the workspace {ws.scratch}")
            res = invoke(call.argv, call.stdin)
            if stats is not None:
                stats[f"{call.command} exit {res.code}"] = (
                    stats.get(f"{call.command} exit {res.code}", 0) + 1
                )
            check_outcome(call, res)
        vault_invariants(ws.vault)

    saved = Path.cwd()
    os.chdir(ws.scratch)
    try:
        prop()
    finally:
        os.chdir(saved)


# --- the tests ----------------------------------------------------------------------------

EXAMPLES = int(os.environ.get("MEMVAULT_FUZZ_EXAMPLES", "15"))


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    workspace = Workspace.create(tmp_path)
    monkeypatch.chdir(workspace.scratch)
    return workspace


def test_every_command_is_fuzzed_or_excused() -> None:
    table = command_table()
    assert set(table) - set(READ_COMMANDS) - set(WRITE_COMMANDS) - set(NOT_FUZZED) == set()
    assert set(READ_COMMANDS) | set(WRITE_COMMANDS) <= set(table), (
        "a fuzzed command no longer exists"
    )
    # the generator sees real options: a sample
    assert {"--limit", "-n"} <= {o for p in table["recall"] for o in p.opts}
    assert {p.kind for p in table["context"] if p.name == "budget"} == {"int"}


def test_fuzz_read_commands(ws: Workspace) -> None:
    stats: dict[str, int] = {}
    fuzz_cli(ws, READ_COMMANDS, EXAMPLES, stats)
    # not a vacuous run: some calls got through to the commands and some were refused
    codes = {key.rsplit(" ", 1)[1] for key in stats}
    assert "0" in codes and codes & {"1", "2"}, stats


def test_fuzz_write_commands(ws: Workspace) -> None:
    stats: dict[str, int] = {}
    fuzz_cli(ws, WRITE_COMMANDS, EXAMPLES, stats)
    codes = {key.rsplit(" ", 1)[1] for key in stats}
    assert "0" in codes and codes & {"1", "2"}, stats


def test_checks_catch_a_crash(ws: Workspace) -> None:
    """The harness itself: an internal error (exit 3) and a traceback are caught."""
    call = Call(["--vault", str(ws.vault), "recall", "x"], b"", "recall", False, False)
    with pytest.raises(AssertionError):
        check_outcome(
            call, Outcome(3, "", "Error: internal error (KeyError: 'x'); details in /nowhere.log\n")
        )
    with pytest.raises(AssertionError):
        check_outcome(call, Outcome(1, "", "Error: one\nError: two\n"))
    with pytest.raises(AssertionError):
        check_outcome(Call(call.argv, b"", "list", True, False), Outcome(0, "not json", ""))
    (ws.vault / "semantic" / "facts" / "stray.md").write_text(
        "---\nid: stray\n---\n", encoding="utf-8"
    )
    with pytest.raises(AssertionError):
        vault_invariants(ws.vault)


def test_undecodable_argv_from_a_real_process(tmp_path: Path) -> None:
    """The real console script: bytes that aren't UTF-8 in argv reach no traceback."""
    root = Vault.init(tmp_path / "v").root
    exe = Path(sys.executable).parent / "memvault"
    cmd = [os.fsencode(str(exe)) if exe.exists() else os.fsencode(sys.executable)]
    if not exe.exists():
        cmd += [b"-m", b"memvault"]
    for args in ([b"recall", b"caf\xe9 \xff"], [b"add", b"fact", b"bad \xed\xa0\x80 bytes \xff"]):
        proc = subprocess.run(
            [*cmd, b"--vault", os.fsencode(str(root)), *args],
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode in (0, 1), (args, proc.returncode, proc.stderr)
        assert b"Traceback" not in proc.stderr
    vault_invariants(root)


# Regressions: each of these was found by the fuzzers here (fixed in c46953a).


def test_import_of_a_folder_is_a_one_line_error(ws: Workspace) -> None:
    res = invoke(["--vault", str(ws.vault), "import", str(ws.scratch / "adir")])
    assert res.code == 1, res.err


def test_export_to_a_folder_is_a_one_line_error(ws: Workspace) -> None:
    res = invoke(["--vault", str(ws.vault), "export", "--output", str(ws.scratch / "adir")])
    assert res.code == 1, res.err


def test_ingest_hook_with_bytes_that_are_not_utf8(ws: Workspace) -> None:
    # A strict stdin, as Python gives under e.g. en_US.UTF-8 (C.UTF-8 gives surrogateescape).
    # A hook never blocks its client: exit 0, and one line saying what was not saved and why.
    res = invoke(["--vault", str(ws.vault), "ingest", "--hook"], stdin=b"\x96")
    assert res.code == 0, res.err
    assert res.err.count("\n") == 1 and "not saved" in res.err and "not UTF-8" in res.err


def test_ingest_hook_failure_with_json_prints_json(ws: Workspace) -> None:
    res = invoke(["--vault", str(ws.vault), "ingest", "--hook", "--json"], stdin=b"{}")
    assert res.code == 0, res.err
    assert json.loads(res.out)["saved"] is False
    assert "not saved" in res.err and res.err.count("\n") == 1


def test_forget_leaves_no_dangling_related_link(ws: Workspace) -> None:
    # friday-deploy links to deploy-window; forgetting deploy-window must not break doctor.
    assert (
        invoke(["--vault", str(ws.vault), "forget", "deploy-window", "--reason", "test"]).code == 0
    )
    res = invoke(["--vault", str(ws.vault), "doctor", "--json"])
    assert json.loads(res.out)["problems"] == []


# --- the parser on arbitrary text ---------------------------------------------------------
# tests/test_files.py checks render/parse round-trips of valid memories; here the input is
# anything at all, built from the pieces front matter is made of.

YAML_BITS = st.sampled_from(
    [
        "---",
        "---\n",
        "...",
        "id: x",
        "id: fuzz",
        "type: semantic",
        "type: episodic",
        "type: [a",
        "tags: [a, b]",
        "tags: a",
        "importance: 9",
        "importance: 3",
        "created: 2026-02-30",
        "created: 2026-01-31T10:00:00Z",
        "a: &a [x, x]",
        "b: [*a, *a]",
        "*a",
        "&a",
        "!!python/object:os.system",
        "!!binary aGk=",
        "? complex",
        "- item",
        "key: |",
        "  block",
        "key: >-",
        "x: {a: {b: {c: [1, [2, [3]]]}}}",
        "[" * 60,
        "]" * 60,
        "{" * 40,
        "id: ../../etc",
        "id: A",
        "steps: 3",
        "content: hi",
        "\t",
        " ",
        "#",
        "# comment",
        ":",
        "'",
        '"',
        "\ufeff",
        "\r",
        "\x00",
        "\x85",
        "\u2028",
        "é",
        "🙂",
        "%YAML 1.1",
        "%TAG ! tag:x:",
        "<<: *a",
        "null",
        "~",
        "id: 0o17",
        "id: 1e3",
        "id: yes",
        "valid_to: 1900-01-01",
        "scope: self",
        "agent: [a]",
        "related: x",
    ]
)
DOCUMENT = st.one_of(
    st.lists(YAML_BITS, max_size=14).map("\n".join),
    st.lists(st.one_of(YAML_BITS, st.text(max_size=12)), max_size=10).map(
        lambda parts: "---\n" + "\n".join(parts)
    ),
    st.text(max_size=200),
)
PARSE_PATHS = st.sampled_from(
    ["semantic/facts/x.md", "procedural/workflows/x.yaml", "episodic/2026/01/x.md", "inbox/x.yml"]
)


def parse_property(
    text: str, path: str, parse: typing.Callable[[str, str], typing.Any] = parse_text
) -> None:
    """Any text: a document or a ValidationError naming the file, never another exception."""
    try:
        doc = parse(text, path)
    except ValidationError as exc:
        assert exc.path == path and str(exc).startswith(path), repr(exc)
        return
    try:
        memory = check_text(text, path)
    except ValidationError as exc:
        assert str(exc).startswith(path), repr(exc)
        return
    except MemvaultError:
        return
    assert memory.id == doc.meta["id"]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=DOCUMENT, path=PARSE_PATHS)
def test_parser_takes_anything(text: str, path: str) -> None:
    parse_property(text, path)


# ruamel's constructors raise ValueError/KeyError for scalars that look typed but aren't;
# one such hand-edited file used to make every command exit 3 (found by atheris).
@pytest.mark.parametrize(
    "value", ["2026-02-30", "2026-13-01", "-_", "0x_", "._", "!!int x", "!!bool x"]
)
def test_scalars_yaml_cannot_construct_are_validation_errors(value: str) -> None:
    with pytest.raises(ValidationError):
        parse_text(f"---\nid: x\ntype: semantic\ncreated: {value}\n---\n", "semantic/facts/x.md")


def test_parse_property_is_not_vacuous() -> None:
    parse_property("---\nid: ok\ntype: semantic\n---\nfine\n", "semantic/facts/ok.md")
    parse_property("no front matter", "semantic/facts/x.md")

    def wrong_file(text: str, path: str) -> None:
        raise ValidationError("boom", "elsewhere.md")

    def bug(text: str, path: str) -> None:
        raise KeyError("x")

    with pytest.raises(AssertionError):
        parse_property("x", "semantic/facts/x.md", wrong_file)
    with pytest.raises(KeyError):
        parse_property("x", "semantic/facts/x.md", bug)
