"""The secret scanner's keyword prefilter never hides a match its patterns would find."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.security import SECRET_KEYWORDS, SECRET_PATTERNS, find_secrets

PIECES = [
    "AKIA",
    "ASIA",
    "ghp_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "sk-",
    "sk-ant-",
    "AIza",
    "sk_live_",
    "rk_live_",
    "eyJ",
    ".eyJ",
    "https://",
    "user:",
    "@",
    "password",
    "Password",
    "API_KEY",
    "token",
    "=",
    ": ",
    "'",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----",
    " ",
    "\n",
    "0123456789ABCDEFGHIJ",
    "abcdefghijklmnopqrstuvwxyz",
    "Zz_-",
    "x" * 12,
]


def _unfiltered(text: str) -> list[tuple[str, str]]:
    out = []
    for kind, pattern in SECRET_PATTERNS.items():
        for m in re.finditer(pattern, text):
            found = m.group(0)
            out.append((kind, found[:6] + "…" if len(found) > 6 else found))
    return out


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=25).map("".join))
def test_keywords_never_hide_a_match(text):
    assert [(f.kind, f.excerpt) for f in find_secrets(text)] == _unfiltered(text)


def test_every_builtin_pattern_has_keywords():
    assert set(SECRET_KEYWORDS) == set(SECRET_PATTERNS)
    samples = {
        "private key": "-----BEGIN OPENSSH PRIVATE KEY-----",
        "AWS access key": "AKIAABCDEFGHIJKLMNOP",
        "GitHub token": "ghp_" + "a" * 36,
        "GitLab token": "glpat-" + "a" * 20,
        "Slack token": "xoxb-1234567890-abc",
        "OpenAI/Anthropic key": "sk-ant-" + "a" * 24,
        "Google API key": "AIza" + "a" * 35,
        "Stripe key": "sk_live_" + "a" * 24,
        "JWT": "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2QT4",
        "password in URL": "postgres://admin:hunter22@db",
        "password assignment": "PASSWORD = 'correcthorse'",
    }
    for kind, text in samples.items():
        assert kind in [f.kind for f in find_secrets(f"note: {text} end")], kind
