"""The web inspector's guard, over real HTTP to a real server: the token, the cookie, CSRF
and origin checks, '..' anywhere, the scope rules (another agent's ``self`` memory is not
reachable by any route), sanitised Markdown, and refusals that are one line, never a
traceback. The browser-side check that a stored script does not run is in
test_ui_browser.py."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import ui_support
from ui_support import Running

from memvault import Vault
from memvault.ui.render import markdown

from helpers import commit_count, git, last_message


@pytest.fixture
def serve() -> Iterator[Any]:
    yield from ui_support.serving()


EVIL = (
    "Hello <script>window.__pwned = 1</script>\n\n"
    '[click me](javascript:window.__pwned=2) <img src=x onerror="window.__pwned=3">\n\n'
    '<a href="javascript:alert(1)">raw link</a> [ok](https://example.org)'
)


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    root = Vault.init(tmp_path / "v", agent="me", team="web").root
    me = Vault.open(root, agent="me", team="web")
    me.add("semantic", "The API allows 100 requests per second.", title="Rate limit", id="rate")
    me.add("semantic", EVIL, title="Evil note", id="evil")
    # an old episode: the next consolidation archives it (its relevance decayed)
    me.add("episodic", "Kick-off meeting", id="kickoff", created="2020-01-06T10:00:00Z")
    Vault.open(root, agent="other").add(
        "semantic", "zanzibar launch codes of the other agent", title="Theirs", scope="self",
        id="theirs",
    )  # fmt: skip
    return me


def _text(response: httpx.Response) -> str:
    return html.unescape(response.text)


def _no_trace(response: httpx.Response) -> None:
    assert "Traceback" not in response.text and 'File "' not in response.text


def test_no_token_is_refused(vault: Vault, serve: Any) -> None:
    running: Running = serve(vault)
    bare = httpx.Client(base_url=running.base, follow_redirects=False)
    for path in ("/", "/m/rate", "/export?format=jsonl", "/static/style.css", "/inbox"):
        response = bare.get(path)
        assert response.status_code == 403, path
        assert "memvault ui" in response.text and "rate" not in response.text.split("ui")[0]
    assert bare.get("/?token=wrong").status_code == 403
    before = commit_count(vault.root)
    response = bare.post("/scopes/self/pause", data={"csrf": running.csrf})
    assert response.status_code == 403 and commit_count(vault.root) == before


def test_token_becomes_a_strict_httponly_cookie(vault: Vault, serve: Any) -> None:
    running: Running = serve(vault)
    fresh = httpx.Client(base_url=running.base, follow_redirects=False)
    response = fresh.get(f"/m/rate?token={running.server.token}")
    assert response.status_code == 303
    assert response.headers["location"] == "/m/rate"  # the token leaves the address bar
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    page = fresh.get("/m/rate")
    assert page.status_code == 200 and "100 requests" in page.text
    headers = page.headers
    assert "script-src" not in headers["content-security-policy"]  # default-src 'none'
    assert "default-src 'none'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY" and headers["cache-control"] == "no-store"


def test_cross_site_post_is_refused(vault: Vault, serve: Any) -> None:
    running: Running = serve(vault)
    before = commit_count(vault.root)
    cases = [
        ({"Origin": "http://evil.example"}, True),
        ({"Origin": running.base, "Sec-Fetch-Site": "cross-site"}, True),
        ({"Origin": "null"}, True),
    ]
    for headers, with_csrf in cases:
        data = {"csrf": running.csrf} if with_csrf else {}
        response = running.client.post("/scopes/self/pause", data=data, headers=headers)
        assert response.status_code == 403, headers
    # no Origin and no Referer: refused too
    response = running.client.post("/scopes/self/pause", data={"csrf": running.csrf})
    assert response.status_code == 403
    # the right origin without the form's CSRF token, or with a wrong one
    assert running.post("/scopes/self/pause", {"csrf": ""}).status_code == 403
    assert running.post("/scopes/self/pause", {"csrf": "0" * 64}).status_code == 403
    assert commit_count(vault.root) == before
    assert (
        "paused"
        not in (vault.root / ".memvault" / "config.yaml")
        .read_text()
        .split("paused:")[1]
        .split("\n")[0]
    )
    # the same request from the inspector's own page goes through
    response = running.post("/scopes/self/pause", {"why": "test"})
    assert response.status_code == 303 and commit_count(vault.root) == before + 1


def test_unknown_host_is_refused(vault: Vault, serve: Any) -> None:
    """A DNS name rebound to 127.0.0.1 still sends its own Host header."""
    running: Running = serve(vault)
    response = running.client.get("/", headers={"Host": "attacker.example"})
    assert response.status_code == 400


def test_host_names_match_in_any_case(vault: Vault, serve: Any) -> None:
    running: Running = serve(vault)
    port = running.server.port
    for host in (f"LOCALHOST:{port}", f"LocalHost:{port}", f"127.0.0.1:{port}"):
        assert running.client.get("/", headers={"Host": host}).status_code == 200, host


@pytest.mark.parametrize("path", ["//evil.example/", "/\\evil.example/", "///evil.example/x"])
def test_the_token_redirect_stays_on_this_server(vault: Vault, serve: Any, path: str) -> None:
    running: Running = serve(vault)
    token = running.server.token
    response = running.client.get(f"{running.server.base}{path}?token={token}")
    location = response.headers.get("location", "")
    assert response.status_code == 303, response.text
    assert location.startswith("/") and not location.startswith(("//", "/\\")), location


def test_a_wildcard_bind_answers_to_the_machines_names(vault: Vault) -> None:
    from memvault.ui import Server, machine_names

    server = Server(vault, host="0.0.0.0", port=0)
    try:
        names = machine_names()
        assert names  # the host name at least
        for name in (*names, "127.0.0.1", "localhost", "0.0.0.0"):
            assert f"{name.lower()}:{server.port}" in server.guard.hosts, name
        assert f"attacker.example:{server.port}" not in server.guard.hosts
    finally:
        server.socket.close()


@pytest.mark.parametrize(
    "path",
    [
        "/m/..%2F..%2Fetc%2Fpasswd",
        "/m/%2E%2E%2F%2E%2E%2Fpyproject.toml",
        "/m/rate/..%2F..%2F..%2Fetc/history",
        "/static/..%2F..%2F__init__.py",
        "/static/%252e%252e%252f%252e%252e%252fapp.py",
        "/?category=../../etc",
        "/?tag=..%5C..%5Cx",
        "/search?q=../../etc/passwd",
        "/export?format=../../etc/passwd",
        "/consolidate?only=../x",
    ],
)
def test_dot_dot_in_any_parameter_is_refused(vault: Vault, serve: Any, path: str) -> None:
    running: Running = serve(vault)
    response = running.client.send(running.client.build_request("GET", path))
    assert response.status_code in (400, 404), (path, response.status_code)
    assert "root:" not in response.text and "import" not in response.text
    _no_trace(response)


def test_dot_dot_in_a_form_field_is_refused(vault: Vault, serve: Any) -> None:
    running: Running = serve(vault)
    before = commit_count(vault.root)
    response = running.post("/new", {"type": "semantic", "content": "x", "category": "../../x"})
    assert response.status_code == 400 and "refused: &#39;..&#39; in parameter" in response.text
    response = running.post("/m/rate/forget", {"reason": "r", "purge": "1", "confirm": "../rate"})
    assert response.status_code == 400
    assert commit_count(vault.root) == before and (vault.root / "semantic/facts/rate.md").exists()


def test_another_agents_self_memory_is_not_reachable(vault: Vault, serve: Any) -> None:
    running: Running = serve(vault)
    path = vault.root / "semantic/facts/theirs.md"
    text = path.read_text(encoding="utf-8")
    before = commit_count(vault.root)
    for url in ("/m/theirs", "/m/theirs/history", "/m/theirs/edit", "/m/theirs/forget"):
        response = running.client.get(url)
        assert response.status_code == 404, url
        assert "zanzibar" not in response.text
    for url, data in (
        ("/m/theirs/forget", {"reason": "mine now"}),
        ("/m/theirs/edit", {"text": text.replace("zanzibar", "x"), "message": "m"}),
        ("/inbox/theirs/accept", {}),
        ("/inbox/theirs/reject", {}),
        ("/disputes/theirs/keep", {}),
    ):
        assert running.post(url, data).status_code == 404, url
    assert path.read_text(encoding="utf-8") == text and commit_count(vault.root) == before
    pages = [
        running.client.get(u).text
        for u in ("/", "/?status=any", "/?scope=self", "/export?format=jsonl",
                  "/export?format=markdown", "/inbox")
    ]  # fmt: skip
    assert not any("zanzibar" in p or "theirs" in p for p in pages)
    for mode in ("recall", "search", "fact"):
        found = running.client.get(f"/search?q=zanzibar+launch+codes&mode={mode}").text
        assert 'id="hits"' in found and "/m/theirs" not in found and "Theirs" not in found


def test_stored_markup_is_sanitised(vault: Vault, serve: Any) -> None:
    running: Running = serve(vault)
    html = running.client.get("/m/evil").text
    body = html.split('id="body">')[1].split("</section>")[0]
    assert "<script" not in body and "<img" not in body  # shown as text: &lt;script&gt;
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in body
    assert '<a href="javascript:' not in body.lower()  # the raw HTML link is text too
    assert '<a href="https://example.org" rel="noopener noreferrer nofollow">ok</a>' in body
    # the sanitiser alone (below markdown-it, which already escapes raw HTML)
    from memvault.ui.render import clean

    dirty = '<a href="javascript:x()">a</a><img src=x onerror=y()><script>z()</script><b>b</b>'
    assert clean(dirty) == '<a rel="noopener noreferrer nofollow">a</a><img src="x">b'
    assert "<script" not in markdown("<script>alert(1)</script>")


def test_bad_input_is_a_clear_refusal(vault: Vault, serve: Any) -> None:
    running: Running = serve(vault)
    for url, needle in (
        ("/?page=abc", "page: expected a whole number"),
        ("/?type=bogus", "type: expected episodic|semantic|procedural"),
        ("/?status=all", "status: expected active|"),
        ("/search?q=x&mode=guess", "mode: expected recall|search|fact|procedure"),
        ("/m/NOT_AN_ID", "not a memory id"),
        ("/m/nope", "no memory with id 'nope'"),
        ("/export?format=pdf", "format: expected jsonl|markdown"),
        ("/scopes/self/pause", "method not allowed here"),
    ):
        response = running.client.get(url)
        assert response.status_code in (400, 404, 405), url
        assert needle in _text(response), (url, response.text[:300])
        _no_trace(response)
    response = running.post("/scopes/everyone/pause", {})
    assert response.status_code == 404 and "expected self|team|global" in _text(response)
    # an edit that breaks the file: refused, the typed text kept, nothing written
    path = vault.root / "semantic/facts/rate.md"
    text = path.read_text(encoding="utf-8")
    bad = text.replace("importance: 3", "importance: 9")
    response = running.post("/m/rate/edit", {"text": bad, "message": "oops"})
    assert response.status_code == 400 and "importance" in response.text
    assert "importance: 9" in response.text and path.read_text(encoding="utf-8") == text
    _no_trace(response)


def test_global_writes_go_to_the_inbox_unless_librarian(vault: Vault, serve: Any) -> None:
    running: Running = serve(vault)
    response = running.post(
        "/new",
        {"type": "semantic", "title": "Office hours", "content": "9 to 5", "scope": "global"},
    )
    assert response.status_code == 303 and response.headers["location"].startswith(
        "/inbox?notice=proposed"
    )
    assert (vault.root / "inbox/semantic/facts/office-hours.md").exists()
    assert "proposed in inbox/ for review" in last_message(vault.root)
    assert (
        git(vault.root, "log", "-1", "--format=%an").strip() == "memvault (memvault ui, agent:me)"
    )
    # accepting it needs the librarian role
    response = running.post("/inbox/office-hours/accept", {})
    assert response.status_code == 400 and "needs the librarian role" in _text(response)
    librarian: Running = serve(Vault.open(vault.root, agent="lib", role="librarian"))
    response = librarian.post(
        "/new", {"type": "semantic", "title": "Lunch", "content": "at noon", "scope": "global"}
    )
    assert response.headers["location"].startswith("/m/lunch?notice=added")
    assert (vault.root / "semantic/facts/lunch.md").exists()
    # editing a global memory needs the role as well
    text = (vault.root / "semantic/facts/lunch.md").read_text(encoding="utf-8")
    response = running.post("/m/lunch/edit", {"text": text.replace("noon", "one")})
    assert response.status_code == 400 and "librarian" in response.text
    response = librarian.post("/m/lunch/edit", {"text": text.replace("noon", "one")})
    assert response.status_code == 303
    assert "at one" in (vault.root / "semantic/facts/lunch.md").read_text(encoding="utf-8")


def test_purge_needs_the_id_typed_again(vault: Vault, serve: Any) -> None:
    running: Running = serve(vault)
    path = vault.root / "semantic/facts/rate.md"
    response = running.post("/m/rate/forget", {"reason": "wrong", "purge": "1", "confirm": "no"})
    assert response.status_code == 400 and "type the memory's id" in _text(response)
    assert path.exists()
    response = running.post("/m/rate/forget", {"reason": "wrong", "purge": "1", "confirm": "rate"})
    assert response.status_code == 303 and "notice=purged" in response.headers["location"]
    assert not path.exists()
    history = git(vault.root, "log", "--all", "-p", "--format=%B")
    assert "100 requests per second" not in history


def test_consolidation_preview_and_apply(vault: Vault, serve: Any) -> None:
    running: Running = serve(vault)
    page = running.client.get("/consolidate?preview=1&only=decay")
    assert page.status_code == 200 and 'id="plan"' in page.text
    assert "theirs" not in page.text  # another agent's memory is counted, not shown
    fingerprint = page.text.split('name="fingerprint" value="')[1].split('"')[0]
    now = page.text.split('name="now" value="')[1].split('"')[0]
    form = {"only": "decay", "now": now, "fingerprint": fingerprint}
    before = commit_count(vault.root)
    assert running.post("/consolidate", form).status_code == 403  # not a librarian
    librarian: Running = serve(Vault.open(vault.root, agent="me", team="web", role="librarian"))
    assert librarian.post("/consolidate", {**form, "fingerprint": "0" * 32}).status_code == 400
    # a hand edit not committed yet: the apply is refused, nothing written
    edited = next((vault.root / "semantic").rglob("*.md"))
    kept = edited.read_bytes()
    edited.write_bytes(kept + b"\nA hand edit.\n")
    refused = librarian.post("/consolidate", form)
    assert refused.status_code == 400 and "uncommitted edits" in refused.text
    assert commit_count(vault.root) == before
    assert edited.read_bytes().endswith(b"A hand edit.\n")
    edited.write_bytes(kept)
    response = librarian.post("/consolidate", form)
    assert response.status_code == 303 and "notice=consolidated" in response.headers["location"]
    assert commit_count(vault.root) == before + 1
    assert last_message(vault.root).startswith("memvault: consolidate (")
    # the old episode moved to archive/; its history follows it there
    assert (vault.root / "archive").rglob("*kickoff.md")
    history = _text(librarian.client.get("/m/kickoff/history"))
    assert "memvault: consolidate (" in history and "memvault: add episodic kickoff" in history
    assert "rename to archive/episodic/2020/01/kickoff.md" in history


def test_consolidation_preview_shows_the_plans_notes(vault: Vault, serve: Any) -> None:
    """A summarizer command that came with the shared config and is not allowed here: the
    preview says so, one line, as the CLI's ``note:`` does."""
    import datetime as dt
    import re

    when = dt.datetime(2020, 1, 6, tzinfo=dt.UTC)
    vault.log("s1", "user", "Let us move the backups to the new bucket.", when=when)
    config = vault.root / ".memvault" / "config.yaml"
    text = re.sub(
        r"(?m)^  summarizer_command:.*$", "  summarizer_command: ./summarise.sh", config.read_text()
    )
    config.write_text(text, encoding="utf-8")
    who = ("-c", "user.name=Alice", "-c", "user.email=alice@example.com")
    git(vault.root, *who, "commit", "-q", "-am", "a teammate's summarizer")
    running: Running = serve(vault)
    page = running.client.get("/consolidate?preview=1&only=distill")
    assert page.status_code == 200 and "summary-session-s1" in page.text
    notes = page.text.split('id="notes"')[1].split("</ul>")[0]
    (note,) = re.findall(r"<li>(.*?)</li>", notes)
    note = html.unescape(note)
    assert "consolidate.summarizer_command" in note and "built-in summarizer" in note
    assert "memvault allow-command consolidate.summarizer_command" in note
    quiet = running.client.get("/consolidate?preview=1&only=decay")  # no distill: no note
    assert 'id="notes"' not in quiet.text


def test_inspector_searches_are_not_reads(vault: Vault, serve: Any) -> None:
    from memvault.paths import ACCESS_LOG

    log = vault.root / ACCESS_LOG
    vault.recall("rate limit")  # an agent's read: logged
    before = log.read_text(encoding="utf-8")
    assert '"rate"' in before
    running: Running = serve(vault)
    for mode in ("recall", "search", "fact", "procedure"):
        page = running.client.get(f"/search?q=rate+limit+requests&mode={mode}").text
        assert 'id="hits"' in page
    assert log.read_text(encoding="utf-8") == before  # browsing moved no read count
