"""The inspector's Starlette app: its routes, the security guard around them, and how an
error becomes a page (one line saying what was refused; a bug's traceback goes to the
server's stderr, never to the browser)."""

from __future__ import annotations

import sys
import traceback

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..errors import MemvaultError, NotFoundError, PermissionDeniedError
from . import routes_act as act
from . import routes_purge as purging
from . import routes_read as read
from .security import Refusal
from .session import HERE, Session


def _status(exc: MemvaultError) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, PermissionDeniedError):
        return 403
    return 400


def error_page(request: Request, status: int, message: str) -> Response:
    session: Session = request.app.state.session
    try:
        html = session.render("error.html", status=status, message=message, notice=None)
    except Exception:  # noqa: BLE001 - the error page itself must not fail
        return Response(f"{message}\n", status, media_type="text/plain; charset=utf-8")
    return HTMLResponse(html, status)


async def on_memvault_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, MemvaultError)
    return error_page(request, _status(exc), str(exc))


async def on_refusal(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Refusal)
    return error_page(request, exc.status, exc.message)


async def on_http_error(request: Request, exc: Exception) -> Response:
    status = int(getattr(exc, "status_code", 500))
    detail = str(getattr(exc, "detail", "") or "")
    message = {404: "no such page", 405: "method not allowed here"}.get(status, detail)
    return error_page(request, status, message or f"HTTP {status}")


class Crashes(BaseHTTPMiddleware):
    """A bug answers 500 with one line; the traceback goes to stderr."""

    async def dispatch(self, request: Request, call_next: object) -> Response:
        try:
            return await call_next(request)  # type: ignore[operator,no-any-return]
        except Exception as exc:  # noqa: BLE001 - keep the server up, say where to look
            print(f"memvault ui: {request.method} {request.url.path} failed:", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
            message = f"internal error ({type(exc).__name__}); details on the server's stderr"
            return error_page(request, 500, message)


def routes() -> list[Route | Mount]:
    return [
        Route("/", read.browse),
        Route("/search", read.search),
        Route("/m/{memory_id}", read.memory),
        Route("/m/{memory_id}/history", read.history),
        Route("/m/{memory_id}/edit", act.edit_form, methods=["GET"]),
        Route("/m/{memory_id}/edit", act.edit, methods=["POST"]),
        Route("/m/{memory_id}/forget", act.forget_form, methods=["GET"]),
        Route("/m/{memory_id}/forget", act.forget, methods=["POST"]),
        Route("/new", act.new_form, methods=["GET"]),
        Route("/new", act.new, methods=["POST"]),
        Route("/inbox", read.inbox),
        Route("/inbox/{memory_id}/{action:str}", act.review, methods=["POST"]),
        Route("/disputes/{memory_id}/keep", act.keep, methods=["POST"]),
        Route("/scopes", read.scopes),
        Route("/scopes/{scope}/{action:str}", act.pause_or_resume, methods=["POST"]),
        Route("/capture/{action:str}", act.pause_rule, methods=["POST"]),
        Route("/export", read.export),
        Route("/consolidate", act.consolidate_form, methods=["GET"]),
        Route("/consolidate", act.consolidate, methods=["POST"]),
        Route("/purge", purging.purge_form, methods=["GET"]),
        Route("/purge", purging.purge, methods=["POST"]),
        Route("/purge/preview", purging.purge_preview, methods=["POST"]),
        Route("/purge/done", purging.purge_done, methods=["GET"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]


def create_app(session: Session) -> Starlette:
    """The ASGI app serving ``session``'s vault (the guard checks every request first)."""
    app = Starlette(
        routes=routes(),
        middleware=[
            Middleware(BaseHTTPMiddleware, dispatch=session.guard),
            Middleware(Crashes),
        ],
        exception_handlers={
            MemvaultError: on_memvault_error,
            Refusal: on_refusal,
            404: on_http_error,
            405: on_http_error,
            400: on_http_error,
        },
    )
    app.state.session = session
    return app
