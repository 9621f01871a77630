"""Pages that change the vault: edit, forget (and purge), add, pause/resume, review the
inbox, consolidate. Each is a form (GET shows it) and a POST that checks the CSRF token,
calls one library function -- one commit, whose message says what and why -- and
redirects to a page showing the result. A refused edit shows the form again with the
text as typed: nothing is lost."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from .. import SCOPES, TYPES, format_time, now_utc, parse_time
from ..errors import MemvaultError, PermissionDeniedError, ValidationError
from .params import choice, form_of, memory_id, number, session_of, text, url
from .routes_read import page
from .security import Refusal

MAX_BODY = 2_000_000  # characters of a memory's text in a form (limits.max_file_bytes)
KIND_NAMES = {"episodic": "episode", "semantic": "fact", "procedural": "procedure"}


def done(path: str, notice: str, commit: str | None = None, **params: Any) -> Response:
    return RedirectResponse(url(path, {**params, "notice": notice, "commit": commit or ""}), 303)


def _action(request: Request, actions: tuple[str, ...]) -> str:
    action = str(request.path_params["action"])
    if action not in actions:
        raise Refusal(404, f"expected {'|'.join(actions)}, got {action[:40]!r}")
    return action


def _check_global(vault: Any, *scopes: str) -> None:
    if "global" in scopes and not vault.identity.is_librarian:
        raise PermissionDeniedError(
            "changing a 'global' memory needs the librarian role (memvault --role librarian ui)",
            key="scope",
        )


# --- edit --------------------------------------------------------------------------------


def edit_form(request: Request) -> Response:
    session = session_of(request)
    mid = memory_id(request.path_params["memory_id"])
    with session.using() as vault:
        m = vault.get(mid)
        raw = vault.raw_text(m)
    return page(request, "edit.html", m=m, raw=raw, message="", error=None)


async def edit(request: Request) -> Response:
    """Replace the file's text: validated exactly like a hand edit, then one commit."""
    session = session_of(request)
    mid = memory_id(request.path_params["memory_id"])
    form = await form_of(request)
    new = str(form.get("text") or "")
    if len(new) > MAX_BODY:
        raise Refusal(400, f"text: at most {MAX_BODY} characters")
    message = text(form.get("message"), "message", 500, free=True).strip() or "edited in the ui"

    def work(vault: Any) -> Response:
        m = vault.get(mid)
        raw = vault.raw_text(m)
        typed = new if "\r\n" in raw else new.replace("\r\n", "\n")  # browsers send CRLF
        if typed == raw:
            return done(f"/m/{mid}", "unchanged")
        try:
            from .. import check_text

            _check_global(vault, m.scope, check_text(typed, m.path).scope)
            result = vault.replace_text(mid, typed, message)
        except MemvaultError as exc:
            return page(request, "edit.html", 400, m=m, raw=typed, message=message, error=str(exc))
        return done(f"/m/{result.memory.id}", "edited", result.commit)

    return await run_in_threadpool(session.run, work)


# --- forget ------------------------------------------------------------------------------


def forget_form(request: Request) -> Response:
    session = session_of(request)
    mid = memory_id(request.path_params["memory_id"])
    with session.using() as vault:
        m = vault.get(mid)
    return page(request, "forget.html", m=m, error=None, reason="")


async def forget(request: Request) -> Response:
    """Delete the file with a commit that says why; with ``purge`` (and the id typed again
    to confirm) erase it from git history too."""
    session = session_of(request)
    mid = memory_id(request.path_params["memory_id"])
    form = await form_of(request)
    reason = text(form.get("reason"), "reason", 500, free=True).strip()
    purge = str(form.get("purge", "")) == "1"
    confirm = text(form.get("confirm"), "confirm", 200)

    def work(vault: Any) -> Response:
        m = vault.get(mid)
        error = None
        if not reason:
            error = "reason: say why (the commit message records it)"
        elif purge and confirm != mid:
            error = f"confirm: type the memory's id ({mid}) to erase it from git history"
        if error:
            return page(request, "forget.html", 400, m=m, error=error, reason=reason)
        if purge:
            _check_global(vault, m.scope)
            vault.purge(mid, reason)
            return done("/", "purged", vault.head())
        result = vault.forget(mid, reason)
        return done("/", "forgot", result.commit)

    return await run_in_threadpool(session.run, work)


# --- add ---------------------------------------------------------------------------------


def new_form(request: Request) -> Response:
    return page(request, "new.html", values={}, kinds=TYPES, scopes=SCOPES, error=None)


async def new(request: Request) -> Response:
    """A new memory (``memvault add``): scope 'global' goes to the inbox unless librarian."""
    session = session_of(request)
    form = await form_of(request)
    values = {
        "type": text(form.get("type"), "type"),
        "title": text(form.get("title"), "title", 300, free=True).strip(),
        "content": str(form.get("content") or "").replace("\r\n", "\n"),
        "scope": text(form.get("scope"), "scope"),
        "category": text(form.get("category"), "category", 100).strip(),
        "tags": text(form.get("tags"), "tags", 500).strip(),
        "importance": text(form.get("importance"), "importance", 2).strip(),
        "message": text(form.get("message"), "message", 500, free=True).strip(),
    }
    if len(values["content"]) > MAX_BODY:
        raise Refusal(400, f"content: at most {MAX_BODY} characters")

    def work(vault: Any) -> Response:
        try:
            if values["type"] not in TYPES:
                raise ValidationError(f"expected {'|'.join(TYPES)}", key="type")
            if values["scope"] and values["scope"] not in SCOPES:
                raise ValidationError(f"expected {'|'.join(SCOPES)}", key="scope")
            fields: dict[str, Any] = {
                "scope": values["scope"] or None,
                "category": values["category"] or None,
                "tags": [t.strip() for t in values["tags"].split(",") if t.strip()],
            }
            if values["importance"]:
                fields["importance"] = number(values["importance"], "importance", 1, 5, 3)
            result = vault.add(
                values["type"],
                values["content"],
                title=values["title"] or None,
                message=values["message"] or None,
                **fields,
            )
        except (MemvaultError, Refusal) as exc:
            error = str(exc)
            return page(
                request, "new.html", 400, values=values, kinds=TYPES, scopes=SCOPES, error=error
            )
        if result.inbox:
            return done("/inbox", "proposed", result.commit)
        return done(f"/m/{result.memory.id}", "added", result.commit)

    return await run_in_threadpool(session.run, work)


# --- pause / resume ----------------------------------------------------------------------


async def pause_or_resume(request: Request) -> Response:
    session = session_of(request)
    scope = request.path_params["scope"]
    if scope not in SCOPES:
        raise Refusal(404, f"scope: expected {'|'.join(SCOPES)}, got {scope[:40]!r}")
    action = _action(request, ("pause", "resume"))
    form = await form_of(request)
    why = text(form.get("why"), "why", 500, free=True).strip()

    def work(vault: Any) -> Response:
        if action == "pause":
            sha = vault.pause(scope, why)
            return done("/scopes", "paused" if sha else "already-paused", sha)
        sha = vault.resume(scope, why)
        return done("/scopes", "resumed" if sha else "unpaused", sha)

    return await run_in_threadpool(session.run, work)


async def pause_rule(request: Request) -> Response:
    """Pause or resume a rule naming an agent, a channel and/or a scope (``memvault pause
    --agent A --channel C --scope S``); blanks mean any."""
    session = session_of(request)
    action = _action(request, ("pause", "resume"))
    form = await form_of(request)
    agent, channel = (text(form.get(k), k, 200).strip() or None for k in ("agent", "channel"))
    scope = choice(form.get("scope"), SCOPES, "scope") or None
    why = text(form.get("why"), "why", 500, free=True).strip()
    keys = {"agent": agent, "channel": channel, "scope": scope, "why": why}

    def work(vault: Any) -> Response:
        if action == "pause":
            sha = vault.pause(**keys)
            return done("/scopes", "paused" if sha else "already-paused", sha)
        sha = vault.resume(**keys)
        return done("/scopes", "resumed" if sha else "unpaused", sha)

    return await run_in_threadpool(session.run, work)


# --- inbox -------------------------------------------------------------------------------


async def review(request: Request) -> Response:
    session = session_of(request)
    mid = memory_id(request.path_params["memory_id"])
    action = _action(request, ("accept", "reject"))
    form = await form_of(request)
    note = text(form.get("note"), "note", 500, free=True).strip()

    def work(vault: Any) -> Response:
        if action == "accept":
            result = vault.accept(mid, note)
            return done("/inbox", "accepted", result.commit)
        result = vault.reject(mid, note)
        return done("/inbox", "rejected", result.commit)

    return await run_in_threadpool(session.run, work)


async def keep(request: Request) -> Response:
    """Resolve a dispute (``memvault dispute keep``): the chosen fact stays in force, the
    others of its dispute are superseded by it. One commit."""
    session = session_of(request)
    mid = memory_id(request.path_params["memory_id"])
    form = await form_of(request)
    note = text(form.get("note"), "note", 500, free=True).strip()

    def work(vault: Any) -> Response:
        result = vault.resolve_dispute(mid, note)
        return done("/inbox", "kept", result.commit)

    return await run_in_threadpool(session.run, work)


# --- consolidate -------------------------------------------------------------------------


def _steps(values: list[str]) -> list[str]:
    from .. import STEPS

    for value in values:
        if value not in STEPS:
            raise Refusal(400, f"only: expected {'|'.join(STEPS)}, got {value[:40]!r}")
    return values


def consolidate_form(request: Request) -> Response:
    """The steps to plan; with ``preview``, the plan and its diff (nothing written)."""
    from .. import STEPS
    from .consolidation import preview

    session = session_of(request)
    only = _steps(request.query_params.getlist("only"))
    shown = None
    now = now_utc()
    if request.query_params.get("preview"):
        with session.using() as vault:
            shown = preview(vault, now, only)
    return page(
        request, "consolidate.html", steps=STEPS, only=only, shown=shown, now=format_time(now)
    )


async def consolidate(request: Request) -> Response:
    from .consolidation import apply

    session = session_of(request)
    form = await form_of(request)
    only = _steps([str(v) for v in form.getlist("only")])
    try:
        now = parse_time(text(form.get("now"), "now", 40))
    except ValueError:
        raise Refusal(400, "now: expected an ISO time") from None
    if now is None:
        raise Refusal(400, "now: expected an ISO time")
    expected = text(form.get("fingerprint"), "fingerprint", 64)

    def work(vault: Any) -> Response:
        result = apply(vault, now, only, expected)

        if result.empty and not result.folded_records:
            return done("/consolidate", "nothing")
        return done("/consolidate", "consolidated", vault.head())

    return await run_in_threadpool(session.run, work)
