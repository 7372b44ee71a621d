"""Pure ASGI middleware every route inherits: body size limit, CSRF guard, security headers.

Pure ASGI (not BaseHTTPMiddleware) so streamed bodies are counted as they arrive and responses
are not buffered."""

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import PROBLEM_JSON, problem_bytes

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


async def send_problem(send: Send, status: int, detail: str, path: str,
                       extra_headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    body = problem_bytes(status, detail, path)
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", PROBLEM_JSON.encode()), (b"content-length", str(len(body)).encode()),
        *extra_headers]})
    await send({"type": "http.response.body", "body": body})


class BodySizeLimit:
    """413 for a request body over `max_bytes`: refused up front from Content-Length, and
    counted chunk by chunk otherwise (chunked uploads, or a Content-Length that lies)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        detail = f"request body larger than {self.max_bytes} bytes"
        length = _header(scope, b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_bytes):
            await send_problem(send, 413, detail, scope["path"], [(b"connection", b"close")])
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    # Raised inside the app's body read: FastAPI re-raises HTTPExceptions and the
                    # app's handler renders the problem (or the HTML page for a form post).
                    raise HTTPException(413, detail)
            return message

        await self.app(scope, counted, send)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


class CsrfGuard:
    """Refuse cross-site unsafe requests (403) on every route.

    Why this is sufficient for modern browsers: a cross-site form post or fetch is sent by the
    victim's browser, and every current browser labels it — `Sec-Fetch-Site: cross-site` (or
    `same-site`, a sibling subdomain) since Chrome 76, Firefox 90, Safari 16.4; and an `Origin`
    header on every POST since long before (Chrome 8, Firefox 70 for forms, Safari 10). Pages
    cannot forge or remove either header (they are forbidden header names). So: when
    Sec-Fetch-Site is present it must be `same-origin` or `none` (typed URL / bookmark);
    otherwise an Origin, when present, must match the Host. A request carrying neither comes from
    a non-browser client (curl, a procurement tool) which holds no victim's cookies, so there is
    nothing to forge. The JSON API is covered too, harmlessly: its writes authenticate with an
    Authorization header a foreign page cannot attach, and tools send no Sec-Fetch-* headers."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in UNSAFE_METHODS:
            reason = self.refusal(scope)
            if reason:
                await send_problem(send, 403, reason, scope["path"])
                return
        await self.app(scope, receive, send)

    @staticmethod
    def refusal(scope: Scope) -> str | None:
        fetch_site = _header(scope, b"sec-fetch-site")
        if fetch_site is not None:
            if fetch_site in ("same-origin", "none"):
                return None
            return f"cross-site request refused (Sec-Fetch-Site: {fetch_site})"
        origin = _header(scope, b"origin")
        if origin is None:
            return None
        host = _header(scope, b"host")
        if origin == "null" or urlsplit(origin).netloc != host:
            return f"cross-origin request refused (Origin {origin} is not this site)"
        return None


# plotly.js sets inline style attributes on the SVG it draws and htmx injects its indicator
# <style>, so styles need 'unsafe-inline'; scripts are only our own files (no inline <script>,
# no eval: plotly's SVG charts run without 'unsafe-eval', checked in Chromium).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),  # frame-ancestors for browsers that predate CSP 2
    (b"referrer-policy", b"strict-origin-when-cross-origin"),
]


class SecurityHeaders:
    """Add the security headers to every response (pages, API, static files, errors)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *(h for h in SECURITY_HEADERS if h[0] not in present)]
            await send(message)

        await self.app(scope, receive, with_headers)
