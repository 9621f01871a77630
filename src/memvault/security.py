"""Keep credentials out of the vault: a credential-looking span is redacted on the capture
paths (``[secret redacted: KIND]``, the rest kept) and refused where a person writes the
whole text (a memory that is only a credential, a hand edit, an import); PII is redacted
where a scope asks for it.

Patterns are deliberately specific (key formats with prefixes and lengths) so ordinary
prose doesn't trip them. ``security.patterns`` in config adds more; ``security.allow``
lists regexes whose matches are accepted anyway (e.g. a documented example key).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from .errors import ConfigError, SecretDetectedError
from .values import TYPE_CHECKING, Record, field

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

SECRET_PATTERNS: dict[str, str] = {
    # The whole block (through its END line, else the base64 lines after the header): a
    # redacted header alone would keep the key itself.
    "private key": (
        r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY(?: BLOCK)?-----"
        r"(?:[\s\S]*?-----END (?:[A-Z]+ )?PRIVATE KEY(?: BLOCK)?-----|(?:\s*[A-Za-z0-9+/=]{16,})*)"
    ),
    "AWS access key": r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    "GitHub token": r"\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}\b",
    "GitLab token": r"\bglpat-[A-Za-z0-9_-]{20,}\b",
    "Slack token": r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b",
    "OpenAI/Anthropic key": r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b",
    "Google API key": r"\bAIza[0-9A-Za-z_-]{35}\b",
    "Stripe key": r"\b[rs]k_live_[0-9A-Za-z]{20,}\b",
    "JWT": r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b",
    "password in URL": r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]{3,}@",
    # A key naming a secret (DB_PASSWORD, 'client_secret', ["SECRET_KEY"]) given a value
    # that is a literal: quoted (6+ characters), or bare (8+) and neither a plain identifier
    # nor code or markup (a call, an attribute, an index, a tag): ``password =
    # request.form['password']``, ``password = db.Column(...)`` and ``<label>Password:</label>``
    # are not credentials.
    "password assignment": (
        r"(?i)\b(?:[a-z0-9]+[_-])*(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|token)"
        r"(?:[_-][a-z0-9]+)*['\"]?\]?\s*[:=]\s*"
        r"(?:(['\"])[^\s'\"]{6,}\1|(?![a-z_]+\b)[^\s'\"()\[\]{}<>.,;]{8,}(?![\w.(\[]))"
    ),
}

# Literal strings one of which every match of a pattern contains (lower-cased text), as
# secret scanners do with "keywords": a pattern is compiled and run only when one is there.
# Most memories hold none, and compiling every pattern would cost more than the write.
SECRET_KEYWORDS: dict[str, tuple[str, ...]] = {
    "private key": ("private key",),
    "AWS access key": ("akia", "asia"),
    "GitHub token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "GitLab token": ("glpat-",),
    "Slack token": ("xox",),
    "OpenAI/Anthropic key": ("sk-",),
    "Google API key": ("aiza",),
    "Stripe key": ("k_live_",),
    "JWT": ("eyj",),
    "password in URL": ("://",),
    "password assignment": (
        "password",
        "passwd",
        "pwd",
        "secret",
        "access_key",
        "access-key",
        "accesskey",
        "api_key",
        "api-key",
        "apikey",
        "token",
    ),
}

PII_PATTERNS: dict[str, str] = {
    "email": r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b",
    "phone": r"(?<!\w)\+?\d[\d ()-]{7,}\d(?!\w)",
}


class Finding(Record, frozen=True):
    """A credential-looking span: its kind and a short excerpt (never the whole secret)."""

    kind: str
    excerpt: str


def _compile(patterns: Iterable[Any], key: str) -> list[re.Pattern[str]]:
    out = []
    for i, pattern in enumerate(patterns):
        try:
            out.append(re.compile(str(pattern)))
        except re.error as exc:
            raise ConfigError(
                f"invalid regex: {exc}", ".memvault/config.yaml", f"{key}[{i}]"
            ) from None
    return out


def _secret_spans(text: str, config: Mapping[str, Any] | None) -> list[tuple[str, re.Match[str]]]:
    """Every credential-looking match in ``text`` that no allow-list regex accepts, with its
    kind, in pattern order."""
    config = config or {}
    allow = _compile(config.get("allow") or [], "security.allow")
    patterns = dict(SECRET_PATTERNS)
    for i, extra in enumerate(config.get("patterns") or []):
        patterns[f"custom pattern {i + 1}"] = str(extra)
    spans: list[tuple[str, re.Match[str]]] = []
    lowered = text.lower()
    for kind, pattern in patterns.items():
        keywords = SECRET_KEYWORDS.get(kind) if kind in SECRET_PATTERNS else None
        if keywords and not any(k in lowered for k in keywords):
            continue
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise ConfigError(
                f"invalid regex: {exc}", ".memvault/config.yaml", "security.patterns"
            ) from None
        for match in regex.finditer(text):
            if not any(a.search(match.group(0)) for a in allow):
                spans.append((kind, match))
    return spans


def _finding(kind: str, found: str) -> Finding:
    return Finding(kind, found[:6] + "…" if len(found) > 6 else found)


def find_secrets(text: str, config: Mapping[str, Any] | None = None) -> list[Finding]:
    """Credential-looking spans in ``text`` that no allow-list regex accepts."""
    return [_finding(kind, match.group(0)) for kind, match in _secret_spans(text, config)]


def redact_secrets(text: str, config: Mapping[str, Any] | None = None) -> tuple[str, list[Finding]]:
    """``text`` with each credential-looking span replaced by ``[secret redacted: KIND]``,
    and what was found: the rest of the text is kept (a turn that mentions a password is
    still a turn of the conversation). Overlapping matches are redacted once, as the
    earliest and longest."""
    spans = sorted(
        _secret_spans(text, config), key=lambda s: (s[1].start(), -(s[1].end() - s[1].start()))
    )
    out: list[str] = []
    found: list[Finding] = []
    at = 0
    for kind, match in spans:
        if match.start() < at:
            continue  # inside a span already redacted
        out.append(text[at : match.start()])
        out.append(f"[secret redacted: {kind}]")
        found.append(_finding(kind, match.group(0)))
        at = match.end()
    out.append(text[at:])
    return "".join(out), found


MARKER_RE = re.compile(r"\[secret redacted: [^\]]*\]")


class Redactions(Record):
    """What redaction did to the texts of one file: spans per kind, texts touched, and
    where the first touched text was (``file:line`` of an ingested transcript)."""

    kinds: dict[str, int] = field(default_factory=dict)
    texts: int = 0
    first: str = ""

    @property
    def spans(self) -> int:
        return sum(self.kinds.values())

    def redact(self, text: str, config: Mapping[str, Any] | None, where: str = "") -> str:
        """``text`` with its credential-looking spans replaced (see :func:`redact_secrets`),
        counted here."""
        clean, found = redact_secrets(text, config)
        if found:
            self.texts += 1
            self.first = self.first or where
            for finding in found:
                self.kinds[finding.kind] = self.kinds.get(finding.kind, 0) + 1
        return clean

    def note(self, where: str, unit: str = "turn") -> str | None:
        """One line on what was redacted in ``where`` (None when nothing was). Says nothing
        of how to keep the text verbatim: each door says that its own way."""
        if not self.kinds:
            return None
        what = ", ".join(f"{n} {kind}" for kind, n in self.kinds.items())
        if unit == "memory":
            return (
                f"{where}: redacted {self.spans} secret-looking span(s) ({what}); "
                "the rest of the memory is kept"
            )
        return (
            f"{where}: redacted {self.spans} secret-looking span(s) in {self.texts} {unit}(s)"
            f" ({what}); the {unit}s are kept"
        )


def only_a_secret(original: str, redacted: str) -> bool:
    """Whether a text was little besides the credential it held: fewer than four words of
    its own are left once the markers are out, or the credential spans were at least half
    of its characters. Such a memory is refused rather than kept as a bare marker."""
    rest = MARKER_RE.sub(" ", redacted)
    words = re.findall(r"[^\W\d_]{2,}", rest)
    kept = len("".join(rest.split()))
    return len(words) < 4 or kept * 2 <= len("".join(original.split()))


def secrets_allowed(config: Mapping[str, Any] | None, allow: bool = False) -> bool:
    """Whether credential-looking text is kept as it is (``allow_secrets``, or config
    ``security.secrets: allow``)."""
    return allow or (config or {}).get("secrets") == "allow"


def check_secrets(
    text: str, where: str, config: Mapping[str, Any] | None, allow: bool = False
) -> None:
    """Raise :class:`SecretDetectedError` if ``text`` looks like it holds a credential."""
    if secrets_allowed(config, allow):
        return
    findings = find_secrets(text, config)
    if findings:
        first = findings[0]
        raise SecretDetectedError(
            f"looks like a {first.kind} ({first.excerpt}); refused. "
            "Remove it, or allow-list it in security.allow",
            where,
            "content",
        )


def redact(text: str, kinds: Iterable[str]) -> str:
    """Replace emails / phone numbers with ``[email]`` / ``[phone]``."""
    for kind in kinds:
        pattern = PII_PATTERNS.get(kind)
        if pattern:
            text = re.sub(pattern, f"[{kind}]", text)
    return text
