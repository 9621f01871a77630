"""Agent hooks: ``memvault context --hook`` answers Claude Code's UserPromptSubmit and
SessionStart hooks from their JSON on stdin, and injects nothing when nothing is relevant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault import Vault
from memvault.agent_hooks import project_question, question
from memvault.errors import MemvaultError

from helpers import git


@pytest.fixture
def stocked(vault: Vault) -> Vault:
    vault.add("semantic", "The billing service deploys to production every Tuesday.")
    vault.add("semantic", "Invoices are rendered with WeasyPrint from Jinja templates.")
    return vault


def hook(cli, vault: Vault, payload: object, *extra: str):  # type: ignore[no-untyped-def]
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return cli("--vault", vault.root, "-q", "context", "--hook", *extra, stdin=text)


def test_a_prompt_gets_its_memory_as_additional_context(cli, stocked: Vault) -> None:  # type: ignore[no-untyped-def]
    got = hook(
        cli,
        stocked,
        {"hook_event_name": "UserPromptSubmit", "prompt": "which day does billing deploy?"},
        "--min-score",
        "0",
    )
    assert got.code == 0, got.err
    out = json.loads(got.out)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert "every Tuesday" in out["additionalContext"]


def test_an_unrelated_prompt_injects_nothing(cli, stocked: Vault) -> None:  # type: ignore[no-untyped-def]
    payload = {"hook_event_name": "UserPromptSubmit", "prompt": "zzzqqq blorf wibble"}
    got = hook(cli, stocked, payload, "--min-score", "0.9")
    assert got.code == 0 and got.out == "", got.out
    floorless = hook(cli, stocked, payload, "--min-score", "0")
    # without the floor the fake embedder's noise is injected: the floor is what kept it out
    assert "hookSpecificOutput" in floorless.out


@pytest.mark.parametrize(
    "stdin",
    ["not json", '["a list"]', '{"hook_event_name": "Stop"}', '{"prompt": 7}'],
)
def test_bad_hook_input_never_blocks_the_prompt(cli, stocked: Vault, stdin: str) -> None:  # type: ignore[no-untyped-def]
    got = hook(cli, stocked, stdin)
    assert got.code == 0 and got.out == ""
    assert got.err.startswith("memvault: no context injected: <stdin>")


def test_session_start_asks_about_the_project_not_its_folder_name(
    cli,
    stocked: Vault,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    project = tmp_path / "-weird-name"  # a leading "-" once broke the hook's command line
    project.mkdir()
    (project / "README.md").write_text("# Billing service\n\nInvoices and payments.\n")
    git(project, "init", "-q")
    git(project, "remote", "add", "origin", "git@example.com:acme/invoice-renderer.git")
    assert question({"hook_event_name": "SessionStart", "cwd": str(project)}) == (
        "SessionStart",
        "Billing service invoice renderer",
    )
    got = hook(
        cli, stocked, {"hook_event_name": "SessionStart", "cwd": str(project)}, "--min-score", "0"
    )
    assert got.code == 0, got.err
    out = json.loads(got.out)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart" and "billing" in out["additionalContext"].lower()


def test_project_question_uses_recent_files_and_falls_back_to_the_folder(tmp_path: Path) -> None:
    bare = tmp_path / "plain-folder"
    bare.mkdir()
    assert project_question(bare) == "plain-folder"
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    for name in ("rate_limiter.py", "rate_limiter.py", "tenant-quota.md"):
        (repo / name).write_text(name + str(len(list(repo.iterdir()))))
        git(repo, "add", ".")
        git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    words = project_question(repo)
    assert words.startswith("rate limiter") and "tenant quota" in words


def test_a_prompt_without_text_is_an_error_naming_the_key() -> None:
    with pytest.raises(MemvaultError, match=r"<stdin>: prompt: expected the prompt's text"):
        question({"hook_event_name": "UserPromptSubmit"})


def test_install_puts_team_and_role_into_the_hooks_environment(
    cli,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    Vault.init(tmp_path / "memory")
    res = cli(
        "--vault", tmp_path / "memory", "--agent", "claude-code", "--team", "web",
        "--role", "lead", "integrations", "install", "claude-code", "--dir", project,
    )  # fmt: skip
    assert res.code == 0, res.err
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["env"]["MEMVAULT_TEAM"] == "web"
    assert settings["env"]["MEMVAULT_ROLE"] == "lead"
    prompt_hooks = settings["hooks"]["UserPromptSubmit"][0]["hooks"]
    assert prompt_hooks[0]["command"].endswith("memvault -q context --hook --budget 600 || true")
