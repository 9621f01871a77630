"""Purge by content, the librarian's page: erase a text (a phone number, a name, a pattern)
wherever the vault holds it, as ``memvault purge --match`` does (:meth:`Vault.purge_text`).

Three steps, each a POST so that the text travels only in a form body, never in a URL (the
address bar, the browser's history, a Referer) nor in a log line (the server logs no
requests): the form, the preview (files, transcript turns, commits: :meth:`Vault.purge_preview`,
which writes nothing), and the purge itself once ``purge`` is typed and a reason given. The
result page shows counts and the new HEAD, not the text nor the paths that held it.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from .. import SCOPES
from ..errors import PermissionDeniedError, ValidationError
from .params import HEX, choice, flag, form_of, session_of, text
from .routes_act import done
from .routes_read import page

MAX_MATCH = 1000  # characters of the text or pattern to erase
COMMITS_SHOWN = 50
CONFIRM = "purge"


def _check_librarian(vault: Any) -> None:
    if not vault.identity.is_librarian:
        raise PermissionDeniedError(
            "purging by content reads and rewrites every scope's memories and all of git "
            "history: it needs the librarian role (memvault --role librarian ui)",
            key="role",
        )


def _asked(form: Any) -> dict[str, Any]:
    """What to erase, as the form sent it (checked)."""
    return {
        "match": text(form.get("match"), "match", MAX_MATCH, free=True),
        "regex": flag(form.get("regex")),
        "scope": choice(form.get("scope"), SCOPES, "scope"),
    }


def _context(asked: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {
        "asked": asked,
        "scopes": SCOPES,
        "shown": None,
        "error": None,
        "reason": "",
        "commits_shown": COMMITS_SHOWN,
        "confirm_word": CONFIRM,
        **more,
    }


def purge_form(request: Request) -> Response:
    session = session_of(request)
    with session.using() as vault:
        _check_librarian(vault)
    return page(request, "purge.html", **_context({"match": "", "regex": False, "scope": ""}))


async def purge_preview(request: Request) -> Response:
    """What a purge would erase; writes nothing."""
    session = session_of(request)
    form = await form_of(request)
    asked = _asked(form)

    def work(vault: Any) -> Response:
        _check_librarian(vault)
        if not asked["match"].strip():
            error = "match: type the text (or pattern) to erase"
            return page(request, "purge.html", 400, **_context(asked, error=error))
        try:
            shown = _preview(vault, asked)
        except ValidationError as exc:
            return page(request, "purge.html", 400, **_context(asked, error=str(exc)))
        return page(request, "purge.html", **_context(asked, shown=shown))

    return await run_in_threadpool(session.run, work)


async def purge(request: Request) -> Response:
    """The purge: files, git history, the index and the access log (one operation)."""
    session = session_of(request)
    form = await form_of(request)
    asked = _asked(form)
    reason = text(form.get("reason"), "reason", 500, free=True).strip()
    confirm = text(form.get("confirm"), "confirm", 40, free=True).strip()

    def work(vault: Any) -> Response:
        _check_librarian(vault)
        error = None
        if confirm != CONFIRM:
            error = f"confirm: type '{CONFIRM}' to rewrite git history"
        elif not reason:
            error = "reason: say why (purge.log and the commit record it, never the text)"
        if error:
            shown = _preview(vault, asked)
            context = _context(asked, shown=shown, error=error, reason=reason)
            return page(request, "purge.html", 400, **context)
        result = vault.purge_text(
            asked["match"], reason, regex=asked["regex"], scope=asked["scope"] or None
        )
        if not result.applied:
            return done("/purge", "nothing-to-purge")
        session.last_purge = result
        return done("/purge/done", "purged-text", result.commit)

    return await run_in_threadpool(session.run, work)


def _preview(vault: Any, asked: dict[str, Any]) -> Any:
    return vault.purge_preview(asked["match"], regex=asked["regex"], scope=asked["scope"] or None)


def purge_done(request: Request) -> Response:
    """The last purge this inspector made: its counts, its commit and the remotes that still
    hold the old history."""
    session = session_of(request)
    commit = request.query_params.get("commit", "")
    with session.using() as vault:
        _check_librarian(vault)
    result = session.last_purge
    if result is None or not HEX.match(commit) or result.commit != commit:
        result = None
    return page(request, "purge_done.html", result=result)
