"""The memory model: fields, defaults, validation, slugs, times, scope visibility."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault import AgentIdentity, Filters, Memory
from memvault.errors import MemvaultError, Problem, ValidationError
from memvault.memory import (
    ID_RE,
    format_time,
    parse_time,
    slugify,
    to_plain,
    validate_meta,
)


def mem(
    mid: str = "x",
    mtype: str = "semantic",
    path: str | None = None,
    content: str = "",
    **meta: object,
) -> Memory:
    full = {"id": mid, "type": mtype, **meta}
    return Memory(mid, mtype, path or f"{mtype}/facts/{mid}.md", full, content)


# --- slugs and ids ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "slug"),
    [
        ("Deploy to prod!", "deploy-to-prod"),
        ("  The API rate limit is 100 req/s  ", "the-api-rate-limit-is-100-req-s"),
        ("Café déjà vu", "cafe-deja-vu"),
        ("../../etc/passwd", "etc-passwd"),
        ("日本語だけ", "memory"),
        ("", "memory"),
        (
            "one two three four five six seven eight nine ten",
            "one-two-three-four-five-six-seven-eight",
        ),
    ],
)
def test_slugify_is_readable_and_id_safe(text: str, slug: str) -> None:
    assert slugify(text) == slug
    assert ID_RE.match(slugify(text))


@given(st.text(max_size=300))
@settings(max_examples=300, deadline=None)
def test_slugify_always_gives_a_valid_id(text: str) -> None:
    slug = slugify(text)
    assert ID_RE.match(slug), slug
    assert "/" not in slug and ".." not in slug
    assert len(slug) <= 60


@pytest.mark.parametrize("bad", ["../../x", "a/b", "A", "-x", "", "x y", "x.md", "x" * 129, "é"])
def test_bad_ids_are_rejected(bad: str) -> None:
    problems = validate_meta({"id": bad, "type": "semantic"}, "semantic/facts/x.md")
    assert [p.key for p in problems] == ["id"]


# --- times ------------------------------------------------------------------------------


def test_parse_time_accepts_dates_times_and_strings() -> None:
    utc = dt.UTC
    assert parse_time("2026-01-31") == dt.datetime(2026, 1, 31, tzinfo=utc)
    assert parse_time("2026-01-31T10:00:00Z") == dt.datetime(2026, 1, 31, 10, tzinfo=utc)
    assert parse_time("2026-01-31T12:00:00+02:00") == dt.datetime(2026, 1, 31, 10, tzinfo=utc)
    assert parse_time(dt.date(2026, 1, 31)) == dt.datetime(2026, 1, 31, tzinfo=utc)
    assert parse_time(dt.datetime(2026, 1, 31, 10)) == dt.datetime(2026, 1, 31, 10, tzinfo=utc)
    assert parse_time(None) is None and parse_time("") is None
    with pytest.raises(ValueError):
        parse_time("last tuesday")
    with pytest.raises(ValueError):
        parse_time(42)


def test_format_time_is_utc_seconds() -> None:
    when = dt.datetime(2026, 1, 31, 12, 0, 0, 123456, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert format_time(when) == "2026-01-31T10:00:00Z"
    assert format_time(dt.date(2026, 1, 31)) == "2026-01-31"


def test_to_plain_converts_yaml_values() -> None:
    value = {"a": dt.date(2026, 1, 2), "b": [dt.datetime(2026, 1, 2, 3, 4, 5)], 1: None}
    assert to_plain(value) == {"a": "2026-01-02", "b": ["2026-01-02T03:04:05Z"], "1": None}
    deep: object = "x"
    for _ in range(60):
        deep = [deep]
    with pytest.raises(ValueError):
        to_plain(deep)


# --- the Memory value ----------------------------------------------------------------------


def test_memory_defaults_and_derived_fields() -> None:
    m = mem(content="\n# First line is the title\n\nbody")
    assert m.title == "First line is the title"
    assert m.scope == "team" and m.status == "active" and m.importance == 3
    assert m.category == "facts"
    assert m.tags == [] and m.subject is None
    assert mem(content="").title == "x"


def test_memory_status_follows_folder() -> None:
    assert mem(path="archive/semantic/facts/x.md").status == "archived"
    assert mem(path="inbox/semantic/facts/x.md").status == "proposed"
    assert mem(path="archive/semantic/facts/x.md", status="superseded").status == "superseded"


def test_memory_is_frozen_and_to_dict_has_path_and_content() -> None:
    m = mem(title="T", tags=["a"], content="body", x_custom=1)
    with pytest.raises(AttributeError):
        m.id = "y"  # type: ignore[misc]
    d = m.to_dict()
    assert d["path"] == "semantic/facts/x.md" and d["content"] == "body"
    assert d["x_custom"] == 1 and d["status"] == "active"
    assert "content" not in m.to_dict(with_content=False)


# --- validation -----------------------------------------------------------------------------


def test_a_complete_valid_memory_has_no_problems() -> None:
    meta = {
        "id": "release",
        "type": "procedural",
        "category": "workflows",
        "title": "Release",
        "created": "2026-01-01T00:00:00Z",
        "updated": "2026-01-02",
        "scope": "self",
        "agent": "coder",
        "team": "core",
        "channel": "slack:#ops",
        "author": "agent:coder",
        "status": "active",
        "importance": 5,
        "decay": "slow",
        "confidence": "high",
        "access_count": 0,
        "last_accessed": "2026-01-02T00:00:00Z",
        "relevance": 0.5,
        "related": ["a", "b"],
        "supersedes": "old-release",
        "tags": ["release", 2026],
        "source": {"url": "https://example.com"},
        "trigger": "release",
        "steps": ["a", {"run": "make"}],
        "success_rate": 1,
        "times_used": 3,
        "x_unknown": {"kept": True},
    }
    assert validate_meta(meta, "procedural/workflows/release.md") == []


def test_problems_carry_file_and_key() -> None:
    problems = validate_meta(
        {"id": "x", "type": "semantic", "importance": 9, "status": "gone", "success_rate": "often"},
        "semantic/facts/x.md",
    )
    texts = sorted(str(p) for p in problems)
    assert "semantic/facts/x.md: importance: expected 1-5, got 9" in texts
    assert any(t.startswith("semantic/facts/x.md: status: expected one of active|") for t in texts)
    assert any(t.startswith("semantic/facts/x.md: success_rate: expected a number") for t in texts)
    assert all(isinstance(p, Problem) and p.path == "semantic/facts/x.md" for p in problems)


def test_booleans_are_not_integers() -> None:
    problems = validate_meta({"id": "x", "type": "semantic", "importance": True}, "p.md")
    assert [p.key for p in problems] == ["importance"]


def test_error_message_format() -> None:
    exc = ValidationError("expected 1-5, got 9", "semantic/facts/x.md", "importance")
    assert str(exc) == "semantic/facts/x.md: importance: expected 1-5, got 9"
    assert isinstance(exc, MemvaultError) and exc.exit_code == 1
    assert str(MemvaultError("plain")) == "plain"


# --- scopes -----------------------------------------------------------------------------------


def test_scope_visibility() -> None:
    a = AgentIdentity(agent="a", team="red")
    b = AgentIdentity(agent="b", team="blue")
    nobody = AgentIdentity()
    mine = mem(scope="self", agent="a")
    red = mem(scope="team", team="red")
    shared = mem(scope="team")  # no team: the vault's own
    world = mem(scope="global")
    assert a.can_see(mine) and not b.can_see(mine) and not nobody.can_see(mine)
    assert a.can_see(red) and not b.can_see(red)
    assert a.can_see(shared) and b.can_see(shared) and nobody.can_see(shared)
    assert a.can_see(world) and b.can_see(world) and nobody.can_see(world)
    assert AgentIdentity(role="librarian").is_librarian and not a.is_librarian


def test_filters() -> None:
    old = mem("old", created="2020-01-01T00:00:00Z", tags=["a", "b"], category="facts")
    new = mem("new", created="2026-01-01T00:00:00Z", tags=["a"], status="superseded")
    ep = mem("ep", "episodic", path="episodic/2026/01/ep.md", created="2026-01-01")
    arch = mem("arch", path="archive/semantic/facts/arch.md")
    assert Filters().match(old) and not Filters().match(new) and not Filters().match(arch)
    assert Filters(include_archive=True).match(arch)
    assert Filters(status="any").match(new) and Filters(status="superseded").match(new)
    assert Filters(tags=["a", "b"]).match(old) and not Filters(tags=["a", "b"]).match(new)
    assert Filters(type="episodic").match(ep) and not Filters(type="episodic").match(old)
    since = parse_time("2025-01-01")
    assert not Filters(since=since).match(old) and Filters(since=since).match(ep)
    assert Filters(until=since).match(old)
    assert not Filters(since=since).match(mem("undated"))
