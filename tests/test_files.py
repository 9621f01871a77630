"""The file layer: parsing, rendering, surgical rewrites and atomic writes.

Loading and saving an untouched hand-written file must be byte-identical; a rewrite
changes only the keys it means to change. Hypothesis checks the parser/writer pair.
"""

from __future__ import annotations

import datetime as dt
import difflib
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memvault.errors import ValidationError
from memvault.memory import validate_meta
from memvault.store.files import (
    atomic_write,
    check_text,
    load_document,
    new_memory,
    parse_text,
    render_new,
    update_text,
)

from helpers import assert_same_memory

HAND_WRITTEN = """\
---
# A fact I wrote by hand. Keep this comment.
type: semantic
id: deploy-window            # unique id
title: Deploys only Tuesday to Thursday

tags:
- deploy
- release     # trailing comment
importance: 4
x-reviewer: alice            # unknown key, kept
subject: deploy.window
category: constraints
---

We never deploy on Mondays or Fridays.

  Indented line, and a trailing blank line follows.

"""

HAND_WRITTEN_YAML = """\
# A procedure stored as plain YAML
id: rollback
type: procedural
category: workflows
steps:
  - Stop the deploy        # first
  - Revert the tag
trigger: [rollback, revert]

content: |
  Roll back when error rate > 2%.
  Then write an episode.
"""

CASES = {
    "md": ("semantic/constraints/deploy-window.md", HAND_WRITTEN),
    "md-crlf": ("semantic/constraints/deploy-window.md", HAND_WRITTEN.replace("\n", "\r\n")),
    "md-bom": ("semantic/constraints/deploy-window.md", "\ufeff" + HAND_WRITTEN),
    "md-bom-crlf": (
        "semantic/constraints/deploy-window.md",
        "\ufeff" + HAND_WRITTEN.replace("\n", "\r\n"),
    ),
    "yaml": ("procedural/workflows/rollback.yaml", HAND_WRITTEN_YAML),
    "yaml-crlf": ("procedural/workflows/rollback.yaml", HAND_WRITTEN_YAML.replace("\n", "\r\n")),
    "yml-bom": ("procedural/workflows/rollback.yml", "\ufeff" + HAND_WRITTEN_YAML),
    "no-body": ("semantic/facts/x.md", "---\nid: x\ntype: semantic\n---\n"),
    "no-trailing-newline": ("semantic/facts/x.md", "---\nid: x\ntype: semantic\n---\nbody"),
}


# --- round-trip of untouched files -----------------------------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_untouched_file_round_trips_byte_identical(name: str, tmp_path: Path) -> None:
    rel, text = CASES[name]
    doc = parse_text(text, rel)
    assert doc.text() == text
    assert update_text(doc, {}) == text
    # and through the disk: load, save, compare bytes
    path = tmp_path / rel
    path.parent.mkdir(parents=True)
    path.write_bytes(text.encode("utf-8"))
    before = path.read_bytes()
    loaded = load_document(path, rel)
    atomic_write(path, update_text(loaded, {}))
    assert path.read_bytes() == before


def test_hand_written_file_parses_all_keys() -> None:
    doc = parse_text(HAND_WRITTEN, "semantic/constraints/deploy-window.md")
    memory = check_text(HAND_WRITTEN, "semantic/constraints/deploy-window.md")
    assert doc.meta["tags"] == ["deploy", "release"]
    assert memory.meta["x-reviewer"] == "alice"  # unknown key kept
    assert memory.id == "deploy-window"
    assert memory.category == "constraints"
    assert memory.content.startswith("We never deploy on Mondays or Fridays.")


def test_yaml_memory_content_key() -> None:
    memory = check_text(HAND_WRITTEN_YAML, "procedural/workflows/rollback.yaml")
    assert memory.type == "procedural"
    assert memory.content == "Roll back when error rate > 2%.\nThen write an episode.\n"
    assert "content" not in memory.meta
    assert memory.meta["steps"] == ["Stop the deploy", "Revert the tag"]


def test_bom_and_crlf_parse_like_plain_text() -> None:
    rel = "semantic/constraints/deploy-window.md"
    plain = parse_text(HAND_WRITTEN, rel)
    odd = parse_text("\ufeff" + HAND_WRITTEN.replace("\n", "\r\n"), rel)
    assert odd.meta == plain.meta
    assert odd.content.replace("\r\n", "\n") == plain.content


# --- surgical rewrites -------------------------------------------------------------------


def _diff(a: str, b: str) -> tuple[list[str], list[str]]:
    removed, added = [], []
    for line in difflib.ndiff(a.splitlines(), b.splitlines()):
        if line.startswith("- "):
            removed.append(line[2:])
        elif line.startswith("+ "):
            added.append(line[2:])
    return removed, added


def test_rewrite_changes_only_the_intended_keys() -> None:
    rel = "semantic/constraints/deploy-window.md"
    doc = parse_text(HAND_WRITTEN, rel)
    new = update_text(doc, {"importance": 5, "status": "superseded", "superseded_by": "other-id"})
    removed, added = _diff(HAND_WRITTEN, new)
    assert removed == ["importance: 4"]
    assert added == ["importance: 5", "status: superseded", "superseded_by: other-id"]
    reparsed = parse_text(new, rel)
    assert reparsed.meta == {
        **doc.meta,
        "importance": 5,
        "status": "superseded",
        "superseded_by": "other-id",
    }
    assert reparsed.body == doc.body


def test_rewrite_keeps_crlf_and_bom() -> None:
    rel = "semantic/constraints/deploy-window.md"
    text = "\ufeff" + HAND_WRITTEN.replace("\n", "\r\n")
    new = update_text(parse_text(text, rel), {"importance": 2, "valid_to": "2026-01-01T00:00:00Z"})
    assert new.startswith("\ufeff---\r\n")
    assert "\n" not in new.replace("\r\n", "")  # every newline is still CRLF
    removed, added = _diff(text, new)
    assert removed == ["importance: 4"]
    assert added == ["importance: 2", "valid_to: 2026-01-01T00:00:00Z"]


def test_rewrite_of_a_block_list_replaces_the_whole_list() -> None:
    rel = "semantic/constraints/deploy-window.md"
    doc = parse_text(HAND_WRITTEN, rel)
    new = update_text(doc, {"tags": ["ops"]})
    reparsed = parse_text(new, rel)
    assert reparsed.meta["tags"] == ["ops"]
    assert "release     # trailing comment" not in new
    assert "# A fact I wrote by hand. Keep this comment." in new
    assert "x-reviewer: alice            # unknown key, kept" in new


def test_delete_a_key_with_none() -> None:
    rel = "semantic/constraints/deploy-window.md"
    doc = parse_text(HAND_WRITTEN, rel)
    new = update_text(doc, {"subject": None})
    removed, added = _diff(HAND_WRITTEN, new)
    assert removed == ["subject: deploy.window"] and added == []
    assert "subject" not in parse_text(new, rel).meta


def test_rewrite_body_only() -> None:
    rel = "semantic/constraints/deploy-window.md"
    doc = parse_text(HAND_WRITTEN, rel)
    new = update_text(doc, {}, content="Deploys are fine on any weekday now.")
    assert new.split("---\n")[1] == doc.head
    assert parse_text(new, rel).content == "Deploys are fine on any weekday now.\n"


def test_yaml_rewrite_keeps_comments() -> None:
    rel = "procedural/workflows/rollback.yaml"
    doc = parse_text(HAND_WRITTEN_YAML, rel)
    new = update_text(doc, {"times_used": 3})
    removed, added = _diff(HAND_WRITTEN_YAML, new)
    assert removed == []
    assert added == ["times_used: 3"]
    assert parse_text(new, rel).meta["times_used"] == 3


# --- atomic writes -----------------------------------------------------------------------


def test_atomic_write_leaves_no_temp_file_and_keeps_bytes(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b.md"
    atomic_write(target, "line\r\nline2\n")
    assert target.read_bytes() == b"line\r\nline2\n"
    assert [p.name for p in target.parent.iterdir()] == ["b.md"]


def test_atomic_write_failure_keeps_old_file(tmp_path: Path) -> None:
    target = tmp_path / "b.md"
    target.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        atomic_write(target, "bad \udc80 surrogate")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["b.md"]


# --- parser errors -----------------------------------------------------------------------

BAD_TEXTS = {
    "empty": ("", None, "empty"),
    "blank": ("\n\n  \n", None, "empty"),
    "no front matter": ("just text\n", None, "front matter"),
    "unclosed": ("---\nid: x\ntype: semantic\n", None, "not closed"),
    "malformed yaml": ("---\nid: x\ntype: [semantic\n---\nbody\n", None, "invalid YAML"),
    "not a mapping": ("---\n- a\n- b\n---\n", None, "mapping"),
    "alias bomb": (
        "---\nid: x\ntype: semantic\n"
        "a: &a [lol, lol, lol]\nb: &b [*a, *a, *a]\nc: &c [*b, *b, *b]\n---\n",
        None,
        "alias",
    ),
    "duplicate key": ("---\nid: x\nid: y\ntype: semantic\n---\n", None, "duplicate"),
    "nul bytes": ("---\nid: x\x00\ntype: semantic\n---\n", None, "binary"),
}


@pytest.mark.parametrize("name", sorted(BAD_TEXTS))
def test_parse_errors_name_the_file(name: str) -> None:
    text, key, needle = BAD_TEXTS[name]
    rel = "semantic/facts/bad.md"
    with pytest.raises(ValidationError) as info:
        check_text(text, rel)
    message = str(info.value)
    assert message.startswith(rel + ": ")
    assert needle.lower() in message.lower()
    assert "\n" not in message


@pytest.mark.parametrize(
    ("extra", "key", "needle"),
    [
        ("importance: 9", "importance", "expected 1-5, got 9"),
        ("importance: high", "importance", "expected an integer"),
        ("tags: api", "tags", "expected a list, got a string"),
        ("scope: everyone", "scope", "self|team|global"),
        ("created: yesterday", "created", "ISO-8601"),
        ("relevance: 2.0", "relevance", "expected"),
        ("related: [../../x]", "related", "expected memory id"),
        ("category: gossip", "category", "facts"),
        ("scope: self", "agent", "missing"),
    ],
)
def test_wrong_types_name_file_and_key(extra: str, key: str, needle: str) -> None:
    rel = "semantic/facts/x.md"
    with pytest.raises(ValidationError) as info:
        check_text(f"---\nid: x\ntype: semantic\n{extra}\n---\nbody\n", rel)
    assert str(info.value).startswith(f"{rel}: {key}: ")
    assert needle in str(info.value)


@pytest.mark.parametrize(
    ("head", "key"),
    [
        ("type: semantic", "id"),
        ("id: x", "type"),
        ("id: ../../x\ntype: semantic", "id"),
        ("id: X_Upper\ntype: semantic", "id"),
        ("id: 42\ntype: semantic", "id"),
        ("id: x\ntype: opinion", "type"),
    ],
)
def test_missing_or_bad_identity(head: str, key: str) -> None:
    rel = "semantic/facts/x.md"
    with pytest.raises(ValidationError) as info:
        check_text(f"---\n{head}\n---\n", rel)
    assert str(info.value).startswith(f"{rel}: {key}: ")


def test_every_problem_is_reported() -> None:
    rel = "semantic/facts/x.md"
    with pytest.raises(ValidationError) as info:
        check_text(
            "---\nid: x\ntype: semantic\nimportance: 9\ntags: a\ndecay: sometimes\n---\n", rel
        )
    keys = sorted(p.key for p in info.value.problems)
    assert keys == ["decay", "importance", "tags"]


# --- hypothesis: the parser/writer pair -----------------------------------------------------

# Strings YAML finds awkward: reserved words, indicators, times, numbers, line breaks.
TRICKY = st.sampled_from(
    [
        "yes",
        "no",
        "null",
        "~",
        "true",
        "False",
        "1.0",
        "0x10",
        "1e3",
        ".inf",
        "2020-01-01",
        "2020-01-01T10:00",
        "2020-01-01T10:00:00Z",
        "- a",
        "a: b",
        "#x",
        "a #b",
        "'q'",
        '"q"',
        "...",
        "---",
        "",
        " ",
        " lead",
        "trail ",
        "\ta",
        "@x",
        "`x",
        "%x",
        "!x",
        "&x",
        "*x",
        "{a}",
        "[a]",
        "|",
        ">",
        "?",
        "é",
        "\ufeff",
        "\\",
        "<<",
        "a\nb",
        "a\nb\n",
        "\n",
        "a\n\n",
        "\nlead",
        " a\nb",
        "a \nb",
        "a\r\nb",
        "a\rb",
        "a\x85b",
        "a\u2028b",
        "bell\x07",
        "---\nid: y",
        "a\n---\nb",
    ]
)
CHARS = st.one_of(
    st.sampled_from(list("\n\r\t #:-'\"|>.*&!%@`[]{},?\\")),
    st.characters(codec="utf-8", exclude_categories=("Cs",)),
)
TEXT = st.one_of(
    TRICKY, st.text(alphabet=CHARS, max_size=30), st.lists(TRICKY, max_size=3).map("".join)
)
SAFE_KEY = st.from_regex(r"\Ax_[a-z][a-z0-9_]{0,12}\Z")
SCALAR = st.one_of(
    TEXT,
    st.integers(min_value=-(10**12), max_value=10**12),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
)
VALUE = st.one_of(
    SCALAR,
    st.lists(SCALAR, max_size=4),
    st.dictionaries(st.from_regex(r"\A[a-z]{1,8}\Z"), SCALAR, max_size=3),
)
# tags and subjects as people write them: 'api', 'lang:python', 'c++', 'v1.2', 'team/ops'
WORD = st.text(
    alphabet=string.ascii_lowercase + string.digits + " .-:/@+_", min_size=1, max_size=30
).filter(lambda s: s.strip() == s)
KNOWN = st.fixed_dictionaries(
    {},
    optional={
        "title": TEXT.filter(lambda s: s.strip() != ""),
        "subject": WORD,
        "importance": st.integers(1, 5),
        "scope": st.sampled_from(["team", "global"]),
        "tags": st.lists(WORD, max_size=4),
        "decay": st.sampled_from(["fast", "normal", "slow", "never"]),
        "relevance": st.floats(0, 1),
        "status": st.sampled_from(["active", "superseded"]),
        "created": st.datetimes(min_value=dt.datetime(1900, 1, 1)).map(
            lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")
        ),
        "steps": st.lists(TEXT.filter(lambda s: s.strip() != ""), min_size=1, max_size=3),
    },
)


@st.composite
def metas(draw: st.DrawFn) -> dict[str, object]:
    meta: dict[str, object] = {
        "id": draw(st.from_regex(r"\A[a-z0-9][a-z0-9-]{0,30}\Z")),
        "type": "semantic",
    }
    meta.update(draw(KNOWN))
    meta.update(draw(st.dictionaries(SAFE_KEY, VALUE, max_size=4)))
    return meta


BODY = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("\n\t-#:`")),
        st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
    ),
    max_size=200,
)


def _expected_body(content: str) -> str:
    return content if content.endswith("\n") or not content else content + "\n"


def _norm(meta: dict[str, object]) -> dict[str, object]:
    """What a new file reads back as: empty values are not written."""
    return {k: v for k, v in meta.items() if v is not None and v != []}


PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(meta=metas(), content=BODY)
def test_render_then_parse_gives_back_meta_and_content(
    meta: dict[str, object], content: str
) -> None:
    assume(not content.startswith(("\n", "\r")))
    rel = f"semantic/facts/{meta['id']}.md"
    text = render_new(meta, content)
    doc = parse_text(text, rel)
    assert doc.meta == _norm(meta)
    assert doc.content == _expected_body(content)
    # an untouched file is a fixed point of the writer
    assert update_text(doc, {}) == text


@PROPERTY
@given(meta=metas(), content=TEXT)
def test_yaml_format_render_then_parse(meta: dict[str, object], content: str) -> None:
    rel = f"semantic/facts/{meta['id']}.yaml"
    text = render_new(meta, content, fmt="yaml")
    doc = parse_text(text, rel)
    assert {k: v for k, v in doc.meta.items() if k != "content"} == _norm(meta)
    assert doc.content == content
    assert update_text(doc, {}) == text


CHANGE_KEY = SAFE_KEY | st.sampled_from(["importance", "title", "tags", "status", "subject"])


@st.composite
def changes_for(draw: st.DrawFn, meta: dict[str, object]) -> dict[str, object | None]:
    keys = draw(st.lists(CHANGE_KEY | st.sampled_from(sorted(meta)), max_size=5, unique=True))
    out: dict[str, object | None] = {}
    for key in keys:
        if key in ("id", "type"):
            continue
        if draw(st.integers(0, 4)) == 0:
            out[key] = None  # delete
        elif key == "importance":
            out[key] = draw(st.integers(1, 5))
        elif key in ("title", "subject"):
            out[key] = draw(TEXT.filter(lambda s: s.strip() != ""))
        elif key in ("tags", "steps"):
            out[key] = draw(st.lists(WORD, min_size=1, max_size=3))
        elif key == "status":
            out[key] = draw(st.sampled_from(["active", "superseded", "archived"]))
        else:
            out[key] = draw(VALUE)
    return out


@PROPERTY
@given(data=st.data(), meta=metas(), body=BODY)
def test_update_then_parse_gives_new_values_and_keeps_the_rest(
    data: st.DataObject, meta: dict[str, object], body: str
) -> None:
    assume(not body.startswith(("\n", "\r")))
    rel = f"semantic/facts/{meta['id']}.md"
    doc = parse_text(render_new(meta, body), rel)
    changes = data.draw(changes_for(doc.meta))
    new = parse_text(update_text(doc, changes), rel)
    expected = dict(doc.meta)
    for key, value in changes.items():
        if value is None:
            expected.pop(key, None)
        elif value == [] and key not in expected:
            continue  # memvault doesn't add empty keys
        else:
            expected[key] = value
    assert new.meta == expected
    assert new.body == doc.body
    # keys that did not change keep their exact lines
    old_lines = set(doc.head.splitlines())
    for key in set(doc.meta) - set(changes):
        line = next(
            candidate for candidate in doc.head.splitlines() if candidate.startswith(f"{key}:")
        )
        assert line in old_lines and line in new.head.splitlines()


@PROPERTY
@given(meta=metas())
def test_update_with_nothing_is_identity_on_hand_styled_files(meta: dict[str, object]) -> None:
    """Rendered files restyled by hand (comments, CRLF, BOM) survive an empty update."""
    rel = f"semantic/facts/{meta['id']}.md"
    text = render_new(meta, "body\n")
    head, _, body = text[4:].partition("---\n")
    styled = (
        "\ufeff---\r\n# hand comment\r\n"
        + head.replace("\n", "\r\n")
        + "---\r\n"
        + body.replace("\n", "\r\n")
    )
    doc = parse_text(styled, rel)
    assert doc.meta == parse_text(text, rel).meta
    assert update_text(doc, {}) == styled


# --- regressions and known bugs: awkward strings ------------------------------------------

AWKWARD = {
    "no final newline": "line one\nline two",  # once read back with an extra '\n'
    "trailing blank line": "line one\n\n",  # once wrote a '...' marker into the front matter
    "only a newline": "\n",
    "control character": "bell \x07\nline two\n",  # once rendered as invalid YAML
    "NEL": "a\x85b",  # a YAML line break: once read back as a space
    "CR": "a\rb",
    "BOM inside": "a\ufeffb",
    "fence inside": "a\n---\nid: other\n",
}


@pytest.mark.parametrize("name", sorted(AWKWARD))
def test_awkward_strings_round_trip(name: str) -> None:
    value = AWKWARD[name]
    meta = {"id": "x", "type": "semantic", "x_note": value}
    rel = "semantic/facts/x.md"
    doc = parse_text(render_new(meta, "body\n"), rel)
    assert doc.meta["x_note"] == value
    again = parse_text(update_text(doc, {"importance": 2}), rel)
    assert again.meta["x_note"] == value
    rewritten = parse_text(update_text(doc, {"x_note": value, "x_other": value}), rel)
    assert rewritten.meta["x_note"] == value and rewritten.meta["x_other"] == value


def test_trailing_spaces_after_a_newline_survive_an_appended_key() -> None:
    rel = "semantic/facts/x.md"
    doc = parse_text(
        render_new({"id": "x", "type": "semantic", "x_note": "a\n  \n"}, "body\n"), rel
    )
    again = parse_text(update_text(doc, {"importance": 2}), rel)
    assert again.meta["x_note"] == "a\n  \n"


# Each of these once broke a file (found by the property tests above).
REGRESSIONS: dict[str, object] = {
    "colon in a flow list item": [
        "lang:python",
        "http://x.org/a",
    ],  # '[lang:python]' is invalid YAML
    "time in a flow list": ["2020-01-01T10:00:00Z"],
    "block starting with a tab": "\tindented\nsecond",  # literal block can't start with a tab
    "time with a newline": "2020-01-01\n",  # '$' matched before the newline: written as a bare date
    "number-like 0.": "0.",  # YAML reads 0. as a float
    "number-like 1.": ["1."],
    "binary-looking": "0b101",
    "nested CRLF": {"k": "a\r\nb"},  # nested strings went through a literal block: CR lost
    "nested NEL": ["a\x85b", "c"],
    "nested control character": {"k": "a\nb\x07"},
    "nested fence": [1, "a\n\n---\nid: y"],
    "block ending in a hash line": "notes\n# heading\n",  # the '#' line was taken for a comment
    "block ending in a hash, no newline": "~\n#x",
    "block ending in spaces": "a\n\n ",  # an appended key landed inside the block
}


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_regressions_round_trip(name: str) -> None:
    value = REGRESSIONS[name]
    rel = "semantic/facts/x.md"
    doc = parse_text(render_new({"id": "x", "type": "semantic", "x_v": value}, "body\n"), rel)
    assert doc.meta["x_v"] == value
    assert parse_text(update_text(doc, {"importance": 2}), rel).meta["x_v"] == value
    assert parse_text(update_text(doc, {"x_v": value, "x_w": value}), rel).meta["x_w"] == value
    assert parse_text(update_text(doc, {"x_v": value}), rel).meta["x_v"] == value


def test_yaml_memory_content_ending_in_a_hash_line_can_be_replaced() -> None:
    rel = "procedural/workflows/x.yaml"
    text = "id: x\ntype: procedural\ncontent: |\n  Steps below.\n  #ops\n"
    doc = parse_text(text, rel)
    new = parse_text(update_text(doc, {}, content="Replaced.\n"), rel)
    assert new.content == "Replaced.\n"
    assert new.meta["id"] == "x"


def test_comments_after_a_block_scalar_stay_put() -> None:
    rel = "semantic/facts/x.md"
    text = "---\nid: x\ntype: semantic\nnotes: |\n  first\n# about importance\nimportance: 3\n---\n"
    new = update_text(parse_text(text, rel), {"notes": "second\n"})
    expected = (
        "---\nid: x\ntype: semantic\nnotes: |\n  second\n# about importance\nimportance: 3\n---\n"
    )
    assert new == expected


# --- new_memory: what a write records without parsing its own output back ---------------

_values = st.one_of(
    st.integers(min_value=-(10**12), max_value=10**12),
    st.booleans(),
    st.text(max_size=40),
    st.sampled_from(
        [
            "2026-11-30T01:02:03Z",
            "2026-11-30",
            "2026-11-30T01:02",
            "yes",
            "null",
            "~",
            "1e3",
            "0x1F",
            "-",
            "a: b",
            "#x",
            "'q'",
        ]
    ),
    st.lists(
        st.one_of(
            st.text(max_size=12), st.sampled_from(["2026-01-01", "true", "12", "a,b", "x y"])
        ),
        max_size=4,
    ),
    st.floats(allow_nan=False),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    extra=st.dictionaries(
        st.sampled_from(
            ["title", "tags", "importance", "subject", "source", "outcome", "x_custom", "channel"]
        ),
        _values,
        max_size=5,
    ),
    content=st.text(max_size=80),
)
def test_new_memory_equals_parsing_the_rendered_text(extra, content):
    meta = {"id": "m-1", "type": "episodic", "created": "2026-11-30T01:02:03Z", **extra}
    if validate_meta(meta, "episodic/2026/11/m-1.md"):
        return  # writes validate the metadata before rendering it
    text = render_new(meta, content)
    try:
        parsed = check_text(text, "episodic/2026/11/m-1.md")
    except ValidationError:
        parsed = None
    quick = new_memory(meta, content, "episodic/2026/11/m-1.md")
    if quick is None:
        return  # it declined: the write parses the text instead
    assert parsed is not None, text
    assert_same_memory(quick, parsed, text)


def test_new_memory_vouches_for_the_common_case():
    meta = {
        "id": "rate-limit",
        "type": "semantic",
        "created": "2026-11-30T01:02:03Z",
        "tags": ["api", "limits"],
        "importance": 3,
        "scope": "team",
    }
    quick = new_memory(meta, "The API allows 100 req/s", "semantic/facts/rate-limit.md")
    assert quick is not None
    assert quick == check_text(
        render_new(meta, "The API allows 100 req/s"), "semantic/facts/rate-limit.md"
    )
    assert (
        new_memory({**meta, "confidence": 0.5}, "x", "semantic/facts/rate-limit.md") is None
    )  # floats: parse
