"""Purge by content from the inspector, over real HTTP to a real server: a librarian's
action only (others are refused at every step), behind the CSRF token and the origin check
like every other action, with a preview (files, turns, commits), a typed confirmation and a
reason; the text travels only in form bodies, and once purged neither recall nor any commit
of any ref holds it. The same flow in chromium is in test_ui_browser.py."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ui_support
from ui_support import Running

from memvault import Vault
from memvault.paths import PURGE_LOG
from memvault.transcripts import parse_turns

from helpers import commit_count, git

PHONE = "+351 912 345 678"
DIGITS = "912 345 678"  # what any trace of it holds


@pytest.fixture
def serve() -> Iterator[Any]:
    yield from ui_support.serving()


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    """The number said in a transcript (one turn wholly the number, one among other words),
    kept in a fact, searched for (the access log, the index)."""
    root = Vault.init(tmp_path / "v", agent="ana", team="web").root
    ana = Vault.open(root, agent="ana", team="web")
    ana.log_many(
        "support-call",
        [
            ("user", "Which phone number is on the account?", None, None, None),
            ("user", PHONE, None, None, None),
            ("user", f"Or call me at {PHONE} after six.", None, None, None),
        ],
    )
    ana.add("semantic", f"Ana's phone number is {PHONE} (mobile).", title="Ana's phone", id="ana")
    ana.add("semantic", "The billing page needs a login since March.", id="billing")
    assert ana.recall(f"Ana phone {PHONE}").hits
    return ana


def _text(response: Any) -> str:
    return html.unescape(response.text)


def _everything(root: Path) -> str:
    return git(root, "log", "--all", "-p", "--format=%H%n%B")


def test_a_non_librarian_is_refused_at_every_step(vault: Vault, serve: Any) -> None:
    running: Running = serve(vault)
    before = (commit_count(vault.root), _everything(vault.root))
    form = {"match": PHONE, "confirm": "purge", "reason": "GDPR request 12"}
    for response in (
        running.client.get("/purge"),
        running.post("/purge/preview", form),
        running.post("/purge", form),
        running.client.get("/purge/done?commit=abcdef"),
    ):
        assert response.status_code == 403, response.text
        assert "needs the librarian role (memvault --role librarian ui)" in _text(response)
        assert DIGITS not in response.text  # a refusal says nothing of where the text is
    assert (commit_count(vault.root), _everything(vault.root)) == before
    assert 'href="/purge"' not in running.client.get("/").text  # no link for them either


def test_purge_needs_the_csrf_token_and_the_own_origin(vault: Vault, serve: Any) -> None:
    librarian: Running = serve(Vault.open(vault.root, agent="lib", role="librarian"))
    before = _everything(vault.root)
    form = {"match": PHONE, "confirm": "purge", "reason": "GDPR request 12"}
    no_csrf = librarian.client.post(
        "/purge", data=form, headers={"Origin": librarian.base, "Sec-Fetch-Site": "same-origin"}
    )
    assert no_csrf.status_code == 403 and "CSRF" in no_csrf.text
    cross = librarian.post("/purge", form, Origin="http://evil.example")
    assert cross.status_code == 403
    assert _everything(vault.root) == before


def test_a_librarians_purge_previews_confirms_and_leaves_no_trace(vault: Vault, serve: Any) -> None:
    root = vault.root
    librarian: Running = serve(Vault.open(root, agent="lib", team="web", role="librarian"))
    page = librarian.client.get("/")
    assert 'href="/purge"' in page.text  # the librarian's menu has the page
    search = librarian.client.get("/search?q=Ana+phone+number+mobile")
    assert "Ana&#39;s phone" in search.text.split('id="hits"')[1]
    form = librarian.client.get("/purge")
    assert form.status_code == 200 and 'action="/purge/preview"' in form.text

    preview = librarian.post("/purge/preview", {"match": PHONE})
    assert preview.status_code == 200, preview.text
    shown = _text(preview)
    assert 'id="purge-preview"' in shown and "semantic/facts/ana.md" in shown
    turns = {t.text: t.turn_id for t in parse_turns(vault.get("session-support-call").content)}
    row = shown.split("session-support-call.md")[1].split("</tr>")[0]
    gone, redacted = turns[PHONE], turns[f"Or call me at {PHONE} after six."]
    assert row.index(gone) < row.index(redacted)  # the turn that is the number goes
    assert "commit(s)" in shown and 'id="purge-commits"' in shown
    before = (commit_count(root), _everything(root))
    assert DIGITS in before[1]

    # no typed confirmation, then no reason: refused, the preview again, nothing written
    wrong = librarian.post("/purge", {"match": PHONE, "confirm": "yes", "reason": "GDPR"})
    assert wrong.status_code == 400 and "type 'purge'" in _text(wrong)
    assert 'id="purge-preview"' in wrong.text
    no_reason = librarian.post("/purge", {"match": PHONE, "confirm": "purge", "reason": " "})
    assert no_reason.status_code == 400 and "reason: say why" in _text(no_reason)
    assert (commit_count(root), _everything(root)) == before

    done = librarian.post("/purge", {"match": PHONE, "confirm": "purge", "reason": "GDPR 12"})
    assert done.status_code == 303, done.text
    location = done.headers["location"]
    # never in a URL: the result page is addressed by the notice and the new HEAD only
    assert re.fullmatch(r"/purge/done\?notice=purged-text&commit=[0-9a-f]{40}", location)
    result = librarian.client.get(location)
    assert result.status_code == 200 and 'id="purge-result"' in result.text
    assert DIGITS not in result.text
    head = git(root, "rev-parse", "HEAD").strip()
    assert head[:10] in result.text

    # gone from every commit of every ref, the files, and recall (a fresh process's index)
    assert DIGITS not in _everything(root)
    assert git(root, "grep", "-F", DIGITS, "HEAD", check=False) == ""
    assert "[purged]" in (root / "semantic/facts/ana.md").read_text(encoding="utf-8")
    fresh = Vault.open(root, agent="ana", team="web")
    for hit in fresh.recall(f"Ana phone {PHONE}", limit=20).hits:
        assert DIGITS not in hit.memory.content
    search = librarian.client.get("/search?q=Ana+phone+number+mobile")
    hits = search.text.split('id="hits"')[1]
    assert "Ana&#39;s phone" in hits and DIGITS not in hits and "[purged]" in hits
    logged = (root / PURGE_LOG).read_text(encoding="utf-8")
    assert "GDPR 12" in logged and DIGITS not in logged
    assert git(root, "log", "-1", "--format=%an").strip() == "memvault (memvault ui, agent:lib)"
    # the result page is only for that purge's commit
    assert 'id="purge-result"' not in librarian.client.get("/purge/done?commit=abcdef").text


def test_nothing_to_purge_and_bad_patterns_are_one_line(vault: Vault, serve: Any) -> None:
    librarian: Running = serve(Vault.open(vault.root, agent="lib", role="librarian"))
    nothing = _text(librarian.post("/purge/preview", {"match": "never said anywhere"}))
    assert "Nothing holds it" in nothing and 'id="purge-confirm"' not in nothing
    short = librarian.post("/purge/preview", {"match": "ab"})
    assert short.status_code == 400 and "match: give at least 4 characters" in _text(short)
    bad = librarian.post("/purge/preview", {"match": "(", "regex": "1"})
    assert bad.status_code == 400 and "regex: not a regular expression" in _text(bad)
    scope = librarian.post("/purge/preview", {"match": PHONE, "scope": "galaxy"})
    assert scope.status_code == 400 and "scope: expected self|team|global" in scope.text
