"""One error hierarchy and one renderer for every error the app answers.

API clients (any path under /api/, or a client that does not ask for HTML) get RFC 9457
`application/problem+json`; htmx requests get an inline message fragment; browsers asking for a
page get the HTML error page. Nothing a user sends may produce a bare 500 or a stack trace."""

import json
import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from markupsafe import escape
from pydantic import BaseModel, Field
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)
PROBLEM_JSON = "application/problem+json"
API_PREFIX = "/api/"


class AppError(Exception):
    status = 400
    title = "Bad request"

    def __init__(self, detail: str, *, errors: list[dict[str, Any]] | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors or []
        self.headers = headers or {}


class InvalidInput(AppError):
    status = 422
    title = "Invalid input"

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}", errors=[{"field": field, "reason": reason}])


class Unauthorized(AppError):
    status = 401
    title = "Unauthorized"

    def __init__(self, detail: str) -> None:
        super().__init__(detail, headers={"WWW-Authenticate": 'Bearer realm="clustertco"'})


class Forbidden(AppError):
    status = 403
    title = "Forbidden"


class NotFound(AppError):
    status = 404
    title = "Not found"


class Conflict(AppError):
    status = 409
    title = "Conflict"


class TooManyRequests(AppError):
    status = 429
    title = "Too many requests"

    def __init__(self, detail: str, retry_after_s: int) -> None:
        super().__init__(detail, headers={"Retry-After": str(retry_after_s)})


class ServiceUnavailable(AppError):
    status = 503
    title = "Service unavailable"


class Problem(BaseModel):
    """RFC 9457 problem details, as every API error is answered."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    instance: str
    errors: list[dict[str, str]] | None = Field(
        None, description="Offending fields: [{field, reason}] (422 only)")


_PROBLEM_CONTENT = {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}}
# Documented on every API route (merged into each operation's OpenAPI responses).
PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem, "description": HTTPStatus(status).phrase,
             "content": _PROBLEM_CONTENT}
    for status in (400, 401, 403, 404, 405, 409, 413, 422, 429, 503)
}

DB_DOWN = "The database is unavailable; retry shortly."


def field_errors(exc: RequestValidationError) -> list[dict[str, Any]]:
    """Turn pydantic's error list into `{field, reason}` pairs with dotted field names."""
    out = []
    for err in exc.errors():
        loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path", "form")]
        out.append({"field": ".".join(loc) or "body", "reason": err.get("msg", "invalid")})
    return out


def problem_body(status: int, title: str, detail: str, instance: str,
                 errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    content: dict[str, Any] = {"type": "about:blank", "title": title, "status": status,
                               "detail": detail, "instance": instance}
    if errors:
        content["errors"] = errors
    return content


def problem_bytes(status: int, detail: str, instance: str) -> bytes:
    """The same body for middleware that answers before the app (no Request object yet)."""
    title = HTTPStatus(status).phrase
    return json.dumps(problem_body(status, title, detail, instance)).encode()


def wants_page(request: Request) -> bool:
    """A browser navigating to a page (not the API, not an htmx swap) gets the HTML error page."""
    return (not request.url.path.startswith(API_PREFIX)
            and "text/html" in request.headers.get("accept", ""))


def problem(request: Request, status: int, title: str, detail: str,
            errors: list[dict[str, Any]] | None = None,
            headers: dict[str, str] | None = None) -> Response:
    if request.headers.get("HX-Request") == "true" and not request.url.path.startswith(API_PREFIX):
        items = "".join(f"<li>{escape(e['field'])}: {escape(e['reason'])}</li>"
                        for e in errors or [])
        body = (f'<div class="error" role="alert"><strong>{escape(title)}</strong>: '
                f"{escape(detail)}<ul>{items}</ul></div>")
        # htmx only swaps 2xx by default; the fragment must still replace the results.
        return HTMLResponse(body, status_code=200,
                            headers={"HX-Retarget": "#results", **(headers or {})})
    if wants_page(request):
        from app.web.templating import templates  # late: templating imports domain modules

        return templates.TemplateResponse(request, "error.html",
                                          {"heading": f"{title}.", "detail": detail},
                                          status_code=status, headers=headers)
    return JSONResponse(problem_body(status, title, detail, request.url.path, errors),
                        status_code=status, media_type=PROBLEM_JSON, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AppError)
    async def _app_error(request: Request, exc: AppError) -> Response:
        return problem(request, exc.status, exc.title, exc.detail, exc.errors, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> Response:
        errors = field_errors(exc)
        detail = "; ".join(f"{e['field']}: {e['reason']}" for e in errors)
        return problem(request, 422, "Invalid input", detail, errors)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        title = HTTPStatus(exc.status_code).phrase
        headers = dict(exc.headers) if exc.headers else None
        return problem(request, exc.status_code, title, str(exc.detail), headers=headers)

    @app.exception_handler(IntegrityError)
    async def _integrity(request: Request, exc: IntegrityError) -> Response:
        # A concurrent writer got there first (unique constraint): the client may retry.
        log.info("integrity conflict on %s: %s", request.url.path, exc.orig)
        return problem(request, 409, "Conflict",
                       "A concurrent change conflicted with this one; retry the request.")

    @app.exception_handler(DataError)
    async def _unstorable(request: Request, exc: DataError) -> Response:
        # A value the database refuses, e.g. a NUL character in text on PostgreSQL.
        log.info("unstorable input on %s: %s", request.url.path, exc.orig)
        return problem(request, 422, "Invalid input",
                       "a value cannot be stored or compared (e.g. a NUL character in text)")

    @app.exception_handler(OperationalError)
    async def _db_down(request: Request, exc: OperationalError) -> Response:
        log.warning("database unavailable: %s", exc.orig)
        return problem(request, 503, "Service unavailable", DB_DOWN, headers={"Retry-After": "5"})

    @app.exception_handler(PoolTimeout)
    async def _pool_exhausted(request: Request, exc: PoolTimeout) -> Response:
        log.warning("connection pool exhausted on %s", request.url.path)
        return problem(request, 503, "Service unavailable", DB_DOWN, headers={"Retry-After": "5"})

    @app.exception_handler(DBAPIError)
    async def _db_error(request: Request, exc: DBAPIError) -> Response:
        # Connection dropped mid-statement (psycopg raises InterfaceError/OperationalError).
        if exc.connection_invalidated:
            log.warning("database connection lost: %s", exc.orig)
            return problem(request, 503, "Service unavailable", DB_DOWN,
                           headers={"Retry-After": "5"})
        log.exception("database error on %s", request.url.path)
        return problem(request, 500, "Internal server error", "An unexpected error occurred.")

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error on %s", request.url.path)
        return problem(request, 500, "Internal server error", "An unexpected error occurred.")
