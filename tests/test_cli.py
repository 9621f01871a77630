"""The command line, in-process through ``memvault.cli.main`` (fast) and a few real runs of
the ``memvault`` console script. Every test checks effects: the files, the commits."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memvault import Vault
from memvault.store.files import parse_text
from memvault.transcripts import parse_turns

from helpers import (
    Result,
    commit_count,
    fact_text,
    git,
    is_clean,
    last_message,
    run_memvault,
    write,
)

Cli = Callable[..., Result]
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def v(vault: Vault) -> Path:
    return vault.root


def ok(result: Result) -> Result:
    assert result.code == 0, f"exit {result.code}\nstdout: {result.out}\nstderr: {result.err}"
    return result


def one_line_error(result: Result, code: int = 1) -> str:
    assert result.code == code, f"exit {result.code}: {result.err}"
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1, result.err
    assert "Traceback" not in result.err
    return lines[0]


# --- init ----------------------------------------------------------------------------------


def test_init(cli: Cli, tmp_path: Path) -> None:
    target = tmp_path / "mem"
    ok(cli("init", target))
    vault = Vault.open(target)
    assert commit_count(target) == 1 and is_clean(target)
    assert (target / ".memvault/config.yaml").exists() and (target / "README.md").exists()
    assert ".memvault/index" in (target / ".gitignore").read_text()
    assert vault.all_memories() == []
    line = one_line_error(cli("init", target))
    assert "already exists" in line and str(target.name) in line
    assert commit_count(target) == 1


def test_init_examples(cli: Cli, tmp_path: Path) -> None:
    target = tmp_path / "mem"
    ok(cli("init", target, "--examples"))
    listed = ok(cli("--vault", target, "list", "--json")).json()
    assert {m["type"] for m in listed} == {"episodic", "semantic", "procedural"}
    assert ok(cli("--vault", target, "doctor")).code == 0


def test_init_in_current_folder(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    ok(cli("init"))
    assert (tmp_path / ".memvault").is_dir()
    ok(cli("add", "fact", "found by walking up"))
    monkeypatch.chdir(tmp_path / "semantic")
    assert [m["id"] for m in ok(cli("list", "--json")).json()] == ["found-by-walking-up"]


# --- add ------------------------------------------------------------------------------------


def test_add_fact_with_options(cli: Cli, v: Path) -> None:
    before = commit_count(v)
    r = ok(
        cli(
            "--vault",
            v,
            "add",
            "fact",
            "We use PostgreSQL 16 for every service",
            "--category",
            "decisions",
            "--subject",
            "storage.db",
            "--tag",
            "db",
            "--tag",
            "infra,postgres",
            "--importance",
            "5",
            "--confidence",
            "high",
            "--source",
            "https://wiki/adr-7",
            "--valid-from",
            "2024-05-01",
            "--related",
            "other-thing",
            "--channel",
            "slack:#arch",
            "-m",
            "decided in the architecture review",
        )
    )
    mid, rel = r.out.strip().split("\t")
    assert rel == f"semantic/decisions/{mid}.md" and mid == "we-use-postgresql-16-for-every-service"
    assert commit_count(v) == before + 1
    msg = last_message(v)
    assert msg.startswith(f"memvault: add semantic {mid}") and "architecture review" in msg
    meta = parse_text((v / rel).read_text(), rel).meta
    assert meta["subject"] == "storage.db" and meta["tags"] == ["db", "infra", "postgres"]
    assert meta["importance"] == 5 and meta["confidence"] == "high"
    assert meta["source"] == "https://wiki/adr-7" and meta["related"] == ["other-thing"]
    assert meta["valid_from"] == "2024-05-01T00:00:00Z" and meta["channel"] == "slack:#arch"
    assert is_clean(v)


def test_add_tags_with_colons_and_urls(cli: Cli, v: Path) -> None:
    r = ok(
        cli(
            "--vault",
            v,
            "add",
            "fact",
            "Tagged oddly",
            "--tag",
            "lang:python",
            "--tag",
            "c++",
            "--tag",
            "10:30",
            "--source",
            "https://example.com/a?b=c#d",
            "--json",
        )
    )
    data = r.json()
    assert data["tags"] == ["lang:python", "c++", "10:30"]
    meta = parse_text((v / data["path"]).read_text(), data["path"]).meta
    assert (
        meta["tags"] == ["lang:python", "c++", "10:30"]
        and meta["source"] == "https://example.com/a?b=c#d"
    )


def test_add_episode(cli: Cli, v: Path) -> None:
    r = ok(
        cli(
            "--vault",
            v,
            "add",
            "episode",
            "Deploy failed: migrations locked the users table",
            "--outcome",
            "failure",
            "--session",
            "s-42",
            "--title",
            "Failed deploy",
            "--decay",
            "fast",
            "--json",
        )
    )
    data = r.json()
    assert data["type"] == "episodic" and data["outcome"] == "failure" and data["session"] == "s-42"
    assert data["path"].startswith("episodic/") and data["path"].endswith("-failed-deploy.md")
    assert data["commit"] == git(v, "rev-parse", "HEAD").strip()
    assert (v / data["path"]).exists()
    assert "Failed deploy" in last_message(v)


def test_add_procedure(cli: Cli, v: Path) -> None:
    r = ok(
        cli(
            "--vault",
            v,
            "add",
            "procedure",
            "Roll back a failed deploy",
            "--step",
            "Revert the release tag",
            "--step",
            "Redeploy the previous tag",
            "--trigger",
            "rollback",
            "--trigger",
            "revert",
            "--category",
            "workflows",
        )
    )
    _, rel = r.out.strip().split("\t")
    assert rel == "procedural/workflows/roll-back-a-failed-deploy.md"
    meta = parse_text((v / rel).read_text(), rel).meta
    assert meta["steps"] == ["Revert the release tag", "Redeploy the previous tag"]
    assert meta["trigger"] == ["rollback", "revert"]
    assert last_message(v).startswith("memvault: add procedural roll-back-a-failed-deploy")


def test_add_from_stdin_and_file(cli: Cli, v: Path, tmp_path: Path) -> None:
    r = ok(
        cli(
            "--vault",
            v,
            "add",
            "episode",
            "--title",
            "Postmortem",
            stdin="Long text\nsecond line\n",
        )
    )
    _, rel = r.out.strip().split("\t")
    assert Vault.open(v).get(rel.rsplit("/", 1)[1][:-3]).content == "Long text\nsecond line\n"
    r = ok(cli("--vault", v, "add", "fact", "-", stdin="From a dash"))
    assert "from-a-dash" in r.out
    notes = tmp_path / "note.md"
    notes.write_text("Read from a file\n", encoding="utf-8")
    r = ok(cli("--vault", v, "add", "fact", "--file", notes))
    assert "read-from-a-file" in r.out
    bad = one_line_error(cli("--vault", v, "add", "fact", stdin=b"\xff\xfe not utf-8"))
    assert "UTF-8" in bad
    missing = one_line_error(cli("--vault", v, "add", "fact", "--file", tmp_path / "nope.md"))
    assert "nope.md" in missing
    assert commit_count(v) == 4


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--importance", "9"], "importance: expected 1-5, got 9"),
        (["--decay", "sometimes"], "decay"),
        (["--valid-from", "last tuesday"], "valid_from"),
        (["--id", "../../x"], "id"),
        (["--scope", "self"], "agent"),
    ],
)
def test_add_bad_options_exit_1_and_write_nothing(
    cli: Cli, v: Path, args: list[str], needle: str
) -> None:
    before = commit_count(v)
    line = one_line_error(cli("--vault", v, "add", "fact", "text", *args))
    assert line.startswith("Error: ") and needle in line
    assert commit_count(v) == before and is_clean(v)


def test_add_secret_is_refused(cli: Cli, v: Path) -> None:
    line = one_line_error(cli("--vault", v, "add", "fact", "deploy key AKIAABCDEFGHIJKLMNOP"))
    assert "AWS" in line and "--allow-secrets" in line
    ok(cli("--vault", v, "add", "fact", "example AKIAABCDEFGHIJKLMNOP", "--allow-secrets"))


def test_usage_errors_exit_2(cli: Cli, v: Path) -> None:
    r = cli("--vault", v, "add", "opinion", "x")
    assert r.code == 2 and "Traceback" not in r.err
    assert cli("--vault", v, "list", "--no-such-option").code == 2
    assert cli("--vault", v, "forget", "x").code == 2  # --reason is required


@pytest.mark.parametrize(
    "command",
    [
        ["add", "fact", "text"],
        ["log", "-S", "s", "text"],
        ["search", "x"],
        ["pause"],
        ["resume"],
        ["rescope", "some-id"],
        ["ingest", "chat.jsonl"],
    ],
)
def test_an_unknown_scope_is_a_usage_error_listing_the_scopes(
    cli: Cli, v: Path, command: list[str]
) -> None:
    before = commit_count(v)
    r = cli("--vault", v, *command, "--scope", "everyone")
    assert r.code == 2 and "Traceback" not in r.err, r.err
    assert "'everyone' is not one of 'self', 'team', 'global'" in r.err
    assert commit_count(v) == before and is_clean(v)


def test_not_a_vault(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    line = one_line_error(cli("list"))
    assert "memvault init" in line
    line = one_line_error(cli("--vault", tmp_path / "nope", "list"))
    assert "nope" in line


# --- log ------------------------------------------------------------------------------------


def test_log_turns(cli: Cli, v: Path) -> None:
    ok(
        cli(
            "--vault", v, "log", "--session", "chat-1", "--role", "user", "Why did the deploy fail?"
        )
    )
    r = ok(
        cli(
            "--vault",
            v,
            "log",
            "--session",
            "chat-1",
            "--role",
            "assistant",
            "--rating",
            "helpful",
            "--json",
            "Migrations.",
        )
    )
    data = r.json()
    assert data["id"] == "session-chat-1" and data["category"] == "transcript"
    ok(cli("--vault", v, "log", "-S", "chat-1", stdin="From stdin"))
    transcripts = list((v / "episodic").rglob("session-chat-1.md"))
    assert len(transcripts) == 1
    turns = parse_turns(Vault.open(v).get("session-chat-1").content)
    assert [(t.role, t.text) for t in turns] == [
        ("user", "Why did the deploy fail?"),
        ("assistant", "Migrations."),
        ("user", "From stdin"),
    ]
    assert "rating: helpful" in turns[1].extra
    assert last_message(v) == "memvault: log 1 turn(s) to session chat-1"
    assert cli("--vault", v, "log", "--session", "x", "--role", "robot", "hi").code == 1


# --- contradiction ---------------------------------------------------------------------------


def test_contradiction_by_subject(cli: Cli, v: Path) -> None:
    old = ok(
        cli(
            "--vault",
            v,
            "add",
            "fact",
            "Staging DB is db-stg-1",
            "--subject",
            "staging.db",
            "--valid-from",
            "2024-01-01",
        )
    )
    old_id, old_rel = old.out.strip().split("\t")
    before = commit_count(v)
    new = ok(cli("--vault", v, "add", "fact", "Staging DB is db-stg-2", "--subject", "staging.db"))
    new_id, new_rel = new.out.strip().split("\t")
    assert "supersedes " + old_id in new.err
    assert commit_count(v) == before + 1
    assert sorted(git(v, "show", "--name-only", "--format=", "HEAD").split()) == sorted(
        [old_rel, new_rel]
    )
    old_meta = parse_text((v / old_rel).read_text(), old_rel).meta
    assert (
        old_meta["status"] == "superseded"
        and old_meta["superseded_by"] == new_id
        and "valid_to" in old_meta
    )
    assert parse_text((v / new_rel).read_text(), new_rel).meta["supersedes"] == old_id
    active = ok(cli("--vault", v, "list", "--json")).json()
    assert [m["id"] for m in active] == [new_id]
    everything = ok(cli("--vault", v, "list", "--status", "any", "--json")).json()
    assert {m["id"] for m in everything} == {old_id, new_id}
    # an older fact arrives late: it goes straight into history
    late = ok(
        cli(
            "--vault",
            v,
            "add",
            "fact",
            "Staging DB was db-stg-0",
            "--subject",
            "staging.db",
            "--valid-from",
            "2020-01-01",
            "--json",
        )
    ).json()
    assert late["status"] == "superseded" and late["superseded_by"] in (old_id, new_id)
    assert [m["id"] for m in ok(cli("--vault", v, "list", "--json")).json()] == [new_id]


# --- forget ------------------------------------------------------------------------------------


def test_forget(cli: Cli, v: Path) -> None:
    mid, rel = ok(cli("--vault", v, "add", "fact", "Something wrong")).out.strip().split("\t")
    r = ok(cli("--vault", v, "forget", mid, "--reason", "it was wrong"))
    assert mid in r.out
    assert not (v / rel).exists()
    assert last_message(v).startswith(f"memvault: forget {mid}: it was wrong")
    assert is_clean(v)
    line = one_line_error(cli("--vault", v, "forget", mid, "--reason", "again"))
    assert mid in line


# --- edit ---------------------------------------------------------------------------------------

EDITOR_SCRIPT = """
import pathlib, sys
mode, path = sys.argv[1], pathlib.Path(sys.argv[2])
text = path.read_bytes().decode("utf-8")  # keep CRLF as a real editor would
if mode == "valid":
    nl = "\\r\\n" if "\\r\\n" in text else "\\n"
    text = text.replace("importance: 3", "importance: 4") + "Added by hand." + nl
elif mode == "invalid":
    text = text.replace("importance: 3", "importance: 9")
elif mode == "binary":
    path.write_bytes(b"\\xff\\xfe\\x00 not text")
    sys.exit(0)
elif mode == "fail":
    sys.exit(5)
path.write_bytes(text.encode("utf-8"))
"""


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    script = tmp_path / "fake_editor.py"
    script.write_text(EDITOR_SCRIPT)
    # The text being edited goes to a temp file, kept when the edit fails: in this test's
    # folder, not the machine's /tmp.
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))

    def use(mode: str) -> None:
        monkeypatch.setenv("EDITOR", f"{sys.executable} {script} {mode}")

    yield use


def test_edit_valid_is_committed(cli: Cli, v: Path, editor: Callable[[str], None]) -> None:
    mid, rel = ok(cli("--vault", v, "add", "fact", "Edit me")).out.strip().split("\t")
    editor("valid")
    before = commit_count(v)
    ok(cli("--vault", v, "edit", mid, "-m", "fix importance"))
    assert commit_count(v) == before + 1
    assert last_message(v) == f"memvault: edit {mid}: fix importance"
    memory = Vault.open(v).get(mid)
    assert memory.importance == 4 and memory.content.endswith("Added by hand.\n")
    assert is_clean(v)


def test_edit_invalid_changes_nothing_and_keeps_the_temp_file(
    cli: Cli, v: Path, editor: Callable[[str], None]
) -> None:
    mid, rel = ok(cli("--vault", v, "add", "fact", "Edit me badly")).out.strip().split("\t")
    before_bytes = (v / rel).read_bytes()
    before = commit_count(v)
    editor("invalid")
    line = one_line_error(cli("--vault", v, "edit", mid))
    assert "importance" in line and rel in line
    assert (v / rel).read_bytes() == before_bytes and commit_count(v) == before
    kept = Path(line.split("your edit is in ")[1].rstrip(")"))
    assert kept.exists() and "importance: 9" in kept.read_text()
    kept.unlink()


def test_edit_keeps_crlf_and_bom(cli: Cli, v: Path, editor: Callable[[str], None]) -> None:
    rel = "semantic/facts/crlf.md"
    text = (
        "\ufeff---\r\nid: crlf\r\ntype: semantic\r\nimportance: 3  # keep\r\n---\r\n\r\nBody.\r\n"
    )
    write(v, rel, text)
    assert ok(cli("--vault", v, "show", "crlf", "--raw")).out == text
    editor("valid")
    ok(cli("--vault", v, "edit", "crlf"))
    after = (v / rel).read_bytes().decode("utf-8")
    assert after.startswith(
        "\ufeff---\r\nid: crlf\r\ntype: semantic\r\nimportance: 4  # keep\r\n---\r\n\r\nBody.\r\n"
    )


def test_edit_saving_non_utf8_is_an_expected_error(
    cli: Cli, v: Path, editor: Callable[[str], None]
) -> None:
    mid, rel = ok(cli("--vault", v, "add", "fact", "Binary edit")).out.strip().split("\t")
    before = (v / rel).read_bytes()
    editor("binary")
    line = one_line_error(cli("--vault", v, "edit", mid))
    assert "UTF-8" in line
    assert (v / rel).read_bytes() == before


def test_edit_editor_failure_and_no_change(
    cli: Cli, v: Path, editor: Callable[[str], None]
) -> None:
    mid, rel = ok(cli("--vault", v, "add", "fact", "Leave me")).out.strip().split("\t")
    before = commit_count(v)
    editor("fail")
    line = one_line_error(cli("--vault", v, "edit", mid))
    kept = Path(line.split("your text: ")[1].split(")")[0])
    assert kept.read_text(encoding="utf-8") == (v / rel).read_text(encoding="utf-8")
    editor("noop")
    ok(cli("--vault", v, "edit", mid))
    assert commit_count(v) == before


# --- reads with --json ----------------------------------------------------------------------------


@pytest.fixture
def filled(cli: Cli, v: Path) -> Path:
    ok(
        cli(
            "--vault",
            v,
            "add",
            "fact",
            "The API rate limit is 100 req/s",
            "--subject",
            "api.rate",
            "--tag",
            "api",
        )
    )
    ok(
        cli(
            "--vault",
            v,
            "add",
            "fact",
            "We chose Postgres",
            "--category",
            "decisions",
            "--tag",
            "db",
        )
    )
    ok(cli("--vault", v, "add", "episode", "Deploy went fine", "--outcome", "success"))
    ok(cli("--vault", v, "add", "episode", "Deploy failed", "--outcome", "failure"))
    ok(cli("--vault", v, "add", "procedure", "Release", "--step", "Tag", "--trigger", "release"))
    return v


def test_show(cli: Cli, filled: Path) -> None:
    data = ok(cli("--vault", filled, "show", "we-chose-postgres", "--json")).json()
    assert data["id"] == "we-chose-postgres" and data["category"] == "decisions"
    assert (
        data["content"] == "We chose Postgres\n"
        and data["path"] == "semantic/decisions/we-chose-postgres.md"
    )
    raw = ok(cli("--vault", filled, "show", "we-chose-postgres", "--raw")).out
    assert raw == (filled / data["path"]).read_text()
    human = ok(cli("--vault", filled, "show", "we-chose-postgres")).out
    assert "We chose Postgres" in human and "semantic/decisions" in human
    line = one_line_error(cli("--vault", filled, "show", "nope"))
    assert "nope" in line


def test_list_filters(cli: Cli, filled: Path) -> None:
    everything = ok(cli("--vault", filled, "list", "--json")).json()
    assert len(everything) == 5
    assert all("content" not in m for m in everything)

    def ids(*a: str) -> list[str]:
        return sorted(m["id"] for m in ok(cli("--vault", filled, "list", *a, "--json")).json())

    assert ids("--type", "semantic") == ["the-api-rate-limit-is-100-req-s", "we-chose-postgres"]
    assert ids("--category", "decisions") == ["we-chose-postgres"]
    assert ids("--tag", "api") == ["the-api-rate-limit-is-100-req-s"]
    assert ids("--type", "procedural") == ["release"]
    assert ids("--since", "1d") == sorted(m["id"] for m in everything)
    assert ids("--until", "2000-01-01") == []
    assert len(ok(cli("--vault", filled, "list", "--limit", "2", "--json")).json()) == 2
    table = ok(cli("--vault", filled, "list")).out
    assert "we-chose-postgres" in table
    assert one_line_error(cli("--vault", filled, "list", "--since", "whenever"))


def test_episodes_stats_history(cli: Cli, filled: Path) -> None:
    eps = ok(cli("--vault", filled, "episodes", "--last", "1", "--json")).json()
    assert len(eps) == 1 and eps[0]["type"] == "episodic"
    assert len(ok(cli("--vault", filled, "episodes", "--json")).json()) == 2
    stats = ok(cli("--vault", filled, "stats", "--json")).json()
    assert stats["total"] == 5
    assert stats["by_type"] == {"semantic": 2, "episodic": 2, "procedural": 1}
    assert stats["by_category"]["semantic/decisions"] == 1
    assert stats["archive"] == 0 and stats["inbox"] == 0 and stats["oldest"] and stats["newest"]
    assert "memories: 5" in ok(cli("--vault", filled, "stats")).out
    ok(cli("--vault", filled, "add", "fact", "Limit is 200 req/s", "--subject", "api.rate"))
    hist = ok(cli("--vault", filled, "history", "the-api-rate-limit-is-100-req-s", "--json")).json()
    assert len(hist) == 2
    assert hist[0]["message"].startswith("memvault: add semantic limit-is-200-req-s")
    assert hist[1]["message"].startswith("memvault: add semantic the-api-rate-limit-is-100-req-s")
    assert all(h["author"] == "memvault <memvault@localhost>" for h in hist)


def test_doctor_and_check_clean(cli: Cli, filled: Path) -> None:
    report = ok(cli("--vault", filled, "doctor", "--json")).json()
    assert report["problems"] == [] and report["checked"] == 5
    assert ok(cli("--vault", filled, "check", "--json")).json() == []
    assert (
        ok(cli("--vault", filled, "check", filled / "semantic/decisions/we-chose-postgres.md")).code
        == 0
    )


def test_doctor_notes_merge_rules_an_older_vault_lacks(cli: Cli, filled: Path) -> None:
    report = ok(cli("--vault", filled, "doctor", "--json")).json()
    assert not any(".gitattributes" in n for n in report["notes"])
    attributes = filled / ".gitattributes"
    kept = [
        line
        for line in attributes.read_text(encoding="utf-8").splitlines()
        if "usage.jsonl" not in line
    ]
    attributes.write_text("\n".join(kept) + "\n", encoding="utf-8")
    report = ok(cli("--vault", filled, "doctor", "--json")).json()
    (note,) = [n for n in report["notes"] if ".gitattributes" in n]
    assert "'.memvault/usage.jsonl merge=memvault'" in note and report["problems"] == []


def test_doctor_finds_dangling_links_and_stray_files(cli: Cli, filled: Path) -> None:
    write(filled, "semantic/facts/linker.md", fact_text("linker", related="[no-such-memory]"))
    write(filled, "stray.md", fact_text("stray"))
    write(filled, "semantic/facts/wrong-tree.md", "---\nid: wrong-tree\ntype: procedural\n---\n")
    r = cli("--vault", filled, "doctor", "--json")
    assert r.code == 1
    problems = {p["path"]: p for p in r.json()["problems"]}
    assert problems["semantic/facts/linker.md"]["key"] == "related"
    assert "no-such-memory" in problems["semantic/facts/linker.md"]["message"]
    assert "stray.md" in problems
    assert problems["semantic/facts/wrong-tree.md"]["key"] == "type"


# --- export / import ------------------------------------------------------------------------------


def memory_files(root: Path) -> dict[str, bytes]:
    out = {}
    for tree in ("episodic", "semantic", "procedural", "archive", "inbox"):
        for p in sorted((root / tree).rglob("*")):
            if p.is_file() and p.name != ".gitkeep":
                out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def test_export_jsonl_import_round_trips_byte_identical(
    cli: Cli, filled: Path, tmp_path: Path
) -> None:
    # a hand-written file with comments, CRLF and a BOM must come back byte for byte
    hand = (
        "\ufeff---\r\n# by hand\r\ntype: semantic\r\nid: hand-made\r\n"
        "\r\ntags: [x]\r\n---\r\n\r\nBody.\r\n"
    )
    write(filled, "semantic/facts/hand-made.md", hand)
    write(
        filled,
        "procedural/patterns/yaml-one.yaml",
        "id: yaml-one\ntype: procedural\ncategory: patterns\ncontent: |\n  A yaml memory.\n",
    )
    ok(cli("--vault", filled, "log", "--session", "s1", "hello"))
    out = tmp_path / "backup.jsonl"
    ok(cli("--vault", filled, "export", "-o", out))
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 8
    records = [json.loads(line) for line in lines]
    assert all({"id", "type", "path", "raw", "content"} <= set(r) for r in records)
    stdout = ok(cli("--vault", filled, "export")).out
    assert stdout == out.read_text(encoding="utf-8")

    fresh = tmp_path / "fresh"
    ok(cli("init", fresh))
    before = commit_count(fresh)
    report = ok(cli("--vault", fresh, "import", out, "--json")).json()
    assert report["added"] == 8 and report["skipped"] == 0 and report["problems"] == []
    assert commit_count(fresh) == before + 1
    assert last_message(fresh).startswith("memvault: import 8 memories")
    assert memory_files(fresh) == memory_files(filled)
    # importing again adds nothing
    again = ok(cli("--vault", fresh, "import", out, "--json")).json()
    assert again["added"] == 0 and again["skipped"] == 8
    assert commit_count(fresh) == before + 1


def test_export_markdown_bundle_round_trips(cli: Cli, filled: Path, tmp_path: Path) -> None:
    out = tmp_path / "bundle.md"
    ok(cli("--vault", filled, "export", "--format", "markdown", "-o", out))
    assert out.read_text().startswith("# memvault export")
    fresh = tmp_path / "fresh"
    ok(cli("init", fresh))
    report = ok(cli("--vault", fresh, "import", out, "--json")).json()
    assert report["added"] == 5
    assert memory_files(fresh) == memory_files(filled)


SEED_EPISODES = """\
episodes:
  - id: "ep_2025-12-28_001"
    timestamp: "2025-12-28T14:30:00Z"
    session_id: "sess_abc123"
    type: "decision"
    context:
      query: "Should we raise prices?"
      intent: "DECISION"
      squad: ["CRO", "CFO", "Pre-Mortem"]
      urgency: 3
      scope: "medium"
    content:
      summary: "Decided to raise prices by 10% for new customers"
      detail: "Existing customers keep their price for 12 months."
      agents_perspectives:
        CRO: "Revenue up"
        CFO: "Margins up"
    outcome:
      recommendation: "Raise prices for new customers"
      user_action: "accepted"
      result: "success"
      learned: "Grandfathering avoids churn"
    connections:
      related_episodes: ["ep_2025-12-20_004"]
      related_decisions: ["dec_001"]
    metadata:
      importance: 4
      decay_rate: "slow"
      last_accessed: "2025-12-28T14:30:00Z"
      access_count: 1
  - id: "ep_2025-12-29_002"
    timestamp: "2025-12-29T09:00:00Z"
    session_id: "sess_def456"
    type: "problem"
    content:
      summary: "Checkout page timed out under load"
    outcome:
      result: "failure"
    metadata:
      importance: 5
      decay_rate: "normal"
"""


def test_import_seed_yaml_episodes(cli: Cli, v: Path, tmp_path: Path) -> None:
    seed = tmp_path / "episodes.yaml"
    seed.write_text(SEED_EPISODES, encoding="utf-8")
    before = commit_count(v)
    report = ok(cli("--vault", v, "import", seed, "--json")).json()
    assert report["added"] == 2 and report["problems"] == []
    assert commit_count(v) == before + 1
    eps = {m["id"]: m for m in ok(cli("--vault", v, "episodes", "--json")).json()}
    first = eps["ep-2025-12-28-001"]
    assert first["path"] == "episodic/2025/12/ep-2025-12-28-001.md"
    assert first["created"] == "2025-12-28T14:30:00Z" and first["session"] == "sess_abc123"
    assert first["importance"] == 4 and first["decay"] == "slow" and first["outcome"] == "success"
    assert first["context"]["squad"] == ["CRO", "CFO", "Pre-Mortem"]
    assert "Decided to raise prices" in first["content"] and "Grandfathering" in first["content"]
    assert first["source"] == {"imported_id": "ep_2025-12-28_001"}
    assert eps["ep-2025-12-29-002"]["outcome"] == "failure"
    assert ok(cli("--vault", v, "doctor")).code == 0
    again = ok(cli("--vault", v, "import", seed, "--json")).json()
    assert again["added"] == 0 and again["skipped"] == 2


def test_import_bad_input(cli: Cli, v: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    good_record = {"id": "fine-one", "type": "semantic", "content": "Fine."}
    bad.write_text(
        "\n".join(
            [
                json.dumps(good_record),
                "{not json",
                json.dumps({"id": "../../x", "type": "semantic", "content": "x"}),
                json.dumps({"id": "no-type", "content": "x"}),
                json.dumps({"id": "bad-imp", "type": "semantic", "importance": 9}),
                json.dumps(
                    {"raw": "---\nid: evil\ntype: semantic\n---\n", "path": "../../evil.md"}
                ),
            ]
        )
        + "\n"
    )
    r = cli("--vault", v, "import", bad, "--json")
    report = r.json()
    assert len(report["problems"]) == 5
    assert all(p.startswith("bad.jsonl:") for p in report["problems"])
    assert report["added"] <= 1
    assert not (v.parent / "evil.md").exists() and not (v.parent.parent / "evil.md").exists()
    assert not list(v.rglob("evil.md"))
    assert one_line_error(cli("--vault", v, "import", tmp_path / "missing.jsonl"))


# --- scopes ---------------------------------------------------------------------------------------


def test_agents_never_see_each_others_self_memories(cli: Cli, v: Path, tmp_path: Path) -> None:
    mine = ok(
        cli(
            "--vault",
            v,
            "--agent",
            "alice",
            "add",
            "fact",
            "Alice private note",
            "--scope",
            "self",
            "--json",
        )
    ).json()
    assert mine["agent"] == "alice" and mine["scope"] == "self"
    ok(cli("--vault", v, "--agent", "alice", "add", "fact", "Shared note"))
    alice = {m["id"] for m in ok(cli("--vault", v, "--agent", "alice", "list", "--json")).json()}
    bob = {m["id"] for m in ok(cli("--vault", v, "--agent", "bob", "list", "--json")).json()}
    assert alice == {mine["id"], "shared-note"} and bob == {"shared-note"}
    assert one_line_error(cli("--vault", v, "--agent", "bob", "show", mine["id"]))
    assert (
        ok(cli("--vault", v, "--agent", "alice", "show", mine["id"], "--json")).json()["id"]
        == mine["id"]
    )
    exported = ok(cli("--vault", v, "--agent", "bob", "export")).out
    assert mine["id"] not in exported and "Alice private note" not in exported
    assert (
        "Alice private note"
        not in ok(cli("--vault", v, "--agent", "bob", "export", "--format", "markdown")).out
    )
    assert mine["id"] not in ok(cli("--vault", v, "--agent", "bob", "episodes", "--json")).out
    assert ok(cli("--vault", v, "--agent", "bob", "stats", "--json")).json()["total"] == 1
    assert one_line_error(cli("--vault", v, "--agent", "bob", "history", mine["id"]))


def test_identity_from_environment(cli: Cli, v: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMVAULT_AGENT", "carol")
    mine = ok(cli("--vault", v, "add", "fact", "Carol's note", "--scope", "self", "--json")).json()
    assert mine["agent"] == "carol" and mine["author"] == "agent:carol"
    monkeypatch.setenv("MEMVAULT_AGENT", "dave")
    assert ok(cli("--vault", v, "list", "--json")).json() == []
    assert (
        len(ok(cli("--vault", v, "--agent", "carol", "list", "--json")).json()) == 1
    )  # flag beats env


def test_global_scope_needs_librarian(cli: Cli, v: Path) -> None:
    r = ok(
        cli(
            "--vault",
            v,
            "--agent",
            "coder",
            "add",
            "fact",
            "Office closes at 6pm",
            "--scope",
            "global",
        )
    )
    mid, rel = r.out.strip().split("\t")
    assert rel.startswith("inbox/semantic/facts/") and "inbox" in r.err
    assert parse_text((v / rel).read_text(), rel).meta["status"] == "proposed"
    assert ok(cli("--vault", v, "list", "--json")).json() == []
    assert [
        m["id"] for m in ok(cli("--vault", v, "list", "--status", "proposed", "--json")).json()
    ] == [mid]
    r = ok(
        cli(
            "--vault",
            v,
            "--agent",
            "lib",
            "--role",
            "librarian",
            "add",
            "fact",
            "Office opens at 8am",
            "--scope",
            "global",
        )
    )
    _, rel = r.out.strip().split("\t")
    assert rel == "semantic/facts/office-opens-at-8am.md"
    assert ok(cli("--vault", v, "stats", "--json")).json()["inbox"] == 1


# --- pause / resume -------------------------------------------------------------------------------


def test_pause_and_resume(cli: Cli, v: Path) -> None:
    ok(cli("--vault", v, "pause", "--scope", "team"))
    assert last_message(v) == "memvault: pause capture for scope team"
    assert Vault.open(v).config.get("paused") == ["team"]
    before = commit_count(v)
    line = one_line_error(cli("--vault", v, "add", "fact", "not now"))
    assert "paused" in line and "resume" in line
    assert one_line_error(cli("--vault", v, "log", "-S", "s", "not now either"))
    assert commit_count(v) == before and is_clean(v)
    ok(cli("--vault", v, "--agent", "a", "add", "fact", "my own scope is open", "--scope", "self"))
    ok(cli("--vault", v, "resume", "--scope", "team"))
    assert Vault.open(v).config.get("paused") == []
    ok(cli("--vault", v, "add", "fact", "back to work"))
    before = commit_count(v)
    for verb in ("pause", "resume"):  # a usage error listing the scopes (exit 2)
        r = cli("--vault", v, verb, "--scope", "everything")
        assert r.code == 2 and "is not one of 'self', 'team', 'global'" in r.err, (verb, r.err)
    resumed = ok(cli("--vault", v, "resume", "--scope", "team"))  # not paused: nothing to do
    assert "was not paused" in resumed.out and commit_count(v) == before


# --- errors at the boundary -----------------------------------------------------------------------


def test_unexpected_exception_exits_3_with_a_crash_log(
    cli: Cli, v: Path, monkeypatch: pytest.MonkeyPatch, cache_dir: Path
) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(Vault, "add", boom)
    r = cli("--vault", v, "add", "fact", "crash please")
    line = one_line_error(r, code=3)
    assert "RuntimeError" in line and "simulated bug" in line
    log = Path(line.rsplit("details in ", 1)[1].strip())
    assert log.exists() and log.parent == cache_dir
    text = log.read_text()
    assert "Traceback" in text and "simulated bug" in text


def test_keyboard_interrupt_exits_130(cli: Cli, v: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Vault, "memories", interrupted)
    assert cli("--vault", v, "list").code == 130


# --- help and docs --------------------------------------------------------------------------------


def _command_paths() -> list[tuple[str, ...]]:
    import typer

    from memvault.cli import app

    root = typer.main.get_command(app)
    paths: list[tuple[str, ...]] = []

    def walk(cmd: object, prefix: tuple[str, ...]) -> None:
        # typer may vendor its own click: duck-type groups instead of isinstance(click.Group)
        commands = getattr(cmd, "commands", None)
        if isinstance(commands, dict):
            for name, sub in sorted(commands.items()):
                if getattr(sub, "hidden", False):
                    continue
                paths.append((*prefix, name))
                walk(sub, (*prefix, name))

    walk(root, ())
    return paths


COMMANDS = _command_paths()


def test_there_are_commands() -> None:
    names = {p[0] for p in COMMANDS}
    assert {
        "init",
        "add",
        "log",
        "forget",
        "edit",
        "show",
        "list",
        "episodes",
        "stats",
        "history",
        "export",
        "import",
        "doctor",
        "check",
        "pause",
        "resume",
    } <= names


def test_top_level_help(cli: Cli) -> None:
    r = ok(cli("--help"))
    assert "Example" in r.out
    for path in COMMANDS:
        if len(path) == 1:
            assert path[0] in r.out


@pytest.mark.parametrize("path", COMMANDS, ids=[" ".join(p) for p in COMMANDS])
def test_every_command_has_help_with_an_example(cli: Cli, path: tuple[str, ...]) -> None:
    r = ok(cli(*path, "--help"))
    assert "Example" in r.out, f"'memvault {' '.join(path)} --help' has no example"
    assert len(r.out.strip().splitlines()) > 3


def test_every_command_is_in_the_readme() -> None:
    readme = ROOT / "README.md"
    if not readme.exists():
        pytest.skip("README.md does not exist yet (the lead is writing it)")
    text = readme.read_text(encoding="utf-8")
    missing = [" ".join(p) for p in COMMANDS if f"memvault {' '.join(p)}" not in text]
    assert missing == [], f"commands missing from README.md: {missing}"


# --- the real console script ----------------------------------------------------------------------


def test_console_script_end_to_end(tmp_path: Path) -> None:
    target = tmp_path / "v"
    r = run_memvault("init", target)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""  # diagnostics go to stderr
    r = run_memvault("add", "fact", "Real process write", "--subject", "e2e", cwd=target)
    assert r.returncode == 0, r.stderr
    mid, rel = r.stdout.strip().split("\t")
    assert (target / rel).exists() and commit_count(target) == 2
    for args in (
        ["list", "--json"],
        ["show", mid, "--json"],
        ["stats", "--json"],
        ["episodes", "--json"],
        ["history", mid, "--json"],
        ["doctor", "--json"],
        ["check", "--json"],
    ):
        r = run_memvault("--vault", target, *args)
        assert r.returncode == 0, (args, r.stderr)
        json.loads(r.stdout)  # stdout is data and nothing else
    r = run_memvault("--vault", target, "show", "no-such-id")
    assert r.returncode == 1 and r.stderr.startswith("Error: ") and "Traceback" not in r.stderr
    r = run_memvault("--vault", target, "list", "--bogus")
    assert r.returncode == 2
    r = run_memvault(
        "--vault", target, "add", "episode", "--title", "Piped", stdin="From a real pipe\n"
    )
    assert r.returncode == 0, r.stderr
    assert "From a real pipe" in Vault.open(target).get(r.stdout.split("\t")[0]).content
    r = run_memvault("--help")
    assert r.returncode == 0 and "Example" in r.stdout
    r = run_memvault("version")
    assert r.returncode == 0 and r.stdout.strip()


def test_python_dash_m(tmp_path: Path) -> None:
    import subprocess

    r = subprocess.run(
        [sys.executable, "-m", "memvault", "--help"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0 and "Usage" in r.stdout


def test_bench_write_runs(tmp_path: Path) -> None:
    """A tiny run of bench/write.py, so the benchmark never rots."""
    import subprocess

    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "write.py"),
            "--n",
            "40",
            "--repeat",
            "1",
            "--json",
            "--dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    # the resident process its adds started is stopped with the run (its pid file goes)
    runtime = Path(os.environ["MEMVAULT_RUNTIME_DIR"])
    deadline = time.monotonic() + 10
    while list(runtime.glob("*.pid")) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not list(runtime.glob("*.pid"))
    data = json.loads(proc.stdout)
    for key in (
        "add_vs_git_ratio",
        "add_median_s",
        "list_median_s",
        "show_median_s",
        "help_median_s",
        "python_pass_median_s",
        "git_median_s",
    ):
        assert isinstance(data[key], float) and data[key] > 0, key
    assert data["n"] == 40


def test_an_error_quoting_control_characters_stays_one_line(vault: Vault) -> None:
    # Found by fuzzing: '\x1e' (and '\n', '\u2028'...) in a quoted value broke the line.
    proc = run_memvault("--vault", vault.root, "consolidate", "--only", "0\x1e0\u2028x")
    assert proc.returncode == 1
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: only: unknown step(s)"), lines
    assert "\\x1e" in lines[0] and "\\u2028" in lines[0]


# --- search output ---------------------------------------------------------------------------


def test_limit_zero_is_an_error_not_the_default(cli: Cli, v: Path) -> None:
    ok(cli("--vault", v, "add", "fact", "The staging database is db-stg-2"))
    for command in ("recall", "search", "fact", "procedure"):
        line = one_line_error(cli("--vault", v, command, "staging", "--limit", "0"))
        assert "limit: expected 1-" in line and "got 0" in line, (command, line)
    hits = ok(cli("--vault", v, "recall", "staging", "--limit", "1", "--json")).json()["hits"]
    assert len(hits) == 1


def test_text_results_do_not_repeat_the_title(cli: Cli, v: Path) -> None:
    text = "Deploy failed: the migration locked the users table"
    ok(cli("--vault", v, "add", "episode", text, "--outcome", "failure"))
    out = ok(cli("--vault", v, "recall", "what happened with the deploy?")).out
    assert out.count("the migration locked the users table") == 1, out
    assert "Outcome: failure" in out


def test_procedure_used_both_spellings_and_ranking_by_success(cli: Cli, v: Path) -> None:
    for pid in ("deploy-a", "deploy-b"):
        ok(
            cli(
                "--vault",
                v,
                "add",
                "procedure",
                "Deploy the web app to production",
                "--id",
                pid,
                "--step",
                "Build the image",
                "--step",
                "Push it",
                "--trigger",
                "deploy",
            )
        )
    for _ in range(3):
        ok(cli("--vault", v, "procedure", "used", "deploy-a", "--outcome", "failure"))
        ok(cli("-q", "--vault", v, "procedure-used", "deploy-b", "--outcome", "success"))
    data = ok(cli("--vault", v, "procedure", "used", "deploy-b", "--outcome", "success", "--json"))
    assert data.json()["times_used"] == 4 and data.json()["success_rate"] == 1.0
    hits = ok(cli("--vault", v, "procedure", "how do I deploy the web app?", "--json")).json()
    assert [h["id"] for h in hits["hits"]][:2] == ["deploy-b", "deploy-a"]
    err = cli("--vault", v, "procedure", "used", "deploy-a", "--outcome", "maybe")
    assert err.code == 2 and "success" in err.err and "failure" in err.err
    # one word after `procedure` is still a search
    ok(cli("--vault", v, "procedure", "used", "--json"))
