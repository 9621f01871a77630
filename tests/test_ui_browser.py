"""The web inspector in a real headless browser (Debian's chromium, through Selenium):
browse, search, open a memory, edit it, forget one, pause and resume a scope, accept an
inbox proposal, export. Each checks the effect in git and in the files. Two of them take
the README's screenshots (docs/img/ui-main.png, docs/img/ui-memory.png; refreshed with
``MEMVAULT_SCREENSHOTS=docs python -m pytest tests/test_ui_browser.py``).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ui_support
from ui_support import Running, chromium_driver, quit_driver

from memvault import PermissionDeniedError, Vault
from memvault.config import load_config
from memvault.scopes import Filters

from helpers import commit_count, git, is_clean, last_message

# Drives headless Chromium: out of the fast lane (pytest -m 'not slow').
pytestmark = pytest.mark.slow


@pytest.fixture
def serve() -> Iterator[Any]:
    yield from ui_support.serving()


IMG = Path(__file__).resolve().parent.parent / "docs" / "img"


def _shots(tmp_path: Path) -> Path:
    """Where screenshots go: the README's images only when asked (MEMVAULT_SCREENSHOTS=docs),
    else the test's own folder, so that a test run leaves the work tree clean."""
    return IMG if os.environ.get("MEMVAULT_SCREENSHOTS") == "docs" else tmp_path


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def browser(downloads: Path) -> Iterator[Any]:
    driver = chromium_driver(downloads)
    yield driver
    quit_driver(driver)


def _by(css: str) -> tuple[str, str]:
    from selenium.webdriver.common.by import By

    return (By.CSS_SELECTOR, css)


def _go(browser: Any, element: Any, submit: bool = False) -> None:
    """Click a link or button (or submit a form) and wait for the next page to have loaded.

    The old page is marked by a window property that only it carries; the wait is over when a
    document without the mark has finished loading. Probing an element of the old page for
    staleness instead can fail while chromium swaps documents ("Node with given id does not
    belong to the document"), so errors during the swap count as "not yet".
    """
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    browser.execute_script("window.__memvaultOldPage = true")
    element.submit() if submit else element.click()

    def loaded(b: Any) -> bool:
        return bool(b.execute_script(
            "return window.__memvaultOldPage === undefined"
            " && document.readyState === 'complete'"))  # fmt: skip

    WebDriverWait(browser, 30, ignored_exceptions=(WebDriverException,)).until(loaded)


def _open(browser: Any, running: Running, path: str = "/") -> None:
    """Through the token URL first (the cookie), then ``path``."""
    browser.get(running.server.url)
    if path != "/":
        browser.get(running.base + path)


def _author(root: Path) -> str:
    return git(root, "log", "-1", "--format=%an").strip()


def _team_vault(tmp_path: Path, **identity: str) -> Vault:
    vault = Vault.init(tmp_path / "v", examples=True, agent="auditor", team="web")
    return Vault.open(vault.root, **{"agent": "auditor", "team": "web", **identity})


def _titled(vault: Vault, title: str) -> Any:
    return next(m for m in vault.memories(Filters()) if m.title == title)


def _fill_vault(vault: Vault) -> None:
    """Memories in several channels, kinds and tags (the screenshot's vault)."""
    vault.add("semantic", "Billing runs on Postgres 16; the replica is read-only.",
              title="Billing database", tags=["billing", "db"], channel="slack:#ops",
              subject="billing.db")  # fmt: skip
    vault.add("episodic", "The Friday deploy failed: a migration locked the users table for "
              "4 minutes. Rolled back; moved migrations to a maintenance window.",
              title="Deploy failed on a locked table", tags=["deploy", "db"],
              channel="slack:#ops", outcome="failure")  # fmt: skip
    vault.add("semantic", "The public API allows 100 requests per second per token.",
              title="API rate limit", tags=["api"], channel="github",
              subject="api.rate-limit")  # fmt: skip
    vault.add("procedural", "Rotate the signing keys", title="Rotate signing keys",
              steps=["Create the new key", "Deploy it beside the old one", "Revoke the old key"],
              trigger=["rotate", "keys"], tags=["security"], channel="dm:alice")  # fmt: skip
    vault.add("semantic", "Alice prefers short summaries in Slack.", title="Alice's preference",
              scope="self", tags=["people"], channel="dm:alice")  # fmt: skip


def test_browse_filters_pages_and_screenshot(tmp_path: Path, serve: Any, browser: Any) -> None:
    vault = _team_vault(tmp_path)
    _fill_vault(vault)
    Vault.open(vault.root, agent="someone-else").add(
        "semantic", "someone else's private note", title="Private note of another agent",
        scope="self",
    )  # fmt: skip
    before = commit_count(vault.root)
    running = serve(vault)
    _open(browser, running)
    visible = vault.memories(Filters())
    heading = browser.find_element(*_by(".listhead h1")).text
    assert heading == f"{len(visible)} memories"
    titles = [e.text for e in browser.find_elements(*_by("#rows .title"))]
    assert "Billing database" in titles
    assert "Private note of another agent" not in titles  # another agent's self memory
    IMG.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(_shots(tmp_path) / "ui-main.png"))
    # a facet: only semantic memories, and the count shown is what the click gives
    link = next(
        e for e in browser.find_elements(*_by("#facet-type li"))
        if e.text.startswith("semantic")
    )  # fmt: skip
    shown_count = int(link.find_element(*_by(".count")).text)
    _go(browser, link.find_element(*_by("a")))
    assert "type=semantic" in browser.current_url
    rows = browser.find_elements(*_by("#rows .kind"))
    assert rows and all(r.text.startswith("semantic/") for r in rows)
    assert len(rows) == shown_count == len(vault.memories(Filters(type="semantic")))
    # reading works with JavaScript off (the inspector sends none anyway)
    browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
    try:
        browser.get(running.base + "/?sort=relevance&tag=db")
        titles = [e.text for e in browser.find_elements(*_by("#rows .title"))]
        assert set(titles) == {"Billing database", "Deploy failed on a locked table"}
    finally:
        browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})
    assert commit_count(vault.root) == before and is_clean(vault.root)  # reading writes nothing


def test_browse_paginates(tmp_path: Path, serve: Any, browser: Any) -> None:
    vault = _team_vault(tmp_path)
    writes = {}
    from memvault.store.files import render_new

    for n in range(120):
        created = f"2025-01-01T00:{n // 60:02d}:{n % 60:02d}Z"
        meta = {"id": f"note-{n:03d}", "type": "semantic", "category": "facts"}
        meta.update(created=created, scope="team")
        writes[vault.core.path_for(meta)] = render_new(meta, f"Note number {n}")
    with vault.locked():
        vault.core.commit_files(writes, "test: 120 notes")
    running = serve(vault)
    _open(browser, running, "/?type=semantic&category=semantic/facts")
    first = [e.text for e in browser.find_elements(*_by("#rows .title"))]
    assert len(first) == 50
    _go(browser, browser.find_element(*_by(".pager a[rel=next]")))
    assert "page=2" in browser.current_url
    second = [e.text for e in browser.find_elements(*_by("#rows .title"))]
    assert len(second) == 50 and not set(first) & set(second)
    assert "page 2 of 3" in browser.find_element(*_by(".pager")).text


def test_search_explains_and_opens_a_turn(tmp_path: Path, serve: Any, browser: Any) -> None:
    vault = _team_vault(tmp_path)
    _fill_vault(vault)
    vault.log("standup", "user", "Did the nightly backup of the billing database finish?")
    vault.log("standup", "assistant", "Yes: the nightly backup finished at 03:12 without errors.")
    running = serve(vault)
    _open(browser, running)
    box = browser.find_element(*_by("form.quick input[name=q]"))
    box.send_keys("nightly backup finished")
    _go(browser, box, submit=True)
    assert "/search?q=nightly" in browser.current_url
    hits = browser.find_elements(*_by("#hits .hit"))
    assert hits
    links = browser.find_elements(*_by("#hits .title"))
    turn_link = next(a for a in links if "#turn-" in a.get_attribute("href"))
    explain = hits[0].find_element(*_by("details.explain"))
    explain.find_element(*_by("summary")).click()
    assert "keyword leg" in explain.text and "vector leg" in explain.text
    turn_id = turn_link.get_attribute("href").split("#turn-")[1]
    _go(browser, turn_link)
    assert browser.current_url.endswith(f"#turn-{turn_id}")
    turn = browser.find_element(*_by(f"#turn-{turn_id}"))
    transcript = vault.get(browser.current_url.split("/m/")[1].split("#")[0])
    assert transcript.category == "transcript" and turn_id in transcript.content
    assert "backup" in turn.text


def test_memory_page_and_screenshot(tmp_path: Path, serve: Any, browser: Any) -> None:
    vault = _team_vault(tmp_path)
    _fill_vault(vault)
    old = _titled(vault, "Billing database")
    deploy = _titled(vault, "Deploy failed on a locked table")
    new = vault.add(
        "semantic", "Billing moved to Postgres 17 in March; the replica serves reports.",
        title="Billing database: Postgres 17", subject="billing.db", tags=["billing", "db"],
        channel="slack:#ops", related=[deploy.id],
    ).memory  # fmt: skip
    vault.update(new.id, {"importance": 5}, "it matters for the migration plan")
    running = serve(vault)
    _open(browser, running, f"/m/{new.id}")
    assert browser.find_element(*_by(".memory h1")).text == new.title
    assert "Postgres 17" in browser.find_element(*_by("#body")).text
    chain = [e.text for e in browser.find_elements(*_by("ol.chain li a"))]
    assert chain == [old.title, new.title]
    front = browser.find_element(*_by("#front-matter")).text
    assert "importance 5" in front and "subject billing.db" in front
    commits = browser.find_elements(*_by("ol.commits li"))
    assert len(commits) == 2 and "it matters for the migration plan" in commits[0].text
    assert "relevance" in browser.find_element(*_by("pre.why")).text
    assert [
        e.text for e in browser.find_elements(*_by(".side a[href='/m/" + deploy.id + "']"))
    ] == [deploy.title]
    browser.save_screenshot(str(_shots(tmp_path) / "ui-memory.png"))
    _go(browser, browser.find_element(*_by("a[href$='/history']")))
    diff = browser.find_element(*_by("pre.diff .d-add")).text
    assert diff.startswith("+")


def test_edit_commits_and_a_bad_edit_loses_nothing(
    tmp_path: Path, serve: Any, browser: Any
) -> None:
    vault = _team_vault(tmp_path)
    _fill_vault(vault)
    memory = vault.get("api-rate-limit")
    path = vault.root / memory.path
    running = serve(vault)
    _open(browser, running, f"/m/{memory.id}/edit")
    area = browser.find_element(*_by("textarea[name=text]"))
    text = path.read_text(encoding="utf-8").replace("100 requests", "250 requests")
    browser.execute_script("arguments[0].value = arguments[1]", area, text)
    browser.find_element(*_by("input[name=message]")).send_keys("limit raised in v3")
    before = commit_count(vault.root)
    _go(browser, browser.find_element(*_by("form.edit button[type=submit]")))
    assert browser.current_url.endswith(f"/m/{memory.id}?notice=edited&commit=" + git(
        vault.root, "rev-parse", "HEAD").strip())  # fmt: skip
    assert "250 requests" in browser.find_element(*_by("#body")).text
    assert path.read_text(encoding="utf-8") == text  # exactly what was typed, LF endings
    assert commit_count(vault.root) == before + 1
    assert last_message(vault.root) == f"memvault: edit {memory.id}: limit raised in v3"
    assert _author(vault.root) == "memvault (memvault ui, agent:auditor)"
    # an invalid edit: refused with the reason, nothing written, the typed text kept
    browser.get(running.base + f"/m/{memory.id}/edit")
    area = browser.find_element(*_by("textarea[name=text]"))
    bad = text.replace("importance: 3", "importance: 9")
    browser.execute_script("arguments[0].value = arguments[1]", area, bad)
    _go(browser, browser.find_element(*_by("form.edit button[type=submit]")))
    assert "importance" in browser.find_element(*_by("#error")).text
    kept = browser.find_element(*_by("textarea[name=text]")).get_attribute("value")
    assert "importance: 9" in kept
    assert path.read_text(encoding="utf-8") == text and commit_count(vault.root) == before + 1


def test_forget_deletes_with_a_commit(tmp_path: Path, serve: Any, browser: Any) -> None:
    vault = _team_vault(tmp_path)
    _fill_vault(vault)
    memory = _titled(vault, "Deploy failed on a locked table")
    running = serve(vault)
    _open(browser, running, f"/m/{memory.id}")
    _go(browser, browser.find_element(*_by("a.button.danger")))
    browser.find_element(*_by("input[name=reason]")).send_keys("duplicate of the postmortem")
    _go(browser, browser.find_element(*_by("form.forget button[type=submit]")))
    assert "notice=forgot" in browser.current_url, browser.find_element(*_by("main")).text
    assert not (vault.root / memory.path).exists()
    assert last_message(vault.root).startswith(
        f"memvault: forget {memory.id}: duplicate of the postmortem"
    )
    assert memory.path in git(vault.root, "show", "--name-only", "--format=", "HEAD")
    assert memory.title not in browser.find_element(*_by("#rows")).text
    assert is_clean(vault.root)


def test_pause_and_resume_a_scope(tmp_path: Path, serve: Any, browser: Any) -> None:
    vault = _team_vault(tmp_path)
    running = serve(vault)
    _open(browser, running, "/scopes")
    row = browser.find_element(*_by("#scope-self"))
    row.find_element(*_by("input[name=why]")).send_keys("no DMs in long-term memory")
    _go(browser, row.find_element(*_by("button")))
    assert "notice=paused" in browser.current_url
    assert browser.find_element(*_by("#scope-self td.paused")).text == "paused"
    assert load_config(vault.root).get("paused") == ["self"]
    assert last_message(vault.root) == (
        "memvault: pause capture for scope self: no DMs in long-term memory"
    )
    with pytest.raises(PermissionDeniedError):  # every writer now refuses that scope
        Vault.open(vault.root, agent="auditor").add("semantic", "a DM", scope="self")
    _go(browser, browser.find_element(*_by("#scope-self button")))
    assert "notice=resumed" in browser.current_url
    assert load_config(vault.root).get("paused") == []
    assert last_message(vault.root) == "memvault: resume capture for scope self"
    Vault.open(vault.root, agent="auditor").add("semantic", "a DM again", scope="self")


def test_pause_and_resume_an_agent_in_a_channel(tmp_path: Path, serve: Any, browser: Any) -> None:
    vault = _team_vault(tmp_path)
    running = serve(vault)
    _open(browser, running, "/scopes")
    form = browser.find_element(*_by("#pause-rule"))
    form.find_element(*_by("input[name=agent]")).send_keys("bot")
    form.find_element(*_by("input[name=channel]")).send_keys("dm:alice")
    form.find_element(*_by("input[name=why]")).send_keys("no DMs from the bot")
    _go(browser, form.find_element(*_by("button[name=pause]")))
    assert "notice=paused" in browser.current_url
    assert load_config(vault.root).get("paused") == [{"agent": "bot", "channel": "dm:alice"}]
    assert "no DMs from the bot" in last_message(vault.root)
    bot = Vault.open(vault.root, agent="bot")
    with pytest.raises(PermissionDeniedError):
        bot.add("semantic", "a DM", channel="dm:alice")
    bot.add("semantic", "an ops note", channel="slack:#ops")  # another channel still captures
    rule = browser.find_element(*_by("#pause-rules tr.rule"))
    assert "--agent bot" in rule.text and "--channel dm:alice" in rule.text
    _go(browser, rule.find_element(*_by("button[name=resume]")))
    assert "notice=resumed" in browser.current_url
    assert load_config(vault.root).get("paused") == []
    bot.add("semantic", "a DM again", channel="dm:alice")


def test_accept_an_inbox_proposal(tmp_path: Path, serve: Any, browser: Any) -> None:
    vault = _team_vault(tmp_path)
    proposed = Vault.open(vault.root, agent="bot").add(
        "semantic", "Deploys are frozen on Fridays.", title="Friday freeze", scope="global"
    )
    assert proposed.inbox and proposed.memory.path.startswith("inbox/")
    running = serve(Vault.open(vault.root, agent="lib", role="librarian"))
    _open(browser, running, "/inbox")
    item = browser.find_element(*_by(f"#p-{proposed.memory.id}"))
    item.find_element(*_by("input[name=note]")).send_keys("agreed in the retro")
    _go(browser, item.find_element(*_by("button[name=accept]")))
    assert "notice=accepted" in browser.current_url
    target = vault.root / proposed.memory.path.removeprefix("inbox/")
    assert target.exists() and not (vault.root / proposed.memory.path).exists()
    assert "status: active" in target.read_text(encoding="utf-8")
    assert last_message(vault.root) == (
        f"memvault: accept {proposed.memory.id} from inbox: agreed in the retro"
    )
    assert _author(vault.root) == "memvault (memvault ui, agent:lib)"
    assert "The inbox is empty." in browser.find_element(*_by("#proposals")).text


def test_keep_one_fact_of_a_dispute(tmp_path: Path, serve: Any, browser: Any) -> None:
    vault = _team_vault(tmp_path)
    old = vault.add("semantic", "The API rate limit is 200 requests per second").memory
    written = vault.add("semantic", "We now allow 900 requests per second on the API")
    assert written.disputed == (old.id,)  # the write was unsure: a dispute, both in force
    new = written.memory
    running = serve(vault)
    _open(browser, running, "/inbox")
    group = browser.find_element(*_by("#disputes"))
    assert "newest" in group.find_element(*_by(f"#f-{new.id}")).text
    fact = group.find_element(*_by(f"#f-{old.id}"))
    fact.find_element(*_by("input[name=note]")).send_keys("the gateway says 200")
    before = commit_count(vault.root)
    _go(browser, fact.find_element(*_by("button[name=keep]")))
    assert "notice=kept" in browser.current_url
    assert commit_count(vault.root) == before + 1
    assert "the gateway says 200" in last_message(vault.root)
    assert vault.get(old.id).status == "active"
    lost = vault.get(new.id)
    assert lost.status == "superseded" and lost.meta["superseded_by"] == old.id
    assert "No open disputes." in browser.find_element(*_by("#disputes")).text


def test_export_downloads_what_the_identity_sees(
    tmp_path: Path, serve: Any, browser: Any, downloads: Path
) -> None:
    vault = _team_vault(tmp_path)
    _fill_vault(vault)
    Vault.open(vault.root, agent="other").add("semantic", "not yours", scope="self", id="theirs")
    before = commit_count(vault.root)
    running = serve(vault)
    _open(browser, running, "/export")
    browser.find_element(*_by("#export-jsonl")).click()
    deadline = time.monotonic() + 30
    files: list[Path] = []
    while time.monotonic() < deadline:
        files = [p for p in downloads.glob("memvault-*.jsonl")]
        if files and not list(downloads.glob("*.crdownload")):
            break
        time.sleep(0.1)
    assert len(files) == 1, list(downloads.iterdir())
    records = [json.loads(line) for line in files[0].read_text(encoding="utf-8").splitlines()]
    visible = {m.id: m for m in vault.all_memories() if vault.identity.can_see(m)}
    assert {r["id"] for r in records} == set(visible) and "theirs" not in visible
    for record in records:  # each record holds its file's exact text
        assert record["raw"] == (vault.root / record["path"]).read_text(encoding="utf-8")
    assert commit_count(vault.root) == before and is_clean(vault.root)


def test_a_stored_script_does_not_run(tmp_path: Path, serve: Any, browser: Any) -> None:
    """Markup stored in a memory -- a script, an event handler, javascript: links -- is shown
    as text or dropped, in the browser, and clicking the link runs nothing."""
    vault = _team_vault(tmp_path)
    vault.add(
        "semantic",
        'Hi <script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2">\n\n'
        "[click me](javascript:window.__pwned=3) "
        '<a href="javascript:window.__pwned=4" id="raw">raw</a>',
        title="Evil <script>window.__pwned = 5</script>",
        id="evil",
    )
    running = serve(vault)
    for path in ("/m/evil", "/", "/search?q=evil+click", "/m/evil/history", "/m/evil/edit"):
        _open(browser, running, path)
        assert browser.execute_script("return window.__pwned") is None, path
    _open(browser, running, "/m/evil")
    body = browser.find_element(*_by("#body"))
    assert "<script>window.__pwned = 1</script>" in body.text  # shown as text
    assert body.find_elements(*_by("script, img, [onerror]")) == []
    links = body.find_elements(*_by("a"))
    assert all(not (a.get_attribute("href") or "").startswith("javascript:") for a in links)
    assert "Evil <script>" in browser.find_element(*_by(".memory h1")).text
    for link in browser.find_elements(*_by("#body a")):
        link.click()
    assert browser.execute_script("return window.__pwned") is None
    logs = browser.get_log("browser") if hasattr(browser, "get_log") else []
    assert not [entry for entry in logs if "__pwned" in entry.get("message", "")]


LONG_LINE = "w" * 20_000  # one 20,000-character word: nothing to break it at
LONG_URL = "https://example.org/" + "a" * 280  # 300 characters


def _widths(browser: Any) -> tuple[int, int]:
    width, client = browser.execute_script(
        "const e = document.documentElement; return [e.scrollWidth, e.clientWidth];"
    )
    return int(width), int(client)


def test_no_page_scrolls_sideways_at_1280(tmp_path: Path, serve: Any, browser: Any) -> None:
    """A memory whose title and text are one 20,000-character word and a 300-character URL
    widens no page past the window: every page is measured at 1280 px."""
    vault = _team_vault(tmp_path, role="librarian")
    body = f"{LONG_LINE}\n\nSee {LONG_URL} and <{LONG_URL}>.\n\n    {LONG_LINE}\n\n`{LONG_URL}`"
    long = vault.add("semantic", body, title=LONG_LINE, tags=[LONG_LINE[:60]], id="long-line")
    vault.replace_text(
        long.memory.id,
        vault.raw_text(vault.get(long.memory.id)) + f"\n{LONG_URL}x\n",
        "a second version: history shows a diff",
    )
    # an old episode: the preview archives it, its diff shows the long line
    vault.add("episodic", body, title=LONG_LINE, id="old-long", created="2020-01-06T10:00:00Z")
    Vault.open(vault.root, agent="bot").add("semantic", body, title=LONG_LINE, scope="global")
    running = serve(vault)
    pages = [
        "/",
        "/m/long-line",
        "/m/long-line/history",
        "/m/long-line/edit",
        "/m/long-line/forget",
        "/search?q=example+org",
        "/inbox",
        "/consolidate?preview=1",
    ]
    browser.set_window_size(1280, 860)
    _open(browser, running)
    wide = {}
    for path in pages:
        browser.get(running.base + path)
        assert LONG_LINE[:5000] in browser.page_source, path  # the page shows the long line
        # folded parts (a diff, an explanation) open: they must fit too
        browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
        width, client = _widths(browser)
        assert client >= 1200, (path, client)
        if width > client:
            wide[path] = width
    # the purge preview (a POST): the long memory's file and the commits that hold it
    browser.get(running.base + "/purge")
    browser.find_element(*_by("#purge-ask input[name=match]")).send_keys(LONG_URL)
    _go(browser, browser.find_element(*_by("#purge-ask button")))
    assert "long-line" in browser.find_element(*_by("#purge-files")).text
    width, client = _widths(browser)
    if width > client:
        wide["/purge/preview"] = width
    assert wide == {}, f"pages wider than the window ({client} px): {wide}"


PHONE = "+351 912 345 678"
DIGITS = "912 345 678"


def test_purge_by_content_as_a_librarian(tmp_path: Path, serve: Any, browser: Any) -> None:
    """Another agent is refused; the librarian previews, types 'purge' and a reason, and
    the number is gone from the files, every commit and recall. It is never in a URL."""
    vault = _team_vault(tmp_path)
    vault.log_many(
        "support-call",
        [("user", PHONE, None, None, None), ("user", f"Call me at {PHONE}.", None, None, None)],
    )
    vault.add("semantic", f"Ana's phone number is {PHONE}.", title="Ana's phone", id="ana")
    other = serve(vault)
    _open(browser, other, "/purge")
    assert "needs the librarian role" in browser.find_element(*_by("main")).text
    assert not browser.find_elements(*_by("header nav a[href='/purge']"))

    running = serve(Vault.open(vault.root, agent="lib", team="web", role="librarian"))
    _open(browser, running)
    _go(browser, browser.find_element(*_by("header nav a[href='/purge']")))
    browser.find_element(*_by("#purge-ask input[name=match]")).send_keys(PHONE)
    _go(browser, browser.find_element(*_by("#purge-ask button")))
    seen = [browser.current_url]
    files = browser.find_element(*_by("#purge-files")).text
    assert "semantic/facts/ana.md" in files and "session-support-call.md" in files
    assert browser.find_element(*_by("#purge-commits")).text
    confirm = browser.find_element(*_by("#purge-confirm"))
    confirm.find_element(*_by("input[name=reason]")).send_keys("GDPR request 12")
    confirm.find_element(*_by("input[name=confirm]")).send_keys("purge")
    _go(browser, confirm.find_element(*_by("button[type=submit]")))
    assert "notice=purged-text" in browser.current_url, browser.find_element(*_by("main")).text
    seen.append(browser.current_url)
    head = git(vault.root, "rev-parse", "HEAD").strip()
    assert f"HEAD is now {head[:10]}" in browser.find_element(*_by("#purge-result")).text
    history = git(vault.root, "log", "--all", "-p", "--format=%B")
    assert DIGITS not in history and "GDPR request 12" in history
    for hit in Vault.open(vault.root, agent="auditor", team="web").recall("Ana phone").hits:
        assert DIGITS not in hit.memory.content
    assert is_clean(vault.root)
    assert not [u for u in seen if re.search(r"912(\+|%20| )345", u)], seen
