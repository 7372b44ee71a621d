"""One error hierarchy, rendered as RFC 9457 problem+json for API clients and as an inline
message fragment for htmx requests. Nothing a user sends may produce a bare 500."""

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from markupsafe import escape
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)
PROBLEM_JSON = "application/problem+json"


class AppError(Exception):
    status = 400
    title = "Bad request"

    def __init__(self, detail: str, *, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors or []


class InvalidInput(AppError):
    status = 422
    title = "Invalid input"

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}", errors=[{"field": field, "reason": reason}])


class NotFound(AppError):
    status = 404
    title = "Not found"


class Conflict(AppError):
    status = 409
    title = "Conflict"


class ServiceUnavailable(AppError):
    status = 503
    title = "Service unavailable"


def field_errors(exc: RequestValidationError) -> list[dict[str, Any]]:
    """Turn pydantic's error list into `{field, reason}` pairs with dotted field names."""
    out = []
    for err in exc.errors():
        loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path", "form")]
        out.append({"field": ".".join(loc) or "body", "reason": err.get("msg", "invalid")})
    return out


def problem(request: Request, status: int, title: str, detail: str,
            errors: list[dict[str, Any]] | None = None) -> Response:
    if request.headers.get("HX-Request") == "true":
        items = "".join(f"<li>{escape(e['field'])}: {escape(e['reason'])}</li>"
                        for e in errors or [])
        body = (f'<div class="error" role="alert"><strong>{escape(title)}</strong>: '
                f"{escape(detail)}<ul>{items}</ul></div>")
        # htmx only swaps 2xx by default; the fragment must still replace the results.
        return HTMLResponse(body, status_code=200, headers={"HX-Retarget": "#results"})
    content: dict[str, Any] = {"type": "about:blank", "title": title, "status": status,
                               "detail": detail, "instance": request.url.path}
    if errors:
        content["errors"] = errors
    return JSONResponse(content, status_code=status, media_type=PROBLEM_JSON)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AppError)
    async def _app_error(request: Request, exc: AppError) -> Response:
        return problem(request, exc.status, exc.title, exc.detail, exc.errors)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> Response:
        errors = field_errors(exc)
        detail = "; ".join(f"{e['field']}: {e['reason']}" for e in errors)
        return problem(request, 422, "Invalid input", detail, errors)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        title = HTTPStatus(exc.status_code).phrase
        return problem(request, exc.status_code, title, str(exc.detail))

    @app.exception_handler(OperationalError)
    async def _db_down(request: Request, exc: OperationalError) -> Response:
        log.warning("database unavailable: %s", exc.orig)
        return problem(request, 503, "Service unavailable",
                       "The database is unavailable; retry shortly.")

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> Response:
        log.exception("unhandled error on %s", request.url.path)
        return problem(request, 500, "Internal server error", "An unexpected error occurred.")
