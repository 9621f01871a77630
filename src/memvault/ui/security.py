"""Who may talk to the inspector, and what a request may carry.

* The server answers only to its own Host names (a page on another site that rebinds a
  DNS name to 127.0.0.1 is refused: it cannot send ``Host: 127.0.0.1:PORT``).
* A random token, in the URL printed at start, is traded on first load for an HttpOnly,
  SameSite=Strict cookie (and the URL without the token); no token and no cookie: 403.
* Every state-changing request is a POST that carries the CSRF token in its form and comes
  from the inspector's own origin (``Origin``/``Sec-Fetch-Site``); anything else: 403.
* ``..`` as a path segment anywhere in the path or a query parameter: 400, before routing.
* Every response forbids scripts, framing and sniffing, and is never cached.
"""

from __future__ import annotations

import hmac
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from urllib.parse import unquote, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

Handler = Callable[[Request], Awaitable[Response]]

# A ``..`` path segment, also with backslashes or once more percent-encoded.
DOT_DOT = re.compile(r"(^|[/\\])\.\.([/\\]|$)")
SAFE_METHODS = ("GET", "HEAD")
MAX_BODY_BYTES = 8_000_000  # a form: a memory's text (limits.max_file_bytes) and a few fields
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # same-origin: the token never leaves in a Referer, and a form POST still sends the real
    # Origin (no-referrer would make it 'null')
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


class Refusal(Exception):
    """A request the inspector turns down: an HTTP status and one line saying why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def new_token() -> str:
    return secrets.token_urlsafe(32)


def has_dot_dot(value: str) -> bool:
    """Whether ``value`` holds a ``..`` path segment (percent-decoded twice)."""
    once = unquote(value)
    return any(DOT_DOT.search(v) for v in (value, once, unquote(once)))


class Guard:
    """The checks above for one server: its token, port and the host names it answers to."""

    def __init__(self, token: str, port: int, hosts: Iterable[str]) -> None:
        self.token = token
        self.port = port
        self.cookie = f"memvault_ui_{port}"  # cookies ignore ports: one name per server
        self.csrf = hmac.new(token.encode(), b"csrf", "sha256").hexdigest()
        names = {h.lower() for h in hosts}
        self.hosts = {f"{h}:{port}" for h in names} | {f"[{h}]:{port}" for h in names if ":" in h}

    def origins(self) -> set[str]:
        return {f"http://{h}" for h in self.hosts}

    def check_host(self, request: Request) -> None:
        host = request.headers.get("host", "").lower()  # host names are case-insensitive
        if host not in self.hosts:
            raise Refusal(400, f"refused: this server answers to {sorted(self.hosts)[0]} only")

    def check_params(self, request: Request) -> None:
        raw = request.scope.get("raw_path", b"").decode("latin-1")
        if has_dot_dot(raw) or has_dot_dot(request.url.path):
            raise Refusal(400, "refused: '..' in the path")
        for key, value in request.query_params.multi_items():
            if has_dot_dot(value) or has_dot_dot(key):
                raise Refusal(400, f"refused: '..' in parameter {key!r}")

    def authenticated(self, request: Request) -> bool:
        given = request.cookies.get(self.cookie, "")
        return bool(given) and hmac.compare_digest(given, self.token)

    def check_origin(self, request: Request) -> None:
        """A state-changing request must come from a page of this server."""
        site = request.headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            raise Refusal(403, f"refused: a cross-site request ({site}) may not change anything")
        origin = request.headers.get("origin")
        if origin is None:
            referer = request.headers.get("referer", "")
            origin = "/".join(referer.split("/")[:3]) if referer else None
        if origin not in self.origins():
            raise Refusal(
                403,
                f"refused: a request from {origin or 'an unknown origin'} may not change anything",
            )

    def check_csrf(self, given: object) -> None:
        if not isinstance(given, str) or not hmac.compare_digest(given, self.csrf):
            raise Refusal(
                403, "refused: the form's CSRF token is missing or wrong; reload the page"
            )

    async def __call__(self, request: Request, call_next: Handler) -> Response:
        started = time.perf_counter()
        try:
            response = await self._dispatch(request, call_next)
        except Refusal as refusal:
            response = Response(
                f"{refusal.message}\n", refusal.status, media_type="text/plain; charset=utf-8"
            )
        for name, value in HEADERS.items():
            response.headers.setdefault(name, value)
        ms = (time.perf_counter() - started) * 1000
        response.headers["Server-Timing"] = f"app;dur={ms:.2f}"
        return response

    async def _dispatch(self, request: Request, call_next: Handler) -> Response:
        self.check_host(request)
        self.check_params(request)
        token = request.query_params.get("token")
        if token is not None:
            if not hmac.compare_digest(token, self.token):
                raise Refusal(403, "refused: wrong token; use the URL 'memvault ui' printed")
            kept = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            # One leading slash: "//evil.example/?token=..." must not send the browser (with
            # its new cookie's page) to another site; browsers read "/\\" as "//" too.
            path = "/" + request.url.path.lstrip("/\\")
            target = path + (f"?{urlencode(kept)}" if kept else "")
            response = RedirectResponse(target, 303)  # the token leaves the address bar
            response.set_cookie(self.cookie, self.token, httponly=True, samesite="strict", path="/")
            return response
        if not self.authenticated(request):
            raise Refusal(
                403, "refused: open the URL 'memvault ui' printed (it carries the access token)"
            )
        if request.method not in SAFE_METHODS:
            self.check_origin(request)
            length = request.headers.get("content-length", "")
            if not length.isdigit() or int(length) > MAX_BODY_BYTES:
                raise Refusal(
                    413, f"refused: a form needs a Content-Length of at most {MAX_BODY_BYTES}"
                )
        return await call_next(request)
