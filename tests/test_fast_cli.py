"""The fast way in for ``add``/``log``/``show`` and the searches (cli/fast.py), and the cheap
write path under it.

The fast parser must accept exactly the options the Typer commands declare, write the
same thing, and hand anything unusual to Typer. The write path under it skips the full
catalog scan and ``git commit --only``; these tests hold it to the same guarantees.
"""

from __future__ import annotations

import enum
import json
import subprocess
import sys
from pathlib import Path

import pytest

from memvault import SCOPES, Vault
from memvault.errors import DuplicateIdError

from helpers import commit_count, git, is_clean, last_message


def _kind(param) -> str:
    # typer 0.29 describes a parameter by its Python annotation
    annotation = param.type_descriptor.annotation
    if annotation is bool or getattr(param, "is_flag", False):
        return "flag"
    if param.multiple or getattr(annotation, "__origin__", None) is list:
        return "list"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "str"  # a choice: the table's str option with choices
    return {int: "int", float: "float", Path: "path", str: "str"}[annotation]


def _typer_table(params) -> dict[str, tuple[str, str]]:
    table = {}
    for param in params:
        if param.param_type_name == "option" and param.name != "help":
            for opt in [*param.opts, *param.secondary_opts]:
                table[opt] = (param.name, _kind(param))
    return table


def _table(command) -> dict[str, tuple[str, str]]:
    return {flag: (option.name, option.kind) for flag, option in command.lookup().items()}


def test_the_typer_commands_have_the_options_of_the_table():
    import typer

    from memvault.cli import app, options

    group = typer.main.get_command(app)
    assert _typer_table(group.params) == _table(options.GLOBAL)
    for command in options.FAST_COMMANDS.values():
        params = group.commands[command.name].params
        assert _typer_table(params) == _table(command)
        arguments = [p.name for p in params if p.param_type_name == "argument"]
        assert arguments == [a.name for a in command.arguments]
    kinds = group.commands["add"].params[0].type_descriptor.annotation
    assert tuple(k.value for k in kinds) == options.KINDS
    for name in ("add", "log", "search"):  # --scope lists the scopes (a usage error otherwise)
        scope = next(p for p in group.commands[name].params if p.name == "scope")
        assert tuple(k.value for k in scope.type_descriptor.annotation) == SCOPES


SAME_CALL = [
    "add fact x",
    "add episode -- '-starts with a dash'",
    "-q --vault /v --agent a --team t --role r add procedure Release --step one --step=two"
    " --tag a,b --trigger rel -i 4 -s team --json",
    "add episode - --outcome failure --session s1 --valid-from 2026-01-01 --valid-to 7d"
    " --related x --related y --channel c --author me --source s -c incidents --decay slow"
    " --confidence high --subject a.b -m why --id e1 -t T -f some/file --allow-secrets"
    " --importance=2",
    "log --session s1 hello",
    "log -S s1 -r assistant --rating helpful --file f.txt --json --allow-secrets",
    "show x",
    "show x --raw --json",
    "-V /v show -- -x",
    "recall 'what is x'",
    "--role r recall x --role assistant --speaker 'Ana Lima' -k fact -n 3 --type semantic"
    " -c facts --tag a,b --tag c --scope team --by-agent bot --since 7d --until 2026-01-02"
    " --as-of 2026-01-01 --include-archive --include-superseded --include-inbox --explain"
    " --order time --json",
    "fact 'api limit' --limit=2 --include-superseded",
    "procedure release -n 1 --category workflows --include-inbox",
    "search postgres --kind semantic --explain",
    "context 'migrate billing' -b 800 --scope team --json",
    "context x",
    "validate 'we deploy on fridays'",
    "validate x --as-of 2026-01-01 --scope team --tag a --explain --no-judge --json",
    "validate x --judge",
    "episodes",
    "episodes --last 5 --no-transcripts --json",
    "episodes -n 3 --transcripts",
]


@pytest.mark.parametrize("line", SAME_CALL)
def test_the_fast_parser_and_typer_make_the_same_call(line, monkeypatch):
    import inspect
    import shlex

    from memvault.cli import _run_typer, actions, fast, search_actions
    from memvault.cli.common import state

    calls = []
    modules = {"add": actions, "log": actions, "show": actions, "episodes": actions}
    modules.update(
        dict.fromkeys(
            ("recall", "fact", "procedure", "search", "context", "validate"), search_actions
        )
    )

    def recorder(name):
        signature = inspect.signature(getattr(modules[name], name))

        def record(*args, **kwargs):
            # every parameter is required: a name missing on either side fails here
            arguments = dict(signature.bind(*args, **kwargs).arguments)
            globals_ = (state.vault, state.agent, state.team, state.role, state.quiet)
            calls.append((name, arguments, globals_))

        return record

    for name, module in modules.items():
        monkeypatch.setattr(module, name, recorder(name))
    argv = shlex.split(line)
    run = fast.parse(argv)
    assert run is not None
    run()
    assert _run_typer(argv) == 0
    assert len(calls) == 2
    assert calls[0] == calls[1]


@pytest.mark.parametrize(
    "argv",
    [
        ["add", "fact", "x", "--bogus"],
        ["add", "fact", "x", "--importance", "abc"],
        ["add", "fact", "x", "--help"],
        ["add", "thought", "x"],
        ["add", "fact", "x", "y", "z"],
        ["add", "fact", "x", "-tx"],
        ["log", "hello"],  # --session is required
        ["--quiet=1", "add", "fact", "x"],
        ["show"],
        ["show", "a", "b"],
        ["show", "a", "--bogus"],
        ["recall"],  # the query is required
        ["recall", "x", "--limit", "many"],
        ["recall", "x", "--limit", "2", "--limit", "3"],
        ["recall", "x", "--explain=yes"],
        ["fact", "x", "--order", "time"],  # recall's option, not fact's
        ["context", "x", "--budget"],
        ["episodes", "--last", "0"],  # below the range: Typer says which range
        ["episodes", "--no-transcripts=1"],
        ["episodes", "extra"],
        ["validate"],  # the statement is required
        ["validate", "x", "--judge=no"],
    ],
)
def test_unusual_command_lines_go_to_typer(argv):
    from memvault.cli import fast

    assert fast.parse(argv) is None


def test_plain_command_lines_take_the_fast_path():
    from memvault.cli import fast

    assert fast.parse(
        ["-q", "--vault", "/v", "add", "fact", "x", "--tag", "a", "--tag=b", "-i", "4", "--json"]
    )
    assert fast.parse(["add", "episode", "--", "-starts with a dash"])
    assert fast.parse(["log", "--session", "s1", "-r", "assistant", "hello"])
    assert fast.parse(["--vault", "/v", "recall", "what is x", "-n", "3", "--json"])
    assert fast.parse(["context", "x", "--budget", "200"])


def _meta(vault_root: Path, rel: str) -> dict:
    from memvault.store.files import load_document

    meta = dict(load_document(vault_root / rel, rel).meta)
    for key in ("created", "valid_from"):
        meta.pop(key, None)
    return meta


def test_fast_and_typer_paths_write_the_same(tmp_path, cli):
    from memvault.cli import _run_typer

    a, b = Vault.init(tmp_path / "a"), Vault.init(tmp_path / "b")
    args = [
        "add",
        "procedure",
        "Release the app",
        "--step",
        "Run tests",
        "--step",
        "Tag",
        "--tag",
        "ops,release",
        "--trigger",
        "release",
        "-i",
        "4",
        "--scope",
        "team",
        "--json",
    ]
    fast = cli("--vault", a.root, *args)
    assert fast.code == 0, fast.err
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert _run_typer(["--vault", str(b.root), *args]) == 0
    one, two = fast.json(), json.loads(out.getvalue())
    for key in ("created", "commit"):
        one.pop(key), two.pop(key)
    assert one == two
    assert _meta(a.root, one["path"]) == _meta(b.root, two["path"])
    assert last_message(a.root) == last_message(b.root)


def test_recall_does_not_load_typer(vault_path, cli):
    """``recall --json`` answers without typer, click, pydantic or rich, and prints what the
    Typer command prints."""
    from memvault.cli import _run_typer

    vault = Vault.open(vault_path)
    vault.add("semantic", "The cache TTL is 5 minutes", tags=["cache"])
    vault.recall("cache")  # builds the index in this process
    code = (
        "import json, sys\n"
        "from memvault.cli import main\n"
        f"code = main(['--vault', {str(vault_path)!r}, 'recall', 'cache ttl', '--json'])\n"
        "print(json.dumps([code, sorted(sys.modules)]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    fast_out, last = proc.stdout.splitlines()[:-1], proc.stdout.splitlines()[-1]
    code, modules = json.loads(last)
    assert code == 0
    heavy = {"typer", "click", "rich", "pydantic"}
    assert sorted(heavy & {m.split(".")[0] for m in modules}) == []
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert _run_typer(["--vault", str(vault_path), "recall", "cache ttl", "--json"]) == 0
    fast_hits, typer_hits = (
        json.loads("\n".join(fast_out))["hits"],
        json.loads(out.getvalue())["hits"],
    )
    assert [h["id"] for h in fast_hits] == [h["id"] for h in typer_hits]
    assert fast_hits[0]["id"] == "the-cache-ttl-is-5-minutes"
    # as a process of its own, which ends without the interpreter's teardown: the whole
    # answer is printed and the read is in the access log
    log = vault_path / ".memvault" / "access.log"
    before = log.read_text(encoding="utf-8").count('"q":"ttl of the cache"')
    cmd = [sys.executable, "-m", "memvault", "--vault", str(vault_path), "recall"]
    proc = subprocess.run([*cmd, "ttl of the cache", "--json"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["hits"][0]["id"] == "the-cache-ttl-is-5-minutes"
    assert log.read_text(encoding="utf-8").count('"q":"ttl of the cache"') == before + 1


def test_a_search_command_leaves_no_early_git_status_behind(vault_path, monkeypatch):
    """The ``git status`` a search command begins early is the command's own: whether or not
    the search took it, none is left for a later command of the same process to read."""
    import io

    from memvault.cli import main
    from memvault.store.git import early as early_status

    monkeypatch.setattr("sys.stdout", io.StringIO())
    for argv in (["recall", "cache ttl", "--json"], ["context", "cache", "--json"]):
        assert main(["--vault", str(vault_path), *argv]) == 0
        assert early_status._early == {}
    assert main(["--vault", str(vault_path), "recall", "  ", "--json"]) == 1  # empty query
    assert early_status._early == {}


def test_add_does_not_load_typer_or_yaml(vault_path):
    code = (
        "import json, sys\n"
        "from memvault.cli import main\n"
        f"code = main(['--vault', {str(vault_path)!r}, '-q', 'add', 'fact', "
        "'The cache TTL is 5 minutes', '--tag', 'cache'])\n"
        "print(json.dumps([code, sorted(sys.modules)]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    code, modules = json.loads(proc.stdout.splitlines()[-1])
    assert code == 0
    heavy = {
        "typer",
        "click",
        "rich",
        "pydantic",
        "ruamel",
        "dataclasses",
        "git",
        "chromadb",
        "numpy",
        "tempfile",
    }
    assert sorted(heavy & {m.split(".")[0] for m in modules}) == []
    assert Vault.open(vault_path).get("the-cache-ttl-is-5-minutes").tags == ["cache"]


def test_staged_changes_of_the_user_stay_out_of_memvault_commits(vault):
    root = vault.root
    first = vault.add("semantic", "Postgres is the primary database").memory
    # the user stages a hand edit, a new file and a deletion, and does not commit them
    (root / first.path).write_text((root / first.path).read_text() + "\nHand note.\n")
    (root / "semantic/facts/hand-written.md").write_text(
        "---\nid: hand-written\ntype: semantic\n---\nMine\n"
    )
    git(root, "add", first.path, "semantic/facts/hand-written.md")
    before = commit_count(root)
    result = vault.add("semantic", "Redis holds the sessions")
    assert commit_count(root) == before + 1
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == [result.memory.path]
    staged = git(root, "diff", "--cached", "--name-only").split()
    assert sorted(staged) == sorted([first.path, "semantic/facts/hand-written.md"])


def test_a_memory_file_created_by_hand_is_seen_by_the_next_add(vault):
    root = vault.root
    vault.add("semantic", "Warm the catalog")  # the catalog knows every folder now
    (root / "semantic/decisions").mkdir(parents=True, exist_ok=True)
    (root / "semantic/decisions/use-postgres.md").write_text(
        "---\nid: use-postgres\ntype: semantic\ncategory: decisions\n---\nWe use Postgres.\n"
    )
    with pytest.raises(DuplicateIdError):
        vault.add("semantic", "Something else", id="use-postgres")
    # a slug that collides with the hand-made id gets a suffix instead
    assert vault.add("semantic", "Use Postgres").memory.id == "use-postgres-2"


def test_a_file_deleted_by_hand_frees_its_id(vault):
    root = vault.root
    m = vault.add("semantic", "Temporary fact", id="temp-fact").memory
    (root / m.path).unlink()
    assert vault.add("semantic", "Temporary fact again", id="temp-fact").memory.id == "temp-fact"


def _hook(path: Path, marker: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho ran >> '{marker}'\n")
    path.chmod(0o755)


def test_a_post_commit_hook_still_runs_after_memvault_commits(vault, tmp_path):
    marker = tmp_path / "ran.txt"
    _hook(vault.root / ".git/hooks/post-commit", marker)
    vault.add("semantic", "Hooks see plumbing commits")
    vault.add("semantic", "And the next one")
    assert marker.read_text().count("ran") == 2


def test_hooks_in_core_hookspath_run_too(vault, tmp_path):
    marker = tmp_path / "ran.txt"
    _hook(tmp_path / "myhooks/post-commit", marker)
    git(vault.root, "config", "core.hooksPath", str(tmp_path / "myhooks"))
    vault.add("semantic", "A commit through git commit itself")
    assert marker.read_text().count("ran") == 1


def test_commit_messages_are_cleaned_like_git_commit_m(vault):
    from memvault.store.git import ops as gitstore

    raw = "\n\nsubject line   \n\n\n\nbody  with spaces \n\n"
    root = vault.root
    (root / "semantic/facts").mkdir(parents=True, exist_ok=True)
    (root / "semantic/facts/a.md").write_text("---\nid: a\ntype: semantic\n---\nA\n")
    gitstore.commit(root, raw, vault.core.git_identity, add=["semantic/facts/a.md"])
    ours = git(root, "cat-file", "commit", "HEAD").split("\n\n", 1)[1]
    (root / "semantic/facts/b.md").write_text("---\nid: b\ntype: semantic\n---\nB\n")
    git(root, "add", "semantic/facts/b.md")
    git(root, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", raw)
    theirs = git(root, "cat-file", "commit", "HEAD").split("\n\n", 1)[1]
    assert ours == theirs == "subject line\n\nbody  with spaces\n"


def test_a_commit_that_changes_nothing_makes_no_commit(vault):
    from memvault.store.git import ops as gitstore

    m = vault.add("semantic", "Unchanged").memory
    before = commit_count(vault.root)
    assert gitstore.commit(vault.root, "no-op", vault.core.git_identity, add=[m.path]) is None
    assert commit_count(vault.root) == before


def test_show_sees_hand_edits_and_hand_made_duplicates(vault):
    root = vault.root
    m = vault.add("semantic", "First words", id="hand-edited").memory
    assert vault.get("hand-edited").content.startswith("First words")
    path = root / m.path
    path.write_text(path.read_text().replace("First words", "Second words"))
    assert vault.get("hand-edited").content.startswith("Second words")
    # a copy made by hand under another folder: both files claim the id
    (root / "semantic/decisions").mkdir(parents=True, exist_ok=True)
    (root / "semantic/decisions/copy.md").write_text(path.read_text())
    with pytest.raises(DuplicateIdError):
        vault.get("hand-edited")
    # its id changed in place by hand: no longer a duplicate
    copy = root / "semantic/decisions/copy.md"
    copy.write_text(copy.read_text().replace("id: hand-edited", "id: the-copy"))
    assert vault.get("hand-edited").path == m.path


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\nid: plain-id\ntype: semantic\n---\nbody\n", "plain-id"),
        ("\ufeff---\r\nid: 'quoted-id'\r\ntype: semantic\r\n---\r\n", "quoted-id"),
        ('---\ntype: semantic\nid: "late-id"\n---\nid: not-this-one\n', "late-id"),
        ("---\nid: a\nid: b\n---\n", None),  # twice: let the parser complain
        ("---\nid: Not_An_Id\n---\n", None),
        ("---\nid: >-\n  folded\n---\n", None),
        ("no front matter\nid: x\n", None),
        ("---\nid: never-closed\n", None),
    ],
)
def test_peek_id_reads_only_what_is_obvious(tmp_path, text, expected):
    from memvault.store.catalog import _peek_id

    path = tmp_path / "m.md"
    path.write_text(text, newline="")
    assert _peek_id(path) == expected


def test_quick_sync_does_not_import_yaml_for_a_plain_new_file(vault_path, tmp_path):
    code = (
        "import json, sys\n"
        "from pathlib import Path\n"
        "from memvault.vault import Vault\n"
        f"v = Vault.open({str(vault_path)!r})\n"
        "v.add('semantic', 'Warm up')\n"
        "Path(v.root, 'semantic/facts/by-hand.md')"
        ".write_text('---\\nid: by-hand\\ntype: semantic\\n---\\nHi\\n')\n"
        "taken = v.core._id_taken('by-hand')\n"
        "print(json.dumps([taken, 'ruamel' in sys.modules]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout.splitlines()[-1]) == [False, False]  # not seen yet: no sync ran
    # A vault of its own: in this one the warm-up fact would now look for facts it replaces,
    # which reads every file as it is (the hand-written one above with a YAML parser).
    other = Vault.init(tmp_path / "other").root
    code2 = code.replace(
        "taken = v.core._id_taken('by-hand')",
        "v.core.catalog.quick_sync(); taken = v.core._id_taken('by-hand')",
    ).replace(str(vault_path), str(other))
    code2 = code2.replace("by-hand", "by-hand-2")
    proc = subprocess.run([sys.executable, "-c", code2], capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout.splitlines()[-1]) == [True, False]
    # and a full read parses it for real
    assert Vault.open(other).get("by-hand-2").content.startswith("Hi")


def test_readding_a_file_the_user_deleted_in_a_commit_is_committed(vault):
    root = vault.root
    m = vault.add("semantic", "Comes back", id="comes-back").memory
    text = (root / m.path).read_text()
    git(root, "rm", "-q", m.path)
    git(root, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "-m", "user removes it")
    before = commit_count(root)
    # the same bytes again: the tree equals memvault's last one, yet HEAD lacks the file
    (root / m.path).parent.mkdir(parents=True, exist_ok=True)
    (root / m.path).write_text(text)  # so the write itself changes no bytes
    with vault.locked():
        sha = vault.core.commit_files({m.path: text}, "memvault: restore comes-back")
    assert sha is not None and commit_count(root) == before + 1
    assert m.path in git(root, "ls-files")
    assert is_clean(root)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_quick_sync_keeps_up_with_any_mix_of_writes_and_hand_changes(vault, seed):
    """After each step, the catalog (as quick_sync sees it) holds exactly the files there are."""
    import random
    import sqlite3

    rng = random.Random(seed)
    root = vault.root
    hand = 0
    for step in range(40):
        op = rng.choice(
            ["add", "add", "hand-create", "hand-delete", "hand-rename", "forget", "scan"]
        )
        files = sorted(p.relative_to(root).as_posix() for p in (root / "semantic").rglob("*.md"))
        if op == "add":
            vault.add(
                "semantic", f"Fact number {step} about {rng.choice(['cats', 'dogs', 'deploys'])}"
            )
        elif op == "hand-create":
            hand += 1
            folder = root / "semantic" / rng.choice(["facts", "decisions", "new-folder"])
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"hand-{seed}-{hand}.md").write_text(
                f"---\nid: hand-{seed}-{hand}\ntype: semantic\n---\nHi\n"
            )
        elif op == "hand-delete" and files:
            (root / rng.choice(files)).unlink()
        elif op == "hand-rename" and files:
            src = root / rng.choice(files)
            src.rename(src.with_name(f"renamed-{step}.md"))
        elif op == "forget" and files:
            ids = [
                e for e in (vault.core.catalog.entry(f) for f in files) if e is not None and e.id
            ]
            if ids:
                # Ids here are unique (hand-made ones are numbered): forget must succeed and
                # take the file away, one renamed by hand included.
                gone = rng.choice(ids)
                vault.forget(gone.id, reason="test")
                assert not (root / gone.path).exists(), (step, gone.path)
                assert gone.path not in git(root, "ls-files"), (step, gone.path)
        elif op == "scan":
            vault.core.scan()
        vault.core.catalog.quick_sync()
        on_disk = {
            p.relative_to(root).as_posix()
            for p in root.rglob("*.md")
            if p.relative_to(root).parts[0]
            in ("semantic", "episodic", "procedural", "archive", "inbox")
        }
        conn = sqlite3.connect(vault.core.catalog.db_path)
        cataloged = {row[0] for row in conn.execute("SELECT path FROM files")}
        conn.close()
        assert cataloged == on_disk, (step, op)


def test_a_file_staged_by_the_user_during_a_write_stays_out_of_its_commit(vault, monkeypatch):
    """The commit holds what memvault staged, whatever the user stages meanwhile."""
    from memvault.store.git import ops as gitstore

    root = vault.root
    vault.add("semantic", "First, so the vault has history")
    (root / "user.txt").write_text("mine\n")
    real = gitstore.start_git

    class StagingMeanwhile:
        def __init__(self, r, args, **kw):
            self.root, self.args, self.running = r, args, real(r, args, **kw)

        def wait(self):
            out = self.running.wait()
            if self.args[0] == "update-index":  # the user's git add lands just after ours
                gitstore.run_git(self.root, ["add", "user.txt"])
            return out

    monkeypatch.setattr(gitstore, "start_git", StagingMeanwhile)
    m = vault.add("semantic", "Written while the user stages").memory
    assert git(root, "show", "--name-only", "--format=", "HEAD").split() == [m.path]
    assert git(root, "diff", "--cached", "--name-only").split() == ["user.txt"]


def test_a_file_name_that_is_not_utf8_does_not_break_commands(vault, cli):
    import os

    vault.add("semantic", "A normal fact", id="normal-fact")
    folder = os.fsencode(vault.root / "semantic" / "facts")
    with open(os.path.join(folder, b"caf\xe9.md"), "wb") as handle:
        handle.write(b"---\nid: cafe\ntype: semantic\n---\nx\n")
    assert cli("--vault", vault.root, "show", "normal-fact").code == 0
    assert cli("--vault", vault.root, "add", "fact", "Another one").code == 0
    assert cli("--vault", vault.root, "list", "--json").code == 0


def test_an_id_edited_in_place_is_found_and_not_reused(vault):
    root = vault.root
    m = vault.add("semantic", "Foo one", id="foo-one").memory
    vault.get("foo-one")  # the catalog knows it as foo-one
    path = root / m.path
    path.write_text(path.read_text().replace("id: foo-one", "id: bar-xyz"))
    assert vault.get("bar-xyz").path == m.path
    with pytest.raises(DuplicateIdError):
        vault.add("semantic", "A different fact", id="bar-xyz")
