"""Reading a request's parameters: each one checked against what it may be, before the vault
sees it. A bad value is a :class:`~memvault.ui.security.Refusal` naming the parameter and
what was expected; an id is only ever looked up through the vault, never joined to a path."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from .. import ID_RE, SCOPES, STATUSES, TYPES
from .security import Refusal, has_dot_dot

if TYPE_CHECKING:  # pragma: no cover
    from starlette.datastructures import FormData
    from starlette.requests import Request

    from .session import Session

MAX_TEXT = 200  # a facet value, a tag, a category
MAX_QUERY = 1000
HEX = re.compile(r"^[0-9a-f]{4,64}$")
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# Notices a redirect may ask a page to show (a key, so a URL cannot put words on the page).
NOTICES = {
    "edited": "Saved.",
    "unchanged": "No changes: nothing committed.",
    "forgot": "Forgotten: the file is deleted (git history keeps it).",
    "purged": "Purged: erased from the files, the index, the access log and git history.",
    "added": "Added.",
    "proposed": "Scope 'global' needs the librarian role: proposed in the inbox for review.",
    "paused": "Capture paused.",
    "resumed": "Capture resumed.",
    "unpaused": "That scope was not paused: nothing committed.",
    "already-paused": "That scope was already paused: nothing committed.",
    "accepted": "Accepted: moved into place as an active memory.",
    "rejected": "Rejected: removed from the inbox (git history keeps it).",
    "kept": "Dispute resolved: the fact you kept is in force, the others are superseded by it.",
    "consolidated": "Consolidation applied.",
    "purged-text": "Purged: erased from the files, git history, the index and the access log.",
    "nothing-to-purge": "Nothing holds that text any more: nothing purged.",
    "nothing": "Nothing to do.",
}


def session_of(request: Request) -> Session:
    session: Session = request.app.state.session
    return session


def memory_id(value: object) -> str:
    if not isinstance(value, str) or not ID_RE.match(value):
        raise Refusal(404, f"not a memory id: {str(value)[:80]!r}")
    return value


def choice(value: object, options: tuple[str, ...], key: str, empty_ok: bool = True) -> str:
    text = "" if value is None else str(value)
    if (empty_ok and text == "") or text in options:
        return text
    raise Refusal(400, f"{key}: expected {'|'.join(options)}, got {text[:80]!r}")


def text(value: object, key: str, limit: int = MAX_TEXT, *, free: bool = False) -> str:
    """One line of text (a facet value, a reason). ``free``: any text up to ``limit``
    (``..`` allowed: it never reaches a path)."""
    out = "" if value is None else str(value)
    if len(out) > limit:
        raise Refusal(400, f"{key}: at most {limit} characters, got {len(out)}")
    if CONTROL.search(out):
        raise Refusal(400, f"{key}: control characters are not allowed")
    if not free and has_dot_dot(out):
        raise Refusal(400, f"refused: '..' in parameter {key!r}")
    return out


def number(value: object, key: str, low: int, high: int, default: int) -> int:
    if value in (None, ""):
        return default
    try:
        out = int(str(value))
    except ValueError:
        raise Refusal(400, f"{key}: expected a whole number, got {str(value)[:40]!r}") from None
    if not low <= out <= high:
        raise Refusal(400, f"{key}: expected {low}-{high}, got {out}")
    return out


def flag(value: object) -> bool:
    return str(value or "") in ("1", "on", "yes", "true")


def facet_filters(query: Mapping[str, str]) -> dict[str, str]:
    """The browse page's filters, each checked."""
    return {
        "type": choice(query.get("type"), TYPES, "type"),
        "category": text(query.get("category"), "category"),
        "channel": text(query.get("channel"), "channel"),
        "scope": choice(query.get("scope"), SCOPES, "scope"),
        "tag": text(query.get("tag"), "tag"),
        "status": choice(query.get("status"), (*STATUSES, "any"), "status"),
    }


def notice(query: Mapping[str, str]) -> dict[str, str] | None:
    key = query.get("notice")
    if not key:
        return None
    commit = query.get("commit", "")
    return {
        "text": NOTICES.get(key, ""),
        "commit": commit if HEX.match(commit) else "",
    }


def url(path: str, params: Mapping[str, Any]) -> str:
    """``path`` with the non-empty ``params`` as its query string."""
    kept = [(k, str(v)) for k, v in params.items() if v not in (None, "", False)]
    return f"{path}?{urlencode(kept)}" if kept else path


async def form_of(request: Request) -> FormData:
    """A POST's form, once its CSRF token is checked."""
    form = await request.form()
    session_of(request).guard.check_csrf(form.get("csrf"))
    return form
