"""The resident process's wire format (memvault.resident.wire): whatever a command line can
hold arrives as it was sent, and anything else is refused, never half-read."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.resident import wire


# What a process can hold: bytes without a NUL (an argument, a variable, a path), which
# Python reads with surrogateescape (bytes that are not UTF-8 become U+DC80..U+DCFF).
def _decoded(raw: bytes) -> str:
    return raw.replace(b"\0", b"").decode("utf-8", "surrogateescape")


text = st.binary(max_size=40).map(_decoded) | st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=20
)
name = text.filter(lambda n: n != "" and "=" not in n)
flags = st.tuples(st.booleans(), st.booleans(), st.booleans())


@given(
    root=text,
    argv=st.lists(text, max_size=8),
    cwd=text,
    env=st.dictionaries(name, text, max_size=8),
    stdin=st.none() | st.binary(max_size=200),
    tty=flags,
    encoding=st.tuples(text, text, text),
)
def test_a_request_arrives_as_it_was_sent(
    root: str,
    argv: list[str],
    cwd: str,
    env: dict[str, str],
    stdin: bytes | None,
    tty: tuple[bool, bool, bool],
    encoding: tuple[str, str, str],
) -> None:
    raw = wire.request(root, argv, cwd, env, stdin, tty, encoding)
    assert wire.read_request(raw) == {
        "root": root,
        "argv": argv,
        "cwd": cwd,
        "env": env,
        "stdin": stdin,
        "tty": tty,
        "encoding": encoding,
    }


def test_undecodable_bytes_and_nul_in_stdin_survive() -> None:
    arg = b"caf\xe9 \xff".decode("utf-8", "surrogateescape")
    stdin = b'{"prompt": "a\x00b"}\x00\xff'
    got = wire.read_request(
        wire.request(
            "/v", ["add", "fact", arg], "/", {"X": "a=b"}, stdin, (True,) * 3, ("utf-8",) * 3
        )
    )
    assert got["argv"][2] == arg and got["stdin"] == stdin and got["env"] == {"X": "a=b"}


def test_what_bytes_cannot_carry_is_refused_not_sent() -> None:
    """A ValueError: the command line then runs the command itself."""
    with pytest.raises(ValueError, match="NUL"):
        wire.request("/v", ["a\0b"], "/", {}, None, (False,) * 3, ("utf-8",) * 3)
    with pytest.raises(ValueError):  # a lone surrogate no bytes decode to
        wire.request("/v", ["\ud800"], "/", {}, None, (False,) * 3, ("utf-8",) * 3)


def _good() -> bytes:
    return wire.request("/v", ["recall", "x"], "/", {"A": "1"}, None, (False,) * 3, ("u",) * 3)


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b'{"root": "/v", "argv": ["recall"]}',  # an older memvault's JSON request
        _good()[:-1],  # cut before the stdin marker
        _good()[: len(_good()) // 2],  # cut in the middle
        _good() + b"x",  # something after "no stdin"
        _good().replace(b"\x002\x00recall", b"\x005\x00recall"),  # more arguments than sent
        _good().replace(b"\x00000\x00", b"\x0002\x00"),  # bad terminal flags
        _good().replace(b"A=1", b"A1"),  # a variable without "="
    ],
)
def test_anything_but_a_whole_request_is_refused(raw: bytes) -> None:
    with pytest.raises(ValueError):
        wire.read_request(raw)


def test_an_answer_round_trips_and_a_cut_one_is_refused() -> None:
    raw = wire.answer(3, b"out\n\x00", b"err")
    assert wire.read_answer(raw) == (3, b"out\n\x00", b"err")
    assert wire.read_answer(wire.answer(None)) == (None, b"", b"")
    for bad in (raw[:-1], raw + b"!", b"", b"0 1\n", b'{"code": 0, "out": 0, "err": 0}\nx'):
        with pytest.raises(ValueError):
            wire.read_answer(bad)
