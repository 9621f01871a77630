"""Redact, don't drop: a credential-looking span is replaced by a marker on every capture
path (``log``, ``log_turn``, ``add`` of a memory that merely holds one; ingest in
tests/test_ingest.py, MCP ``log_turn`` in tests/test_mcp.py) and the rest is kept;
``--allow-secrets`` keeps the text; a memory that is little but a credential is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memvault import SecretDetectedError, Vault
from memvault.security import find_secrets
from memvault.transcripts import parse_turns

from helpers import git

CONN = "mongodb://appuser:s3cretPass@localhost:27017/blog"
TURN = f'Configure it with app.config["MONGO_URI"] = "{CONN}" and restart the server.'


def test_a_logged_turn_with_a_connection_string_is_kept_redacted(
    vault: Vault,
    cli,
    chdir,  # type: ignore[no-untyped-def]
) -> None:
    chdir(vault.root)
    res = cli("log", "--session", "flask-app", "--role", "assistant", TURN)
    assert res.code == 0, res.err
    transcript = vault.get("session-flask-app")
    [turn] = parse_turns(transcript.content)
    assert turn.text == (
        'Configure it with app.config["MONGO_URI"] = "[secret redacted: password in URL]'
        'localhost:27017/blog" and restart the server.'
    )
    notes = [line for line in res.err.splitlines() if "redacted" in line]
    assert notes == [
        f"note: {transcript.path}: redacted 1 secret-looking span(s) in 1 turn(s) (1 password"
        " in URL); the turns are kept (--allow-secrets keeps the text as it is)"
    ]
    assert "s3cretPass" not in git(vault.root, "log", "--all", "-p")
    # --json says the same in "notes"
    res = cli("log", "--session", "flask-app", "--json", "the admin URL is " + CONN)
    assert res.code == 0 and json.loads(res.out)["notes"][0].endswith("the turns are kept")
    # --allow-secrets keeps the text as it is
    assert cli("log", "--session", "verbatim", "--allow-secrets", TURN).code == 0
    assert CONN in vault.get("session-verbatim").content


def test_log_through_the_api_redacts_every_turn_and_says_so(vault: Vault) -> None:
    key = "AKIAABCDEFGHIJKLMNOP"
    result = vault.log_many(
        "keys",
        [
            ("user", f"Is {key} the right key for the staging bucket?", None, None, None),
            ("assistant", "Yes, but rotate it: it was pasted in chat.", None, None, None),
        ],
    )
    turns = parse_turns(result.memory.content)
    assert [t.text for t in turns] == [
        "Is [secret redacted: AWS access key] the right key for the staging bucket?",
        "Yes, but rotate it: it was pasted in chat.",
    ]
    assert result.redacted == 1 and len(result.notes) == 1
    assert key not in git(vault.root, "log", "--all", "-p")
    # the rated-turn path too (MCP log_turn's)
    rated = vault.log_turn("keys", f"Use {CONN}", query=f"the URI is {CONN}?")
    assert CONN not in rated.memory.content and rated.redacted == 2


def test_add_redacts_a_memory_that_merely_holds_a_credential(vault: Vault) -> None:
    text = (
        "The blog app reads its database from MONGO_URI; in development it was "
        f"{CONN}, which must move to the environment before the launch."
    )
    result = vault.add("semantic", text, title="Where the blog reads its database")
    assert "s3cretPass" not in result.memory.content
    assert "[secret redacted: password in URL]localhost:27017/blog" in result.memory.content
    assert result.notes == (
        f"{result.memory.path}: redacted 1 secret-looking span(s) (1 password in URL); "
        "the rest of the memory is kept",
    )
    assert "s3cretPass" not in git(vault.root, "log", "--all", "-p")
    # the id is made from the redacted text
    titled = vault.add("episodic", f"Rotated {CONN} after the leak was found in the demo repo")
    assert "s3cret" not in titled.memory.id and "s3cret" not in titled.memory.path


@pytest.mark.parametrize(
    "text",
    [
        "AKIAABCDEFGHIJKLMNOP",
        "the key is AKIAABCDEFGHIJKLMNOP",
        f"db: {CONN}",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5J\n-----END RSA PRIVATE KEY-----",
    ],
)
def test_a_memory_that_is_a_credential_is_still_refused(vault: Vault, text: str) -> None:
    head = git(vault.root, "rev-parse", "HEAD")
    with pytest.raises(SecretDetectedError, match="refused"):
        vault.add("semantic", text)
    assert git(vault.root, "rev-parse", "HEAD") == head
    kept = vault.add("semantic", text, allow_secrets=True)
    assert text.strip() in kept.memory.content and not kept.notes


def test_a_private_key_is_redacted_whole(vault: Vault) -> None:
    body = "MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB"
    block = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"
    cut = f"-----BEGIN PRIVATE KEY-----\n{body}\n{body}"  # pasted without its END line
    for i, key in enumerate((block, cut)):
        turn = vault.log(f"k{i}", "user", f"Here is the deploy key:\n{key}\nIs it the right one?")
        content = turn.memory.content
        assert body not in content and "[secret redacted: private key]" in content
        assert "Is it the right one?" in content
    assert find_secrets(block)[0].kind == "private key"


def test_front_matter_values_are_still_refused(vault: Vault) -> None:
    with pytest.raises(SecretDetectedError):
        vault.add("semantic", "Where the blog's database lives, for the team", source=CONN)


def test_redaction_keeps_ingested_notes_neutral_for_every_door(
    vault: Vault, tmp_path: Path
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"role": "user", "content": TURN}) + "\n")
    report = vault.ingest(path)
    assert report.redacted_kinds == {"password in URL": 1}
    assert report.as_dict()["redacted_kinds"] == {"password in URL": 1}
    assert "--allow-secrets" not in " ".join(report.notes)
